/* job.c - a job's verdict before anything is known, its phase times, and a verdict into its trial (see job.h). */
#include "run/job.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ft_job_result_init(struct ft_job_result *r)
{
	memset(r, 0, sizeof(*r));
	r->status = FT_ST_OK;
	r->rel_err = NAN;
	r->max_abs_err = NAN;
	r->t_median_us = r->t_min_us = r->t_p90_us = r->t_spread = NAN;
}

const char *const ft_phase_names[FT_PH_COUNT] = {
	"start", "load", "inputs", "verify", "size", "graph", "warmup", "quick", "samples", "unload", "job", "shared",
};

void ft_phases_add(struct ft_job_result *into, const struct ft_job_result *from, int quick)
{
	for (int i = 0; i < FT_PH_COUNT; i++)
		into->phase_ms[quick && i == FT_PH_SAMPLES ? FT_PH_QUICK : i] += from->phase_ms[i];
}

void ft_errors_add(struct ft_job_result *into, const struct ft_job_result *from)
{
	if (isnan(into->rel_err) || !(from->rel_err <= into->rel_err))
		into->rel_err = from->rel_err;
	if (isnan(into->max_abs_err) || !(from->max_abs_err <= into->max_abs_err))
		into->max_abs_err = from->max_abs_err;
}

void ft_trial_take(struct ft_trial *t, const struct ft_job_result *res)
{
	t->status = res->status;
	/* timed exactly when the worker measured it (a verify-only job is not;
	 * a cut one was, by the race's quick pass) */
	t->stage = (res->status == FT_ST_OK || res->status == FT_ST_CUT) && !isnan(res->t_median_us)
			   ? FT_STAGE_TIMED
			   : FT_STAGE_VERIFIED;
	snprintf(t->reason, sizeof(t->reason), "%s", res->reason);
	t->rel_err = res->rel_err;
	t->t_median_us = res->t_median_us;
	t->t_min_us = res->t_min_us;
	t->t_p90_us = res->t_p90_us;
	t->t_spread = res->t_spread;
	t->samples = res->samples;
	t->launches_per_sample = res->launches_per_sample;
}
