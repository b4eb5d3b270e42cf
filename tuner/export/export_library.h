/* export_library.h - `fatune export --library DIR`: a self-contained C library (and Python package) from the database.
 *
 * From one dispatch table (export_dispatch.h: the best config of every tuned
 * shape of one arch, device and space, with its generated validity check and
 * launch formulas) the exporter writes DIR with:
 *   fatune_table.h       the dispatch table (C style), fatune_dispatch_pick/_eval
 *   fatune_library.h     the arch, kernel names, shared-memory kind, workspace
 *                        init, per entry its CUBIN, config text and TMA boxes
 *   fatune_cubins.c      every distinct CUBIN as a byte array, compiled at
 *                        export time through fatune's compile path and CUBIN
 *                        cache (NVRTC; no GPU needed)
 *   fatune_attention.h/.c  the launch API and runtime (copied from
 *                        kernel_templates/library/), fatune_abi.h
 *   CMakeLists.txt       static and shared library targets
 *   pyproject.toml, setup.py, fatune_attention/__init__.py: the Python package
 *                        (ctypes over the C API; `attention(q, k, v, causal=)`)
 *   .fatune-library      a marker: only a directory holding it is overwritten
 * Every file is written to a temporary name and renamed.
 */
#ifndef FT_EXPORT_LIBRARY_H
#define FT_EXPORT_LIBRARY_H

#include "base/err.h"
#include "export/export_dispatch.h"

/* Writes the library for d (ft_dispatch_prepare done) into dir, created if
 * missing. FT_EINPUT when dir exists, is not empty and is not a library
 * fatune wrote, or the space's ABI is not 2; FT_EFAIL when a config does not
 * compile or a file cannot be written. *ncubins receives the number of
 * distinct CUBINs embedded. */
int ft_library_write(const char *dir, const struct ft_dispatch *d, int *ncubins, struct ft_err *err);

#endif
