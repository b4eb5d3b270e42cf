/* test_feasibility.c - the two feasibility checks (feasibility.c) on
 * hand-built spaces, candidates and ptxas resources, and the blocks-per-SM
 * arithmetic.
 *
 * No GPU. The generic checks use hand-built spaces (struct ft_space filled
 * field by field); the last group loads the shipped Hopper space
 * (search_spaces/attention_sm90.yaml under $FATUNE_SOURCE_DIR) and checks its
 * feasibility rules - shared memory against the 227 KB opt-in, registers
 * after setmaxnreg, threads, Hopper only - on configs whose numbers are
 * worked out by hand in the comments. Limits used in
 * expectations are the design figures (shared/design/FACTS.md) and the CUDA
 * toolkit's own occupancy rules (include/cuda_occupancy.h: registers are
 * allocated per warp in units of 256, in 4 sub-partitions per SM, and shared
 * memory per block in units of 128 bytes), written out here rather than read
 * back from arch.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/feasibility.h"
#include "base/shape.h"

#define KB 1024

/* Memory a test allocates is released by the teardown, so a failing
 * assertion (which leaves the test early) leaks nothing under ASan. */
static void *owned[16];
static int nowned;

static void *own(void *p)
{
	assert_non_null(p);
	assert_true(nowned < (int)(sizeof(owned) / sizeof(owned[0])));
	owned[nowned++] = p;
	return p;
}

static int release_owned(void **state)
{
	while (nowned > 0)
		free(owned[--nowned]);
	return 0;
}

/* A space with two compile-time parameters and one constraint, per test. */
static struct ft_space *new_space(enum ft_smem_kind kind)
{
	struct ft_space *sp = own(calloc(1, sizeof(*sp)));
	snprintf(sp->path, sizeof(sp->path), "spaces/unit.yaml");
	snprintf(sp->name, sizeof(sp->name), "unit");
	snprintf(sp->kernel, sizeof(sp->kernel), "attn");
	sp->smem_kind = kind;
	sp->nparams = 2;
	snprintf(sp->params[0].name, FT_NAME_MAX, "BLOCK_M");
	sp->params[0].kind = FT_PARAM_COMPILE;
	sp->params[0].nvalues = 2;
	sp->params[0].values[0] = 64;
	sp->params[0].values[1] = 128;
	snprintf(sp->params[1].name, FT_NAME_MAX, "NUM_WARPS");
	sp->params[1].kind = FT_PARAM_COMPILE;
	sp->params[1].nvalues = 2;
	sp->params[1].values[0] = 4;
	sp->params[1].values[1] = 12;
	sp->nconstraints = 2;
	snprintf(sp->constraints[0].name, FT_NAME_MAX, "rows_per_warp");
	snprintf(sp->constraints[0].expr.text, FT_EXPR_MAX, "BLOCK_M %% (16 * NUM_WARPS) == 0");
	sp->constraints[0].expr.line = 12;
	snprintf(sp->constraints[1].name, FT_NAME_MAX, "warps_fit");
	snprintf(sp->constraints[1].expr.text, FT_EXPR_MAX, "NUM_WARPS <= 8");
	sp->constraints[1].expr.line = 14;
	return sp;
}

/* A candidate that passes every check: BLOCK_M=64, NUM_WARPS=4, 128 threads,
 * a 64-block grid, 16 KB of shared memory. */
static struct ft_candidate good_candidate(void)
{
	struct ft_candidate c;

	memset(&c, 0, sizeof(c));
	c.index = 3;
	c.values[0] = 64;
	c.values[1] = 4;
	c.failed_constraint = -1;
	c.smem_bytes = 16 * KB;
	c.threads = 128;
	c.grid[0] = 8;
	c.grid[1] = 8;
	c.grid[2] = 1;
	return c;
}

static const struct ft_arch *arch(const char *name)
{
	const struct ft_arch *a = ft_arch_find(name, NULL);

	assert_non_null(a);
	return a;
}

static int model(const struct ft_space *sp, const char *an, const struct ft_candidate *c,
		 struct ft_trial *t)
{
	ft_trial_init(t);
	t->status = FT_ST_OK; /* rejections must set it */
	return ft_feasible_model(sp, arch(an), c, t);
}

static void expect_model_ok(const struct ft_space *sp, const char *an, const struct ft_candidate *c)
{
	struct ft_trial t;

	if (model(sp, an, c, &t) != 1)
		fail_msg("candidate rejected on %s: %s", an, t.reason);
	/* accepted by the model, still pending (trial.h) */
	assert_int_equal(t.stage, FT_STAGE_MODEL);
	assert_int_equal(t.status, FT_ST_ACCEPTED);
	assert_true(ft_trial_pending(&t));
}

static void expect_model_reject(const struct ft_space *sp, const char *an,
				const struct ft_candidate *c, enum ft_status st, const char *needle)
{
	struct ft_trial t;

	if (model(sp, an, c, &t) != 0)
		fail_msg("candidate accepted on %s, expected %s", an, ft_status_name(st));
	if (t.status != st)
		fail_msg("status %s (%s), expected %s", ft_status_name(t.status), t.reason,
			 ft_status_name(st));
	if (needle && !strstr(t.reason, needle))
		fail_msg("reason '%s' does not say '%s'", t.reason, needle);
	assert_int_equal(t.stage, FT_STAGE_MODEL);
	assert_false(ft_trial_pending(&t));
}

/* ---- the model check --------------------------------------------------- */

static void test_model_accepts_and_fills_trial(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_candidate c = good_candidate();
	struct ft_trial t;

	c.combine_threads = 256;
	c.combine_grid[0] = 5;
	c.combine_grid[1] = 6;
	c.combine_grid[2] = 7;
	assert_int_equal(model(sp, "sm_89", &c, &t), 1);
	assert_string_equal(t.config, "BLOCK_M=64,NUM_WARPS=4");
	assert_true(t.values[0] == 64 && t.values[1] == 4);
	assert_true(t.smem_model == 16 * KB);
	assert_true(t.threads == 128);
	assert_true(t.grid[0] == 8 && t.grid[1] == 8 && t.grid[2] == 1);
	assert_true(t.combine_threads == 256);
	assert_true(t.combine_grid[0] == 5 && t.combine_grid[1] == 6 && t.combine_grid[2] == 7);

	/* combine_threads 0: no combine launch, and no combine grid recorded */
	c.combine_threads = 0;
	assert_int_equal(model(sp, "sm_89", &c, &t), 1);
	assert_true(t.combine_threads == 0);
	assert_true(t.combine_grid[0] == 0 && t.combine_grid[1] == 0 && t.combine_grid[2] == 0);
}

static void test_model_constraint(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_candidate c = good_candidate();
	struct ft_trial t;

	c.values[1] = 12;
	c.failed_constraint = 1;
	assert_int_equal(model(sp, "sm_89", &c, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_CONSTRAINT);
	/* the reason names the constraint that failed, and where it is written */
	assert_non_null(strstr(t.reason, "warps_fit"));
	assert_null(strstr(t.reason, "rows_per_warp"));
	assert_non_null(strstr(t.reason, "spaces/unit.yaml"));
	assert_non_null(strstr(t.reason, "14"));
	/* the trial still says which config it was */
	assert_string_equal(t.config, "BLOCK_M=64,NUM_WARPS=12");

	c.failed_constraint = 0;
	expect_model_reject(sp, "sm_89", &c, FT_ST_REJECTED_CONSTRAINT, "rows_per_warp");
}

static void test_model_threads(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_candidate c = good_candidate();

	c.threads = 1024;
	expect_model_ok(sp, "sm_89", &c);
	c.threads = 1;
	expect_model_ok(sp, "sm_89", &c);
	c.threads = 1025;
	expect_model_reject(sp, "sm_89", &c, FT_ST_REJECTED_CONSTRAINT, "1025");
	expect_model_reject(sp, "sm_90", &c, FT_ST_REJECTED_CONSTRAINT, "1024");
	c.threads = 0;
	expect_model_reject(sp, "sm_89", &c, FT_ST_REJECTED_CONSTRAINT, NULL);
	c.threads = -128;
	expect_model_reject(sp, "sm_89", &c, FT_ST_REJECTED_CONSTRAINT, NULL);

	/* the combine kernel: 0 means none, over 1024 cannot launch */
	c = good_candidate();
	c.combine_threads = 0;
	expect_model_ok(sp, "sm_89", &c);
	c.combine_threads = 1024;
	expect_model_ok(sp, "sm_89", &c);
	c.combine_threads = 2048;
	expect_model_reject(sp, "sm_89", &c, FT_ST_REJECTED_CONSTRAINT, "2048");
}

static void test_model_grid(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_candidate c = good_candidate();

	/* CUDA grid limits: x up to 2^31 - 1, y and z up to 65535 */
	c.grid[0] = 2147483647LL;
	c.grid[1] = 65535;
	c.grid[2] = 65535;
	expect_model_ok(sp, "sm_90", &c);

	c = good_candidate();
	c.grid[0] = 2147483648LL;
	expect_model_reject(sp, "sm_90", &c, FT_ST_REJECTED_CONSTRAINT, "grid");
	c = good_candidate();
	c.grid[1] = 65536;
	expect_model_reject(sp, "sm_90", &c, FT_ST_REJECTED_CONSTRAINT, "grid");
	c = good_candidate();
	c.grid[2] = 65536;
	expect_model_reject(sp, "sm_90", &c, FT_ST_REJECTED_CONSTRAINT, "grid");
	for (int k = 0; k < 3; k++) {
		c = good_candidate();
		c.grid[k] = 0;
		expect_model_reject(sp, "sm_90", &c, FT_ST_REJECTED_CONSTRAINT, "grid");
		c.grid[k] = -1;
		expect_model_reject(sp, "sm_90", &c, FT_ST_REJECTED_CONSTRAINT, "grid");
	}
}

/* The failure that motivates fatune (FACTS.md): 163840 bytes of static
 * shared memory asked of sm_89. */
static void test_model_static_smem(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_candidate c = good_candidate();
	struct ft_trial t;

	c.smem_bytes = 163840;
	assert_int_equal(model(sp, "sm_89", &c, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_SMEM);
	assert_string_equal(t.reason, "smem 163840 B > 49152 B static limit of sm_89");

	/* 48 KB is the static limit on every arch, H100 included */
	for (int i = 0; i < ft_arch_count(); i++) {
		const char *an = ft_arch_at(i)->name;

		c.smem_bytes = 49152;
		expect_model_ok(sp, an, &c);
		c.smem_bytes = 49153;
		expect_model_reject(sp, an, &c, FT_ST_REJECTED_SMEM, "static limit");
	}
	/* FACTS.md's second attempt: 56.75 KB still overflows */
	c.smem_bytes = 58112;
	expect_model_reject(sp, "sm_90", &c, FT_ST_REJECTED_SMEM, "49152 B static limit of sm_90");
	c.smem_bytes = 0;
	expect_model_ok(sp, "sm_89", &c);
	c.smem_bytes = -1;
	expect_model_reject(sp, "sm_89", &c, FT_ST_REJECTED_CONSTRAINT, "negative");
}

static void test_model_dynamic_smem(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_DYNAMIC);
	struct ft_candidate c = good_candidate();
	struct ft_trial t;

	/* sm_89 opts in to 101376 bytes (99 KB) */
	c.smem_bytes = 100000;
	expect_model_ok(sp, "sm_89", &c);
	c.smem_bytes = 101376;
	expect_model_ok(sp, "sm_89", &c);
	c.smem_bytes = 101377;
	expect_model_reject(sp, "sm_89", &c, FT_ST_REJECTED_SMEM, "opt-in limit");
	/* 100 KB = 102400 B is already past 99 KB */
	c.smem_bytes = 100 * KB;
	expect_model_reject(sp, "sm_89", &c, FT_ST_REJECTED_SMEM, "opt-in limit");
	c.smem_bytes = 120 * KB;
	assert_int_equal(model(sp, "sm_89", &c, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_SMEM);
	assert_string_equal(t.reason, "smem 122880 B > 101376 B opt-in limit of sm_89");

	/* what does not fit an L4 fits an A100 and an H100 */
	c.smem_bytes = 163840;
	expect_model_reject(sp, "sm_86", &c, FT_ST_REJECTED_SMEM, "101376");
	expect_model_ok(sp, "sm_80", &c);
	expect_model_ok(sp, "sm_87", &c);
	expect_model_ok(sp, "sm_90", &c);
	c.smem_bytes = 166913;
	expect_model_reject(sp, "sm_80", &c, FT_ST_REJECTED_SMEM, "166912");
	c.smem_bytes = 232448;
	expect_model_ok(sp, "sm_90", &c);
	expect_model_ok(sp, "sm_100", &c);
	c.smem_bytes = 232449;
	expect_model_reject(sp, "sm_90", &c, FT_ST_REJECTED_SMEM, "232448 B opt-in limit of sm_90");
}

/* ---- the compiled check ------------------------------------------------ */

static void clean_res(struct ft_resources res[2], int regs, int smem)
{
	res[0] = (struct ft_resources){ regs, smem, 0, 0, 0, 0 };
	res[1] = (struct ft_resources){ -1, -1, -1, -1, -1, 0 };
}

/* A trial that passed the model check with `threads` and `smem_model`. */
static void model_passed(struct ft_trial *t, long long threads, long long smem_model)
{
	ft_trial_init(t);
	t->status = FT_ST_OK;
	t->threads = threads;
	t->smem_model = smem_model;
	t->grid[0] = t->grid[1] = t->grid[2] = 1;
}

static void test_compiled_clean(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_resources res[2];
	struct ft_trial t;

	clean_res(res, 96, 16 * KB);
	res[1] = (struct ft_resources){ 24, 0, 0, 0, 0, 0 };
	model_passed(&t, 128, 16 * KB);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 1);
	/* judged after compiling: stage compiled, status compiled (trial.h) */
	assert_int_equal(t.stage, FT_STAGE_COMPILED);
	assert_int_equal(t.status, FT_ST_COMPILED);
	assert_true(ft_trial_pending(&t));
	/* the main kernel's resources are kept with the trial */
	assert_int_equal(t.res.regs, 96);
	assert_int_equal(t.res.smem_static, 16 * KB);
	assert_int_equal(t.res.spill_stores, 0);
}

static void test_compiled_spills(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_resources res[2];
	struct ft_trial t;

	/* the numbers of tests/unit/fixtures/ptxas_spills.log */
	clean_res(res, 24, 0);
	res[0].stack_bytes = 576;
	res[0].spill_stores = 636;
	res[0].spill_loads = 636;
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_SPILLS);
	assert_non_null(strstr(t.reason, "636"));
	assert_int_equal(t.res.spill_stores, 636);

	/* loads alone */
	clean_res(res, 24, 0);
	res[0].spill_loads = 8;
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_SPILLS);

	/* a stack frame is local memory too (trial.h: "uses local memory") */
	clean_res(res, 24, 0);
	res[0].stack_bytes = 64;
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_SPILLS);

	/* the combine kernel spilling rejects the candidate as well */
	clean_res(res, 64, 0);
	res[1] = (struct ft_resources){ 40, 0, 16, 16, 16, 0 };
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_SPILLS);
	assert_non_null(strstr(t.reason, "combine"));

	/* `spills: allow 32`: up to 32 bytes of stores plus loads, and of stack, pass */
	sp->spills_allow = 32;
	clean_res(res, 64, 0);
	res[0] = (struct ft_resources){ 40, 0, 32, 16, 16, 0 };
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 1);
	assert_int_equal(t.res.spill_stores, 16);
	/* one byte more is rejected, and the reason names the allowance */
	res[0].spill_loads = 17;
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_SPILLS);
	assert_non_null(strstr(t.reason, "allows 32"));
	res[0] = (struct ft_resources){ 40, 0, 33, 0, 0, 0 };
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 0);
	sp->spills_allow = 0;
}

/* ptxas's note that it serialized a kernel's wgmma: rejected at stage
 * compiled unless the space says `wgmma_serialized: allow` */
static void test_compiled_wgmma_serialized(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_resources res[2];
	struct ft_trial t;

	snprintf(sp->kernel, sizeof(sp->kernel), "fatune_sm90_fwd");
	clean_res(res, 168, 0);
	res[0].wgmma_serialized = 7520;
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_90"), res, &t), 0);
	assert_int_equal(t.stage, FT_STAGE_COMPILED);
	assert_int_equal(t.status, FT_ST_REJECTED_CONSTRAINT);
	assert_non_null(strstr(t.reason, "wgmma serialized"));
	assert_non_null(strstr(t.reason, "C7520"));
	assert_non_null(strstr(t.reason, "'fatune_sm90_fwd'"));
	assert_non_null(strstr(t.reason, "wgmma_serialized: allow"));

	/* a sibling note without a number, on the combine kernel */
	clean_res(res, 168, 0);
	res[1] = (struct ft_resources){ 40, 0, 0, 0, 0, 1 };
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_90"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_CONSTRAINT);
	assert_null(strstr(t.reason, "(C"));

	/* none (0) or unknown (-1) passes */
	clean_res(res, 168, 0);
	res[1].wgmma_serialized = -1;
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_90"), res, &t), 1);
	assert_int_equal(t.status, FT_ST_COMPILED);

	/* the space's choice keeps it */
	sp->wgmma_serialized_allow = 1;
	res[0].wgmma_serialized = 7520;
	model_passed(&t, 128, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_90"), res, &t), 1);
	assert_int_equal(t.res.wgmma_serialized, 7520);
	sp->wgmma_serialized_allow = 0;
}

static void test_compiled_registers(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_resources res[2];
	struct ft_trial t;

	/* 64 x 1024 = 65536: exactly the register file */
	clean_res(res, 64, 0);
	model_passed(&t, 1024, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_90"), res, &t), 1);
	/* 255 x 512 = 130560 > 65536 */
	clean_res(res, 255, 0);
	model_passed(&t, 512, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_90"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_CONSTRAINT);
	/* a rejection found after compiling is no model rejection: its stage says so */
	assert_int_equal(t.stage, FT_STAGE_COMPILED);
	assert_false(ft_trial_pending(&t));
	assert_non_null(strstr(t.reason, "255"));
	assert_non_null(strstr(t.reason, "regist"));
	/* 65 x 1024 */
	clean_res(res, 65, 0);
	model_passed(&t, 1024, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_CONSTRAINT);
	/* threads come in whole warps: 257 threads hold 9 warps, 9 x 32 x 255 > 65536
	 * although 257 x 255 = 65535 */
	clean_res(res, 255, 0);
	model_passed(&t, 257, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_CONSTRAINT);
}

/* Registers are allocated per warp in units of 256, and the hardware checks a
 * block as if its warps were spread over all 4 sub-partitions (warps rounded
 * up to a multiple of 4): cuda_occupancy.h, cudaOccMaxBlocksPerSMRegsLimit. A
 * block over 65536 registers by that count cannot launch
 * (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), even when regs x threads fits.
 * Both refusals below were seen on an H200 (driver 580.159.04): cuLaunchKernel
 * of a 81-register kernel with 768 threads and of a 200-register kernel with
 * 320 threads returned CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. */
static void test_compiled_register_granularity(void **state)
{
	struct ft_space *sp = new_space(FT_SMEM_STATIC);
	struct ft_resources res[2];
	struct ft_trial t;

	/* 81 registers round up to 88 per thread: 88 x 32 x 24 warps = 67584 */
	clean_res(res, 81, 0);
	model_passed(&t, 768, 0);
	if (ft_feasible_compiled(sp, arch("sm_90"), res, &t) != 0)
		fail_msg("81 registers x 768 threads accepted: 24 warps x 2816 registers = 67584 > "
			 "65536 (allocation unit 256 per warp), the launch fails");
	assert_int_equal(t.status, FT_ST_REJECTED_CONSTRAINT);

	/* 200 registers: 6400 per warp; 10 warps count as 12 = 76800 */
	clean_res(res, 200, 0);
	model_passed(&t, 320, 0);
	if (ft_feasible_compiled(sp, arch("sm_90"), res, &t) != 0)
		fail_msg("200 registers x 320 threads accepted: the hardware counts 10 warps as 12, "
			 "12 x 6400 = 76800 > 65536, the launch fails");
	assert_int_equal(t.status, FT_ST_REJECTED_CONSTRAINT);

	/* and one that does fit by the same rules: 200 x 256 threads (8 warps) */
	clean_res(res, 200, 0);
	model_passed(&t, 256, 0);
	assert_int_equal(ft_feasible_compiled(sp, arch("sm_90"), res, &t), 1);
}

static void test_compiled_smem(void **state)
{
	struct ft_space *st = new_space(FT_SMEM_STATIC);
	struct ft_space *dy = new_space(FT_SMEM_DYNAMIC);
	struct ft_resources res[2];
	struct ft_trial t;

	/* static: the formula must be what ptxas reports, both ways: one too small
	 * would let candidates through the model that cannot fit, one too large
	 * rejects candidates that can (both are the space's bug: compile_failed) */
	clean_res(res, 32, 52 * KB);
	model_passed(&t, 128, 16 * KB);
	assert_int_equal(ft_feasible_compiled(st, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_COMPILE_FAILED);
	assert_non_null(strstr(t.reason, "53248"));
	assert_non_null(strstr(t.reason, "16384"));
	assert_non_null(strstr(t.reason, "smem_bytes"));
	clean_res(res, 32, 48 * KB);
	model_passed(&t, 128, 60 * KB);
	assert_int_equal(ft_feasible_compiled(st, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_COMPILE_FAILED);
	assert_non_null(strstr(t.reason, "61440"));
	/* exact: fits, or over the static limit */
	clean_res(res, 32, 48 * KB);
	model_passed(&t, 128, 48 * KB);
	assert_int_equal(ft_feasible_compiled(st, arch("sm_89"), res, &t), 1);
	clean_res(res, 32, 52 * KB);
	model_passed(&t, 128, 52 * KB);
	assert_int_equal(ft_feasible_compiled(st, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_SMEM);
	assert_non_null(strstr(t.reason, "53248"));
	assert_non_null(strstr(t.reason, "49152"));

	/* dynamic: the kernel's own static smem adds to the launch's bytes */
	clean_res(res, 32, 4 * KB);
	model_passed(&t, 128, 99 * KB);
	assert_int_equal(ft_feasible_compiled(dy, arch("sm_89"), res, &t), 0);
	assert_int_equal(t.status, FT_ST_REJECTED_SMEM);
	assert_non_null(strstr(t.reason, "105472"));
	assert_non_null(strstr(t.reason, "opt-in"));
	clean_res(res, 32, 1 * KB);
	model_passed(&t, 128, 98 * KB);
	assert_int_equal(ft_feasible_compiled(dy, arch("sm_89"), res, &t), 1);
	clean_res(res, 32, 1 * KB);
	model_passed(&t, 128, 98 * KB + 1);
	assert_int_equal(ft_feasible_compiled(dy, arch("sm_89"), res, &t), 0);
	/* the same total fits an H100 */
	clean_res(res, 32, 4 * KB);
	model_passed(&t, 128, 99 * KB);
	assert_int_equal(ft_feasible_compiled(dy, arch("sm_90"), res, &t), 1);
}

/* ---- blocks per SM ------------------------------------------------------ */

static void test_blocks_per_sm(void **state)
{
	const struct ft_arch *h100 = arch("sm_90"), *l4 = arch("sm_89"), *a100 = arch("sm_80");
	struct ft_resources r = { 64, 0, 0, 0, 0, 0 };

	/* nothing but threads: 2048 / 128 = 16 blocks on an H100, 1536 / 128 = 12 on an L4 */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 128, NULL), 16);
	assert_int_equal(ft_blocks_per_sm(l4, 0, 128, NULL), 12);
	/* tiny blocks hit the per-SM block count: 32 on sm_90, 24 on sm_89 */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 32, NULL), 32);
	assert_int_equal(ft_blocks_per_sm(l4, 0, 32, NULL), 24);
	/* partial warps take whole warps: 33 threads are 64 */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 33, NULL), 32);
	assert_int_equal(ft_blocks_per_sm(l4, 0, 100, NULL), 1536 / 128);
	/* FACTS.md: 48 KB blocks, 2 per SM on sm_86/89: (48 + 1) KB x 2 <= 100 KB */
	assert_int_equal(ft_blocks_per_sm(l4, 48 * KB, 128, NULL), 2);
	assert_int_equal(ft_blocks_per_sm(arch("sm_86"), 48 * KB, 128, NULL), 2);
	/* 228 KB / (48 + 1) KB = 4 on an H100, 164 / 49 = 3 on an A100 */
	assert_int_equal(ft_blocks_per_sm(h100, 48 * KB, 128, NULL), 4);
	assert_int_equal(ft_blocks_per_sm(a100, 48 * KB, 128, NULL), 3);
	/* one block at the opt-in limit fills the SM, one byte more does not fit */
	assert_int_equal(ft_blocks_per_sm(h100, 232448, 128, NULL), 1);
	assert_int_equal(ft_blocks_per_sm(h100, 232449, 128, NULL), 0);
	assert_int_equal(ft_blocks_per_sm(l4, 101376, 128, NULL), 1);
	assert_int_equal(ft_blocks_per_sm(l4, 101377, 128, NULL), 0);
	/* registers: 64 x 256 threads = 16384 -> 4 blocks */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 256, &r), 4);
	/* res == NULL or unknown registers: threads decide (2048 / 256) */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 256, NULL), 8);
	r.regs = -1;
	assert_int_equal(ft_blocks_per_sm(h100, 0, 256, &r), 8);
	/* 255 registers x 1024 threads do not fit at all */
	r.regs = 255;
	assert_int_equal(ft_blocks_per_sm(h100, 0, 1024, &r), 0);
	/* the smallest of the three limits wins: smem 3, threads 8, regs 2 */
	r.regs = 128;
	assert_int_equal(ft_blocks_per_sm(h100, 70 * KB, 256, &r), 2);
	/* no threads: cannot run */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 0, NULL), 0);
}

static void test_blocks_per_sm_unlaunchable(void **state)
{
	/* feasibility.h: "0 if it cannot run". 2048 threads fit an H100's SM but
	 * not one block (1024 threads at most) */
	if (ft_blocks_per_sm(arch("sm_90"), 0, 2048, NULL) != 0)
		fail_msg("ft_blocks_per_sm gives %d blocks of 2048 threads: a block has at most 1024",
			 ft_blocks_per_sm(arch("sm_90"), 0, 2048, NULL));
	assert_int_equal(ft_blocks_per_sm(arch("sm_80"), 0, 1025, NULL), 0);
}

/* The occupancy rules of cuda_occupancy.h that ft_blocks_per_sm approximates:
 * registers per warp round up to 256, shared memory per block to 128 bytes.
 * The sm_90 figures are what cuOccupancyMaxActiveBlocksPerMultiprocessor
 * returned on an H200 (driver 580.159.04) for kernels with exactly these
 * register counts and dynamic shared memory sizes. */
static void test_blocks_per_sm_register_granularity(void **state)
{
	const struct ft_arch *h100 = arch("sm_90");
	struct ft_resources r = { 33, 0, 0, 0, 0, 0 };

	/* 33 registers: 1280 per warp; 16384 per sub-partition holds 12 warps, 48
	 * per SM, 6 blocks of 8 warps (33 x 256 = 8448 would give 7) */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 256, &r), 6);
	/* 10 warps: 48 / 10 = 4 (33 x 320 = 10560 would give 6) */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 320, &r), 4);
	/* 81 registers: 2816 per warp, 5 warps per sub-partition, 20 per SM -> 5
	 * blocks of 4 warps (81 x 128 = 10368 would give 6) */
	r.regs = 81;
	assert_int_equal(ft_blocks_per_sm(h100, 0, 128, &r), 5);
	/* 81 registers x 768 threads cannot launch (see the compiled check) */
	assert_int_equal(ft_blocks_per_sm(h100, 0, 768, &r), 0);
}

static void test_blocks_per_sm_smem_granularity(void **state)
{
	const struct ft_arch *h100 = arch("sm_90"), *l4 = arch("sm_89");

	/* shared memory: 45670 B take 45696 B; + 1024 reserved = 46720 -> 4 per
	 * 228 KB SM (45670 + 1024 = 46694 would give 5) */
	assert_int_equal(ft_blocks_per_sm(h100, 45670, 128, NULL), 4);
	assert_int_equal(ft_blocks_per_sm(h100, 45570, 128, NULL), 4);
	/* a multiple of 128 is not rounded: 45568 + 1024 = 46592 -> 5 */
	assert_int_equal(ft_blocks_per_sm(h100, 45568, 128, NULL), 5);
	/* 33100 B take 33152 B: 3 x (33152 + 1024) > 100 KB -> 2 on an L4 */
	assert_int_equal(ft_blocks_per_sm(l4, 33100, 128, NULL), 2);
}

/* ---- the Hopper space's rules (search_spaces/attention_sm90.yaml) -------- */

/* sm_90: 232448 B (227 KB) of opt-in shared memory per block, 64K registers
 * per SM, 1024 threads per block (shared/design/FACTS.md). */
#define SM90_OPTIN 232448

static struct ft_space *hopper_space(void)
{
	struct ft_space *sp = own(calloc(1, sizeof(*sp)));
	const char *dir = getenv("FATUNE_SOURCE_DIR");
	char path[FT_PATH_MAX];
	struct ft_err err = { 0 };

	if (!dir)
		fail_msg("set FATUNE_SOURCE_DIR to the repository root");
	snprintf(path, sizeof(path), "%s/search_spaces/attention_sm90.yaml", dir);
	if (ft_space_load(sp, path, &err))
		fail_msg("%s", err.msg);
	return sp;
}

/* The model's verdict on one config of sp for shape ("BxHxSxD", " causal"
 * appended for causal attention) on arch an (1 accepted, 0 rejected), through
 * the same enumeration a search uses. */
/* The FA3 mechanisms' parameters at today's kernel (docs/kernel_sm90.md),
 * appended to a config that does not name them. */
static const char *const hopper_defaults[] = { "PDL=0", "INTRA_WG_OVERLAP=1", "TILE_ORDER=0", "MASK_PEEL=0",
						 "KV_WARPGROUPS=1", "CLUSTER_M=1" };

static int hopper_verdict(const struct ft_space *sp, const char *an, const char *shape,
			  const char *config, struct ft_trial *t)
{
	struct ft_shape sh = { .dtype = FT_FP16 };
	long long values[FT_MAX_PARAMS];
	struct ft_enum *e = NULL;
	struct ft_candidate c;
	struct ft_err err = { 0 };
	char full[FT_CONFIG_MAX], name[32];
	int rc;

	char shape_txt[64];
	const char *sfx = strstr(shape, " causal");

	snprintf(shape_txt, sizeof(shape_txt), "%.*s", sfx ? (int)(sfx - shape) : (int)strlen(shape), shape);
	sh.causal = sfx != NULL;
	shape = shape_txt;
	snprintf(full, sizeof(full), "%s", config);
	for (size_t i = 0; i < sizeof(hopper_defaults) / sizeof(hopper_defaults[0]); i++) {
		snprintf(name, sizeof(name), "%.*s", (int)(strchr(hopper_defaults[i], '=') - hopper_defaults[i] + 1),
			 hopper_defaults[i]);
		if (!strstr(full, name))
			snprintf(full + strlen(full), sizeof(full) - strlen(full), ",%s", hopper_defaults[i]);
	}
	config = full;
	if (ft_shape_parse(shape, &sh, &err) || ft_config_parse(sp, config, values, &err) ||
	    ft_enum_open(&e, sp, &sh, arch(an), values, &err))
		fail_msg("%s %s: %s", shape, config, err.msg);
	rc = ft_enum_next(e, &c, &err);
	ft_enum_close(e);
	if (rc != 1)
		fail_msg("%s %s: no candidate (%s)", shape, config, err.msg);
	return model(sp, an, &c, t);
}

static void expect_hopper(const struct ft_space *sp, const char *shape, const char *config,
			  const char *rejected_by, long long smem)
{
	struct ft_trial t;
	char want[96];
	int ok = hopper_verdict(sp, "sm_90", shape, config, &t);

	if (!rejected_by) {
		if (!ok)
			fail_msg("%s %s rejected: %s", shape, config, t.reason);
		if (smem && t.smem_model != smem)
			fail_msg("%s %s: smem %lld, expected %lld", shape, config, t.smem_model, smem);
		return;
	}
	snprintf(want, sizeof(want), "constraint '%s' is false", rejected_by);
	if (ok)
		fail_msg("%s %s accepted, expected %s", shape, config, want);
	if (t.status != FT_ST_REJECTED_CONSTRAINT || !strstr(t.reason, want))
		fail_msg("%s %s: '%s', expected %s", shape, config, t.reason, want);
}

/* Registers after setmaxnreg. The block starts with 64K / threads each
 * (rounded down to 8, at most 255; one consumer runs two blocks per SM), the
 * producer warpgroup drops to 24, the consumers share the rest, at most 240:
 * 232 with one consumer, 240 with two, 160 with three. A consumer needs
 * D/2 (O) + 3*BLOCK_N/4 (S and P) + D/4 with Q in registers + 24, 16 more
 * persistent with two consumers, 8 more with three. D = 128 below. */
static void test_hopper_registers(void **state)
{
	struct ft_space *sp = hopper_space();
	const char *sh = "1x8x4096x128";

	(void)state;
	/* two consumers, 176-key tiles: 64 + 132 + 24 = 220 <= 240 */
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=176,KV_STAGES=2,PINGPONG=0,"
			      "PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", NULL, 0);
	/* persistent: + 16 = 236 <= 240 */
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=176,KV_STAGES=2,PINGPONG=0,"
			      "PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1", NULL, 0);
	/* Q in registers: + 32 = 252 > 240 */
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=176,KV_STAGES=2,PINGPONG=0,"
			      "PERSISTENT=0,Q_IN_REGS=1,NUM_SPLITS=1", "registers_fit", 0);
	/* 128-key tiles leave room for Q: 64 + 96 + 32 + 24 = 216 */
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,"
			      "PERSISTENT=0,Q_IN_REGS=1,NUM_SPLITS=1", NULL, 0);
	/* three consumers get 160: 80-key tiles 64 + 60 + 24 + 8 = 156 fit, 128-key 192 do not */
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=3,BLOCK_M=192,BLOCK_N=80,KV_STAGES=2,PINGPONG=0,"
			      "PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", NULL, 0);
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=3,BLOCK_M=192,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,"
			      "PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", "registers_fit", 0);
	/* one consumer gets 232: 220 fits, 252 with Q in registers does not */
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=176,KV_STAGES=2,PINGPONG=0,"
			      "PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", NULL, 0);
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=176,KV_STAGES=2,PINGPONG=0,"
			      "PERSISTENT=0,Q_IN_REGS=1,NUM_SPLITS=1", "registers_fit", 0);
	/* D = 256 holds O in 128: 128-key tiles 128 + 96 + 24 = 248 > 240 */
	expect_hopper(sp, "1x8x4096x256", "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,"
			      "PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", "registers_fit", 0);
}

/* The causal mechanisms of issue 17: TILE_ORDER 1 (heaviest row blocks of
 * every head first, L2-grouped) only for causal shapes with more work tiles
 * than one wave of 132 SMs, persistent (without PDL: it spilled) or not; a
 * persistent causal grid only with it (faster on 6 of 7 causal shapes on an
 * H200, 2026-11-29). */
static void test_hopper_causal_mechanisms(void **state)
{
	struct ft_space *sp = hopper_space();
	const char *c2 = "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,Q_IN_REGS=0,NUM_SPLITS=1";
	char cfg[FT_CONFIG_MAX];

	(void)state;
	/* 2x32x2048: 16 row blocks x 64 heads = 1024 work tiles > 132 */
	snprintf(cfg, sizeof(cfg), "%s,PERSISTENT=0,TILE_ORDER=1,MASK_PEEL=0", c2);
	expect_hopper(sp, "2x32x2048x64 causal", cfg, NULL, 0);
	expect_hopper(sp, "2x32x2048x64", cfg, "tile_order_for_causal_waves", 0);
	snprintf(cfg, sizeof(cfg), "%s,PERSISTENT=1,TILE_ORDER=1,MASK_PEEL=0", c2);
	expect_hopper(sp, "2x32x2048x64 causal", cfg, NULL, 0);
	snprintf(cfg, sizeof(cfg), "%s,PERSISTENT=1,TILE_ORDER=0,MASK_PEEL=0", c2);
	expect_hopper(sp, "2x32x2048x64 causal", cfg, "persistent_causal_heaviest_first", 0);
	expect_hopper(sp, "2x32x2048x64", cfg, NULL, 0);
	/* persistent heaviest first, split-KV: without PDL only (with it, it spilled) */
	snprintf(cfg, sizeof(cfg), "%s,PERSISTENT=1,TILE_ORDER=1,MASK_PEEL=0,NUM_SPLITS=4,PDL=0",
		 "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,Q_IN_REGS=0");
	expect_hopper(sp, "1x8x1024x64 causal", cfg, NULL, 0);
	snprintf(cfg, sizeof(cfg), "%s,PERSISTENT=1,TILE_ORDER=1,MASK_PEEL=0,NUM_SPLITS=4,PDL=1",
		 "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,Q_IN_REGS=0");
	expect_hopper(sp, "1x8x1024x64 causal", cfg, "heaviest_first_without_pdl", 0);
	/* MASK_PEEL 1 is out of the shipped space (ptxas serializes its wgmma) */
	/* 1x8x1024: 8 x 8 = 64 work tiles, one wave: the order cannot matter */
	snprintf(cfg, sizeof(cfg), "%s,PERSISTENT=0,TILE_ORDER=1", c2);
	expect_hopper(sp, "1x8x1024x64 causal", cfg, "tile_order_for_causal_waves", 0);
	/* ... unless split: 64 x 4 = 256 work tiles */
	snprintf(cfg, sizeof(cfg), "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,"
				   "Q_IN_REGS=0,NUM_SPLITS=4,TILE_ORDER=1");
	expect_hopper(sp, "1x8x1024x64 causal", cfg, NULL, 0);
}

/* Shared memory: 2 B x D x (BLOCK_M + 2 x BLOCK_N x KV_STAGES) for Q and the
 * K/V ring, then 8 B per mbarrier (2 + 4 x KV_STAGES), within 232448 B. */
static void test_hopper_smem(void **state)
{
	struct ft_space *sp = hopper_space();
	const char *sh = "1x8x4096x256";

	(void)state;
	/* D = 256, 80-key tiles, two stages: 512 x 448 + 80 = 229456 B, 2992 B under the limit */
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=80,KV_STAGES=2,PINGPONG=0,"
			      "PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", NULL, 229456);
	/* three stages: 512 x 608 + 112 = 311408 B > 232448 B */
	expect_hopper(sp, sh, "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=80,KV_STAGES=3,PINGPONG=0,"
			      "PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", "smem_fits", 0);
	/* D = 128, 176-key tiles: two stages 256 x 832 + 80 = 213072 B fit */
	expect_hopper(sp, "1x8x4096x128", "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=176,KV_STAGES=2,"
			      "PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", NULL, 213072);
	/* D = 64, three stages of 128-key tiles: 128 x 832 + 112 = 106608 B */
	expect_hopper(sp, "1x8x4096x64", "NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=128,KV_STAGES=3,"
			      "PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1", NULL, 106608);
}

/* Over the whole space for several shapes: every candidate the model accepts
 * fits sm_90 (227 KB, 1024 threads, exactly one producer and 1-3 consumer
 * warpgroups), smem_fits rejects some, and other archs accept nothing
 * (hopper_only). */
static void test_hopper_whole_space(void **state)
{
	static const char *const shapes[] = { "1x8x512x64", "4x16x2048x128", "1x1x8192x256",
					      "1x8x1x64", "2x20x1536x128" };
	static const char *const others[] = { "sm_80", "sm_89", "sm_100", "sm_120" };
	struct ft_space *sp = hopper_space();
	int p_cwg = ft_space_param(sp, "NUM_CONSUMER_WG");
	long long over = 0;

	(void)state;
	assert_true(p_cwg >= 0);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct ft_shape sh = { .dtype = FT_BF16, .causal = 1 };
		struct ft_enum *e = NULL;
		struct ft_candidate c;
		struct ft_err err = { 0 };
		long long accepted = 0;
		int rc;

		if (ft_shape_parse(shapes[i], &sh, &err) || ft_enum_open(&e, sp, &sh, arch("sm_90"), NULL, &err))
			fail_msg("%s: %s", shapes[i], err.msg);
		while ((rc = ft_enum_next(e, &c, &err)) == 1) {
			struct ft_trial t;
			int ok = model(sp, "sm_90", &c, &t);

			if (!ok) {
				over += strstr(t.reason, "constraint 'smem_fits' is false") != NULL;
				continue;
			}
			accepted++;
			assert_true(t.smem_model > 0 && t.smem_model <= SM90_OPTIN);
			assert_true(t.threads == 128 * (1 + c.values[p_cwg]));
			assert_true(t.threads <= 1024 && c.values[p_cwg] >= 1 && c.values[p_cwg] <= 3);
		}
		ft_enum_close(e);
		assert_int_equal(rc, 0);
		if (!accepted)
			fail_msg("%s: the Hopper space accepts nothing on sm_90", shapes[i]);
		for (size_t k = 0; k < sizeof(others) / sizeof(others[0]); k++) {
			struct ft_trial t;

			if (ft_enum_open(&e, sp, &sh, arch(others[k]), NULL, &err))
				fail_msg("%s: %s", others[k], err.msg);
			while ((rc = ft_enum_next(e, &c, &err)) == 1)
				if (model(sp, others[k], &c, &t))
					fail_msg("%s accepted %s on %s", shapes[i], t.config, others[k]);
				else if (!strstr(t.reason, "constraint 'hopper_only' is false"))
					fail_msg("%s on %s rejected for '%s', not hopper_only", t.config,
						 others[k], t.reason);
			ft_enum_close(e);
			assert_int_equal(rc, 0);
		}
	}
	/* the limit was exercised: smem_fits rejected some configs (over 227 KB) */
	assert_true(over > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_model_accepts_and_fills_trial, release_owned),
		cmocka_unit_test_teardown(test_model_constraint, release_owned),
		cmocka_unit_test_teardown(test_model_threads, release_owned),
		cmocka_unit_test_teardown(test_model_grid, release_owned),
		cmocka_unit_test_teardown(test_model_static_smem, release_owned),
		cmocka_unit_test_teardown(test_model_dynamic_smem, release_owned),
		cmocka_unit_test_teardown(test_compiled_clean, release_owned),
		cmocka_unit_test_teardown(test_compiled_spills, release_owned),
		cmocka_unit_test_teardown(test_compiled_wgmma_serialized, release_owned),
		cmocka_unit_test_teardown(test_compiled_registers, release_owned),
		cmocka_unit_test_teardown(test_compiled_register_granularity, release_owned),
		cmocka_unit_test_teardown(test_compiled_smem, release_owned),
		cmocka_unit_test_teardown(test_blocks_per_sm, release_owned),
		cmocka_unit_test_teardown(test_blocks_per_sm_unlaunchable, release_owned),
		cmocka_unit_test_teardown(test_blocks_per_sm_register_granularity, release_owned),
		cmocka_unit_test_teardown(test_blocks_per_sm_smem_granularity, release_owned),
		cmocka_unit_test_teardown(test_hopper_registers, release_owned),
		cmocka_unit_test_teardown(test_hopper_smem, release_owned),
		cmocka_unit_test_teardown(test_hopper_causal_mechanisms, release_owned),
		cmocka_unit_test_teardown(test_hopper_whole_space, release_owned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
