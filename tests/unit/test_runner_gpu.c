/* test_runner_gpu.c - the gpu runner's turns on one GPU (run/runner_gpu.c), with fake workers
 * (fake_gpus.h): two runners opened on one GPU never run jobs at once, and a runner that holds
 * the GPU (the race's final) keeps the other's jobs waiting while its own run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "run/runner.h"

#include "fake_gpus.h"

struct other {
	struct ft_runner *r;
	struct ft_job_result res;
	double start_ms, end_ms;
	int rc;
	atomic_int asking;	/* 1 from just before its job is asked for */
};

static void *other_job(void *arg)
{
	struct other *o = arg;
	struct ft_job job = { .timing = 1, .tolerance = 1e-3 };
	struct ft_err err = { 0 };

	o->start_ms = ft_mono_ms();
	atomic_store(&o->asking, 1);
	o->rc = ft_runner_evaluate(o->r, &job, 10000, &o->res, &err);
	o->end_ms = ft_mono_ms();
	return NULL;
}

static void open_two(struct ft_runner **a, struct ft_runner **b)
{
	struct ft_runner_cfg cfg = { .device = 0, .reference_path = "unused", .start_timeout_ms = 10000 };
	struct ft_err err = { 0 };

	fake_gpus_use("fast");
	assert_int_equal(ft_runner_open(a, "gpu", &cfg, &err), 0);
	assert_int_equal(ft_runner_open(b, "gpu", &cfg, &err), 0);
	assert_int_equal(ft_runner_info(*a)->device_index, 0);
	assert_int_equal(ft_runner_info(*b)->device_index, 0);
}

/* A holds the GPU; B's job waits until A lets go, while A's own jobs run
 * (a runner that holds does not wait for itself), and B's wait is its
 * FT_PH_SHARED. */
static void test_hold_keeps_the_other_waiting(void **state)
{
	struct ft_runner *a, *b;
	struct ft_job job = { .timing = 1, .tolerance = 1e-3 };
	struct ft_job_result res;
	struct ft_err err = { 0 };
	struct other o = { 0 };
	pthread_t t;
	double released;

	(void)state;
	open_two(&a, &b);
	o.r = b;
	assert_true(ft_runner_hold(a, 1) < 1.0);	/* nobody held it: no wait */
	assert_int_equal(pthread_create(&t, NULL, other_job, &o), 0);
	for (int i = 0; i < 4; i++) {	/* 4 x FAKE_FAST_MS of A's own jobs */
		assert_int_equal(ft_runner_evaluate(a, &job, 10000, &res, &err), 0);
		assert_int_equal(res.status, FT_ST_OK);
		assert_true(res.phase_ms[FT_PH_SHARED] == 0);
	}
	fake_sleep_ms(200);
	released = ft_mono_ms();
	assert_int_equal(ft_runner_hold(a, 0), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(o.rc, 0);
	assert_int_equal(o.res.status, FT_ST_OK);
	if (o.end_ms < released + FAKE_FAST_MS * 0.9)
		fail_msg("the other runner's job ended at %.0f ms, before the hold ended (%.0f ms) plus its %d ms",
			 o.end_ms - o.start_ms, released - o.start_ms, FAKE_FAST_MS);
	if (!(o.res.phase_ms[FT_PH_SHARED] >= released - o.start_ms - 50))
		fail_msg("the wait for the hold counted %.0f ms of %.0f", o.res.phase_ms[FT_PH_SHARED],
			 released - o.start_ms);
	/* let go: the next job of either runs at once */
	assert_int_equal(ft_runner_evaluate(b, &job, 10000, &res, &err), 0);
	assert_true(res.phase_ms[FT_PH_SHARED] == 0);
	ft_runner_close(a);
	ft_runner_close(b);
	fake_gpus_use(NULL);
}

/* Holding waits for the job the other runner is running, and says how long. */
static void test_hold_waits_for_a_running_job(void **state)
{
	struct ft_runner *a, *b;
	struct other o = { 0 };
	pthread_t t;
	double held;

	(void)state;
	open_two(&a, &b);
	o.r = b;
	assert_int_equal(pthread_create(&t, NULL, other_job, &o), 0);
	while (!atomic_load(&o.asking))
		fake_sleep_ms(1);
	fake_sleep_ms(FAKE_FAST_MS / 2);	/* B's job has the GPU now, half done */
	held = ft_runner_hold(a, 1);
	if (!(held > FAKE_FAST_MS / 10))
		fail_msg("the hold waited %.0f ms for a job of %d ms", held, FAKE_FAST_MS);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(ft_runner_hold(a, 1), 0);	/* held already: nothing to wait for */
	assert_int_equal(ft_runner_hold(a, 0), 0);
	ft_runner_close(a);
	ft_runner_close(b);
	fake_gpus_use(NULL);
}

/* A runner closed while it holds lets go of the GPU. */
static void test_close_lets_go(void **state)
{
	struct ft_runner *a, *b;
	struct other o = { 0 };
	pthread_t t;

	(void)state;
	open_two(&a, &b);
	o.r = b;
	ft_runner_hold(a, 1);
	ft_runner_close(a);
	assert_int_equal(pthread_create(&t, NULL, other_job, &o), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(o.rc, 0);
	assert_true(o.res.phase_ms[FT_PH_SHARED] == 0);
	ft_runner_close(b);
	fake_gpus_use(NULL);
}

int main(int argc, char **argv)
{
	int rc = fake_gpus_main(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_keeps_the_other_waiting),
		cmocka_unit_test(test_hold_waits_for_a_running_job),
		cmocka_unit_test(test_close_lets_go),
	};

	if (rc >= 0)
		return rc;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
