/* cmd_search.c - `fatune search`: one shape or a campaign, every space that fits, on the GPUs asked for.
 *
 * The units to tune come from --shape (once or several times, each possibly a
 * shape set such as 1x8x256..8192x64) or --campaign FILE (campaign.h), less
 * what --shard leaves to other shards. The campaign is a driver above the
 * search: per unit it runs one search per GPU model and space, with one
 * progress display for the whole campaign; an interrupted campaign resumes
 * at the same place when run again (every finished trial is stored).
 *
 * Probes the GPU(s) through worker processes (the search process never loads
 * the driver), decides the target arch, then runs one search (search.c) per
 * space: the spaces given with --space, or every shipped family's default
 * space whose arch fits (mma everywhere, wgmma on Hopper). A space that
 * cannot run here - its family needs another arch, or its ABI cannot express
 * the shape - is skipped with the reason. Without a GPU of the target arch
 * the feasibility part (model check and compile) runs and is stored; timing
 * needs such a device. With several GPUs (--devices), each model of GPU gets
 * its own search, its workers sharing the compile pool; results of different
 * models are kept apart. The summary names the best of each space and the
 * winner across them, which `fatune export` writes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/interrupt.h"
#include "search/campaign_run.h"
#include "cmd/cmd.h"
#include "ui/format.h"
#include "search/search.h"
#include "cmd/target.h"

/* ,"name":{config, [space, family,] time, error}: the space only where several compete */
static void print_trial_json(const char *name, const struct ft_trial *t, const struct ft_space *sp)
{
	printf(",\"%s\":{\"config\":", name);
	ft_json_string(stdout, t->config);
	if (sp) {
		printf(",\"space\":");
		ft_json_string(stdout, sp->name);
		printf(",\"family\":\"%s\"", sp->family->name);
	}
	printf(",\"t_median_us\":%.4f,\"rel_err\":%.3e}", t->t_median_us, t->rel_err);
}

static void print_counts_json(const long long *c)
{
	printf("\"status\":{");
	for (int i = 0; i < FT_ST_COUNT; i++)
		printf("%s\"%s\":%lld", i ? "," : "", ft_status_name((enum ft_status)i), c[i]);
	printf("}");
}

/* The runner-up across spaces: the winner's own second, or another space's
 * best (NULL: none); *space is its space. */
static const struct ft_trial *runner_up(const struct ft_campaign_outcome *out, int n, int w,
					 const struct ft_space **space)
{
	const struct ft_trial *runner = isnan(out[w].res.top[1].t_median_us) ? NULL : &out[w].res.top[1];

	*space = out[w].sp;
	for (int i = 0; i < n; i++)
		if (i != w && !isnan(out[i].res.top[0].t_median_us) &&
		    (!runner || out[i].res.top[0].t_median_us < runner->t_median_us)) {
			runner = &out[i].res.top[0];
			*space = out[i].sp;
		}
	return runner;
}

/* One unit's totals over its searches, as JSON fields. */
static void print_totals_json(const struct ft_campaign_outcome *out, int n)
{
	long long total[FT_ST_COUNT] = { 0 }, cand = 0, skipped = 0, compiles = 0, hits = 0;
	long long quick = 0, full = 0, stable = 0, finals = 0, anchors = 0, heated = 0, evaluated = 0,
		  prefetched = 0, ahead = 0, swept = 0, sweeps_failed = 0;
	double wall = 0, cms = 0, gpu = 0, first = -1, cwall = 0, wait = 0, ver = 0, tim = 0, fsend = 0, dbw = 0;
	double ph[FT_PH_COUNT] = { 0 };

	for (int i = 0; i < n; i++) {
		const struct ft_pipeline_stats *st = &out[i].res.st;
		for (int k = 0; k < FT_ST_COUNT; k++)
			total[k] += out[i].res.counts[k];
		cand += st->enumerated;
		skipped += st->skipped;
		compiles += st->compiled;
		prefetched += out[i].prefetched;
		hits += st->cache_hits;
		wall += st->wall_ms;
		cms += st->compile_ms_total;
		gpu += st->gpu_busy_ms;
		cwall += st->compile_wall_ms;
		wait += st->gpu_wait_ms;
		ver += st->verify_ms;
		tim += st->timing_ms;
		for (int k = 0; k < FT_PH_COUNT; k++)
			ph[k] += st->phase_ms[k];
		ahead += st->loaded_ahead;
		fsend += st->first_send_ms > 0 ? st->first_send_ms : 0;
		dbw += out[i].res.db_wait_ms;
		evaluated += st->evaluated;
		quick += st->race.quick;
		full += st->race.full;
		stable += st->race.stable;
		finals += st->race.final_jobs;
		anchors += st->race.anchors;
		heated += st->race.heated;
		swept += st->race.swept;
		sweeps_failed += st->race.sweeps_failed;
		if (first < 0 && st->first_compile_ms >= 0)
			first = st->first_compile_ms;
	}
	printf("\"candidates\":%lld,\"skipped\":%lld,\"wall_s\":%.3f,", cand, skipped, wall / 1e3);
	print_counts_json(total);
	printf(",\"compiles\":%lld,\"cache_hits\":%lld,\"prefetch_compiles\":%lld,\"compile_ms_total\":%.1f,"
	       "\"gpu_busy_ms\":%.1f,\"first_compile_ms\":%.1f",
	       compiles, hits, prefetched, cms, gpu, first);
	/* where the time went (docs/timing.md): per phase, and the race's passes */
	printf(",\"phases\":{\"compile_wall_ms\":%.1f,\"gpu_busy_ms\":%.1f,\"gpu_wait_ms\":%.1f,"
	       "\"verify_ms\":%.1f,\"timing_ms\":%.1f,\"first_send_ms\":%.1f,\"db_wait_ms\":%.1f,",
	       cwall, gpu, wait, ver, tim, fsend, dbw);
	/* the workers' split of their jobs' wall time (run/job.h enum ft_phase) */
	printf("\"worker\":{");
	for (int k = 0; k < FT_PH_COUNT; k++)
		printf("%s\"%s_ms\":%.1f", k ? "," : "", ft_phase_names[k], ph[k]);
	printf("},\"loaded_ahead\":%lld},\"evaluated\":%lld,\"race\":{\"quick\":%lld,\"full\":%lld,\"stable\":%lld,"
	       "\"final_jobs\":%lld,\"anchors\":%lld,\"heated_finals\":%lld,\"swept_finals\":%lld,"
	       "\"sweeps_failed\":%lld}",
	       ahead, evaluated, quick, full, stable, finals, anchors, heated, swept, sweeps_failed);
}

/* "spaces": one object per search. */
static void print_spaces_json(const struct ft_campaign_outcome *out, int n)
{
	printf(",\"spaces\":[");
	for (int i = 0; i < n; i++) {
		printf("%s{\"space\":", i ? "," : "");
		ft_json_string(stdout, out[i].sp->name);
		printf(",\"family\":\"%s\",\"device\":", out[i].sp->family->name);
		ft_json_string(stdout, out[i].device);
		printf(",\"candidates\":%lld,\"gpus\":%d,\"jobs\":%d,\"started_s\":%.3f,\"ended_s\":%.3f,",
		       out[i].res.st.enumerated, out[i].gpus, out[i].jobs, out[i].started_ms / 1e3,
		       out[i].ended_ms / 1e3);
		if (out[i].res.nseeds)
			printf("\"seeds\":%d,\"seeds_other_gpu\":%d,", out[i].res.nseeds,
			       out[i].res.nseeds_other);
		print_counts_json(out[i].res.counts);
		for (int k = 0; k < 2; k++)
			if (!isnan(out[i].res.top[k].t_median_us))
				print_trial_json(k ? "runner_up" : "best", &out[i].res.top[k], NULL);
		printf("}");
	}
	printf("]");
}

static void print_json(const struct ft_campaign_outcome *out, int n, const struct ft_arch *a,
		       const struct ft_shape *sh, int timed)
{
	char shape[FT_SHAPE_TEXT_MAX];
	int w = ft_campaign_winner(out, n);

	printf("{\"arch\":\"%s\",\"shape\":", a->name);
	ft_json_string(stdout, ft_shape_format(sh, shape, sizeof(shape)));
	printf(",\"dtype\":\"%s\",\"causal\":%d,\"timed\":%s,", ft_dtype_name(sh->dtype), sh->causal,
	       timed ? "true" : "false");
	print_totals_json(out, n);
	if (w >= 0) {
		const struct ft_space *rs;
		const struct ft_trial *runner = runner_up(out, n, w, &rs);

		print_trial_json("best", &out[w].res.top[0], out[w].sp);
		if (runner)
			print_trial_json("runner_up", runner, rs);
	}
	print_spaces_json(out, n);
	printf("}\n");
}

/* print_text's summary of one unit's evaluation: what the GPUs did, or, for a
 * runner that is not a GPU (runner: its --runner/--replay name, maybe with
 * ":ARG"), what that runner did, since it has no GPU to keep busy. */
static void print_evaluation(const struct ft_pipeline_stats *st, const struct ft_search_result *r, const char *runner)
{
	int len = runner ? (int)strcspn(runner, ":") : 0;

	if (runner)
		printf("  the %.*s runner (not a GPU): %.1f s evaluating (verify %.1f s, timing %.1f s), %.1f s idle; ",
		       len, runner, st->gpu_busy_ms / 1e3, st->verify_ms / 1e3, st->timing_ms / 1e3, st->gpu_wait_ms / 1e3);
	else
		printf("  GPU: %.1f s busy (verify %.1f s, timing %.1f s), %.1f s waiting for compiles; ",
		       st->gpu_busy_ms / 1e3, st->verify_ms / 1e3, st->timing_ms / 1e3, st->gpu_wait_ms / 1e3);
	printf("%lld quick passes, %lld full (%lld ended stable), %lld cut, %d in the final%s\n", st->race.quick,
	       st->race.full, st->race.stable, st->race.cut, r->finals,
	       /* a sweep that failed is no verdict, but the user should know */
	       st->race.sweeps_failed ? " (its sweep failed: the finalists were timed by rounds)" : "");
}

static void print_text(const struct ft_campaign_outcome *out, int n, const struct ft_arch *a,
		       const struct ft_shape *sh, int timed, const char *runner, int jobs, const char *space,
		       const char *db)
{
	char shape[FT_SHAPE_TEXT_MAX];
	int w = ft_campaign_winner(out, n);

	ft_shape_format(sh, shape, sizeof(shape));
	for (int i = 0; i < n; i++) {
		const struct ft_search_result *r = &out[i].res;
		const struct ft_pipeline_stats *st = &r->st;

		printf("search %s %s %s%s%s%s: %lld candidates in %.1f s", a->name, shape,
		       ft_dtype_name(sh->dtype), sh->causal ? " causal" : "",
		       out[i].device[0] ? " on " : "", out[i].device, st->enumerated,
		       st->wall_ms / 1e3);
		printf(n > 1 ? " (space %s, family %s)\n" : "\n", out[i].sp->name,
		       out[i].sp->family->name);
		printf("  ");
		for (int k = 0; k < FT_ST_COUNT; k++)
			if (r->counts[k])
				printf("%s %lld  ", ft_status_name((enum ft_status)k), r->counts[k]);
		if (st->skipped)
			printf("(%lld already done, skipped)", st->skipped);
		if (r->nseeds)
			printf("(transfer: started from the best of %d tuned neighbour%s%s)", r->nseeds,
			       r->nseeds > 1 ? "s" : "",
			       !r->nseeds_other ? "" : r->nseeds_other == r->nseeds ? ", on another GPU"
									: ", some on another GPU");
		printf("\n  compile: %lld NVRTC runs, %lld cache hits, %.1f s of compiling on %d threads",
		       st->compiled, st->cache_hits, st->compile_ms_total / 1e3, jobs);
		if (timed && st->wall_ms > 0)
			printf("; %s busy %.0f%% of the wall time", runner ? "runner" : "GPU",
			       100.0 * st->gpu_busy_ms / st->wall_ms);
		printf("\n");
		if (timed)
			print_evaluation(st, r, runner);
		for (int k = 0; k < 2; k++)
			if (!isnan(r->top[k].t_median_us))
				printf("  %-9s %8.2f us  %s\n", k ? "runner-up" : "best", r->top[k].t_median_us,
				       r->top[k].config);
	}
	if (w >= 0 && n > 1)
		printf("winner: %s (%s) %.2f us  %s\n", out[w].sp->name, out[w].sp->family->name,
		       out[w].res.top[0].t_median_us, out[w].res.top[0].config);
	if (timed && w >= 0)
		printf("next: fatune export --arch %s --shape %s%s --dtype %s%s%s%s%s -o build_config.h\n", a->name,
		       shape, sh->causal ? " --causal" : "", ft_dtype_name(sh->dtype), space ? " --space " : "",
		       space ? space : "", db ? " --db " : "", db ? db : "");
}

/* The family whose default space is searched i-th: the arch-specific ones
 * first (family.h: where one fits, its best is the incumbent the others'
 * searches must beat), each group in the table's order. */
static const struct ft_family *default_family(int i)
{
	for (int specific = 1; specific >= 0; specific--)
		for (int k = 0; k < ft_family_count(); k++)
			if (!ft_family_at(k)->arch_specific == !specific && !i--)
				return ft_family_at(k);
	return NULL;
}

/* The spaces to search: --space (each once), else the default spaces of every
 * family that can target arch (just_one: the first family's first). */
static int load_spaces(const struct ft_strlist *given, const struct ft_arch *arch, int just_one,
		       struct ft_space **sps, int *n, struct ft_err *err)
{
	char path[FT_PATH_MAX];

	*n = 0;
	for (int i = 0; i < (given->n ? given->n : just_one ? 1 : ft_family_count() * FT_FAMILY_DEFAULTS); i++) {
		const char *p = given->n ? given->v[i] : NULL;

		if (!p) {
			const struct ft_family *f = just_one ? ft_family_at(0) : default_family(i / FT_FAMILY_DEFAULTS);
			const char *def = f->default_spaces[just_one ? 0 : i % FT_FAMILY_DEFAULTS];

			if (!def || f->unsupported(arch))
				continue;
			snprintf(path, sizeof(path), "%s/%s", ft_data_dir(), def);
			p = path;
		}
		if (!(sps[*n] = calloc(1, sizeof(struct ft_space))))
			return ft_error(err, FT_EFAIL, "out of memory loading spaces");
		if (ft_space_load(sps[*n], p, err)) {
			free(sps[*n]);
			return -1;
		}
		for (int j = 0; j < *n; j++)
			if (!strcmp(sps[j]->name, sps[*n]->name)) {
				ft_error(err, FT_EINPUT,
					 "spaces '%s' and '%s' are both named '%s': a space's name is "
					 "its template's identity in the database; rename one",
					 sps[j]->path, sps[*n]->path, sps[*n]->name);
				free(sps[*n]);
				return -1;
			}
		(*n)++;
	}
	return 0;
}

/* Everything `fatune search` holds: its options, then what they set up. */
struct search_cmd {
	struct ft_target_opts o;
	struct ft_strlist spaces, shapes, seeds_from;
	const char *strategy, *budget, *timing, *replay_db, *devices, *campaign, *shard, *name;
	const char *race, *runner, *prefetch, *parallel_units;
	long long units_per_gpu;
	const char *unit_runner;	/* a runner other than the GPUs (--replay, --runner), opened per unit */
	long long jobs, seed, samples, launches, timeout_s, race_samples, race_finalists;
	double race_margin, race_stable;
	int fresh, quiet, json;
	int shard_i, shard_n;		/* --shard I/N (0/1: no shard) */

	struct ft_campaign camp;
	struct ft_space *sps[FT_LIST_MAX + FT_CAMPAIGN_MAX_SPACES + 4];
	int nsp;
	struct ft_gpus gpus;
	struct ft_campaign_target targets[FT_MAX_RUNNERS];
	int ntargets;
	const struct ft_arch *arch;	/* the target arch */
	int timed;			/* on GPUs or replayed */
	struct ft_progress prog;
	struct ft_transfer_pool seeds;	/* the best rows of --seeds-from */
};

/* A default space whose applies_to picks other shapes (the decode space at a
 * prefill shape): not searched there by design, so nothing is said of it;
 * only a space the user named (--space, the campaign file) is reported. */
static int default_for_other_shapes(const struct search_cmd *c, const struct ft_space *sp,
				    const struct ft_shape *shape)
{
	struct ft_err err = { 0 };

	return !c->spaces.n && !c->camp.nspaces && ft_space_applies(sp, shape, c->arch, &err) == 0;
}

static void on_skip(void *ctx, int u, const struct ft_space *sp, const char *why)
{
	const struct search_cmd *c = ctx;
	char label[128];

	if (default_for_other_shapes(c, sp, &c->camp.units[u]))
		return;
	if (c->camp.nunits > 1)
		ft_campaign_label(&c->camp, u, label, sizeof(label));
	fprintf(stderr, "fatune: skipping space '%s' (%s)%s%s: %s\n", sp->name, sp->path,
		c->camp.nunits > 1 ? " for " : "", c->camp.nunits > 1 ? label : "", why);
}

/* One unit's searches and how the summary reads them (or why none ran). */
static void on_unit(void *ctx, int u, const struct ft_campaign_outcome *out, int n,
		    const char *why)
{
	const struct search_cmd *c = ctx;
	const struct ft_shape *sh = &c->camp.units[u];
	char st[FT_SHAPE_TEXT_MAX];

	if (n && c->json) {
		print_json(out, n, c->arch, sh, c->timed);
	} else if (n) {
		/* the export hint names the one space searched and the database, when given */
		print_text(out, n, c->arch, sh, c->timed, c->unit_runner, c->jobs ? (int)c->jobs : ft_ncores(),
			   c->spaces.n == 1 ? c->spaces.v[0] : NULL, c->o.db);
	} else if (c->json) {
		printf("{\"arch\":\"%s\",\"shape\":", c->arch->name);
		ft_json_string(stdout, ft_shape_format(sh, st, sizeof(st)));
		printf(",\"dtype\":\"%s\",\"causal\":%d,\"not_run\":", ft_dtype_name(sh->dtype),
		       sh->causal);
		ft_json_string(stdout, why);
		printf("}\n");
	}
	fflush(stdout);
}

/* The campaign's closing table: one line per unit (text) or one JSON object. */
static void report_campaign(const struct search_cmd *c, const struct ft_campaign_result *r)
{
	const struct ft_campaign *camp = &c->camp;

	if (c->json) {
		printf("{\"campaign\":");
		ft_json_string(stdout, camp->name);
		printf(",\"arch\":\"%s\",\"units\":%d,\"units_in_campaign\":%d,\"tuned\":%d,"
		       "\"interrupted\":%s,\"wall_s\":%.3f}\n",
		       c->arch->name, camp->nunits, camp->total, r->tuned,
		       r->interrupted ? "true" : "false", r->wall_ms / 1e3);
		return;
	}
	printf("\ncampaign%s%s: %d of %d units on %s in %.1f s, %d with a verified best%s\n",
	       camp->name[0] ? " " : "", camp->name, camp->nunits, camp->total, c->arch->name,
	       r->wall_ms / 1e3, r->tuned,
	       r->interrupted ? " (interrupted: run the same command to resume)" : "");
	printf("  %-44s %-5s %-6s %10s %9s  %s\n", "shape", "dtype", "causal", "best us", "TFLOP/s",
	       "space");
	for (int u = 0; u < camp->nunits; u++) {
		char shape[FT_SHAPE_TEXT_MAX];
		int w = r->count[u] ? ft_campaign_winner(r->out + r->first[u], r->count[u]) : -1;
		const struct ft_campaign_outcome *o = w >= 0 ? &r->out[r->first[u] + w] : NULL;
		const struct ft_shape *sh = &camp->units[u];

		ft_shape_format(sh, shape, sizeof(shape));
		if (o)
			printf("  %-44s %-5s %-6s %10.2f %9.1f  %s\n", shape, ft_dtype_name(sh->dtype),
			       sh->causal ? "yes" : "no", o->res.top[0].t_median_us,
			       ft_shape_flops(sh) / (o->res.top[0].t_median_us * 1e6), o->sp->name);
		else
			printf("  %-44s %-5s %-6s %10s %9s  %s\n", shape, ft_dtype_name(sh->dtype),
			       sh->causal ? "yes" : "no", "-", "-", r->count[u] ? "not timed" : "not run");
	}
}

/* The units: --campaign FILE, or every --shape (each a shape set), refined by
 * --kv-len, --kv-heads, --layout, --dtype, --causal; then the shard. */
static int load_units(const struct ft_target_opts *o, const struct ft_strlist *shapes,
		      const char *campaign, const char *shard, struct ft_campaign *c, int *si,
		      int *sn, struct ft_err *err)
{
	struct ft_shape proto = { 0 };

	ft_campaign_init(c);
	if (campaign && shapes->n)
		return ft_error(err, FT_EINPUT,
				"fatune search: give --shape or --campaign, not both (a campaign file lists its shapes)");
	if (!campaign && !shapes->n)
		return ft_error(err, FT_EINPUT,
				"fatune search: --shape is required, e.g. --shape 1x8x512x64 (BxHxSxD), or --campaign FILE");
	if (o->dtype && ft_dtype_parse(o->dtype, &proto.dtype, err))
		return -1;
	proto.causal = o->causal;
	if (campaign) {
		if (o->dtype || o->causal || o->kv_len || o->kv_heads || o->layout)
			return ft_error(err, FT_EINPUT,
					"fatune search: --campaign lists dtype, causal and KV sizes per shape: drop --dtype/--causal/--kv-len/--kv-heads/--layout");
		if (ft_campaign_load(c, campaign, err))
			return -1;
	} else {
		for (int i = 0; i < shapes->n; i++)
			if (ft_campaign_add(c, shapes->v[i], &proto, err))
				return -1;
		for (int u = 0; u < c->nunits; u++)
			if (ft_shape_set_kv(&c->units[u], o->kv_len, o->kv_heads, o->layout, err))
				return -1;
	}
	if (ft_shard_parse(shard, si, sn, err))
		return -1;
	ft_campaign_shard(c, *si, *sn);
	return 0;
}

/* --replay DB: an arch to replay for, and a recording that is there (named as
 * such, not as "the tuning database"), before any other work. */
static int replay_ok(const struct search_cmd *c, struct ft_err *err)
{
	if (!c->o.arch)
		return ft_error(err, FT_EINPUT, "fatune search: --replay needs --arch (the arch the trials were recorded for)");
	if (access(c->replay_db, R_OK))
		return ft_error(err, FT_EINPUT,
				"fatune search: --replay '%s' cannot be read (%s): give the database a search recorded its trials in (its --db)",
				c->replay_db, strerror(errno));
	return ft_db_path_ok(c->replay_db, 0, "recording", err);
}

/* --runner NAME[:ARG]: a runner of the table (run/runner.h); gpu is the
 * default, replay comes with --replay DB. Sets c->unit_runner. */
static int runner_ok(struct search_cmd *c, struct ft_err *err)
{
	char name[64];

	c->unit_runner = c->replay_db ? "replay" : NULL;
	if (!c->runner)
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(c->runner, ":"), c->runner);
	if (!ft_runner_find(name, err)) {
		ft_err_prefix(err, "fatune search: --runner");
		return -1;
	}
	if (!strcmp(name, "replay") != !!c->replay_db)
		return ft_error(err, FT_EINPUT, "fatune search: --runner %s: a replay is --replay DB (with no --runner, or --runner replay)",
				c->runner);
	if (!strcmp(name, "gpu") || c->replay_db)
		return 0;
	if (!c->o.arch)
		return ft_error(err, FT_EINPUT, "fatune search: --runner %s needs --arch (no GPU is asked)", c->runner);
	c->unit_runner = c->runner;
	return 0;
}

/* Bad input before anything starts: no space is searched for any unit on the
 * arch (the family needs another arch, the template lacks the head dim, the
 * space's applies_to picks other shapes): one line with the first unit's
 * reason per space. 0 when some unit has a space to search. */
static int some_space_searched(const struct search_cmd *c, struct ft_err *err)
{
	char why[512], label[FT_SHAPE_TEXT_MAX], all[1536];
	size_t n = 0;

	for (int u = 0; u < c->camp.nunits; u++)
		for (int i = 0; i < c->nsp; i++)
			if (!ft_space_unsearched(c->sps[i], c->arch, &c->camp.units[u], why, sizeof(why)))
				return 0;
	all[0] = '\0';
	for (int i = 0; i < c->nsp && n < sizeof(all); i++) {
		if (default_for_other_shapes(c, c->sps[i], &c->camp.units[0]))
			continue;
		ft_space_unsearched(c->sps[i], c->arch, &c->camp.units[0], why, sizeof(why));
		n += (size_t)snprintf(all + n, sizeof(all) - n, "%sspace '%s': %s", n ? "; " : " (", c->sps[i]->name, why);
	}
	ft_shape_format(&c->camp.units[0], label, sizeof(label));
	return ft_error(err, FT_EINPUT, "fatune search: no space is searched for %s%s on %s%s%s: pass --space FILE or another --arch",
			label, c->camp.nunits > 1 ? " or any other shape" : "", c->arch->name, all, n ? ")" : "");
}

/* The arch, the spaces and where to run: a runner opened per unit (--replay
 * DB, --runner), the GPUs grouped by model, or no GPU (one untimed target). */
static int setup_targets(struct search_cmd *c, struct ft_err *err)
{
	struct ft_strlist list = c->spaces;

	/* the spaces: --space, else the campaign file's, else the families' defaults */
	for (int i = 0; !c->spaces.n && i < c->camp.nspaces; i++)
		list.v[list.n++] = c->camp.spaces[i];
	if (c->unit_runner) {
		if (!c->o.arch)
			return ft_error(err, FT_EINPUT, "fatune search: --replay needs --arch (the arch the trials were recorded for)");
		if (!(c->arch = ft_arch_find(c->o.arch, err)) ||
		    load_spaces(&list, c->arch, 1, c->sps, &c->nsp, err) || some_space_searched(c, err))
			return -1;
	} else if (c->o.arch) {
		/* the spaces checked before any GPU is asked */
		if (!(c->arch = ft_arch_find(c->o.arch, err)) ||
		    load_spaces(&list, c->arch, 0, c->sps, &c->nsp, err) || some_space_searched(c, err) ||
		    ft_cmd_gpus("search", c->devices, c->o.arch, &c->gpus, err))
			return -1;
		c->arch = c->gpus.arch;
	} else if (ft_cmd_gpus("search", c->devices, c->o.arch, &c->gpus, err) ||
		   load_spaces(&list, c->gpus.arch, 0, c->sps, &c->nsp, err) ||
		   (c->arch = c->gpus.arch, some_space_searched(c, err))) {
		return -1;
	}
	/* a campaign's units side by side: units_per_gpu lanes on each GPU, their
	 * jobs taking turns, so that one unit's compiles leave the GPU to another
	 * (docs/timing.md) */
	if (c->camp.nunits > 1 && !strcmp(c->parallel_units, "on") && c->units_per_gpu > 1 &&
	    ft_cmd_gpus_share(&c->gpus, (int)c->units_per_gpu, err))
		return -1;
	c->timed = c->unit_runner || c->gpus.ngroups > 0;
	for (int g = 0; g < c->gpus.ngroups; g++) {
		struct ft_gpu_group *grp = &c->gpus.groups[g];
		c->targets[g] = (struct ft_campaign_target){ &grp->arch, grp->name, grp->driver,
							     grp->runners, grp->nrunners,
							     grp->sm_count };
	}
	c->ntargets = c->gpus.ngroups;
	if (!c->ntargets)
		c->targets[c->ntargets++] = (struct ft_campaign_target){ c->arch, "", "", NULL, 0, 0 };
	return 0;
}

/* The options every search of the campaign shares. */
static int search_opts(struct search_cmd *c, struct ft_search_opts *so, struct ft_err *err)
{
	memset(so, 0, sizeof(*so));
	if (ft_strategy_parse(c->strategy, &so->strategy, err) ||
	    ft_cmd_timing("search", c->timing, err) ||
	    ft_cmd_budget("search", c->budget, &so->budget_n, &so->budget_s, err))
		return -1;
	if (c->name && ft_campaign_name_check(c->name, err))
		return -1;
	if (c->seeds_from.n && !(so->strategy && so->strategy->transfer))
		return ft_error(err, FT_EINPUT,
				"fatune search: --seeds-from seeds the transfer strategy: add --strategy transfer");
	so->jobs = c->jobs ? (int)c->jobs : ft_ncores();
	so->seed = c->seed;
	so->timing = c->timing;
	so->samples = (int)c->samples;
	so->launches = (int)c->launches;
	so->timeout_ms = (int)(c->timeout_s * 1000);
	so->fresh = c->fresh;
	ft_race_defaults(&so->race);
	if (ft_race_parse(c->race, &so->race.on, err))
		return -1;
	if (strcmp(c->prefetch, "on") && strcmp(c->prefetch, "off"))
		return ft_error(err, FT_EINPUT, "bad --prefetch '%s': use on or off", c->prefetch);
	if (strcmp(c->parallel_units, "on") && strcmp(c->parallel_units, "off"))
		return ft_error(err, FT_EINPUT, "bad --parallel-units '%s': use on or off", c->parallel_units);
	so->race.margin = c->race_margin;
	so->race.quick_samples = (int)c->race_samples;
	so->race.finalists = (int)c->race_finalists;
	so->race.stable = c->race_stable;
	so->progress = &c->prog;
	so->campaign = c->name ? c->name : c->camp.name[0] ? c->camp.name : NULL;
	return 0;
}

/* Reads the --seeds-from databases' best rows (every file refused or read
 * before any GPU work starts, like --db). */
static int seeds_read(struct search_cmd *c, struct ft_search_opts *so, struct ft_err *err)
{
	for (int i = 0; i < c->seeds_from.n; i++)
		if (ft_transfer_pool_read(&c->seeds, c->seeds_from.v[i], err))
			return -1;
	so->seed_pool = c->seeds_from.n ? &c->seeds : NULL;
	return 0;
}

/* Untimed: the units where no candidate of any space compiled (all rejected
 * by the model or by the compiler) get one error line and exit 1; 0 when
 * every unit has a feasible candidate. */
static int report_infeasible(const struct search_cmd *c, const struct ft_campaign_result *r)
{
	struct ft_err err = { 0 };
	char label[FT_SHAPE_TEXT_MAX + 32];
	int none = 0, first = -1;

	for (int u = 0; u < c->camp.nunits; u++) {
		long long feasible = 0;
		for (int i = r->first[u]; i < r->first[u] + r->count[u]; i++)
			feasible += r->out[i].res.counts[FT_ST_COMPILED] + r->out[i].res.counts[FT_ST_OK];
		if (!feasible && r->count[u] && !none++)
			first = u;
	}
	if (!none)
		return FT_OK;
	ft_shape_format(&c->camp.units[first], label, sizeof(label));
	if (c->camp.nunits == 1)
		ft_error(&err, FT_EFAIL,
			 "fatune search: no candidate of %s can run on %s: every one was rejected by "
			 "the space's constraints, the arch's limits or the compiler (counts above; "
			 "'fatune check --compile' lists each with its reason)",
			 label, c->arch->name);
	else
		ft_error(&err, FT_EFAIL,
			 "fatune search: %d of %d units have no candidate that can run on %s (the "
			 "first: %s): 'fatune check --compile' lists each with its reason",
			 none, c->camp.nunits, c->arch->name, label);
	return ft_report(&err);
}

/* Runs the campaign and reports its end; returns the exit status. */
static int run_campaign(struct search_cmd *c, struct ft_db *db, const struct ft_search_opts *so)
{
	struct ft_campaign_run_opts ro = {
		.camp = &c->camp, .sps = c->sps, .nsp = c->nsp, .targets = c->targets,
		.ntargets = c->ntargets, .unit_runner = c->unit_runner,
		.unit_cfg = { .device = -1, .db_path = c->replay_db }, .search = *so,
		.on_skip = on_skip, .on_unit = on_unit, .ctx = c,
		.no_prefetch = !strcmp(c->prefetch, "off"),
		.one_at_a_time = !strcmp(c->parallel_units, "off"),
	};
	struct ft_campaign_result r;
	struct ft_err err = { 0 };
	int rc, status;

	ft_progress_init(&c->prog, c->quiet ? FT_PROGRESS_QUIET
					   : ft_stderr_is_tty() ? FT_PROGRESS_TTY : FT_PROGRESS_LINES, 0);
	ft_interrupt_install(1);
	rc = ft_campaign_run(db, &ro, &r, &err);
	ft_interrupt_install(0);
	if (rc && !r.interrupted) {
		status = ft_report(&err);
		goto out;
	}
	if (!r.searched && !r.interrupted) {
		ft_error(&err, FT_EINPUT,
			 "fatune search: no space can run these shapes on %s (see above): pass --space FILE or another --arch",
			 c->arch->name);
		status = ft_report(&err);
		goto out;
	}
	if (c->camp.nunits > 1)
		report_campaign(c, &r);
	if (r.interrupted) {
		ft_interrupt_error(&err, "finished trials are stored; run the same command to resume");
		status = ft_report(&err);
		goto out;
	}
	if (!c->timed && !c->quiet)
		fprintf(stderr, "fatune: stored the feasibility part in '%s'; timing needs an %s device\n",
			ft_db_path(&c->o), c->arch->name);
	if (!c->timed && (status = report_infeasible(c, &r)))
		goto out;
	status = r.untuned_timed ? FT_EFAIL : FT_OK;
	if (status)
		fprintf(stderr, "fatune: %s: nothing to export%s\n",
			c->camp.nunits > 1 ? "some shapes have no candidate that passed verification"
					   : "no candidate passed verification",
			c->camp.nunits > 1 ? " for them" : "");
out:
	ft_campaign_result_release(&r);
	return status;
}

int cmd_search(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"search", "fatune search (--shape BxHxSxD ... | --campaign FILE) [--arch sm_XX] [options]",
		"Search for the fastest correct config of each shape: reject what cannot fit the arch,\n"
		"compile the rest with NVRTC, verify and time them on the GPU, store every trial and\n"
		"the best config in the tuning database. The shipped space of every template family\n"
		"that can target the arch is searched (mma.sync everywhere, wgmma on Hopper), or the\n"
		"spaces given with --space (one that cannot run here is skipped with the reason).",
		"--shape may be given several times, and each may be a set: a number may be a list\n"
		"A:B:C or a doubling range A..B, e.g. 1x8x256..8192x64 or 2:4x16x2048x128; a campaign\n"
		"file lists shapes with their dtypes and causal flags (README.md, Campaigns). Several\n"
		"shapes are a campaign: one progress display, one JSON line per shape with --json and a\n"
		"closing line. --shard I/N tunes every N-th shape from the I-th (default from SLURM's\n"
		"array task variables): each shard writes its own database; 'fatune db merge' joins them.\n"
		"Without a GPU of the target arch, the feasibility part (model check and compile) runs\n"
		"and is stored; timing needs such a device. An interrupted search or campaign resumes\n"
		"where it stopped when run again (--fresh redoes it). --budget takes a number of\n"
		"candidates (e.g. 40) or seconds (e.g. 30s) per space and shape. --devices all (or\n"
		"0,1,...) times on several GPUs at once; each GPU model keeps its own results.\n"
		"--strategy transfer starts each shape from the best configs of the nearest shapes\n"
		"already tuned in the database (same arch, space, D, dtype; another GPU model's\n"
		"results count as half a size step farther) and stops once\n"
		"it stops improving: for campaigns.\n"
		"--seeds-from DB (repeatable) lets transfer start from the best configs in DB too: a\n"
		"database tuned on another GPU of the arch or by a colleague (a config of another GPU\n"
		"model counts as half a size step farther; DB is read once, checked as a merge input is,\n"
		"and never written).\n"
		"--replay DB takes each verdict and time from trials recorded in DB instead of a GPU\n"
		"(for testing strategies): the shipped mma space unless --space names others, each\n"
		"answered from the trials of its own template.\n"
		"--runner NAME[:ARG] evaluates with another runner of the table (tuner/README.md lists\n"
		"them; gpu is the default, --replay DB is the replay one).\n"
		"Causal attention with a KV length other than S is bottom-right aligned: query i sees\n"
		"keys 0 .. i + kv_len - S (FlashAttention >= 2.1, serving engines)."
	};
	struct search_cmd c;
	struct ft_option opts[] = {
		FT_ARCH_OPTION(&c.o),
		FT_OPT_LIST_("shape", 0, &c.shapes, "BxHxSxD",
			     "a shape or shape set: batch x query heads x query rows x head dim, e.g. 1x8x512x64"),
		FT_SHAPE_OPTIONS(&c.o),
		FT_OPT_STR_("campaign", 0, &c.campaign, "FILE", "tune the shapes a campaign file lists"),
		FT_OPT_STR_("shard", 0, &c.shard, "I/N",
			    "tune every N-th shape from the I-th (default: SLURM_ARRAY_TASK_ID/_COUNT)"),
		FT_OPT_STR_("name", 0, &c.name, "NAME",
			    "label the campaign in the database (default: the campaign file's name)"),
		FT_OPT_LIST_("space", 0, &c.spaces, "FILE",
			     "search space YAML (default: every shipped family's space that fits the arch)"),
		FT_DB_OPTION(&c.o),
		FT_OPT_STR_("devices", 0, &c.devices, "all|N,N,...",
			    "GPUs to time on (default: $FATUNE_DEVICE or 0)"),
		FT_OPT_INT_("jobs", 'j', &c.jobs, "N", "compile threads (default: all cores; units side by side share them by their GPUs)", 1, 256),
		FT_OPT_STR_("strategy", 0, &c.strategy, "NAME",
			    "exhaustive (default), random, model, guided or transfer"),
		FT_OPT_STR_("budget", 0, &c.budget, "N|Ns", "stop after N candidates or N seconds"),
		FT_OPT_INT_("seed", 0, &c.seed, "N", "seed for inputs and the random strategy (default 1234)", 0, 9e18),
		FT_OPT_STR_("timing", 0, &c.timing, "warm|cold", "warm L2 (default) or flush L2 before each call"),
		FT_OPT_INT_("samples", 0, &c.samples, "R", "timed samples per candidate, median kept (default 15; fewer, at least 5, when they would take over 1 s)", 1, 1000),
		FT_OPT_INT_("launches", 0, &c.launches, "K", "calls per sample in one CUDA graph (default 20; fewer when K calls would take over 20 ms)", 1, 1000),
		FT_OPT_INT_("timeout", 0, &c.timeout_s, "SECONDS", "watchdog per candidate (default 10; raised to 3x the time its first call predicts, at most 300)", 1, 3600),
		FT_OPT_STR_("race", 0, &c.race, "on|off", "quick first pass, full timing only near the best, an interleaved final (default on; docs/timing.md)"),
		FT_OPT_DBL_("race-margin", 0, &c.race_margin, "X", "cut a candidate whose quick min is over X times the best median (default 1.15)", 1.0001, 100),
		FT_OPT_INT_("race-samples", 0, &c.race_samples, "N", "samples of the quick first pass (default 2)", 1, 100),
		FT_OPT_DBL_("race-stable", 0, &c.race_stable, "X", "end a full measurement once its median's interval is X of it wide (default 0.01; 0: all its samples)", 0, 0.5),
		FT_OPT_INT_("race-finalists", 0, &c.race_finalists, "N", "fastest candidates timed again, interleaved, at the end (default 4, 0 or 1: none; a final of kernels over 30 us takes all within 1.10x of the fastest, up to 16)", 0, FT_RACE_MAX_FINALISTS),
		FT_OPT_STR_("prefetch", 0, &c.prefetch, "on|off", "compile the next search's first candidates while this one's last are timed (default on; docs/timing.md)"),
		FT_OPT_STR_("parallel-units", 0, &c.parallel_units, "on|off", "a campaign's units side by side on the GPUs of one model (default on; off: one unit at a time on every GPU; docs/timing.md)"),
		FT_OPT_INT_("units-per-gpu", 0, &c.units_per_gpu, "N", "a campaign's units side by side on each GPU, their jobs taking turns on it (default 2; 1: a GPU each; docs/timing.md)", 1, 4),
		FT_OPT_FLAG_("fresh", 0, &c.fresh, "redo trials finished by an earlier run of this search"),
		FT_OPT_LIST_("seeds-from", 0, &c.seeds_from, "DB",
			     "transfer: also start from the best configs in DB (another GPU's, a colleague's; read only)"),
		FT_OPT_STR_("replay", 0, &c.replay_db, "DB", "take results recorded in DB instead of a GPU"),
		FT_OPT_STR_("runner", 0, &c.runner, "NAME[:ARG]", "what evaluates: gpu (default) or another runner of the table"),
		FT_OPT_FLAG_("quiet", 'q', &c.quiet, "no progress output"),
		FT_OPT_FLAG_("json", 0, &c.json, "print the summary as JSON (one line per shape in a campaign)"),
		FT_OPT_END_
	};
	struct ft_search_opts so;
	struct ft_err err = { 0 };
	struct ft_db *db = NULL;
	int npos, rc, status;

	memset(&c, 0, sizeof(c));
	c.strategy = "exhaustive";
	c.timing = "warm";
	c.seed = 1234;
	c.samples = 15;
	c.launches = 20;
	c.timeout_s = 10;
	c.race = "on";
	c.prefetch = "on";
	c.parallel_units = "on";
	c.units_per_gpu = 2;
	c.race_margin = FT_RACE_MARGIN;
	c.race_samples = FT_RACE_QUICK_SAMPLES;
	c.race_finalists = FT_RACE_FINALISTS;
	c.race_stable = FT_RACE_STABLE;
	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (load_units(&c.o, &c.shapes, c.campaign, c.shard, &c.camp, &c.shard_i, &c.shard_n,
		       &err)) {
		status = ft_report(&err);
	} else if (!c.camp.nunits) {
		/* more shards than units (a SLURM array wider than the campaign):
		 * not an error, but say so rather than look like a failure */
		fprintf(stderr,
			"fatune: shard %d/%d has nothing to do: the campaign has %d unit%s and a "
			"shard keeps those whose index is %d modulo %d\n",
			c.shard_i, c.shard_n, c.camp.total, c.camp.total == 1 ? "" : "s",
			c.shard_i, c.shard_n);
		status = FT_OK;
	} else if (search_opts(&c, &so, &err) ||
		   /* database paths refused before any GPU work starts */
		   ft_db_path_ok(ft_db_path(&c.o), 1, "tuning database", &err) ||
		   (c.replay_db && replay_ok(&c, &err)) || seeds_read(&c, &so, &err) ||
		   runner_ok(&c, &err) || setup_targets(&c, &err) ||
		   ft_db_open(&db, ft_db_path(&c.o), 1, &err))
		status = ft_report(&err);
	else
		status = run_campaign(&c, db, &so);
	/* every result is stored and printed: the workers' exit (their CUDA
	 * contexts' teardown) is not waited for */
	ft_cmd_gpus_leave(&c.gpus);
	if (db)
		ft_db_close(db);
	ft_transfer_pool_free(&c.seeds);
	for (int i = 0; i < c.nsp; i++)
		free(c.sps[i]);
	ft_campaign_release(&c.camp);
	return status;
}
