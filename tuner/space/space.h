/* space.h - a search space: the template, its parameters, constraints and formulas.
 *
 * Loaded from YAML (space_yaml.c, over yaml_doc.c's libyaml layer; the format is
 * documented in search_spaces/README.md). Expressions are kept as text with the
 * line they came from; enumerate.c evaluates them in a locked-down SQLite
 * engine (expr.c), so a space file can compute but never touch files or run
 * anything.
 *
 * A parameter is either enumerated (its values) or derived (`derive:`, an
 * expression over the shape, enumerated parameters and earlier derived
 * ones, computed per candidate): only enumerated parameters multiply the
 * candidates; both are macros, part of the config and of its text.
 *
 * Names an expression may use: every parameter; the shape B, H, S, D, S_KV,
 * H_KV, CAUSAL, DTYPE (0 fp16, 1 bf16), DTYPE_BYTES, LAYOUT (0 bhsd, 1 bshd);
 * the target arch's limits SMEM_STATIC, SMEM_OPTIN, SMEM_PER_SM,
 * SMEM_RESERVED, REGS_PER_SM, THREADS_PER_BLOCK, THREADS_PER_SM, CC. Functions:
 * min, max, abs, iif, ceil_div(a, b), is_pow2(x). Integer arithmetic is exact
 * (64-bit); `/` between integers truncates, as in C.
 */
#ifndef FT_SPACE_H
#define FT_SPACE_H

#include <stdint.h>

#include "base/arch.h"
#include "base/err.h"
#include "base/ident.h"
#include "base/limits.h"
#include "base/shape.h"
#include "space/family.h"



enum ft_param_kind {
	FT_PARAM_COMPILE,	/* becomes -DNAME=value: a new value is a new CUBIN */
	FT_PARAM_LAUNCH,	/* passed at launch (e.g. NUM_SPLITS): no recompile */
};

enum ft_smem_kind {
	FT_SMEM_STATIC,		/* __shared__ arrays: bound by the 48 KB static limit */
	FT_SMEM_DYNAMIC,	/* extern __shared__: bound by the arch's opt-in limit */
};

enum ft_workspace_init {
	FT_WS_ZERO = 0,		/* zeroed before every call (timed) */
	FT_WS_POISON = 1,	/* 0xff bytes once before the verified call */
	FT_WS_NONE = 2,		/* left as it is */
	FT_WS_ZERO_ONCE = 3,	/* zeroed once before the first call; the kernel leaves it zero */
};

struct ft_expr_src {
	char text[FT_EXPR_MAX];	/* the expression as written; "" when absent */
	int line;		/* 1-based line in the space file; 0 when absent */
	char key[FT_NAME_MAX];	/* its YAML key, e.g. "constraints.warps_fit" */
};

struct ft_param {
	char name[FT_NAME_MAX];	/* a C identifier; also the -D macro / config key */
	enum ft_param_kind kind;
	int nvalues;		/* >= 1; 0 only for a derived parameter declared under
				 * derive: alone (any integer) */
	long long values[FT_MAX_VALUES];	/* enumerated: the values, in order; derived:
						 * the values it may take (a candidate whose
						 * derived value is not one is rejected) */
	int line;
	int derived;		/* 1: not enumerated, computed by derive (below) */
	struct ft_expr_src derive;	/* `derive.NAME`: its expression ("" when enumerated);
					 * with nchoices, the list's expressions joined
					 * by ", " */
	int nchoices;		/* 0: derive is one expression; n >= 1: derive was a
				 * list, the value is one of its n expressions (a
				 * choice that other parameters set: enumerated over
				 * the n, each a candidate of its own) */
};

struct ft_constraint {
	char name[FT_NAME_MAX];	/* shown in the rejection reason */
	struct ft_expr_src expr;	/* true (non-zero) when the candidate may run */
};

struct ft_space {
	char path[FT_PATH_MAX];		/* the YAML file as given */
	char name[FT_NAME_MAX];		/* `name:` */
	char template_path[FT_PATH_MAX];	/* `template.file`, resolved against the space's dir */
	char template_name[FT_NAME_MAX];	/* basename of template_path without extension */
	char kernel[FT_NAME_MAX];	/* `template.kernel`: extern "C" entry point */
	char combine_kernel[FT_NAME_MAX];	/* `template.combine_kernel`, "" when none */
	enum ft_smem_kind smem_kind;	/* `template.shared_memory: static|dynamic` */
	int abi;			/* `template.abi`: 1 (default) or 2, fatune_abi.h */
	const struct ft_family *family;	/* `template.family` (default mma), family.h */

	int nhead_dims;			/* `head_dims`: the head dims D the template builds
					 * (0: any); a shape with another D is refused
					 * before enumerating (ft_space_unfit) */
	int head_dims[FT_MAX_VALUES];
	int head_dims_line;		/* where `head_dims` was written */
	long long spills_allow;		/* `spills`: bytes a compiled kernel may spill (stores
					 * plus loads) and keep on its stack frame; 0
					 * (`reject`, the default): none */
	int wgmma_serialized_allow;	/* `wgmma_serialized: allow`: 1 keeps a kernel
					 * ptxas reports serialized wgmma for; 0
					 * (`reject`, the default) rejects it */

	struct ft_expr_src workspace;	/* `workspace.bytes` ("" when none) */
	enum ft_workspace_init workspace_init;	/* `workspace.init` */
	int ndefines;			/* `compile.defines`: NAME: expression */
	char define_names[FT_MAX_SPACE_DEFINES][FT_NAME_MAX];
	struct ft_expr_src defines[FT_MAX_SPACE_DEFINES];
	int noptions;			/* `compile.options`, each whitelisted */
	char options[FT_MAX_COMPILE_OPTIONS][FT_OPTION_MAX];
	int nincludes;			/* `compile.include`: directories, resolved */
	char includes[FT_MAX_INCLUDES][FT_PATH_MAX];
	int include_lines[FT_MAX_INCLUDES];	/* where each was written */

	struct ft_expr_src applies_to;	/* `applies_to`: the shapes the space is for, an
					 * expression over the shape's and the arch's names
					 * alone ("" when absent: every shape); where it is
					 * 0 the space is not searched (ft_space_unsearched) */
	struct ft_expr_src smem;	/* `smem_bytes`: shared bytes per block */
	struct ft_expr_src threads;	/* `launch.threads`: threads per block */
	struct ft_expr_src grid[3];	/* `launch.grid`: [x, y, z] */
	struct ft_expr_src combine_threads;	/* `launch.combine_threads` ("" if none); a
						 * candidate for which it is 0 launches no
						 * combine kernel (it merges its splits itself) */
	struct ft_expr_src combine_grid[3];	/* `launch.combine_grid` */
	struct ft_expr_src combine_pdl;	/* `launch.combine_pdl` ("" if none: 0); non-zero
					 * for a candidate: its combine kernel is launched
					 * with programmatic dependent launch (sm_90+) */

	int nparams;
	struct ft_param params[FT_MAX_PARAMS];	/* in config order: those under parameters:,
						 * then any declared under derive: alone */
	int nderived;			/* derived parameters, in evaluation order: */
	int derived[FT_MAX_PARAMS];	/* their indices in params (derive: order) */
	int nconstraints;
	struct ft_constraint constraints[FT_MAX_CONSTRAINTS];

	uint64_t hash;			/* xxh64 of the YAML file's bytes */
	char hash_hex[17];		/* the same, 16 lowercase hex digits */
};

/* Loads and validates a space file. Errors are FT_EINPUT with
 * "FILE:LINE: key 'KEY': what is wrong" (malformed YAML, unknown or missing key,
 * wrong type, duplicate parameter, empty value list, unreadable template, ...).
 * Expressions are only checked for syntax by ft_enum_open. */
int ft_space_load(struct ft_space *sp, const char *path, struct ft_err *err);

/* Whether sp can run shape on arch a: NULL when it can, else why not, in a
 * phrase ("family 'wgmma' needs Hopper (sm_90)", "ABI v1 template: it cannot
 * run kv_len != S: declare abi: 2 ...", "its template builds head dims 32, 64,
 * 128, not 96 (FILE:LINE head_dims)"), into buf. */
const char *ft_space_unfit(const struct ft_space *sp, const struct ft_arch *a,
			   const struct ft_shape *shape, char *buf, size_t size);

/* Whether a search covers sp at shape on arch a: NULL when it does, else why
 * not into buf: ft_space_unfit's reason, or the space's `applies_to` (the
 * shapes it is meant for: a search scope, not a validity rule; a config it
 * holds stays valid wherever its constraints hold, for export and dispatch)
 * is false or cannot be evaluated there. */
const char *ft_space_unsearched(const struct ft_space *sp, const struct ft_arch *a, const struct ft_shape *shape,
				char *buf, size_t size);

/* A compile.include entry checked and resolved into out (symbolic links and
 * '..' resolved): a path relative to the space file's directory that lands
 * under that directory or under the template's (template_path; NULL: none),
 * or "{cuda}/X" under the CUDA toolkit's include directory (e.g.
 * {cuda}/cccl). NULL when it is one, else why not, in a phrase: an absolute
 * path, a path that leads out of those roots, no such directory. A space file
 * can thus put on the include path only what sits next to it or its template,
 * or the toolkit's own headers: never /etc, $HOME or another project. */
const char *ft_space_include_confined(const char *entry, const char *space_path,
				     const char *template_path, char *out, size_t size);

/* A file a space or campaign names (a space's template.file, a campaign's
 * spaces: entry) resolved into out (relative to owner_path's directory, or
 * absolute; out keeps the path as joined) and confined like compile.include:
 * its real path (links and '..' resolved) must be a regular file under the
 * real directory of owner_path or under fatune's data directory
 * (ft_data_dir: the shipped templates and spaces). NULL when it is, else why
 * not, in a phrase. A file from elsewhere could name /etc/shadow, whose first
 * line NVRTC's or the YAML loader's error would print. */
const char *ft_space_file_confined(const char *entry, const char *owner_path, char *out, size_t size);

/* A path entry (a campaign's space file) resolved into out: "{cuda}/X" under the CUDA
 * include directory, an absolute path as it is, anything else relative to
 * the space file's directory. -1 when it does not fit or is empty. */
int ft_space_include_dir(const char *entry, const char *space_path, char *out, size_t size);

/* Fills plan for a candidate of sp: zeroes it, then runs the family's plan
 * hook (family.h) when it has one. -1 with err when the hook fails. */
int ft_space_plan(const struct ft_space *sp, const struct ft_shape *shape, const long long *values,
		  struct ft_launch_plan *plan, struct ft_err *err);

/* A candidate's failed guard (ft_candidate.failed_constraint) in words:
 * below sp->nconstraints a constraint ("constraint 'NAME' is false"), from
 * there the guard of derived parameter sp->derived[i - nconstraints]
 * ("derived parameter 'NAME' = EXPR is not ..."). Its line into *line.
 * Returns buf. */
const char *ft_space_guard_text(const struct ft_space *sp, int failed, int *line, char *buf, size_t size);

/* Index of the parameter called name, or -1. */
int ft_space_param(const struct ft_space *sp, const char *name);

/* Canonical config text "NAME=V,NAME=V,..." in parameter order. Returns buf. */
char *ft_config_format(const struct ft_space *sp, const long long *values, char *buf,
		       size_t size);

/* Parses "NAME=V,..." (any order, every parameter exactly once, each value one
 * of the parameter's listed values; any integer for a derived parameter with
 * none) into values[]. FT_EINPUT on anything else. Whether a derived value is
 * the one the shape gives is the enumeration's guard (ft_space_guard_text). */
int ft_config_parse(const struct ft_space *sp, const char *text, long long *values,
		    struct ft_err *err);

/* ---- enumeration (enumerate.c, over expr.c) ---------------------------- */

struct ft_candidate {
	long long index;		/* 0-based position in enumeration order */
	long long values[FT_MAX_PARAMS];	/* parallel to sp->params */
	int failed_constraint;		/* index of the first false constraint, -1 if none;
					 * nconstraints + i: derived parameter
					 * sp->derived[i] failed its guard (a value not
					 * among its values, a choice made twice, or, for
					 * a fixed config, not the value the shape
					 * derives). Enumerating, the guards are checked
					 * before the constraints; for a fixed config,
					 * after them */
	long long smem_bytes;		/* the smem_bytes formula */
	long long threads;		/* launch.threads */
	long long grid[3];		/* launch.grid */
	long long combine_threads;	/* 0 when the space has no combine kernel */
	long long combine_grid[3];
	int combine_pdl;		/* launch.combine_pdl: 1 when non-zero, 0 when absent */
	long long workspace_bytes;	/* workspace.bytes, 0 when none */
	long long define_values[FT_MAX_SPACE_DEFINES];	/* compile.defines */
};

struct ft_enum;

/* Starts enumerating sp's candidates for shape and arch, in the order of the
 * enumerated parameters' cartesian product (first parameter slowest); each
 * derived parameter is computed per candidate (also for a rejected one),
 * after the parameters it uses. fixed, when not NULL, pins every parameter,
 * derived ones too, to fixed[i] (a one-candidate enumeration, used by
 * `bench --config`): a derived value that is not the one the shape gives
 * fails that parameter's guard. Every expression is compiled here: a bad one fails with
 * FT_EINPUT "FILE:LINE: key 'KEY': ...". No work proportional to the size of
 * the space happens before the first ft_enum_next. */
int ft_enum_open(struct ft_enum **out, const struct ft_space *sp, const struct ft_shape *shape,
		 const struct ft_arch *arch, const long long *fixed, struct ft_err *err);

/* ft_enum_open for the candidates whose constraints (and derived parameters'
 * guards) all hold, in the same order with the same indices: the others are
 * skipped by the expression engine, several times faster than producing each
 * (most of a space fails a constraint at a given shape). The model's checks
 * past the constraints (ft_feasible_model: threads, grid, shared memory) are
 * the caller's, as with ft_enum_open. A step that fails on a skipped
 * candidate names it as ft_enum_next would. Not for a fixed config. */
int ft_enum_open_passing(struct ft_enum **out, const struct ft_space *sp, const struct ft_shape *shape,
			 const struct ft_arch *arch, struct ft_err *err);

/* The candidates an enumeration has gone past: the index of the last one it
 * produced plus one (with ft_enum_open, the candidates produced; at the end,
 * ft_enum_total). */
long long ft_enum_reached(const struct ft_enum *e);

/* Next candidate into *c: 1 when one was produced, 0 at the end, -1 on error
 * (e.g. a division by zero in a formula: FT_EINPUT naming the key and the
 * candidate). Candidates whose constraints fail are produced too, with
 * failed_constraint set and formulas possibly 0. */
int ft_enum_next(struct ft_enum *e, struct ft_candidate *c, struct ft_err *err);

/* Size of sp's cartesian product (enumerated parameters' values, and the
 * choices of derived ones written as lists): the candidates a search of it
 * goes through. */
long long ft_space_candidates(const struct ft_space *sp, const struct ft_shape *shape,
			      const struct ft_arch *arch);

/* sp's `applies_to` for shape on arch: 1 when it holds (or the space has
 * none), 0 when not, -1 with err when it cannot be evaluated (FT_EINPUT
 * "FILE:LINE: key 'applies_to': ..."). */
int ft_space_applies(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_arch *arch,
		     struct ft_err *err);

/* Size of the cartesian product (1 for a fixed enumeration). */
long long ft_enum_total(const struct ft_enum *e);

void ft_enum_close(struct ft_enum *e);

#endif
