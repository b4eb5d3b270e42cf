/* export.h - writing one config as build_config.h: everything a build and a launch need.
 *
 * The header a kernel build includes before the template, instead of a
 * hand-edited one: a "do not edit" line, an include guard
 * (FATUNE_BUILD_CONFIG_H), provenance (fatune version, arch, device, shape,
 * dtype, causal, template name and hash, space, measured latency and error,
 * date, config), how to build (`#include "build_config.h"` then the template,
 * `nvcc -arch=<nvrtc arch>` and the space's compile options), the command that
 * regenerates it (naming --space and --db when they were not the defaults),
 * then:
 *   - every macro the template is compiled with (space/candidate.h's list:
 *     the compile-time parameters, compile.defines, HEAD_DIM, IS_CAUSAL,
 *     FATUNE_BF16, FATUNE_SMEM_BYTES, FATUNE_ABI), each as
 *       #ifndef X / #define X v / #elif X != v / #error "..." / #endif
 *     so a -D flag of the same value is fine and another value stops the
 *     build naming both;
 *   - the launch, as FATUNE_LAUNCH_* macros: kernel name, threads, grid of
 *     the tuned shape (and the space's formula for others, as a comment),
 *     dynamic shared memory and whether it needs the opt-in attribute,
 *     NUM_SPLITS, the combine kernel and its launch, the workspace bytes and
 *     init, and the family's TMA boxes;
 *   - with the C++ style, the launch again as constexpr values in namespace
 *     fatune::build_config (macros stay the truth: #if sees them).
 */
#ifndef FT_EXPORT_H
#define FT_EXPORT_H

#include <stdio.h>

#include "base/err.h"
#include "db/db.h"
#include "space/candidate.h"

enum ft_export_style {
	FT_EXPORT_CXX,	/* the macros, plus constexpr mirrors of the launch in namespace fatune */
	FT_EXPORT_C,	/* the macros only */
};

/* What one header is written from. */
struct ft_export_src {
	const struct ft_best *best;	/* provenance: arch, device, space, template, shape, times,
					 * date, config; for --config only arch, space, family,
					 * template, shape and config are read */
	const struct ft_space *sp;	/* the space the config belongs to */
	const long long *values;	/* the config's values, parallel to sp->params */
	const struct ft_build *build;	/* ft_candidate_build of those values for best->shape */
	const char *nvrtc_arch;		/* what nvcc builds for: sp->family->nvrtc_arch (sm_90a) */
	const char *space_arg;		/* --space FILE to name in "Regenerate with", NULL: none */
	const char *db_arg;		/* --db PATH to name there, NULL: none */
	int from_config;		/* 1: chosen with --config, nothing measured */
	enum ft_export_style style;
};

/* Writes the header for src to out. Names that would become tokens are
 * checked again (export/gen.h): one that is not a plain C identifier, or is
 * a keyword or reserved, is FT_EFAIL before anything is written. Free text
 * (device, dates, versions, paths, formulas) is gated for comments. A write
 * error on out is FT_EFAIL. */
int ft_export_header(FILE *out, const struct ft_export_src *src, struct ft_err *err);

/* ---- shared with the dispatch-table writer (export_dispatch.c) ---------- */

/* A config comes from a space, which has at most FT_MAX_PARAMS parameters. */
#define FT_EXPORT_MAX_ENTRIES FT_MAX_PARAMS

struct ft_export_entry {
	char name[FT_NAME_MAX];
	int value;
};

/* Parses a stored "NAME=V,..." into e[] (FT_EXPORT_MAX_ENTRIES of them)
 * without a space: names must pass the gate (ft_gen_ident) and not be one of
 * fatune's own macros, no name twice, values decimal ints; *n receives the
 * count. Anything else is FT_EFAIL "cannot export config '...'". */
int ft_export_parse_config(const char *config, struct ft_export_entry *e, int *n, struct ft_err *err);

#endif
