/* gen.h - the one gate for text that reaches generated code.
 *
 * Everything fatune writes into a file that a compiler reads - build_config.h,
 * the dispatch table (C, C++), the library - is fatune's own fixed text,
 * numbers printed with %d / %lld / %.Nf, and strings from the database or a
 * space. The database is untrusted (a merged shard comes from another
 * machine), so every such string passes one of these before it is printed:
 *   - a name that becomes a macro, a field or any other token: ft_gen_ident
 *     (a C identifier, not a C/C++ keyword, not reserved: base/ident.h);
 *   - free text inside a comment: ft_gen_comment (printable ASCII only, no
 *     comment can end or open, no trigraph or line splice can form);
 *   - a shell argument inside a comment (the "Regenerate with" line):
 *     ft_gen_shell_arg;
 *   - text inside a C or C++ string literal: ft_gen_c_string.
 * JSON goes through ft_json_string (ui/format.h), which escapes per RFC 8259.
 * Values are integers by type. tests/fuzz/fuzz_gen.c checks that no token of
 * a header exported from fuzzed rows comes from anywhere else.
 */
#ifndef FT_GEN_H
#define FT_GEN_H

#include <stddef.h>

#include "base/err.h"

/* Room for any gated copy of a string of n bytes (4 bytes out per byte in,
 * the quotes, separators and the terminator). */
#define FT_GEN_SIZE(n) (4 * (n) + 8)

/* 0 when name may be written as a token of generated code (ft_ident_problem
 * in base/ident.h says no), else FT_EFAIL "cannot export: WHAT 'NAME' ...:
 * WHY" with name shown comment- and terminal-safe. what says where the name
 * came from, e.g. "parameter of config 'A=1'". */
int ft_gen_ident(const char *name, const char *what, struct ft_err *err);

/* s made safe for the inside of a block comment: bytes outside printable
 * ASCII become '_' (no line break, no invalid UTF-8), "/" "*" and "*" "/"
 * get a space between them, so do "?" "?" (no trigraph), and a space is
 * added on either end where s starts or ends with '/', '*', '?' or '\' (so
 * the text around it cannot complete one). Truncated to fit buf. Returns buf. */
const char *ft_gen_comment(const char *s, char *buf, size_t size);

/* s quoted for a POSIX shell (inside '...', a ' becomes '\''), then made
 * comment-safe. Returns buf. */
const char *ft_gen_shell_arg(const char *s, char *buf, size_t size);

/* s as the inside of a C/C++ string literal (no quotes added): \ " ? escaped
 * (\? so no trigraph forms), bytes outside printable ASCII as three-digit
 * octal escapes. Truncated at a whole escape to fit buf. Returns buf. */
const char *ft_gen_c_string(const char *s, char *buf, size_t size);

#endif
