/* test_evaluate.c - evaluate.c's CPU-side defaults (the GPU side runs in the
 * worker; tests/gpu and test_worker's GPU part cover it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "run/evaluate.h"

static void test_job_defaults(void **state)
{
	struct ft_job job;

	memset(&job, 0xff, sizeof(job));
	ft_job_timing_defaults(&job);
	assert_int_equal(job.timing, 1);
	assert_int_equal(job.cold, 0);
	assert_true(job.samples >= 10 && job.samples <= FT_EVAL_MAX_SAMPLES);
	assert_true(job.warmup >= 1);
	assert_int_equal(job.launches_per_sample, FT_EVAL_LAUNCHES_AUTO);
}

static void test_result_init(void **state)
{
	struct ft_job_result r;

	(void)state;
	memset(&r, 0x5a, sizeof(r));
	ft_job_result_init(&r);
	assert_int_equal(r.status, FT_ST_OK);
	assert_string_equal(r.reason, "");
	assert_true(r.rel_err != r.rel_err && r.t_median_us != r.t_median_us); /* NAN */
}

/* The plan follows the duration of one call: fast kernels keep the job's
 * counts, slow ones get fewer calls per sample and fewer samples. */
static void test_plan(void **state)
{
	static const struct {
		double single_us;
		int launches, samples, cold;	/* asked for */
		int want_k, want_r;
	} cases[] = {
		{ 6.4, 20, 15, 0, 20, 15 },	/* the mission shape: K = 20 kept */
		{ 6.4, FT_EVAL_LAUNCHES_AUTO, 15, 0, 157, 15 },	/* auto: ~1 ms a sample */
		{ 200, 20, 30, 0, 20, 30 },	/* 4 ms samples: kept */
		{ 1000, 20, 30, 0, 20, 30 },	/* 20 ms samples: kept */
		{ 5000, 20, 30, 0, 4, 30 },	/* K lowered to 20 ms a sample */
		{ 20000, 20, 30, 0, 1, 30 },	/* 30 x 20 ms fits the 1 s budget */
		{ 50000, 20, 30, 0, 1, 20 },	/* 50 ms: one call, 20 samples */
		{ 50000, 20, 15, 0, 1, 15 },	/* ...15 asked for fits */
		{ 2e6, 20, 30, 0, 1, FT_EVAL_MIN_SAMPLES },	/* 2 s: never below 5 */
		{ 2e6, 20, 3, 0, 1, 3 },	/* ...unless fewer were asked for */
		{ 6.4, 20, 15, 1, 1, 15 },	/* cold: one call per sample */
		{ 0, FT_EVAL_LAUNCHES_AUTO, 15, 0, FT_EVAL_MAX_LAUNCHES, 15 },	/* no division by 0 */
		{ NAN, 20, 15, 0, 20, 15 },
		{ 1, 5000, 15, 0, FT_EVAL_MAX_LAUNCHES, 15 },	/* K bounded */
	};
	struct ft_timing_plan p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ft_eval_plan(cases[i].single_us, cases[i].launches, cases[i].samples, 3,
			     cases[i].cold, 0, &p);
		if (p.launches != cases[i].want_k || p.samples != cases[i].want_r)
			fail_msg("case %zu (%g us): K %d R %d, expected K %d R %d", i,
				 cases[i].single_us, p.launches, p.samples, cases[i].want_k,
				 cases[i].want_r);
	}
	/* the watchdog must allow warm-up, samples and the last check */
	ft_eval_plan(50000, 20, 30, 3, 0, 0, &p);
	assert_true(p.expected_ms >= (3 + 20) * 50.0 && p.expected_ms < 2000);
	ft_eval_plan(2e6, 20, 30, 3, 0, 0, &p);
	assert_true(p.expected_ms >= (3 + FT_EVAL_MIN_SAMPLES) * 2000.0);
	/* a lower sample cap (the race's quick pass): a 220 us kernel gets K 4
	 * within 1 ms instead of 20; a 5 us one keeps the K asked for */
	ft_eval_plan(220, 20, 3, 1, 0, 1000, &p);
	assert_int_equal(p.launches, 4);
	assert_int_equal(p.samples, 3);
	ft_eval_plan(5, 20, 3, 1, 0, 1000, &p);
	assert_int_equal(p.launches, 20);
	ft_eval_plan(5000, 20, 3, 1, 0, 1000, &p);
	assert_int_equal(p.launches, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_defaults),
		cmocka_unit_test(test_result_init),
		cmocka_unit_test(test_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
