/* job.c - a job's verdict before anything is known, and its phase times (see job.h). */
#include "run/job.h"

#include <math.h>
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
	"start", "load", "inputs", "verify", "size", "graph", "warmup", "quick", "samples", "unload", "job",
};

void ft_phases_add(struct ft_job_result *into, const struct ft_job_result *from, int quick)
{
	for (int i = 0; i < FT_PH_COUNT; i++)
		into->phase_ms[quick && i == FT_PH_SAMPLES ? FT_PH_QUICK : i] += from->phase_ms[i];
}
