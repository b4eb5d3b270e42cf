/* status.c - the names of trial statuses and stages, and a trial's "nothing known" state (see trial.h).
 *
 * The names are public: they are stored in the database (db/schema.sql checks
 * them) and printed by queries, so they never change once released.
 */
#include "base/trial.h"

#include <math.h>
#include <string.h>

static const char *const status_names[FT_ST_COUNT] = {
	[FT_ST_REJECTED_CONSTRAINT] = "rejected_constraint",
	[FT_ST_REJECTED_SMEM] = "rejected_smem",
	[FT_ST_COMPILE_FAILED] = "compile_failed",
	[FT_ST_SPILLS] = "spills",
	[FT_ST_COMPILED] = "compiled",
	[FT_ST_OK] = "ok",
	[FT_ST_WRONG_RESULT] = "wrong_result",
	[FT_ST_CRASHED] = "crashed",
	[FT_ST_TIMEOUT] = "timeout",
	[FT_ST_NOT_IN_RECORDING] = "not_in_recording",
	[FT_ST_ACCEPTED] = "accepted",
	[FT_ST_CUT] = "cut",
};

static const char *const stage_names[FT_STAGE_COUNT] = {
	[FT_STAGE_ENUMERATED] = "enumerated",
	[FT_STAGE_MODEL] = "model",
	[FT_STAGE_COMPILED] = "compiled",
	[FT_STAGE_VERIFIED] = "verified",
	[FT_STAGE_TIMED] = "timed",
};

const char *ft_stage_name(enum ft_stage s)
{
	if ((int)s < 0 || s >= FT_STAGE_COUNT)
		return "invalid_stage";
	return stage_names[s];
}

int ft_stage_parse(const char *name, enum ft_stage *out)
{
	if (!name)
		return -1;
	for (int i = 0; i < FT_STAGE_COUNT; i++)
		if (!strcmp(name, stage_names[i])) {
			*out = (enum ft_stage)i;
			return 0;
		}
	return -1;
}

int ft_trial_pending(const struct ft_trial *t)
{
	return (t->stage == FT_STAGE_MODEL && t->status == FT_ST_ACCEPTED) ||
	       (t->stage == FT_STAGE_COMPILED && t->status == FT_ST_COMPILED);
}

/* An out-of-range value gets a name that no table accepts, so printing it is
 * safe and storing it fails loudly. */
const char *ft_status_name(enum ft_status s)
{
	if ((int)s < 0 || s >= FT_ST_COUNT)
		return "invalid_status";
	return status_names[s];
}

int ft_status_parse(const char *name, enum ft_status *out)
{
	if (!name)
		return -1;
	for (int i = 0; i < FT_ST_COUNT; i++) {
		if (!strcmp(name, status_names[i])) {
			*out = (enum ft_status)i;
			return 0;
		}
	}
	return -1;
}

void ft_trial_init(struct ft_trial *t)
{
	memset(t, 0, sizeof(*t));
	t->status = FT_ST_REJECTED_CONSTRAINT;
	t->stage = FT_STAGE_ENUMERATED;
	t->log = NULL;
	/* -1 is "unknown" for every count and size below (the DB stores it as NULL) */
	t->smem_model = -1;
	t->threads = -1;
	t->combine_threads = -1;
	for (int i = 0; i < 3; i++) {
		t->grid[i] = -1;
		t->combine_grid[i] = -1;
	}
	t->res.regs = -1;
	t->res.smem_static = -1;
	t->res.stack_bytes = -1;
	t->res.spill_stores = -1;
	t->res.spill_loads = -1;
	t->res.wgmma_serialized = -1;
	t->device_index = -1;
	t->compile_ms = NAN;
	t->rel_err = NAN;
	t->t_median_us = NAN;
	t->t_min_us = NAN;
	t->t_p90_us = NAN;
	t->t_spread = NAN;
	t->samples = 0;
}
