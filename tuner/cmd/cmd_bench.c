/* cmd_bench.c - `fatune bench`: verify and time configs with the search's method.
 *
 * Each config comes from --config 'NAME=V,...' (in --space's space) or is the
 * stored best of a database (--best: --db's, --best-from DB: another's, in the
 * space file its run searched); it goes through the same pipeline as a search
 * (model check, cache or NVRTC, worker), pinned to that one candidate, so the
 * numbers are comparable with the search's. One config is timed in one go;
 * several are verified first, then timed interleaved in round-robin rounds on
 * the same worker (run/interleave.h), or with --sweep in one job, one sample
 * of each in turn (run/sweep.h), so that a clock drift does not decide which
 * is faster. Nothing is stored.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/target.h"
#include "compile/cache.h"
#include "db/db.h"
#include "run/evaluate.h"
#include "run/interleave.h"
#include "run/runner.h"
#include "search/pipeline.h"
#include "ui/format.h"

/* Rounds when several configs are timed (--rounds): 30 samples become 10
 * rounds of 3, so a drift over the run falls on every config alike. */
#define BENCH_ROUNDS 10

/* One config to time. */
struct cand {
	const char *from;		/* "--config", or the database its best came from */
	struct ft_space *sp;		/* owned when own */
	int own;
	char config[FT_CONFIG_MAX];
	char tpl_hash[17];
	struct ft_pipeline_cfg cfg;
	long long values[FT_MAX_PARAMS];
	struct ft_trial t;		/* its verdict: the pipeline's, then the rounds' */
	int got, rounds;
};

struct bench {
	struct ft_target_opts o;
	const struct ft_arch *arch;
	struct ft_shape shape;
	const char *device;		/* the device its times are of */
	struct ft_space *sp;		/* --space's (or the default), for --config */
	struct cand c[FT_INTERLEAVE_MAX];
	int n;
};

static int bench_emit(void *ctx, struct ft_trial *t)
{
	struct cand *c = ctx;

	c->t = *t;
	c->t.log = NULL;
	c->got = 1;
	return 0;
}

static struct cand *add(struct bench *b, const char *from, struct ft_err *err)
{
	struct cand *c;

	if (b->n == FT_INTERLEAVE_MAX) {
		ft_error(err, FT_EINPUT, "fatune bench: at most %d configs in one run", FT_INTERLEAVE_MAX);
		return NULL;
	}
	c = &b->c[b->n++];
	memset(c, 0, sizeof(*c));
	c->from = from;
	return c;
}

/* --config TEXT in --space's space. */
static int add_config(struct bench *b, const char *text, struct ft_err *err)
{
	struct cand *c = add(b, "--config", err);

	if (!c)
		return -1;
	if (!b->sp && ft_target_space(&b->o, &b->sp, err))
		return -1;
	c->sp = b->sp;
	snprintf(c->config, sizeof(c->config), "%s", text);
	return ft_config_parse(c->sp, c->config, c->values, err);
}

/* The stored best of db_path for this shape and device, in --space's space
 * when given, else the fastest across spaces (in its own space file). */
static int add_best(struct bench *b, const char *db_path, struct ft_err *err)
{
	struct cand *c = add(b, db_path, err);
	struct ft_space *want = NULL;
	struct ft_best_key key;
	struct ft_best row;
	struct ft_db *db;
	char shape_txt[FT_SHAPE_TEXT_MAX];
	int found;

	if (!c)
		return -1;
	if (b->o.space && !b->sp && ft_target_space(&b->o, &b->sp, err))
		return -1;
	want = b->o.space ? b->sp : NULL;
	key = (struct ft_best_key){ b->arch->name, b->device, want ? want->name : NULL, b->shape };
	if (ft_db_open(&db, db_path, 0, err))
		return -1;
	found = ft_db_best_get(db, &key, &row, err);
	ft_db_close(db);
	if (found < 0)
		return -1;
	if (!found)
		return ft_error(err, FT_EINPUT, "no stored best for %s %s on '%s' in %s: run 'fatune search --shape %s' first",
				b->arch->name, ft_shape_format(&b->shape, shape_txt, sizeof(shape_txt)),
				b->device, db_path, shape_txt);
	snprintf(c->config, sizeof(c->config), "%s", row.config);
	if (want) {
		c->sp = want;
	} else {
		struct ft_target_opts so = b->o;

		if (!row.space_path[0])
			return ft_error(err, FT_EINPUT,
					"the stored best of space '%s' in %s does not say which space file it came from: pass --space FILE",
					row.space, db_path);
		so.space = row.space_path;
		if (ft_target_space(&so, &c->sp, err)) {
			ft_err_prefix(err, "the stored best in %s came from space '%s'", db_path, row.space);
			return -1;
		}
		c->own = 1;
	}
	if (ft_config_parse(c->sp, c->config, c->values, err)) {
		ft_err_prefix(err, "the stored best in %s no longer fits the space", db_path);
		return -1;
	}
	return 0;
}

/* Candidate c through the pipeline: model check, compile, verification,
 * and with `timed` its timing. */
static int run_one(struct bench *b, struct cand *c, struct ft_runner **w, const struct ft_job *job,
		   int timeout_ms, int sm_count, int timed, struct ft_err *err)
{
	struct ft_pipeline_cfg *cfg = &c->cfg;
	struct ft_pipeline_stats st;
	char why[512];

	if (ft_space_unfit(c->sp, b->arch, &b->shape, why, sizeof(why)))
		return ft_error(err, FT_EINPUT, "fatune bench: space '%s' cannot run here: %s", c->sp->name, why);
	if (ft_space_template_hash(c->sp, c->tpl_hash, err))
		return -1;
	cfg->sp = c->sp;
	cfg->arch = b->arch;
	cfg->shape = &b->shape;
	cfg->template_hash = c->tpl_hash;
	cfg->fixed = c->values;
	cfg->jobs = 1;
	cfg->compile = 1;
	cfg->runners = w;
	cfg->nrunners = 1;
	cfg->sm_count = sm_count;
	cfg->timeout_ms = timeout_ms;
	cfg->job = *job;
	cfg->job.timing = timed;
	cfg->budget_evals = -1;
	cfg->emit = bench_emit;
	cfg->ctx = c;
	if (ft_pipeline_run(cfg, &st, err))
		return -1;
	cfg->job.timing = 1;
	if (!c->got)
		return ft_error(err, FT_EFAIL, "bench produced no result for %s", c->config);
	return 0;
}

struct run_ctx {
	struct ft_runner *w;
	int timeout_ms;
};

static int run_job(void *ctx, const struct ft_job *job, struct ft_job_result *res, struct ft_err *err)
{
	struct run_ctx *x = ctx;

	return ft_runner_evaluate(x->w, job, x->timeout_ms, res, err);
}

/* jobs[0..n) timed in one sweep (--sweep; run/sweep.h): one sample of each
 * in turn, all of a job's samples in one round, nobody leaving. 0 with out
 * and nr; -1 with err, also when the runner could not sweep them. */
static int sweep(struct ft_runner *w, int timeout_ms, const struct ft_job *jobs, int n,
		 struct ft_job_result *out, int *nr, struct ft_err *err)
{
	struct ft_sweep *g = calloc(1, sizeof(*g));
	struct ft_sweep_result *res = calloc(1, sizeof(*res));
	int rc = 0;

	if (!g || !res) {
		free(g);
		free(res);
		return ft_error(err, FT_EFAIL, "out of memory for a sweep");
	}
	g->n = n;
	g->rounds = 1;
	g->per_round = jobs[0].samples;
	for (int i = 0; i < n; i++)
		g->jobs[i] = jobs[i];
	if (ft_runner_sweep(w, g, timeout_ms, res, err))
		rc = -1;
	else if (res->failed)
		rc = ft_error(err, FT_EFAIL, "fatune bench: the sweep was not measured: %s", res->why);
	for (int i = 0; !rc && i < n; i++) {
		out[i] = res->res[i];
		nr[i] = res->rounds[i];
	}
	free(g);
	free(res);
	return rc;
}

/* The verified candidates timed interleaved (in rounds, or in one sweep);
 * each one's pooled verdict into its trial. */
static int interleave(struct bench *b, struct ft_runner *w, int timeout_ms, int rounds,
		      int swept, struct ft_err *err)
{
	struct ft_job jobs[FT_INTERLEAVE_MAX];
	struct ft_job_result out[FT_INTERLEAVE_MAX];
	int at[FT_INTERLEAVE_MAX], nr[FT_INTERLEAVE_MAX], n = 0;
	/* the job's samples, cap and warm-up; nobody leaves */
	struct ft_interleave_opts o = { .rounds = rounds, .warmup = -1 };
	struct run_ctx x = { w, timeout_ms };

	for (int i = 0; i < b->n; i++) {
		struct cand *c = &b->c[i];
		int rc;

		if (c->t.status != FT_ST_OK)
			continue;
		if ((rc = ft_pipeline_job(&c->cfg, &c->t, &jobs[n], err)) < 0)
			return -1;
		if (rc == 0)
			at[n++] = i;
	}
	if (swept ? n && sweep(w, timeout_ms, jobs, n, out, nr, err)
		  : ft_interleave(&o, jobs, n, run_job, &x, out, nr, NULL, err))
		return -1;
	for (int k = 0; k < n; k++) {
		struct cand *c = &b->c[at[k]];

		c->rounds = nr[k];
		ft_trial_take(&c->t, &out[k]);
	}
	return 0;
}

static void print_one_json(const struct bench *b, const struct cand *c, double fastest, int several)
{
	const struct ft_trial *t = &c->t;
	char shape_txt[FT_SHAPE_TEXT_MAX];

	printf("{\"arch\":\"%s\",\"device\":", b->arch->name);
	ft_json_string(stdout, b->device);
	printf(",\"shape\":\"%s\",\"dtype\":\"%s\",\"causal\":%d,\"config\":",
	       ft_shape_format(&b->shape, shape_txt, sizeof(shape_txt)), ft_dtype_name(b->shape.dtype),
	       b->shape.causal);
	ft_json_string(stdout, t->config);
	if (several) {
		printf(",\"space\":");
		ft_json_string(stdout, c->sp->name);
		printf(",\"from\":");
		ft_json_string(stdout, c->from);
	}
	printf(",\"status\":\"%s\",\"reason\":", ft_status_name(t->status));
	ft_json_string(stdout, t->reason);
	if (t->status == FT_ST_OK) {
		printf(",\"t_median_us\":%.4f,\"t_min_us\":%.4f,\"t_p90_us\":%.4f,\"spread\":%.4f,"
		       "\"rel_err\":%.4e,\"samples\":%d,\"launches_per_sample\":%lld",
		       t->t_median_us, t->t_min_us, t->t_p90_us, t->t_spread, t->rel_err, t->samples,
		       (long long)t->launches_per_sample);
		if (several)
			printf(",\"rounds\":%d,\"vs_fastest\":%.4f", c->rounds, t->t_median_us / fastest);
		printf("}\n");
	} else {
		printf(",\"t_median_us\":null}\n");
	}
}

static void print_one_text(const struct bench *b, const struct cand *c)
{
	const struct ft_trial *t = &c->t;
	char shape_txt[FT_SHAPE_TEXT_MAX];

	printf("%s %s %s%s on %s\n  config   %s\n  status   %s%s%s\n", b->arch->name,
	       ft_shape_format(&b->shape, shape_txt, sizeof(shape_txt)), ft_dtype_name(b->shape.dtype),
	       b->shape.causal ? " causal" : "", b->device, t->config, ft_status_name(t->status),
	       t->reason[0] ? ": " : "", t->reason);
	if (t->status == FT_ST_OK)
		printf("  median   %.2f us  (min %.2f, p90 %.2f, spread %.1f%%, %d samples x %lld calls)\n"
		       "  rel err  %.2e\n",
		       t->t_median_us, t->t_min_us, t->t_p90_us, 100 * t->t_spread, t->samples,
		       (long long)t->launches_per_sample, t->rel_err);
}

/* Several configs: a header line and one table row each, fastest first. */
static int print_table(const struct bench *b, double fastest, int rounds, int wide)
{
	static const char *const names[] = { "#", "median_us", "vs_fastest", "min_us", "p90_us",
					     "samples", "status", "space", "from", "config" };
	static const int types[] = { 1, 2, 2, 2, 2, 1, 3, 3, 3, 3 };
	struct ft_printer *p = ft_printer_new(stdout, FT_FMT_TABLE);
	char shape_txt[FT_SHAPE_TEXT_MAX];
	int order[FT_INTERLEAVE_MAX];

	if (!p)
		return -1;
	if (!wide) {
		ft_printer_scripts(p, "--json");
		ft_printer_narrow(p, NULL, FT_TABLE_WIDTH, stderr);
	}
	if (rounds > 0)
		printf("%s %s %s%s on %s: %d configs, timed interleaved in %d rounds\n", b->arch->name,
		       ft_shape_format(&b->shape, shape_txt, sizeof(shape_txt)),
		       ft_dtype_name(b->shape.dtype), b->shape.causal ? " causal" : "", b->device, b->n,
		       rounds);
	else
		printf("%s %s %s%s on %s: %d configs, timed in one sweep, one sample of each in turn\n",
		       b->arch->name, ft_shape_format(&b->shape, shape_txt, sizeof(shape_txt)),
		       ft_dtype_name(b->shape.dtype), b->shape.causal ? " causal" : "", b->device, b->n);
	for (int i = 0; i < b->n; i++)
		order[i] = i;
	for (int i = 1; i < b->n; i++) /* ok ones by median, the rest after them as given */
		for (int k = i; k > 0; k--) {
			const struct ft_trial *x = &b->c[order[k]].t, *y = &b->c[order[k - 1]].t;
			int xo = x->status == FT_ST_OK, yo = y->status == FT_ST_OK;

			if (!(xo && (!yo || x->t_median_us < y->t_median_us)))
				break;
			int s = order[k];
			order[k] = order[k - 1];
			order[k - 1] = s;
		}
	for (int k = 0; k < b->n; k++) {
		const struct cand *c = &b->c[order[k]];
		const struct ft_trial *t = &c->t;
		int ok = t->status == FT_ST_OK;
		char v[6][32], status[600];
		const char *vals[10];

		snprintf(v[0], sizeof(v[0]), "%d", order[k] + 1);
		snprintf(v[1], sizeof(v[1]), "%.4f", t->t_median_us);
		snprintf(v[2], sizeof(v[2]), "%.4f", t->t_median_us / fastest);
		snprintf(v[3], sizeof(v[3]), "%.4f", t->t_min_us);
		snprintf(v[4], sizeof(v[4]), "%.4f", t->t_p90_us);
		snprintf(v[5], sizeof(v[5]), "%d", t->samples);
		snprintf(status, sizeof(status), "%s%s%s", ft_status_name(t->status), t->reason[0] ? ": " : "",
			 t->reason);
		vals[0] = v[0];
		for (int i = 1; i < 6; i++)
			vals[i] = ok ? v[i] : NULL;
		vals[6] = status;
		vals[7] = c->sp->name;
		vals[8] = c->from;
		vals[9] = t->config;
		if (ft_printer_row(p, 10, names, vals, types)) {
			ft_printer_finish(p);
			return -1;
		}
	}
	return ft_printer_finish(p) < 0 ? -1 : 0;
}

static void bench_free(struct bench *b)
{
	for (int i = 0; i < b->n; i++)
		if (b->c[i].own)
			free(b->c[i].sp);
	free(b->sp);
}

int cmd_bench(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"bench", "fatune bench --shape BxHxSxD (--config 'NAME=V,...' | --best | --best-from DB)... [options]",
		"Verify and time configs on the GPU with the same method as search: the median of\n"
		"R samples, each one CUDA-graph replay of K back-to-back calls divided by K. Several\n"
		"configs are verified, then timed interleaved in rounds on one worker, and compared.",
		"--best takes the stored best config of the shape for this GPU from the database: the\n"
		"fastest across the spaces searched (its own space file is loaded), or --space's;\n"
		"--best-from DB the same from another database. --config, --best and --best-from\n"
		"combine and repeat: e.g. --best-from tuned.db --config 'TILE_M=64,...' times the\n"
		"tuned best against a hand-picked config, both in --rounds rounds (default 10) of\n"
		"R / rounds samples each, each round starting with the next config; with --sweep, in\n"
		"one worker job that takes one sample of each config in turn (as the search's final\n"
		"does), so a clock drift falls on all alike within a few samples. They are numbered\n"
		"--config ones first, then --best, then --best-from, each in the order given.\n"
		"Exit 0 when every config is ok, 1 when one is not (each row says why)."
	};
	struct bench b = { 0 };
	struct ft_target_opts *o = &b.o;
	struct ft_strlist configs = { 0 }, best_from = { 0 };
	const char *timing = "warm", *runner = NULL;
	long long seed = 1234, samples = 30, launches = 20, timeout_s = 10, rounds = 0;
	int best = 0, json = 0, wide = 0, swept = 0, npos, rc;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(o), FT_SPACE_OPTION(o), FT_DB_OPTION(o),
		FT_OPT_LIST_("config", 0, &configs, "CONFIG", "a config, e.g. 'TILE_M=64,TILE_N=64,...' (in --space's space)"),
		FT_OPT_FLAG_("best", 0, &best, "the stored best config of this shape and GPU (in --db)"),
		FT_OPT_LIST_("best-from", 0, &best_from, "DB", "the stored best config of this shape and GPU in database DB"),
		FT_OPT_STR_("timing", 0, &timing, "warm|cold", "warm L2 (default) or flush L2 before each call"),
		FT_OPT_INT_("samples", 0, &samples, "R", "timed samples per config (default 30; fewer, at least 5, when they would take over 1 s)", 1, 10000),
		FT_OPT_INT_("launches", 0, &launches, "K", "calls per sample in one CUDA graph (default 20; fewer when K calls would take over 20 ms)", 1, 1000),
		FT_OPT_INT_("rounds", 0, &rounds, "N", "interleaved rounds the samples are split into (default 1 for one config, 10 for several)", 1, FT_INTERLEAVE_MAX_ROUNDS),
		FT_OPT_FLAG_("sweep", 0, &swept, "several configs: time them in one job, one sample of each in turn (warm timing, at most 64 samples, no --rounds)"),
		FT_OPT_INT_("seed", 0, &seed, "N", "input seed (default 1234)", 0, 9e18),
		FT_OPT_INT_("timeout", 0, &timeout_s, "SECONDS", "watchdog (default 10; raised to 3x the time its first call predicts, at most 300)", 1, 3600),
		FT_OPT_STR_("runner", 0, &runner, "NAME[:ARG]", "what evaluates: gpu (default) or another runner of the table (needs --arch)"),
		FT_OPT_FLAG_("json", 0, &json, "print JSON (one line per config)"),
		FT_OPT_FLAG_("wide", 0, &wide, "several configs: the table's columns in full (default: within 120 characters)"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_runner *w = NULL;
	struct ft_device_info dev = { 0 };
	struct ft_job job;
	double fastest = NAN;
	int status = FT_OK, several;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (!configs.n && !best && !best_from.n) {
		ft_error(&err, FT_EINPUT, "fatune bench: give a config: --config 'NAME=V,...', --best or --best-from DB");
		return ft_report(&err);
	}
	several = configs.n + best + best_from.n > 1;
	if (swept && (!several || rounds || samples > FT_RAW_SAMPLES_MAX || strcmp(timing, "warm"))) {
		ft_error(&err, FT_EINPUT,
			 "fatune bench: --sweep times several configs, warm, in at most %d samples, without --rounds",
			 FT_RAW_SAMPLES_MAX);
		return ft_report(&err);
	}
	if (!rounds && !swept)
		rounds = several ? BENCH_ROUNDS : 1;
	if (ft_cmd_timing("bench", timing, &err) || ft_target_shape("bench", o, &b.shape, &err))
		goto fail;
	for (int i = 0; i < configs.n; i++) /* bad input before a worker starts */
		if (add_config(&b, configs.v[i], &err))
			goto fail;
	if (runner) {
		struct ft_runner_cfg rcfg = { .device = -1 };

		if (!o->arch) {
			ft_error(&err, FT_EINPUT, "fatune bench: --runner %s needs --arch (no GPU is asked)", runner);
			goto fail;
		}
		if (!(b.arch = ft_arch_find(o->arch, &err)))
			goto fail;
		rcfg.arch = b.arch->name;
		rcfg.shape = &b.shape;
		if (ft_runner_open(&w, runner, &rcfg, &err)) {
			ft_err_prefix(&err, "fatune bench: --runner");
			goto fail;
		}
		if (!ft_runner_evaluates(w)) {
			ft_error(&err, FT_EINPUT, "fatune bench: --runner %s evaluates no job", runner);
			goto fail;
		}
		b.device = ft_runner_info(w)->device;
	} else {
		if (ft_cmd_runner(&w, &dev, &err) || ft_cmd_arch("bench", o->arch, &dev, &b.arch, &err))
			goto fail;
		if (!dev.present || dev.lim.cc != b.arch->cc) {
			ft_error(&err, FT_EFAIL, "fatune bench: timing %s needs an %s GPU (%s)", b.arch->name,
				 b.arch->name, dev.present ? dev.lim.name : dev.why_not);
			goto fail;
		}
		b.device = dev.lim.name;
	}
	if (best && add_best(&b, ft_db_path(o), &err))
		goto fail;
	for (int i = 0; i < best_from.n; i++)
		if (add_best(&b, best_from.v[i], &err))
			goto fail;

	ft_job_timing_defaults(&job);
	job.seed = (unsigned long long)seed;
	job.tolerance = ft_tolerance(b.shape.dtype);
	job.samples = (int)samples;
	job.launches_per_sample = (int)launches;
	job.cold = !strcmp(timing, "cold");
	/* one config: verified and timed in one job (in rounds when asked);
	 * several: verified each, then timed interleaved */
	for (int i = 0; i < b.n; i++)
		if (run_one(&b, &b.c[i], &w, &job, (int)(timeout_s * 1000), dev.lim.sm_count,
			    !several && rounds == 1, &err))
			goto fail;
	if ((several || rounds > 1) &&
	    interleave(&b, w, (int)(timeout_s * 1000), (int)rounds, swept, &err))
		goto fail;
	for (int i = 0; i < b.n; i++) {
		const struct ft_trial *t = &b.c[i].t;

		if (t->status != FT_ST_OK)
			status = FT_EFAIL;
		else if (isnan(fastest) || t->t_median_us < fastest)
			fastest = t->t_median_us;
	}
	if (json)
		for (int i = 0; i < b.n; i++)
			print_one_json(&b, &b.c[i], fastest, several);
	else if (!several)
		print_one_text(&b, &b.c[0]);
	else if (print_table(&b, fastest, (int)rounds, wide) &&
		 ft_error(&err, FT_EFAIL, "fatune bench: writing the table failed"))
		status = ft_report(&err);
	ft_runner_close(w);
	bench_free(&b);
	return status;
fail:
	ft_runner_close(w);
	bench_free(&b);
	return ft_report(&err);
}
