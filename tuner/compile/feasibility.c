/* feasibility.c - the two feasibility checks (see feasibility.h). */
#include "compile/feasibility.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/paths.h"

/* A workspace larger than 4 GiB is a formula gone wrong, not a kernel's need. */
#define FT_WORKSPACE_MAX (4LL << 30)

/* Grid limits of every arch fatune knows (CUDA programming guide): x < 2^31, y and z <= 65535. */
#define GRID_X_MAX 2147483647LL
#define GRID_YZ_MAX 65535LL

static int reject(struct ft_trial *t, enum ft_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int reject(struct ft_trial *t, enum ft_status st, const char *fmt, ...)
{
	va_list ap;

	t->status = st;
	va_start(ap, fmt);
	vsnprintf(t->reason, sizeof(t->reason), fmt, ap);
	va_end(ap);
	return 0;
}

static long long smem_limit(const struct ft_space *sp, const struct ft_arch *a, const char **what)
{
	if (sp->smem_kind == FT_SMEM_STATIC) {
		*what = "static limit";
		return a->smem_static;
	}
	*what = "opt-in limit";
	return a->smem_optin;
}

int ft_feasible_model(const struct ft_space *sp, const struct ft_arch *a,
		      const struct ft_candidate *c, struct ft_trial *t)
{
	const char *what;
	long long limit;

	t->stage = FT_STAGE_MODEL;
	t->status = FT_ST_ACCEPTED;
	t->reason[0] = '\0';
	ft_config_format(sp, c->values, t->config, sizeof(t->config));
	memcpy(t->values, c->values, sizeof(t->values));
	t->smem_model = c->smem_bytes;
	t->threads = c->threads;
	t->combine_threads = c->combine_threads;
	t->combine_pdl = c->combine_threads ? c->combine_pdl : 0;
	t->workspace_bytes = c->workspace_bytes;
	memcpy(t->define_values, c->define_values, sizeof(t->define_values));
	/* combine_threads 0: no combine launch, so no combine grid either */
	for (int i = 0; i < 3; i++) {
		t->grid[i] = c->grid[i];
		t->combine_grid[i] = c->combine_threads ? c->combine_grid[i] : 0;
	}

	if (c->failed_constraint >= 0) {
		const char *dir = ft_data_dir(), *path = sp->path;
		size_t n = strlen(dir);
		char guard[FT_EXPR_MAX + 256];
		int line = 0;

		/* a shipped space by its place in the tree ("search_spaces/attention.yaml"):
		 * reasons are stored and shown in reports, where a local path means nothing */
		if (n && !strncmp(path, dir, n) && path[n] == '/')
			path += n + 1;
		ft_space_guard_text(sp, c->failed_constraint, &line, guard, sizeof(guard));
		return reject(t, FT_ST_REJECTED_CONSTRAINT, "%s (%s:%d)", guard, path, line);
	}
	if (c->threads < 1 || c->threads > a->threads_per_block)
		return reject(t, FT_ST_REJECTED_CONSTRAINT, "threads %lld outside 1..%d per block of %s",
			      c->threads, a->threads_per_block, a->name);
	if (c->combine_threads < 0 || c->combine_threads > a->threads_per_block)
		return reject(t, FT_ST_REJECTED_CONSTRAINT,
			      "combine threads %lld outside 0..%d per block of %s", c->combine_threads,
			      a->threads_per_block, a->name);
	if (c->grid[0] < 1 || c->grid[0] > GRID_X_MAX || c->grid[1] < 1 || c->grid[1] > GRID_YZ_MAX ||
	    c->grid[2] < 1 || c->grid[2] > GRID_YZ_MAX)
		return reject(t, FT_ST_REJECTED_CONSTRAINT, "grid %lldx%lldx%lld outside the launch limits",
			      c->grid[0], c->grid[1], c->grid[2]);
	if (c->smem_bytes < 0)
		return reject(t, FT_ST_REJECTED_CONSTRAINT, "smem_bytes is negative (%lld)", c->smem_bytes);
	if (c->workspace_bytes < 0 || c->workspace_bytes > FT_WORKSPACE_MAX)
		return reject(t, FT_ST_REJECTED_CONSTRAINT,
			      "workspace.bytes %lld outside 0..%lld (4 GiB)", c->workspace_bytes,
			      (long long)FT_WORKSPACE_MAX);
	limit = smem_limit(sp, a, &what);
	if (c->smem_bytes > limit)
		return reject(t, FT_ST_REJECTED_SMEM, "smem %lld B > %lld B %s of %s", c->smem_bytes, limit,
			      what, a->name);
	return 1;
}

/* Occupancy granularity of sm_80..sm_120 (the CUDA occupancy calculator,
 * cuda_occupancy.h): registers are allocated per warp in units of 256, from 4
 * sub-partitions of regs_per_sm / 4 each; shared memory per block in units of
 * 128 bytes, plus the per-block reservation. */
#define REG_UNIT 256
#define SUBPARTITIONS 4
#define SMEM_UNIT 128

/* Warps an SM can hold by registers (0 when regs is unknown: no limit known). */
static long long warps_by_regs(const struct ft_arch *a, int regs)
{
	long long per_warp = ((long long)regs * 32 + REG_UNIT - 1) / REG_UNIT * REG_UNIT;
	return SUBPARTITIONS * ((a->regs_per_sm / SUBPARTITIONS) / per_warp);
}

int ft_blocks_per_sm(const struct ft_arch *a, long long smem, long long threads,
		     const struct ft_resources *res)
{
	long long warps = (threads + 31) / 32, n = a->blocks_per_sm;
	long long by_smem, by_threads;

	if (threads < 1 || threads > a->threads_per_block)
		return 0;
	by_smem = a->smem_per_sm / ((smem + SMEM_UNIT - 1) / SMEM_UNIT * SMEM_UNIT + a->smem_reserved);
	by_threads = a->threads_per_sm / (warps * 32);
	if (by_smem < n)
		n = by_smem;
	if (by_threads < n)
		n = by_threads;
	if (res && res->regs > 0 && warps_by_regs(a, res->regs) / warps < n)
		n = warps_by_regs(a, res->regs) / warps;
	return (int)(n < 0 ? 0 : n);
}

int ft_feasible_compiled(const struct ft_space *sp, const struct ft_arch *a,
			 const struct ft_resources res[2], struct ft_trial *t)
{
	const char *what;
	long long limit = smem_limit(sp, a, &what);
	long long total;

	t->stage = FT_STAGE_COMPILED;
	t->status = FT_ST_COMPILED;
	t->res = res[0];
	/* a static kernel's formula must be what ptxas reports, or the model check
	 * before compiling judged the wrong number (both ways: too small lets
	 * candidates through that cannot fit, too large rejects ones that can) */
	if (sp->smem_kind == FT_SMEM_STATIC && res[0].smem_static >= 0 &&
	    res[0].smem_static != t->smem_model)
		return reject(t, FT_ST_COMPILE_FAILED,
			      "the space's smem_bytes formula gives %lld B but ptxas reports %d B of "
			      "static shared memory: fix smem_bytes in %s (for a static kernel it must "
			      "be exact, so that candidates are judged before compiling)",
			      t->smem_model, res[0].smem_static, sp->path);
	/* a static kernel's smem is what ptxas reports; a dynamic one adds the launch's bytes */
	total = sp->smem_kind == FT_SMEM_STATIC ? res[0].smem_static
						 : res[0].smem_static + t->smem_model;
	if (total > limit)
		return reject(t, FT_ST_REJECTED_SMEM, "compiled smem %lld B > %lld B %s of %s", total,
			      limit, what, a->name);
	if (res[0].regs > 0 && warps_by_regs(a, res[0].regs) < (t->threads + 31) / 32)
		return reject(t, FT_ST_REJECTED_CONSTRAINT,
			      "registers: %d per thread leave room for %lld warps per SM of %s, the block has %lld",
			      res[0].regs, warps_by_regs(a, res[0].regs), a->name, (t->threads + 31) / 32);
	/* the space's `spills` choice: none (reject), or up to N bytes (allow N) */
	for (int k = 0; k < 2; k++) {
		const struct ft_resources *r = &res[k];
		if ((long long)r->spill_stores + r->spill_loads > sp->spills_allow ||
		    r->stack_bytes > sp->spills_allow)
			return reject(t, FT_ST_SPILLS,
				      "%s kernel spills: %d B stores, %d B loads, %d B stack frame (the space "
				      "allows %lld: 'spills: allow N' raises it)",
				      k ? "combine" : "main", r->spill_stores, r->spill_loads,
				      r->stack_bytes, sp->spills_allow);
	}
	/* the space's `wgmma_serialized` choice: a kernel whose wgmma.mma_async
	 * ptxas serialized computes right but gives up the overlap it was written
	 * for, so it cannot win; timing it wastes the GPU (reject, the default) */
	for (int k = 0; k < 2 && !sp->wgmma_serialized_allow; k++) {
		const char *name = k ? sp->combine_kernel : sp->kernel;
		char note[16] = "";

		if (res[k].wgmma_serialized <= 0)
			continue;
		if (res[k].wgmma_serialized > 1)
			snprintf(note, sizeof(note), " (C%d)", res[k].wgmma_serialized);
		return reject(t, FT_ST_REJECTED_CONSTRAINT,
			      "wgmma serialized: ptxas's note%s says the wgmma.mma_async instructions "
			      "of '%s' are serialized (correct but slow; 'wgmma_serialized: allow' in "
			      "the space keeps such kernels)",
			      note, name[0] ? name : (k ? "combine kernel" : "main kernel"));
	}
	return 1;
}
