/* runner_fake.c - the `fake` runner, for tests: made-up, deterministic verdicts and times per
 * config, with one chosen config fast but wrong (run/runner.h).
 *
 * `fatune search --arch sm_90 --runner fake[:NAME=V,...]` runs the whole pipeline (strategy,
 * racing, storing, the race's final) with no GPU and no compile. Each config's time is
 * 10..100 us from a hash of its text and the job's seed (the same config, seed and job
 * give the same samples, 0.1 % apart); every config is ok, except the one(s) holding every
 * NAME=V of the spec: wrong_result, with the fastest time of all (1 us) reported next to
 * the verdict, as a runner that timed a wrong kernel might. It checks the runner contract
 * from the other side: each job must name its CUBIN by a 16-hex-digit content key (the
 * pipeline computes it even when nothing is compiled), else fatune failed. Its times are
 * not measurements (info.measured 0: stored as replayed).
 *
 * Two spec items starting with '@' (no parameter name does) configure the
 * fake instead of naming the wrong config, for measuring the CPU side with no
 * GPU: `@cubin` makes it a runner that loads CUBINs (info.needs_cubin 1: every
 * candidate is compiled by NVRTC, which runs without a GPU, and each job's
 * CUBIN must be in the cache), `@ms=N` (0..1000) makes each evaluation take N
 * ms, a stand-in for the GPU's time, and `@tie` times every job that neither
 * races nor ends when stable (the race's final; every job with --race off)
 * at 5 us for every ok config, under any other time: finalists that the race
 * ranked apart tie exactly in the final and win, as a GPU's timer steps make
 * them tie on 5 us kernels. `@drift=P` (0..100) makes the fake a GPU whose
 * clocks fall as it runs: each timed job's times are P % of the base longer
 * than the one before on that runner (one runner, one GPU), for testing the
 * race's anchor (search/race.h) end to end. `@scale=N` (1..1000) makes every ok
 * config's time N times longer (10N..100N us): heavy kernels, whose race final is
 * heated and widened (search/race.h FT_RACE_HEAT_MIN_US); a job's heat is
 * reported as its warm-up phase, as the GPU worker's is. A sweep (the race's
 * final, run/sweep.h) is emulated with a job per sample, in the worker's
 * order; `@nosweep` makes every sweep fail instead, as a worker that died in
 * it would, so that the rounds time the final.
 * E.g. fake:@cubin,@ms=30,BLOCK_M=64.
 */
#include "run/runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile/cache.h"
#include "run/sampling.h"

#define FAKE_WRONG_US 1.0
#define FAKE_TIE_US 5.0

struct fake {
	char wrong[FT_CONFIG_MAX + 2];	/* ",NAME=V,...," or "" */
	int cubin;			/* @cubin: jobs load a compiled CUBIN */
	int ms;				/* @ms=N: each evaluation takes this long */
	int tie;			/* @tie: jobs with no quick pass take FAKE_TIE_US */
	int drift;			/* @drift=P: each timed job P % slower than the last */
	int scale;			/* @scale=N: ok configs' times N x (0: 1) */
	int nosweep;			/* @nosweep: every sweep fails */
	long long timed;		/* timed jobs so far (one runner: one thread) */
};

/* 1 when the config holds every NAME=V item of f->wrong. */
static int is_wrong(const struct fake *f, const char *config)
{
	char padded[FT_CONFIG_MAX + 2], item[FT_CONFIG_MAX + 2];
	const char *p = f->wrong + 1;

	if (!f->wrong[0])
		return 0;
	snprintf(padded, sizeof(padded), ",%s,", config);
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n) {
			snprintf(item, sizeof(item), ",%.*s,", (int)n, p);
			if (!strstr(padded, item))
				return 0;
		}
		p += n + (p[n] == ',');
	}
	return 1;
}

/* The integer of a spec item `@NAME=V` (p, n long; its value from p + skip)
 * into *out; an FT_EINPUT error quoting the item and `usage` when it is not
 * 0..max. */
static int int_item(const char *p, size_t n, size_t skip, long min, long max, const char *usage,
		    int *out, struct ft_err *err)
{
	char *end;
	long v = strtol(p + skip, &end, 10);

	if (end != p + n || v < min || v > max)
		return ft_error(err, FT_EINPUT, "bad fake runner item '%.*s': %s", (int)n, p, usage);
	*out = (int)v;
	return 0;
}

static int fake_open(void **ctx, const struct ft_runner_cfg *cfg, struct ft_runner_info *info,
		     struct ft_err *err)
{
	const char *spec = cfg->spec ? cfg->spec : "";
	struct fake *f;

	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		if (*p != '@' && (!eq || eq == p || eq == p + n - 1))
			return ft_error(err, FT_EINPUT,
					"bad fake runner spec '%.200s': use fake:NAME=V,... (the config to make fast but wrong)",
					spec);
		p += n + (p[n] == ',');
	}
	if (strlen(spec) >= FT_CONFIG_MAX)
		return ft_error(err, FT_EINPUT, "fake runner spec is over %d characters", FT_CONFIG_MAX - 1);
	if (!(f = calloc(1, sizeof(*f))))
		return ft_error(err, FT_EFAIL, "out of memory opening the fake runner");
	/* the '@' items configure the fake; the rest name the wrong config */
	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");

		if (n == 6 && !strncmp(p, "@cubin", 6)) {
			f->cubin = 1;
		} else if (n == 4 && !strncmp(p, "@tie", 4)) {
			f->tie = 1;
		} else if (n == 8 && !strncmp(p, "@nosweep", 8)) {
			f->nosweep = 1;
		} else if (n > 4 && !strncmp(p, "@ms=", 4)) {
			if (int_item(p, n, 4, 0, 1000, "@ms=N takes 0..1000 ms per evaluation", &f->ms, err))
				goto bad;
		} else if (n > 7 && !strncmp(p, "@drift=", 7)) {
			if (int_item(p, n, 7, 0, 100, "@drift=P takes 0..100 % per timed job", &f->drift, err))
				goto bad;
		} else if (n > 7 && !strncmp(p, "@scale=", 7)) {
			if (int_item(p, n, 7, 1, 1000, "@scale=N takes 1..1000 (times N x longer)", &f->scale, err))
				goto bad;
		} else if (*p == '@') {
			ft_error(err, FT_EINPUT, "unknown fake runner item '%.*s': use @cubin, @tie, @nosweep, @ms=N, @drift=P or @scale=N",
				 (int)n, p);
			goto bad;
		} else {
			size_t l = strlen(f->wrong);
			snprintf(f->wrong + l, sizeof(f->wrong) - l, "%s%.*s,", l ? "" : ",", (int)n, p);
		}
		p += n + (p[n] == ',');
	}
	snprintf(info->device, sizeof(info->device), "fake");
	info->measured = 0;
	info->needs_cubin = f->cubin;
	info->search_tag = "fake";
	*ctx = f;
	return 0;
bad:
	free(f);
	return -1;
}

/* FNV-1a of the config text, mixed with the seed. */
static unsigned long long config_hash(const char *config, unsigned long long seed)
{
	unsigned long long h = 1469598103934665603ull ^ seed;

	for (const unsigned char *p = (const unsigned char *)config; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h ^ (h >> 29);
}

static int fake_evaluate(void *ctx, const struct ft_job *job, int timeout_ms, struct ft_job_result *res,
			 struct ft_err *err)
{
	struct fake *f = ctx;
	int wrong = is_wrong(f, job->config);
	double base = wrong ? FAKE_WRONG_US
			    : f->tie && job->timing && job->quick_samples <= 0 && job->stable_rel <= 0 ? FAKE_TIE_US
				      : 10.0 + (double)(config_hash(job->config, job->seed) % 9001) / 100.0;
	int n = job->samples > 0 ? job->samples : 1;

	(void)timeout_ms;
	if (!ft_cache_key_ok(job->cubin_key))
		return ft_error(err, FT_EFAIL, "fake runner: the job of '%.200s' names no CUBIN key ('%.16s')",
				job->config, job->cubin_key);
	if (f->cubin) {
		struct ft_resources r[2];

		if (!ft_cache_lookup(job->cubin_key, r))
			return ft_error(err, FT_EFAIL, "fake runner: the CUBIN of '%.200s' (%.16s) is not in the cache",
					job->config, job->cubin_key);
	}
	if (f->ms > 0) {
		struct timespec ts = { f->ms / 1000, (long)(f->ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	res->status = wrong ? FT_ST_WRONG_RESULT : FT_ST_OK;
	res->rel_err = wrong ? 0.5 : 1e-4;
	res->max_abs_err = wrong ? 1.0 : 1e-3;
	if (wrong)
		snprintf(res->reason, sizeof(res->reason),
			 "fake: wrong by design (it holds the spec), rel err 5.00e-01 over tolerance");
	if (!job->timing)
		return 0;
	/* a GPU slowing as it runs: this job's times drift x the timed jobs before it */
	base *= 1.0 + f->drift / 100.0 * (double)f->timed++;
	if (!wrong && f->scale > 1)
		base *= f->scale;
	res->phase_ms[FT_PH_WARMUP] += job->heat_ms;	/* the heat asked for, as the worker counts it */
	/* samples base * (1 + i/1000), ended early as the GPU worker would
	 * (run/sampling.h): min base, median and p90 from the sorted list */
	res->launches_per_sample = job->launches_per_sample > 0 ? job->launches_per_sample : 1;
	{
		double us[FT_RAW_SAMPLES_MAX];
		int taken = 0;

		for (int i = 0; i < n; i++) {
			double t = base * (1.0 + i / 1000.0);
			/* the samples' made-up GPU time as the job's phases, so the
			 * search's phases.worker is exercised (quick and full apart) */
			res->phase_ms[i < job->quick_samples ? FT_PH_QUICK : FT_PH_SAMPLES] +=
				t * res->launches_per_sample / 1e3;
			taken = i + 1;
			if (i < FT_RAW_SAMPLES_MAX) {
				us[i] = t;
				if ((res->stop = (int)ft_samples_stop(job, us, taken)) != FT_SAMPLES_ALL)
					break;
			}
		}
		n = taken;
	}
	res->samples = n;
	res->nraw = n <= FT_RAW_SAMPLES_MAX ? n : 0;
	for (int i = 0; i < res->nraw; i++)
		res->raw_us[i] = (float)(base * (1.0 + i / 1000.0));
	res->t_min_us = base;
	res->t_median_us = base * (1.0 + (n - 1) / 2 / 1000.0);
	res->t_p90_us = base * (1.0 + floor(0.9 * (n - 1)) / 1000.0);
	res->t_spread = (res->t_p90_us - res->t_min_us) / res->t_median_us;
	res->phase_ms[FT_PH_JOB] = res->phase_ms[FT_PH_QUICK] + res->phase_ms[FT_PH_SAMPLES];
	return 0;
}

/* A job of the emulated sweep: fake_evaluate with no watchdog to pass on */
static int fake_sweep_job(void *ctx, const struct ft_job *job, struct ft_job_result *res,
			  struct ft_err *err)
{
	return fake_evaluate(ctx, job, 0, res, err);
}

static int fake_sweep(void *ctx, const struct ft_sweep *g, int timeout_ms, struct ft_sweep_result *out,
		      struct ft_err *err)
{
	struct fake *f = ctx;

	(void)timeout_ms;
	if (f->nosweep) {
		memset(out, 0, sizeof(*out));
		ft_sweep_fail(out, "fake: @nosweep");
		return 0;
	}
	return ft_sweep_by_jobs(g, fake_sweep_job, f, out, err);
}

static void fake_close(void *ctx)
{
	free(ctx);
}

const struct ft_runner_ops ft_runner_fake = {
	.name = "fake",
	.summary = "tests: made-up times per config, one chosen config fast but wrong",
	.open = fake_open,
	.evaluate = fake_evaluate,
	.sweep = fake_sweep,
	.close = fake_close,
};
