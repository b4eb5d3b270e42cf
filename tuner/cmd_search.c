/* cmd_search.c - `fatune search`: the whole pipeline for one shape, stored as it goes.
 *
 * Probes the GPU through a worker process (the search process never loads the
 * driver), then runs the pipeline: model check, compile, and - when a GPU of
 * the target arch is present - verify and time. Without one (no GPU, or
 * --arch names another arch) it runs and stores the feasibility part and says
 * that timing needs such a device. Every trial is committed as it finishes
 * (rejections in small batches), so an interrupted search loses at most the
 * candidates in flight, and re-running it skips what is already finished.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cmd.h"
#include "config.h"
#include "db.h"
#include "evaluate.h"
#include "format.h"
#include "nvrtc.h"
#include "pipeline.h"
#include "progress.h"
#include "replay.h"
#include "target.h"

/* Rejections by model are cheap and can number 100k: commit them in batches of
 * this many (one transaction each) instead of one fsync per row. */
#define REJECT_BATCH 256

struct search_ctx {
	struct ft_db *db;
	long long run_id;
	const char *search_key;
	int fresh;
	struct ft_trial batch[REJECT_BATCH];
	int nbatch;
	struct ft_progress prog;
	struct ft_trial top[2];		/* best and runner-up of this search (incl. resumed) */
	struct ft_err err;
};

static void keep_top(struct search_ctx *s, const struct ft_trial *t)
{
	if (t->status != FT_ST_OK || isnan(t->t_median_us))
		return;
	if (isnan(s->top[0].t_median_us) || t->t_median_us < s->top[0].t_median_us) {
		s->top[1] = s->top[0];
		s->top[0] = *t;
	} else if (isnan(s->top[1].t_median_us) || t->t_median_us < s->top[1].t_median_us) {
		s->top[1] = *t;
	}
	s->top[0].log = s->top[1].log = NULL;
}

static int flush(struct search_ctx *s)
{
	int rc = 0;

	if (s->nbatch)
		rc = ft_db_trials_put(s->db, s->run_id, s->search_key, s->batch, s->nbatch, &s->err);
	s->nbatch = 0;
	return rc;
}

static int on_trial(void *ctx, struct ft_trial *t)
{
	struct search_ctx *s = ctx;
	struct ft_trial prev;
	int model_reject = t->status == FT_ST_REJECTED_CONSTRAINT ||
			   (t->status == FT_ST_REJECTED_SMEM && t->res.regs < 0);

	ft_progress_add(&s->prog, t, 0);
	keep_top(s, t);
	if (model_reject) {
		/* already stored by an earlier run of this search: keep one row */
		if (!s->fresh) {
			int found = ft_db_trial_latest(s->db, s->search_key, t->config, &prev, &s->err);
			if (found < 0)
				return -1;
			if (found)
				return 0;
		}
		s->batch[s->nbatch] = *t;
		s->batch[s->nbatch++].log = NULL;
		return s->nbatch == REJECT_BATCH ? flush(s) : 0;
	}
	if (flush(s))
		return -1;
	return ft_db_trials_put(s->db, s->run_id, s->search_key, t, 1, &s->err);
}

static int on_skip(void *ctx, const struct ft_trial *t)
{
	struct search_ctx *s = ctx;
	struct ft_trial prev;
	struct ft_err err;

	if (s->fresh || ft_db_trial_latest(s->db, s->search_key, t->config, &prev, &err) != 1)
		return 0;
	ft_progress_add(&s->prog, &prev, 1);
	keep_top(s, &prev);
	return 1;
}

static void on_signal(int sig)
{
	(void)sig;
	ft_pipeline_interrupt();
}

static void print_summary(struct search_ctx *s, const struct ft_pipeline_stats *st,
			  const struct ft_arch *a, const struct ft_shape *sh, const char *device,
			  int timed, int jobs, int json)
{
	char shape[FT_SHAPE_TEXT_MAX], cmd[512];
	const long long *c = s->prog.counts;

	ft_shape_format(sh, shape, sizeof(shape));
	snprintf(cmd, sizeof(cmd), "fatune export --arch %s --shape %s%s --dtype %s -o build_config.h",
		 a->name, shape, sh->causal ? " --causal" : "", ft_dtype_name(sh->dtype));
	if (json) {
		printf("{\"arch\":\"%s\",\"shape\":\"%s\",\"dtype\":\"%s\",\"causal\":%d,\"timed\":%s,"
		       "\"candidates\":%lld,\"skipped\":%lld,\"wall_s\":%.3f,",
		       a->name, shape, ft_dtype_name(sh->dtype), sh->causal, timed ? "true" : "false",
		       st->enumerated, st->skipped, st->wall_ms / 1e3);
		printf("\"status\":{");
		for (int i = 0; i < FT_ST_COUNT; i++)
			printf("%s\"%s\":%lld", i ? "," : "", ft_status_name((enum ft_status)i), c[i]);
		printf("},\"compiles\":%lld,\"cache_hits\":%lld,\"compile_ms_total\":%.1f,"
		       "\"gpu_busy_ms\":%.1f,\"first_compile_ms\":%.1f",
		       st->compiled, st->cache_hits, st->compile_ms_total, st->gpu_busy_ms,
		       st->first_compile_ms);
		for (int k = 0; k < 2; k++) {
			if (isnan(s->top[k].t_median_us))
				continue;
			printf(",\"%s\":{\"config\":", k ? "runner_up" : "best");
			ft_json_string(stdout, s->top[k].config);
			printf(",\"t_median_us\":%.4f,\"rel_err\":%.3e}", s->top[k].t_median_us,
			       s->top[k].rel_err);
		}
		printf("}\n");
		return;
	}
	printf("search %s %s %s%s%s%s: %lld candidates in %.1f s\n", a->name, shape,
	       ft_dtype_name(sh->dtype), sh->causal ? " causal" : "", device[0] ? " on " : "", device,
	       st->enumerated, st->wall_ms / 1e3);
	printf("  ");
	for (int i = 0; i < FT_ST_COUNT; i++)
		if (c[i])
			printf("%s %lld  ", ft_status_name((enum ft_status)i), c[i]);
	if (st->skipped)
		printf("(%lld already done, skipped)", st->skipped);
	printf("\n  compile: %lld NVRTC runs, %lld cache hits, %.1f s of compiling on %d threads",
	       st->compiled, st->cache_hits, st->compile_ms_total / 1e3, jobs);
	if (timed && st->wall_ms > 0)
		printf("; GPU busy %.0f%% of the wall time", 100.0 * st->gpu_busy_ms / st->wall_ms);
	printf("\n");
	for (int k = 0; k < 2; k++)
		if (!isnan(s->top[k].t_median_us))
			printf("  %-9s %8.2f us  %s\n", k ? "runner-up" : "best", s->top[k].t_median_us,
			       s->top[k].config);
	if (timed && !isnan(s->top[0].t_median_us))
		printf("next: %s\n", cmd);
}

int cmd_search(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"search", "fatune search --shape BxHxSxD [--arch sm_XX] [options]",
		"Search a space for the fastest correct config of a shape: reject what cannot fit the\n"
		"arch, compile the rest with NVRTC, verify and time them on the GPU, store every trial\n"
		"and the best config in the tuning database.",
		"Without a GPU of the target arch, the feasibility part (model check and compile) runs\n"
		"and is stored; timing needs such a device. A search that is interrupted resumes where\n"
		"it stopped when run again (--fresh redoes it). --budget takes a number of candidates\n"
		"(e.g. 40) or seconds (e.g. 30s). --replay DB takes each verdict and time from trials\n"
		"recorded in DB instead of a GPU (for testing strategies)."
	};
	struct ft_target_opts o = { 0 };
	const char *strategy = "exhaustive", *budget = NULL, *timing = "warm", *replay_db = NULL;
	long long jobs = 0, seed = 1234, samples = 15, launches = 20, timeout_s = 10;
	int fresh = 0, quiet = 0, json = 0, npos, rc;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(&o), FT_SPACE_OPTION(&o), FT_DB_OPTION(&o),
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
	struct ft_space *sp = NULL;
	const struct ft_arch *arch = NULL;
	struct ft_arch dev_arch;
	struct ft_worker *w = NULL;
	struct ft_device_info dev = { 0 };
	struct ft_replay *replay = NULL;
	struct search_ctx *s = calloc(1, sizeof(*s));
	struct ft_pipeline_cfg cfg = { 0 };
	struct ft_pipeline_stats st = { 0 };
	struct ft_run run = { 0 };
	struct ft_best_key bk;
	char tpl_hash[17], key[17], keytext[1024], shape_txt[FT_SHAPE_TEXT_MAX], drv[32] = "";
	const char *device = "";
	int timed = 0, status = FT_EFAIL;
	double budget_s = 0;
	long long budget_n = -1;
	enum ft_strategy strat;

	if (!s)
		return FT_EFAIL;
	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0) {
		free(s);
		return rc;
	}
	if (ft_target_shape("search", &o, &shape, &err) || ft_strategy_parse(strategy, &strat, &err))
		goto fail;
	if (strcmp(timing, "warm") && strcmp(timing, "cold")) {
		ft_error(&err, FT_EINPUT, "fatune search: bad --timing '%s': use warm or cold", timing);
		goto fail;
	}
	if (budget) {
		char *end;
		double v = strtod(budget, &end);
		if (end == budget || v <= 0 || (*end && strcmp(end, "s")) || (!*end && v != (long long)v)) {
			ft_error(&err, FT_EINPUT, "fatune search: bad --budget '%s': use a count (40) or seconds (30s)", budget);
			goto fail;
		}
		if (*end)
			budget_s = v;
		else
			budget_n = (long long)v;
	}
	if (ft_target_space(&o, &sp, &err) || ft_template_hash(sp->template_path, tpl_hash, &err))
		goto fail;

	if (replay_db) {
		if (!o.arch) {
			ft_error(&err, FT_EINPUT, "fatune search: --replay needs --arch (the arch the trials were recorded for)");
			goto fail;
		}
		if (!(arch = ft_arch_find(o.arch, &err)) ||
		    ft_replay_open(&replay, replay_db, arch->name, &shape, sp->template_name, &err))
			goto fail;
		device = ft_replay_device(replay);
		timed = 1;
	} else {
		if (ft_cmd_worker(&w, &dev, &err) || ft_cmd_arch("search", o.arch, &dev, &arch, &err))
			goto fail;
		if (dev.present && dev.lim.cc == arch->cc) {
			struct ft_err warn = { 0 };
			timed = 1;
			device = dev.lim.name;
			snprintf(drv, sizeof(drv), "%d", dev.driver_version);
			if (ft_arch_check_device(arch, &dev.lim, &warn))
				ft_warn("%s; the device's own limits apply", warn.msg);
			/* what runs here is bound by what the driver reports */
			ft_arch_from_device(arch, &dev.lim, &dev_arch);
			arch = &dev_arch;
		} else {
			if (dev.present)
				fprintf(stderr, "fatune: the GPU here is '%s' (sm_%d), not %s: running the feasibility part for %s only; timing needs an %s device\n",
					dev.lim.name, dev.lim.cc, arch->name, arch->name, arch->name);
			else
				fprintf(stderr, "fatune: no GPU here (%s): running the feasibility part (model check and NVRTC compile) for %s; timing needs an %s device\n",
					dev.why_not, arch->name, arch->name);
			ft_worker_stop(w);
			w = NULL;
		}
	}

	ft_shape_format(&shape, shape_txt, sizeof(shape_txt));
	/* everything a trial's verdict depends on; a change starts a new search */
	snprintf(keytext, sizeof(keytext),
		 "v1 space=%s tpl=%s arch=%s device=%s shape=%s dtype=%s causal=%d mode=%s timing=%s nvrtc=%s seed=%lld replay=%s",
		 sp->hash_hex, tpl_hash, arch->name, device, shape_txt, ft_dtype_name(shape.dtype),
		 shape.causal, timed ? "timed" : "feasibility", timing, ft_nvrtc_version(), seed,
		 replay_db ? "yes" : "no");
	ft_hash_hex(keytext, strlen(keytext), key);

	if (ft_db_open(&s->db, ft_db_path(&o), 1, &err))
		goto fail;
	run = (struct ft_run){ FATUNE_VERSION, arch->name, device, ft_nvrtc_version(), drv,
			       sp->template_name, tpl_hash, sp->path, sp->hash_hex, key, shape,
			       timed ? "timed" : "feasibility", ft_strategy_name(strat), seed,
			       budget_n, timing };
	if (ft_db_run_begin(s->db, &run, &s->run_id, &err))
		goto fail;
	s->search_key = key;
	s->fresh = fresh;
	ft_trial_init(&s->top[0]);
	ft_trial_init(&s->top[1]);

	cfg.sp = sp;
	cfg.arch = arch;
	cfg.shape = &shape;
	cfg.template_hash = tpl_hash;
	cfg.jobs = jobs ? (int)jobs : ft_ncores();
	cfg.compile = 1;
	cfg.worker = w;
	cfg.replay = replay;
	cfg.sm_count = dev.present ? dev.lim.sm_count : 0;
	cfg.timeout_ms = (int)(timeout_s * 1000);
	ft_job_timing_defaults(&cfg.job);
	cfg.job.seed = (unsigned long long)seed;
	cfg.job.tolerance = ft_tolerance(shape.dtype);
	cfg.job.samples = (int)samples;
	cfg.job.launches_per_sample = (int)launches;
	cfg.job.cold = !strcmp(timing, "cold");
	cfg.strategy = strat;
	cfg.seed = (unsigned long long)seed;
	cfg.budget_evals = budget_n;
	cfg.budget_seconds = budget_s;
	cfg.skip = on_skip;
	cfg.emit = on_trial;
	cfg.ctx = s;
	{
		struct ft_enum *e;
		long long total = 0;
		if (!ft_enum_open(&e, sp, &shape, arch, NULL, &err)) {
			total = ft_enum_total(e);
			ft_enum_close(e);
		}
		ft_progress_init(&s->prog, quiet ? FT_PROGRESS_QUIET
						 : ft_stderr_is_tty() ? FT_PROGRESS_TTY : FT_PROGRESS_LINES,
				 total);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rc = ft_pipeline_run(&cfg, &st, &err);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	ft_progress_end(&s->prog);
	if (flush(s) && !rc) {
		err = s->err;
		rc = -1;
	}
	if (rc && s->err.status)
		err = s->err;
	bk = (struct ft_best_key){ arch->name, device, sp->template_name, shape };
	if (timed && ft_db_best_refresh(s->db, &bk, key, rc ? NULL : &err) < 0 && !rc)
		rc = -1;
	ft_db_run_finish(s->db, s->run_id, rc ? (strstr(err.msg, "interrupted") ? "interrupted" : "failed") : "done",
			 st.wall_ms / 1e3, NULL);
	if (rc)
		goto fail;
	print_summary(s, &st, arch, &shape, device, timed, cfg.jobs, json);
	if (!timed && !quiet)
		fprintf(stderr, "fatune: stored %lld trials (feasibility only) in '%s'; timing needs an %s device\n",
			s->prog.done, ft_db_path(&o), arch->name);
	status = timed && isnan(s->top[0].t_median_us) ? FT_EFAIL : FT_OK;
	if (status)
		fprintf(stderr, "fatune: no candidate passed verification: nothing to export\n");
	goto out;
fail:
	status = ft_report(&err);
out:
	ft_worker_stop(w);
	ft_replay_close(replay);
	if (s->db)
		ft_db_close(s->db);
	free(sp);
	free(s);
	return status;
}
