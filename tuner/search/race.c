/* race.c - quick pass, cut, full measurement and the interleaved final (see race.h). */
#include "base/clock.h"
#include "search/race.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/evaluate.h"
#include "run/sampling.h"

struct ft_race {
	struct ft_race_opts o;
	long long id;		/* tells this race from an earlier one in a thread's lane */
	pthread_mutex_t m;
	double best_us;		/* best full median so far in the race's units
				 * (FT_RACE_ANCHOR_MS), NAN: none (under m) */
	struct ft_job anchor;	/* the best's full job, when has_anchor (under m) */
	int has_anchor;
	double anchor_us;	/* the anchor's median in the race's units */
	struct ft_race_stats st;	/* under m */
	struct ft_trial fin[FT_RACE_MAX_FINALISTS];	/* fastest first (main thread) */
	int nfin;
};

/* Whether environment variable name is set to value. */
static int env_is(const char *name, const char *value)
{
	const char *text = getenv(name);

	return text && !strcmp(text, value);
}

/* The number in environment variable name when it is one in 0..max (the
 * whole value), else dflt (unset, empty, not a number, out of range). */
static double env_number(const char *name, double max, double dflt)
{
	const char *text = getenv(name);
	char *end;
	double v;

	if (!text || !*text)
		return dflt;
	v = strtod(text, &end);
	return !*end && v >= 0 && v <= max ? v : dflt;
}

void ft_race_defaults(struct ft_race_opts *o)
{
	o->on = 1;
	o->margin = FT_RACE_MARGIN;
	o->quick_samples = FT_RACE_QUICK_SAMPLES;
	o->finalists = FT_RACE_FINALISTS;
	o->stable = FT_RACE_STABLE;
	o->two_jobs = env_is("FATUNE_RACE_JOBS", "2");
	o->sample_us = FT_RACE_SAMPLE_US;
	if (getenv("FATUNE_RACE_SAMPLE_US")) {
		double v = atof(getenv("FATUNE_RACE_SAMPLE_US"));

		if (v >= 10 && v <= 20000)
			o->sample_us = v;
	}
	o->anchor_ms = env_number("FATUNE_RACE_ANCHOR_MS", 60000, 0);
	o->rival_us = 0;
	o->heat_ms = env_number("FATUNE_RACE_HEAT_MS", FT_EVAL_HEAT_MAX_MS, FT_RACE_HEAT_MS);
	o->spread = env_is("FATUNE_RACE_FINAL_ORDER", "spread");
	o->sweep = !env_is("FATUNE_RACE_FINAL", "rounds");
	o->close_rounds = (int)env_number("FATUNE_RACE_CLOSE_ROUNDS", FT_RACE_CLOSE_ROUNDS_MAX, 0);
	{
		double v = env_number("FATUNE_RACE_ROUNDS", FT_RACE_ROUNDS_MAX, FT_RACE_ROUNDS);

		o->rounds = v >= 1 && v == (int)v ? (int)v : FT_RACE_ROUNDS;	/* 0 or 2.5: the default */
	}
}

/* A thread's GPU as its anchors measured it (one evaluation thread per GPU) */
struct lane {
	long long race;		/* the race it belongs to (ft_race.id) */
	double at_ms;		/* when its latest anchor ran (or the lane began) */
	double drift;		/* the latest anchor's median over the anchor's own */
};
static _Thread_local struct lane lane;
static atomic_llong races;

static struct lane *my_lane(const struct ft_race *rc)
{
	if (lane.race != rc->id)
		lane = (struct lane){ .race = rc->id, .at_ms = ft_mono_ms(), .drift = 1 };
	return &lane;
}

double ft_race_drift(const struct ft_race *rc)
{
	return rc ? my_lane(rc)->drift : 1;
}

double ft_race_time(const struct ft_trial *t)
{
	return t->race_drift > 0 ? t->t_median_us / t->race_drift : t->t_median_us;
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
	if (rc->o.rounds < 1 || rc->o.rounds > FT_RACE_ROUNDS_MAX)
		rc->o.rounds = FT_RACE_ROUNDS;
	if (rc->o.quick_samples < 1)
		rc->o.quick_samples = 1;
	if (!(rc->o.stable >= 0 && rc->o.stable < 1))
		rc->o.stable = 0;
	if (!(rc->o.sample_us > 0))
		rc->o.sample_us = FT_RACE_SAMPLE_US;
	if (!(rc->o.anchor_ms >= 0))
		rc->o.anchor_ms = 0;
	rc->best_us = NAN;
	rc->id = atomic_fetch_add(&races, 1) + 1;
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

/* Counts a job; a full measurement (full, of job: NULL for a recorded one)
 * that beats the best at the GPU's drift becomes the best and the anchor. */
static void note(struct ft_race *rc, long long *counter, const struct ft_job_result *full,
		 const struct ft_job *job, double drift)
{
	double us = full ? full->t_median_us / drift : NAN;

	pthread_mutex_lock(&rc->m);
	(*counter)++;
	if (full && full->status == FT_ST_OK && full->stop == FT_SAMPLES_STABLE)
		rc->st.stable++;
	if (full && full->status == FT_ST_OK && isfinite(us) && (isnan(rc->best_us) || us < rc->best_us)) {
		rc->best_us = us;
		rc->has_anchor = job != NULL;
		if (job) {
			rc->anchor = *job;
			rc->anchor_us = us;
		}
	}
	pthread_mutex_unlock(&rc->m);
}

/* Every anchor_ms of this thread's time, the best so far timed again on its
 * GPU, before the next candidate (see FT_RACE_ANCHOR_MS): the lane's drift.
 * spent gets the anchor job's phase times. Returns what run returns. */
static int anchor(struct ft_race *rc, const struct ft_job *job, ft_race_run_fn run, void *ctx,
		  struct ft_job_result *spent, struct ft_err *err)
{
	struct lane *l = my_lane(rc);
	struct ft_job a;
	struct ft_job_result res;
	double ref = 0;
	int have, r;

	if (!(rc->o.anchor_ms > 0) || !job->timing || ft_mono_ms() - l->at_ms < rc->o.anchor_ms)
		return 0;
	pthread_mutex_lock(&rc->m);
	have = rc->has_anchor;
	if (have) {
		a = rc->anchor;
		ref = rc->anchor_us;
	}
	pthread_mutex_unlock(&rc->m);
	if (!have)
		return 0;
	a.samples = rc->o.quick_samples;
	a.quick_samples = 0;
	a.cut_above_us = 0;
	a.stable_rel = 0;
	a.warmup = FT_RACE_WARMUP;
	ft_job_result_init(&res);
	if ((r = run(ctx, &a, &res, err)))
		return r;
	l->at_ms = ft_mono_ms();
	ft_phases_add(spent, &res, 0);
	spent->verify_ms += res.verify_ms;
	spent->time_ms += res.time_ms;
	pthread_mutex_lock(&rc->m);
	rc->st.anchors++;
	if (res.status == FT_ST_OK && isfinite(res.t_median_us) && ref > 0)
		l->drift = res.t_median_us / ref;
	else if (rc->has_anchor && !strcmp(rc->anchor.config, a.config))
		rc->has_anchor = 0;	/* not ok now: no anchor until the next best */
	pthread_mutex_unlock(&rc->m);
	return 0;
}

/* Job with its samples at most cap_us long, unless the job names its own cap. */
static struct ft_job capped(const struct ft_job *job, double cap_us)
{
	struct ft_job full = *job;

	if (!(full.sample_max_us > 0))
		full.sample_max_us = cap_us;
	return full;
}

/* best: in the race's units; drift: the GPU's (the line is best x margin x drift) */
static void cut(struct ft_race *rc, struct ft_job_result *res, int quick_samples, double best,
		double drift)
{
	char at[48] = "";

	res->status = FT_ST_CUT;
	if (drift != 1)
		snprintf(at, sizeof(at), " at this GPU's drift %.3f", drift);
	snprintf(res->reason, sizeof(res->reason),
		 "raced out: quick pass of %d samples, min %.4g us > %.3gx the best %.4g us%s",
		 res->samples > 0 ? res->samples : quick_samples, res->t_min_us, rc->o.margin, best, at);
	note(rc, &rc->st.cut, NULL, NULL, 1);
}

/* The quick pass and the full measurement as one job: the worker stops after
 * the quick samples when their min is over the line as it is now, else goes
 * on with the same graph until the median is stable or the samples are
 * taken, so a candidate that stays is verified, sized and warmed up once. */
static int one_job(struct ft_race *rc, const struct ft_job *full, double best, double drift,
		   ft_race_run_fn run, void *ctx, struct ft_job_result *res, struct ft_err *err)
{
	struct ft_job j = *full;
	int r;

	j.quick_samples = rc->o.quick_samples < j.samples ? rc->o.quick_samples : j.samples;
	j.cut_above_us = best * rc->o.margin * drift;
	j.warmup = 1; /* the quick pass's single warm-up launch */
	if ((r = run(ctx, &j, res, err)))
		return r;
	note(rc, &rc->st.quick, NULL, NULL, 1);
	if (res->status != FT_ST_OK)
		return 0; /* wrong, crashed or timed out */
	if (res->stop == FT_SAMPLES_CUT) {
		cut(rc, res, j.quick_samples, best, drift);
		return 0;
	}
	note(rc, &rc->st.full, res, full, drift);
	return 0;
}

/* ft_race_evaluate after the anchor: job with its samples' cap (capped) */
static int race_job(struct ft_race *rc, const struct ft_job *job, ft_race_run_fn run, void *ctx,
		    struct ft_job_result *res, struct ft_err *err)
{
	struct ft_job quick, full = *job;
	struct ft_job_result q;
	double best = best_now(rc), line, drift = ft_race_drift(rc);
	int r;

	full.stable_rel = rc->o.stable;
	if (isnan(best) || !full.timing) {
		r = run(ctx, &full, res, err);
		if (!r)
			note(rc, &rc->st.full, res, full.timing ? &full : NULL, drift);
		return r;
	}
	if (!rc->o.two_jobs)
		return one_job(rc, &full, best, drift, run, ctx, res, err);
	quick = *job;
	quick.samples = rc->o.quick_samples;
	quick.warmup = 1;
	quick.sample_max_us = rc->o.sample_us;
	if ((r = run(ctx, &quick, res, err)))
		return r;
	note(rc, &rc->st.quick, NULL, NULL, 1);
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
	line = best * rc->o.margin * drift;
	if (res->t_min_us > line) {
		cut(rc, res, quick.samples, best, drift);
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
	note(rc, &rc->st.full, res, &full, drift);
	return 0;
}

int ft_race_evaluate(struct ft_race *rc, const struct ft_job *job, ft_race_run_fn run, void *ctx,
		     struct ft_job_result *res, struct ft_err *err)
{
	struct ft_job full = capped(job, rc->o.sample_us);
	struct ft_job_result spent;
	int r;

	/* the best timed again first, when its period is up: this GPU's drift */
	ft_job_result_init(&spent);
	if ((r = anchor(rc, job, run, ctx, &spent, err)))
		return r;
	r = race_job(rc, &full, run, ctx, res, err);
	if (!r) {
		/* the anchor's GPU time is this candidate's */
		ft_phases_add(res, &spent, 0);
		res->verify_ms += spent.verify_ms;
		res->time_ms += spent.time_ms;
	}
	return r;
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
		note(rc, &rc->st.full, &res, NULL, 1);
		return;
	}
	note(rc, &rc->st.quick, NULL, NULL, 1);
	if (t->t_min_us > best * rc->o.margin) {
		t->status = FT_ST_CUT;
		snprintf(t->reason, sizeof(t->reason),
			 "raced out: recorded min %.4g us > %.3gx the best %.4g us", t->t_min_us,
			 rc->o.margin, best);
		note(rc, &rc->st.cut, NULL, NULL, 1);
		return;
	}
	note(rc, &rc->st.full, &res, NULL, 1);
}

/* How many candidates the race keeps as possible finalists: a heavy final
 * may take up to FT_RACE_MAX_FINALISTS. */
static int keep(const struct ft_race *rc)
{
	return rc->o.heat_ms > 0 && rc->o.finalists >= 2 ? FT_RACE_MAX_FINALISTS : rc->o.finalists;
}

/* Whether the final is heavy (FT_RACE_HEAT_MIN_US): heated and widened. A
 * final asked to be none (finalists 0 or 1) stays none, and one too far
 * behind its rival (another space's best) is as before. */
static int heavy(const struct ft_race *rc)
{
	double fastest;

	if (!(rc->o.heat_ms > 0) || rc->o.finalists < 2 || rc->nfin < 1)
		return 0;
	fastest = ft_race_time(&rc->fin[0]);
	return fastest >= FT_RACE_HEAT_MIN_US &&
	       !(rc->o.rival_us > 0 && fastest > FT_RACE_HEAT_SPAN * rc->o.rival_us);
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
	/* in the race's units: a candidate timed late, on a GPU slowed since, is
	 * ranked by its time against the anchor's then */
	for (at = rc->nfin; at > 0 && ft_race_time(&rc->fin[at - 1]) > ft_race_time(t); at--)
		;
	if (at >= keep(rc))
		return;
	if (rc->nfin < keep(rc))
		rc->nfin++;
	memmove(&rc->fin[at + 1], &rc->fin[at], (size_t)(rc->nfin - 1 - at) * sizeof(rc->fin[0]));
	rc->fin[at] = *t;
	rc->fin[at].log = NULL;
}

int ft_race_finalists(const struct ft_race *rc, const struct ft_trial **out)
{
	int n;

	*out = rc ? rc->fin : NULL;
	if (!rc)
		return 0;
	n = rc->nfin < rc->o.finalists ? rc->nfin : rc->o.finalists;
	if (heavy(rc))
		while (n < rc->nfin &&
		       ft_race_time(&rc->fin[n]) <= FT_RACE_HEAT_SPAN * ft_race_time(&rc->fin[0]))
			n++;
	return n;
}

int ft_race_rounds(const struct ft_race *rc)
{
	return rc ? rc->o.rounds : FT_RACE_ROUNDS;
}

double ft_race_heat_ms(const struct ft_race *rc)
{
	return rc && heavy(rc) ? rc->o.heat_ms : 0;
}

int ft_race_final(struct ft_race *rc, const struct ft_job *jobs, int n, ft_race_run_fn run,
		  void *ctx, struct ft_job_result *out, int *rounds,
		  struct ft_interleave_trace *trace, struct ft_err *err)
{
	/* the final follows the search on a GPU at its clocks: one launch
	 * uploads a finalist's graph */
	struct ft_interleave_opts o = { .rounds = ft_race_rounds(rc),
					.sample_us = FT_RACE_FINAL_SAMPLE_US,
					.warmup = FT_RACE_WARMUP,
					.leave_over = FT_RACE_FINAL_CUT,
					.trace = trace,
					.spread = rc ? rc->o.spread : 0 };
	double prior[FT_RACE_MAX_FINALISTS];
	long long ran = 0;
	int r;

	if (n > FT_RACE_MAX_FINALISTS)
		n = FT_RACE_MAX_FINALISTS;
	/* jobs[i] is finalist i's: its full measurement is the prior that a
	 * finalist leaving after the first round must agree with */
	if (rc && n <= rc->nfin) {
		for (int i = 0; i < n; i++)
			prior[i] = ft_race_time(&rc->fin[i]);
		o.prior = prior;
	}
	o.heat_ms = ft_race_heat_ms(rc);
	if (o.heat_ms > 0 && rc->o.close_rounds > 0) {
		o.close_rounds = rc->o.close_rounds;
		o.close_within = FT_RACE_CLOSE_WITHIN;
		o.close_max = FT_RACE_CLOSE_MAX;
	}
	r = ft_interleave(&o, jobs, n, run, ctx, out, rounds, &ran, err);
	if (rc) {
		pthread_mutex_lock(&rc->m);
		rc->st.final_jobs += ran;
		rc->st.heated += o.heat_ms > 0 && ran > 0;
		pthread_mutex_unlock(&rc->m);
	}
	return r;
}

int ft_race_final_sweep(struct ft_race *rc, const struct ft_job *jobs, int n, ft_race_sweep_fn sweep,
			void *ctx, struct ft_job_result *out, int *rounds,
			struct ft_interleave_trace *trace, struct ft_err *err)
{
	struct ft_sweep *g;
	struct ft_sweep_result *res;
	int nr = ft_race_rounds(rc), total, r;

	/* close rounds are the rounds' (a heated final's close finalists alone) */
	if (!rc || !rc->o.sweep || n < 2 || (rc->o.close_rounds > 0 && ft_race_heat_ms(rc) > 0))
		return 1;
	if (n > FT_RACE_MAX_FINALISTS)
		n = FT_RACE_MAX_FINALISTS;
	g = calloc(1, sizeof(*g));
	res = calloc(1, sizeof(*res));
	if (!g || !res) {
		free(g);
		free(res);
		return ft_error(err, FT_EFAIL, "out of memory for the race's final");
	}
	/* the rounds' samples (ft_interleave: ceil(samples / rounds) a round) */
	total = jobs[0].samples > 0 ? jobs[0].samples : 1;
	g->n = n;
	g->rounds = nr;
	g->per_round = (total + nr - 1) / nr;
	if (g->rounds * g->per_round > FT_RAW_SAMPLES_MAX)
		g->per_round = FT_RAW_SAMPLES_MAX / g->rounds;
	g->heat_ms = ft_race_heat_ms(rc);
	g->leave_over = FT_RACE_FINAL_CUT;
	g->has_prior = n <= rc->nfin;
	for (int i = 0; i < n; i++) {
		struct ft_job *j = &g->jobs[i];

		*j = jobs[i];
		g->prior[i] = g->has_prior ? ft_race_time(&rc->fin[i]) : NAN;
		if (!(j->sample_max_us > 0))
			j->sample_max_us = FT_RACE_FINAL_SAMPLE_US;
		j->samples = g->rounds * g->per_round;
		j->warmup = FT_RACE_WARMUP;
		j->heat_ms = 0;
		j->quick_samples = 0;
		j->stable_rel = 0;
		j->next_cubin_key[0] = '\0';
	}
	r = sweep(ctx, g, res, err);
	if (!r && !res->failed) {
		if (trace) {
			ft_interleave_trace_clear(trace);
			for (int k = 0; k < nr; k++) {
				trace->ran[k] = res->ran[k];
				for (int i = 0; i < n; i++) {
					trace->median_us[i][k] = res->median_us[i][k];
					trace->place[i][k] = res->place[i][k];
				}
			}
		}
		for (int i = 0; i < n; i++) {
			out[i] = res->res[i];
			if (rounds)
				rounds[i] = res->rounds[i];
		}
	}
	pthread_mutex_lock(&rc->m);
	if (!r && !res->failed) {
		rc->st.final_jobs++;
		rc->st.swept++;
		rc->st.heated += g->heat_ms > 0;
	} else if (!r) {
		rc->st.sweeps_failed++;
	}
	pthread_mutex_unlock(&rc->m);
	if (!r && res->failed)
		r = 1;
	free(g);
	free(res);
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
