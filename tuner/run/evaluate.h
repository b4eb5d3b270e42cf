/* evaluate.h - one candidate inside the worker: inputs, reference, verify, time.
 *
 * Runs in the worker process only (worker.h). Per job: load the CUBIN, reuse or
 * make the inputs and the reference output of (shape, seed), poison the output
 * with NaN, launch, verify against the reference (relative L2 error in fp64 on
 * the host, plus a count of non-finite outputs), and time with CUDA events
 * around CUDA-graph launches (docs/timing.md). A CUDA error makes the job
 * `crashed` and tells the worker to exit, since the context may be lost.
 *
 * The CPU-side arithmetic (statistics, the tolerance decision, fp16/bf16
 * decoding, an fp64 attention) is in verify.h. The worker process's entry
 * (worker_main.c) serves jobs with this evaluator through worker.h.
 */
#ifndef FT_EVALUATE_H
#define FT_EVALUATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "run/gpu.h"
#include "run/verify.h"
#include "run/job.h"
#include "run/sweep.h"

/* ---- defaults for struct ft_job (callers may use or override them) -------- */

/* Samples: 30 gives a stable median and a p90 that is not the maximum (the
 * 27th of 30 by nearest rank: three samples may be outliers). */
#define FT_EVAL_SAMPLES 30
/* Warm-up graph launches before sampling; see FT_EVAL_WARMUP_MIN_MS too. */
#define FT_EVAL_WARMUP 3
/* 0 = choose K per candidate so that one sample lasts ~FT_EVAL_SAMPLE_TARGET_US. */
#define FT_EVAL_LAUNCHES_AUTO 0
/* One sample of ~1 ms: CUDA event resolution is ~0.5 us, so the error of the
 * event pair is <0.1% of a sample; and 30 samples plus warm-up cost ~50 ms a
 * candidate. */
#define FT_EVAL_SAMPLE_TARGET_US 1000.0
/* Warm-up also lasts at least this long: an idle GPU runs its SMs at a low
 * clock (345 MHz seen on the H200 versus 1980 MHz under load, FACTS.md) and
 * needs some milliseconds of load to reach its boost clock; 20 ms is a few
 * percent of a search's time per candidate. */
#define FT_EVAL_WARMUP_MIN_MS 20.0
/* ...unless the GPU finished timing another candidate less than
 * FT_EVAL_HOT_WINDOW_MS ago: then its clocks are still up (a search's
 * candidates follow each other within milliseconds), the candidate's code and
 * data are in the caches after its verified call and its sizing call, and
 * what is left to warm is the graph itself (its first launch uploads it):
 * the job's `warmup` graph launches, and at least FT_EVAL_WARMUP_HOT_MS. That
 * was 1 ms, checked on an H200 (the re-tune of 1x8x1024x64 found the same
 * best within the run-to-run spread with 1 ms or 20 ms, docs/perf.md); 1 ms
 * was a fifth of a 5 us kernel's whole candidate (issue 16), and 0.2 ms is
 * still two of its 100 us samples beyond the graph's first launch.
 * FATUNE_EVAL_COSTS=legacy in the environment restores 1 ms (and loading
 * per job, compiling the reference per start: run/modules.h) to compare
 * the two on one GPU. */
#define FT_EVAL_HOT_WINDOW_MS 100.0
#define FT_EVAL_WARMUP_HOT_MS 0.2
#define FT_EVAL_WARMUP_HOT_LEGACY_MS 1.0
/* Candidate modules stay loaded by key and the reference kernels come from
 * the CUBIN cache: run/modules.h (legacy: loaded per job, compiled per start). */
/* Bounds on a job's counts: K calls in one graph and R samples. */
#define FT_EVAL_MAX_LAUNCHES 1000
#define FT_EVAL_MAX_SAMPLES 10000
/* Bound on a job's heat (ft_job.heat_ms: the race's heated final, search/race.h). */
#define FT_EVAL_HEAT_MAX_MS 1000.0
/* A K asked for (--launches, default 20) is kept while K calls last at most
 * 20 ms: every kernel of the benchmark suite (at most ~1 ms a call) keeps the
 * K = 20 its timings were taken with, and a 50 ms kernel gets K = 1 instead
 * of 1 s samples. */
#define FT_EVAL_SAMPLE_MAX_US 20000.0
/* A slow kernel's samples are cut so that sampling lasts about
 * FT_EVAL_SAMPLING_BUDGET_MS (a second per candidate keeps a search of a
 * hundred slow candidates within minutes), but never below
 * FT_EVAL_MIN_SAMPLES: the median of 5 still ignores 2 outliers. */
#define FT_EVAL_SAMPLING_BUDGET_MS 1000.0
#define FT_EVAL_MIN_SAMPLES 5

/* How a candidate is timed, from the duration of one warm call. */
struct ft_timing_plan {
	int launches;		/* K: calls per sample (1 for cold timing) */
	int samples;		/* R */
	double sample_ms;	/* a sample's length as the sizing call predicts it */
	double expected_ms;	/* warm-up, samples and the last check, all told */
};

/* The timing of a candidate whose one warm call took single_us (> 0):
 * K = launches when it is > 0, lowered (to 1 at least) so that a sample
 * lasts at most sample_max_us (<= 0: FT_EVAL_SAMPLE_MAX_US; a 50 ms kernel
 * gets K = 1, never 20 x 50 ms samples); with launches 0 (auto), enough calls for a sample of
 * FT_EVAL_SAMPLE_TARGET_US. R = samples, cut to what
 * FT_EVAL_SAMPLING_BUDGET_MS holds when K calls are long, but at least
 * FT_EVAL_MIN_SAMPLES (and never above samples). cold: one call per sample.
 * expected_ms is what the rest of the job should take, for the watchdog. */
void ft_eval_plan(double single_us, int launches, int samples, int warmup, int cold,
		  double sample_max_us, struct ft_timing_plan *p);

/* Fills the timing fields of job with the defaults above (timing = 1, warm,
 * sample_max_us 0: the default cap). */
void ft_job_timing_defaults(struct ft_job *job);

/* ---- the evaluator ---------------------------------------------------------- */

struct ft_eval;

/* Compiles reference_path (kernel_templates/reference.cu) with NVRTC for the
 * device's sm_<cc> and loads it. -1 with err if that fails. gpu and lim stay
 * owned by the caller and must outlive the evaluator. */
int ft_eval_open(struct ft_eval **out, struct ft_gpu *gpu, const struct ft_device_limits *lim,
		 const char *reference_path, struct ft_err *err);

/* Checks job and prepares its inputs and reference (cached per shape and
 * seed). Returns 0 when ready; 1 after a CUDA error: *res is a crashed verdict
 * and the worker must exit after answering; 2 for a job that cannot run (bad
 * geometry, D > 256): *res is a crashed verdict, the worker goes on. Separate
 * from ft_eval_run so the candidate's watchdog starts after the reference. */
int ft_eval_prepare(struct ft_eval *ev, const struct ft_job *job, struct ft_job_result *res);

/* Verifies and (if job->timing) times the candidate of job; calls
 * ft_eval_prepare itself when needed. Returns 0 with a verdict in *res, or 1
 * with a crashed verdict when the worker must exit (the context may be lost). */
int ft_eval_run(struct ft_eval *ev, const struct ft_job *job, struct ft_job_result *res);

/* Times the candidates of g in one sweep (run/sweep.h): each loaded, set
 * up, verified and sized, its K calls captured in a graph of its own; then
 * a warm-up (g->heat_ms at least) running their graphs in turn, the rounds
 * of one sample of each in turn (queued back to back, as a job's samples
 * are), and each verified again after them (a poisoned call, since they
 * share the outputs). A candidate that fails its verification or cannot be
 * set up is out with its verdict, the others go on; any CUDA error ends the
 * sweep as failed (out->failed, the caller times them otherwise). Returns 0,
 * or 1 when the worker must exit (the context may be lost). */
int ft_eval_sweep(struct ft_eval *ev, const struct ft_sweep *g, struct ft_sweep_result *out);

void ft_eval_close(struct ft_eval *ev);

/* `fatune __worker --selftest`: the GPU reference against the fp64 CPU
 * reference on several shapes; one line per case on out. Returns 0 if all
 * pass, 1 if any fails, 77 when there is no GPU. */
int ft_eval_selftest(FILE *out, const char *reference_path);

#endif
