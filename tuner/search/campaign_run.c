/* campaign_run.c - the campaign driver: every unit, target and space, one search each (see campaign_run.h). */
#include "search/campaign_run.h"
#include "search/campaign_unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/interrupt.h"
#include "search/prefetch.h"

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

/* The search options for target t (and the unit's runner, if any: it
 * evaluates instead of the target's). */
static void target_opts(const struct ft_campaign_run_opts *o, const struct ft_campaign_target *t,
			struct ft_runner **unit, struct ft_search_opts *so)
{
	*so = o->search;
	so->arch = t->arch;
	so->device = *unit ? ft_runner_info(*unit)->device : t->nrunners ? t->device : "";
	so->driver_version = t->driver_version ? t->driver_version : "";
	so->runners = *unit ? unit : t->runners;
	so->nrunners = *unit ? 1 : t->nrunners;
	so->sm_count = t->sm_count;
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
		if (!ft_space_unfit(o->sps[j], t->arch, shape, why, sizeof(why))) {
			*pc = (struct ft_prefetch_cfg){ .sp = o->sps[j], .arch = t->arch, .shape = *shape,
							.sm_count = t->sm_count, .jobs = so->jobs };
			device = so->device;
		}
	for (int j = 0; next && j < o->nsp && !device; j++)
		if (!ft_space_unfit(o->sps[j], o->targets[0].arch, next, why, sizeof(why))) {
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
		      struct ft_runner **unit, const char *label, int *part, int parts,
		      const struct ft_shape *next, struct ft_campaign_unit *cu, struct ft_err *err)
{
	const struct ft_shape *shape = &o->camp->units[u];
	struct ft_search_opts so;
	double best = 0;	/* the unit's best so far on this target */

	target_opts(o, t, unit, &so);
	if (cu->runners && !*unit) {
		so.runners = cu->runners;
		so.nrunners = cu->nrunners;
	}
	so.progress = cu->progress;
	for (int i = 0; i < o->nsp && !cu->interrupted; i++) {
		struct ft_campaign_outcome *oc = &cu->out[cu->nout];
		struct ft_prefetch *pf = NULL;
		struct ft_prefetch_cfg pc;
		int rc;

		if (ft_interrupted()) {
			/* between two searches: none is started */
			cu->interrupted = 1;
			break;
		}
		if (ft_space_unfit(o->sps[i], so.arch, shape, cu->why, sizeof(cu->why))) {
			if (o->on_skip)
				o->on_skip(o->ctx, u, o->sps[i], cu->why);
			continue;
		}
		if (so.progress)
			ft_progress_unit(so.progress, label, cu->position, o->camp->nunits, (*part)++, parts,
					 ft_space_candidates(o->sps[i], shape, so.arch));
		memset(oc, 0, sizeof(*oc));
		oc->sp = o->sps[i];
		snprintf(oc->device, sizeof(oc->device), "%s", so.device);
		oc->gpus = so.nrunners;
		so.compiles_done = NULL;
		so.compiles_ctx = NULL;
		if (next_search(cu->db, o, &so, t, shape, i, next, &pc) && (pf = ft_prefetch_new())) {
			ft_prefetch_arm(pf, &pc);
			so.compiles_done = ft_prefetch_fire;
			so.compiles_ctx = pf;
		}
		so.incumbent_us = best;
		oc->started_ms = ft_now_ms() - cu->t0_ms;
		rc = ft_search_run(cu->db, o->sps[i], shape, &so, &oc->res, err);
		oc->ended_ms = ft_now_ms() - cu->t0_ms;
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
	struct ft_runner *unit = NULL;
	struct ft_runner_cfg ucfg = o->unit_cfg;
	char label[128] = "";
	int rc = 0, part = 0, parts = count_parts(o, u);

	cu->nout = 0;
	cu->why[0] = '\0';
	if (c->nunits > 1)
		ft_campaign_label(c, u, label, sizeof(label));
	ucfg.arch = o->targets[0].arch->name;
	ucfg.shape = &c->units[u];
	ucfg.template_name = o->sps[0]->name;
	if (o->unit_runner && ft_runner_open(&unit, o->unit_runner, &ucfg, err))
		return -1;
	cu->interrupted = cu->interrupted || ft_interrupted();
	for (int g = 0; g < o->ntargets && !cu->interrupted && !rc; g++)
		rc = run_target(o, u, &o->targets[g], &unit, label, &part, parts,
				g + 1 < o->ntargets ? NULL : cu->next, cu, err);
	ft_runner_close(unit);
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

/* One unit at a time, in order, each on every GPU of its target. */
static int one_at_a_time(struct ft_db *db, const struct ft_campaign_run_opts *o, const int *order,
			 double t0, struct ft_campaign_result *r, struct ft_err *err)
{
	struct ft_campaign_unit cu = { .db = db, .progress = o->search.progress, .t0_ms = t0 };
	int rc = 0;

	cu.out = calloc((size_t)(o->nsp ? o->nsp : 1) * (size_t)o->ntargets, sizeof(*cu.out));
	if (!cu.out)
		return ft_error(err, FT_EFAIL, "out of memory starting a campaign");
	for (int i = 0; i < o->camp->nunits && !r->interrupted && !rc; i++) {
		cu.next = i + 1 < o->camp->nunits ? &o->camp->units[order[i + 1]] : NULL;
		cu.position = i;
		cu.interrupted = 0;
		rc = ft_campaign_unit_run(o, order[i], &cu, err);
		ft_campaign_unit_file(o, order[i], rc, &cu, r);
	}
	free(cu.out);
	return rc;
}

int ft_campaign_same_group(const struct ft_shape *a, const struct ft_shape *b)
{
	return a->d == b->d && a->dtype == b->dtype && a->layout == b->layout &&
	       (long long)a->h * b->h_kv == (long long)b->h * a->h_kv;
}

/* A unit's size for choosing a group's representative: log2 of S, S_kv, B*H. */
static double unit_size(const struct ft_shape *u)
{
	return log2((double)u->s) + log2((double)u->s_kv) + log2((double)u->b * u->h);
}

void ft_campaign_order(const struct ft_campaign *c, int transfer, int *order)
{
	int n = c->nunits, k = 0;
	char *placed = calloc((size_t)(n ? n : 1), 1);

	if (!transfer || !placed) {
		for (int u = 0; u < n; u++)
			order[u] = u;
		free(placed);
		return;
	}
	/* one representative per group, in the order the groups first appear:
	 * the member in the middle by size (the lower middle; ties by position) */
	for (int u = 0; u < n; u++) {
		int members = 0, rank, pick = -1;

		if (placed[u])
			continue;
		for (int v = 0; v < n; v++)
			members += ft_campaign_same_group(&c->units[u], &c->units[v]) && !placed[v];
		rank = (members - 1) / 2;
		for (int v = 0; v < n && pick < 0; v++) {
			int below = 0;

			if (!ft_campaign_same_group(&c->units[u], &c->units[v]) || placed[v])
				continue;
			for (int x = 0; x < n; x++)
				if (ft_campaign_same_group(&c->units[u], &c->units[x]) && !placed[x] &&
				    (unit_size(&c->units[x]) < unit_size(&c->units[v]) ||
				     (unit_size(&c->units[x]) == unit_size(&c->units[v]) && x < v)))
					below++;
			if (below == rank)
				pick = v;
		}
		if (pick < 0)
			pick = u;
		order[k++] = pick;
		/* the group is represented: mark every member (placed below) */
		for (int v = 0; v < n; v++)
			if (ft_campaign_same_group(&c->units[u], &c->units[v]))
				placed[v] = 2;
		placed[pick] = 1;
	}
	/* then the neighbours, in the campaign's order */
	for (int u = 0; u < n; u++)
		if (placed[u] == 2)
			order[k++] = u;
	free(placed);
}

int ft_campaign_run(struct ft_db *db, const struct ft_campaign_run_opts *o,
		    struct ft_campaign_result *r, struct ft_err *err)
{
	size_t units = (size_t)(o->camp->nunits ? o->camp->nunits : 1);
	double t0 = ft_now_ms();
	int rc = 0;

	int *order = malloc(units * sizeof(*order));

	memset(r, 0, sizeof(*r));
	r->out = calloc(units * (size_t)(o->nsp ? o->nsp : 1) * (size_t)o->ntargets, sizeof(*r->out));
	r->first = calloc(units, sizeof(*r->first));
	r->count = calloc(units, sizeof(*r->count));
	if (!r->out || !r->first || !r->count || !order) {
		free(order);
		return ft_error(err, FT_EFAIL, "out of memory starting a campaign");
	}
	ft_campaign_order(o->camp, o->search.strategy && o->search.strategy->transfer, order);
	if (!o->one_at_a_time && o->ntargets == 1 && !o->unit_runner && o->targets[0].nrunners > 1)
		rc = ft_campaign_lanes(db, o, order, t0, r, err);
	else
		rc = one_at_a_time(db, o, order, t0, r, err);
	free(order);
	/* the last compiles ahead, before the caller frees their spaces */
	ft_prefetch_drain();
	r->wall_ms = ft_now_ms() - t0;
	return rc || r->interrupted ? -1 : 0;
}
