/* interleave.c - candidates timed in round-robin rounds (see interleave.h). */
#include "run/interleave.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/verify.h"

/* Candidate i's samples: pooled[i * cap ...], have[i] of them. */
struct pool {
	double *x;
	int cap;
	int have[FT_INTERLEAVE_MAX];
};

/* A round's result into candidate i's pool: its raw samples, or its median
 * when the runner gave none (a replay). */
static void pool_add(struct pool *p, int i, const struct ft_job_result *r)
{
	double *into = p->x + (size_t)i * (size_t)p->cap;

	if (r->nraw > 0) {
		for (int k = 0; k < r->nraw && p->have[i] < p->cap; k++)
			into[p->have[i]++] = r->raw_us[k];
	} else if (isfinite(r->t_median_us) && p->have[i] < p->cap) {
		into[p->have[i]++] = r->t_median_us;
	}
}

/* Statistics of candidate i's pool (sorted in a copy). 0, or -1 when empty. */
static int pool_stats(const struct pool *p, int i, struct ft_stats *st)
{
	double *x = malloc((size_t)p->cap * sizeof(*x));
	int rc;

	if (!x || p->have[i] < 1) {
		free(x);
		return -1;
	}
	memcpy(x, p->x + (size_t)i * (size_t)p->cap, (size_t)p->have[i] * sizeof(*x));
	rc = ft_stats_compute(x, p->have[i], st);
	free(x);
	return rc;
}

/* Each candidate's pooled median (and fastest sample) into med (min), NaN
 * for one that is done, has left or has no sample; returns the fastest
 * median (NaN: none). */
static double pooled_medians(const struct pool *p, const int *done, const int *left, int n, double *med,
			     double *min)
{
	double lead = NAN;

	for (int i = 0; i < n; i++) {
		struct ft_stats st;

		med[i] = NAN;
		if (done[i] || left[i] || pool_stats(p, i, &st))
			continue;
		med[i] = st.median;
		min[i] = st.min;
		if (isnan(lead) || st.median < lead)
			lead = st.median;
	}
	return lead;
}

void ft_interleave_leave(const double *med, const double *min, int n, double over,
			 const double *prior, int *left)
{
	double lead = NAN, lead_prior = NAN;

	for (int i = 0; i < n; i++)
		if (!isnan(med[i]) && !(med[i] >= lead))
			lead = med[i];
	for (int i = 0; i < n; i++)
		if (!isnan(med[i]) && prior && prior[i] > 0 && !(prior[i] >= lead_prior))
			lead_prior = prior[i];
	for (int i = 0; i < n; i++)
		if (!isnan(med[i]) && min[i] > over * lead &&
		    !(prior && prior[i] > 0 && prior[i] <= over * lead_prior))
			left[i] = 1;
}

/* After the first round: ft_interleave_leave over the pooled samples. */
static void leave_slow(const struct pool *p, const int *done, int *left, int n, double over,
		       const double *prior)
{
	double med[FT_INTERLEAVE_MAX], min[FT_INTERLEAVE_MAX];

	pooled_medians(p, done, left, n, med, min);
	ft_interleave_leave(med, min, n, over, prior, left);
}

/* Candidate i's job for one round. */
static struct ft_job round_job(const struct ft_interleave_opts *o, const struct ft_job *job)
{
	struct ft_job j = *job;
	int total = o->samples > 0 ? o->samples : job->samples;

	if (!(j.sample_max_us > 0) && o->sample_us > 0)
		j.sample_max_us = o->sample_us;
	j.samples = (total + o->rounds - 1) / o->rounds;
	if (j.samples < 1)
		j.samples = 1;
	if (j.samples > FT_RAW_SAMPLES_MAX)
		j.samples = FT_RAW_SAMPLES_MAX;
	if (o->warmup >= 0 && j.warmup > o->warmup)
		j.warmup = o->warmup;
	/* pooled rounds are what is measured: no quick cut, no early stop */
	j.quick_samples = 0;
	j.stable_rel = 0;
	return j;
}

void ft_interleave_trace_clear(struct ft_interleave_trace *tr)
{
	for (int i = 0; i < FT_INTERLEAVE_MAX; i++)
		for (int r = 0; r < FT_INTERLEAVE_MAX_ROUNDS; r++) {
			tr->median_us[i][r] = NAN;
			tr->place[i][r] = -1;
		}
	memset(tr->ran, 0, sizeof(tr->ran));
}

int ft_interleave_start(int spread, int round, int rounds, int n)
{
	if (n <= 0)
		return 0;
	if (spread && rounds < n)
		return (int)((long long)round * n / rounds % n);
	return round % n;
}

/* One interleaving's state: every candidate's pool and verdicts. */
struct il {
	const struct ft_interleave_opts *o;
	const struct ft_job *jobs;
	ft_job_run_fn run;
	void *ctx;
	struct ft_job_result *out;
	struct pool p;
	int done[FT_INTERLEAVE_MAX], left[FT_INTERLEAVE_MAX], taken[FT_INTERLEAVE_MAX];
	long long ran;
};

/* Candidate i's job of round `round`, its `placed`-th: pooled when ok, its
 * verdict kept when not. 0, or -1 with err when run fails. */
static int time_one(struct il *s, int i, int round, int placed, struct ft_err *err)
{
	const struct ft_interleave_opts *o = s->o;
	struct ft_job job = round_job(o, &s->jobs[i]);
	struct ft_job_result res;
	struct ft_job_result *out = &s->out[i];

	if (!s->ran && o->heat_ms > 0)
		job.heat_ms = o->heat_ms;
	if (s->run(s->ctx, &job, &res, err))
		return -1;
	s->ran++;
	if (o->trace) {
		o->trace->place[i][round] = placed;
		o->trace->ran[round] = placed + 1;
		if (res.status == FT_ST_OK)
			o->trace->median_us[i][round] = res.t_median_us;
	}
	if (res.status != FT_ST_OK) {
		*out = res; /* the first verdict that is not ok stands */
		s->done[i] = 1;
		return 0;
	}
	pool_add(&s->p, i, &res);
	s->taken[i]++;
	ft_errors_add(out, &res);
	out->launches_per_sample = res.launches_per_sample;
	out->verify_ms += res.verify_ms;
	out->time_ms += res.time_ms;
	ft_phases_add(out, &res, 0);
	return 0;
}

/* The candidates still in after the rounds whose pooled median is within
 * o->close_within of the fastest one's, fastest first, at most o->close_max:
 * into c; returns how many. */
static int close_ones(const struct il *s, int n, int *c)
{
	const struct ft_interleave_opts *o = s->o;
	double med[FT_INTERLEAVE_MAX], min[FT_INTERLEAVE_MAX];
	double lead = pooled_medians(&s->p, s->done, s->left, n, med, min);
	int m = 0;

	for (int i = 0; i < n; i++) {	/* insertion, fastest first */
		int at;

		if (!(med[i] <= o->close_within * lead))
			continue;
		for (at = m++; at > 0 && med[c[at - 1]] > med[i]; at--)
			c[at] = c[at - 1];
		c[at] = i;
	}
	if (m > o->close_max)
		m = o->close_max;
	return m;
}

int ft_interleave(const struct ft_interleave_opts *o, const struct ft_job *jobs, int n,
		  ft_job_run_fn run, void *ctx, struct ft_job_result *out, int *rounds,
		  long long *njobs, struct ft_err *err)
{
	struct il s = { .o = o, .jobs = jobs, .run = run, .ctx = ctx, .out = out };
	int nrounds = o->rounds, rc = 0;
	/* the close candidates' rounds alone, where asked for */
	int extra = o->close_rounds > 0 && o->close_within > 1 && o->close_max >= 2 ? o->close_rounds : 0;

	if (n <= 0)
		return 0;
	if (n > FT_INTERLEAVE_MAX)
		return ft_error(err, FT_EFAIL, "interleaving %d candidates: at most %d", n, FT_INTERLEAVE_MAX);
	if (nrounds < 1 || nrounds + extra > FT_INTERLEAVE_MAX_ROUNDS)
		return ft_error(err, FT_EFAIL, "interleaving in %d rounds and %d close ones: 1 to %d in all",
				nrounds, extra, FT_INTERLEAVE_MAX_ROUNDS);
	s.p.cap = (nrounds + extra) * FT_RAW_SAMPLES_MAX;
	s.p.x = malloc((size_t)n * (size_t)s.p.cap * sizeof(*s.p.x));
	if (!s.p.x)
		return ft_error(err, FT_EFAIL, "out of memory for %d candidates' samples", n);
	for (int i = 0; i < n; i++) {
		ft_job_result_init(&out[i]);
		out[i].rel_err = 0;
		out[i].max_abs_err = 0;
	}
	if (o->trace)
		ft_interleave_trace_clear(o->trace);
	for (int round = 0; round < nrounds && !rc; round++) {
		int placed = 0, start = ft_interleave_start(o->spread, round, nrounds, n);

		for (int k = 0; k < n && !rc; k++) {
			int i = (k + start) % n;

			if (s.done[i] || s.left[i])
				continue;
			rc = time_one(&s, i, round, placed++, err);
		}
		if (round == 0 && !rc && o->leave_over > 1)
			leave_slow(&s.p, s.done, s.left, n, o->leave_over, o->prior);
	}
	if (extra && !rc) {
		/* the close ones alone: short rounds, each place taken by each alike */
		int c[FT_INTERLEAVE_MAX], m = close_ones(&s, n, c);

		for (int er = 0; m >= 2 && er < extra && !rc; er++) {
			int placed = 0;

			for (int k = 0; k < m && !rc; k++) {
				int i = c[(k + er) % m];

				if (!s.done[i])
					rc = time_one(&s, i, nrounds + er, placed++, err);
			}
		}
	}
	for (int i = 0; i < n && !rc; i++) {
		struct ft_stats st;

		if (s.done[i])
			continue;
		if (pool_stats(&s.p, i, &st)) {
			out[i].status = FT_ST_CRASHED;
			snprintf(out[i].reason, sizeof(out[i].reason),
				 "the interleaved rounds gave no finite sample: is the GPU in a bad state?");
			continue;
		}
		out[i].status = FT_ST_OK;
		out[i].t_median_us = st.median;
		out[i].t_min_us = st.min;
		out[i].t_p90_us = st.p90;
		out[i].t_spread = st.spread;
		out[i].samples = s.p.have[i];
	}
	for (int i = 0; rounds && i < n; i++)
		rounds[i] = s.taken[i];
	if (njobs)
		*njobs = s.ran;
	free(s.p.x);
	return rc;
}
