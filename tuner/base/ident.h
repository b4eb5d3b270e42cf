/* ident.h - which names may become macros in generated C and C++ code.
 *
 * Every name fatune writes as a macro - a space's parameters and
 * compile.defines, fatune's own macros - must be a plain C identifier that
 * cannot change the meaning of the code around it: not a C or C++ keyword
 * (`#define int 3` would rewrite every declaration), not an alternative
 * operator spelling (`and`, `not_eq`), not `defined`, and not a name the C
 * and C++ standards reserve for the implementation (a leading underscore
 * followed by a capital letter, or two underscores anywhere). Spaces are
 * checked with it when they are loaded (space_yaml.c) and exports check
 * again before writing (export/gen.c), so a hostile database cannot get a
 * name past either.
 */
#ifndef FT_IDENT_H
#define FT_IDENT_H

/* The macros fatune passes to every template after the space's own, in
 * the order NVRTC receives them (space/candidate.c fills their values in
 * this order). A space may not name a parameter or define so. */
#define FT_FATUNE_MACRO_COUNT 5
extern const char *const ft_fatune_macro_names[FT_FATUNE_MACRO_COUNT];

/* 1 when name is one of ft_fatune_macro_names (exact case). */
int ft_is_fatune_macro(const char *name);

/* 1 when s is a C identifier ([A-Za-z_][A-Za-z0-9_]*), of any length, keyword or not
 * (ft_ident_problem says whether it may also be a macro name). */
int ft_is_ident(const char *s);

/* Why name cannot be a macro of generated code, or NULL when it can: empty,
 * longer than 63 characters, not [A-Za-z_][A-Za-z0-9_]*, a C (C23) or C++
 * (C++23) keyword or alternative token, `defined`, or reserved (_X, __). The
 * answer is a static phrase. */
const char *ft_ident_problem(const char *name);

#endif
