/* target.h - what a command works on: arch, shape, dtype, causal, space, database.
 *
 * The options are shared by check, search, bench, export and query, so they are
 * declared once here (FT_TARGET_OPTIONS) and resolved in one place, with one
 * error message per mistake.
 */
#ifndef FT_TARGET_H
#define FT_TARGET_H

#include "base/arch.h"
#include "ui/cli.h"
#include "base/shape.h"
#include "base/paths.h"
#include "space/space.h"

struct ft_target_opts {
	const char *arch;	/* --arch; NULL: the GPU present (commands decide) */
	const char *shape;	/* --shape BxHxSxD[,kv_heads=N][,kv_len=N][,layout=L] */
	long long kv_len;	/* --kv-len; 0: the shape's */
	long long kv_heads;	/* --kv-heads; 0: the shape's */
	const char *layout;	/* --layout; NULL: the shape's */
	const char *dtype;	/* --dtype; NULL: fp16 */
	int causal;		/* --causal */
	const char *space;	/* --space; NULL: the shipped attention space */
	const char *db;		/* --db; NULL: $FATUNE_DB or ./fatune.db */
};

#define FT_TARGET_OPTIONS(t)                                                                    \
	FT_ARCH_OPTION(t),                                                                      \
	FT_OPT_STR_("shape", 0, &(t)->shape, "BxHxSxD",                                        \
		    "attention shape: batch x query heads x query rows x head dim, e.g. 1x8x512x64"), \
	FT_SHAPE_OPTIONS(t)

#define FT_ARCH_OPTION(t)                                                                       \
	FT_OPT_STR_("arch", 0, &(t)->arch, "sm_XX",                                             \
		    "target architecture: sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_120")

/* what refines --shape: KV length and heads, layout, causal, dtype */
#define FT_SHAPE_OPTIONS(t)                                                                     \
	FT_OPT_INT_("kv-len", 0, &(t)->kv_len, "N",                                             \
		    "keys (KV cache length) when not S, e.g. 32768 for decode", 1, 1000000),     \
	FT_OPT_INT_("kv-heads", 0, &(t)->kv_heads, "N",                                         \
		    "KV heads when not H (grouped-query attention; divides H)", 1, 1000000),     \
	FT_OPT_STR_("layout", 0, &(t)->layout, "bhsd|bshd",                                     \
		    "tensor layout: [B,H,S,D] (default) or [B,S,H,D]"),                          \
	FT_OPT_FLAG_("causal", 0, &(t)->causal,                                                 \
		     "causal attention; bottom-right aligned when S != kv-len (query i sees keys <= i + kv_len - S)"), \
	FT_OPT_STR_("dtype", 0, &(t)->dtype, "fp16|bf16", "input/output dtype (default fp16)")

#define FT_SPACE_OPTION(t)                                                                      \
	FT_OPT_STR_("space", 0, &(t)->space, "FILE",                                            \
		    "search space YAML (default: search_spaces/attention.yaml)")

#define FT_DB_OPTION(t)                                                                         \
	FT_OPT_STR_("db", 0, &(t)->db, "PATH", "tuning database (default: $FATUNE_DB or ./fatune.db)")

/* --db, else $FATUNE_DB, else "./fatune.db". */
const char *ft_db_path(const struct ft_target_opts *o);

/* Parses --shape and --kv-len, --kv-heads, --layout, --dtype, --causal into
 * *shape. Missing --shape: FT_EINPUT "fatune CMD: --shape is required". */
int ft_target_shape(const char *cmd, const struct ft_target_opts *o, struct ft_shape *shape,
		    struct ft_err *err);

/* Loads o->space (or the default) into a malloc'd space (*out); frees nothing on error. */
int ft_target_space(const struct ft_target_opts *o, struct ft_space **out, struct ft_err *err);

#endif
