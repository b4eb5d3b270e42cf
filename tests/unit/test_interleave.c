/* test_interleave.c - candidates timed in round-robin rounds (run/interleave.c):
 * the order, the split of the samples, the pooled statistics, a drift that
 * falls on every candidate alike, the leaving rule (with priors: a burst of load does not make a
 * candidate leave), the close candidates' rounds alone, a verdict that is not ok,
 * and a runner's failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run/interleave.h"

/* A fake runner: candidate i (its job's seed) takes us[i] x the drift, which
 * grows by `drift` per sample taken in all (a GPU warming up); wrong[i]: its
 * verdict is wrong_result from its job number wrong_from on. */
struct fake {
	double us[4];
	double drift;
	int wrong[4];
	int fail_at;		/* job number at which run fails (-1: never) */
	int burst_job;		/* this job's samples (numbered from 1; 0: none) ... */
	double burst;		/* ... take this times longer (a process sharing the GPU) */
	long long taken;	/* samples so far, in all */
	int log[256], samples[256], warmup[256], quick[256];
	double cap[256];
	int nlog;
};

static int fake_run(void *ctx, const struct ft_job *job, struct ft_job_result *res, struct ft_err *err)
{
	struct fake *f = ctx;
	int i = (int)job->seed;

	if (f->nlog == f->fail_at)
		return ft_error(err, FT_EFAIL, "the worker died");
	f->log[f->nlog] = i;
	f->samples[f->nlog] = job->samples;
	f->warmup[f->nlog] = job->warmup;
	f->quick[f->nlog] = job->quick_samples;
	f->cap[f->nlog++] = job->sample_max_us;
	ft_job_result_init(res);
	if (f->wrong[i]) {
		res->status = FT_ST_WRONG_RESULT;
		snprintf(res->reason, sizeof(res->reason), "rel err 0.5");
		return 0;
	}
	res->rel_err = 1e-4 * (i + 1);
	res->max_abs_err = 1e-3;
	res->samples = job->samples;
	res->nraw = job->samples;
	for (int k = 0; k < job->samples; k++)
		res->raw_us[k] = (float)(f->us[i] * (1 + f->drift * (double)f->taken++) *
					 (f->nlog == f->burst_job ? f->burst : 1));
	res->t_median_us = res->raw_us[job->samples / 2];
	res->launches_per_sample = 20;
	res->verify_ms = 1;
	return 0;
}

static void jobs_of(struct ft_job *jobs, int n)
{
	memset(jobs, 0, (size_t)n * sizeof(*jobs));
	for (int i = 0; i < n; i++) {
		jobs[i].seed = (unsigned long long)i;
		jobs[i].samples = 30;
		jobs[i].warmup = 3;
		jobs[i].quick_samples = 3;
		jobs[i].stable_rel = 0.01;
	}
}

/* Round r starts at candidate r % n; each job gets ceil(samples / rounds)
 * samples, the cap and warm-up asked for, no quick cut and no early stop;
 * every candidate's samples are pooled. */
static void test_round_robin(void **state)
{
	struct fake f = { .us = { 10, 20, 30 }, .fail_at = -1 };
	struct ft_interleave_trace tr;
	struct ft_interleave_opts o = { .rounds = 5, .samples = 0, .sample_us = 800, .warmup = 1, .leave_over = 0,
					.trace = &tr };
	struct ft_job jobs[3];
	struct ft_job_result out[3];
	int rounds[3];
	long long n = 0;
	struct ft_err err = { 0 };

	(void)state;
	jobs_of(jobs, 3);
	assert_int_equal(ft_interleave(&o, jobs, 3, fake_run, &f, out, rounds, &n, &err), 0);
	assert_int_equal(n, 15);
	assert_int_equal(f.nlog, 15);
	for (int r = 0; r < 5; r++)
		for (int k = 0; k < 3; k++) {
			int j = r * 3 + k;
			assert_int_equal(f.log[j], (k + r) % 3);
			assert_int_equal(f.samples[j], 6);
			assert_int_equal(f.warmup[j], 1);
			assert_int_equal(f.quick[j], 0);
			assert_true(f.cap[j] == 800);
			/* the trace: where in the round each ran, and what it measured */
			assert_int_equal(tr.place[(k + r) % 3][r], k);
			assert_true(tr.median_us[(k + r) % 3][r] == f.us[(k + r) % 3]);
		}
	for (int r = 0; r < FT_INTERLEAVE_MAX_ROUNDS; r++) {
		assert_int_equal(tr.ran[r], r < 5 ? 3 : 0);
		assert_int_equal(tr.place[0][r] < 0, r >= 5);
		assert_true(isnan(tr.median_us[3][r]));		/* no candidate 3 */
	}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(out[i].status, FT_ST_OK);
		assert_int_equal(rounds[i], 5);
		assert_int_equal(out[i].samples, 30);
		assert_true(fabs(out[i].t_median_us - f.us[i]) < 1e-4);
		assert_true(out[i].rel_err == 1e-4 * (i + 1));
		assert_true(out[i].verify_ms == 5);
	}
	/* a job's own cap stands; opts.samples splits another count */
	o.samples = 7;
	o.rounds = 2;
	o.trace = NULL;
	jobs[0].sample_max_us = 100;
	f.nlog = 0;
	assert_int_equal(ft_interleave(&o, jobs, 1, fake_run, &f, out, NULL, NULL, &err), 0);
	assert_int_equal(f.nlog, 2);
	assert_true(f.cap[0] == 100);
	assert_int_equal(f.samples[0], 4);
	assert_int_equal(out[0].samples, 8);
}

/* Two equal candidates on a GPU whose times drift up 0.1 % per sample:
 * timed one after the other (one round) the second reads ~3 % slower;
 * interleaved in 10 rounds the medians are within 0.5 %. */
static void test_drift_falls_on_both(void **state)
{
	struct fake f = { .us = { 10, 10 }, .drift = 1e-3, .fail_at = -1 };
	struct ft_interleave_opts o = { .rounds = 1, .samples = 30, .sample_us = 0, .warmup = -1, .leave_over = 0 };
	struct ft_job jobs[2];
	struct ft_job_result out[2];
	struct ft_err err = { 0 };

	(void)state;
	jobs_of(jobs, 2);
	assert_int_equal(ft_interleave(&o, jobs, 2, fake_run, &f, out, NULL, NULL, &err), 0);
	assert_true(out[1].t_median_us / out[0].t_median_us > 1.025);
	f.taken = 0;
	o.rounds = 10;
	assert_int_equal(ft_interleave(&o, jobs, 2, fake_run, &f, out, NULL, NULL, &err), 0);
	assert_true(fabs(out[1].t_median_us / out[0].t_median_us - 1) < 0.005);
	assert_int_equal(out[0].samples, 30);
}

/* leave_over: after round 1 a candidate whose fastest sample is over it
 * times the fastest median leaves with that round's samples; 0: none. */
static void test_leave(void **state)
{
	struct fake f = { .us = { 10, 10.6, 10.2 }, .fail_at = -1 };
	struct ft_interleave_opts o = { .rounds = 3, .samples = 0, .sample_us = 0, .warmup = -1, .leave_over = 1.05 };
	struct ft_job jobs[3];
	struct ft_job_result out[3];
	int rounds[3];
	long long n;
	struct ft_err err = { 0 };

	(void)state;
	jobs_of(jobs, 3);
	assert_int_equal(ft_interleave(&o, jobs, 3, fake_run, &f, out, rounds, &n, &err), 0);
	assert_int_equal(n, 3 + 2 * 2);
	assert_int_equal(rounds[1], 1);
	assert_int_equal(out[1].status, FT_ST_OK);
	assert_int_equal(out[1].samples, 10);
	assert_int_equal(rounds[2], 3);
	o.leave_over = 0;
	assert_int_equal(ft_interleave(&o, jobs, 3, fake_run, &f, out, rounds, &n, &err), 0);
	assert_int_equal(n, 9);
	assert_int_equal(rounds[1], 3);
}

/* With priors (each candidate's earlier median), a burst of load during a
 * fast candidate's one job of the first round does not make it leave: the
 * faster of two (3.86 against 4.28 us) whose first-round job ran 1.2x slow
 * stays, and its pooled median over the rounds wins; without priors it
 * leaves with the slow round and loses (two concurrent searches on one GPU,
 * tests/gpu/015). A candidate that is behind in both still leaves. */
static void test_leave_prior(void **state)
{
	struct fake f = { .us = { 4.28, 3.86, 4.5 }, .fail_at = -1, .burst_job = 2, .burst = 1.2 };
	const double prior[3] = { 4.28, 3.86, 4.6 };
	struct ft_interleave_opts o = { .rounds = 3, .samples = 0, .sample_us = 0, .warmup = -1, .leave_over = 1.03 };
	struct ft_job jobs[3];
	struct ft_job_result out[3];
	int rounds[3];
	struct ft_err err = { 0 };

	(void)state;
	jobs_of(jobs, 3);
	assert_int_equal(ft_interleave(&o, jobs, 3, fake_run, &f, out, rounds, NULL, &err), 0);
	assert_int_equal(rounds[1], 1);	/* left with its slow round */
	assert_true(out[1].t_median_us > out[0].t_median_us);
	f.nlog = 0;
	f.taken = 0;
	o.prior = prior;
	assert_int_equal(ft_interleave(&o, jobs, 3, fake_run, &f, out, rounds, NULL, &err), 0);
	assert_int_equal(rounds[1], 3);
	assert_float_equal(out[1].t_median_us, 3.86, 1e-3);
	assert_true(out[1].t_median_us < out[0].t_median_us);
	assert_int_equal(rounds[2], 1);	/* 4.5 and 4.6 against 3.86 and 4.28: behind in both */
	assert_int_equal(rounds[0], 3);
}

/* A verdict that is not ok stands and ends that candidate's rounds; a
 * runner's failure ends the interleaving with its error; bad counts are
 * refused. */
static void test_not_ok_and_failure(void **state)
{
	struct fake f = { .us = { 10, 11 }, .wrong = { 0, 1 }, .fail_at = -1 };
	struct ft_interleave_opts o = { .rounds = 4, .samples = 0, .sample_us = 0, .warmup = -1, .leave_over = 0 };
	struct ft_job jobs[FT_INTERLEAVE_MAX + 1];
	struct ft_job_result out[FT_INTERLEAVE_MAX + 1];
	int rounds[2];
	struct ft_err err = { 0 };

	(void)state;
	jobs_of(jobs, FT_INTERLEAVE_MAX + 1);
	assert_int_equal(ft_interleave(&o, jobs, 2, fake_run, &f, out, rounds, NULL, &err), 0);
	assert_int_equal(out[1].status, FT_ST_WRONG_RESULT);
	assert_string_equal(out[1].reason, "rel err 0.5");
	assert_int_equal(rounds[1], 0);
	assert_int_equal(out[0].status, FT_ST_OK);
	assert_int_equal(f.nlog, 4 + 1);
	f.wrong[1] = 0;
	f.nlog = 0;
	f.fail_at = 3;
	assert_int_equal(ft_interleave(&o, jobs, 2, fake_run, &f, out, NULL, NULL, &err), -1);
	assert_string_equal(err.msg, "the worker died");
	assert_int_equal(ft_interleave(&o, jobs, FT_INTERLEAVE_MAX + 1, fake_run, &f, out, NULL, NULL, &err), -1);
	o.rounds = 0;
	assert_int_equal(ft_interleave(&o, jobs, 2, fake_run, &f, out, NULL, NULL, &err), -1);
}

/* FATUNE_RACE_FINAL_ORDER=spread (ft_interleave_opts.spread): with fewer
 * rounds than candidates, round r starts at candidate r x n / rounds, so
 * each candidate runs early, midway and late once; with as many rounds as
 * candidates or more, one later each round as without it. */
static void test_spread_order(void **state)
{
	struct fake f = { .us = { 10, 11, 12, 13 }, .fail_at = -1 };
	struct ft_interleave_trace tr;
	struct ft_interleave_opts o = { .rounds = 3, .samples = 0, .sample_us = 0, .warmup = -1, .leave_over = 0,
					.trace = &tr, .spread = 1 };
	struct ft_job jobs[4];
	struct ft_job_result out[4];
	struct ft_err err = { 0 };

	(void)state;
	assert_int_equal(ft_interleave_start(1, 1, 3, 16), 5);
	assert_int_equal(ft_interleave_start(1, 2, 3, 16), 10);
	assert_int_equal(ft_interleave_start(0, 2, 3, 16), 2);
	assert_int_equal(ft_interleave_start(1, 5, 10, 2), 1);	/* rounds >= n: one later */
	assert_int_equal(ft_interleave_start(1, 0, 3, 0), 0);
	jobs_of(jobs, 4);
	assert_int_equal(ft_interleave(&o, jobs, 4, fake_run, &f, out, NULL, NULL, &err), 0);
	assert_int_equal(f.nlog, 12);
	/* starts 0, 1 (4 / 3), 2 (8 / 3) */
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 4; k++)
			assert_int_equal(f.log[r * 4 + k], (k + r * 4 / 3) % 4);
	/* 6 candidates in 3 rounds: starts 0, 2, 4; candidate 0 at places 0, 4,
	 * 2, and each one early (places 0-1), midway and late (4-5) once */
	{
		struct ft_job six[6];
		struct ft_job_result out6[6];
		struct fake g = { .us = { 10, 10, 10, 10 }, .fail_at = -1 };

		memset(six, 0, sizeof(six));
		for (int i = 0; i < 6; i++) {
			six[i].seed = (unsigned long long)(i % 4);
			six[i].samples = 3;
		}
		assert_int_equal(ft_interleave(&o, six, 6, fake_run, &g, out6, NULL, NULL, &err), 0);
		assert_int_equal(tr.place[0][0], 0);
		assert_int_equal(tr.place[0][1], 4);
		assert_int_equal(tr.place[0][2], 2);
		for (int i = 0; i < 6; i++) {
			int early = 0, late = 0;

			for (int r = 0; r < 3; r++) {
				early += tr.place[i][r] < 2;
				late += tr.place[i][r] >= 4;
			}
			assert_int_equal(early, 1);
			assert_int_equal(late, 1);
		}
	}
}

/* close_rounds: after the rounds, the candidates within close_within of the
 * fastest pooled median (at most close_max, fastest first) run more rounds
 * alone, one later each, pooled with their earlier samples and traced as
 * rounds 4 on; the others keep their rounds; one close candidate alone runs
 * none. */
static void test_close_rounds(void **state)
{
	struct fake f = { .us = { 10.15, 10, 11, 10.1 }, .fail_at = -1 };
	struct ft_interleave_trace tr;
	struct ft_interleave_opts o = { .rounds = 3, .samples = 0, .sample_us = 0, .warmup = -1, .leave_over = 0,
					.trace = &tr, .close_rounds = 4, .close_within = 1.02, .close_max = 3 };
	struct ft_job jobs[4];
	struct ft_job_result out[4];
	int rounds[4];
	long long n;
	struct ft_err err = { 0 };
	const int order[4][3] = { { 1, 3, 0 }, { 3, 0, 1 }, { 0, 1, 3 }, { 1, 3, 0 } };

	(void)state;
	jobs_of(jobs, 4);
	assert_int_equal(ft_interleave(&o, jobs, 4, fake_run, &f, out, rounds, &n, &err), 0);
	assert_int_equal(n, 3 * 4 + 4 * 3);
	/* the close ones fastest first (10, 10.1, 10.15), each round one later */
	for (int r = 0; r < 4; r++)
		for (int k = 0; k < 3; k++)
			assert_int_equal(f.log[12 + r * 3 + k], order[r][k]);
	assert_int_equal(rounds[0], 7);
	assert_int_equal(rounds[1], 7);
	assert_int_equal(rounds[3], 7);
	assert_int_equal(rounds[2], 3);
	assert_int_equal(out[1].samples, 70);
	assert_int_equal(out[2].samples, 30);
	assert_float_equal(out[1].t_median_us, 10, 1e-4);
	assert_int_equal(tr.ran[3], 3);
	assert_int_equal(tr.place[1][3], 0);
	assert_int_equal(tr.place[1][4], 2);
	assert_int_equal(tr.place[2][3], -1);
	assert_float_equal(tr.median_us[3][6], 10.1, 1e-4);
	/* at most close_max: the two fastest */
	f.nlog = 0;
	o.close_max = 2;
	assert_int_equal(ft_interleave(&o, jobs, 4, fake_run, &f, out, rounds, &n, &err), 0);
	assert_int_equal(n, 3 * 4 + 4 * 2);
	assert_int_equal(rounds[0], 3);
	assert_int_equal(rounds[3], 7);
	/* one within 1.02x alone: no close round */
	f.nlog = 0;
	f.us[3] = f.us[0] = 10.5;
	assert_int_equal(ft_interleave(&o, jobs, 4, fake_run, &f, out, rounds, &n, &err), 0);
	assert_int_equal(n, 12);
	/* the rounds and the close ones beyond the trace's rounds are refused */
	o.close_rounds = FT_INTERLEAVE_MAX_ROUNDS;
	assert_int_equal(ft_interleave(&o, jobs, 4, fake_run, &f, out, rounds, &n, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_robin),
		cmocka_unit_test(test_spread_order),
		cmocka_unit_test(test_drift_falls_on_both),
		cmocka_unit_test(test_leave),
		cmocka_unit_test(test_leave_prior),
		cmocka_unit_test(test_close_rounds),
		cmocka_unit_test(test_not_ok_and_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
