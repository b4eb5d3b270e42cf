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
 */
#include "run/runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/cache.h"

#define FAKE_WRONG_US 1.0

struct fake {
	char wrong[FT_CONFIG_MAX + 2];	/* ",NAME=V,...," or "" */
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

static int fake_open(void **ctx, const struct ft_runner_cfg *cfg, struct ft_runner_info *info,
		     struct ft_err *err)
{
	const char *spec = cfg->spec ? cfg->spec : "";
	struct fake *f;

	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		if (!eq || eq == p || eq == p + n - 1)
			return ft_error(err, FT_EINPUT,
					"bad fake runner spec '%.200s': use fake:NAME=V,... (the config to make fast but wrong)",
					spec);
		p += n + (p[n] == ',');
	}
	if (strlen(spec) >= FT_CONFIG_MAX)
		return ft_error(err, FT_EINPUT, "fake runner spec is over %d characters", FT_CONFIG_MAX - 1);
	if (!(f = calloc(1, sizeof(*f))))
		return ft_error(err, FT_EFAIL, "out of memory opening the fake runner");
	if (spec[0])
		snprintf(f->wrong, sizeof(f->wrong), ",%s,", spec);
	snprintf(info->device, sizeof(info->device), "fake");
	info->measured = 0;
	info->needs_cubin = 0;
	info->search_tag = "fake";
	*ctx = f;
	return 0;
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
	const struct fake *f = ctx;
	int wrong = is_wrong(f, job->config);
	double base = wrong ? FAKE_WRONG_US : 10.0 + (double)(config_hash(job->config, job->seed) % 9001) / 100.0;
	int n = job->samples > 0 ? job->samples : 1;

	(void)timeout_ms;
	if (!ft_cache_key_ok(job->cubin_key))
		return ft_error(err, FT_EFAIL, "fake runner: the job of '%.200s' names no CUBIN key ('%.16s')",
				job->config, job->cubin_key);
	res->status = wrong ? FT_ST_WRONG_RESULT : FT_ST_OK;
	res->rel_err = wrong ? 0.5 : 1e-4;
	res->max_abs_err = wrong ? 1.0 : 1e-3;
	if (wrong)
		snprintf(res->reason, sizeof(res->reason),
			 "fake: wrong by design (it holds the spec), rel err 5.00e-01 over tolerance");
	if (!job->timing)
		return 0;
	/* samples base * (1 + i/1000): min base, median and p90 from the sorted list */
	res->samples = n;
	res->launches_per_sample = job->launches_per_sample > 0 ? job->launches_per_sample : 1;
	res->nraw = n <= FT_RAW_SAMPLES_MAX ? n : 0;
	for (int i = 0; i < res->nraw; i++)
		res->raw_us[i] = (float)(base * (1.0 + i / 1000.0));
	res->t_min_us = base;
	res->t_median_us = base * (1.0 + (n - 1) / 2 / 1000.0);
	res->t_p90_us = base * (1.0 + floor(0.9 * (n - 1)) / 1000.0);
	res->t_spread = (res->t_p90_us - res->t_min_us) / res->t_median_us;
	/* the samples' made-up GPU time as the job's phases, so the search's
	 * phases.worker is exercised (quick and full apart) without a GPU */
	for (int i = 0; i < n; i++)
		res->phase_ms[FT_PH_SAMPLES] += base * (1.0 + i / 1000.0) * res->launches_per_sample / 1e3;
	res->phase_ms[FT_PH_JOB] = res->phase_ms[FT_PH_SAMPLES];
	return 0;
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
	.close = fake_close,
};
