/* cmd_search.c - `fatune search`: every space that fits, for one shape, on the GPUs asked for.
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

int cmd_search(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"search", "fatune search --shape BxHxSxD [--arch sm_XX] [options]",
		"Search for the fastest correct config of a shape: reject what cannot fit the arch,\n"
		"compile the rest with NVRTC, verify and time them on the GPU, store every trial and\n"
		"the best config in the tuning database. The shipped space of every template family\n"
		"that can target the arch is searched (mma.sync everywhere, wgmma on Hopper), or the\n"
		"spaces given with --space (one that cannot run here is skipped with the reason).",
		"Without a GPU of the target arch, the feasibility part (model check and compile) runs\n"
		"and is stored; timing needs such a device. A search that is interrupted resumes where\n"
		"it stopped when run again (--fresh redoes it). --budget takes a number of candidates\n"
		"(e.g. 40) or seconds (e.g. 30s) per space. --devices all (or 0,1,...) times on several\n"
		"GPUs at once; each GPU model keeps its own results. --replay DB takes each verdict and\n"
		"time from trials recorded in DB instead of a GPU (for testing strategies; one space,\n"
		"the shipped mma one unless --space says).\n"
		"Causal attention with a KV length other than S is bottom-right aligned: query i sees\n"
		"keys 0 .. i + kv_len - S (FlashAttention >= 2.1, serving engines)."
	};
	struct ft_target_opts o = { 0 };
	struct ft_strlist spaces = { 0 };
	struct ft_search_opts so = { 0 };
	const char *strategy = "exhaustive", *budget = NULL, *timing = "warm", *replay_db = NULL,
		   *devices = NULL;
	long long jobs = 0, seed = 1234, samples = 15, launches = 20, timeout_s = 10;
	int fresh = 0, quiet = 0, json = 0, npos, rc;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(&o),
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
		FT_OPT_INT_("samples", 0, &samples, "R", "timed samples per candidate, median kept (default 15)", 1, 1000),
		FT_OPT_INT_("launches", 0, &launches, "K", "calls per sample in one CUDA graph (default 20)", 1, 1000),
		FT_OPT_INT_("timeout", 0, &timeout_s, "SECONDS", "watchdog per candidate (default 10)", 1, 3600),
		FT_OPT_FLAG_("fresh", 0, &fresh, "redo trials finished by an earlier run of this search"),
		FT_OPT_STR_("replay", 0, &replay_db, "DB", "take results recorded in DB instead of a GPU"),
		FT_OPT_FLAG_("quiet", 'q', &quiet, "no progress output"),
		FT_OPT_FLAG_("json", 0, &json, "print the summary as JSON"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_shape shape;
	struct ft_space *sps[FT_LIST_MAX + 4] = { 0 };
	struct outcome *out = NULL;
	struct ft_gpus gpus = { 0 };
	struct ft_replay *replay = NULL;
	struct ft_db *db = NULL;
	struct ft_progress prog;
	const struct ft_arch *arch = NULL;
	int nsp = 0, nout = 0, timed = 0, status = FT_EFAIL, searched = 0;
	double budget_s = 0;
	long long budget_n = -1;
	enum ft_strategy strat;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (ft_target_shape("search", &o, &shape, &err) || ft_strategy_parse(strategy, &strat, &err) ||
	    ft_cmd_timing("search", timing, &err) ||
	    ft_cmd_budget("search", budget, &budget_n, &budget_s, &err))
		goto fail;
	if (replay_db) {
		if (!o.arch) {
			ft_error(&err, FT_EINPUT, "fatune search: --replay needs --arch (the arch the trials were recorded for)");
			goto fail;
		}
		if (spaces.n > 1) {
			ft_error(&err, FT_EINPUT, "fatune search: --replay replays one space: give --space once");
			goto fail;
		}
		if (!(arch = ft_arch_find(o.arch, &err)) ||
		    load_spaces(&spaces, arch, 1, sps, &nsp, &err) ||
		    ft_replay_open(&replay, replay_db, arch->name, &shape, sps[0]->name, &err))
			goto fail;
		timed = 1;
	} else if (ft_cmd_gpus("search", devices, o.arch, &gpus, &err) ||
		   load_spaces(&spaces, gpus.arch, 0, sps, &nsp, &err)) {
		goto fail;
	}
	if (!replay)
		arch = gpus.arch;
	timed = timed || gpus.ngroups > 0;

	if (ft_db_open(&db, ft_db_path(&o), 1, &err))
		goto fail;
	out = calloc((size_t)nsp * (gpus.ngroups ? gpus.ngroups : 1), sizeof(*out));
	if (!out) {
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
	so.replay = replay;
	so.progress = &prog;
	ft_search_signals(1);
	for (int g = 0; g < (gpus.ngroups ? gpus.ngroups : 1); g++) {
		struct ft_gpu_group *grp = gpus.ngroups ? &gpus.groups[g] : NULL;

		so.arch = grp ? &grp->arch : arch;
		so.device = grp ? grp->name : replay ? ft_replay_device(replay) : "";
		so.driver_version = grp ? grp->driver : "";
		so.workers = grp ? grp->workers : NULL;
		so.nworkers = grp ? grp->nworkers : 0;
		so.sm_count = grp ? grp->sm_count : 0;
		for (int i = 0; i < nsp; i++) {
			struct outcome *oc = &out[nout];
			char why[512];

			if (ft_space_unfit(sps[i], so.arch, &shape, why, sizeof(why))) {
				fprintf(stderr, "fatune: skipping space '%s' (%s): %s\n", sps[i]->name,
					sps[i]->path, why);
				continue;
			}
			ft_progress_init(&prog, quiet ? FT_PROGRESS_QUIET
						       : ft_stderr_is_tty() ? FT_PROGRESS_TTY : FT_PROGRESS_LINES,
					 ft_space_candidates(sps[i], &shape, so.arch));
			oc->sp = sps[i];
			oc->device = so.device;
			rc = ft_search_run(db, sps[i], &shape, &so, &oc->res, &err);
			ft_progress_end(&prog);
			nout++;
			searched++;
			if (rc) {
				ft_search_signals(0);
				goto fail;
			}
		}
	}
	ft_search_signals(0);
	if (!searched) {
		ft_error(&err, FT_EINPUT,
			 "fatune search: no space can run %s on %s (see above): pass --space FILE or another --arch",
			 o.shape, arch->name);
		goto fail;
	}
	if (json)
		print_json(out, nout, arch, &shape, timed);
	else
		print_text(out, nout, arch, &shape, timed, so.jobs);
	if (!timed && !quiet)
		fprintf(stderr, "fatune: stored the feasibility part in '%s'; timing needs an %s device\n",
			ft_db_path(&o), arch->name);
	status = timed && winner(out, nout) < 0 ? FT_EFAIL : FT_OK;
	if (status)
		fprintf(stderr, "fatune: no candidate passed verification: nothing to export\n");
	goto out;
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
	return status;
}
