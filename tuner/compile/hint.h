/* hint.h - what to do about a compile error a kernel author meets first.
 *
 * NVRTC compiles a template without the C++ standard library and without the
 * host's <math.h>; a space that does not declare `abi: 2` hands its template
 * ABI v1's params struct. The compiler's own words for these ("identifier
 * "INFINITY" is undefined", "class "fatune_attn_params_v1" has no member
 * "s_q"") do not say what to change; ft_compile_hint does, in one phrase that
 * the trial's reason carries after the compiler's first error line.
 * docs/kernel_author.md explains each case.
 */
#ifndef FT_HINT_H
#define FT_HINT_H

#include <stddef.h>

/* The hint for a failed compile's log into buf (returns buf; NULL when there
 * is none), given the ABI the space declares (1 or 2). The ABI mismatch comes
 * first (naming the field): it explains the other errors of a v2 template
 * compiled as v1; else the hint for the earliest error of the log that has one. */
char *ft_compile_hint(const char *log, int abi, char *buf, size_t size);

/* Appends "; hint: HINT" to reason (within size) when the log has a hint. */
void ft_compile_hint_append(const char *log, int abi, char *reason, size_t size);

#endif
