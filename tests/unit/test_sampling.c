/* test_sampling.c - when a job's samples end (run/sampling.c): the median's
 * order-statistic interval, the quick samples' cut, the stable rule, and that
 * a job asking for neither takes every sample. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "run/sampling.h"

/* k of [x_(k), x_(n+1-k)] at coverage 0.9: the binomial tail by hand. */
static void test_ci_rank(void **state)
{
	(void)state;
	assert_int_equal(ft_median_ci_rank(1, 0.9), 0);
	assert_int_equal(ft_median_ci_rank(4, 0.9), 0);	/* 1 - 2/16 = 0.875 < 0.9 */
	assert_int_equal(ft_median_ci_rank(4, 0.85), 1);
	assert_int_equal(ft_median_ci_rank(3, 0.9), 0);	/* 1 - 2/8 = 0.75 */
	assert_int_equal(ft_median_ci_rank(5, 0.9), 1);	/* 1 - 2/32 = 0.9375 */
	assert_int_equal(ft_median_ci_rank(7, 0.9), 1);	/* k 2: 1 - 2 x 8/128 = 0.875 */
	assert_int_equal(ft_median_ci_rank(8, 0.9), 2);	/* k 2: 1 - 2 x 9/256 = 0.930 */
	assert_int_equal(ft_median_ci_rank(15, 0.9), 4);	/* k 4: 1 - 2 x 576/32768 = 0.965; k 5: 0.882 */
	assert_int_equal(ft_median_ci_rank(64, 0.9), 25);
	assert_int_equal(ft_median_ci_rank(65, 0.9), 0);	/* over FT_RAW_SAMPLES_MAX */
	/* the rank never passes the middle */
	for (int n = 1; n <= FT_RAW_SAMPLES_MAX; n++)
		assert_true(2 * ft_median_ci_rank(n, 0.5) <= n + 1);
}

static struct ft_job job_with(int quick, double line, double stable)
{
	struct ft_job j;

	memset(&j, 0, sizeof(j));
	j.samples = 15;
	j.quick_samples = quick;
	j.cut_above_us = line;
	j.stable_rel = stable;
	return j;
}

/* The cut: only right after the quick samples, on their min, never on NaN. */
static void test_cut(void **state)
{
	double us[] = { 12.0, 11.0, 13.0, 5.0 };
	double nan_us[] = { 12.0, NAN, 13.0 };
	struct ft_job j = job_with(3, 10.0, 0);

	(void)state;
	assert_int_equal(ft_samples_stop(&j, us, 1), FT_SAMPLES_ALL);
	assert_int_equal(ft_samples_stop(&j, us, 2), FT_SAMPLES_ALL);
	assert_int_equal(ft_samples_stop(&j, us, 3), FT_SAMPLES_CUT);	/* min 11 > 10 */
	assert_int_equal(ft_samples_stop(&j, us, 4), FT_SAMPLES_ALL);	/* only at the quick count */
	j.cut_above_us = 11.0;
	assert_int_equal(ft_samples_stop(&j, us, 3), FT_SAMPLES_ALL);	/* 11 is not over 11 */
	j.cut_above_us = 1.0;
	assert_int_equal(ft_samples_stop(&j, nan_us, 3), FT_SAMPLES_ALL);
	j.quick_samples = 0;	/* no quick pass asked: never cut */
	assert_int_equal(ft_samples_stop(&j, us, 3), FT_SAMPLES_ALL);
}

/* Stable: 5 samples at least, the interval's width against the median. */
static void test_stable(void **state)
{
	double tight[] = { 100.0, 100.4, 100.2, 100.1, 100.3, 100.0, 100.0, 100.0 };
	double wide[] = { 100.0, 103.0, 100.2, 100.1, 100.3, 101.0, 100.2, 100.1 };
	struct ft_job j = job_with(0, 0, 0.01);

	(void)state;
	assert_int_equal(ft_samples_stop(&j, tight, 4), FT_SAMPLES_ALL);	/* fewer than 5 */
	assert_int_equal(ft_samples_stop(&j, tight, 5), FT_SAMPLES_STABLE);
	/* 3 % between min and max: not with 5, 6 or 7 samples ([min, max]) */
	for (int n = 5; n <= 7; n++)
		assert_int_equal(ft_samples_stop(&j, wide, n), FT_SAMPLES_ALL);
	/* with 8, [x_(2), x_(7)] = [100.1, 101.0]: 0.9 % */
	assert_int_equal(ft_samples_stop(&j, wide, 8), FT_SAMPLES_STABLE);
	j.stable_rel = 0.005;
	assert_int_equal(ft_samples_stop(&j, wide, 8), FT_SAMPLES_ALL);
	assert_int_equal(ft_samples_stop(&j, tight, 5), FT_SAMPLES_STABLE);	/* 0.4 % */
	j.stable_rel = 0;	/* off: every sample */
	assert_int_equal(ft_samples_stop(&j, tight, 8), FT_SAMPLES_ALL);
	/* the cut comes first when both could end the quick samples */
	j = job_with(5, 50.0, 0.01);
	assert_int_equal(ft_samples_stop(&j, tight, 5), FT_SAMPLES_CUT);
	j.cut_above_us = 200.0;
	assert_int_equal(ft_samples_stop(&j, tight, 5), FT_SAMPLES_STABLE);
}

/* How far a back-to-back loop queues: the quick samples at once and never
 * past them (a cut candidate runs no extra sample), then up to the first
 * stable check, then one ahead; everything (within `ahead`) when the job
 * asks for no early end; always at least one more, never past planned. A
 * simulated loop that queues as told and stops where ft_samples_stop says
 * takes the quick samples exactly when cut and at most one more sample than
 * the stop needed otherwise. */
static void test_queue(void **state)
{
	struct ft_job race = job_with(3, 10.0, 0.01), plain = job_with(0, 0, 0);

	(void)state;
	assert_int_equal(ft_samples_queue(&race, 0, 15, 6), 3);
	assert_int_equal(ft_samples_queue(&race, 2, 15, 6), 3);
	assert_int_equal(ft_samples_queue(&race, 3, 15, 6), FT_SAMPLES_STABLE_MIN);
	assert_int_equal(ft_samples_queue(&race, 4, 15, 6), 6);
	assert_int_equal(ft_samples_queue(&race, 9, 15, 6), 11);
	assert_int_equal(ft_samples_queue(&race, 14, 15, 6), 15);
	assert_int_equal(ft_samples_queue(&race, 1, 2, 6), 2); /* planned caps the quick count */
	assert_int_equal(ft_samples_queue(&race, 0, 15, 1), 1); /* ahead caps it */
	assert_int_equal(ft_samples_queue(&plain, 0, 30, 6), 6);
	assert_int_equal(ft_samples_queue(&plain, 27, 30, 6), 30);
	race.stable_rel = 0; /* quick only: the rest at once */
	assert_int_equal(ft_samples_queue(&race, 3, 15, 20), 15);
	race.stable_rel = 0.01;
	/* the loop of evaluate.c, on made-up samples */
	for (int kind = 0; kind < 3; kind++) {
		/* 0: cut (all over the line); 1: stable at 5 (equal); 2: never stable */
		double us[15];
		int done = 0, queued = 0, stopped_at = 0;
		enum ft_samples_stop stop = FT_SAMPLES_ALL;

		for (int i = 0; i < 15; i++)
			us[i] = kind == 0 ? 12.0 : kind == 1 ? 5.0 : 5.0 + (i % 2);
		while (done < 15) {
			int upto = stop != FT_SAMPLES_ALL ? queued : ft_samples_queue(&race, done, 15, 6);

			assert_true(upto > done || stop != FT_SAMPLES_ALL);
			if (upto > queued)
				queued = upto;
			if (done == queued)
				break;
			done++;
			if (stop == FT_SAMPLES_ALL && (stop = ft_samples_stop(&race, us, done)) != FT_SAMPLES_ALL)
				stopped_at = done;
		}
		if (kind == 0) {
			assert_int_equal(stop, FT_SAMPLES_CUT);
			assert_int_equal(done, 3);
		} else if (kind == 1) {
			assert_int_equal(stop, FT_SAMPLES_STABLE);
			assert_int_equal(stopped_at, FT_SAMPLES_STABLE_MIN);
			assert_int_equal(done, stopped_at + 1);
		} else {
			assert_int_equal(stop, FT_SAMPLES_ALL);
			assert_int_equal(done, 15);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ci_rank),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_stable),
		cmocka_unit_test(test_queue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
