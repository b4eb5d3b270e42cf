/* test_strategy.c - candidate orderings (strategy.c): the seeded random
 * shuffle, exhaustive order, and the model's ranking by predicted time, on
 * trials whose launch geometry is set by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy.h"

#define KB 1024
#define H100_SMS 132	/* SMs of an H100 SXM / H200, as in FACTS.md */

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

static struct ft_space *new_space(void)
{
	struct ft_space *sp = own(calloc(1, sizeof(*sp)));
	snprintf(sp->name, sizeof(sp->name), "unit");
	sp->nparams = 3;
	snprintf(sp->params[0].name, FT_NAME_MAX, "BLOCK_M");
	sp->params[0].kind = FT_PARAM_COMPILE;
	snprintf(sp->params[1].name, FT_NAME_MAX, "NUM_WARPS");
	sp->params[1].kind = FT_PARAM_COMPILE;
	snprintf(sp->params[2].name, FT_NAME_MAX, "NUM_SPLITS");
	sp->params[2].kind = FT_PARAM_LAUNCH;
	for (int i = 0; i < 3; i++)
		sp->params[i].nvalues = 1;
	return sp;
}

static const struct ft_shape mission = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };

/* A trial with the given geometry; index i is kept in values[0] and config. */
static void make_trial(struct ft_trial *t, int i, long long threads, long long grid_x,
		       long long grid_y, long long smem, long long splits)
{
	ft_trial_init(t);
	snprintf(t->config, sizeof(t->config), "T%d", i);
	t->values[0] = i;
	t->values[1] = threads / 32;
	t->values[2] = splits;
	t->threads = threads;
	t->grid[0] = grid_x;
	t->grid[1] = grid_y;
	t->grid[2] = 1;
	t->smem_model = smem;
	t->status = FT_ST_COMPILED;
}

static struct ft_trial *make_many(int n)
{
	struct ft_trial *ts = own(calloc((size_t)n, sizeof(*ts)));

	for (int i = 0; i < n; i++)
		make_trial(&ts[i], i, 32 * (1 + i % 8), 1 + i, 8, (i % 5) * 8 * KB, 1);
	return ts;
}

static void pointers(struct ft_trial *ts, int n, struct ft_trial **p)
{
	for (int i = 0; i < n; i++)
		p[i] = &ts[i];
}

static void order(const struct ft_strategy *s, unsigned long long seed, const struct ft_space *sp,
		  struct ft_trial **p, int n)
{
	ft_strategy_order(s, seed, sp, ft_arch_find("sm_90", NULL), &mission, H100_SMS, p, n);
}

/* p[0..n) holds each of ts[0..n) exactly once. */
static void assert_permutation(struct ft_trial *ts, struct ft_trial **p, int n)
{
	char seen[256] = { 0 };

	assert_true(n <= (int)sizeof(seen));
	for (int i = 0; i < n; i++) {
		long long k = p[i] - ts;

		assert_true(k >= 0 && k < n);
		if (seen[k])
			fail_msg("trial %lld appears twice", k);
		seen[k] = 1;
	}
}

static int same_order(struct ft_trial **a, struct ft_trial **b, int n)
{
	return !memcmp(a, b, (size_t)n * sizeof(*a));
}

/* ---- random -------------------------------------------------------------- */

static void test_random_is_seeded_permutation(void **state)
{
	enum { N = 100, SEEDS = 8 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = make_many(N);
	struct ft_trial *p[SEEDS][N], *again[N], *ident[N];

	pointers(ts, N, ident);
	for (int s = 0; s < SEEDS; s++) {
		pointers(ts, N, p[s]);
		order(&ft_strategy_random, (unsigned long long)s * 7919 + 1, sp, p[s], N);
		assert_permutation(ts, p[s], N);
		/* the chance that 100 shuffled items stay in place is 1/100! */
		assert_false(same_order(p[s], ident, N));

		/* the same seed gives the same order */
		pointers(ts, N, again);
		order(&ft_strategy_random, (unsigned long long)s * 7919 + 1, sp, again, N);
		assert_true(same_order(p[s], again, N));
	}
	/* other seeds give other orders */
	for (int s = 0; s < SEEDS; s++)
		for (int r = s + 1; r < SEEDS; r++)
			assert_false(same_order(p[s], p[r], N));
	/* seed 0 is a seed like any other */
	pointers(ts, N, again);
	order(&ft_strategy_random, 0, sp, again, N);
	assert_permutation(ts, again, N);
	assert_false(same_order(again, ident, N));
}

/* Every ordering of 4 trials is about equally likely over many seeds. With
 * 24000 shuffles each of the 24 orders is expected 1000 times (standard
 * deviation about 31); 800..1200 is more than 6 deviations wide, so only a
 * biased shuffle (e.g. swapping with any index, not just 0..i) fails. */
static void test_random_is_unbiased(void **state)
{
	enum { N = 4, RUNS = 24000 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = make_many(N);
	int count[256] = { 0 };

	for (int s = 0; s < RUNS; s++) {
		struct ft_trial *p[N];
		int code = 0;

		pointers(ts, N, p);
		order(&ft_strategy_random, (unsigned long long)s, sp, p, N);
		for (int i = 0; i < N; i++)
			code = code * 4 + (int)(p[i] - ts);
		count[code]++;
	}
	{
		int distinct = 0;

		for (int c = 0; c < 256; c++) {
			if (!count[c])
				continue;
			distinct++;
			if (count[c] < 800 || count[c] > 1200)
				fail_msg("order %d came %d times in %d shuffles, expected about 1000", c,
					 count[c], RUNS);
		}
		assert_int_equal(distinct, 24);
	}
}

static void test_small_lists(void **state)
{
	struct ft_space *sp = new_space();
	struct ft_trial *ts = make_many(2);
	struct ft_trial *p[2];
	const struct ft_strategy *all[] = { &ft_strategy_exhaustive, &ft_strategy_random, &ft_strategy_model };

	for (int s = 0; s < 3; s++) {
		order(all[s], 5, sp, p, 0);
		pointers(ts, 1, p);
		order(all[s], 5, sp, p, 1);
		assert_ptr_equal(p[0], &ts[0]);
		pointers(ts, 2, p);
		order(all[s], 5, sp, p, 2);
		assert_permutation(ts, p, 2);
	}
}

/* ---- exhaustive ---------------------------------------------------------- */

static void test_exhaustive_keeps_order(void **state)
{
	enum { N = 50 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = make_many(N);
	struct ft_trial *p[N], *ident[N];

	pointers(ts, N, ident);
	for (unsigned long long seed = 0; seed < 5; seed++) {
		pointers(ts, N, p);
		order(&ft_strategy_exhaustive, seed, sp, p, N);
		assert_true(same_order(p, ident, N));
	}
	/* a list that arrives in another order stays in that order */
	for (int i = 0; i < N; i++)
		p[i] = &ts[N - 1 - i];
	order(&ft_strategy_exhaustive, 1, sp, p, N);
	for (int i = 0; i < N; i++)
		assert_ptr_equal(p[i], &ts[N - 1 - i]);
}

/* ---- model --------------------------------------------------------------- */

static double predict(const struct ft_space *sp, const struct ft_trial *t)
{
	return ft_strategy_predict(sp, ft_arch_find("sm_90", NULL), &mission, H100_SMS, t);
}

static void test_model_sorts_by_prediction(void **state)
{
	enum { N = 40 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = own(calloc(N, sizeof(*ts)));
	struct ft_trial *p[N];
	int distinct = 0;

	/* a spread of geometries: block sizes 64..512 threads, 1..264 blocks,
	 * 0..96 KB of shared memory, with and without splits */
	for (int i = 0; i < N; i++)
		make_trial(&ts[i], i, 64 << (i % 4), 1 + (i * 37) % 33, 1 + i % 8, (i % 7) * 16 * KB,
			   1 + (i % 3 == 0) * (i % 4));
	/* hand them over worst-predicted first, so sorting has work to do */
	pointers(ts, N, p);
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			if (predict(sp, p[j]) > predict(sp, p[i])) {
				struct ft_trial *tmp = p[i];
				p[i] = p[j];
				p[j] = tmp;
			}
	order(&ft_strategy_model, 0, sp, p, N);
	assert_permutation(ts, p, N);
	for (int i = 1; i < N; i++) {
		double a = predict(sp, p[i - 1]), b = predict(sp, p[i]);

		if (a > b)
			fail_msg("position %d predicts %g after %g", i, b, a);
		distinct += a < b;
	}
	/* the geometries differ enough that the model tells them apart */
	assert_true(distinct >= 5);
}

static void test_model_ties_keep_enumeration_order(void **state)
{
	enum { N = 12 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = own(calloc(N, sizeof(*ts)));
	struct ft_trial *p[N];

	/* identical geometry: the same prediction for all */
	for (int i = 0; i < N; i++)
		make_trial(&ts[i], i, 128, 16, 8, 16 * KB, 1);
	pointers(ts, N, p);
	order(&ft_strategy_model, 99, sp, p, N);
	for (int i = 0; i < N; i++)
		assert_ptr_equal(p[i], &ts[i]);
}

static void test_model_unrunnable_last(void **state)
{
	struct ft_space *sp = new_space();
	struct ft_trial ts[3];
	struct ft_trial *p[3];

	/* more shared memory than an SM has: cannot run, predicted infinitely slow */
	make_trial(&ts[0], 0, 128, 16, 8, 240 * KB, 1);
	make_trial(&ts[1], 1, 128, 16, 8, 16 * KB, 1);
	make_trial(&ts[2], 2, 128, 0, 8, 16 * KB, 1);
	assert_true(isinf(predict(sp, &ts[0])));
	assert_true(isinf(predict(sp, &ts[2])));
	assert_true(isfinite(predict(sp, &ts[1])) && predict(sp, &ts[1]) > 0);
	pointers(ts, 3, p);
	order(&ft_strategy_model, 0, sp, p, 3);
	assert_ptr_equal(p[0], &ts[1]);
	/* an unknown SM count still predicts */
	assert_true(isfinite(ft_strategy_predict(sp, ft_arch_find("sm_90", NULL), &mission, 0, &ts[1])));
}

/* A second wave costs: 133 blocks that fit one per SM take two rounds on 132
 * SMs, 132 blocks one (the same total work). */
static void test_model_penalises_a_partial_wave(void **state)
{
	struct ft_space *sp = new_space();
	struct ft_trial one_wave, two_waves;

	/* 200 KB of shared memory: one block per SM */
	make_trial(&one_wave, 0, 256, 132, 1, 200 * KB, 1);
	make_trial(&two_waves, 1, 256, 133, 1, 200 * KB, 1);
	assert_true(predict(sp, &one_wave) < predict(sp, &two_waves));
}

/* A split adds a combine pass: the same geometry with 4 splits predicts
 * slower than with none. */
static void test_model_split_costs(void **state)
{
	struct ft_space *sp = new_space();
	struct ft_trial plain, split;

	make_trial(&plain, 0, 128, 64, 8, 16 * KB, 1);
	make_trial(&split, 1, 128, 64, 8, 16 * KB, 4);
	assert_true(predict(sp, &plain) < predict(sp, &split));
}

/* FlashAttention-3's split rule (FACTS.md): no split for a grid that fills
 * 0.8 of the SMs or a row of <= 4 KV tiles; otherwise the smallest count
 * within 85% of the best wave efficiency. The mma space's counts: a decode
 * step of 8 row blocks (B 1 x 8 KV heads) on 132 SMs: 16 splits make 128
 * blocks (0.97 of a wave), and 32, 48, 64 are no better; with 40 blocks,
 * 3 splits make 120 (0.91) where 16 fill 0.97 of 5 waves (0.85 x 0.97 =
 * 0.82: 3 qualifies). Only counts up to the KV tiles count. */
static void test_split_heuristic(void **state)
{
	static const long long counts[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64 };
	const int n = (int)(sizeof(counts) / sizeof(counts[0]));

	(void)state;
	assert_int_equal(ft_split_heuristic(8, 128, 132, counts, n), 16);
	assert_int_equal(ft_split_heuristic(40, 128, 132, counts, n), 3);
	assert_int_equal(ft_split_heuristic(106, 128, 132, counts, n), 1);	/* >= 0.8 x 132 */
	assert_int_equal(ft_split_heuristic(8, 4, 132, counts, n), 1);	/* 4 KV tiles */
	assert_int_equal(ft_split_heuristic(8, 12, 132, counts, n), 12);	/* 16 > 12 tiles */
	assert_int_equal(ft_split_heuristic(8, 128, 132, counts, 1), 1);	/* only 1 offered */
	assert_int_equal(ft_split_heuristic(8, 128, 0, counts, n), 1);	/* unknown SMs */
}

/* The model charges nothing for the rule's count: among a decode step's
 * candidates that differ only in splits, 16 of 8 row blocks goes first. */
static void test_model_prefers_split_rule(void **state)
{
	struct ft_space *sp = new_space();
	static const struct ft_shape decode = { 1, 32, 1, 128, 0, FT_FP16, 8192, 8, FT_LAYOUT_BHSD };
	static const long long counts[] = { 1, 2, 4, 8, 16, 32, 64 };
	struct ft_trial ts[7], *p[7];

	sp->params[2].nvalues = 7;
	memcpy(sp->params[2].values, counts, sizeof(counts));
	for (int i = 0; i < 7; i++) {
		make_trial(&ts[i], i, 32, counts[i], 8, 16 * KB, counts[i]);
		p[i] = &ts[i];
	}
	ft_strategy_order(ft_strategy_find("model"), 1, sp, ft_arch_find("sm_90", NULL), &decode, H100_SMS, p, 7);
	assert_int_equal(p[0]->values[2], 16);
}

/* FACTS.md: the mission shape 1x8x512x64 with 128-row tiles gives only 32
 * blocks on a 132-SM GPU; smaller tiles are what fill it. With the same
 * threads and shared memory per block, 128 blocks of a quarter of the work
 * each finish in about a quarter of the time of 32 blocks (one wave each, no
 * SM runs more than one block), so the model must rank them first. */
static void test_model_prefers_filling_the_gpu(void **state)
{
	struct ft_space *sp = new_space();
	struct ft_trial big_tiles, small_tiles;
	struct ft_trial *p[2];

	make_trial(&big_tiles, 0, 128, 512 / 128, 8, 16 * KB, 1);	/* 32 blocks */
	make_trial(&small_tiles, 1, 128, 512 / 32, 8, 16 * KB, 1);	/* 128 blocks */
	if (!(predict(sp, &small_tiles) < predict(sp, &big_tiles)))
		fail_msg("32 blocks on 132 SMs predict %g, 128 blocks %g: a grid that leaves 100 SMs "
			 "idle must predict slower (strategy.c: the time is scaled by resident/sms, "
			 "not by the blocks each busy SM runs)",
			 predict(sp, &big_tiles), predict(sp, &small_tiles));
	p[0] = &big_tiles;
	p[1] = &small_tiles;
	order(&ft_strategy_model, 0, sp, p, 2);
	assert_ptr_equal(p[0], &small_tiles);
}

/* ---- transfer: seeds and the early stop --------------------------------- */

static void observe_ok(struct ft_guide *g, struct ft_trial *t, double us)
{
	t->status = FT_ST_OK;
	t->t_median_us = us;
	ft_guide_observe(g, t);
}

/* Seeds come first, in the order given, each once, unknown ones ignored;
 * with seeds there are no random picks: the local search starts at once. */
static void test_guide_seeds_first(void **state)
{
	enum { N = 20 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = make_many(N);
	struct ft_trial *p[N];
	const char *seeds[] = { "T7", "T3", "nowhere", "T7" };
	struct ft_guide *g;

	pointers(ts, N, p);
	g = ft_guide_new(sp, p, N, 42);
	assert_non_null(g);
	assert_int_equal(ft_guide_seed(g, p, seeds, 4), 2);
	assert_int_equal(ft_guide_next(g), 7);
	assert_int_equal(ft_guide_next(g), 3);
	/* no ok result yet: the model's order (here the list's), skipping the seeds */
	assert_int_equal(ft_guide_next(g), 0);
	assert_int_equal(ft_guide_next(g), 1);
	ft_guide_free(g);
}

/* sp's candidates ts[0..6) (p: pointers to them), in this order: BLOCK_M x
 * NUM_WARPS = (32,4) (32,8) (64,4) (64,8) (128,4) (128,8), NUM_SPLITS 1 (the
 * space lists 1 and 2) */
static void six_candidates(struct ft_space *sp, struct ft_trial *ts, struct ft_trial **p)
{
	static const long long bm[] = { 32, 64, 128 }, warps[] = { 4, 8 };

	sp->params[0].nvalues = 3;
	memcpy(sp->params[0].values, bm, sizeof(bm));
	sp->params[1].nvalues = 2;
	memcpy(sp->params[1].values, warps, sizeof(warps));
	sp->params[2].nvalues = 2;
	sp->params[2].values[0] = 1;
	sp->params[2].values[1] = 2;
	for (int i = 0; i < 6; i++) {
		make_trial(&ts[i], i, 32 * warps[i % 2], 1, 1, 0, 1);
		ts[i].values[0] = bm[i / 2];
		ft_config_format(sp, ts[i].values, ts[i].config, sizeof(ts[i].config));
		p[i] = &ts[i];
	}
}

/* A seed that is no candidate's config (a neighbour's best holding a value
 * this shape derives otherwise, or a value the space does not list) starts
 * the search at its nearest candidate; one naming no parameter matches none. */
static void test_guide_seed_nearest(void **state)
{
	struct ft_space *sp = new_space();
	struct ft_trial ts[6], *p[6];
	const char *seeds[] = { "BLOCK_M=128,NUM_WARPS=8,NUM_SPLITS=2", "nowhere",
				"BLOCK_M=100,NUM_WARPS=4", "BLOCK_M=64,NUM_WARPS=4,NUM_SPLITS=1" };
	struct ft_guide *g;

	(void)state;
	six_candidates(sp, ts, p);
	g = ft_guide_new(sp, p, 6, 3);
	assert_non_null(g);
	assert_int_equal(ft_guide_seed(g, p, seeds, 4), 3);
	assert_int_equal(ft_guide_next(g), 5);	/* BLOCK_M=128,NUM_WARPS=8: only the split differs */
	assert_int_equal(ft_guide_next(g), 4);	/* 100 is nearest 128; NUM_WARPS=4 */
	assert_int_equal(ft_guide_next(g), 2);	/* an exact config */
	ft_guide_free(g);
}

/* The early stop: `patience` results in a row without a gain of more than
 * `gain` end the search; a real gain restarts the count; no patience, no stop. */
static void test_guide_patience(void **state)
{
	enum { N = 20 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = make_many(N);
	struct ft_trial *p[N];
	const char *seeds[] = { "T5" };
	struct ft_guide *g;
	long long k;

	pointers(ts, N, p);
	g = ft_guide_new(sp, p, N, 1);
	assert_int_equal(ft_guide_seed(g, p, seeds, 1), 1);
	ft_guide_patience(g, 3, 0.01);
	assert_int_equal(k = ft_guide_next(g), 5);
	observe_ok(g, &ts[k], 10.0);
	k = ft_guide_next(g);
	observe_ok(g, &ts[k], 9.95);		/* 0.5% faster: not a gain */
	k = ft_guide_next(g);
	observe_ok(g, &ts[k], 12.0);
	assert_true((k = ft_guide_next(g)) >= 0);
	observe_ok(g, &ts[k], 9.0);		/* 10% faster: the count restarts */
	for (int i = 0; i < 3; i++) {
		assert_true((k = ft_guide_next(g)) >= 0);
		observe_ok(g, &ts[k], 11.0);
	}
	assert_int_equal(ft_guide_next(g), -1);
	ft_guide_patience(g, 0, 0.01);
	assert_true(ft_guide_next(g) >= 0);
	ft_guide_free(g);
}

/* An incumbent (another space's best for the unit): a result counts as a
 * gain only when it beats it by more than `gain`, so a search that cannot
 * beat it stops after `patience` results, where without one its first
 * result would be a gain and it would take one more; one that beats it
 * restarts the count as before. */
static void test_guide_incumbent(void **state)
{
	enum { N = 20 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = make_many(N);
	struct ft_trial *p[N];
	const char *seeds[] = { "T5" };
	long long k;

	(void)state;
	pointers(ts, N, p);
	for (int beat = 0; beat < 2; beat++) {
		struct ft_guide *g = ft_guide_new(sp, p, N, 1);

		assert_int_equal(ft_guide_seed(g, p, seeds, 1), 1);
		ft_guide_patience(g, 3, 0.01);
		ft_guide_incumbent(g, 8.0, 0);
		ft_guide_incumbent(g, 0, 0);		/* none: no change */
		assert_int_equal(k = ft_guide_next(g), 5);
		observe_ok(g, &ts[k], 10.0);
		assert_true((k = ft_guide_next(g)) >= 0);
		observe_ok(g, &ts[k], 9.0);
		assert_true((k = ft_guide_next(g)) >= 0);
		observe_ok(g, &ts[k], beat ? 7.5 : 8.5);	/* 7.5: 6% under the incumbent, a gain */
		if (!beat) {
			assert_int_equal(ft_guide_next(g), -1);
			assert_true(ft_guide_stopped(g));
		} else {
			for (int i = 0; i < 3; i++) {
				assert_true((k = ft_guide_next(g)) >= 0);
				observe_ok(g, &ts[k], 11.0);
			}
			assert_int_equal(ft_guide_next(g), -1);
		}
		ft_guide_free(g);
	}
}

/* Behind the incumbent, a shorter patience: with patience 5 and 2 behind it,
 * a search that has not beaten the incumbent by more than the gain stops
 * after 2 results (its own gains do not count); one that beats it goes on
 * with the usual 5 after that gain. */
static void test_guide_behind(void **state)
{
	enum { N = 20 };
	struct ft_space *sp = new_space();
	struct ft_trial *ts = make_many(N);
	struct ft_trial *p[N];
	long long k;

	(void)state;
	pointers(ts, N, p);
	for (int beat = 0; beat < 2; beat++) {
		struct ft_guide *g = ft_guide_new(sp, p, N, 1);
		int after = 0;

		ft_guide_patience(g, 5, 0.01);
		ft_guide_incumbent(g, 8.0, 2);
		assert_true((k = ft_guide_next(g)) >= 0);
		observe_ok(g, &ts[k], 12.0);
		assert_true((k = ft_guide_next(g)) >= 0);
		observe_ok(g, &ts[k], beat ? 7.0 : 9.0);	/* 9.0: its own gain, still behind */
		while ((k = ft_guide_next(g)) >= 0) {
			observe_ok(g, &ts[k], 11.0);
			after++;
		}
		/* behind: stopped at 2 results; ahead: 5 more after its gain */
		assert_int_equal(after, beat ? 5 : 0);
		assert_true(ft_guide_stopped(g));
		ft_guide_free(g);
	}
}

/* Leaning on the first seed (a prefetch, which gets no timings): after the
 * seeds, the candidates nearest the first seed (ties to the list's order)
 * instead of the model's order; once an ok result arrives, the best leads as
 * before; without the lean, the model's order. */
static void test_guide_lean(void **state)
{
	static const long long leaned[] = { 5, 3, 4, 1, 2, 0 }, plain[] = { 5, 0, 1, 2, 3, 4 };
	struct ft_space *sp = new_space();
	struct ft_trial ts[6], *p[6];
	const char *seeds[1];
	struct ft_guide *g;

	(void)state;
	six_candidates(sp, ts, p);
	seeds[0] = ts[5].config;
	for (int lean = 0; lean < 2; lean++) {
		g = ft_guide_new(sp, p, 6, 7);
		assert_non_null(g);
		assert_int_equal(ft_guide_seed(g, p, seeds, 1), 1);
		if (lean)
			ft_guide_lean(g);
		for (int i = 0; i < 6; i++)
			assert_int_equal(ft_guide_next(g), (lean ? leaned : plain)[i]);
		assert_int_equal(ft_guide_next(g), -1);
		ft_guide_free(g);
	}
	/* an ok result takes over from the seed: nearest (64,8) is (32,8), where
	 * the seed's next would be (128,4) */
	g = ft_guide_new(sp, p, 6, 7);
	assert_int_equal(ft_guide_seed(g, p, seeds, 1), 1);
	ft_guide_lean(g);
	assert_int_equal(ft_guide_next(g), 5);
	assert_int_equal(ft_guide_next(g), 3);
	observe_ok(g, &ts[3], 3.0);
	assert_int_equal(ft_guide_next(g), 1);
	ft_guide_free(g);
	/* no seed: the lean changes nothing */
	g = ft_guide_new(sp, p, 6, 7);
	assert_int_equal(ft_guide_seed(g, p, seeds, 0), 0);
	ft_guide_lean(g);
	for (int i = 0; i < 6; i++)
		assert_true(ft_guide_next(g) >= 0);
	assert_int_equal(ft_guide_next(g), -1);
	ft_guide_free(g);
}

/* A seeded walk over ts[0..n) (p: pointers to them) from seed, never
 * stopping early, with probes or without: the guide must hand out the
 * candidates in the order want[0..n), each told its time us[k] as it comes. */
static void walk(const struct ft_space *sp, struct ft_trial *ts, struct ft_trial **p, int n,
		 unsigned long long seed, int probe, const long long *want, const double *us)
{
	const char *seeds[1] = { ts[0].config };
	struct ft_guide *g = ft_guide_new(sp, p, n, seed);

	assert_non_null(g);
	assert_int_equal(ft_guide_seed(g, p, seeds, 1), 1);
	ft_guide_patience(g, 0, 0.01);
	if (probe)
		ft_guide_probe(g);
	for (int i = 0; i < n; i++) {
		long long k = ft_guide_next(g);

		assert_int_equal(k, want[i]);
		observe_ok(g, &ts[k], us[k]);
	}
	assert_int_equal(ft_guide_next(g), -1);
	ft_guide_free(g);
}

/* Probes (ft_guide_probe): ten candidates BLOCK_M (16..256, 5 values) x
 * NUM_WARPS (4, 8), index 2 x BLOCK_M's + NUM_WARPS's, the seed (16,4) the
 * best (10 us) throughout. (64,8), 11 us, is competitive, holds two values
 * no competitive result held and is 2 steps from (32,4), the nearest of
 * them: its untried neighbour (128,8) comes next, not (128,4), the nearest
 * the best; (128,8), 10.5 us, is more than 1 % faster than that center, so
 * its neighbours come next too: (128,4), then (256,8) before (256,4). */
static void test_guide_probe(void **state)
{
	static const long long bm[] = { 16, 32, 64, 128, 256 }, warps[] = { 4, 8 };
	static const double us[] = { 10.0, 12.0, 10.5, 13.0, 15.0, 11.0, 20.0, 10.5, 20.0, 20.0 };
	static const long long plain[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const long long probed[] = { 0, 1, 2, 3, 4, 5, 7, 6, 9, 8 };
	struct ft_space *sp = new_space();
	struct ft_trial ts[10], *p[10];

	(void)state;
	sp->params[0].nvalues = 5;
	memcpy(sp->params[0].values, bm, sizeof(bm));
	sp->params[1].nvalues = 2;
	memcpy(sp->params[1].values, warps, sizeof(warps));
	sp->params[2].values[0] = 1;
	for (int i = 0; i < 10; i++) {
		make_trial(&ts[i], i, 32 * warps[i % 2], 1, 1, 0, 1);
		ts[i].values[0] = bm[i / 2];
		ft_config_format(sp, ts[i].values, ts[i].config, sizeof(ts[i].config));
		p[i] = &ts[i];
	}
	walk(sp, ts, p, 10, 5, 0, plain, us);
	walk(sp, ts, p, 10, 5, 1, probed, us);
}

/* A step from the best (ft_guide_next) counts the enumerated parameters
 * only: a derived one moves with its source. Candidates (W, PINGPONG,
 * BLOCK_N; BLOCK_M = 64 W derived), PINGPONG 1 only with W 2: (1,0,64) the
 * seed and best, (2,0,128), (2,1,64), (2,0,64), (1,0,128). (2,0,64) and
 * (1,0,128) are one step from the seed, in the model's order, then
 * (2,0,128) and (2,1,64), two; counting BLOCK_M too, (1,0,128) would come
 * first and (2,0,64), two steps, after it. With probes, (2,0,64) at 10.5 us
 * (within the race's margin of the best's 10) is a new structure, two steps
 * from the seed counting BLOCK_M: a probe center, whose neighbours (2,0,128)
 * and (2,1,64) come before (1,0,128); counted like the walk it would be one
 * step away and no center. */
static void test_guide_derived_step(void **state)
{
	static const long long cand[5][3] = { { 1, 0, 64 }, { 2, 0, 128 }, { 2, 1, 64 }, { 2, 0, 64 },
					      { 1, 0, 128 } };
	static const long long want[] = { 0, 3, 4, 1, 2 }, probed[] = { 0, 3, 1, 2, 4 };
	static const double us[] = { 10.0, 20.0, 20.0, 10.5, 20.0 };
	static const char *const names[] = { "W", "PINGPONG", "BLOCK_N", "BLOCK_M" };
	struct ft_space *sp = own(calloc(1, sizeof(*sp)));
	struct ft_trial ts[5], *p[5];

	(void)state;
	sp->nparams = 4;
	for (int k = 0; k < 4; k++) {
		snprintf(sp->params[k].name, FT_NAME_MAX, "%s", names[k]);
		sp->params[k].nvalues = 2;
	}
	sp->params[0].values[0] = 1, sp->params[0].values[1] = 2;
	sp->params[1].values[0] = 0, sp->params[1].values[1] = 1;
	sp->params[2].values[0] = 64, sp->params[2].values[1] = 128;
	sp->params[3].values[0] = 64, sp->params[3].values[1] = 128;
	sp->params[3].derived = 1;
	for (int i = 0; i < 5; i++) {
		make_trial(&ts[i], i, 128, 1, 1, 0, 1);
		for (int k = 0; k < 3; k++)
			ts[i].values[k] = cand[i][k];
		ts[i].values[3] = 64 * cand[i][0];
		ft_config_format(sp, ts[i].values, ts[i].config, sizeof(ts[i].config));
		p[i] = &ts[i];
	}
	walk(sp, ts, p, 5, 9, 0, want, us);
	walk(sp, ts, p, 5, 9, 1, probed, us);
}

static void test_config_covers(void **state)
{
	assert_true(ft_config_covers("A=1,B=2,C=3", "A=1,C=3"));
	assert_true(ft_config_covers("A=1,B=2", "A=1,B=2"));
	assert_false(ft_config_covers("A=1,B=2", "A=1,B=3"));
	assert_false(ft_config_covers("A=10,B=2", "A=1"));
	assert_false(ft_config_covers("A=1", "A=1,B=2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_random_is_seeded_permutation, release_owned),
		cmocka_unit_test_teardown(test_random_is_unbiased, release_owned),
		cmocka_unit_test_teardown(test_small_lists, release_owned),
		cmocka_unit_test_teardown(test_exhaustive_keeps_order, release_owned),
		cmocka_unit_test_teardown(test_model_sorts_by_prediction, release_owned),
		cmocka_unit_test_teardown(test_model_ties_keep_enumeration_order, release_owned),
		cmocka_unit_test_teardown(test_model_unrunnable_last, release_owned),
		cmocka_unit_test_teardown(test_model_penalises_a_partial_wave, release_owned),
		cmocka_unit_test_teardown(test_model_split_costs, release_owned),
		cmocka_unit_test_teardown(test_split_heuristic, release_owned),
		cmocka_unit_test_teardown(test_model_prefers_split_rule, release_owned),
		cmocka_unit_test_teardown(test_model_prefers_filling_the_gpu, release_owned),
		cmocka_unit_test_teardown(test_guide_seeds_first, release_owned),
		cmocka_unit_test_teardown(test_guide_seed_nearest, release_owned),
		cmocka_unit_test_teardown(test_guide_patience, release_owned),
		cmocka_unit_test_teardown(test_guide_incumbent, release_owned),
		cmocka_unit_test_teardown(test_guide_behind, release_owned),
		cmocka_unit_test_teardown(test_guide_lean, release_owned),
		cmocka_unit_test_teardown(test_guide_probe, release_owned),
		cmocka_unit_test_teardown(test_guide_derived_step, release_owned),
		cmocka_unit_test(test_config_covers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
