/* pipeline.h - candidates through feasibility, compile and evaluation, overlapped.
 *
 * The main thread enumerates the space and applies the model check (cheap);
 * `jobs` compile threads take feasible candidates, hit the CUBIN cache or run
 * NVRTC, and apply the compiled check; one evaluation thread per GPU worker
 * feeds it compiled candidates while the next ones compile (several GPUs
 * share one compile pool and take candidates as they come free). Every candidate,
 * whatever becomes of it, comes back to the main thread as a finished trial
 * through cfg->emit, in completion order, so the caller (search, check, bench)
 * stores and reports from one thread.
 */
#ifndef FT_PIPELINE_H
#define FT_PIPELINE_H

#include <stdatomic.h>

#include "base/arch.h"
#include "compile/nvrtc.h"
#include "space/space.h"
#include "base/trial.h"
#include "run/runner.h"
#include "search/race.h"
#include "search/strategy.h"

struct ft_pipeline_cfg {
	const struct ft_space *sp;
	const struct ft_arch *arch;
	const struct ft_shape *shape;
	const char *template_hash;	/* ft_space_template_hash of sp */
	const long long *fixed;		/* NULL, or one config to run (bench) */
	int jobs;			/* compile threads, >= 1 */
	int compile;			/* 0: stop after the model check (check without --compile) */

	struct ft_runner **runners;	/* what evaluates (run/runner.h): one per GPU, each
					 * evaluating runner fed by its own evaluation thread;
					 * nrunners 0: no evaluation (status compiled). A
					 * runner that answers candidates (replay) is the
					 * only one (nrunners 1) */
	int nrunners;
	int sm_count;			/* SMs of the target device (model strategy), 0 unknown */
	struct ft_job job;		/* template for every job: seed, tolerance, timing knobs */
	int timeout_ms;			/* watchdog per job */

	const struct ft_strategy *strategy;	/* strategy.h; NULL: exhaustive */
	unsigned long long seed;	/* strategy seed */
	long long budget_evals;		/* max candidates compiled+evaluated, -1: all */
	double budget_seconds;		/* stop taking new candidates after this, <= 0: none */
	const char *const *seeds;	/* transfer: configs to evaluate first (NULL: none) */
	int nseeds;
	int patience;			/* transfer with seeds: stop after this many results
					 * (at most; see patience_frac) */
	double gain;			/* in a row without a gain of more than this fraction */
	double patience_frac;		/* > 0: patience = this fraction of the feasible
					 * candidates, within [patience_min, patience] */
	int patience_min;
	int patience_unseeded;		/* transfer with no seed: stop after this many
					 * results without a gain (0: never) */
	double incumbent_us;		/* transfer: the unit's best in an earlier space on
					 * this GPU model, 0: none; the early stop counts
					 * gains against it (ft_guide_incumbent) */
	int patience_behind;		/* transfer: the patience while behind the
					 * incumbent (0: the usual one) */
	int seed_lean;			/* transfer: before any ok result, the candidates
					 * nearest the first seed follow the seeds
					 * (ft_guide_lean; a prefetch, which times nothing) */
	struct ft_race_opts race;	/* racing (race.h); race.on 0: one full measurement each */

	/* Resume: return 1 to skip a feasible candidate already finished
	 * (called on the main thread before it is compiled). May be NULL. */
	int (*skip)(void *ctx, const struct ft_trial *t);
	/* Concurrent searches: called on the main thread just before a feasible
	 * candidate is queued to compile. 0: go (it is claimed); 1: skip it, a
	 * concurrent search finished it (the callback counts it); 2: a concurrent
	 * search holds it, ask again later (the pipeline asks every 100 ms once
	 * it has sent everything else); -1: stop the run (the callback keeps the
	 * error). May be NULL. */
	int (*claim)(void *ctx, const struct ft_trial *t);
	/* Every finished trial, on the main thread; non-zero stops the run. */
	int (*emit)(void *ctx, struct ft_trial *t);
	/* The race's final re-measurement of a finalist (a new trial of a config
	 * emitted before), on the main thread; NULL: emit. */
	int (*emit_final)(void *ctx, struct ft_trial *t);
	void *ctx;
	/* Called once, from a compile thread, when the last compile of the run
	 * is done and only evaluation is left (the GPU's tail): the campaign
	 * starts compiling the next search's candidates then (search/prefetch.h).
	 * Not called on a stop or an interrupt. Must not block; may be NULL. */
	void (*compiles_done)(void *ctx);
	void *compiles_ctx;
	/* Set (by another thread) to stop the run as an interrupt does, but
	 * quietly: nothing more is sent or compiled, the compiles running
	 * finish. NULL: none. */
	const atomic_int *cancel;
	/* Incremented as each compile of this run (not a cache hit) finishes, for
	 * an observer on another thread (a prefetch's count). NULL: none. */
	atomic_llong *compiled_now;
};

struct ft_pipeline_stats {
	long long enumerated;		/* candidates produced by the space */
	long long feasible;		/* passed the model check */
	long long skipped;		/* already finished (resume, or by a concurrent search) */
	long long selected;		/* handed to compile by the strategy */
	long long compiled;		/* NVRTC runs (cache misses) */
	long long cache_hits;
	long long evaluated;		/* evaluated or answered by a runner */
	double compile_ms_total;	/* summed NVRTC time over all threads */
	double compile_wall_ms;		/* from the first compile's start to the last one's end */
	double gpu_busy_ms;		/* time the evaluation threads spent in jobs (summed) */
	double gpu_wait_ms;		/* ...waiting for a compiled candidate while more were
					 * coming (summed over the GPUs) */
	double verify_ms;		/* the workers' verified calls and checks (summed) */
	double timing_ms;		/* the workers' timing (summed) */
	double phase_ms[FT_PH_COUNT];	/* the workers' wall time per enum ft_phase (run/job.h), summed */
	long long loaded_ahead;		/* jobs whose module was loaded while the job before ran */
	double wall_ms;
	double first_compile_ms;	/* from start until the first compile began */
	double first_send_ms;		/* from start until the first candidate was sent on
					 * (-1: none): with a warm cache, how long the GPU
					 * stood idle at the start of the search */
	struct ft_race_stats race;	/* quick passes, full measurements, cuts, final jobs */
};

/* Runs the pipeline. Returns 0 when every candidate was handled (individual
 * failures are trial statuses), -1 with err when something beyond a candidate
 * failed (bad expression, worker cannot start, emit stopped the run) or on an
 * interrupt (base/interrupt.h: polled before every candidate, rejected ones
 * included; the candidates in flight are finished, the rest never started).
 * At most a fixed number of candidates are in flight at once: enumeration
 * waits for the compile threads (memory stays bounded on any space). */
int ft_pipeline_run(const struct ft_pipeline_cfg *cfg, struct ft_pipeline_stats *stats,
		    struct ft_err *err);

/* The job that runs trial t (compiled: t->compile_key names its CUBIN),
 * from cfg's job template. 0 when made; 1 when the family cannot lay the
 * candidate out (t becomes crashed: its verdict, not fatune's failure);
 * -1 with err. */
int ft_pipeline_job(const struct ft_pipeline_cfg *cfg, struct ft_trial *t, struct ft_job *job,
		    struct ft_err *err);

/* Fills a compile request for candidate values (defines: the macro list of
 * ft_candidate_macros, space/candidate.h). */
void ft_pipeline_compile_req(const struct ft_space *sp, const struct ft_arch *a,
			     const struct ft_shape *shape, const struct ft_trial *t,
			     struct ft_compile_req *req);

#endif
