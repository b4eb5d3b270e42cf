/* export.h - writing a stored best config as build_config.h.
 *
 * The header a kernel build includes instead of a hand-edited one: a "do not
 * edit" line, an include guard (FATUNE_BUILD_CONFIG_H), a provenance comment
 * (fatune version, arch, device, shape, dtype, causal, template name and hash,
 * measured latency and error, date, config, and the command that regenerates
 * it), then one constant per parameter of the config followed by HEAD_DIM,
 * IS_CAUSAL and FATUNE_BF16 (the same macros the template got at tuning time,
 * see kernel_templates/fatune_abi.h). The output depends only on *b: the same
 * best row always gives the same bytes.
 */
#ifndef FT_EXPORT_H
#define FT_EXPORT_H

#include <stdio.h>

#include "db/db.h"
#include "base/err.h"

enum ft_export_style {
	FT_EXPORT_CXX,	/* constexpr int NAME = V;  (C++11 and later, CUDA) */
	FT_EXPORT_C,	/* #define NAME V  (negative values parenthesised) */
};

/* Writes the header for b to out. b->config must be "NAME=V,..." with C
 * identifiers for names (none of HEAD_DIM, IS_CAUSAL, FATUNE_BF16, no name
 * twice) and decimal int values; anything else is FT_EFAIL naming the config
 * (nothing sensible can be exported from it). A write error on out is FT_EFAIL.
 * Text from b that lands in the comment is made comment-safe ("*" "/" and
 * control characters are replaced). */
int ft_export_header(FILE *out, const struct ft_best *b, enum ft_export_style style,
		     struct ft_err *err);

/* ---- shared with the dispatch-table writer (export_dispatch.c) ---------- */

/* A config comes from a space, which has at most FT_MAX_PARAMS parameters. */
#define FT_EXPORT_MAX_ENTRIES FT_MAX_PARAMS

struct ft_export_entry {
	char name[FT_NAME_MAX];
	int value;
};

/* Parses "NAME=V,..." into e[] (FT_EXPORT_MAX_ENTRIES of them) with the checks
 * ft_export_header describes; *n receives the count. */
int ft_export_parse_config(const char *config, struct ft_export_entry *e, int *n, struct ft_err *err);

#endif
