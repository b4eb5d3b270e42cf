/* test_pipeline.c - what the pipeline hands to NVRTC (ft_pipeline_compile_req
 * in pipeline.c), the strategy names it parses, and its GPU stage with
 * several GPUs.
 *
 * The compile request decides the CUBIN cache key, so these tests also check
 * the promise of cache.h: launch-time parameters and B, H, S never change the
 * key, compile-time parameters and the shape's D, causal flag and dtype do.
 *
 * Several GPUs: two fake workers of one model (fake_gpus.h: this binary run
 * again, speaking the real protocol) take the candidates of a real space compiled
 * by NVRTC (no GPU needed): both GPUs get work, every trial names the GPU that
 * ran it, and one GPU's hung candidate is that GPU's watchdog's business
 * while the other goes on.
 *
 * Racing through the real worker protocol (fake workers in MODE "race"): a
 * candidate cut after its quick pass is stored `cut`, never `ok`, and is
 * never the best; a wrong-but-fast one stays `wrong_result`; the final
 * re-measures the finalists with the full sample count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/cache.h"
#include "run/evaluate.h"
#include "fake_gpus.h"
#include "search/pipeline.h"

/* BLOCK_M (compile), NUM_SPLITS (launch), NUM_WARPS (compile), in that order:
 * a launch-time parameter between two compile-time ones. */
static struct ft_space *new_space(int with_combine)
{
	struct ft_space *sp = calloc(1, sizeof(*sp));

	assert_non_null(sp);
	snprintf(sp->name, sizeof(sp->name), "unit");
	snprintf(sp->template_path, sizeof(sp->template_path), "/templates/attention.cu");
	snprintf(sp->kernel, sizeof(sp->kernel), "attn");
	if (with_combine)
		snprintf(sp->combine_kernel, sizeof(sp->combine_kernel), "attn_combine");
	sp->smem_kind = FT_SMEM_DYNAMIC;
	sp->abi = 1;
	sp->family = &ft_family_mma;
	sp->nparams = 3;
	snprintf(sp->params[0].name, FT_NAME_MAX, "BLOCK_M");
	sp->params[0].kind = FT_PARAM_COMPILE;
	snprintf(sp->params[1].name, FT_NAME_MAX, "NUM_SPLITS");
	sp->params[1].kind = FT_PARAM_LAUNCH;
	snprintf(sp->params[2].name, FT_NAME_MAX, "NUM_WARPS");
	sp->params[2].kind = FT_PARAM_COMPILE;
	for (int i = 0; i < 3; i++)
		sp->params[i].nvalues = 1;
	return sp;
}

static void trial_of(struct ft_trial *t, long long block_m, long long splits, long long warps,
		     long long smem)
{
	ft_trial_init(t);
	t->values[0] = block_m;
	t->values[1] = splits;
	t->values[2] = warps;
	t->smem_model = smem;
	t->threads = warps * 32;
}

/* The value of define `name` in req; fails when it is absent or repeated. */
static long long define(const struct ft_compile_req *req, const char *name)
{
	int found = -1;

	for (int i = 0; i < req->ndefines; i++) {
		assert_non_null(req->define_names[i]);
		if (!strcmp(req->define_names[i], name)) {
			if (found >= 0)
				fail_msg("define %s given twice", name);
			found = i;
		}
	}
	if (found < 0)
		fail_msg("define %s missing", name);
	return req->define_values[found];
}

static int has_define(const struct ft_compile_req *req, const char *name)
{
	for (int i = 0; i < req->ndefines; i++)
		if (!strcmp(req->define_names[i], name))
			return 1;
	return 0;
}

static void test_compile_req_defines(void **state)
{
	struct ft_space *sp = new_space(1);
	const struct ft_arch *a = ft_arch_find("sm_90", NULL);
	struct ft_shape shape = { 2, 4, 1024, 128, 1, FT_BF16, 1024, 4, FT_LAYOUT_BHSD };
	struct ft_compile_req req;
	struct ft_trial t;

	trial_of(&t, 64, 4, 8, 40960);
	memset(&req, 0x5a, sizeof(req)); /* garbage the call must overwrite */
	ft_pipeline_compile_req(sp, a, &shape, &t, &req);

	assert_string_equal(req.source_path, "/templates/attention.cu");
	assert_string_equal(req.arch, "sm_90");
	/* compile-time parameters, in the space's order, with the trial's values */
	assert_true(define(&req, "BLOCK_M") == 64);
	assert_true(define(&req, "NUM_WARPS") == 8);
	assert_string_equal(req.define_names[0], "BLOCK_M");
	assert_string_equal(req.define_names[1], "NUM_WARPS");
	/* the shape and the model's shared memory */
	assert_true(define(&req, "HEAD_DIM") == 128);
	assert_true(define(&req, "IS_CAUSAL") == 1);
	assert_true(define(&req, "FATUNE_BF16") == 1);
	assert_true(define(&req, "FATUNE_SMEM_BYTES") == 40960);
	/* the ABI version the space declares picks the params struct */
	assert_true(define(&req, "FATUNE_ABI") == 1);
	assert_true(req.param_bytes == 72);
	/* nothing else: no launch-time parameter, no B, H or S */
	assert_false(has_define(&req, "NUM_SPLITS"));
	assert_int_equal(req.ndefines, 7);
	/* both entry points */
	assert_string_equal(req.kernels[0], "attn");
	assert_non_null(req.kernels[1]);
	assert_string_equal(req.kernels[1], "attn_combine");
	free(sp);
}

static void test_compile_req_fp16_no_combine(void **state)
{
	struct ft_space *sp = new_space(0);
	const struct ft_arch *a = ft_arch_find("sm_89", NULL);
	struct ft_shape shape = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_compile_req req;
	struct ft_trial t;

	trial_of(&t, 128, 1, 4, 16384);
	ft_pipeline_compile_req(sp, a, &shape, &t, &req);
	assert_string_equal(req.arch, "sm_89");
	assert_true(define(&req, "BLOCK_M") == 128);
	assert_true(define(&req, "NUM_WARPS") == 4);
	assert_true(define(&req, "HEAD_DIM") == 64);
	assert_true(define(&req, "IS_CAUSAL") == 0);
	assert_true(define(&req, "FATUNE_BF16") == 0);
	assert_true(define(&req, "FATUNE_SMEM_BYTES") == 16384);
	assert_string_equal(req.kernels[0], "attn");
	assert_null(req.kernels[1]);
	free(sp);
}

static void key_for(const struct ft_space *sp, const char *arch, const struct ft_shape *shape,
		    const struct ft_trial *t, char key[17])
{
	struct ft_compile_req req;

	ft_pipeline_compile_req(sp, ft_arch_find(arch, NULL), shape, t, &req);
	ft_compile_key(&req, "00112233445566ff", key);
}

static void test_compile_key_follows_compile_time_only(void **state)
{
	struct ft_space *sp = new_space(1);
	struct ft_shape shape = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_shape other;
	struct ft_trial t, u;
	char k0[17], k[17];

	trial_of(&t, 64, 1, 4, 16384);
	key_for(sp, "sm_90", &shape, &t, k0);

	/* a launch-time parameter: the same CUBIN */
	trial_of(&u, 64, 8, 4, 16384);
	key_for(sp, "sm_90", &shape, &u, k);
	assert_string_equal(k, k0);
	/* another B, H or S: the same CUBIN (a re-tune compiles nothing) */
	other = shape;
	other.b = 4;
	other.h = 16;
	other.s = 4096;
	key_for(sp, "sm_90", &other, &t, k);
	assert_string_equal(k, k0);

	/* a compile-time parameter */
	trial_of(&u, 128, 1, 4, 16384);
	key_for(sp, "sm_90", &shape, &u, k);
	assert_string_not_equal(k, k0);
	trial_of(&u, 64, 1, 8, 16384);
	key_for(sp, "sm_90", &shape, &u, k);
	assert_string_not_equal(k, k0);
	/* the shared memory the template sizes itself with */
	trial_of(&u, 64, 1, 4, 32768);
	key_for(sp, "sm_90", &shape, &u, k);
	assert_string_not_equal(k, k0);
	/* head dim, causal, dtype */
	other = shape;
	other.d = 128;
	key_for(sp, "sm_90", &other, &t, k);
	assert_string_not_equal(k, k0);
	other = shape;
	other.causal = 1;
	key_for(sp, "sm_90", &other, &t, k);
	assert_string_not_equal(k, k0);
	other = shape;
	other.dtype = FT_BF16;
	key_for(sp, "sm_90", &other, &t, k);
	assert_string_not_equal(k, k0);
	/* the arch */
	key_for(sp, "sm_89", &shape, &t, k);
	assert_string_not_equal(k, k0);
	free(sp);
}

/* A wgmma-family space compiles for sm_90a (wgmma and setmaxnreg are
 * arch-specific), so its CUBINs never share a key with the same request for
 * plain sm_90. */
static void test_compile_req_wgmma_targets_sm90a(void **state)
{
	struct ft_space *sp = new_space(1);
	struct ft_shape shape = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_compile_req req;
	struct ft_trial t;
	char k_mma[17], k_wgmma[17];

	trial_of(&t, 64, 1, 4, 16384);
	sp->abi = 2;
	key_for(sp, "sm_90", &shape, &t, k_mma);
	sp->family = &ft_family_wgmma;
	ft_pipeline_compile_req(sp, ft_arch_find("sm_90", NULL), &shape, &t, &req);
	assert_string_equal(req.arch, "sm_90a");
	assert_true(define(&req, "FATUNE_ABI") == 2);
	key_for(sp, "sm_90", &shape, &t, k_wgmma);
	assert_string_not_equal(k_wgmma, k_mma);
	free(sp);
}

/* Every compile-time parameter a space may have (FT_MAX_PARAMS) still fits
 * the request next to the five fixed defines and the most compile.defines. */
static void test_compile_req_many_params(void **state)
{
	struct ft_space *sp = calloc(1, sizeof(*sp));
	struct ft_shape shape = { 1, 8, 512, 64, 1, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_compile_req req;
	struct ft_trial t;

	assert_non_null(sp);
	snprintf(sp->template_path, sizeof(sp->template_path), "/t.cu");
	snprintf(sp->kernel, sizeof(sp->kernel), "k");
	sp->abi = 2;
	sp->family = &ft_family_wgmma;
	sp->nparams = FT_MAX_PARAMS;
	sp->ndefines = FT_MAX_SPACE_DEFINES;
	ft_trial_init(&t);
	for (int i = 0; i < FT_MAX_SPACE_DEFINES; i++) {
		snprintf(sp->define_names[i], FT_NAME_MAX, "X%d", i);
		t.define_values[i] = 7 * i;
	}
	for (int i = 0; i < FT_MAX_PARAMS; i++) {
		snprintf(sp->params[i].name, FT_NAME_MAX, "P%d", i);
		sp->params[i].kind = FT_PARAM_COMPILE;
		sp->params[i].nvalues = 1;
		t.values[i] = 100 + i;
	}
	t.smem_model = 0;
	ft_pipeline_compile_req(sp, ft_arch_find("sm_90", NULL), &shape, &t, &req);
	assert_int_equal(req.ndefines, FT_MAX_PARAMS + 5 + FT_MAX_SPACE_DEFINES);
	assert_true(req.ndefines <= FT_MAX_DEFINES);
	/* the family's NVRTC target and the v2 params struct */
	assert_string_equal(req.arch, "sm_90a");
	assert_true(req.param_bytes == 768);
	for (int i = 0; i < FT_MAX_SPACE_DEFINES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "X%d", i);
		assert_true(define(&req, name) == 7 * i);
	}
	for (int i = 0; i < FT_MAX_PARAMS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "P%d", i);
		assert_true(define(&req, name) == 100 + i);
	}
	assert_true(define(&req, "IS_CAUSAL") == 1);
	free(sp);
}

static void test_strategy_names(void **state)
{
	const struct ft_strategy *s;
	struct ft_err err;
	const struct ft_strategy *const all[] = { &ft_strategy_exhaustive, &ft_strategy_random,
					 &ft_strategy_model };

	for (int i = 0; i < 3; i++) {
		assert_int_equal(ft_strategy_parse(ft_strategy_name(all[i]), &s, &err), 0);
		assert_int_equal(s, all[i]);
	}
	assert_string_equal(ft_strategy_name(&ft_strategy_model), "model");
	assert_string_equal(ft_strategy_name(&ft_strategy_random), "random");
	assert_string_equal(ft_strategy_name(&ft_strategy_exhaustive), "exhaustive");
	ft_err_clear(&err);
	assert_int_equal(ft_strategy_parse("greedy", &s, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "'greedy'"));
}

/* tests/spaces/two_gpus.yaml (2 candidates) loaded into a new *sp with its
 * template hash, and a fresh CUBIN cache in cache (a mkdtemp template). */
static struct ft_space *two_gpus_space(char *cache, char hash[17])
{
	const char *src = getenv("FATUNE_SOURCE_DIR");
	char path[4096];
	struct ft_space *sp = calloc(1, sizeof(*sp));
	struct ft_err err = { 0 };

	assert_non_null(src);
	assert_non_null(sp);
	assert_non_null(mkdtemp(cache));
	setenv("FATUNE_CACHE_DIR", cache, 1);
	snprintf(path, sizeof(path), "%s/tests/spaces/two_gpus.yaml", src);
	assert_int_equal(ft_space_load(sp, path, &err), 0);
	assert_int_equal(ft_space_template_hash(sp, hash, &err), 0);
	return sp;
}

static void remove_cache(const char *cache)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", cache);
}

/* ---- a toy strategy: one definition and one registration -------------------- */

/* The enumeration order backwards: all a new strategy needs is this, a
 * struct ft_strategy and a line in strategy.c's table (here, as a program
 * that brings its own, ft_strategy_register). */
static void reverse_order(const struct ft_strategy_ctx *c, struct ft_trial **ts, long long n)
{
	(void)c;
	for (long long i = 0; i < n / 2; i++) {
		struct ft_trial *t = ts[i];
		ts[i] = ts[n - 1 - i];
		ts[n - 1 - i] = t;
	}
}

static const struct ft_strategy toy_reverse = {
	.name = "reverse",
	.summary = "the enumeration order backwards (a test's toy)",
	.feed = FT_FEED_ORDER,
	.order = reverse_order,
};

static int first_compiled(void *ctx, struct ft_trial *t)
{
	if (t->status == FT_ST_COMPILED && !((char *)ctx)[0])
		snprintf(ctx, FT_CONFIG_MAX, "%s", t->config);
	return 0;
}

/* tests/spaces/two_gpus.yaml (2 candidates) with a budget of 1 under strategy s:
 * the config of the one candidate compiled, into config. */
static void compile_one_of_two(const struct ft_strategy *s, char *config)
{
	char cache[] = "/tmp/fatune-test-toy.XXXXXX", hash[17];
	struct ft_space *sp = two_gpus_space(cache, hash);
	struct ft_shape shape = { 1, 2, 64, 64, 0, FT_FP16, 64, 2, FT_LAYOUT_BHSD };
	struct ft_pipeline_cfg cfg = { 0 };
	struct ft_pipeline_stats st;
	struct ft_err err = { 0 };
	int rc;

	cfg.sp = sp;
	cfg.arch = ft_arch_find("sm_89", &err);
	cfg.shape = &shape;
	cfg.template_hash = hash;
	cfg.jobs = 1;
	cfg.compile = 1;
	cfg.strategy = s;
	cfg.budget_evals = 1;
	cfg.emit = first_compiled;
	cfg.ctx = config;
	config[0] = '\0';
	rc = ft_pipeline_run(&cfg, &st, &err);
	remove_cache(cache);
	free(sp);
	if (rc)
		fail_msg("pipeline: %s", err.msg);
	assert_int_equal(st.selected, 1);
}

static void test_toy_strategy(void **state)
{
	const struct ft_strategy *s = NULL;
	struct ft_err err = { 0 };
	char first[FT_CONFIG_MAX], last[FT_CONFIG_MAX];

	(void)state;
	assert_int_equal(ft_strategy_register(&toy_reverse), 0);
	assert_int_equal(ft_strategy_register(&toy_reverse), -1);	/* a name is taken once */
	assert_int_equal(ft_strategy_parse("reverse", &s, &err), 0);
	assert_ptr_equal(s, &toy_reverse);
	assert_non_null(strstr(ft_strategy_names(), "transfer, reverse"));
	/* the pipeline follows it: with a budget of 1 it compiles the other candidate */
	compile_one_of_two(&ft_strategy_exhaustive, first);
	compile_one_of_two(s, last);
	assert_true(first[0] && last[0]);
	assert_string_not_equal(first, last);
}

/* ---- several GPUs: fake workers -------------------------------------------- */

struct seen {
	int n, on[2], ok, timeout;
	char device[2][96];
};

static int collect(void *ctx, struct ft_trial *t)
{
	struct seen *s = ctx;

	s->n++;
	if (t->device_index >= 0 && t->device_index < 2) {
		s->on[t->device_index]++;
		snprintf(s->device[t->device_index], sizeof(s->device[0]), "%s", t->device);
	}
	s->ok += t->status == FT_ST_OK;
	s->timeout += t->status == FT_ST_TIMEOUT;
	return 0;
}

/* Runs tests/spaces/two_gpus.yaml (2 candidates) on two fake GPUs. */
static void run_two_gpus(const char *mode, int timeout_ms, struct seen *seen)
{
	char cache[] = "/tmp/fatune-test-pipeline.XXXXXX", hash[17];
	struct ft_space *sp = two_gpus_space(cache, hash);
	struct ft_shape shape = { 1, 2, 64, 64, 0, FT_FP16, 64, 2, FT_LAYOUT_BHSD };
	struct ft_runner *w[2] = { NULL, NULL };
	struct ft_pipeline_cfg cfg = { 0 };
	struct ft_pipeline_stats st;
	struct ft_err err = { 0 };
	int rc;

	fake_gpus_use(mode);
	for (int i = 0; i < 2; i++) {
		struct ft_runner_cfg rcfg = { .device = i, .reference_path = "unused", .start_timeout_ms = 10000 };

		assert_int_equal(ft_runner_open(&w[i], "gpu", &rcfg, &err), 0);
		assert_int_equal(ft_runner_info(w[i])->dev.lim.ordinal, i);
		assert_int_equal(ft_runner_info(w[i])->device_index, i);
		assert_int_equal(ft_runner_info(w[i])->measured, 1);
	}
	memset(seen, 0, sizeof(*seen));
	cfg.sp = sp;
	cfg.arch = ft_arch_find("sm_90", &err);
	cfg.shape = &shape;
	cfg.template_hash = hash;
	cfg.jobs = 2;
	cfg.compile = 1;
	cfg.runners = w;
	cfg.nrunners = 2;
	cfg.timeout_ms = timeout_ms;
	cfg.job.seed = 1;
	cfg.job.tolerance = 2e-3;
	cfg.budget_evals = -1;
	cfg.emit = collect;
	cfg.ctx = seen;
	/* compile first (no GPU), so that both candidates reach the GPUs at once,
	 * however loaded the machine is: FAKE_JOB_MS apart is then impossible */
	cfg.nrunners = 0;
	rc = ft_pipeline_run(&cfg, &st, &err);
	memset(seen, 0, sizeof(*seen));
	cfg.nrunners = 2;
	if (!rc)
		rc = ft_pipeline_run(&cfg, &st, &err);
	if (!rc)
		assert_int_equal(st.cache_hits, 2);
	for (int i = 0; i < 2; i++)
		ft_runner_close(w[i]);
	fake_gpus_use(NULL);
	remove_cache(cache);
	free(sp);
	if (rc)
		fail_msg("pipeline: %s", err.msg);
	assert_int_equal(st.evaluated, 2);
}

/* Two GPUs of one model: the two candidates run one on each (a GPU busy
 * with one leaves the next to the idle one), each trial names its GPU. */
static void test_two_gpus_share_the_candidates(void **state)
{
	struct seen s;

	(void)state;
	run_two_gpus("ok", 4 * FAKE_JOB_MS, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ok, 2);
	assert_int_equal(s.on[0], 1);
	assert_int_equal(s.on[1], 1);
	assert_string_equal(s.device[0], "fake H200");
	assert_string_equal(s.device[1], "fake H200");
}

/* GPU 0 hangs on its candidate: its watchdog makes it a timeout (on GPU
 * 0), while GPU 1 verifies and times the other. */
static void test_one_gpu_hangs_the_other_goes_on(void **state)
{
	struct seen s;

	(void)state;
	run_two_gpus("hang0", 2 * FAKE_JOB_MS, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.timeout, 1);
	assert_int_equal(s.ok, 1);
	assert_int_equal(s.on[0], 1);
	assert_int_equal(s.on[1], 1);
}

/* ---- racing through fake workers -------------------------------------------- */

struct raced {
	struct ft_trial t[8], fin[8];
	int n, nfin;
	struct ft_pipeline_stats st;
};

static int keep(void *ctx, struct ft_trial *t)
{
	struct raced *r = ctx;

	if (r->n < 8)
		r->t[r->n++] = *t;
	return 0;
}

static int keep_final(void *ctx, struct ft_trial *t)
{
	struct raced *r = ctx;

	if (r->nfin < 8)
		r->fin[r->nfin++] = *t;
	return 0;
}

/* tests/spaces/two_gpus.yaml on one fake GPU with racing on; $FAKE_RACE is
 * `map` (the two candidates have grid[0] 4 and 2). */
static void run_race(const char *map, struct raced *out)
{
	char cache[] = "/tmp/fatune-test-race.XXXXXX", hash[17];
	struct ft_space *sp = two_gpus_space(cache, hash);
	struct ft_shape shape = { 1, 2, 64, 64, 0, FT_FP16, 64, 2, FT_LAYOUT_BHSD };
	struct ft_runner *w = NULL;
	struct ft_runner_cfg rcfg = { .device = 0, .reference_path = "unused", .start_timeout_ms = 10000 };
	struct ft_pipeline_cfg cfg = { 0 };
	struct ft_err err = { 0 };
	int rc;

	setenv("FAKE_RACE", map, 1);
	fake_gpus_use("race");
	assert_int_equal(ft_runner_open(&w, "gpu", &rcfg, &err), 0);
	memset(out, 0, sizeof(*out));
	cfg.sp = sp;
	cfg.arch = ft_arch_find("sm_90", &err);
	cfg.shape = &shape;
	cfg.template_hash = hash;
	cfg.jobs = 1;
	cfg.compile = 1;
	cfg.runners = &w;
	cfg.nrunners = 1;
	cfg.timeout_ms = 10000;
	ft_job_timing_defaults(&cfg.job);
	cfg.job.samples = 15;
	cfg.job.seed = 1;
	cfg.job.tolerance = 2e-3;
	cfg.budget_evals = -1;
	ft_race_defaults(&cfg.race);
	cfg.emit = keep;
	cfg.emit_final = keep_final;
	cfg.ctx = out;
	rc = ft_pipeline_run(&cfg, &out->st, &err);
	ft_runner_close(w);
	fake_gpus_use(NULL);
	unsetenv("FAKE_RACE");
	remove_cache(cache);
	free(sp);
	if (rc)
		fail_msg("pipeline: %s", err.msg);
	assert_int_equal(out->n, 2);
}

/* What holds in every race: a cut trial has the quick pass's samples and is
 * slower than the line; an ok one ended stable (its samples are all alike)
 * after the fewest the rule allows, not the search's 15; the fastest ok trial
 * (emitted or final) is never a cut or wrong one. Returns the cuts. */
static int race_invariants(const struct raced *r, const char *fast_config)
{
	const struct ft_trial *best = NULL;
	int cuts = 0;

	for (int i = 0; i < r->n; i++) {
		const struct ft_trial *t = &r->t[i];

		if (t->status == FT_ST_CUT) {
			cuts++;
			assert_int_equal(t->samples, FT_RACE_QUICK_SAMPLES);
			assert_non_null(strstr(t->reason, "raced out"));
		} else if (t->status == FT_ST_OK) {
			assert_int_equal(t->samples, FT_SAMPLES_STABLE_MIN);
		}
		if (t->status == FT_ST_OK && (!best || t->t_median_us < best->t_median_us))
			best = t;
	}
	for (int i = 0; i < r->nfin; i++) {
		assert_true(!strncmp(r->fin[i].reason, FT_RACE_FINAL_REASON, strlen(FT_RACE_FINAL_REASON)));
		/* 3 rounds of 5, pooled; or the first round's 5 when it left the final
		 * behind: then it is cut (its time is of round 1 only) */
		if (strstr(r->fin[i].reason, "left over")) {
			assert_int_equal(r->fin[i].status, FT_ST_CUT);
			assert_int_equal(r->fin[i].samples, 5);
		} else {
			assert_int_equal(r->fin[i].status, FT_ST_OK);
			assert_int_equal(r->fin[i].samples, 15);
		}
		for (int k = 0; k < r->n; k++)
			if (!strcmp(r->t[k].config, r->fin[i].config))
				assert_int_equal(r->t[k].status, FT_ST_OK); /* only ok ones are finalists */
	}
	assert_non_null(best);
	if (fast_config)
		assert_string_equal(best->config, fast_config);
	return cuts;
}

static const char *config_of(const struct raced *r, long long grid0)
{
	for (int i = 0; i < r->n; i++)
		if (r->t[i].grid[0] == grid0)
			return r->t[i].config;
	fail_msg("no trial of grid %lld", grid0);
	return NULL;
}

/* One fast and one 3x slower candidate, both ways round: whichever order the
 * model gives, one run cuts the slow one (it came second) and the other
 * measures both in full and runs the final over the two. */
static void test_race_cuts_the_slow(void **state)
{
	struct raced a, b;
	int cuts;

	(void)state;
	run_race("4=10,2=30", &a);
	run_race("4=30,2=10", &b);
	cuts = race_invariants(&a, config_of(&a, 4)) + race_invariants(&b, config_of(&b, 2));
	assert_int_equal(cuts, 1);
	assert_int_equal(a.nfin + b.nfin, 2); /* the run without a cut had 2 finalists */
	assert_int_equal(a.st.race.cut + b.st.race.cut, 1);
	/* the 3x slower finalist left the final after its first round */
	assert_int_equal(a.st.race.final_jobs + b.st.race.final_jobs, 2 + (FT_RACE_ROUNDS - 1));
	/* the final was to be one sweep (the default), but these fake workers
	 * take none: it failed and the rounds timed the finalists */
	assert_int_equal(a.st.race.sweeps_failed + b.st.race.sweeps_failed, 1);
	assert_int_equal(a.st.race.swept + b.st.race.swept, 0);
	for (int i = 0; i < a.nfin + b.nfin; i++) {
		const struct ft_trial *t = i < a.nfin ? &a.fin[i] : &b.fin[i - a.nfin];
		assert_true((t->t_min_us == 30.0) == (strstr(t->reason, "left over") != NULL));
	}
	for (int i = 0; i < 2; i++) {
		const struct raced *r = i ? &b : &a;
		for (int k = 0; k < r->n; k++)
			if (r->t[k].status == FT_ST_CUT)
				assert_true(r->t[k].t_min_us == 30.0);
		assert_true(r->st.verify_ms > 0 && r->st.timing_ms > 0);
		assert_true(r->st.gpu_busy_ms > 0);
	}
}

/* Wrong but fast, both ways round: wrong_result, never cut, ok or best. */
static void test_race_wrong_but_fast(void **state)
{
	struct raced a, b;

	(void)state;
	run_race("4=1w,2=10", &a);
	run_race("4=10,2=1w", &b);
	assert_int_equal(race_invariants(&a, config_of(&a, 2)), 0);
	assert_int_equal(race_invariants(&b, config_of(&b, 4)), 0);
	for (int i = 0; i < 2; i++) {
		const struct raced *r = i ? &b : &a;
		int wrong = 0;
		for (int k = 0; k < r->n; k++)
			wrong += r->t[k].status == FT_ST_WRONG_RESULT;
		assert_int_equal(wrong, 1);
		assert_int_equal(r->nfin, 0); /* one finalist: nothing to compare */
	}
}

int main(int argc, char **argv)
{
	int rc = fake_gpus_main(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compile_req_defines),
		cmocka_unit_test(test_compile_req_fp16_no_combine),
		cmocka_unit_test(test_compile_key_follows_compile_time_only),
		cmocka_unit_test(test_compile_req_many_params),
		cmocka_unit_test(test_compile_req_wgmma_targets_sm90a),
		cmocka_unit_test(test_strategy_names),
		cmocka_unit_test(test_toy_strategy),
		cmocka_unit_test(test_two_gpus_share_the_candidates),
		cmocka_unit_test(test_one_gpu_hangs_the_other_goes_on),
		cmocka_unit_test(test_race_cuts_the_slow),
		cmocka_unit_test(test_race_wrong_but_fast),
	};

	if (rc >= 0)
		return rc;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
