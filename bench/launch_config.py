"""launch_config.py - the CUDA driver's cuLaunchKernelEx structures for ctypes, without torch.

CUlaunchConfig and CUlaunchAttribute (cuda.h) as ctypes structures, and the one attribute the bench
scripts set: programmatic stream serialization (programmatic dependent launch, PDL), as fatune's
worker launches a combine kernel whose space's launch.combine_pdl is non-zero.

The attribute's value is a 64-byte union; it is written through the structure's own buffer
(ctypes.c_int.from_buffer), never through `attr.value`: for a char-array field that reads back a
new bytes object (the interpreter's shared empty bytes when the field is zero), and writing into
it corrupts that object instead of setting the attribute.
"""

import ctypes

CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6


class LaunchAttribute(ctypes.Structure):
    # CUlaunchAttribute: the id, padding to 8 bytes, a 64-byte value union
    _fields_ = [("id", ctypes.c_uint32), ("pad", ctypes.c_ubyte * 4), ("value", ctypes.c_ubyte * 64)]


class LaunchConfig(ctypes.Structure):
    # CUlaunchConfig
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


def pdl_attribute():
    """A CUlaunchAttribute enabling programmatic stream serialization (its int value 1)."""
    attr = LaunchAttribute(id=CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
    ctypes.c_int.from_buffer(attr, LaunchAttribute.value.offset).value = 1
    return attr


def pdl_config(grid, threads, smem, stream):
    """(config, attribute) for cuLaunchKernelEx with PDL; keep both alive until the launch returns."""
    attr = pdl_attribute()
    cfg = LaunchConfig(int(grid[0]), int(grid[1]), int(grid[2]), int(threads), 1, 1, int(smem),
                       ctypes.c_void_p(stream), ctypes.pointer(attr), 1)
    return cfg, attr
