/* test_race.c - racing (search/race.c) against an in-process runner: what is
 * cut and what is measured in full, that a wrong-but-fast candidate stays
 * wrong, that a cut one is never ok and never moves the cut line, the
 * finalists kept, and the final's round-robin order and pooled statistics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/sampling.h"
#include "run/verify.h"
#include "search/race.h"

/* The fake GPU: job.grid[0] names a candidate, whose samples and verdict are
 * below; each call is logged. A job takes its samples as the GPU worker
 * does (run/sampling.h: the quick ones first, then until stable or all). */
struct cand {
	double us;		/* the first sample's time */
	int wrong;		/* wrong_result, however fast */
	double step;		/* sample i is us * (1 + step i); 0: 0.001 */
};

struct fake {
	struct cand c[8];
	int log[64], nlog;	/* candidates in the order run */
	int quick[64];		/* 1 for a job with a quick pass (either form) */
	double cap[64];		/* the job's sample_max_us */
	int warmup[64];		/* the job's warm-up launches */
	double line[64];	/* the job's cut_above_us */
	double heat[64];	/* the job's heat_ms */
	int fail_at;		/* the call that fails as fatune's own error, -1: none */
	double slow;		/* > 0: every time this much longer (a GPU whose clocks fell) */
};

static int fake_run(void *ctx, const struct ft_job *job, struct ft_job_result *res,
		    struct ft_err *err)
{
	struct fake *f = ctx;
	const struct cand *c = &f->c[job->grid[0]];
	double us[FT_RAW_SAMPLES_MAX], step = c->step > 0 ? c->step : 0.001;
	double base = c->us * (f->slow > 0 ? f->slow : 1);
	int n = 0;

	if (f->nlog == f->fail_at)
		return ft_error(err, FT_EFAIL, "the worker cannot start");
	f->quick[f->nlog] = job->quick_samples > 0 || job->samples == FT_RACE_QUICK_SAMPLES;
	f->cap[f->nlog] = job->sample_max_us;
	f->warmup[f->nlog] = job->warmup;
	f->line[f->nlog] = job->cut_above_us;
	f->heat[f->nlog] = job->heat_ms;
	f->log[f->nlog++] = (int)job->grid[0];
	ft_job_result_init(res);
	/* phase times that say which job they came from: 1 ms load, a ms a sample */
	res->phase_ms[FT_PH_LOAD] = 1;
	res->verify_ms = 0.5;
	if (c->wrong) {
		res->status = FT_ST_WRONG_RESULT;
		snprintf(res->reason, sizeof(res->reason), "relative L2 error 0.5 exceeds the tolerance");
		res->rel_err = 0.5;
		return 0;
	}
	while (n < job->samples && n < FT_RAW_SAMPLES_MAX) {
		us[n] = base * (1 + step * n);
		res->phase_ms[n < job->quick_samples ? FT_PH_QUICK : FT_PH_SAMPLES] += 1;
		if ((res->stop = (int)ft_samples_stop(job, us, ++n)) != FT_SAMPLES_ALL)
			break;
	}
	res->rel_err = 3e-4;
	res->max_abs_err = 1e-3;
	res->samples = n;
	res->launches_per_sample = 20;
	res->nraw = n;
	for (int i = 0; i < n; i++)
		res->raw_us[i] = (float)us[i];
	res->t_min_us = base;
	res->t_median_us = base * (1 + step * (n / 2));
	res->t_p90_us = base * (1 + step * (n - 1));
	res->t_spread = step * (n - 1);
	return 0;
}

static void job_of(struct ft_job *job, int cand)
{
	memset(job, 0, sizeof(*job));
	job->grid[0] = cand;
	job->timing = 1;
	job->samples = 15;
	job->warmup = 3;
}

static struct ft_race *race_as(double margin, int finalists, double stable, int two_jobs)
{
	struct ft_race_opts o;
	struct ft_race *rc;

	ft_race_defaults(&o);
	o.margin = margin;
	o.finalists = finalists;
	o.stable = stable;
	o.two_jobs = two_jobs;
	o.anchor_ms = 0;	/* no clock in these tests: test_anchor_drift times the anchor */
	rc = ft_race_new(&o);
	assert_non_null(rc);
	return rc;
}

/* The race as a search runs it by default: one job per candidate, stable 1 %. */
static struct ft_race *race(double margin, int finalists)
{
	return race_as(margin, finalists, FT_RACE_STABLE, 0);
}

static enum ft_status eval(struct ft_race *rc, struct fake *f, int cand, struct ft_job_result *res)
{
	struct ft_job job;
	struct ft_err err = { 0 };

	job_of(&job, cand);
	assert_int_equal(ft_race_evaluate(rc, &job, fake_run, f, res, &err), 0);
	return res->status;
}

static void test_defaults(void **state)
{
	struct ft_race_opts o;
	int on = -1;
	struct ft_err err = { 0 };

	(void)state;
	ft_race_defaults(&o);
	assert_int_equal(o.on, 1);
	assert_true(o.margin > 1.0 && o.margin < 1.5);
	assert_true(o.quick_samples >= 1 && o.quick_samples < 15);
	assert_true(o.finalists >= 2 && o.finalists <= FT_RACE_MAX_FINALISTS);
	if (!getenv("FATUNE_RACE_ANCHOR_MS"))
		assert_true(o.anchor_ms == 0);	/* off until measured on a GPU (race.h) */
	setenv("FATUNE_RACE_ANCHOR_MS", "", 1);	/* empty: off, not a period of 0 parsed */
	ft_race_defaults(&o);
	assert_true(o.anchor_ms == 0);
	setenv("FATUNE_RACE_ANCHOR_MS", "250", 1);
	ft_race_defaults(&o);
	assert_true(o.anchor_ms == 250);
	setenv("FATUNE_RACE_ANCHOR_MS", "25O", 1);
	ft_race_defaults(&o);
	assert_true(o.anchor_ms == 0);
	unsetenv("FATUNE_RACE_ANCHOR_MS");
	unsetenv("FATUNE_RACE_HEAT_MS");
	ft_race_defaults(&o);
	assert_true(o.heat_ms == FT_RACE_HEAT_MS);
	setenv("FATUNE_RACE_HEAT_MS", "0", 1);	/* off */
	ft_race_defaults(&o);
	assert_true(o.heat_ms == 0);
	setenv("FATUNE_RACE_HEAT_MS", "5000", 1);	/* out of range: the default */
	ft_race_defaults(&o);
	assert_true(o.heat_ms == FT_RACE_HEAT_MS);
	unsetenv("FATUNE_RACE_HEAT_MS");
	unsetenv("FATUNE_RACE_ROUNDS");
	ft_race_defaults(&o);
	assert_int_equal(o.rounds, FT_RACE_ROUNDS);
	setenv("FATUNE_RACE_ROUNDS", "5", 1);
	ft_race_defaults(&o);
	assert_int_equal(o.rounds, 5);
	/* not a count of 1..FT_RACE_ROUNDS_MAX: the default */
	setenv("FATUNE_RACE_ROUNDS", "0", 1);
	ft_race_defaults(&o);
	assert_int_equal(o.rounds, FT_RACE_ROUNDS);
	setenv("FATUNE_RACE_ROUNDS", "2.5", 1);
	ft_race_defaults(&o);
	assert_int_equal(o.rounds, FT_RACE_ROUNDS);
	setenv("FATUNE_RACE_ROUNDS", "17", 1);
	ft_race_defaults(&o);
	assert_int_equal(o.rounds, FT_RACE_ROUNDS);
	unsetenv("FATUNE_RACE_ROUNDS");
	/* the final is one sweep unless FATUNE_RACE_FINAL=rounds */
	unsetenv("FATUNE_RACE_FINAL");
	ft_race_defaults(&o);
	assert_int_equal(o.sweep, 1);
	setenv("FATUNE_RACE_FINAL", "rounds", 1);
	ft_race_defaults(&o);
	assert_int_equal(o.sweep, 0);
	setenv("FATUNE_RACE_FINAL", "sweep", 1);
	ft_race_defaults(&o);
	assert_int_equal(o.sweep, 1);
	unsetenv("FATUNE_RACE_FINAL");
	assert_int_equal(ft_race_parse("off", &on, &err), 0);
	assert_int_equal(on, 0);
	assert_int_equal(ft_race_parse("on", &on, &err), 0);
	assert_int_equal(on, 1);
	assert_int_equal(ft_race_parse("yes", &on, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "'yes'"));
}

/* The first candidate is measured in full (nothing to race against), until
 * its median is stable; then one job each: the quick samples, over the line
 * the job ends there and is cut with its quick numbers, under it the same job
 * goes on to a full measurement. */
static void test_cut_and_full(void **state)
{
	struct fake f = { .c = { { 0 }, { 10.0, 0, 0 }, { 20.0, 0, 0 }, { 11.0, 0, 0 }, { 11.5, 0, 0 },
				 { 10.5, 0, 0.01 } },
			  .fail_at = -1 };
	struct ft_race *rc = race(1.15, 4);
	struct ft_job_result res;
	struct ft_race_stats st;

	(void)state;
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_OK);
	assert_int_equal(f.nlog, 1);
	assert_int_equal(f.quick[0], 0);
	assert_true(f.cap[0] == FT_RACE_SAMPLE_US); /* short full samples */
	assert_int_equal(f.warmup[0], 3);	/* no quick pass before: the search's warm-up */
	/* 0.1 % apart: [min, max] of 5 is 0.4 % wide, under 1 % */
	assert_int_equal(res.samples, FT_SAMPLES_STABLE_MIN);
	assert_int_equal(res.stop, FT_SAMPLES_STABLE);

	/* 20 us > 1.15 x 10.02: the job ends after its quick samples, cut */
	assert_int_equal(eval(rc, &f, 2, &res), FT_ST_CUT);
	assert_int_equal(f.nlog, 2);
	assert_int_equal(f.quick[1], 1);
	assert_true(fabs(f.line[1] - 1.15 * 10.02) < 1e-9); /* the line as it was sent */
	assert_int_equal(f.warmup[1], 1);
	assert_int_equal(res.samples, FT_RACE_QUICK_SAMPLES);
	assert_true(res.t_min_us == 20.0);
	assert_non_null(strstr(res.reason, "raced out"));
	assert_non_null(strstr(res.reason, "1.15x"));
	assert_true(res.phase_ms[FT_PH_QUICK] == FT_RACE_QUICK_SAMPLES);
	assert_true(res.phase_ms[FT_PH_SAMPLES] == 0);

	/* 11 us is within the margin: the same job goes on, one load, one verify */
	assert_int_equal(eval(rc, &f, 3, &res), FT_ST_OK);
	assert_int_equal(f.nlog, 3);
	assert_int_equal(res.samples, FT_SAMPLES_STABLE_MIN);
	assert_true(res.phase_ms[FT_PH_QUICK] == FT_RACE_QUICK_SAMPLES);
	assert_true(res.phase_ms[FT_PH_SAMPLES] == FT_SAMPLES_STABLE_MIN - FT_RACE_QUICK_SAMPLES);
	assert_true(res.phase_ms[FT_PH_LOAD] == 1);
	assert_true(res.verify_ms == 0.5);

	/* 1 % apart: never stable, so every one of the search's 15 samples */
	assert_int_equal(eval(rc, &f, 5, &res), FT_ST_OK);
	assert_int_equal(res.samples, 15);
	assert_int_equal(res.stop, FT_SAMPLES_ALL);

	/* the line is 1.15 x the best *full* median: 11.5 is under it */
	assert_int_equal(eval(rc, &f, 4, &res), FT_ST_OK);
	ft_race_stats(rc, &st);
	assert_int_equal(st.quick, 4);
	assert_int_equal(st.full, 4);
	assert_int_equal(st.stable, 3);
	assert_int_equal(st.cut, 1);
	ft_race_free(rc);
}

/* --race-stable 0: a full measurement takes all the search's samples. */
static void test_stable_off(void **state)
{
	struct fake f = { .c = { { 0 }, { 10.0, 0, 0 }, { 11.0, 0, 0 } }, .fail_at = -1 };
	struct ft_race *rc = race_as(1.15, 4, 0, 0);
	struct ft_job_result res;

	(void)state;
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_OK);
	assert_int_equal(res.samples, 15);
	assert_int_equal(eval(rc, &f, 2, &res), FT_ST_OK);
	assert_int_equal(f.nlog, 2);
	assert_int_equal(res.samples, 15);
	assert_int_equal(res.stop, FT_SAMPLES_ALL);
	ft_race_free(rc);
}

/* FATUNE_RACE_JOBS=2, the race's first form: the quick pass and the full
 * measurement as two jobs, the cut decided between them. */
static void test_two_jobs(void **state)
{
	struct fake f = { .c = { { 0 }, { 10.0, 0, 0 }, { 20.0, 0, 0 }, { 11.0, 0, 0 }, { 11.5, 0, 0 } },
			  .fail_at = -1 };
	struct ft_race *rc = race_as(1.15, 4, 0, 1);
	struct ft_job_result res;
	struct ft_race_stats st;

	(void)state;
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_OK);
	assert_int_equal(f.nlog, 1);
	assert_int_equal(res.samples, 15);

	assert_int_equal(eval(rc, &f, 2, &res), FT_ST_CUT);
	assert_int_equal(f.nlog, 2);
	assert_int_equal(f.quick[1], 1);
	assert_int_equal(res.samples, FT_RACE_QUICK_SAMPLES);
	assert_non_null(strstr(res.reason, "raced out"));
	assert_true(res.phase_ms[FT_PH_QUICK] == FT_RACE_QUICK_SAMPLES);
	assert_true(res.phase_ms[FT_PH_SAMPLES] == 0);

	/* 11 us is within the margin: quick, then a second, full job */
	assert_int_equal(eval(rc, &f, 3, &res), FT_ST_OK);
	assert_int_equal(f.nlog, 4);
	assert_int_equal(f.quick[2], 1);
	assert_int_equal(f.quick[3], 0);
	assert_true(f.cap[3] == FT_RACE_SAMPLE_US);
	assert_int_equal(f.warmup[2], 1);		/* quick */
	assert_int_equal(f.warmup[3], FT_RACE_WARMUP);	/* full, right after it */
	assert_int_equal(res.samples, 15);
	/* the candidate's phases are both jobs': the quick pass's are not lost */
	assert_true(res.phase_ms[FT_PH_QUICK] == FT_RACE_QUICK_SAMPLES);
	assert_true(res.phase_ms[FT_PH_SAMPLES] == 15);
	assert_true(res.phase_ms[FT_PH_LOAD] == 2);
	assert_true(res.verify_ms == 1.0);

	assert_int_equal(eval(rc, &f, 4, &res), FT_ST_OK);
	ft_race_stats(rc, &st);
	assert_int_equal(st.quick, 3);
	assert_int_equal(st.full, 3);
	assert_int_equal(st.cut, 1);
	ft_race_free(rc);
}

/* Wrong but fast: wrong_result from the quick pass, never cut or ok, never
 * the best; it does not lower the line for the others. */
static void test_wrong_but_fast(void **state)
{
	struct fake f = { .c = { { 0 }, { 10.0, 0 }, { 1.0, 1 }, { 11.0, 0 } }, .fail_at = -1 };
	struct ft_race *rc = race(1.15, 4);
	struct ft_job_result res;

	(void)state;
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_OK);
	assert_int_equal(eval(rc, &f, 2, &res), FT_ST_WRONG_RESULT);
	assert_int_equal(f.nlog, 2); /* no full measurement of a wrong one */
	assert_int_equal(eval(rc, &f, 3, &res), FT_ST_OK);
	/* and wrong as the very first candidate (measured in full at once) */
	ft_race_free(rc);
	rc = race(1.15, 4);
	assert_int_equal(eval(rc, &f, 2, &res), FT_ST_WRONG_RESULT);
	assert_int_equal(eval(rc, &f, 3, &res), FT_ST_OK);
	assert_int_equal(f.quick[f.nlog - 1], 0); /* still no best: 3 went in full */
	ft_race_free(rc);
}

/* A cut candidate, even one cut when the line was high, never becomes ok
 * and never sets the line: only full measurements do. */
static void test_cut_never_moves_the_line(void **state)
{
	struct fake f = { .c = { { 0 }, { 100.0, 0 }, { 200.0, 0 }, { 50.0, 0 }, { 56.0, 0 } },
			  .fail_at = -1 };
	struct ft_race *rc = race(1.15, 4);
	struct ft_job_result res;

	(void)state;
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_OK);
	assert_int_equal(eval(rc, &f, 2, &res), FT_ST_CUT);
	assert_int_equal(eval(rc, &f, 3, &res), FT_ST_OK); /* the new best, in full */
	assert_int_equal(eval(rc, &f, 4, &res), FT_ST_OK); /* 56 < 1.15 x 50 */
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_CUT); /* 100 is now over the line */
	ft_race_free(rc);
}

/* fatune's own failure (the worker cannot start) comes back as -1. */
static void test_runner_failure(void **state)
{
	struct fake f = { .c = { { 0 }, { 10.0, 0 }, { 11.0, 0 } }, .fail_at = 1 };
	struct ft_race *rc = race(1.15, 4);
	struct ft_job_result res;
	struct ft_job job;
	struct ft_err err = { 0 };

	(void)state;
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_OK);
	job_of(&job, 2);
	/* call 1, the candidate's one job, fails */
	assert_int_equal(ft_race_evaluate(rc, &job, fake_run, &f, &res, &err), -1);
	assert_non_null(strstr(err.msg, "cannot start"));
	ft_race_free(rc);
	/* two jobs: call 1 (quick) runs, call 2 (the full one) fails */
	f.nlog = 0;
	f.fail_at = 2;
	rc = race_as(1.15, 4, 0, 1);
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_OK);
	assert_int_equal(ft_race_evaluate(rc, &job, fake_run, &f, &res, &err), -1);
	assert_int_equal(f.nlog, 2);
	ft_race_free(rc);
}

static struct ft_trial trial(const char *config, enum ft_status st, double us)
{
	struct ft_trial t;

	ft_trial_init(&t);
	snprintf(t.config, sizeof(t.config), "%s", config);
	t.status = st;
	t.t_median_us = us;
	return t;
}

/* The finalists: the fastest ok trials, each config once; cut ones never. */
static void test_finalists(void **state)
{
	struct ft_race *rc = race(1.15, 3);
	const struct ft_trial *fin;
	struct ft_trial t;

	(void)state;
	t = trial("A=1", FT_ST_OK, 12);
	ft_race_offer(rc, &t);
	t = trial("A=2", FT_ST_CUT, 1);
	ft_race_offer(rc, &t);
	t = trial("A=3", FT_ST_OK, 10);
	ft_race_offer(rc, &t);
	t = trial("A=4", FT_ST_WRONG_RESULT, 0.5);
	ft_race_offer(rc, &t);
	t = trial("A=5", FT_ST_OK, 11);
	ft_race_offer(rc, &t);
	t = trial("A=6", FT_ST_OK, 13); /* a fourth: not kept */
	ft_race_offer(rc, &t);
	t = trial("A=3", FT_ST_OK, 9); /* the same config again: once */
	ft_race_offer(rc, &t);
	assert_int_equal(ft_race_finalists(rc, &fin), 3);
	assert_string_equal(fin[0].config, "A=3");
	assert_string_equal(fin[1].config, "A=5");
	assert_string_equal(fin[2].config, "A=1");
	t = trial("A=7", FT_ST_OK, 10.5);
	ft_race_offer(rc, &t);
	assert_int_equal(ft_race_finalists(rc, &fin), 3);
	assert_string_equal(fin[1].config, "A=7");
	assert_string_equal(fin[2].config, "A=5");
	for (int i = 0; i < 3; i++)
		assert_true(fin[i].status == FT_ST_OK);
	ft_race_free(rc);
}

/* The final over three candidates 0, 1, 2 of f, with the search's 15 samples. */
static void final_of_three(struct ft_race *rc, struct fake *f, struct ft_job_result *out, int *rounds)
{
	struct ft_job jobs[3];
	struct ft_err err = { 0 };

	for (int i = 0; i < 3; i++)
		job_of(&jobs[i], i);
	assert_int_equal(ft_race_final(rc, jobs, 3, fake_run, f, out, rounds, NULL, &err), 0);
}

/* The final: every finalist in every round, each round starting one later
 * (round-robin), ceil(15 / rounds) samples a job, pooled into 15 samples;
 * a finalist wrong in a round keeps that verdict and is not run again. */
static void test_final_round_robin(void **state)
{
	struct fake f = { .c = { { 10.0, 0 }, { 10.1, 0 }, { 10.2, 0 } }, .fail_at = -1 };
	struct ft_race *rc = race(1.15, 3);
	struct ft_job_result out[3];
	int rounds[3];
	const int per = (15 + FT_RACE_ROUNDS - 1) / FT_RACE_ROUNDS;

	(void)state;
	final_of_three(rc, &f, out, rounds);
	assert_int_equal(f.nlog, 3 * FT_RACE_ROUNDS);
	for (int round = 0; round < FT_RACE_ROUNDS; round++)
		for (int k = 0; k < 3; k++) {
			assert_int_equal(f.log[round * 3 + k], (k + round) % 3);
			assert_true(f.cap[round * 3 + k] == FT_RACE_FINAL_SAMPLE_US);
			assert_int_equal(f.warmup[round * 3 + k], FT_RACE_WARMUP);
		}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(out[i].status, FT_ST_OK);
		assert_int_equal(out[i].samples, per * FT_RACE_ROUNDS);
		assert_int_equal(rounds[i], FT_RACE_ROUNDS);
		assert_true(fabs(out[i].t_min_us - f.c[i].us) < 1e-5);
		assert_true(out[i].t_median_us >= out[i].t_min_us);
		assert_true(out[i].t_median_us < f.c[i].us * 1.01);
		assert_true(out[i].rel_err == 3e-4);
	}
	/* finalist 1 turns out wrong (a kernel right only on its first calls) */
	f.nlog = 0;
	f.c[1].wrong = 1;
	final_of_three(rc, &f, out, NULL);
	assert_int_equal(out[1].status, FT_ST_WRONG_RESULT);
	assert_int_equal(out[0].status, FT_ST_OK);
	assert_int_equal(f.nlog, 1 + 2 * FT_RACE_ROUNDS);
	ft_race_free(rc);
}

/* FATUNE_RACE_ROUNDS: the final's 15 samples over 5 rounds of 3 (a job a
 * finalist a round, the start one later each round), the rows' count of
 * rounds from ft_race_rounds; a count out of range is the default. */
static void test_final_rounds_option(void **state)
{
	struct fake f = { .c = { { 10.0, 0 }, { 10.1, 0 }, { 10.2, 0 } }, .fail_at = -1 };
	struct ft_race_opts o;
	struct ft_race *rc;
	struct ft_job_result out[3];
	int rounds[3];

	(void)state;
	ft_race_defaults(&o);
	o.finalists = 3;
	o.anchor_ms = 0;
	o.rounds = 5;
	rc = ft_race_new(&o);
	assert_non_null(rc);
	assert_int_equal(ft_race_rounds(rc), 5);
	final_of_three(rc, &f, out, rounds);
	assert_int_equal(f.nlog, 3 * 5);
	for (int round = 0; round < 5; round++)
		for (int k = 0; k < 3; k++)
			assert_int_equal(f.log[round * 3 + k], (k + round) % 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(out[i].status, FT_ST_OK);
		assert_int_equal(out[i].samples, 15);
		assert_int_equal(rounds[i], 5);
	}
	ft_race_free(rc);
	o.rounds = FT_RACE_ROUNDS_MAX + 1;
	rc = ft_race_new(&o);
	assert_non_null(rc);
	assert_int_equal(ft_race_rounds(rc), FT_RACE_ROUNDS);
	ft_race_free(rc);
	assert_int_equal(ft_race_rounds(NULL), FT_RACE_ROUNDS);
}

/* A finalist clearly behind after the first round leaves the final: its
 * fastest sample over FT_RACE_FINAL_CUT x the round's fastest median. It
 * keeps an ok verdict over that round's samples; the others run on. One
 * just under the line stays. */
/* The final of test_final_leaves_the_slow's three: finalist 1 left after
 * round 1 with its samples, 0 and 2 ran every round */
static void assert_left_after_round_1(const struct ft_job_result *out, const int *rounds)
{
	const int per = (15 + FT_RACE_ROUNDS - 1) / FT_RACE_ROUNDS;

	assert_int_equal(rounds[1], 1);
	assert_int_equal(out[1].status, FT_ST_OK);
	assert_int_equal(out[1].samples, per);
	assert_int_equal(rounds[0], FT_RACE_ROUNDS);
	assert_int_equal(rounds[2], FT_RACE_ROUNDS);
	assert_int_equal(out[2].samples, per * FT_RACE_ROUNDS);
}

static void test_final_leaves_the_slow(void **state)
{
	struct fake f = { .c = { { 10.0, 0 }, { 10.0 * FT_RACE_FINAL_CUT * 1.01, 0 },
				 { 10.0 * FT_RACE_FINAL_CUT * 0.99, 0 } },
			  .fail_at = -1 };
	struct ft_race *rc = race(1.15, 3);
	struct ft_job_result out[3];
	int rounds[3];

	(void)state;
	final_of_three(rc, &f, out, rounds);
	assert_int_equal(f.nlog, 3 + 2 * (FT_RACE_ROUNDS - 1));
	for (int k = 3; k < f.nlog; k++)
		assert_int_not_equal(f.log[k], 1);
	assert_left_after_round_1(out, rounds);
	ft_race_free(rc);
}

/* The final as one sweep: the sweep it asks for (the rounds' count and
 * samples, the final's sample cap and warm-up, no quick pass, the leaving
 * rule), and what comes back as the rounds' would: the slow one left after
 * round 1 with its 5 samples, the trace's places and counts, one final job;
 * a sweep that fails leaves the final to the rounds, and so does a race
 * whose final is by rounds (FATUNE_RACE_FINAL=rounds) */
struct sweeper {
	struct fake f;
	struct ft_sweep seen;
	int calls;
	int fail;		/* answer failed, as a worker that died */
};

static int fake_sweep(void *ctx, const struct ft_sweep *g, struct ft_sweep_result *out,
		      struct ft_err *err)
{
	struct sweeper *s = ctx;

	s->calls++;
	s->seen = *g;
	if (s->fail) {
		memset(out, 0, sizeof(*out));
		out->failed = 1;
		snprintf(out->why, sizeof(out->why), "the worker died");
		return 0;
	}
	return ft_sweep_by_jobs(g, fake_run, &s->f, out, err);
}

static void test_final_sweep(void **state)
{
	struct sweeper *s = calloc(1, sizeof(*s));
	struct ft_race *rc = race(1.15, 3);
	struct ft_interleave_trace *tr = calloc(1, sizeof(*tr));
	struct ft_job jobs[3];
	struct ft_job_result out[3];
	struct ft_race_stats st;
	struct ft_err err = { 0 };
	int rounds[3];
	const int per = (15 + FT_RACE_ROUNDS - 1) / FT_RACE_ROUNDS;

	(void)state;
	assert_non_null(s);
	assert_non_null(tr);
	s->f = (struct fake){ .c = { { 10.0, 0 }, { 10.0 * FT_RACE_FINAL_CUT * 1.01, 0 },
				    { 10.0 * FT_RACE_FINAL_CUT * 0.99, 0 } },
			      .fail_at = -1 };
	for (int i = 0; i < 3; i++)
		job_of(&jobs[i], i);
	assert_int_equal(ft_race_final_sweep(rc, jobs, 3, fake_sweep, s, out, rounds, tr, &err), 0);
	assert_int_equal(s->calls, 1);
	assert_int_equal(s->seen.n, 3);
	assert_int_equal(s->seen.rounds, FT_RACE_ROUNDS);
	assert_int_equal(s->seen.per_round, per);
	assert_true(s->seen.heat_ms == 0);
	assert_true(s->seen.leave_over == FT_RACE_FINAL_CUT);
	for (int i = 0; i < 3; i++) {
		assert_true(s->seen.jobs[i].sample_max_us == FT_RACE_FINAL_SAMPLE_US);
		assert_int_equal(s->seen.jobs[i].warmup, FT_RACE_WARMUP);
		assert_int_equal(s->seen.jobs[i].quick_samples, 0);
		assert_int_equal(s->seen.jobs[i].samples, per * FT_RACE_ROUNDS);
	}
	/* one sample a job in the emulation: 3 in round 1, then 2 a round */
	assert_int_equal(s->f.nlog, per * (3 + 2 * (FT_RACE_ROUNDS - 1)));
	assert_left_after_round_1(out, rounds);
	assert_true(out[0].t_median_us < out[2].t_median_us);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tr->place[i][0], i);	/* the first sweep starts at finalist 0 */
	assert_int_equal(tr->ran[0], 3);
	assert_int_equal(tr->ran[1], 2);
	assert_int_equal(tr->place[1][1], -1);
	ft_race_stats(rc, &st);
	assert_int_equal(st.final_jobs, 1);
	assert_int_equal(st.swept, 1);
	assert_int_equal(st.sweeps_failed, 0);

	s->fail = 1;
	assert_int_equal(ft_race_final_sweep(rc, jobs, 3, fake_sweep, s, out, rounds, tr, &err), 1);
	ft_race_stats(rc, &st);
	assert_int_equal(st.swept, 1);
	assert_int_equal(st.sweeps_failed, 1);
	assert_int_equal(st.final_jobs, 1);
	ft_race_free(rc);

	setenv("FATUNE_RACE_FINAL", "rounds", 1);
	rc = race(1.15, 3);
	unsetenv("FATUNE_RACE_FINAL");
	s->calls = 0;
	assert_int_equal(ft_race_final_sweep(rc, jobs, 3, fake_sweep, s, out, rounds, tr, &err), 1);
	assert_int_equal(s->calls, 0);
	ft_race_free(rc);
	free(tr);
	free(s);
}

/* A heavy final (its fastest finalist at FT_RACE_HEAT_MIN_US or more) takes
 * every candidate within FT_RACE_HEAT_SPAN of the fastest (the finalists
 * asked for at least), and only its first job heats the GPU; a light one
 * keeps the finalists asked for and no heat; with the heat off (0), a heavy
 * one is as a light one, and so is one whose fastest is over the span behind
 * the unit's best in another space (its rival). */
static void test_heavy_final(void **state)
{
	const double at[] = { 1.0, 1.04, 1.08, FT_RACE_HEAT_SPAN * 0.999, FT_RACE_HEAT_SPAN * 1.01, 1.3 };
	const int nat = (int)(sizeof(at) / sizeof(at[0]));

	(void)state;
	for (int pass = 0; pass < 5; pass++) {
		/* pass 0 heavy, 1 light, 2 heavy with the heat off, 3 heavy behind
		 * another space's best by more than the span, 4 within it */
		double base = pass == 1 ? FT_RACE_HEAT_MIN_US / 4 : FT_RACE_HEAT_MIN_US * 2;
		struct ft_race_opts o;
		struct ft_race *rc;
		struct fake f = { .fail_at = -1 };
		struct ft_job jobs[FT_RACE_MAX_FINALISTS];
		struct ft_job_result out[FT_RACE_MAX_FINALISTS];
		struct ft_race_stats st;
		struct ft_err err = { 0 };
		const struct ft_trial *fin;
		int rounds[FT_RACE_MAX_FINALISTS];
		int n, hot = pass == 0 || pass == 4, want = hot ? 4 : 3;

		ft_race_defaults(&o);
		o.finalists = 3;
		o.anchor_ms = 0;
		o.heat_ms = pass == 2 ? 0 : FT_RACE_HEAT_MS;
		if (pass >= 3)
			o.rival_us = base / FT_RACE_HEAT_SPAN * (pass == 3 ? 0.99 : 1.01);
		assert_non_null(rc = ft_race_new(&o));
		for (int i = nat - 1; i >= 0; i--) {
			char cfg[16];
			struct ft_trial t;

			snprintf(cfg, sizeof(cfg), "A=%d", i);
			t = trial(cfg, FT_ST_OK, base * at[i]);
			ft_race_offer(rc, &t);
		}
		n = ft_race_finalists(rc, &fin);
		assert_int_equal(n, want);
		for (int i = 0; i < n; i++) {
			char cfg[16];

			snprintf(cfg, sizeof(cfg), "A=%d", i);
			assert_string_equal(fin[i].config, cfg);
			f.c[i].us = fin[i].t_median_us;
			job_of(&jobs[i], i);
		}
		/* the fastest full measurement is 1.2x behind in the final's first
		 * round: its prior keeps it for every round, in a heated final too
		 * (right after the heat the first finalists run deeper in the cap:
		 * FT_RACE_FINAL_CUT) */
		f.c[0].us *= 1.2;
		assert_int_equal(ft_race_final(rc, jobs, n, fake_run, &f, out, rounds, NULL, &err), 0);
		assert_int_equal(rounds[0], FT_RACE_ROUNDS);
		assert_int_equal(rounds[1], FT_RACE_ROUNDS);	/* the final's fastest */
		assert_int_equal(rounds[n - 1], 1);		/* behind in both */
		assert_true(f.heat[0] == (hot ? FT_RACE_HEAT_MS : 0));
		for (int k = 1; k < f.nlog; k++)
			assert_true(f.heat[k] == 0);
		ft_race_stats(rc, &st);
		assert_int_equal(st.heated, hot);
		ft_race_free(rc);
	}
}

/* A GPU whose clocks fall as the search goes on: candidate 0 (100 us) is the
 * first best; then every time is 1.2x. With anchors (every evaluation here)
 * the best is timed again before the next candidate, the drift is 1.2, and
 * candidate 1 (98 us, measured 117.6) is under the line and the new best,
 * first among the finalists although its stored time is the slower; its
 * anchor is then itself. Without anchors the same candidate is cut as
 * 1.17x the best. */
static void test_anchor_drift(void **state)
{
	struct fake f = { .c = { { 100.0, 0 }, { 98.0, 0 }, { 130.0, 0 } }, .fail_at = -1 };
	struct ft_race *rc = race(1.15, 4), *plain = race(1.15, 4);
	struct ft_race_opts o;
	struct ft_job_result res;
	struct ft_race_stats st;
	const struct ft_trial *fin;
	struct ft_trial t0, t1;

	(void)state;
	/* without anchors: the faster candidate timed on the slowed GPU is cut */
	assert_int_equal(eval(plain, &f, 0, &res), FT_ST_OK);
	f.slow = 1.2;
	assert_int_equal(eval(plain, &f, 1, &res), FT_ST_CUT);
	ft_race_free(plain);
	/* with anchors */
	ft_race_free(rc);
	ft_race_defaults(&o);
	o.finalists = 4;
	o.anchor_ms = 1e-9;
	rc = ft_race_new(&o);
	assert_non_null(rc);
	f.slow = 0;
	f.nlog = 0;
	assert_int_equal(eval(rc, &f, 0, &res), FT_ST_OK);	/* nothing to anchor yet */
	assert_int_equal(f.nlog, 1);
	assert_true(ft_race_drift(rc) == 1);
	t0 = trial("A=0", FT_ST_OK, res.t_median_us);
	t0.race_drift = ft_race_drift(rc);
	ft_race_offer(rc, &t0);
	f.slow = 1.2;
	assert_int_equal(eval(rc, &f, 1, &res), FT_ST_OK);
	assert_int_equal(f.nlog, 3);
	assert_int_equal(f.log[1], 0);				/* the anchor: candidate 0 again */
	assert_int_equal(f.quick[1], 1);			/* with the quick pass's samples */
	assert_true(f.line[1] == 0);				/* never cut */
	assert_int_equal(f.log[2], 1);
	assert_true(fabs(ft_race_drift(rc) - 1.2) < 0.01);
	assert_true(fabs(f.line[2] - 1.15 * 1.2 * t0.t_median_us) < 0.02 * f.line[2]);
	assert_true(res.t_median_us > t0.t_median_us);		/* stored as measured */
	assert_true(res.phase_ms[FT_PH_LOAD] == 2);		/* the anchor's job counted too */
	t1 = trial("A=1", FT_ST_OK, res.t_median_us);
	t1.race_drift = ft_race_drift(rc);
	ft_race_offer(rc, &t1);
	assert_int_equal(ft_race_finalists(rc, &fin), 2);
	assert_string_equal(fin[0].config, "A=1");
	assert_true(fabs(ft_race_time(&fin[0]) - 98.0 * (1 + 0.001 * 7)) < 0.5);
	/* candidate 1 is the anchor now: candidate 2 is raced against it */
	f.slow = 1.1;
	assert_int_equal(eval(rc, &f, 2, &res), FT_ST_CUT);
	assert_int_equal(f.log[3], 1);
	assert_true(fabs(ft_race_drift(rc) - 1.1) < 0.01);
	assert_non_null(strstr(res.reason, "at this GPU's drift 1.0"));
	ft_race_stats(rc, &st);
	assert_int_equal(st.anchors, 2);
	ft_race_free(rc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_cut_and_full),
		cmocka_unit_test(test_stable_off),
		cmocka_unit_test(test_two_jobs),
		cmocka_unit_test(test_wrong_but_fast),
		cmocka_unit_test(test_cut_never_moves_the_line),
		cmocka_unit_test(test_runner_failure),
		cmocka_unit_test(test_finalists),
		cmocka_unit_test(test_final_round_robin),
		cmocka_unit_test(test_final_rounds_option),
		cmocka_unit_test(test_final_leaves_the_slow),
		cmocka_unit_test(test_final_sweep),
		cmocka_unit_test(test_anchor_drift),
		cmocka_unit_test(test_heavy_final),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
