/* sweep.c - the sweep's bookkeeping (see sweep.h). */
#include "run/sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run/verify.h"

void ft_sweep_fail(struct ft_sweep_result *out, const char *why)
{
	out->failed = 1;
	snprintf(out->why, sizeof(out->why), "%s", why);
}

int ft_sweep_valid(const struct ft_sweep *g, char *why, size_t size)
{
	if (g->n < 1 || g->n > FT_SWEEP_MAX || g->rounds < 1 || g->rounds > FT_SWEEP_ROUNDS_MAX ||
	    g->per_round < 1 || g->rounds * g->per_round > FT_RAW_SAMPLES_MAX) {
		snprintf(why, size, "a sweep of %d candidates, %d rounds of %d samples: out of range",
			 g->n, g->rounds, g->per_round);
		return 0;
	}
	if (!(g->heat_ms >= 0) || !(g->leave_over == 0 || g->leave_over > 1)) {
		snprintf(why, size, "a sweep's heat %g ms or leave_over %g: out of range", g->heat_ms,
			 g->leave_over);
		return 0;
	}
	for (int i = 0; i < g->n; i++) {
		const struct ft_job *j = &g->jobs[i];

		if (j->cold || !j->timing) {
			snprintf(why, size, "a sweep times warm jobs only ('%.100s' is %s)", j->config,
				 j->cold ? "cold" : "not timed");
			return 0;
		}
		if (j->seed != g->jobs[0].seed ||
		    memcmp(&j->shape, &g->jobs[0].shape, sizeof(j->shape))) {
			snprintf(why, size, "a sweep's candidates share one shape and seed ('%.100s' does not)",
				 j->config);
			return 0;
		}
	}
	return 1;
}

void ft_sweep_begin(struct ft_sweep_state *s, const struct ft_sweep *g,
		    struct ft_sweep_result *out)
{
	memset(s, 0, sizeof(*s));
	memset(out, 0, sizeof(*out));
	s->g = g;
	s->out = out;
	for (int i = 0; i < FT_SWEEP_MAX; i++) {
		ft_job_result_init(&out->res[i]);
		for (int r = 0; r < FT_SWEEP_ROUNDS_MAX; r++) {
			out->median_us[i][r] = NAN;
			out->place[i][r] = -1;
		}
		s->in[i] = i < g->n;
	}
}

int ft_sweep_open(struct ft_sweep_state *s, const struct ft_sweep *g, struct ft_sweep_result *out)
{
	char why[sizeof(out->why)];

	if (!ft_sweep_valid(g, why, sizeof(why))) {
		memset(out, 0, sizeof(*out));
		ft_sweep_fail(out, why);
		return 0;
	}
	ft_sweep_begin(s, g, out);
	return 1;
}

void ft_sweep_drop(struct ft_sweep_state *s, int i, const struct ft_job_result *v)
{
	double phases[FT_PH_COUNT];

	/* what the candidate cost so far stays counted */
	memcpy(phases, s->out->res[i].phase_ms, sizeof(phases));
	s->out->res[i] = *v;
	for (int p = 0; p < FT_PH_COUNT; p++)
		s->out->res[i].phase_ms[p] += phases[p];
	s->in[i] = 0;
}

int ft_sweep_round(struct ft_sweep_state *s, int r, int *seq)
{
	const struct ft_sweep *g = s->g;
	int act[FT_SWEEP_MAX], m = 0, t = 0;

	for (int i = 0; i < g->n; i++)
		if (s->in[i]) {
			act[m++] = i;
			s->round_from[i] = s->have[i];
		}
	s->out->ran[r] = m;
	for (int k = 0; m && k < g->per_round; k++) {
		int start = (r * g->per_round + k) % m;

		for (int j = 0; j < m; j++) {
			int i = act[(start + j) % m];

			if (k == 0)
				s->out->place[i][r] = j;
			seq[t++] = i;
		}
	}
	return t;
}

void ft_sweep_take(struct ft_sweep_state *s, int i, double us)
{
	if (s->have[i] < FT_RAW_SAMPLES_MAX)
		s->us[i][s->have[i]++] = us;
}

/* The statistics of x[0..n) (sorted in a copy). 0, or -1 when none is finite. */
static int stats_of(const double *x, int n, struct ft_stats *st)
{
	double y[FT_RAW_SAMPLES_MAX];

	if (n < 1)
		return -1;
	memcpy(y, x, (size_t)n * sizeof(*y));
	return ft_stats_compute(y, n, st);
}

void ft_sweep_round_end(struct ft_sweep_state *s, int r)
{
	const struct ft_sweep *g = s->g;
	double med[FT_SWEEP_MAX], min[FT_SWEEP_MAX];
	int leaving = r == 0 && g->leave_over > 1;	/* the pooled statistics are for the rule */

	for (int i = 0; i < g->n; i++) {
		struct ft_stats st;

		med[i] = min[i] = NAN;
		if (!s->in[i])
			continue;
		s->out->rounds[i]++;
		if (stats_of(s->us[i] + s->round_from[i], s->have[i] - s->round_from[i], &st))
			continue;
		s->out->median_us[i][r] = st.median;
		if (leaving && !stats_of(s->us[i], s->have[i], &st)) {
			med[i] = st.median;
			min[i] = st.min;
		}
	}
	if (leaving) {
		int left[FT_SWEEP_MAX] = { 0 };

		ft_interleave_leave(med, min, g->n, g->leave_over, g->has_prior ? g->prior : NULL,
				    left);
		for (int i = 0; i < g->n; i++)
			if (left[i])
				s->in[i] = 0;
	}
}

void ft_sweep_finish(struct ft_sweep_state *s)
{
	const struct ft_sweep *g = s->g;

	for (int i = 0; i < g->n; i++) {
		struct ft_job_result *res = &s->out->res[i];
		struct ft_stats st;

		if (res->status != FT_ST_OK || !s->out->rounds[i])
			continue;	/* dropped with its verdict, or never timed */
		if (stats_of(s->us[i], s->have[i], &st)) {
			res->status = FT_ST_CRASHED;
			snprintf(res->reason, sizeof(res->reason),
				 "the sweep gave no finite sample: is the GPU in a bad state?");
			continue;
		}
		res->t_median_us = st.median;
		res->t_min_us = st.min;
		res->t_p90_us = st.p90;
		res->t_spread = st.spread;
		res->samples = s->have[i];
		res->nraw = s->have[i];
		for (int k = 0; k < s->have[i]; k++)
			res->raw_us[k] = (float)s->us[i][k];
	}
}

int ft_sweep_by_jobs(const struct ft_sweep *g, ft_job_run_fn run, void *ctx,
		     struct ft_sweep_result *out, struct ft_err *err)
{
	int seq[FT_SWEEP_MAX * FT_RAW_SAMPLES_MAX];
	struct ft_sweep_state s;
	int first = 1;

	if (!ft_sweep_open(&s, g, out))
		return 0;
	for (int r = 0; r < g->rounds; r++) {
		int t = ft_sweep_round(&s, r, seq);

		for (int k = 0; k < t; k++) {
			int i = seq[k];
			struct ft_job job = g->jobs[i];
			struct ft_job_result res;

			if (!s.in[i])
				continue;	/* stopped earlier in this round */
			job.samples = 1;
			job.quick_samples = 0;
			job.stable_rel = 0;
			job.heat_ms = first ? g->heat_ms : 0;
			first = 0;
			ft_job_result_init(&res);
			if (run(ctx, &job, &res, err))
				return -1;
			if (res.status != FT_ST_OK) {
				ft_sweep_drop(&s, i, &res);
				continue;
			}
			ft_phases_add(&out->res[i], &res, 0);
			out->res[i].launches_per_sample = res.launches_per_sample;
			ft_errors_add(&out->res[i], &res);
			ft_sweep_take(&s, i, res.nraw > 0 ? res.raw_us[0] : res.t_median_us);
		}
		ft_sweep_round_end(&s, r);
	}
	ft_sweep_finish(&s);
	return 0;
}
