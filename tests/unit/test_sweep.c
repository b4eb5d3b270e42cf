/* test_sweep.c - several candidates in one job, one sample of each in turn (run/sweep.c): the
 * order and its rotation (every place taken alike), a drift that falls on all of them alike
 * where rounds of jobs would not, the leaving rule after round 1, a verdict that is not ok, the
 * checks on what a sweep takes, and a runner's failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/sweep.h"

/* A fake runner: candidate i (its config "c<i>") takes us[i] x the drift, which grows by
 * `drift` per sample taken in all; wrong[i]: wrong_result. */
struct fake {
	double us[FT_SWEEP_MAX];
	double drift;
	int wrong[FT_SWEEP_MAX];
	int fail_at;		/* job number at which run fails (-1: never) */
	long long taken;
	int log[1024];
	double heat[1024];
	int nlog;
};

static int fake_run(void *ctx, const struct ft_job *job, struct ft_job_result *res,
		    struct ft_err *err)
{
	struct fake *f = ctx;
	int i = atoi(job->config + 1);

	if (f->nlog == f->fail_at)
		return ft_error(err, FT_EFAIL, "the worker died");
	assert_int_equal(job->samples, 1);
	f->heat[f->nlog] = job->heat_ms;
	f->log[f->nlog++] = i;
	ft_job_result_init(res);
	if (f->wrong[i]) {
		res->status = FT_ST_WRONG_RESULT;
		snprintf(res->reason, sizeof(res->reason), "rel err 0.5");
		return 0;
	}
	res->rel_err = 1e-4;
	res->max_abs_err = 1e-3;
	res->samples = res->nraw = 1;
	res->raw_us[0] = (float)(f->us[i] * (1 + f->drift * (double)f->taken++));
	res->t_median_us = res->raw_us[0];
	return 0;
}

static struct ft_sweep *make(int n, int rounds, int per_round)
{
	struct ft_sweep *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	g->n = n;
	g->rounds = rounds;
	g->per_round = per_round;
	for (int i = 0; i < n; i++) {
		snprintf(g->jobs[i].config, sizeof(g->jobs[i].config), "c%d", i);
		g->jobs[i].timing = 1;
		g->jobs[i].samples = rounds * per_round;
		g->jobs[i].seed = 7;
		g->prior[i] = NAN;
	}
	return g;
}

/* Each sweep holds every candidate once; sweep k starts k later, so over n
 * sweeps each candidate takes each place once; the trace names each one's
 * place in its round's first sweep */
static void test_order(void **state)
{
	struct ft_sweep *g = make(4, 3, 4);
	struct ft_sweep_result *out = malloc(sizeof(*out));
	struct ft_sweep_state s;
	int seq[FT_SWEEP_MAX * FT_RAW_SAMPLES_MAX], places[4][4] = { { 0 } };

	ft_sweep_begin(&s, g, out);
	for (int r = 0; r < 3; r++) {
		int t = ft_sweep_round(&s, r, seq);

		assert_int_equal(t, 16);
		assert_int_equal(out->ran[r], 4);
		for (int k = 0; k < 4; k++) {
			int seen = 0;

			for (int j = 0; j < 4; j++) {
				seen |= 1 << seq[4 * k + j];
				places[seq[4 * k + j]][j]++;
			}
			assert_int_equal(seen, 0xf);			/* each once a sweep */
			assert_int_equal(seq[4 * k], (r * 4 + k) % 4);	/* one later each sweep */
		}
		for (int i = 0; i < 4; i++)
			assert_int_equal(seq[out->place[i][r]], i);
		for (int k = 0; k < t; k++)
			ft_sweep_take(&s, seq[k], 10.0 + seq[k]);
		ft_sweep_round_end(&s, r);
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			assert_int_equal(places[i][j], 3);
	ft_sweep_finish(&s);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(out->res[i].status, FT_ST_OK);
		assert_int_equal(out->res[i].samples, 12);
		assert_int_equal(out->res[i].nraw, 12);
		assert_true(out->res[i].t_median_us == 10.0 + i);
		assert_int_equal(out->rounds[i], 3);
		assert_true(out->median_us[i][2] == 10.0 + i);
	}
	free(g);
	free(out);
}

/* Tied candidates on a GPU drifting 1 % a sample: swept, their medians stay
 * within one sweep's drift of each other (n - 1 samples); timed one after
 * another, as rounds of jobs time them within a round, the last would be
 * per_round x n samples behind */
static void test_drift_falls_alike(void **state)
{
	struct fake f = { .drift = 0.01, .fail_at = -1 };
	struct ft_sweep *g = make(4, 3, 5);
	struct ft_sweep_result *out = malloc(sizeof(*out));
	struct ft_err err = { 0 };
	double lo = INFINITY, hi = 0;

	for (int i = 0; i < 4; i++)
		f.us[i] = 100;
	assert_int_equal(ft_sweep_by_jobs(g, fake_run, &f, out, &err), 0);
	assert_int_equal(out->failed, 0);
	assert_int_equal(f.nlog, 60);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(out->res[i].status, FT_ST_OK);
		assert_int_equal(out->res[i].samples, 15);
		lo = fmin(lo, out->res[i].t_median_us);
		hi = fmax(hi, out->res[i].t_median_us);
	}
	assert_true(hi / lo - 1 <= 3 * 0.01 / (1 + 0.01 * 28) + 1e-9);
	free(g);
	free(out);
}

/* The heat goes with the first sample's job only */
static void test_heat_first(void **state)
{
	struct fake f = { .fail_at = -1 };
	struct ft_sweep *g = make(2, 1, 2);
	struct ft_sweep_result *out = malloc(sizeof(*out));
	struct ft_err err = { 0 };

	f.us[0] = f.us[1] = 50;
	g->heat_ms = 100;
	assert_int_equal(ft_sweep_by_jobs(g, fake_run, &f, out, &err), 0);
	assert_int_equal(f.nlog, 4);
	assert_true(f.heat[0] == 100);
	for (int k = 1; k < 4; k++)
		assert_true(f.heat[k] == 0);
	free(g);
	free(out);
}

/* After round 1, a candidate whose fastest sample is over leave_over x the
 * fastest median leaves, with its round-1 samples; with priors only when its
 * prior is as far behind */
static void test_leaving(void **state)
{
	struct fake f = { .fail_at = -1 };
	struct ft_sweep *g = make(3, 3, 5);
	struct ft_sweep_result *out = malloc(sizeof(*out));
	struct ft_err err = { 0 };

	f.us[0] = 100;
	f.us[1] = 101;
	f.us[2] = 110;
	g->leave_over = 1.03;
	assert_int_equal(ft_sweep_by_jobs(g, fake_run, &f, out, &err), 0);
	assert_int_equal(out->rounds[0], 3);
	assert_int_equal(out->rounds[1], 3);
	assert_int_equal(out->rounds[2], 1);
	assert_int_equal(out->res[2].samples, 5);
	assert_int_equal(out->res[2].status, FT_ST_OK);
	assert_true(out->res[2].t_median_us == 110);
	assert_int_equal(out->ran[1], 2);
	assert_int_equal(out->place[2][1], -1);
	assert_true(isnan(out->median_us[2][1]));
	/* its prior was close to the fastest's: it stays */
	f = (struct fake){ .fail_at = -1, .us = { 100, 101, 110 } };
	g->has_prior = 1;
	g->prior[0] = 100;
	g->prior[1] = 101;
	g->prior[2] = 101;
	assert_int_equal(ft_sweep_by_jobs(g, fake_run, &f, out, &err), 0);
	assert_int_equal(out->rounds[2], 3);
	assert_int_equal(out->res[2].samples, 15);
	free(g);
	free(out);
}

/* A candidate whose verdict is not ok keeps it and is timed no more; the
 * others are measured in full */
static void test_verdict(void **state)
{
	struct fake f = { .fail_at = -1, .us = { 20, 30, 40 } };
	struct ft_sweep *g = make(3, 3, 5);
	struct ft_sweep_result *out = malloc(sizeof(*out));
	struct ft_err err = { 0 };
	int runs1 = 0;

	f.wrong[1] = 1;
	assert_int_equal(ft_sweep_by_jobs(g, fake_run, &f, out, &err), 0);
	assert_int_equal(out->res[1].status, FT_ST_WRONG_RESULT);
	assert_string_equal(out->res[1].reason, "rel err 0.5");
	assert_true(isnan(out->res[1].t_median_us));
	for (int k = 0; k < f.nlog; k++)
		runs1 += f.log[k] == 1;
	assert_int_equal(runs1, 1);
	assert_int_equal(out->res[0].samples, 15);
	assert_int_equal(out->res[2].samples, 15);
	assert_true(out->res[2].t_median_us == 40);
	free(g);
	free(out);
}

/* What a sweep does not take is answered failed, never run; a runner's
 * failure is the caller's error */
static void test_refusals(void **state)
{
	struct fake f = { .fail_at = -1 };
	struct ft_sweep *g = make(2, 3, 5);
	struct ft_sweep_result *out = malloc(sizeof(*out));
	struct ft_err err = { 0 };
	char why[256];

	assert_int_equal(ft_sweep_valid(g, why, sizeof(why)), 1);
	g->jobs[1].seed = 8;
	assert_int_equal(ft_sweep_by_jobs(g, fake_run, &f, out, &err), 0);
	assert_int_equal(out->failed, 1);
	assert_non_null(strstr(out->why, "one shape and seed"));
	assert_int_equal(f.nlog, 0);
	g->jobs[1].seed = 7;
	g->jobs[0].cold = 1;
	assert_int_equal(ft_sweep_valid(g, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "warm jobs only"));
	g->jobs[0].cold = 0;
	g->per_round = 30;	/* 90 samples: over FT_RAW_SAMPLES_MAX */
	assert_int_equal(ft_sweep_valid(g, why, sizeof(why)), 0);
	g->per_round = 5;
	g->n = FT_SWEEP_MAX + 1;
	assert_int_equal(ft_sweep_valid(g, why, sizeof(why)), 0);
	g->n = 2;
	g->leave_over = 0.5;
	assert_int_equal(ft_sweep_valid(g, why, sizeof(why)), 0);
	g->leave_over = 0;
	f.fail_at = 3;
	assert_int_equal(ft_sweep_by_jobs(g, fake_run, &f, out, &err), -1);
	assert_non_null(strstr(err.msg, "died"));
	free(g);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_drift_falls_alike),
		cmocka_unit_test(test_heat_first),
		cmocka_unit_test(test_leaving),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
