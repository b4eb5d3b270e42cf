/* runner_gpu.c - the `gpu` runner: one worker process on one GPU (run/worker.c) behind the
 * runner interface (run/runner.h). The worker resolves each job's CUBIN key through the CUBIN
 * cache of this host (run/evaluate.c), verifies and times; a fault or a hang is the
 * candidate's verdict and the next job gets a fresh worker. Runners opened on one GPU take
 * turns: a job runs only while no other job runs on its GPU (one lock per ordinal), so that
 * units side by side on one GPU never time at once; the wait is the job's FT_PH_SHARED. A
 * runner that holds its GPU (hold 1, the race's final) keeps the lock between its jobs. */
#include "base/clock.h"
#include "run/runner.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/worker.h"

/* GPU ordinals fatune accepts (--devices: 0..1023) */
#define ORDINALS 1024

static pthread_mutex_t turn[ORDINALS];
static pthread_once_t turn_once = PTHREAD_ONCE_INIT;

static void turn_init(void)
{
	for (int i = 0; i < ORDINALS; i++)
		pthread_mutex_init(&turn[i], NULL);
}

struct gpu {
	struct ft_worker *w;
	int ordinal;			/* -1: no GPU here (evaluates nothing) */
	int holding;			/* 1: this runner holds turn[ordinal] between jobs */
};

/* Takes the GPU's turn: the ms waited, 0 when no other runner's job held it. */
static double take_turn(int ordinal)
{
	double t0;

	if (!pthread_mutex_trylock(&turn[ordinal]))
		return 0;
	t0 = ft_mono_ms();
	pthread_mutex_lock(&turn[ordinal]);
	return ft_mono_ms() - t0;
}

static int gpu_open(void **ctx, const struct ft_runner_cfg *cfg, struct ft_runner_info *info,
		    struct ft_err *err)
{
	struct gpu *g = calloc(1, sizeof(*g));

	if (!g)
		return ft_error(err, FT_EFAIL, "out of memory opening the gpu runner");
	pthread_once(&turn_once, turn_init);
	g->ordinal = -1;
	if (ft_worker_start(&g->w, cfg->reference_path, cfg->device, cfg->start_timeout_ms, &info->dev,
			    err)) {
		free(g);
		return -1;
	}
	info->measured = 1;
	info->needs_cubin = 1;
	info->search_tag = "no";
	if (info->dev.present) {
		snprintf(info->device, sizeof(info->device), "%s", info->dev.lim.name);
		info->device_index = info->dev.lim.ordinal;
		info->cc = info->dev.lim.cc;
		info->sm_count = info->dev.lim.sm_count;
		if (info->dev.lim.ordinal >= 0 && info->dev.lim.ordinal < ORDINALS)
			g->ordinal = info->dev.lim.ordinal;
	}
	*ctx = g;
	return 0;
}

/* A job's turn on the GPU: taken unless there is no GPU or this runner
 * holds it already (*taken says which, for job_turn_end); the ms waited. */
static double job_turn(struct gpu *g, int *taken)
{
	*taken = g->ordinal >= 0 && !g->holding;
	return *taken ? take_turn(g->ordinal) : 0;
}

static void job_turn_end(struct gpu *g, int taken)
{
	if (taken)
		pthread_mutex_unlock(&turn[g->ordinal]);
}

static int gpu_evaluate(void *ctx, const struct ft_job *job, int timeout_ms, struct ft_job_result *res,
			struct ft_err *err)
{
	struct gpu *g = ctx;
	int taken, rc;
	double waited = job_turn(g, &taken);

	rc = ft_worker_run(g->w, job, timeout_ms, res, err);
	job_turn_end(g, taken);
	res->phase_ms[FT_PH_SHARED] += waited;
	return rc;
}

static int gpu_sweep(void *ctx, const struct ft_sweep *sw, int timeout_ms,
		     struct ft_sweep_result *out, struct ft_err *err)
{
	struct gpu *g = ctx;
	int taken, rc;
	double waited = job_turn(g, &taken);

	rc = ft_worker_sweep(g->w, sw, timeout_ms, out, err);
	job_turn_end(g, taken);
	out->res[0].phase_ms[FT_PH_SHARED] += waited;
	return rc;
}

static double gpu_hold(void *ctx, int on)
{
	struct gpu *g = ctx;
	double waited = 0;

	if (g->ordinal < 0 || g->holding == !!on)
		return 0;
	if (on)
		waited = take_turn(g->ordinal);
	else
		pthread_mutex_unlock(&turn[g->ordinal]);
	g->holding = !!on;
	return waited;
}

static void gpu_end(void *ctx, int wait)
{
	struct gpu *g = ctx;

	if (!g)
		return;
	gpu_hold(g, 0);
	if (wait)
		ft_worker_stop(g->w);
	else
		ft_worker_leave(g->w);
	free(g);
}

static void gpu_close(void *ctx)
{
	gpu_end(ctx, 1);
}

static void gpu_leave(void *ctx)
{
	gpu_end(ctx, 0);
}

const struct ft_runner_ops ft_runner_gpu = {
	.name = "gpu",
	.summary = "a worker process on one GPU: verified and timed there",
	.open = gpu_open,
	.evaluate = gpu_evaluate,
	.sweep = gpu_sweep,
	.hold = gpu_hold,
	.close = gpu_close,
	.leave = gpu_leave,
};
