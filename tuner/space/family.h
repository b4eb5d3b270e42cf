/* family.h - what differs between template families on the host side, behind one interface.
 *
 * A template family is a way of writing attention kernels that needs its own
 * host-side pieces: which archs it can target and which NVRTC target that
 * takes (Hopper's wgmma and setmaxnreg need sm_90a, not sm_90), what it needs
 * of its space, and, per candidate, the launch plan the worker follows beyond
 * the space's formulas - today the TMA descriptors it must encode (box sizes
 * and swizzle per tensor). A space names its family (`template.family`,
 * "mma" when absent). Everything else - the params struct (the space's
 * `abi`), workspace, geometry - is data in the space, so the pipeline, the
 * worker and the evaluator never branch on a family: a new family is one new
 * file family/family_<name>.c and one line in family.c's table. The
 * interface and the table live here, under the space that names a family;
 * the families themselves (family/) sit above the space they read.
 *
 * Families:
 *   mma    the shipped mma.sync template (search_spaces/attention.yaml); any
 *          arch of the table (sm_80 and newer), no TMA
 *   wgmma  Hopper: wgmma + TMA + warp specialization; sm_90 only, compiled
 *          for sm_90a (family_wgmma.c)
 *   cuda   kernels you bring that name no family (the default): any arch of
 *          the table, no TMA, no shipped space (family_cuda.c)
 */
#ifndef FT_FAMILY_H
#define FT_FAMILY_H

#include <stddef.h>

#include "base/arch.h"
#include "base/err.h"
#include "base/shape.h"

struct ft_space;

enum ft_tensor { FT_TENSOR_Q, FT_TENSOR_K, FT_TENSOR_V, FT_TENSOR_O, FT_TENSOR_COUNT };

/* One TMA descriptor to encode (fatune_abi.h): rank 4 over the tensor as
 * (D, S, H, B), box (cols, rows, 1, 1). rows == 0: none for this tensor. */
struct ft_tma_box {
	int rows;		/* box rows (positions along S), 1..256 */
	int cols;		/* box columns (elements along D), 1..256 */
	int swizzle;		/* bytes: 0 (none), 32, 64 or 128 */
};

/* What a candidate's launch needs beyond the space's formulas. */
struct ft_launch_plan {
	struct ft_tma_box tma[FT_TENSOR_COUNT];
};

/* Most spaces a family searches by default. */
#define FT_FAMILY_DEFAULTS 4

struct ft_family {
	const char *name;		/* what a space's template.family says */
	const char *summary;		/* one line, for listings */
	const char *default_spaces[FT_FAMILY_DEFAULTS];	/* under the data dir: searched by
					 * default, in this order, when the arch fits (each
					 * for the shapes its applies_to picks); NULL-ended,
					 * none when none ships */
	int arch_specific;		/* 1: made for one arch (its instructions exist
					 * nowhere else): where it fits, its default space is
					 * searched before the others', so that its best is
					 * the incumbent they must beat (search.h) */
	/* NULL when the family's templates can run on arch a, else why not
	 * ("needs Hopper (sm_90): wgmma and TMA"). */
	const char *(*unsupported)(const struct ft_arch *a);
	/* The NVRTC target for a: "sm_90a" where arch-specific instructions are
	 * used, else a->name. */
	const char *(*nvrtc_arch)(const struct ft_arch *a);
	/* At load time: 0 when sp has what the family reads (parameters by name,
	 * abi), else -1 with FT_EINPUT "FILE: family 'X' needs ...". May be NULL. */
	int (*check_space)(const struct ft_space *sp, struct ft_err *err);
	/* Per candidate (values parallel to sp->params): fills *plan (zeroed
	 * first by the caller). May be NULL (nothing beyond the formulas). */
	int (*plan)(const struct ft_space *sp, const struct ft_shape *shape, const long long *values,
		    struct ft_launch_plan *plan, struct ft_err *err);
};

/* The family called name, or NULL. */
const struct ft_family *ft_family_find(const char *name);

/* "mma, wgmma": the names, for messages. */
const char *ft_family_names(void);

/* Number of families and the i-th, for listings and the default spaces. */
int ft_family_count(void);
const struct ft_family *ft_family_at(int i);

/* The families, each in its own file. */
extern const struct ft_family ft_family_mma;
extern const struct ft_family ft_family_cuda;
extern const struct ft_family ft_family_wgmma;

#endif
