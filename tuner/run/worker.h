/* worker.h - GPU work in a separate process, so a bad candidate cannot end a search.
 *
 * The search process never loads libcuda. It starts `fatune __worker` (the same
 * binary, via /proc/self/exe) with pipes on its stdin/stdout and sends it jobs;
 * the worker loads the driver (gpu.c, the only cuda.h user, via dlopen so the
 * binary runs where no driver exists), verifies and times one candidate per job
 * and answers with a result. Messages are fixed-size structs (same binary on both
 * ends) preceded by a magic and a length.
 *
 * Isolation: a candidate that faults (illegal address: its CUDA context is lost)
 * makes the worker answer `crashed` and exit; one that kills the worker (EOF on
 * the pipe) is `crashed`; one that runs past the watchdog is killed (SIGKILL)
 * and is `timeout`. In every case the next ft_worker_run starts a fresh worker.
 */
#ifndef FT_WORKER_H
#define FT_WORKER_H

#include "base/arch.h"
#include "base/err.h"
#include "base/shape.h"
#include "space/space.h"
#include "base/trial.h"

/* What the worker found when it started. */
struct ft_device_info {
	int present;			/* 1: a CUDA device was opened */
	char why_not[256];		/* when !present: "no NVIDIA driver: libcuda.so.1: ..." */
	int driver_version;		/* cuDriverGetVersion, e.g. 13000 */
	struct ft_device_limits lim;	/* device 0 (or $FATUNE_DEVICE) */
};

struct ft_job {
	char cubin_path[FT_PATH_MAX];	/* CUBIN file to load */
	char kernel[FT_NAME_MAX];
	char combine_kernel[FT_NAME_MAX];	/* "" when none */
	struct ft_shape shape;
	long long dynamic_smem;		/* bytes passed at launch; > 48 KB raises the attribute */
	long long threads, grid[3];
	long long combine_threads, combine_grid[3];
	int num_splits;			/* >= 1; > 1 also launches the combine kernel */
	int abi;			/* the params struct the kernels take: 1 or 2 (fatune_abi.h) */
	struct ft_launch_plan plan;	/* TMA descriptors to encode (family.h; ABI v2) */
	long long workspace_bytes;	/* scratch for the kernel (ABI v2), 0: none */
	int workspace_init;		/* enum ft_workspace_init */
	unsigned long long seed;	/* inputs are a function of (seed, shape) */
	double tolerance;		/* max relative L2 error vs the reference */
	int timing;			/* 0: verify only; 1: verify, then time */
	int warmup;			/* untimed graph launches before sampling */
	int samples;			/* R: timed samples; the median is reported */
	int launches_per_sample;	/* K: back-to-back calls captured in one CUDA graph */
	int cold;			/* 1: flush L2 before each call (not graph-captured) */
};

struct ft_job_result {
	enum ft_status status;		/* FT_ST_OK, _WRONG_RESULT, _CRASHED or _TIMEOUT */
	char reason[512];		/* "" for ok */
	double rel_err;			/* NAN when not computed */
	long long nonfinite;		/* outputs that were NaN/Inf (incl. never written) */
	double t_median_us, t_min_us, t_p90_us, t_spread;	/* NAN when not timed */
	int samples;			/* R taken (ft_eval_plan may cut the job's) */
	int launches_per_sample;	/* K used (ft_eval_plan may lower the job's) */
};

struct ft_worker;

/* Spawns a worker for GPU `device` (its ordinal; -1: $FATUNE_DEVICE or 0) and
 * waits (up to start_timeout_ms) for its hello. Succeeds also when there is no
 * GPU: *info then says why (present == 0) and the worker has exited.
 * reference_path is kernel_templates/reference.cu, compiled by the worker
 * with NVRTC for its device. */
int ft_worker_start(struct ft_worker **out, const char *reference_path, int device,
		    int start_timeout_ms, struct ft_device_info *info, struct ft_err *err);

/* The watchdog over a job whose worker said (ft_worker_expect) that it
 * needs about expected_ms more: the larger of base_ms and 3 x expected_ms +
 * 1 s (clocks, other users of the GPU and a loaded host make a run slower
 * than its first call said), capped at FT_WATCHDOG_CAP_MS. The cap is what a
 * hung candidate may cost: 5 minutes is 20 times the default 10 s watchdog,
 * and with ft_eval_plan's minimum of 5 samples plus 3 warm-up calls it still
 * times kernels of up to ~10 s a call; one slower than that is a `timeout`.
 * The user's base_ms is never lowered. */
#define FT_WATCHDOG_CAP_MS 300000
int ft_watchdog_ms(int base_ms, double expected_ms);

/* Runs one job with a watchdog of timeout_ms (extended by the worker's
 * ft_worker_expect, see ft_watchdog_ms). Returns 0 when *res holds a
 * verdict, including crashed and timeout (a fresh worker is started for the
 * next job); -1 with err when fatune itself failed (cannot spawn, protocol
 * broken twice in a row, the fresh worker cannot start). */
int ft_worker_run(struct ft_worker *w, const struct ft_job *job, int timeout_ms,
		  struct ft_job_result *res, struct ft_err *err);

/* What the worker found at its last start (device name, ordinal, limits). */
const struct ft_device_info *ft_worker_info(const struct ft_worker *w);

/* Most GPU workers one pipeline drives (one per GPU of a host). */
#define FT_MAX_WORKERS 16

/* Asks the worker to exit (kills it after a grace period) and frees w. */
void ft_worker_stop(struct ft_worker *w);

/* Entry point of `fatune __worker`: serves jobs on stdin/stdout until EOF.
 * Returns the process exit code. */
int ft_worker_main(int argc, char **argv);

/* For tests: the command the parent spawns instead of /proc/self/exe __worker
 * (argv[0] is the program). NULL restores the default. */
void ft_worker_set_command(char *const *argv);

#endif
