/* test_campaign_run.c - the campaign driver (campaign_run.c) on a host with two
 * GPU models, faked (fake_gpus.h: 4 fake GPUs, two "fake H200", one "fake
 * H100", one sm_89 "fake L40S"), over a real space compiled by NVRTC and a
 * real database: `--devices all` groups the GPUs by model and leaves the
 * sm_89 one out, each model gets its own search of the unit on its own GPUs,
 * and their results stay apart, trials and best rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "base/clock.h"
#include "base/interrupt.h"
#include "search/campaign_run.h"
#include "cmd/cmd.h"
#include "fake_gpus.h"

static char tmp[] = "/tmp/fatune-test-campaign.XXXXXX";

static void test_two_models_kept_apart(void **state)
{
	const char *src = getenv("FATUNE_SOURCE_DIR");
	char path[4096];
	struct ft_gpus g;
	struct ft_campaign camp;
	struct ft_shape proto = { 0 };
	struct ft_space *sp = calloc(1, sizeof(*sp));
	struct ft_campaign_target targets[2];
	struct ft_campaign_run_opts o = { 0 };
	struct ft_campaign_result r;
	struct ft_db *db = NULL;
	struct ft_best best;
	struct ft_best_key key;
	struct ft_err err = { 0 };

	(void)state;
	assert_non_null(src);
	assert_non_null(sp);
	fake_gpus_use("fast");
	assert_int_equal(ft_cmd_gpus("search", "all", NULL, &g, &err), 0);
	fake_gpus_use(NULL);
	assert_string_equal(g.arch->name, "sm_90");
	/* two models of sm_90, in order of their first GPU; the sm_89 one unused */
	assert_int_equal(g.ngroups, 2);
	assert_string_equal(g.groups[0].name, "fake H200");
	assert_int_equal(g.groups[0].nrunners, 2);
	assert_string_equal(g.groups[1].name, "fake H100");
	assert_int_equal(g.groups[1].nrunners, 1);
	assert_int_equal(g.nunused, 1);
	for (int i = 0; i < 2; i++)
		targets[i] = (struct ft_campaign_target){ &g.groups[i].arch, g.groups[i].name,
							  g.groups[i].driver, g.groups[i].runners,
							  g.groups[i].nrunners, g.groups[i].sm_count };

	snprintf(path, sizeof(path), "%s/tests/spaces/two_gpus.yaml", src);
	assert_int_equal(ft_space_load(sp, path, &err), 0);
	ft_campaign_init(&camp);
	assert_int_equal(ft_campaign_add(&camp, "1x2x64x64", &proto, &err), 0);
	snprintf(path, sizeof(path), "%s/fatune.db", tmp);
	assert_int_equal(ft_db_open(&db, path, 1, &err), 0);
	o.camp = &camp;
	o.sps = &sp;
	o.nsp = 1;
	o.targets = targets;
	o.ntargets = 2;
	o.search = (struct ft_search_opts){ .jobs = 2, .strategy = &ft_strategy_exhaustive,
					    .seed = 1, .budget_n = -1, .timing = "warm",
					    .samples = 1, .launches = 1, .timeout_ms = 20000 };
	if (ft_campaign_run(db, &o, &r, &err))
		fail_msg("campaign: %s", err.msg);
	ft_cmd_gpus_stop(&g);

	/* one search per model, each on its own GPUs */
	assert_int_equal(r.nout, 2);
	assert_int_equal(r.tuned, 1);
	assert_string_equal(r.out[0].device, "fake H200");
	assert_string_equal(r.out[1].device, "fake H100");
	assert_string_not_equal(r.out[0].res.search_key, r.out[1].res.search_key);
	for (int k = 0; k < 2; k++) {
		assert_true(r.out[0].res.top[k].device_index == 0 || r.out[0].res.top[k].device_index == 1);
		assert_string_equal(r.out[0].res.top[k].device, "fake H200");
		assert_int_equal(r.out[1].res.top[k].device_index, 2);
		assert_string_equal(r.out[1].res.top[k].device, "fake H100");
	}
	/* a best row per model, with that model's time */
	key = (struct ft_best_key){ "sm_90", "fake H200", "two_gpus", camp.units[0] };
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_true(best.t_median_us == 10.0 || best.t_median_us == 11.0);
	key.device = "fake H100";
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_true(best.t_median_us == 12.0);
	ft_campaign_result_release(&r);
	ft_db_close(db);
	ft_campaign_release(&camp);
	free(sp);
}

/* Bit i set: unit i of the next run_two_h200_as is causal. */
static unsigned causal_units;

/* Campaign `shapes` (n units) with transfer over the fake H200s `devices`
 * ("0,1", "0": fake_gpus.h `mode`), per_gpu units side by side on each
 * (--units-per-gpu), side by side unless one_at_a_time; r is filled. Returns
 * ft_campaign_run's result. */
static int run_lanes_as(const char *mode, const char *devices, int per_gpu, const char *const *shapes, int n,
			int one_at_a_time, struct ft_campaign *camp, struct ft_campaign_result *r)
{
	int rc;
	const char *src = getenv("FATUNE_SOURCE_DIR");
	char path[4096];
	struct ft_gpus g;
	struct ft_shape proto = { 0 };
	struct ft_space *sp = calloc(1, sizeof(*sp));
	struct ft_campaign_target target;
	struct ft_campaign_run_opts o = { 0 };
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };

	assert_non_null(src);
	assert_non_null(sp);
	fake_gpus_use(mode);
	assert_int_equal(ft_cmd_gpus("search", devices, NULL, &g, &err), 0);
	assert_int_equal(ft_cmd_gpus_share(&g, per_gpu, &err), 0);
	fake_gpus_use(NULL);
	assert_int_equal(g.ngroups, 1);
	assert_int_equal(g.groups[0].nrunners, (int)(strlen(devices) + 1) / 2 * per_gpu);
	target = (struct ft_campaign_target){ &g.groups[0].arch, g.groups[0].name, g.groups[0].driver,
					      g.groups[0].runners, g.groups[0].nrunners,
					      g.groups[0].sm_count };
	snprintf(path, sizeof(path), "%s/tests/spaces/two_gpus.yaml", src);
	assert_int_equal(ft_space_load(sp, path, &err), 0);
	ft_campaign_init(camp);
	for (int i = 0; i < n; i++) {
		proto.causal = (causal_units >> i) & 1;
		assert_int_equal(ft_campaign_add(camp, shapes[i], &proto, &err), 0);
	}
	snprintf(path, sizeof(path), "%s/lanes-%s-%s-%d-%d-%d-%u.db", tmp, mode, devices, per_gpu, n,
		 one_at_a_time, causal_units);
	assert_int_equal(ft_db_open(&db, path, 1, &err), 0);
	o.camp = camp;
	o.sps = &sp;
	o.nsp = 1;
	o.targets = &target;
	o.ntargets = 1;
	o.one_at_a_time = one_at_a_time;
	o.search = (struct ft_search_opts){ .jobs = 2, .strategy = &ft_strategy_transfer,
					    .seed = 1, .budget_n = -1, .timing = "warm",
					    .samples = 1, .launches = 1, .timeout_ms = 20000 };
	rc = ft_campaign_run(db, &o, r, &err);
	ft_cmd_gpus_stop(&g);
	ft_db_close(db);
	free(sp);
	return rc;
}

/* run_lanes_as on fake GPUs 0 and 1, a unit at a time on each */
static int run_two_h200_as(const char *mode, const char *const *shapes, int n, int one_at_a_time,
			   struct ft_campaign *camp, struct ft_campaign_result *r)
{
	return run_lanes_as(mode, "0,1", 1, shapes, n, one_at_a_time, camp, r);
}

/* run_two_h200_as with fast fake jobs (100 ms), which must succeed */
static void run_two_h200(const char *const *shapes, int n, int one_at_a_time, struct ft_campaign *camp,
			 struct ft_campaign_result *r)
{
	if (run_two_h200_as("fast", shapes, n, one_at_a_time, camp, r))
		fail_msg("campaign failed");
}

/* unit u's one search */
static const struct ft_campaign_outcome *unit_out(const struct ft_campaign_result *r, int u)
{
	assert_int_equal(r->count[u], 1);
	return &r->out[r->first[u]];
}

/* Two GPUs of one model, two head-dim groups: the two representatives run at
 * once, a GPU each; each neighbour starts once its representative is done
 * and is seeded by it; every unit is tuned and reported. */
static void test_units_side_by_side(void **state)
{
	static const char *const shapes[] = { "1x2x64x64", "1x2x128x64", "1x2x64x32", "1x2x128x32" };
	struct ft_campaign camp;
	struct ft_campaign_result r;
	int order[4];

	(void)state;
	run_two_h200(shapes, 4, 0, &camp, &r);
	assert_int_equal(r.nout, 4);
	assert_int_equal(r.tuned, 4);
	ft_campaign_order(&camp, 1, order);
	for (int i = 0; i < 2; i++) {
		const struct ft_campaign_outcome *a = unit_out(&r, order[i]), *b = unit_out(&r, order[1 - i]);

		/* representatives: a GPU each, at the same time, on different GPUs,
		 * and half the compile threads each (2 given: 1) */
		assert_int_equal(a->gpus, 1);
		assert_int_equal(a->jobs, 1);
		if (!(a->started_ms < b->ended_ms))
			fail_msg("representative %d started at %.0f ms, after the other ended (%.0f ms)",
				 order[i], a->started_ms, b->ended_ms);
		assert_int_not_equal(a->res.top[0].device_index, b->res.top[0].device_index);
	}
	for (int i = 2; i < 4; i++) {
		const struct ft_campaign_outcome *nb = unit_out(&r, order[i]);
		int rep = camp.units[order[i]].d == camp.units[order[0]].d ? order[0] : order[1];

		if (nb->started_ms < unit_out(&r, rep)->ended_ms)
			fail_msg("unit %d started at %.0f ms, before its representative %d ended (%.0f ms)",
				 order[i], nb->started_ms, rep, unit_out(&r, rep)->ended_ms);
		assert_int_equal(nb->res.nseeds, 1);
	}
	ft_campaign_result_release(&r);
	ft_campaign_release(&camp);
}

/* One group: its representative is the only unit that can start and takes
 * both GPUs; --parallel-units off runs one unit at a time on both. */
static void test_lone_unit_takes_every_gpu(void **state)
{
	static const char *const shapes[] = { "1x2x64x64", "1x2x128x64" };
	struct ft_campaign camp;
	struct ft_campaign_result r;
	int order[2];

	(void)state;
	for (int off = 0; off < 2; off++) {
		run_two_h200(shapes, 2, off, &camp, &r);
		assert_int_equal(r.tuned, 2);
		ft_campaign_order(&camp, 1, order);
		assert_int_equal(unit_out(&r, order[0])->gpus, 2);
		assert_int_equal(unit_out(&r, order[0])->jobs, 2);	/* every GPU: every thread */
		assert_true(unit_out(&r, order[1])->started_ms >= unit_out(&r, order[0])->ended_ms);
		if (off)
			assert_int_equal(unit_out(&r, order[1])->gpus, 2);
		ft_campaign_result_release(&r);
		ft_campaign_release(&camp);
	}
}

/* One group of five, the representative 1x2x512x64 (the middle by size):
 * then 1x2x64x64 and its causal twin are each other's nearest unit, so while
 * one runs the other gives way to 1x2x1024x64 and starts only once the first
 * has ended, seeded by it. */
static void test_nearest_unit_waits(void **state)
{
	static const char *const shapes[] = { "1x2x64x64", "1x2x64x64", "1x2x512x64", "1x2x1024x64",
					       "1x2x2048x64" };
	struct ft_campaign camp;
	struct ft_campaign_result r;
	int order[5];
	const struct ft_campaign_outcome *p0, *p1;

	(void)state;
	causal_units = 1u << 1;
	run_two_h200(shapes, 5, 0, &camp, &r);
	causal_units = 0;
	assert_int_equal(r.tuned, 5);
	ft_campaign_order(&camp, 1, order);
	assert_int_equal(order[0], 2);
	assert_int_equal(ft_campaign_nearest(&camp, 0), 1);
	assert_int_equal(ft_campaign_nearest(&camp, 1), 0);
	p0 = unit_out(&r, 0);
	p1 = unit_out(&r, 1);
	if (p1->started_ms < p0->ended_ms)
		fail_msg("the causal 1x2x64x64 started at %.0f ms, before its nearest unit ended (%.0f ms)",
			 p1->started_ms, p0->ended_ms);
	/* the other GPU did not wait meanwhile: 1x2x1024x64 ran beside 1x2x64x64 */
	if (!(unit_out(&r, 3)->started_ms < p0->ended_ms))
		fail_msg("1x2x1024x64 started at %.0f ms, after 1x2x64x64 ended (%.0f ms)",
			 unit_out(&r, 3)->started_ms, p0->ended_ms);
	ft_campaign_result_release(&r);
	ft_campaign_release(&camp);
}

/* --units-per-gpu 2 on one GPU: two representatives run side by side on
 * it, a runner each, and their jobs take turns (the fakes log each job's
 * start and end: no two overlap), the turns' waits counted apart from the
 * GPU's busy time. */
static void test_units_share_a_gpu(void **state)
{
	static const char *const shapes[] = { "1x2x64x64", "1x2x64x32" };
	struct ft_campaign camp;
	struct ft_campaign_result r;
	char log[4096];
	double iv[512][2], shared = 0;
	int n = 0, ord;
	FILE *f;

	(void)state;
	snprintf(log, sizeof(log), "%s/jobs.log", tmp);
	setenv("FAKE_JOBS_LOG", log, 1);
	if (run_lanes_as("fast", "0", 2, shapes, 2, 0, &camp, &r))
		fail_msg("campaign failed");
	unsetenv("FAKE_JOBS_LOG");
	assert_int_equal(r.tuned, 2);
	for (int u = 0; u < 2; u++) {
		assert_int_equal(unit_out(&r, u)->gpus, 1);
		shared += unit_out(&r, u)->res.st.phase_ms[FT_PH_SHARED];
	}
	if (!(unit_out(&r, 0)->started_ms < unit_out(&r, 1)->ended_ms &&
	      unit_out(&r, 1)->started_ms < unit_out(&r, 0)->ended_ms))
		fail_msg("the two units did not run side by side: %.0f-%.0f and %.0f-%.0f ms",
			 unit_out(&r, 0)->started_ms, unit_out(&r, 0)->ended_ms, unit_out(&r, 1)->started_ms,
			 unit_out(&r, 1)->ended_ms);
	if (!(shared > 0))
		fail_msg("no job waited for its turn on the GPU");
	assert_non_null(f = fopen(log, "r"));
	while (n < 512 && fscanf(f, "%d %lf %lf", &ord, &iv[n][0], &iv[n][1]) == 3) {
		assert_int_equal(ord, 0);
		n++;
	}
	fclose(f);
	assert_true(n >= 4);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (iv[i][0] < iv[j][1] && iv[j][0] < iv[i][1])
				fail_msg("jobs %d (%.1f-%.1f ms) and %d (%.1f-%.1f ms) ran at once on the GPU", j,
					 iv[j][0], iv[j][1], i, iv[i][0], iv[i][1]);
	ft_campaign_result_release(&r);
	ft_campaign_release(&camp);
}

/* --units-per-gpu 2 on one GPU, one group of four: the representative
 * 1x2x128x64 (the lower middle by size), then 1x2x64x64 beside 1x2x4096x64
 * (far from its seeds: the longer search); when 1x2x64x64 ends, the one unit
 * that can start is 1x2x4096x64's causal twin, whose nearest unit runs: a
 * lane sharing the GPU that another unit keeps busy leaves it waiting for
 * its twin's best instead of starting it beside the twin. */
static void test_shared_gpu_nearest_waits(void **state)
{
	static const char *const shapes[] = { "1x2x64x64", "1x2x128x64", "1x2x4096x64", "1x2x4096x64" };
	struct ft_campaign camp;
	struct ft_campaign_result r;
	const struct ft_campaign_outcome *a, *b;

	(void)state;
	causal_units = 1u << 3;
	if (run_lanes_as("fast", "0", 2, shapes, 4, 0, &camp, &r))
		fail_msg("campaign failed");
	causal_units = 0;
	assert_int_equal(r.tuned, 4);
	assert_int_equal(ft_campaign_nearest(&camp, 2), 3);
	assert_int_equal(ft_campaign_nearest(&camp, 3), 2);
	a = unit_out(&r, 2);
	b = unit_out(&r, 3);
	if (a->started_ms > b->started_ms)
		a = unit_out(&r, 3), b = unit_out(&r, 2);
	if (b->started_ms < a->ended_ms)
		fail_msg("a twin started at %.0f ms beside the other (%.0f-%.0f ms)", b->started_ms, a->started_ms,
			 a->ended_ms);
	assert_int_equal(b->res.nseeds >= 1, 1);
	ft_campaign_result_release(&r);
	ft_campaign_release(&camp);
}

/* Workers start at once: two GPUs with four runners each (eight workers of
 * FAKE_START_MS each) open in the first worker's start, then one start for
 * the other GPU and one for the seven shared ones, not eight one after
 * another. */
static void test_workers_start_at_once(void **state)
{
	struct ft_gpus g;
	struct ft_err err = { 0 };
	double t0, ms;

	(void)state;
	fake_gpus_use("slowstart");
	t0 = ft_mono_ms();
	assert_int_equal(ft_cmd_gpus("search", "0,1", NULL, &g, &err), 0);
	assert_int_equal(ft_cmd_gpus_share(&g, 4, &err), 0);
	ms = ft_mono_ms() - t0;
	fake_gpus_use(NULL);
	assert_int_equal(g.ngroups, 1);
	assert_int_equal(g.groups[0].nrunners, 8);
	/* in rounds: GPU 0, GPU 1, GPU 0, ... */
	for (int i = 0; i < 8; i++)
		assert_int_equal(ft_runner_info(g.groups[0].runners[i])->device_index, i % 2);
	ft_cmd_gpus_stop(&g);
	if (ms > 5.0 * FAKE_START_MS)
		fail_msg("8 workers of %d ms each took %.0f ms to start", FAKE_START_MS, ms);
}

/* A worker that finds no GPU: every worker started is closed and the first
 * such GPU is named, when starting the GPUs and when starting second
 * workers on them. */
static void test_worker_without_gpu(void **state)
{
	struct ft_gpus g;
	struct ft_err err = { 0 };

	(void)state;
	fake_gpus_use("absent1");
	assert_int_equal(ft_cmd_gpus("search", "0,1,2", NULL, &g, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "GPU 1 cannot be used: fake: GPU 1 is gone"));
	assert_int_equal(g.ngroups, 0);
	fake_gpus_use("fast");
	assert_int_equal(ft_cmd_gpus("search", "0,1", NULL, &g, &err), 0);
	fake_gpus_use("absent1");
	assert_int_equal(ft_cmd_gpus_share(&g, 2, &err), -1);
	fake_gpus_use(NULL);
	assert_non_null(strstr(err.msg, "GPU 1 took one worker but not a second (fake: GPU 1 is gone)"));
	assert_int_equal(g.groups[0].nrunners, 2);
	ft_cmd_gpus_stop(&g);
}

static void *interrupt_after_1s(void *arg)
{
	(void)arg;
	fake_sleep_ms(1000);
	ft_interrupt_raise();
	return NULL;
}

/* An interrupt while two units run side by side (fake jobs of 3 s): both
 * lanes stop after the candidates in flight, no other unit starts, none is
 * reported as tuned, and the campaign says it was interrupted. */
static void test_lanes_interrupted(void **state)
{
	static const char *const shapes[] = { "1x2x64x64", "1x2x128x64", "1x2x64x32", "1x2x128x32" };
	struct ft_campaign camp;
	struct ft_campaign_result r;
	pthread_t th;
	double t0 = ft_mono_ms();

	(void)state;
	ft_interrupt_install(1);
	assert_int_equal(pthread_create(&th, NULL, interrupt_after_1s, NULL), 0);
	assert_int_equal(run_two_h200_as("ok", shapes, 4, 0, &camp, &r), -1);
	pthread_join(th, NULL);
	ft_interrupt_install(1);	/* clears the flag for the tests after this one */
	ft_interrupt_install(0);
	assert_true(r.interrupted);
	assert_int_equal(r.tuned, 0);
	assert_true(r.nout <= 2);	/* the two representatives, cut short */
	if (ft_mono_ms() - t0 > 15000)
		fail_msg("the lanes took %.0f ms to stop", ft_mono_ms() - t0);
	ft_campaign_result_release(&r);
	ft_campaign_release(&camp);
}

/* With transfer, one representative per head-dim group first (the middle
 * one by size), then the rest in the campaign's order; without, as given. */
static void test_transfer_order(void **state)
{
	struct ft_shape u[6] = {
		{ 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD },
		{ 1, 8, 2048, 64, 0, FT_FP16, 2048, 8, FT_LAYOUT_BHSD },
		{ 1, 8, 8192, 64, 0, FT_FP16, 8192, 8, FT_LAYOUT_BHSD },
		{ 2, 8, 1024, 128, 0, FT_FP16, 1024, 8, FT_LAYOUT_BHSD },
		{ 2, 8, 4096, 128, 1, FT_FP16, 4096, 8, FT_LAYOUT_BHSD },
		{ 1, 8, 4096, 64, 1, FT_FP16, 4096, 8, FT_LAYOUT_BHSD },
	};
	struct ft_campaign c = { .nunits = 6, .units = u };
	int order[6], want[6] = { 1, 3, 0, 2, 4, 5 }, plain[6] = { 0, 1, 2, 3, 4, 5 };

	(void)state;
	/* D 64: sizes 21, 25, 29 and 27 (u5): the lower middle of four is u1 (25);
	 * D 128: 24 and 28, the lower middle of two is u3 */
	ft_campaign_order(&c, 1, order);
	for (int i = 0; i < 6; i++)
		if (order[i] != want[i])
			fail_msg("transfer order[%d] = %d, expected %d", i, order[i], want[i]);
	ft_campaign_order(&c, 0, order);
	assert_memory_equal(order, plain, sizeof(order));
	/* a bf16 unit of D 64 is another group: represented on its own */
	u[2].dtype = FT_BF16;
	ft_campaign_order(&c, 1, order);
	assert_int_equal(order[0], 1); /* D 64 fp16: sizes 21, 25, 27 -> the middle, u1 */
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 3);
}

int main(int argc, char **argv)
{
	int rc = fake_gpus_main(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_models_kept_apart),
		cmocka_unit_test(test_transfer_order),
		cmocka_unit_test(test_units_side_by_side),
		cmocka_unit_test(test_lone_unit_takes_every_gpu),
		cmocka_unit_test(test_nearest_unit_waits),
		cmocka_unit_test(test_lanes_interrupted),
		cmocka_unit_test(test_units_share_a_gpu),
		cmocka_unit_test(test_shared_gpu_nearest_waits),
		cmocka_unit_test(test_workers_start_at_once),
		cmocka_unit_test(test_worker_without_gpu),
	};
	char cmd[128];

	if (rc >= 0)
		return rc;
	if (!mkdtemp(tmp))
		return 1;
	setenv("FATUNE_CACHE_DIR", tmp, 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return rc;
}
