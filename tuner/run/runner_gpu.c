/* runner_gpu.c - the `gpu` runner: one worker process on one GPU (run/worker.c) behind the
 * runner interface (run/runner.h). The worker resolves each job's CUBIN key through the CUBIN
 * cache of this host (run/evaluate.c), verifies and times; a fault or a hang is the
 * candidate's verdict and the next job gets a fresh worker. */
#include "run/runner.h"

#include <stdio.h>
#include <string.h>

#include "run/worker.h"

static int gpu_open(void **ctx, const struct ft_runner_cfg *cfg, struct ft_runner_info *info,
		    struct ft_err *err)
{
	struct ft_worker *w = NULL;

	if (ft_worker_start(&w, cfg->reference_path, cfg->device, cfg->start_timeout_ms, &info->dev,
			    err))
		return -1;
	info->measured = 1;
	info->needs_cubin = 1;
	info->search_tag = "no";
	if (info->dev.present) {
		snprintf(info->device, sizeof(info->device), "%s", info->dev.lim.name);
		info->device_index = info->dev.lim.ordinal;
		info->cc = info->dev.lim.cc;
		info->sm_count = info->dev.lim.sm_count;
	}
	*ctx = w;
	return 0;
}

static int gpu_evaluate(void *ctx, const struct ft_job *job, int timeout_ms, struct ft_job_result *res,
			struct ft_err *err)
{
	return ft_worker_run(ctx, job, timeout_ms, res, err);
}

static void gpu_close(void *ctx)
{
	ft_worker_stop(ctx);
}

const struct ft_runner_ops ft_runner_gpu = {
	.name = "gpu",
	.summary = "a worker process on one GPU: verified and timed there",
	.open = gpu_open,
	.evaluate = gpu_evaluate,
	.close = gpu_close,
};
