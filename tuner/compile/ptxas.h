/* ptxas.h - ptxas's own error messages for PTX that NVRTC failed to assemble.
 *
 * NVRTC runs ptxas inside itself and keeps only ptxas's info lines in the
 * program log: when ptxas refuses a kernel ("Entry function 'k' uses too much
 * shared data (0x10000 bytes, 0xc000 max)"), nvrtcCompileProgram fails with a
 * log that holds no error. The PTX is still there, so this module assembles it
 * again through nvJitLink (part of the CUDA toolkit since 12.0), whose error
 * log carries ptxas's messages. nvJitLink is dlopen'ed from the directory of
 * the NVRTC library, so fatune neither links against it nor needs it: without
 * it, the error is simply not recovered.
 */
#ifndef FT_PTXAS_H
#define FT_PTXAS_H

#include <stddef.h>

/* Assembles ptx (size bytes, NUL included or not) for arch ("sm_89",
 * "sm_90a") with nvJitLink found in lib_dir (or the loader's path when NULL)
 * and returns its error log, malloc'd (the caller frees it): "" when ptxas
 * accepted the code, NULL when nvJitLink is missing or could not run. */
char *ft_ptxas_errors(const char *ptx, size_t size, const char *arch, const char *lib_dir);

/* The first line of log holding "error" with the tool's prefix ("error   : ")
 * dropped, into out ("" when none). Returns out. */
char *ft_ptxas_first_error(const char *log, char *out, size_t size);

#endif
