/* sweep.h - several candidates timed in one job, one sample of each in turn.
 *
 * The race's final (search/race.h) compares finalists a few tenths of a
 * percent apart on a GPU whose clock drifts by several percent within a
 * second (docs/timing.md, "The final's rounds"). Interleaved by rounds
 * (run/interleave.h), each finalist's round is a job of several samples in a
 * row, so a round of 16 finalists spans ~100 ms of drift, and a finalist's
 * place in the round weighs on its time (bench/final_rounds.py --by-round:
 * about 1 % between the first and the last places). A sweep is one job that
 * holds every candidate at once - each loaded, verified, sized and captured
 * in its own CUDA graph - and then takes one sample of each in turn, the
 * order rotating by one candidate every sweep, so a drift falls on all of
 * them alike within a few milliseconds. Its samples still come in `rounds`
 * (each `per_round` sweeps long) so that its results read like the rounds'
 * (per-round medians and places, bench/final_rounds.py), and after the first
 * round a candidate clearly behind leaves, by ft_interleave_leave's rule.
 *
 * This file is the sweep's bookkeeping, the same wherever its samples come
 * from: the order of a round, the samples taken, the leaving, the pooled
 * statistics. The GPU worker runs it in its evaluator (run/evaluate.h
 * ft_eval_sweep); a runner with no sweep of its own can emulate one with a
 * job per sample (ft_sweep_by_jobs, the tests' fake runner).
 */
#ifndef FT_SWEEP_H
#define FT_SWEEP_H

#include "base/err.h"
#include "run/interleave.h"
#include "run/job.h"

#define FT_SWEEP_MAX 16			/* candidates */
#define FT_SWEEP_ROUNDS_MAX 16

/* What a sweep asks: sent to the worker as it is (fixed size). */
struct ft_sweep {
	int n;				/* candidates, 1..FT_SWEEP_MAX */
	int rounds;			/* 1..FT_SWEEP_ROUNDS_MAX */
	int per_round;			/* samples of each candidate per round (>= 1);
					 * rounds x per_round <= FT_RAW_SAMPLES_MAX */
	double heat_ms;			/* >= 0: before the first sample the candidates'
					 * graphs run in turn at least this long (at
					 * least a warm-up's: run/evaluate.h) */
	double leave_over;		/* > 1: after round 1 a candidate leaves by
					 * ft_interleave_leave's rule; 0: none leaves */
	double prior[FT_SWEEP_MAX];	/* each one's earlier median (NaN: none) */
	int has_prior;			/* 0: prior unused */
	struct ft_job jobs[FT_SWEEP_MAX];	/* one shape and seed; warm, timed jobs
						 * (sample_max_us caps each sample) */
};

/* What a sweep measured. */
struct ft_sweep_result {
	int failed;			/* 1: not measured as a sweep (why says why: a
					 * CUDA error, a worker that died or hung, a job
					 * a sweep does not take); the caller times the
					 * candidates another way, res[] means nothing */
	char why[256];
	struct ft_job_result res[FT_SWEEP_MAX];	/* each one's verdict: ok with its
						 * samples pooled (raw_us in the order
						 * taken), or the one that stopped it */
	int rounds[FT_SWEEP_MAX];		/* rounds it was timed in */
	double median_us[FT_SWEEP_MAX][FT_SWEEP_ROUNDS_MAX];	/* NaN: not timed */
	int place[FT_SWEEP_MAX][FT_SWEEP_ROUNDS_MAX];	/* its place in the round's first
							 * sweep, 0-based; -1: not timed */
	int ran[FT_SWEEP_ROUNDS_MAX];		/* candidates timed in the round */
};

/* Marks out failed (no candidate's verdict; out->res[] means nothing) and
 * says why. */
void ft_sweep_fail(struct ft_sweep_result *out, const char *why);

/* 1 when g is a sweep this binary runs (counts in range, one shape and seed,
 * no cold job), else 0 with why. */
int ft_sweep_valid(const struct ft_sweep *g, char *why, size_t size);

/* A sweep under way: its bookkeeping over g. */
struct ft_sweep_state {
	const struct ft_sweep *g;
	struct ft_sweep_result *out;
	int in[FT_SWEEP_MAX];		/* 1: still timed */
	double us[FT_SWEEP_MAX][FT_RAW_SAMPLES_MAX];
	int have[FT_SWEEP_MAX];
	int round_from[FT_SWEEP_MAX];	/* have[] when the round began */
};

/* Starts: out's verdicts "not measured" (ok, NaN), every candidate in. */
void ft_sweep_begin(struct ft_sweep_state *s, const struct ft_sweep *g,
		    struct ft_sweep_result *out);

/* ft_sweep_valid, then ft_sweep_begin: 1 when g is a sweep to run; else 0
 * with out failed and why (nothing begun). */
int ft_sweep_open(struct ft_sweep_state *s, const struct ft_sweep *g, struct ft_sweep_result *out);

/* Candidate i is out with verdict v (wrong_result, a refusal): it is timed
 * no more and v stands. */
void ft_sweep_drop(struct ft_sweep_state *s, int i, const struct ft_job_result *v);

/* The order of round r (0-based): seq gets the candidates to sample, in
 * order, per_round sweeps of those still in, sweep k of the whole sweep
 * starting k candidates later (k counts every sweep of every round).
 * seq holds FT_SWEEP_MAX x FT_RAW_SAMPLES_MAX entries; returns how many. */
int ft_sweep_round(struct ft_sweep_state *s, int r, int *seq);

/* One sample of candidate i, in us. */
void ft_sweep_take(struct ft_sweep_state *s, int i, double us);

/* After round r's samples: its medians into out, and after round 0 the
 * leaving rule. */
void ft_sweep_round_end(struct ft_sweep_state *s, int r);

/* The pooled statistics of each candidate still ok into out->res (status
 * ok, times, samples, raw_us); one with no finite sample is crashed. */
void ft_sweep_finish(struct ft_sweep_state *s);

/* A sweep emulated with one job per sample (run a job of 1 sample each,
 * heat on the first): for runners that have no sweep of their own (a
 * test's fake, whose drift per job is then a drift per sample). 0 with out
 * filled, or -1 with err when run fails. */
int ft_sweep_by_jobs(const struct ft_sweep *g, ft_job_run_fn run, void *ctx,
		     struct ft_sweep_result *out, struct ft_err *err);

#endif
