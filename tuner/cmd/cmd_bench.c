/* cmd_bench.c - `fatune bench`: verify and time one config with the search's method.
 *
 * The config comes from --config 'NAME=V,...' or from the stored best (--best);
 * it goes through the same pipeline as a search (model check, cache or NVRTC,
 * worker), pinned to that one candidate, so the numbers are comparable with
 * the search's. Nothing is stored.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/cache.h"
#include "cmd/cmd.h"
#include "db/db.h"
#include "run/evaluate.h"
#include "ui/format.h"
#include "search/pipeline.h"
#include "cmd/target.h"

struct bench_ctx {
	struct ft_trial t;
	int got;
};

static int bench_emit(void *ctx, struct ft_trial *t)
{
	struct bench_ctx *b = ctx;

	b->t = *t;
	b->t.log = NULL;
	b->got = 1;
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"bench", "fatune bench --shape BxHxSxD (--config 'NAME=V,...' | --best) [options]",
		"Verify and time one config on the GPU with the same method as search: the median of\n"
		"R samples, each one CUDA-graph replay of K back-to-back calls divided by K.",
		"--best takes the stored best config of the shape for this GPU from the database: the\n"
		"fastest across the spaces searched (its own space file is loaded), or --space's."
	};
	struct ft_target_opts o = { 0 };
	const char *config = NULL, *timing = "warm";
	long long seed = 1234, samples = 30, launches = 20, timeout_s = 10;
	int best = 0, json = 0, npos, rc;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(&o), FT_SPACE_OPTION(&o), FT_DB_OPTION(&o),
		FT_OPT_STR_("config", 0, &config, "CONFIG", "the config, e.g. 'TILE_M=64,TILE_N=64,...'"),
		FT_OPT_FLAG_("best", 0, &best, "the stored best config of this shape and GPU"),
		FT_OPT_STR_("timing", 0, &timing, "warm|cold", "warm L2 (default) or flush L2 before each call"),
		FT_OPT_INT_("samples", 0, &samples, "R", "timed samples (default 30; fewer, at least 5, when they would take over 1 s)", 1, 10000),
		FT_OPT_INT_("launches", 0, &launches, "K", "calls per sample in one CUDA graph (default 20; fewer when K calls would take over 20 ms)", 1, 1000),
		FT_OPT_INT_("seed", 0, &seed, "N", "input seed (default 1234)", 0, 9e18),
		FT_OPT_INT_("timeout", 0, &timeout_s, "SECONDS", "watchdog (default 10; raised to 3x the time its first call predicts, at most 300)", 1, 3600),
		FT_OPT_FLAG_("json", 0, &json, "print JSON"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_shape shape;
	struct ft_space *sp = NULL;
	const struct ft_arch *arch;
	struct ft_runner *w = NULL;
	struct ft_device_info dev;
	struct ft_pipeline_cfg cfg = { 0 };
	struct ft_pipeline_stats st;
	struct bench_ctx b = { 0 };
	long long values[FT_MAX_PARAMS];
	char tpl_hash[17], shape_txt[FT_SHAPE_TEXT_MAX];
	const char *cfgtext = config;
	struct ft_best bestrow;
	int status;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (!!config == !!best) {
		ft_error(&err, FT_EINPUT, "fatune bench: give exactly one of --config 'NAME=V,...' and --best");
		return ft_report(&err);
	}
	if (strcmp(timing, "warm") && strcmp(timing, "cold")) {
		ft_error(&err, FT_EINPUT, "fatune bench: bad --timing '%s': use warm or cold", timing);
		return ft_report(&err);
	}
	if (ft_target_shape("bench", &o, &shape, &err) ||
	    ((config || o.space) && ft_target_space(&o, &sp, &err)))
		goto fail;
	if (config && ft_config_parse(sp, config, values, &err))
		goto fail;
	if (ft_cmd_runner(&w, &dev, &err) || ft_cmd_arch("bench", o.arch, &dev, &arch, &err))
		goto fail;
	if (!dev.present || dev.lim.cc != arch->cc) {
		ft_error(&err, FT_EFAIL, "fatune bench: timing %s needs an %s GPU (%s)", arch->name,
			 arch->name, dev.present ? dev.lim.name : dev.why_not);
		goto fail;
	}
	if (best) {
		struct ft_db *db;
		struct ft_best_key key = { arch->name, dev.lim.name, sp ? sp->name : NULL, shape };
		int found;
		if (ft_db_open(&db, ft_db_path(&o), 0, &err))
			goto fail;
		found = ft_db_best_get(db, &key, &bestrow, &err);
		ft_db_close(db);
		if (found < 0)
			goto fail;
		if (!found) {
			ft_error(&err, FT_EINPUT, "no stored best for %s %s on '%s': run 'fatune search --shape %s' first",
				 arch->name, ft_shape_format(&shape, shape_txt, sizeof(shape_txt)),
				 dev.lim.name, shape_txt);
			goto fail;
		}
		cfgtext = bestrow.config;
		if (!sp) {
			struct ft_target_opts so = o;
			if (!bestrow.space_path[0]) {
				ft_error(&err, FT_EINPUT, "the stored best of space '%s' does not say which space file it came from: pass --space FILE",
					 bestrow.space);
				goto fail;
			}
			so.space = bestrow.space_path;
			if (ft_target_space(&so, &sp, &err)) {
				ft_err_prefix(&err, "the stored best came from space '%s'", bestrow.space);
				goto fail;
			}
		}
		if (ft_config_parse(sp, cfgtext, values, &err)) {
			ft_err_prefix(&err, "the stored best no longer fits the space");
			goto fail;
		}
	}
	{
		char why[512];
		if (ft_space_unfit(sp, arch, &shape, why, sizeof(why))) {
			ft_error(&err, FT_EINPUT, "fatune bench: space '%s' cannot run here: %s", sp->name, why);
			goto fail;
		}
	}
	if (ft_space_template_hash(sp, tpl_hash, &err))
		goto fail;
	cfg.sp = sp;
	cfg.arch = arch;
	cfg.shape = &shape;
	cfg.template_hash = tpl_hash;
	cfg.fixed = values;
	cfg.jobs = 1;
	cfg.compile = 1;
	cfg.runners = &w;
	cfg.nrunners = 1;
	cfg.sm_count = dev.lim.sm_count;
	cfg.timeout_ms = (int)(timeout_s * 1000);
	ft_job_timing_defaults(&cfg.job);
	cfg.job.seed = (unsigned long long)seed;
	cfg.job.tolerance = ft_tolerance(shape.dtype);
	cfg.job.samples = (int)samples;
	cfg.job.launches_per_sample = (int)launches;
	cfg.job.cold = !strcmp(timing, "cold");
	cfg.budget_evals = -1;
	cfg.emit = bench_emit;
	cfg.ctx = &b;
	if (ft_pipeline_run(&cfg, &st, &err))
		goto fail;
	if (!b.got) {
		ft_error(&err, FT_EFAIL, "bench produced no result");
		goto fail;
	}
	ft_shape_format(&shape, shape_txt, sizeof(shape_txt));
	if (json) {
		printf("{\"arch\":\"%s\",\"device\":", arch->name);
		ft_json_string(stdout, dev.lim.name);
		printf(",\"shape\":\"%s\",\"dtype\":\"%s\",\"causal\":%d,\"config\":", shape_txt,
		       ft_dtype_name(shape.dtype), shape.causal);
		ft_json_string(stdout, b.t.config);
		printf(",\"status\":\"%s\",\"reason\":", ft_status_name(b.t.status));
		ft_json_string(stdout, b.t.reason);
		if (b.t.status == FT_ST_OK)
			printf(",\"t_median_us\":%.4f,\"t_min_us\":%.4f,\"t_p90_us\":%.4f,\"spread\":%.4f,"
			       "\"rel_err\":%.4e,\"samples\":%d,\"launches_per_sample\":%lld}\n",
			       b.t.t_median_us, b.t.t_min_us, b.t.t_p90_us, b.t.t_spread, b.t.rel_err,
			       b.t.samples, (long long)b.t.launches_per_sample);
		else
			printf(",\"t_median_us\":null}\n");
	} else {
		printf("%s %s %s%s on %s\n  config   %s\n  status   %s%s%s\n", arch->name, shape_txt,
		       ft_dtype_name(shape.dtype), shape.causal ? " causal" : "", dev.lim.name, b.t.config,
		       ft_status_name(b.t.status), b.t.reason[0] ? ": " : "", b.t.reason);
		if (b.t.status == FT_ST_OK)
			printf("  median   %.2f us  (min %.2f, p90 %.2f, spread %.1f%%, %d samples x %lld calls)\n"
			       "  rel err  %.2e\n",
			       b.t.t_median_us, b.t.t_min_us, b.t.t_p90_us, 100 * b.t.t_spread, b.t.samples,
			       (long long)b.t.launches_per_sample, b.t.rel_err);
	}
	status = b.t.status == FT_ST_OK ? FT_OK : FT_EFAIL;
	ft_runner_close(w);
	free(sp);
	return status;
fail:
	ft_runner_close(w);
	free(sp);
	return ft_report(&err);
}
