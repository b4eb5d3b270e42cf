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

#include "base/err.h"
#include "run/job.h"
#include "run/sweep.h"

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

/* Runs one sweep (run/sweep.h) like a job: the watchdog from READY, moved
 * by the worker's ft_worker_expect. Returns 0 with *out: measured, or
 * failed with why (the worker's own answer, or it died, hung or broke the
 * protocol: no candidate's verdict, the caller times them otherwise; a
 * fresh worker is started for the next job); -1 with err when fatune itself
 * failed. */
int ft_worker_sweep(struct ft_worker *w, const struct ft_sweep *g, int timeout_ms,
		    struct ft_sweep_result *out, struct ft_err *err);

/* What the worker found at its last start (device name, ordinal, limits). */
const struct ft_device_info *ft_worker_info(const struct ft_worker *w);

/* Most GPU workers one pipeline drives (one per GPU of a host). */
#define FT_MAX_WORKERS 16

/* Asks the worker to exit (kills it after a grace period) and frees w. */
void ft_worker_stop(struct ft_worker *w);

/* For a process about to exit: asks the worker to exit (EOF) and frees w
 * without waiting for it. A GPU worker's exit is its CUDA context's teardown,
 * ~0.1 s on an H200 (docs/perf.md, 2026-12-01) that ft_worker_stop would add
 * to every command; the worker ends on its own and its new parent reaps it.
 * Not for a process that goes on: the worker would stay a zombie until it
 * exits, and could still hold its GPU while the next worker starts. */
void ft_worker_leave(struct ft_worker *w);

/* ---- the worker side of the protocol (worker.c; worker_main.c is the GPU backend) ------------------------------- */

/* What a worker process does with the messages ft_worker_serve reads. */
struct ft_worker_backend {
	/* Called once with the reference path and GPU ordinal (-1: default) the
	 * parent sent. Fills *info (also
	 * when there is no GPU: present = 0 and why_not). Returns -1 with err for
	 * a fatal setup error, which the parent's ft_worker_start reports. */
	int (*open)(void *ctx, const char *reference_path, int device, struct ft_device_info *info,
		    struct ft_err *err);
	/* Optional: runs before the job's watchdog starts (the reference).
	 * 0: go on to run; 1: answer *res and exit; 2: answer *res, skip run. */
	int (*prepare)(void *ctx, const struct ft_job *job, struct ft_job_result *res);
	/* One job: 0 to go on, 1 to exit after answering (CUDA context lost). */
	int (*run)(void *ctx, const struct ft_job *job, struct ft_job_result *res);
	/* Optional (NULL: a sweep is answered failed): one sweep, after prepare
	 * of its first job; 0 to go on, 1 to exit after answering. */
	int (*sweep)(void *ctx, const struct ft_sweep *g, struct ft_sweep_result *out);
	void (*close)(void *ctx);
	void *ctx;
};

/* Serves the parent on in_fd/out_fd until EOF or a fatal job; returns the
 * process exit code (0 after EOF or a hello without GPU, 1 after a fatal job
 * or a broken pipe). ft_worker_main calls it with the GPU backend and the
 * original stdin/stdout, after pointing fd 1 at stderr so that nothing else
 * (a kernel's printf) can write into the protocol. */
int ft_worker_serve(int in_fd, int out_fd, const struct ft_worker_backend *be);

/* Inside a backend's run: tells the parent that the rest of this job should
 * take about ms, so that its watchdog becomes ft_watchdog_ms(timeout, ms)
 * (worker.h) from now on. Does nothing outside ft_worker_serve. Returns -1
 * when the message could not be written (the parent is gone). */
int ft_worker_expect(double ms);

/* Entry point of `fatune __worker`: serves jobs on stdin/stdout until EOF.
 * Returns the process exit code. */
int ft_worker_main(int argc, char **argv);

/* For tests: the command the parent spawns instead of /proc/self/exe __worker
 * (argv[0] is the program). NULL restores the default. */
void ft_worker_set_command(char *const *argv);

#endif
