/* test_evaluate.c - evaluate.c's CPU-side defaults (the GPU side runs in the
 * worker; tests/gpu and test_worker's GPU part cover it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evaluate.h"

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
 * counts, slow ones get one call per sample and fewer samples. */
static void test_plan(void **state)
{
	struct ft_timing_plan p;

	/* a 6.4 us kernel: K = 20 asked for and kept */
	ft_eval_plan(6.4, 20, 15, 3, 0, &p);
	assert_int_equal(p.launches, 20);
	assert_int_equal(p.samples, 15);
	/* auto: enough calls for ~1 ms */
	ft_eval_plan(6.4, FT_EVAL_LAUNCHES_AUTO, 15, 3, 0, &p);
	assert_int_equal(p.launches, 157);
	/* a 50 ms kernel: one call per sample; 30 x 50 ms is over the budget */
	ft_eval_plan(50000, 20, 30, 3, 0, &p);
	assert_int_equal(p.launches, 1);
	assert_int_equal(p.samples, 20);
	/* the watchdog must allow warm-up, samples and the last check */
	assert_true(p.expected_ms >= (3 + 20) * 50.0 && p.expected_ms < 2000);
	/* ...and 15 asked for fits the budget */
	ft_eval_plan(50000, 20, 15, 3, 0, &p);
	assert_int_equal(p.samples, 15);
	/* a 2 s kernel: never below FT_EVAL_MIN_SAMPLES */
	ft_eval_plan(2e6, 20, 30, 3, 0, &p);
	assert_int_equal(p.launches, 1);
	assert_int_equal(p.samples, FT_EVAL_MIN_SAMPLES);
	assert_true(p.expected_ms >= (3 + FT_EVAL_MIN_SAMPLES) * 2000.0);
	/* ...unless fewer were asked for */
	ft_eval_plan(2e6, 20, 3, 3, 0, &p);
	assert_int_equal(p.samples, 3);
	/* 200 us and 1 ms: K = 20 kept (samples of 4 and 20 ms), R kept */
	ft_eval_plan(200, 20, 30, 3, 0, &p);
	assert_int_equal(p.launches, 20);
	assert_int_equal(p.samples, 30);
	ft_eval_plan(1000, 20, 30, 3, 0, &p);
	assert_int_equal(p.launches, 20);
	assert_int_equal(p.samples, 30);
	/* 5 ms: K = 4 (20 ms a sample); 30 samples would take 600 ms: kept */
	ft_eval_plan(5000, 20, 30, 3, 0, &p);
	assert_int_equal(p.launches, 4);
	assert_int_equal(p.samples, 30);
	/* 20 ms: K = 1 and R = 30 (600 ms) */
	ft_eval_plan(20000, 20, 30, 3, 0, &p);
	assert_int_equal(p.launches, 1);
	assert_int_equal(p.samples, 30);
	/* cold: one call per sample whatever was asked */
	ft_eval_plan(6.4, 20, 15, 3, 1, &p);
	assert_int_equal(p.launches, 1);
	assert_int_equal(p.samples, 15);
	/* a zero or NaN measurement cannot divide by zero */
	ft_eval_plan(0, FT_EVAL_LAUNCHES_AUTO, 15, 3, 0, &p);
	assert_int_equal(p.launches, FT_EVAL_MAX_LAUNCHES);
	ft_eval_plan(NAN, 20, 15, 3, 0, &p);
	assert_int_equal(p.launches, 20);
	/* a K above the bound is bounded */
	ft_eval_plan(1, 5000, 15, 3, 0, &p);
	assert_int_equal(p.launches, FT_EVAL_MAX_LAUNCHES);
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
