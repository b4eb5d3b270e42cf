/* test_evaluate.c - evaluate.c's CPU-side defaults (the GPU side runs in the
 * worker; tests/gpu and test_worker's GPU part cover it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_defaults),
		cmocka_unit_test(test_result_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
