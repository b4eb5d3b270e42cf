/* test_runner.c - the runner table and interface (run/runner.h) through the runners that need
 * no GPU: names resolved (and a wrong one refused with the list), NAME:SPEC, each op's contract
 * on the toy `fake` runner (deterministic times, the chosen config wrong however fast, a job
 * without a CUBIN key is fatune's failure, not a verdict; the cache refuses a "key" that is a
 * path), and replay's refusal of a bad cfg. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compile/cache.h"
#include "run/runner.h"

#define CFG_A "NUM_WARPS=4,TILE_N=64"
#define CFG_B "NUM_WARPS=8,TILE_N=64"

static void job_for(struct ft_job *job, const char *config)
{
	memset(job, 0, sizeof(*job));
	snprintf(job->config, sizeof(job->config), "%s", config);
	snprintf(job->cubin_key, sizeof(job->cubin_key), "0123456789abcdef");
	job->seed = 7;
	job->timing = 1;
	job->samples = 15;
	job->launches_per_sample = 20;
}

static void test_table(void **state)
{
	struct ft_err err = { 0 };

	(void)state;
	assert_non_null(ft_runner_find("gpu", &err));
	assert_non_null(ft_runner_find("replay", &err));
	assert_non_null(ft_runner_find("fake", &err));
	assert_null(ft_runner_find("nope", &err));
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "use one of gpu, replay, fake"));
}

static void test_fake_contract(void **state)
{
	struct ft_runner *r = NULL;
	struct ft_runner_cfg cfg = { .device = -1 };
	struct ft_job job;
	struct ft_job_result a, a2, b;
	struct ft_err err = { 0 };
	struct ft_trial t;

	(void)state;
	/* the spec after the colon: CFG_B's values are the wrong ones */
	assert_int_equal(ft_runner_open(&r, "fake:NUM_WARPS=8", &cfg, &err), 0);
	assert_string_equal(ft_runner_info(r)->name, "fake");
	assert_string_equal(ft_runner_info(r)->device, "fake");
	assert_int_equal(ft_runner_info(r)->measured, 0);
	assert_int_equal(ft_runner_info(r)->needs_cubin, 0);
	assert_true(ft_runner_evaluates(r));
	ft_trial_init(&t);
	assert_int_equal(ft_runner_answer(r, &t), 0);	/* it answers nothing at send time */

	job_for(&job, CFG_A);
	assert_int_equal(ft_runner_evaluate(r, &job, 1000, &a, &err), 0);
	assert_int_equal(ft_runner_evaluate(r, &job, 1000, &a2, &err), 0);
	assert_int_equal(a.status, FT_ST_OK);
	assert_true(a.t_median_us >= 10 && a.t_median_us <= 101);
	assert_true(a.t_min_us <= a.t_median_us && a.t_median_us <= a.t_p90_us);
	assert_int_equal(a.samples, 15);
	assert_int_equal(a.nraw, 15);
	assert_true(a.t_median_us == a2.t_median_us);	/* deterministic */

	job_for(&job, CFG_B);
	assert_int_equal(ft_runner_evaluate(r, &job, 1000, &b, &err), 0);
	assert_int_equal(b.status, FT_ST_WRONG_RESULT);
	assert_true(b.t_median_us < a.t_median_us);	/* fast, and still wrong */
	assert_true(b.rel_err > 0.1);

	/* a verify-only job is not timed */
	job_for(&job, CFG_A);
	job.timing = 0;
	assert_int_equal(ft_runner_evaluate(r, &job, 1000, &a, &err), 0);
	assert_int_equal(a.status, FT_ST_OK);
	assert_true(isnan(a.t_median_us));

	/* a job naming no CUBIN key (a local path, nothing) is fatune's failure */
	job_for(&job, CFG_A);
	snprintf(job.cubin_key, sizeof(job.cubin_key), "../../etc/passwd");
	assert_int_equal(ft_runner_evaluate(r, &job, 1000, &a, &err), -1);
	assert_int_equal(err.status, FT_EFAIL);
	assert_non_null(strstr(err.msg, "names no CUBIN key"));
	/* what the GPU runner's worker does with such a "key": refused before it is a path */
	{
		char path[4096];

		assert_true(ft_cache_key_ok("0123456789abcdef"));
		assert_false(ft_cache_key_ok("0123456789ABCDEF"));
		assert_false(ft_cache_key_ok("0123456789abcde"));
		assert_int_equal(ft_cache_path(job.cubin_key, path, sizeof(path), &err), -1);
		assert_int_equal(err.status, FT_EINPUT);
		assert_non_null(strstr(err.msg, "not a CUBIN cache key"));
	}
	ft_runner_close(r);
	ft_runner_close(NULL);
}

static void test_bad_cfg(void **state)
{
	struct ft_runner *r = NULL;
	struct ft_runner_cfg cfg = { .device = -1 };
	struct ft_err err = { 0 };

	(void)state;
	assert_int_equal(ft_runner_open(&r, "fake:NOPE", &cfg, &err), -1);
	assert_null(r);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "bad fake runner spec 'NOPE'"));
	assert_int_equal(ft_runner_open(&r, "fake:A=", &cfg, &err), -1);
	/* replay without a recording */
	memset(&err, 0, sizeof(err));
	assert_int_equal(ft_runner_open(&r, "replay", &cfg, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_int_equal(ft_runner_open(&r, "nope:x", &cfg, &err), -1);
	assert_non_null(strstr(err.msg, "unknown runner 'nope'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_fake_contract),
		cmocka_unit_test(test_bad_cfg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
