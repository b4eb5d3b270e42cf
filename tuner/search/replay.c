/* replay.c - the `replay` runner (run/runner.h): recorded trials standing in for the GPU.
 *
 * `fatune search --replay DB` runs the pipeline (enumeration, model check,
 * strategy, budget) but takes each candidate's compile verdict, check and
 * times from the trials recorded in DB for the same arch, shape, dtype, causal
 * flag and template, instead of a GPU. It tests strategies with no GPU (in CI)
 * and measures how many evaluations each needs to come near the exhaustive
 * optimum. The runner answers every candidate as it is sent (runner.h's
 * answer) and evaluates no job: nothing is compiled, and its runs are stored
 * as replayed (info.measured 0).
 *
 * It lives here, above db/, because it reads the database and the config
 * matching of search/strategy.h; the runner table (run/runner.c) names it by
 * its extern only.
 */
#include "run/runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "search/strategy.h"

struct rec {
	char config[FT_CONFIG_MAX];
	char claimed[FT_CONFIG_MAX];	/* the candidate given it by cover, "" when none */
	enum ft_status status;
	enum ft_stage stage;
	char reason[256];
	double rel_err, median, min, p90, spread;
	long long id;
};

struct ft_replay {
	struct rec *recs;
	long long n, cap;
	char device[128];
	const char *template_name;
};

static double num(const char *v)
{
	return v ? strtod(v, NULL) : NAN;
}

/* A row of FT_Q_TRIALS: keep timed verdicts, the newest per config. */
static int on_row(void *ctx, int ncols, const char *const *names, const char *const *values,
		  const int *types)
{
	struct ft_replay *r = ctx;
	struct rec x = { .rel_err = NAN, .median = NAN, .min = NAN, .p90 = NAN, .spread = NAN };
	const char *status = NULL, *tpl = NULL, *stage = NULL, *mode = NULL;

	for (int i = 0; i < ncols; i++) {
		const char *v = values[i];
		if (!v)
			continue;
		if (!strcmp(names[i], "config"))
			snprintf(x.config, sizeof(x.config), "%s", v);
		else if (!strcmp(names[i], "status"))
			status = v;
		else if (!strcmp(names[i], "reason"))
			snprintf(x.reason, sizeof(x.reason), "%s", v);
		else if (!strcmp(names[i], "rel_err"))
			x.rel_err = num(v);
		else if (!strcmp(names[i], "t_median_us"))
			x.median = num(v);
		else if (!strcmp(names[i], "t_min_us"))
			x.min = num(v);
		else if (!strcmp(names[i], "t_p90_us"))
			x.p90 = num(v);
		else if (!strcmp(names[i], "t_spread"))
			x.spread = num(v);
		else if (!strcmp(names[i], "id"))
			x.id = strtoll(v, NULL, 10);
		else if (!strcmp(names[i], "stage"))
			stage = v;
		else if (!strcmp(names[i], "run_mode"))
			mode = v;
		else if (!strcmp(names[i], "template") || !strcmp(names[i], "template_name"))
			tpl = v;
		else if (!strcmp(names[i], "device") && !r->device[0])
			snprintf(r->device, sizeof(r->device), "%s", v);
	}
	(void)types;
	/* kept: what a device or the compiler said. Model rejections are
	 * recomputed by the pipeline, compiled means never run, and a replayed run
	 * is no recording (its results came from another) */
	if (!status || ft_status_parse(status, &x.status) || !stage ||
	    ft_stage_parse(stage, &x.stage) || x.stage <= FT_STAGE_MODEL ||
	    x.status == FT_ST_COMPILED || (mode && !strcmp(mode, "replayed")))
		return FT_ROW_NEXT;
	if (tpl && r->template_name && strcmp(tpl, r->template_name))
		return FT_ROW_NEXT;
	for (long long i = 0; i < r->n; i++)
		if (!strcmp(r->recs[i].config, x.config)) {
			if (x.id > r->recs[i].id)
				r->recs[i] = x;
			return 0;
		}
	if (r->n == r->cap) {
		struct rec *n = realloc(r->recs, (r->cap = r->cap ? r->cap * 2 : 128) * sizeof(*n));
		if (!n)
			return FT_ROW_ERROR; /* never a silent partial replay */
		r->recs = n;
	}
	r->recs[r->n++] = x;
	return 0;
}

static void replay_close(void *ctx);

/* Loads the latest recorded timed trial per config. Fails with FT_EINPUT when
 * the DB holds no timed trial for the target ("... record one with 'fatune
 * search' on a GPU first"). Records of runs that were themselves replayed are
 * not used. */
static int replay_load(struct ft_replay **out, const char *db_path, const char *arch,
		   const struct ft_shape *shape, const char *template_name, struct ft_err *err)
{
	struct ft_query_filter f = { .arch = arch, .shape = shape, .dtype = shape->dtype,
				     .causal = shape->causal, .run_id = -1, .limit = -1 };
	struct ft_replay *r = calloc(1, sizeof(*r));
	struct ft_db *db = NULL;
	char sh[64];

	if (!r)
		return ft_error(err, FT_EFAIL, "out of memory");
	r->template_name = template_name;
	if (ft_db_open(&db, db_path, 0, err) ||
	    ft_db_query(db, FT_Q_TRIALS, &f, on_row, r, err)) {
		ft_db_close(db);
		replay_close(r);
		ft_err_prefix(err, "replay");
		return -1;
	}
	ft_db_close(db);
	r->template_name = NULL;
	if (r->n == 0) {
		replay_close(r);
		/* the template too: a campaign replays each space from its own */
		return ft_error(err, FT_EINPUT,
				"replay: '%s' holds no timed trial for %s %s %s%s%s%s%s: record one with 'fatune search' on a GPU first",
				db_path, arch, ft_shape_format(shape, sh, sizeof(sh)),
				ft_dtype_name(shape->dtype), shape->causal ? " causal" : "",
				template_name ? " of template '" : "", template_name ? template_name : "",
				template_name ? "'" : "");
	}
	*out = r;
	return 0;
}

static void give(const struct rec *x, struct ft_trial *t)
{
	t->stage = x->stage;
	t->status = x->status;
	snprintf(t->reason, sizeof(t->reason), "%s", x->reason);
	t->rel_err = x->rel_err;
	t->t_median_us = x->median;
	t->t_min_us = x->min;
	t->t_p90_us = x->p90;
	t->t_spread = x->spread;
}

/* Fills t's stage, status, reason, rel_err and times from the record of
 * t->config, or else of a recorded config whose every NAME=V t->config holds
 * (a space that grew parameters since): such a record is given to the first
 * candidate that holds it, only to that one - a twin differing only in a
 * parameter the recording lacks was never measured. "First" is the order of
 * the calls: the pipeline asks on its main thread in the order its strategy
 * sends (runner.h's answer), so a seed gives the same replay. A config with
 * no record becomes not_in_recording at stage MODEL, with no time. Always 1:
 * every candidate is answered. */
static int replay_answer(void *ctx, struct ft_trial *t)
{
	struct ft_replay *r = ctx;
	struct rec *twin = NULL;

	for (long long i = 0; i < r->n; i++)
		if (!strcmp(r->recs[i].config, t->config)) {
			give(&r->recs[i], t);
			return 1;
		}
	/* a record of fewer parameters goes to the first candidate that holds it,
	 * once: its twins (other values of a parameter the recording lacks) were
	 * never measured */
	for (long long i = 0; i < r->n; i++) {
		struct rec *x = &r->recs[i];
		if (!ft_config_covers(t->config, x->config))
			continue;
		if (!x->claimed[0] || !strcmp(x->claimed, t->config)) {
			snprintf(x->claimed, sizeof(x->claimed), "%s", t->config);
			give(x, t);
			return 1;
		}
		twin = x;
	}
	t->stage = FT_STAGE_MODEL;
	t->status = FT_ST_NOT_IN_RECORDING;
	if (twin)
		snprintf(t->reason, sizeof(t->reason),
			 "not in the recording: its one result for '%.200s' went to '%.200s'",
			 twin->config, twin->claimed);
	else
		snprintf(t->reason, sizeof(t->reason), "not in the recording");
	return 1;
}

static int replay_open(void **ctx, const struct ft_runner_cfg *cfg, struct ft_runner_info *info,
		       struct ft_err *err)
{
	struct ft_replay *r = NULL;

	if (!cfg->db_path || !cfg->arch || !cfg->shape)
		return ft_error(err, FT_EINPUT, "replay: give the recording (--replay DB), --arch and a shape");
	if (replay_load(&r, cfg->db_path, cfg->arch, cfg->shape, cfg->template_name, err))
		return -1;
	snprintf(info->device, sizeof(info->device), "%s", r->device);
	info->measured = 0;	/* copied, not measured: stored as replayed */
	info->needs_cubin = 0;
	info->search_tag = "yes";
	*ctx = r;
	return 0;
}

static void replay_close(void *ctx)
{
	struct ft_replay *r = ctx;

	if (!r)
		return;
	free(r->recs);
	free(r);
}

const struct ft_runner_ops ft_runner_replay = {
	.name = "replay",
	.summary = "the verdicts and times recorded in a database (search --replay DB)",
	.open = replay_open,
	.answer = replay_answer,
	.close = replay_close,
};
