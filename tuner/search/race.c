/* race.c - quick pass, cut, full measurement and the interleaved final (see race.h). */
#include "search/race.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/sampling.h"

struct ft_race {
	struct ft_race_opts o;
	pthread_mutex_t m;
	double best_us;		/* best full median so far, NAN: none (under m) */
	struct ft_race_stats st;	/* under m */
	struct ft_trial fin[FT_RACE_MAX_FINALISTS];	/* fastest first (main thread) */
	int nfin;
};

void ft_race_defaults(struct ft_race_opts *o)
{
	o->on = 1;
	o->margin = FT_RACE_MARGIN;
	o->quick_samples = FT_RACE_QUICK_SAMPLES;
	o->finalists = FT_RACE_FINALISTS;
	o->stable = FT_RACE_STABLE;
	o->two_jobs = getenv("FATUNE_RACE_JOBS") && !strcmp(getenv("FATUNE_RACE_JOBS"), "2");
	o->sample_us = FT_RACE_SAMPLE_US;
	if (getenv("FATUNE_RACE_SAMPLE_US")) {
		double v = atof(getenv("FATUNE_RACE_SAMPLE_US"));

		if (v >= 10 && v <= 20000)
			o->sample_us = v;
	}
}

struct ft_race *ft_race_new(const struct ft_race_opts *o)
{
	struct ft_race *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return NULL;
	rc->o = *o;
	if (rc->o.finalists > FT_RACE_MAX_FINALISTS)
		rc->o.finalists = FT_RACE_MAX_FINALISTS;
	if (rc->o.finalists < 0)
		rc->o.finalists = 0;
	if (rc->o.quick_samples < 1)
		rc->o.quick_samples = 1;
	if (!(rc->o.stable >= 0 && rc->o.stable < 1))
		rc->o.stable = 0;
	if (!(rc->o.sample_us > 0))
		rc->o.sample_us = FT_RACE_SAMPLE_US;
	rc->best_us = NAN;
	pthread_mutex_init(&rc->m, NULL);
	return rc;
}

void ft_race_free(struct ft_race *rc)
{
	if (!rc)
		return;
	pthread_mutex_destroy(&rc->m);
	free(rc);
}

/* The best full median so far (NAN: none), and one more job of a kind. */
static double best_now(struct ft_race *rc)
{
	double b;

	pthread_mutex_lock(&rc->m);
	b = rc->best_us;
	pthread_mutex_unlock(&rc->m);
	return b;
}

static void note(struct ft_race *rc, long long *counter, const struct ft_job_result *full)
{
	pthread_mutex_lock(&rc->m);
	(*counter)++;
	if (full && full->status == FT_ST_OK && full->stop == FT_SAMPLES_STABLE)
		rc->st.stable++;
	if (full && full->status == FT_ST_OK && isfinite(full->t_median_us) &&
	    (isnan(rc->best_us) || full->t_median_us < rc->best_us))
		rc->best_us = full->t_median_us;
	pthread_mutex_unlock(&rc->m);
}

/* Job with its samples at most cap_us long, unless the job names its own cap. */
static struct ft_job capped(const struct ft_job *job, double cap_us)
{
	struct ft_job full = *job;

	if (!(full.sample_max_us > 0))
		full.sample_max_us = cap_us;
	return full;
}

static void cut(struct ft_race *rc, struct ft_job_result *res, int quick_samples, double best)
{
	res->status = FT_ST_CUT;
	snprintf(res->reason, sizeof(res->reason),
		 "raced out: quick pass of %d samples, min %.4g us > %.3gx the best %.4g us",
		 res->samples > 0 ? res->samples : quick_samples, res->t_min_us, rc->o.margin, best);
	note(rc, &rc->st.cut, NULL);
}

/* The quick pass and the full measurement as one job: the worker stops after
 * the quick samples when their min is over the line as it is now, else goes
 * on with the same graph until the median is stable or the samples are
 * taken, so a candidate that stays is verified, sized and warmed up once. */
static int one_job(struct ft_race *rc, const struct ft_job *full, double best, ft_race_run_fn run,
		   void *ctx, struct ft_job_result *res, struct ft_err *err)
{
	struct ft_job j = *full;
	int r;

	j.quick_samples = rc->o.quick_samples < j.samples ? rc->o.quick_samples : j.samples;
	j.cut_above_us = best * rc->o.margin;
	j.warmup = 1; /* the quick pass's single warm-up launch */
	if ((r = run(ctx, &j, res, err)))
		return r;
	note(rc, &rc->st.quick, NULL);
	if (res->status != FT_ST_OK)
		return 0; /* wrong, crashed or timed out */
	if (res->stop == FT_SAMPLES_CUT) {
		cut(rc, res, j.quick_samples, best);
		return 0;
	}
	note(rc, &rc->st.full, res);
	return 0;
}

int ft_race_evaluate(struct ft_race *rc, const struct ft_job *job, ft_race_run_fn run, void *ctx,
		     struct ft_job_result *res, struct ft_err *err)
{
	struct ft_job quick, full = capped(job, rc->o.sample_us);
	struct ft_job_result q;
	double best = best_now(rc), line;
	int r;

	full.stable_rel = rc->o.stable;
	if (isnan(best) || !job->timing) {
		r = run(ctx, &full, res, err);
		if (!r)
			note(rc, &rc->st.full, res);
		return r;
	}
	if (!rc->o.two_jobs)
		return one_job(rc, &full, best, run, ctx, res, err);
	quick = *job;
	quick.samples = rc->o.quick_samples;
	quick.warmup = 1;
	quick.sample_max_us = rc->o.sample_us;
	if ((r = run(ctx, &quick, res, err)))
		return r;
	note(rc, &rc->st.quick, NULL);
	/* the quick pass's phase times, its samples as quick ones */
	ft_job_result_init(&q);
	ft_phases_add(&q, res, 1);
	memcpy(res->phase_ms, q.phase_ms, sizeof(q.phase_ms));
	q.verify_ms = res->verify_ms;
	q.time_ms = res->time_ms;
	if (res->status != FT_ST_OK)
		return 0; /* wrong, crashed or timed out: the same verdict in full */
	/* a faster full measurement may have come in from another GPU meanwhile */
	best = best_now(rc);
	line = best * rc->o.margin;
	if (res->t_min_us > line) {
		cut(rc, res, quick.samples, best);
		return 0;
	}
	/* the quick pass has just run this kernel on this GPU (and its graph of
	 * the same K when the caps agree): one warm-up launch uploads the new graph */
	if (full.warmup > FT_RACE_WARMUP)
		full.warmup = FT_RACE_WARMUP;
	if ((r = run(ctx, &full, res, err)))
		return r;
	/* the candidate's time is both jobs' */
	ft_phases_add(res, &q, 0);
	res->verify_ms += q.verify_ms;
	res->time_ms += q.time_ms;
	note(rc, &rc->st.full, res);
	return 0;
}

void ft_race_recorded(struct ft_race *rc, struct ft_trial *t)
{
	struct ft_job_result res;
	double best;

	if (!rc || t->status != FT_ST_OK || !isfinite(t->t_median_us))
		return;
	best = best_now(rc);
	ft_job_result_init(&res);
	res.status = FT_ST_OK;
	res.t_median_us = t->t_median_us;
	if (isnan(best)) {
		note(rc, &rc->st.full, &res);
		return;
	}
	note(rc, &rc->st.quick, NULL);
	if (t->t_min_us > best * rc->o.margin) {
		t->status = FT_ST_CUT;
		snprintf(t->reason, sizeof(t->reason),
			 "raced out: recorded min %.4g us > %.3gx the best %.4g us", t->t_min_us,
			 rc->o.margin, best);
		note(rc, &rc->st.cut, NULL);
		return;
	}
	note(rc, &rc->st.full, &res);
}

void ft_race_offer(struct ft_race *rc, const struct ft_trial *t)
{
	int at;

	if (!rc || t->status != FT_ST_OK || !isfinite(t->t_median_us) || !rc->o.finalists)
		return;
	for (at = 0; at < rc->nfin; at++) {
		if (!strcmp(rc->fin[at].config, t->config))
			return; /* already a finalist (the final's own rows) */
	}
	for (at = rc->nfin; at > 0 && rc->fin[at - 1].t_median_us > t->t_median_us; at--)
		;
	if (at >= rc->o.finalists)
		return;
	if (rc->nfin < rc->o.finalists)
		rc->nfin++;
	memmove(&rc->fin[at + 1], &rc->fin[at], (size_t)(rc->nfin - 1 - at) * sizeof(rc->fin[0]));
	rc->fin[at] = *t;
	rc->fin[at].log = NULL;
}

int ft_race_finalists(const struct ft_race *rc, const struct ft_trial **out)
{
	*out = rc ? rc->fin : NULL;
	return rc ? rc->nfin : 0;
}

int ft_race_final(struct ft_race *rc, const struct ft_job *jobs, int n, ft_race_run_fn run,
		  void *ctx, struct ft_job_result *out, int *rounds, struct ft_err *err)
{
	/* the final follows the search on a GPU at its clocks: one launch
	 * uploads a finalist's graph */
	struct ft_interleave_opts o = { .rounds = FT_RACE_ROUNDS,
					.sample_us = FT_RACE_FINAL_SAMPLE_US,
					.warmup = FT_RACE_WARMUP,
					.leave_over = FT_RACE_FINAL_CUT };
	double prior[FT_RACE_MAX_FINALISTS];
	long long ran = 0;
	int r;

	if (n > FT_RACE_MAX_FINALISTS)
		n = FT_RACE_MAX_FINALISTS;
	/* jobs[i] is finalist i's: its full measurement is the prior that a
	 * finalist leaving after the first round must agree with */
	if (rc && n <= rc->nfin) {
		for (int i = 0; i < n; i++)
			prior[i] = rc->fin[i].t_median_us;
		o.prior = prior;
	}
	r = ft_interleave(&o, jobs, n, run, ctx, out, rounds, &ran, err);
	if (rc) {
		pthread_mutex_lock(&rc->m);
		rc->st.final_jobs += ran;
		pthread_mutex_unlock(&rc->m);
	}
	return r;
}

void ft_race_stats(const struct ft_race *rc, struct ft_race_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!rc)
		return;
	pthread_mutex_lock((pthread_mutex_t *)&rc->m);
	*st = rc->st;
	pthread_mutex_unlock((pthread_mutex_t *)&rc->m);
}

int ft_race_parse(const char *text, int *on, struct ft_err *err)
{
	if (!strcmp(text, "on") || !strcmp(text, "off")) {
		*on = !strcmp(text, "on");
		return 0;
	}
	return ft_error(err, FT_EINPUT, "bad --race '%s': use on or off", text);
}
