/* cubin.h - what a CUBIN says about its kernels: entry points and their parameter bytes.
 *
 * A CUBIN is an ELF file. Its symbol table marks kernels (entry points) as
 * global functions with the CUDA entry flag in st_other; each kernel's
 * ".nv.info.<name>" section lists attributes, among them one per parameter
 * (EIATTR_KPARAM_INFO: ordinal, offset, size), from which the bytes of
 * parameters the kernel takes follow. fatune reads them after every compile,
 * so a misspelled or C++-mangled entry point, or a template built for another
 * ABI version (a params struct of another size), is a compile failure with
 * the names found, not a crash on the GPU.
 *
 * Everything is bounds-checked: the bytes may come from a damaged cache file.
 */
#ifndef FT_CUBIN_H
#define FT_CUBIN_H

#include <stddef.h>

/* Bytes of kernel `name`'s parameters in the CUBIN image (the sum of their
 * sizes, without alignment padding) and their count in *nparams (may be
 * NULL): >= 0 when it is an entry point (0 for a kernel without parameters),
 * -1 when there is no such entry point, -2 when the image is not a CUBIN
 * fatune can read. */
long long ft_cubin_param_bytes(const void *image, size_t size, const char *name, int *nparams);

/* The entry points' names, ", "-separated, into buf (cut to fit); "" when
 * none or unreadable. Returns the number of entry points. */
int ft_cubin_entries(const void *image, size_t size, char *buf, size_t bufsize);

#endif
