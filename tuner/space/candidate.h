/* candidate.h - what one candidate of a space is built and launched with.
 *
 * The single source of two lists every consumer of a candidate needs:
 *   - the macros its template is compiled with (the compile-time parameters,
 *     compile.defines, then fatune's own: ft_fatune_macro_names, base/ident.h):
 * NVRTC gets them as -DNAME=VALUE (search/pipeline.c), and build_config.h and
 * the library export write them (export/);
 *   - its launch for one shape: threads, grid, dynamic shared memory, the
 *     combine launch, the workspace and its init, NUM_SPLITS and the family's
 *     TMA boxes: the worker launches with it, the exports print it.
 * Adding a macro fatune passes to every template means adding it here, and
 * every consumer follows.
 */
#ifndef FT_CANDIDATE_H
#define FT_CANDIDATE_H

#include "base/arch.h"
#include "base/err.h"
#include "base/ident.h"
#include "base/shape.h"
#include "space/family.h"
#include "space/space.h"

/* Where a macro's value comes from. */
enum ft_macro_origin {
	FT_MACRO_PARAM,		/* a compile-time parameter of the space (its config) */
	FT_MACRO_DEFINE,	/* a compile.defines formula of the space */
	FT_MACRO_SHAPE,		/* HEAD_DIM, IS_CAUSAL, FATUNE_BF16: from the shape */
	FT_MACRO_FATUNE,	/* FATUNE_SMEM_BYTES, FATUNE_ABI: from the space's formulas */
};

/* Compile-time parameters + compile.defines + fatune's own. */
#define FT_MAX_MACROS (FT_MAX_PARAMS + FT_MAX_SPACE_DEFINES + FT_FATUNE_MACRO_COUNT)

struct ft_macro {
	const char *name;		/* borrowed: the space's name or a static string */
	long long value;
	enum ft_macro_origin origin;
};

/* A candidate's launch for one shape (see fatune_abi.h for the parameters). */
struct ft_launch {
	long long threads;		/* launch.threads: threads per block of the main kernel */
	long long grid[3];		/* launch.grid for this shape */
	long long smem_bytes;		/* the smem_bytes formula (= FATUNE_SMEM_BYTES) */
	long long dynamic_smem;		/* bytes passed at launch: smem_bytes for a
					 * `shared_memory: dynamic` template, else 0; over the
					 * arch's static limit it needs the opt-in attribute */
	long long combine_threads;	/* 0: no combine launch (none, or merged in-kernel) */
	long long combine_grid[3];	/* 0 0 0 when combine_threads is 0 */
	int combine_pdl;		/* launch.combine_pdl: 1 launches the combine kernel with
					 * programmatic dependent launch (sm_90+) */
	long long workspace_bytes;	/* workspace.bytes, 0 when none */
	enum ft_workspace_init workspace_init;	/* workspace.init */
	int num_splits;			/* the NUM_SPLITS parameter, 1 when the space has none */
	struct ft_launch_plan plan;	/* the family's TMA boxes (rows 0: none) */
};

/* Everything one candidate is built and launched with. */
struct ft_build {
	int nmacros;
	struct ft_macro macros[FT_MAX_MACROS];
	struct ft_launch launch;
};

/* The macros of a candidate, written to out[] (room for FT_MAX_MACROS) in the
 * order NVRTC gets them: compile-time parameters in space order, then
 * compile.defines, then ft_fatune_macro_names. values and define_values are
 * parallel to sp->params and sp->define_names; smem_bytes is the candidate's
 * smem_bytes formula. Launch-time parameters are not macros. Returns the count.
 * Names are borrowed from sp or static. */
int ft_candidate_macros(const struct ft_space *sp, const struct ft_shape *shape, const long long *values,
			const long long *define_values, long long smem_bytes, struct ft_macro *out);

/* The launch of candidate c (its formulas evaluated for shape, as
 * ft_enum_next gives them) into *out. -1 with the family's message when it
 * cannot lay the candidate out (its plan hook). */
int ft_candidate_launch(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_candidate *c,
			struct ft_launch *out, struct ft_err *err);

/* Both of the above for candidate c. */
int ft_candidate_build(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_candidate *c,
		       struct ft_build *out, struct ft_err *err);

/* Evaluates the one candidate of sp with the given values (parallel to
 * sp->params) for shape on arch into *c: its formulas and its first false
 * constraint (c->failed_constraint, -1 when all hold). Errors are those of
 * ft_enum_open / ft_enum_next (a bad expression, a division by zero). No GPU
 * and no compiler are involved. */
int ft_candidate_eval(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_arch *arch,
		      const long long *values, struct ft_candidate *c, struct ft_err *err);

#endif
