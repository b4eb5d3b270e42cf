/* job.c - a job's verdict before anything is known (see job.h). */
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
