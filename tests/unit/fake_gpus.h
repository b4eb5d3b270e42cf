/* fake_gpus.h - fake GPU workers for the tests of several GPUs (no GPU needed).
 *
 * A test binary that includes this calls fake_gpus_main(argc, argv) first in
 * main: run again as `BINARY --fake-worker MODE` (see fake_gpus_use), it
 * serves the real worker protocol through ft_worker_serve. Each fake reports
 * the ordinal it was started for and a model by ordinal: 0 and 1 "fake H200"
 * and 2 "fake H100" (both sm_90), 3 "fake L40S" (sm_89); 4 devices in all.
 * A job answers ok after FAKE_JOB_MS (MODE "fast": FAKE_FAST_MS) with time
 * 10 + ordinal us; in MODE "hang0" the fake of GPU 0 never answers (its
 * watchdog must act); in MODE "slowstart" each fake takes FAKE_START_MS to
 * say hello (a real worker's start: driver and context); in MODE "absent1"
 * the fake of GPU 1 reports no device. MODE "race"
 * answers after FAKE_RACE_MS by the candidate's grid[0], from $FAKE_RACE: "G=T,G=Tw,..." gives the candidate
 * of grid[0] G samples of T us (w: a wrong result, however fast), with the
 * raw samples a real worker sends back, as many as it would take. With
 * $FAKE_JOBS_LOG, each job of the other modes appends "ORDINAL START END"
 * (ft_mono_ms: CLOCK_MONOTONIC, one clock for every process of the host)
 * to that file when it ends.
 */
#ifndef FAKE_GPUS_H
#define FAKE_GPUS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "run/evaluate.h"
#include "run/sampling.h"
#include "run/verify.h"
#include "run/worker.h"

/* Each fake job takes this long: long enough that a second candidate, ready
 * at the same time, reaches the GPUs while the first GPU is still busy. */
#define FAKE_JOB_MS 3000
#define FAKE_FAST_MS 100
#define FAKE_RACE_MS 5
#define FAKE_START_MS 500

static int fake_ordinal;

static void fake_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int fake_open(void *ctx, const char *ref, int device, struct ft_device_info *info,
		     struct ft_err *err)
{
	static const char *const names[] = { "fake H200", "fake H200", "fake H100", "fake L40S" };

	(void)ref, (void)err;
	if (!strcmp(ctx, "slowstart"))
		fake_sleep_ms(FAKE_START_MS);
	fake_ordinal = device < 0 ? 0 : device;
	if (!strcmp(ctx, "absent1") && fake_ordinal == 1) {
		snprintf(info->why_not, sizeof(info->why_not), "fake: GPU 1 is gone");
		return 0;
	}
	info->present = 1;
	info->driver_version = 13000;
	info->lim.cc = fake_ordinal == 3 ? 89 : 90;
	info->lim.ordinal = fake_ordinal;
	info->lim.device_count = 4;
	info->lim.sm_count = 132;
	snprintf(info->lim.name, sizeof(info->lim.name), "%s", names[fake_ordinal % 4]);
	return 0;
}

/* MODE "race": the verdict of job's candidate from $FAKE_RACE. */
static int fake_race(const struct ft_job *job, struct ft_job_result *res)
{
	const char *map = getenv("FAKE_RACE");
	long long g;
	double us = 0;
	int wrong = 0, n = 0;

	while (map && sscanf(map, "%lld=%lf%n", &g, &us, &n) == 2) {
		map += n;
		wrong = *map == 'w';
		if (g == job->grid[0])
			break;
		us = 0;
		map = strchr(map, ',');
		map = map ? map + 1 : NULL;
	}
	fake_sleep_ms(FAKE_RACE_MS);
	ft_job_result_init(res);
	n = 0;
	if (!(us > 0) || wrong) {
		res->status = FT_ST_WRONG_RESULT;
		snprintf(res->reason, sizeof(res->reason), "fake: wrong (grid %lld)", job->grid[0]);
		res->rel_err = 0.5;
		return 0;
	}
	res->status = FT_ST_OK;
	res->rel_err = job->tolerance / 2;
	/* the samples end where a real worker's would (run/sampling.h) */
	{
		double s[FT_RAW_SAMPLES_MAX];

		while (n < job->samples && n < FT_RAW_SAMPLES_MAX) {
			s[n] = us;
			if ((res->stop = (int)ft_samples_stop(job, s, ++n)) != FT_SAMPLES_ALL)
				break;
		}
	}
	res->samples = n;
	res->launches_per_sample = 20;
	res->nraw = n;
	for (int i = 0; i < res->nraw; i++)
		res->raw_us[i] = (float)us;
	res->t_median_us = res->t_min_us = res->t_p90_us = us;
	res->t_spread = 0;
	res->verify_ms = 0.5;
	res->time_ms = 1.0;
	return 0;
}

static int fake_run(void *ctx, const struct ft_job *job, struct ft_job_result *res)
{
	const char *mode = ctx;
	double t0;
	FILE *f;

	if (!strcmp(mode, "race"))
		return fake_race(job, res);
	if (!strcmp(mode, "hang0") && fake_ordinal == 0)
		for (;;)
			fake_sleep_ms(1000);
	t0 = ft_mono_ms();
	fake_sleep_ms(strcmp(mode, "fast") ? FAKE_JOB_MS : FAKE_FAST_MS);
	if (getenv("FAKE_JOBS_LOG") && (f = fopen(getenv("FAKE_JOBS_LOG"), "a"))) {
		fprintf(f, "%d %.3f %.3f\n", fake_ordinal, t0, ft_mono_ms());
		fclose(f);
	}
	res->status = FT_ST_OK;
	res->rel_err = job->tolerance / 2;
	res->t_median_us = 10.0 + fake_ordinal;
	res->samples = 1;
	return 0;
}

/* In main, first: returns -1 unless this process is a fake worker (then its exit code). */
static int fake_gpus_main(int argc, char **argv)
{
	struct ft_worker_backend be = { .open = fake_open, .run = fake_run };

	if (argc < 3 || strcmp(argv[1], "--fake-worker"))
		return -1;
	be.ctx = argv[2];
	return ft_worker_serve(0, 1, &be);
}

/* Workers started from now on are fakes in `mode` (NULL: the real worker again). */
static void fake_gpus_use(const char *mode)
{
	static char *cmd[4] = { "/proc/self/exe", "--fake-worker", "ok", NULL };

	cmd[2] = (char *)mode;
	ft_worker_set_command(mode ? cmd : NULL);
}

#endif
