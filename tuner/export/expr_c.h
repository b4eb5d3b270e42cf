/* expr_c.h - a space expression translated into C, for generated code that must decide what fatune decides.
 *
 * fatune evaluates a space's constraints and formulas in SQLite (expr.c). A
 * dispatch table or library that picks a config for a shape at run time must
 * reach the same verdict without SQLite, so the exporter translates each
 * expression into one C expression of type long long that follows SQLite's
 * grammar and precedence for the language a space may use (expr.h's
 * character whitelist): integers, names, + - * / %, comparisons (= == != <>
 * < <= > >=), AND OR NOT, [NOT] IN (list), [NOT] BETWEEN, CASE [x] WHEN ...
 * END, & | ~, and the functions min, max, abs, iif, ceil_div, is_pow2.
 *
 * Arithmetic goes through checked helpers (FT_EXPR_C_HELPERS) that set a flag
 * where SQLite would give NULL or a real (x / 0, x % 0, overflow) and fatune
 * would therefore stop: generated code treats a flagged evaluation as
 * "fatune would not accept this", which can only make it more careful, never
 * less. Anything outside this language (shifts, ||, a construct SQLite
 * accepts that the translator does not know) is refused with FT_EINPUT: the
 * caller then falls back to something that needs no translation.
 */
#ifndef FT_EXPR_C_H
#define FT_EXPR_C_H

#include <stddef.h>

#include "base/err.h"

/* Translates text into a C expression written to out (NUL-terminated).
 * names[0..nnames) are the names the expression may use, matched without
 * case as SQL does; each is written as var_prefix + the name as listed.
 * Helpers are called as fd_add_(bad, a, b) etc., bad being a variable of
 * type int * in scope. 0 on success; -1 with FT_EINPUT ("cannot translate
 * 'TEXT': why") on anything outside the language, an unknown name, or an
 * output longer than size. */
int ft_expr_to_c(const char *text, const char *const *names, int nnames, const char *var_prefix,
		 char *out, size_t size, struct ft_err *err);

/* The helper functions the translation calls, as C source (static inline,
 * C99 and C++11, no headers needed): written once before the functions that
 * use translated expressions. */
extern const char ft_expr_c_helpers[];

#endif
