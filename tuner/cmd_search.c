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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "cmd.h"
#include "format.h"
#include "replay.h"
#include "search.h"
#include "target.h"

/* The outcome of one space's search, for the summary. */
struct outcome {
	const struct ft_space *sp;
	const char *device;
	struct ft_search_result res;
};

static void print_trial_json(const char *name, const struct ft_trial *t, const char *space)
{
	printf(",\"%s\":{\"config\":", name);
	ft_json_string(stdout, t->config);
	if (space) {
		printf(",\"space\":");
		ft_json_string(stdout, space);
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

/* The winner across outcomes: index into out[] and which of its top two. */
static int winner(const struct outcome *out, int n)
{
	int w = -1;

	for (int i = 0; i < n; i++)
		if (!isnan(out[i].res.top[0].t_median_us) &&
		    (w < 0 || out[i].res.top[0].t_median_us < out[w].res.top[0].t_median_us))
			w = i;
	return w;
}

static void print_json(const struct outcome *out, int n, const struct ft_arch *a,
		       const struct ft_shape *sh, int timed)
{
	long long total[FT_ST_COUNT] = { 0 }, cand = 0, skipped = 0, compiles = 0, hits = 0;
	double wall = 0, cms = 0, gpu = 0, first = -1;
	char shape[FT_SHAPE_TEXT_MAX];
	int w = winner(out, n);
	const struct ft_trial *runner = NULL;

	for (int i = 0; i < n; i++) {
		const struct ft_pipeline_stats *st = &out[i].res.st;
		for (int k = 0; k < FT_ST_COUNT; k++)
			total[k] += out[i].res.counts[k];
		cand += st->enumerated;
		skipped += st->skipped;
		compiles += st->compiled;
		hits += st->cache_hits;
		wall += st->wall_ms;
		cms += st->compile_ms_total;
		gpu += st->gpu_busy_ms;
		if (first < 0 && st->first_compile_ms >= 0)
			first = st->first_compile_ms;
	}
	/* the runner-up across spaces: the winner's own second, or another space's best */
	if (w >= 0) {
		runner = isnan(out[w].res.top[1].t_median_us) ? NULL : &out[w].res.top[1];
		for (int i = 0; i < n; i++)
			if (i != w && !isnan(out[i].res.top[0].t_median_us) &&
			    (!runner || out[i].res.top[0].t_median_us < runner->t_median_us))
				runner = &out[i].res.top[0];
	}
	printf("{\"arch\":\"%s\",\"shape\":", a->name);
	ft_json_string(stdout, ft_shape_format(sh, shape, sizeof(shape)));
	printf(",\"dtype\":\"%s\",\"causal\":%d,\"timed\":%s,\"candidates\":%lld,\"skipped\":%lld,"
	       "\"wall_s\":%.3f,",
	       ft_dtype_name(sh->dtype), sh->causal, timed ? "true" : "false", cand, skipped,
	       wall / 1e3);
	print_counts_json(total);
	printf(",\"compiles\":%lld,\"cache_hits\":%lld,\"compile_ms_total\":%.1f,"
	       "\"gpu_busy_ms\":%.1f,\"first_compile_ms\":%.1f",
	       compiles, hits, cms, gpu, first);
	if (w >= 0) {
		print_trial_json("best", &out[w].res.top[0], out[w].sp->name);
		if (runner) {
			const char *rs = out[w].sp->name;
			for (int i = 0; i < n; i++)
				if (runner == &out[i].res.top[0] || runner == &out[i].res.top[1])
					rs = out[i].sp->name;
			print_trial_json("runner_up", runner, rs);
		}
	}
	printf(",\"spaces\":[");
	for (int i = 0; i < n; i++) {
		printf("%s{\"space\":", i ? "," : "");
		ft_json_string(stdout, out[i].sp->name);
		printf(",\"family\":\"%s\",\"device\":", out[i].sp->family->name);
		ft_json_string(stdout, out[i].device);
		printf(",\"candidates\":%lld,", out[i].res.st.enumerated);
		print_counts_json(out[i].res.counts);
		for (int k = 0; k < 2; k++)
			if (!isnan(out[i].res.top[k].t_median_us))
				print_trial_json(k ? "runner_up" : "best", &out[i].res.top[k], NULL);
		printf("}");
	}
	printf("]}\n");
}

static void print_text(const struct outcome *out, int n, const struct ft_arch *a,
		       const struct ft_shape *sh, int timed, int jobs)
{
	char shape[FT_SHAPE_TEXT_MAX];
	int w = winner(out, n);

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
		printf("\n  compile: %lld NVRTC runs, %lld cache hits, %.1f s of compiling on %d threads",
		       st->compiled, st->cache_hits, st->compile_ms_total / 1e3, jobs);
		if (timed && st->wall_ms > 0)
			printf("; GPU busy %.0f%% of the wall time", 100.0 * st->gpu_busy_ms / st->wall_ms);
		printf("\n");
		for (int k = 0; k < 2; k++)
			if (!isnan(r->top[k].t_median_us))
				printf("  %-9s %8.2f us  %s\n", k ? "runner-up" : "best", r->top[k].t_median_us,
				       r->top[k].config);
	}
	if (w >= 0 && n > 1)
		printf("winner: %s (%s) %.2f us  %s\n", out[w].sp->name, out[w].sp->family->name,
		       out[w].res.top[0].t_median_us, out[w].res.top[0].config);
	if (timed && w >= 0)
		printf("next: fatune export --arch %s --shape %s%s --dtype %s -o build_config.h\n",
		       a->name, shape, sh->causal ? " --causal" : "", ft_dtype_name(sh->dtype));
}

/* The spaces to search: --space (each once), else the default space of every
 * family that can target arch. */
static int load_spaces(const struct ft_strlist *given, const struct ft_arch *arch, int just_one,
		       struct ft_space **sps, int *n, struct ft_err *err)
{
	char path[FT_PATH_MAX];

	*n = 0;
	for (int i = 0; i < (given->n ? given->n : just_one ? 1 : ft_family_count()); i++) {
		const char *p = given->n ? given->v[i] : NULL;

		if (!p) {
			const struct ft_family *f = ft_family_at(i);
			if (!f->default_space || f->unsupported(arch))
				continue;
			snprintf(path, sizeof(path), "%s/%s", ft_data_dir(), f->default_space);
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

/* One unit's searches and how the summary reads them. */
static void report_unit(const struct outcome *out, int n, const struct ft_arch *a,
			const struct ft_shape *sh, int timed, int jobs, int json)
{
	if (json)
		print_json(out, n, a, sh, timed);
	else
		print_text(out, n, a, sh, timed, jobs);
	fflush(stdout);
}

/* The campaign's closing table: one line per unit (text) or one JSON object. */
static void report_campaign(const struct ft_campaign *c, const struct outcome *out,
			    const int *first, const int *count, const struct ft_arch *a,
			    double wall_ms, int interrupted, int json)
{
	int tuned = 0;

	for (int u = 0; u < c->nunits; u++)
		tuned += count[u] && winner(out + first[u], count[u]) >= 0;
	if (json) {
		printf("{\"campaign\":");
		ft_json_string(stdout, c->name);
		printf(",\"arch\":\"%s\",\"units\":%d,\"units_in_campaign\":%d,\"tuned\":%d,"
		       "\"interrupted\":%s,\"wall_s\":%.3f}\n",
		       a->name, c->nunits, c->total, tuned, interrupted ? "true" : "false", wall_ms / 1e3);
		return;
	}
	printf("\ncampaign%s%s: %d of %d units on %s in %.1f s, %d with a verified best%s\n",
	       c->name[0] ? " " : "", c->name, c->nunits, c->total, a->name, wall_ms / 1e3, tuned,
	       interrupted ? " (interrupted: run the same command to resume)" : "");
	printf("  %-44s %-5s %-6s %10s %9s  %s\n", "shape", "dtype", "causal", "best us", "TFLOP/s",
	       "space");
	for (int u = 0; u < c->nunits; u++) {
		char shape[FT_SHAPE_TEXT_MAX];
		int w = count[u] ? winner(out + first[u], count[u]) : -1;
		const struct outcome *o = w >= 0 ? &out[first[u] + w] : NULL;
		const struct ft_shape *sh = &c->units[u];

		ft_shape_format(sh, shape, sizeof(shape));
		if (o)
			printf("  %-44s %-5s %-6s %10.2f %9.1f  %s\n", shape, ft_dtype_name(sh->dtype),
			       sh->causal ? "yes" : "no", o->res.top[0].t_median_us,
			       ft_shape_flops(sh) / (o->res.top[0].t_median_us * 1e6), o->sp->name);
		else
			printf("  %-44s %-5s %-6s %10s %9s  %s\n", shape, ft_dtype_name(sh->dtype),
			       sh->causal ? "yes" : "no", "-", "-", count[u] ? "not timed" : "not run");
	}
}

/* The units: --campaign FILE, or every --shape (each a shape set), refined by
 * --kv-len, --kv-heads, --layout, --dtype, --causal; then the shard. */
static int load_units(const struct ft_target_opts *o, const struct ft_strlist *shapes,
		      const char *campaign, const char *shard, struct ft_campaign *c,
		      struct ft_err *err)
{
	struct ft_shape proto = { 0 };
	int si, sn;

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
	if (ft_shard_parse(shard, &si, &sn, err))
		return -1;
	ft_campaign_shard(c, si, sn);
	return 0;
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
		"--replay DB takes each verdict and time from trials recorded in DB instead of a GPU\n"
		"(for testing strategies; one space, the shipped mma one unless --space says).\n"
		"Causal attention with a KV length other than S is bottom-right aligned: query i sees\n"
		"keys 0 .. i + kv_len - S (FlashAttention >= 2.1, serving engines)."
	};
	struct ft_target_opts o = { 0 };
	struct ft_strlist spaces = { 0 }, shapes = { 0 };
	struct ft_search_opts so = { 0 };
	const char *strategy = "exhaustive", *budget = NULL, *timing = "warm", *replay_db = NULL,
		   *devices = NULL, *campaign = NULL, *shard = NULL, *name = NULL;
	long long jobs = 0, seed = 1234, samples = 15, launches = 20, timeout_s = 10;
	int fresh = 0, quiet = 0, json = 0, npos, rc;
	struct ft_option opts[] = {
		FT_ARCH_OPTION(&o),
		FT_OPT_LIST_("shape", 0, &shapes, "BxHxSxD",
			     "a shape or shape set: batch x query heads x query rows x head dim, e.g. 1x8x512x64"),
		FT_SHAPE_OPTIONS(&o),
		FT_OPT_STR_("campaign", 0, &campaign, "FILE", "tune the shapes a campaign file lists"),
		FT_OPT_STR_("shard", 0, &shard, "I/N",
			    "tune every N-th shape from the I-th (default: SLURM_ARRAY_TASK_ID/_COUNT)"),
		FT_OPT_STR_("name", 0, &name, "NAME",
			    "label the campaign in the database (default: the campaign file's name)"),
		FT_OPT_LIST_("space", 0, &spaces, "FILE",
			     "search space YAML (default: every shipped family's space that fits the arch)"),
		FT_DB_OPTION(&o),
		FT_OPT_STR_("devices", 0, &devices, "all|N,N,...",
			    "GPUs to time on (default: $FATUNE_DEVICE or 0)"),
		FT_OPT_INT_("jobs", 'j', &jobs, "N", "compile threads (default: all cores)", 1, 256),
		FT_OPT_STR_("strategy", 0, &strategy, "NAME", "exhaustive (default), random, model or guided"),
		FT_OPT_STR_("budget", 0, &budget, "N|Ns", "stop after N candidates or N seconds"),
		FT_OPT_INT_("seed", 0, &seed, "N", "seed for inputs and the random strategy (default 1234)", 0, 9e18),
		FT_OPT_STR_("timing", 0, &timing, "warm|cold", "warm L2 (default) or flush L2 before each call"),
		FT_OPT_INT_("samples", 0, &samples, "R", "timed samples per candidate, median kept (default 15; fewer, at least 5, when they would take over 1 s)", 1, 1000),
		FT_OPT_INT_("launches", 0, &launches, "K", "calls per sample in one CUDA graph (default 20; fewer when K calls would take over 20 ms)", 1, 1000),
		FT_OPT_INT_("timeout", 0, &timeout_s, "SECONDS", "watchdog per candidate (default 10; raised to 3x the time its first call predicts, at most 300)", 1, 3600),
		FT_OPT_FLAG_("fresh", 0, &fresh, "redo trials finished by an earlier run of this search"),
		FT_OPT_STR_("replay", 0, &replay_db, "DB", "take results recorded in DB instead of a GPU"),
		FT_OPT_FLAG_("quiet", 'q', &quiet, "no progress output"),
		FT_OPT_FLAG_("json", 0, &json, "print the summary as JSON (one line per shape in a campaign)"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_campaign camp;
	struct ft_space *sps[FT_LIST_MAX + FT_CAMPAIGN_MAX_SPACES + 4] = { 0 };
	struct ft_strlist space_list = { 0 };
	struct outcome *out = NULL;
	int *first = NULL, *count = NULL;
	struct ft_gpus gpus = { 0 };
	struct ft_replay *replay = NULL;
	struct ft_db *db = NULL;
	struct ft_progress prog;
	const struct ft_arch *arch = NULL;
	int nsp = 0, nout = 0, timed = 0, status = FT_EFAIL, searched = 0, ngroups, interrupted = 0;
	int failed_units = 0;
	double budget_s = 0, t0;
	long long budget_n = -1;
	enum ft_strategy strat;

	ft_campaign_init(&camp);
	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	t0 = ft_now_ms();
	if (load_units(&o, &shapes, campaign, shard, &camp, &err) ||
	    ft_strategy_parse(strategy, &strat, &err) || ft_cmd_timing("search", timing, &err) ||
	    ft_cmd_budget("search", budget, &budget_n, &budget_s, &err))
		goto fail;
	/* the spaces: --space, else the campaign file's, else the families' defaults */
	space_list = spaces;
	for (int i = 0; !spaces.n && i < camp.nspaces; i++)
		space_list.v[space_list.n++] = camp.spaces[i];

	if (replay_db) {
		if (!o.arch) {
			ft_error(&err, FT_EINPUT, "fatune search: --replay needs --arch (the arch the trials were recorded for)");
			goto fail;
		}
		if (space_list.n > 1) {
			ft_error(&err, FT_EINPUT, "fatune search: --replay replays one space: give --space once");
			goto fail;
		}
		if (!(arch = ft_arch_find(o.arch, &err)) ||
		    load_spaces(&space_list, arch, 1, sps, &nsp, &err))
			goto fail;
		timed = 1;
	} else if (ft_cmd_gpus("search", devices, o.arch, &gpus, &err) ||
		   load_spaces(&space_list, gpus.arch, 0, sps, &nsp, &err)) {
		goto fail;
	}
	if (!replay_db)
		arch = gpus.arch;
	timed = timed || gpus.ngroups > 0;
	ngroups = gpus.ngroups ? gpus.ngroups : 1;

	if (ft_db_open(&db, ft_db_path(&o), 1, &err))
		goto fail;
	out = calloc((size_t)(camp.nunits ? camp.nunits : 1) * nsp * ngroups, sizeof(*out));
	first = calloc((size_t)(camp.nunits ? camp.nunits : 1), sizeof(*first));
	count = calloc((size_t)(camp.nunits ? camp.nunits : 1), sizeof(*count));
	if (!out || !first || !count) {
		ft_error(&err, FT_EFAIL, "out of memory");
		goto fail;
	}
	so.jobs = jobs ? (int)jobs : ft_ncores();
	so.strategy = strat;
	so.seed = seed;
	so.budget_n = budget_n;
	so.budget_s = budget_s;
	so.timing = timing;
	so.samples = (int)samples;
	so.launches = (int)launches;
	so.timeout_ms = (int)(timeout_s * 1000);
	so.fresh = fresh;
	so.progress = &prog;
	so.campaign = name ? name : camp.name[0] ? camp.name : NULL;
	ft_progress_init(&prog, quiet ? FT_PROGRESS_QUIET
				       : ft_stderr_is_tty() ? FT_PROGRESS_TTY : FT_PROGRESS_LINES, 0);
	ft_search_signals(1);
	for (int u = 0; u < camp.nunits && !interrupted; u++) {
		const struct ft_shape *shape = &camp.units[u];
		char label[128], why[512] = "";

		first[u] = nout;
		if (camp.nunits > 1)
			ft_campaign_label(&camp, u, label, sizeof(label));
		else
			label[0] = '\0';
		if (replay_db &&
		    ft_replay_open(&replay, replay_db, arch->name, shape, sps[0]->name, &err))
			goto fail_signals;
		so.replay = replay;
		for (int g = 0; g < ngroups && !interrupted; g++) {
			struct ft_gpu_group *grp = gpus.ngroups ? &gpus.groups[g] : NULL;

			so.arch = grp ? &grp->arch : arch;
			so.device = grp ? grp->name : replay ? ft_replay_device(replay) : "";
			so.driver_version = grp ? grp->driver : "";
			so.workers = grp ? grp->workers : NULL;
			so.nworkers = grp ? grp->nworkers : 0;
			so.sm_count = grp ? grp->sm_count : 0;
			for (int i = 0; i < nsp; i++) {
				struct outcome *oc = &out[nout];

				if (ft_space_unfit(sps[i], so.arch, shape, why, sizeof(why))) {
					fprintf(stderr, "fatune: skipping space '%s' (%s) for %s: %s\n",
						sps[i]->name, sps[i]->path, label[0] ? label : "this shape", why);
					continue;
				}
				ft_progress_unit(&prog, label, u, camp.nunits,
						 ft_space_candidates(sps[i], shape, so.arch));
				oc->sp = sps[i];
				oc->device = so.device;
				rc = ft_search_run(db, sps[i], shape, &so, &oc->res, &err);
				ft_progress_end(&prog);
				nout++;
				searched++;
				if (rc) {
					if (!oc->res.interrupted)
						goto fail_signals;
					interrupted = 1;
				}
			}
		}
		count[u] = nout - first[u];
		if (!interrupted && count[u]) {
			report_unit(out + first[u], count[u], arch, shape, timed, so.jobs, json);
			failed_units += timed && winner(out + first[u], count[u]) < 0;
		} else if (!interrupted && json) {
			char st[FT_SHAPE_TEXT_MAX];
			printf("{\"arch\":\"%s\",\"shape\":", arch->name);
			ft_json_string(stdout, ft_shape_format(shape, st, sizeof(st)));
			printf(",\"dtype\":\"%s\",\"causal\":%d,\"not_run\":", ft_dtype_name(shape->dtype),
			       shape->causal);
			ft_json_string(stdout, why);
			printf("}\n");
		}
		ft_replay_close(replay);
		replay = NULL;
	}
	ft_search_signals(0);
	if (!searched && !interrupted) {
		ft_error(&err, FT_EINPUT,
			 "fatune search: no space can run these shapes on %s (see above): pass --space FILE or another --arch",
			 arch->name);
		goto fail;
	}
	if (camp.nunits > 1)
		report_campaign(&camp, out, first, count, arch, ft_now_ms() - t0, interrupted, json);
	if (interrupted) {
		ft_error(&err, FT_EFAIL, "interrupted: finished trials are stored; run the same command to resume");
		goto fail;
	}
	if (!timed && !quiet)
		fprintf(stderr, "fatune: stored the feasibility part in '%s'; timing needs an %s device\n",
			ft_db_path(&o), arch->name);
	status = failed_units ? FT_EFAIL : FT_OK;
	if (status)
		fprintf(stderr, "fatune: %s: nothing to export%s\n",
			camp.nunits > 1 ? "some shapes have no candidate that passed verification"
					: "no candidate passed verification",
			camp.nunits > 1 ? " for them" : "");
	goto out;
fail_signals:
	ft_search_signals(0);
fail:
	status = ft_report(&err);
out:
	ft_cmd_gpus_stop(&gpus);
	ft_replay_close(replay);
	if (db)
		ft_db_close(db);
	for (int i = 0; i < nsp; i++)
		free(sps[i]);
	free(out);
	free(first);
	free(count);
	ft_campaign_release(&camp);
	return status;
}
