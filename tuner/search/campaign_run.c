/* campaign_run.c - the campaign driver: every unit, target and space, one search each (see campaign_run.h). */
#include "search/campaign_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/interrupt.h"
#include "search/replay.h"

int ft_campaign_winner(const struct ft_campaign_outcome *out, int n)
{
	int w = -1;

	for (int i = 0; i < n; i++)
		if (!isnan(out[i].res.top[0].t_median_us) &&
		    (w < 0 || out[i].res.top[0].t_median_us < out[w].res.top[0].t_median_us))
			w = i;
	return w;
}

void ft_campaign_result_release(struct ft_campaign_result *r)
{
	free(r->out);
	free(r->first);
	free(r->count);
	memset(r, 0, sizeof(*r));
}

/* The search options for target t (and the unit's replay, if any). */
static void target_opts(const struct ft_campaign_run_opts *o, const struct ft_campaign_target *t,
			struct ft_replay *replay, struct ft_search_opts *so)
{
	*so = o->search;
	so->arch = t->arch;
	so->device = t->nworkers ? t->device : replay ? ft_replay_device(replay) : "";
	so->driver_version = t->driver_version ? t->driver_version : "";
	so->workers = t->workers;
	so->nworkers = t->nworkers;
	so->sm_count = t->sm_count;
	so->replay = replay;
}

/* The searches unit u will run: the spaces that fit, on every target. */
static int count_parts(const struct ft_campaign_run_opts *o, int u)
{
	char why[512];
	int n = 0;

	for (int g = 0; g < o->ntargets; g++)
		for (int i = 0; i < o->nsp; i++)
			n += !ft_space_unfit(o->sps[i], o->targets[g].arch, &o->camp->units[u], why,
					     sizeof(why));
	return n;
}

/* Unit u on target t: one search per space that fits (*part counts them
 * over the unit's targets). Returns -1 on a failure beyond the unit (err),
 * with r->interrupted on an interrupt. */
static int run_target(struct ft_db *db, const struct ft_campaign_run_opts *o, int u,
		      const struct ft_campaign_target *t, struct ft_replay *replay,
		      const char *label, int *part, int parts, struct ft_campaign_result *r,
		      char *why, size_t why_size, struct ft_err *err)
{
	const struct ft_shape *shape = &o->camp->units[u];
	struct ft_search_opts so;

	target_opts(o, t, replay, &so);
	for (int i = 0; i < o->nsp && !r->interrupted; i++) {
		struct ft_campaign_outcome *oc = &r->out[r->nout];
		int rc;

		if (ft_interrupted()) {
			/* between two searches: none is started */
			r->interrupted = 1;
			break;
		}
		if (ft_space_unfit(o->sps[i], so.arch, shape, why, why_size)) {
			if (o->on_skip)
				o->on_skip(o->ctx, u, o->sps[i], why);
			continue;
		}
		if (so.progress)
			ft_progress_unit(so.progress, label, u, o->camp->nunits, (*part)++, parts,
					 ft_space_candidates(o->sps[i], shape, so.arch));
		oc->sp = o->sps[i];
		snprintf(oc->device, sizeof(oc->device), "%s", so.device);
		rc = ft_search_run(db, o->sps[i], shape, &so, &oc->res, err);
		if (so.progress) {
			const struct ft_pipeline_stats *st = &oc->res.st;

			if (oc->res.timed && !rc)
				ft_progress_phases(so.progress, st->compile_wall_ms, st->gpu_busy_ms,
						   st->gpu_wait_ms, st->verify_ms, st->timing_ms);
			ft_progress_end(so.progress);
		}
		r->nout++;
		r->searched++;
		if (rc) {
			if (!oc->res.interrupted)
				return -1;
			r->interrupted = 1;
		}
	}
	return 0;
}

/* Unit u: every target, then the unit's report. */
static int run_unit(struct ft_db *db, const struct ft_campaign_run_opts *o, int u,
		    struct ft_campaign_result *r, struct ft_err *err)
{
	const struct ft_campaign *c = o->camp;
	struct ft_replay *replay = NULL;
	char label[128] = "", why[512] = "";
	int rc = 0, w, part = 0, parts = count_parts(o, u);

	r->first[u] = r->nout;
	if (c->nunits > 1)
		ft_campaign_label(c, u, label, sizeof(label));
	if (o->replay_db &&
	    ft_replay_open(&replay, o->replay_db, o->targets[0].arch->name, &c->units[u],
			   o->sps[0]->name, err))
		return -1;
	r->interrupted = r->interrupted || ft_interrupted();
	for (int g = 0; g < o->ntargets && !r->interrupted && !rc; g++)
		rc = run_target(db, o, u, &o->targets[g], replay, label, &part, parts, r, why,
				sizeof(why), err);
	ft_replay_close(replay);
	r->count[u] = r->nout - r->first[u];
	if (rc || r->interrupted)
		return rc;
	w = ft_campaign_winner(r->out + r->first[u], r->count[u]);
	r->tuned += w >= 0;
	r->untuned_timed += r->count[u] && w < 0 && r->out[r->first[u]].res.timed;
	if (o->on_unit)
		o->on_unit(o->ctx, u, r->out + r->first[u], r->count[u], why);
	return 0;
}

int ft_campaign_run(struct ft_db *db, const struct ft_campaign_run_opts *o,
		    struct ft_campaign_result *r, struct ft_err *err)
{
	size_t units = (size_t)(o->camp->nunits ? o->camp->nunits : 1);
	double t0 = ft_now_ms();
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->out = calloc(units * (size_t)(o->nsp ? o->nsp : 1) * (size_t)o->ntargets, sizeof(*r->out));
	r->first = calloc(units, sizeof(*r->first));
	r->count = calloc(units, sizeof(*r->count));
	if (!r->out || !r->first || !r->count)
		return ft_error(err, FT_EFAIL, "out of memory starting a campaign");
	for (int u = 0; u < o->camp->nunits && !r->interrupted && !rc; u++)
		rc = run_unit(db, o, u, r, err);
	r->wall_ms = ft_now_ms() - t0;
	return rc || r->interrupted ? -1 : 0;
}
