/* worker_main.c - `fatune __worker`: the worker process, serving jobs with the GPU evaluator.
 *
 * The protocol is worker.c's (ft_worker_serve); this file plugs the real
 * backend into it - the driver (gpu.c) and the evaluator (evaluate.c) - so
 * that the protocol knows nothing of the evaluator and tests serve fake
 * backends over the same code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "config.h"
#include "run/evaluate.h"
#include "run/gpu.h"
#include "run/worker.h"

/* The real backend: the GPU through gpu.c and evaluate.c. */
struct gpu_backend {
	struct ft_gpu *gpu;
	struct ft_eval *ev;
	double start_ms;	/* the start's wall time, until a job reports it */
	double inputs_ms;	/* the job's preparation (inputs, reference) */
};

static int gpu_open(void *ctx, const char *reference_path, int device,
		    struct ft_device_info *info, struct ft_err *err)
{
	struct gpu_backend *b = ctx;
	struct ft_err why = { 0 };
	double t0 = ft_mono_ms();
	int rc;

	if (ft_gpu_open(&b->gpu, device, &info->lim, &info->driver_version, &why)) {
		info->present = 0;
		snprintf(info->why_not, sizeof(info->why_not), "%s", why.msg);
		return 0;
	}
	info->present = 1;
	rc = ft_eval_open(&b->ev, b->gpu, &info->lim, reference_path, err);
	b->start_ms = ft_mono_ms() - t0;
	return rc;
}

static int gpu_prepare(void *ctx, const struct ft_job *job, struct ft_job_result *res)
{
	struct gpu_backend *b = ctx;
	double t0 = ft_mono_ms();
	int rc = ft_eval_prepare(b->ev, job, res);

	b->inputs_ms = ft_mono_ms() - t0;
	return rc;
}

/* ft_eval_run's verdict and phases, plus the start (first job only) and
 * the preparation before it */
static int gpu_run(void *ctx, const struct ft_job *job, struct ft_job_result *res)
{
	struct gpu_backend *b = ctx;
	int rc = ft_eval_run(b->ev, job, res);

	res->phase_ms[FT_PH_START] += b->start_ms;
	res->phase_ms[FT_PH_INPUTS] += b->inputs_ms;
	res->phase_ms[FT_PH_JOB] += b->start_ms + b->inputs_ms;
	b->start_ms = b->inputs_ms = 0;
	return rc;
}

/* ft_eval_sweep's answer, the start and the preparation charged to its
 * first candidate, as a job's are */
static int gpu_sweep(void *ctx, const struct ft_sweep *g, struct ft_sweep_result *out)
{
	struct gpu_backend *b = ctx;
	int rc = ft_eval_sweep(b->ev, g, out);
	double *ph = out->res[0].phase_ms;

	ph[FT_PH_START] += b->start_ms;
	ph[FT_PH_INPUTS] += b->inputs_ms;
	ph[FT_PH_JOB] += b->start_ms + b->inputs_ms;
	b->start_ms = b->inputs_ms = 0;
	return rc;
}

static void gpu_close(void *ctx)
{
	struct gpu_backend *b = ctx;

	ft_eval_close(b->ev);
	ft_gpu_close(b->gpu);
	b->ev = NULL;
	b->gpu = NULL;
}

/* reference.cu of this source tree: $FATUNE_SOURCE_DIR, else the build's. */
static void default_reference(char *buf, size_t size)
{
	const char *dir = getenv("FATUNE_SOURCE_DIR");

	snprintf(buf, size, "%s/kernel_templates/reference.cu", dir && *dir ? dir : FATUNE_SOURCE_DIR);
}

int ft_worker_main(int argc, char **argv)
{
	struct gpu_backend b = { NULL, NULL, 0, 0 };
	struct ft_worker_backend be = { .open = gpu_open, .prepare = gpu_prepare, .run = gpu_run,
					.sweep = gpu_sweep, .close = gpu_close, .ctx = &b };
	char reference[FT_PATH_MAX];
	int in_fd, out_fd, devnull;

	default_reference(reference, sizeof(reference));
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--reference") && i + 1 < argc)
			snprintf(reference, sizeof(reference), "%s", argv[++i]);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--selftest"))
			return ft_eval_selftest(stdout, reference);
	/* keep the protocol on private descriptors; fd 1 (printf, a kernel's
	 * printf) goes to stderr and fd 0 reads nothing */
	in_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
	out_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in_fd < 0 || out_fd < 0 || devnull < 0 || dup2(2, 1) < 0 || dup2(devnull, 0) < 0) {
		fprintf(stderr, "fatune __worker: cannot set up its descriptors: %s\n",
			strerror(errno));
		return 1;
	}
	close(devnull);
	return ft_worker_serve(in_fd, out_fd, &be);
}
