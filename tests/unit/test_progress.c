/* test_progress.c - the progress display's ETA (progress.c): of one search from
 * the candidates that cost time, and of a whole campaign from its units and their parts, with
 * the clock given by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "ui/progress.h"

/* Counts n finished candidates of the given status. */
static void finish_as(struct ft_progress *p, int n, enum ft_status status)
{
	struct ft_trial t;

	ft_trial_init(&t);
	t.status = status;
	for (int i = 0; i < n; i++)
		ft_progress_add(p, &t, 0);
}

static void finish(struct ft_progress *p, int n)
{
	finish_as(p, n, FT_ST_COMPILED);
}

static void test_eta_of_one_search(void **state)
{
	struct ft_progress p;

	(void)state;
	ft_progress_init(&p, FT_PROGRESS_QUIET, 100);
	assert_true(ft_progress_eta_s(&p, p.t0_ms + 1000) < 0);	/* nothing done yet */
	finish(&p, 25);
	/* 25 in 2 s: 75 more take 6 s */
	assert_true(fabs(ft_progress_eta_s(&p, p.t0_ms + 2000) - 6.0) < 1e-9);
}

/* Rejections by the model cost nothing: 900 of 1000 rejected and 25 of the
 * other 100 done in 2 s leave 6 s, not a fraction of a second. */
static void test_eta_ignores_rejections(void **state)
{
	struct ft_progress p;

	(void)state;
	ft_progress_init(&p, FT_PROGRESS_QUIET, 1000);
	finish_as(&p, 900, FT_ST_REJECTED_CONSTRAINT);
	assert_true(ft_progress_eta_s(&p, p.t0_ms + 1000) < 0);
	finish(&p, 25);
	assert_true(fabs(ft_progress_eta_s(&p, p.t0_ms + 2000) - 6.0) < 1e-9);
}

/* The ETA is the campaign's, not the unit's: 4 units, the second half done
 * after 3 s is 1.5 units in 3 s, so 2.5 units take 5 s more. */
static void test_eta_of_a_campaign(void **state)
{
	struct ft_progress p;
	double t0;

	(void)state;
	ft_progress_init(&p, FT_PROGRESS_QUIET, 0);
	ft_progress_unit(&p, "1/4", 0, 4, 0, 1, 10);
	t0 = p.campaign_t0_ms;
	finish(&p, 10);
	ft_progress_unit(&p, "2/4", 1, 4, 0, 1, 10);
	assert_true(p.campaign_t0_ms == t0);	/* a new unit keeps the campaign's start */
	finish(&p, 5);
	assert_true(fabs(ft_progress_eta_s(&p, t0 + 3000) - 5.0) < 1e-9);
}

/* A unit searched in 2 parts (two spaces): the second part half done is 3/4
 * of the unit; in a 2-unit campaign that is 3/8 done. */
static void test_eta_counts_parts(void **state)
{
	struct ft_progress p;
	double t0;

	(void)state;
	ft_progress_init(&p, FT_PROGRESS_QUIET, 0);
	ft_progress_unit(&p, "1/2", 0, 2, 0, 2, 8);
	t0 = p.campaign_t0_ms;
	finish(&p, 8);
	ft_progress_unit(&p, "1/2", 0, 2, 1, 2, 8);
	assert_true(p.campaign_t0_ms == t0);	/* the unit's second part keeps it too */
	finish(&p, 4);
	/* 3/8 in 3 s: 5/8 take 5 s */
	assert_true(fabs(ft_progress_eta_s(&p, t0 + 3000) - 5.0) < 1e-9);
	/* a single search of one unit: the search's own ETA */
	ft_progress_unit(&p, "", 0, 1, 0, 1, 10);
	finish(&p, 5);
	assert_true(fabs(ft_progress_eta_s(&p, p.t0_ms + 1000) - 1.0) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eta_of_one_search),
		cmocka_unit_test(test_eta_ignores_rejections),
		cmocka_unit_test(test_eta_of_a_campaign),
		cmocka_unit_test(test_eta_counts_parts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
