/* campaign_unit.c - one unit of a campaign: every target and space, one search each, then its report (see campaign_unit.h). */
#include "base/clock.h"
#include "search/campaign_unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/interrupt.h"
#include "search/prefetch.h"

/* The search options for target t: the unit's runner, if any, evaluates
 * instead of the target's GPUs, else the GPUs the unit took (cu->runners,
 * side by side), else every GPU of the target. A unit side by side with
 * others gets the compile threads in proportion to its GPUs (at least one):
 * two lanes of all the cores each made every compile 1.4x slower on two
 * H200s and the cold suite24 slower (docs/timing.md). */
static void target_opts(const struct ft_campaign_run_opts *o, const struct ft_campaign_target *t,
			struct ft_runner **unit, const struct ft_campaign_unit *cu, struct ft_search_opts *so)
{
	*so = o->search;
	so->arch = t->arch;
	so->device = *unit ? ft_runner_info(*unit)->device : t->nrunners ? t->device : "";
	so->driver_version = t->driver_version ? t->driver_version : "";
	so->runners = *unit ? unit : cu->runners ? cu->runners : t->runners;
	so->nrunners = *unit ? 1 : cu->runners ? cu->nrunners : t->nrunners;
	so->sm_count = t->sm_count;
	if (!*unit && cu->runners && t->nrunners > 0) {
		so->jobs = so->jobs * cu->nrunners / t->nrunners;
		so->jobs = so->jobs < 1 ? 1 : so->jobs;
	}
}

/* The searches unit u will run: the spaces that fit, on every target. */
static int count_parts(const struct ft_campaign_run_opts *o, int u)
{
	char why[512];
	int n = 0;

	for (int g = 0; g < o->ntargets; g++)
		for (int i = 0; i < o->nsp; i++)
			n += !ft_space_unsearched(o->sps[i], o->targets[g].arch, &o->camp->units[u], why, sizeof(why));
	return n;
}

/* The search after space i of target t on `shape` that a prefetch can
 * compile for (prefetch.h): the next space that fits on the same target, else
 * the first that fits of the next unit (`next`, NULL: none) on the first
 * target, with (transfer) that search's seeds as stored now. 0 when there is
 * none, or when nothing compiles (no runner, or one that loads no CUBIN). */
static int next_search(struct ft_db *db, const struct ft_campaign_run_opts *o, const struct ft_search_opts *so,
		       const struct ft_campaign_target *t, const struct ft_shape *shape, int i,
		       const struct ft_shape *next, struct ft_prefetch_cfg *pc)
{
	char why[512];
	const char *device = NULL;

	if (o->no_prefetch || !so->nrunners || !ft_runner_info(so->runners[0])->needs_cubin)
		return 0;
	for (int j = i + 1; j < o->nsp && !device; j++)
		if (!ft_space_unsearched(o->sps[j], t->arch, shape, why, sizeof(why))) {
			*pc = (struct ft_prefetch_cfg){ .sp = o->sps[j], .arch = t->arch, .shape = *shape,
							.sm_count = t->sm_count, .jobs = so->jobs };
			device = so->device;
		}
	for (int j = 0; next && j < o->nsp && !device; j++)
		if (!ft_space_unsearched(o->sps[j], o->targets[0].arch, next, why, sizeof(why))) {
			*pc = (struct ft_prefetch_cfg){ .sp = o->sps[j], .arch = o->targets[0].arch,
							.shape = *next, .sm_count = o->targets[0].sm_count,
							.jobs = so->jobs };
			device = t == &o->targets[0] ? so->device : o->targets[0].device;
		}
	if (!device)
		return 0;
	/* transfer: the next search's seeds from what is stored now (its own
	 * lookup, when it starts, also sees this search's best); a failure here
	 * is that search's to report */
	if (so->strategy && so->strategy->transfer) {
		struct ft_err e = { 0 };

		if (ft_transfer_seeds(db, so->seed_pool, pc->arch->name, device, pc->sp->name,
				      &pc->shape, &pc->seeds, &e))
			pc->seeds.n = 0;
	}
	return 1;
}

/* Unit u on target t: one search per space that fits (*part counts them
 * over the unit's targets). While each search's last candidates are on the
 * GPU, the next search's first ones compile (prefetch.h; `next` is the next
 * unit, NULL: none). Each search after the first gets the unit's best so far
 * on this target as its incumbent (search.h: a transfer search stops once it
 * cannot beat it). Returns -1 on a failure beyond the unit (err), with
 * cu->interrupted on an interrupt. */
static int run_target(const struct ft_campaign_run_opts *o, int u, const struct ft_campaign_target *t,
		      const char *label, int *part, int parts, const struct ft_shape *next,
		      struct ft_campaign_unit *cu, struct ft_err *err)
{
	const struct ft_shape *shape = &o->camp->units[u];
	struct ft_search_opts so;
	double best = 0;	/* the unit's best so far on this target */

	for (int i = 0; i < o->nsp && !cu->interrupted; i++) {
		struct ft_campaign_outcome *oc = &cu->out[cu->nout];
		struct ft_prefetch *pf = NULL;
		struct ft_prefetch_cfg pc;
		struct ft_runner *unit = NULL;
		int rc;

		if (ft_interrupted()) {
			/* between two searches: none is started */
			cu->interrupted = 1;
			break;
		}
		if (ft_space_unsearched(o->sps[i], t->arch, shape, cu->why, sizeof(cu->why))) {
			if (o->on_skip)
				o->on_skip(o->ctx, u, o->sps[i], cu->why);
			continue;
		}
		if (o->unit_runner) {
			/* a runner of the unit (a replay, the fake one) is opened per
			 * search: a replay answers from the trials of this space's
			 * template */
			struct ft_runner_cfg ucfg = o->unit_cfg;

			ucfg.arch = o->targets[0].arch->name;
			ucfg.shape = shape;
			ucfg.template_name = o->sps[i]->name;
			if (ft_runner_open(&unit, o->unit_runner, &ucfg, err))
				return -1;
		}
		target_opts(o, t, &unit, cu, &so);
		so.progress = cu->progress;
		if (so.progress)
			ft_progress_unit(so.progress, label, cu->position, o->camp->nunits, (*part)++, parts,
					 ft_space_candidates(o->sps[i], shape, so.arch));
		memset(oc, 0, sizeof(*oc));
		oc->sp = o->sps[i];
		snprintf(oc->device, sizeof(oc->device), "%s", so.device);
		oc->gpus = ft_runners_devices(so.runners, so.nrunners);
		oc->jobs = so.jobs;
		so.compiles_done = NULL;
		so.compiles_ctx = NULL;
		if (next_search(cu->db, o, &so, t, shape, i, next, &pc) && (pf = ft_prefetch_new())) {
			ft_prefetch_arm(pf, &pc);
			so.compiles_done = ft_prefetch_fire;
			so.compiles_ctx = pf;
		}
		so.incumbent_us = best;
		oc->started_ms = ft_mono_ms() - cu->t0_ms;
		rc = ft_search_run(cu->db, o->sps[i], shape, &so, &oc->res, err);
		oc->ended_ms = ft_mono_ms() - cu->t0_ms;
		ft_runner_close(unit);
		/* the next search starts at once: the prefetch's running compiles
		 * finish beside it (joined at the campaign's end) */
		oc->prefetched = ft_prefetch_retire(pf);
		oc->pf = pf;
		if (!rc && !isnan(oc->res.top[0].t_median_us) && (!best || oc->res.top[0].t_median_us < best))
			best = oc->res.top[0].t_median_us;
		if (so.progress) {
			const struct ft_pipeline_stats *st = &oc->res.st;

			if (oc->res.timed && !rc)
				ft_progress_phases(so.progress, st->compile_wall_ms, st->gpu_busy_ms,
						   st->gpu_wait_ms, st->verify_ms, st->timing_ms);
			ft_progress_end(so.progress);
		}
		cu->nout++;
		if (rc) {
			if (!oc->res.interrupted)
				return -1;
			cu->interrupted = 1;
		}
	}
	return 0;
}

int ft_campaign_unit_run(const struct ft_campaign_run_opts *o, int u, struct ft_campaign_unit *cu,
			 struct ft_err *err)
{
	const struct ft_campaign *c = o->camp;
	char label[128] = "";
	int rc = 0, part = 0, parts = count_parts(o, u);

	cu->nout = 0;
	cu->why[0] = '\0';
	if (c->nunits > 1)
		ft_campaign_label(c, u, label, sizeof(label));
	cu->interrupted = ft_interrupted();
	for (int g = 0; g < o->ntargets && !cu->interrupted && !rc; g++)
		rc = run_target(o, u, &o->targets[g], label, &part, parts,
				g + 1 < o->ntargets ? NULL : cu->next, cu, err);
	/* a retired prefetch's compiles that finished beside the unit's next
	 * search (which waited for them) are this unit's too */
	for (int i = 0; i < cu->nout; i++) {
		if (cu->out[i].pf)
			cu->out[i].prefetched = ft_prefetch_done(cu->out[i].pf);
		cu->out[i].pf = NULL;
	}
	return rc;
}

void ft_campaign_unit_file(const struct ft_campaign_run_opts *o, int u, int rc,
			   const struct ft_campaign_unit *cu, struct ft_campaign_result *r)
{
	int w;

	r->first[u] = r->nout;
	r->count[u] = cu->nout;
	memcpy(r->out + r->nout, cu->out, (size_t)cu->nout * sizeof(*cu->out));
	r->nout += cu->nout;
	r->searched += cu->nout;
	r->interrupted = r->interrupted || cu->interrupted;
	if (rc || cu->interrupted)
		return;
	w = ft_campaign_winner(r->out + r->first[u], r->count[u]);
	r->tuned += w >= 0;
	r->untuned_timed += r->count[u] && w < 0 && r->out[r->first[u]].res.timed;
	if (o->on_unit)
		o->on_unit(o->ctx, u, r->out + r->first[u], r->count[u], cu->why);
}

