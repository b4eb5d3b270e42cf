# setup.py - builds the library's C runtime and CUBINs as fatune_attention/_lib (a plain shared
# library that fatune_attention/__init__.py loads with ctypes; copied by the exporter).
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "fatune_attention._lib",
            sources=["fatune_attention.c", "fatune_parts.c", "fatune_cubins.c"],
            include_dirs=["."],
            libraries=["dl", "pthread", "m"],
            extra_compile_args=["-std=c11"],
            py_limited_api=False,
        )
    ],
)
