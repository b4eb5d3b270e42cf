/* paths.h - where fatune's data (spaces, templates) and the CUDA headers are.
 *
 * Read by the space loader (include confinement), the compiler (include
 * path) and the commands (default space, reference kernel).
 */
#ifndef FT_PATHS_H
#define FT_PATHS_H

#include <stddef.h>

/* The directory holding search_spaces/ and kernel_templates/:
 * $FATUNE_SOURCE_DIR, else the source tree fatune was built from (if it
 * existed at the first call), else where `cmake --install` put them
 * (<prefix>/share/fatune). Thread-safe. */
const char *ft_data_dir(void);

/* The CUDA toolkit's include directory: $CUDA_HOME/include if it exists,
 * else the one fatune was built with. Returns buf. */
const char *ft_cuda_include(char *buf, size_t size);

/* Fills path with the default space file. */
void ft_default_space(char *path, size_t size);

#endif
