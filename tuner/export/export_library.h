/* export_library.h - `fatune export --library DIR`: a self-contained C library (and Python package) from the database.
 *
 * One library holds every (arch, space) table selected from the database:
 * its parts, each a dispatch table (export_dispatch.h: the best config of
 * every tuned shape of one arch, device and space, with its generated
 * validity check and launch formulas). At run time the library keeps the
 * parts whose CUBINs run on the current context's device (compute capability
 * equal, or the same major and a lower minor for non-`a` targets; sm_90a
 * CUBINs only on 9.0), those of the nearest arch, and picks across them by
 * each part's rule (then the faster tuned time, then part order): see
 * kernel_templates/library/fatune_attention.h. The exporter writes DIR with:
 *   fatune_table_N.h     part N's table (C style, names fatune_pN_...)
 *   fatune_parts.c       per part its CUBIN, config text, splits, PDL and TMA
 *                        boxes per entry, and the table of parts
 *   fatune_library.h     the types the runtime and fatune_parts.c share
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

/* Most parts one library holds. */
#define FT_LIBRARY_MAX_PARTS 32

/* Writes the library of parts[0..nparts) (each ft_dispatch_prepare done, in
 * the order the runtime breaks its last ties by) into dir, created if
 * missing. FT_EINPUT when dir exists, is not empty and is not a library
 * fatune wrote, a space's ABI is not 2, or nparts is outside 1..
 * FT_LIBRARY_MAX_PARTS; FT_EFAIL when a config does not compile or a file
 * cannot be written. *ncubins receives the number of distinct CUBINs
 * embedded. */
int ft_library_write(const char *dir, const struct ft_dispatch *parts, int nparts, int *ncubins,
		     struct ft_err *err);

#endif
