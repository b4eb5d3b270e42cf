/* interleave.h - several candidates timed on one runner in round-robin rounds.
 *
 * Two configs timed one after the other compare badly: a GPU's clocks drift
 * over seconds (temperature, power), and a neighbour's load comes and goes,
 * so a difference of a few percent between two separate measurements says
 * little. Interleaved, each candidate gets `rounds` jobs of a share of its
 * samples, round-robin (each round starting one candidate later), so drift
 * and interference fall on all of them alike; each candidate's samples are
 * pooled into one result. The race's final (search/race.h) and
 * `fatune bench` with several configs time this way.
 */
#ifndef FT_INTERLEAVE_H
#define FT_INTERLEAVE_H

#include "base/err.h"
#include "run/job.h"

/* Runs one job: 0 with a verdict in *res, -1 with err when fatune itself
 * failed (a runner's evaluate, run/runner.h). */
typedef int (*ft_job_run_fn)(void *ctx, const struct ft_job *job, struct ft_job_result *res,
			     struct ft_err *err);

#define FT_INTERLEAVE_MAX 16		/* candidates */
#define FT_INTERLEAVE_MAX_ROUNDS 64

/* What each round measured of each candidate: the round's median and the
 * candidate's place in the round (0: run first; after a heat, the first
 * places run while the GPU's clock is still settling, docs/timing.md). */
struct ft_interleave_trace {
	double median_us[FT_INTERLEAVE_MAX][FT_INTERLEAVE_MAX_ROUNDS];	/* NaN: not run, or not ok */
	int place[FT_INTERLEAVE_MAX][FT_INTERLEAVE_MAX_ROUNDS];		/* -1: not run */
	int ran[FT_INTERLEAVE_MAX_ROUNDS];				/* jobs run in the round */
};

/* A trace with nothing run: every median NaN, every place -1, no job in
 * any round (ft_interleave, and the race's final as one sweep). */
void ft_interleave_trace_clear(struct ft_interleave_trace *tr);

struct ft_interleave_opts {
	int rounds;		/* 1..FT_INTERLEAVE_MAX_ROUNDS */
	int samples;		/* > 0: each candidate's samples in all (0: its job's),
				 * split evenly over the rounds, at most
				 * FT_RAW_SAMPLES_MAX per round */
	double sample_us;	/* > 0: a sample's cap where the job names none */
	int warmup;		/* >= 0: at most this many warm-up launches per job */
	double leave_over;	/* > 1: after the first round, a candidate whose fastest
				 * sample is over this times the round's fastest median
				 * leaves with that round's samples; 0: none leaves */
	double heat_ms;		/* > 0: the first job run heats the GPU this long first
				 * (ft_job.heat_ms) */
	const double *prior;	/* NULL, or each candidate's median measured before
				 * (NaN: none): then a candidate leaves only when its prior
				 * is over leave_over times the fastest prior too, so a
				 * burst of load during its one job of the first round (a
				 * process sharing the GPU) does not make it leave */
	struct ft_interleave_trace *trace;	/* NULL, or filled for every candidate
						 * and round (rounds not run: NaN, -1) */
	int spread;		/* 0: each round starts one candidate later; 1: with
				 * fewer rounds than candidates, round r starts at
				 * candidate r x n / rounds, so that each one runs early,
				 * midway and late in a round alike (ft_interleave_start) */
	int close_rounds;	/* > 0: after the rounds, the candidates still in whose
				 * pooled median is within close_within times the fastest
				 * one's (at most close_max of them, the fastest) run this
				 * many more rounds alone, starting one later each, their
				 * samples pooled with the earlier ones': a round of many
				 * candidates spans a clock drift that a round of two or
				 * three does not, so the close ones compare again where
				 * they compare best; 0: none */
	double close_within;	/* > 1 */
	int close_max;		/* >= 2 */
};

/* The candidate round `round` of `rounds` starts at, of n. Within a round the
 * GPU's clock drifts (a final heats it, docs/timing.md), so a candidate's
 * place in the rounds weighs on its pooled time: starting one later each
 * round gives candidate i (2 <= i < n) about place i - 1 on average over 3
 * rounds of 16, so the later ones are always timed later; spread, candidate
 * i's places are i, i - n/3 and i - 2n/3 (mod n). */
int ft_interleave_start(int spread, int round, int rounds, int n);

/* The rule by which a candidate leaves after the first round (leave_over):
 * of med[0..n) and min[0..n) (each candidate's median and fastest sample so
 * far; NaN median: not in), left[i] is set for each one whose fastest sample
 * is over `over` times the fastest median - and, with prior (NULL: none;
 * NaN or <= 0: none for that one), whose prior is over `over` times the
 * fastest prior as well. The candidates ran back to back, so they compare
 * within the round. ft_interleave and the sweep (run/sweep.h) both use it. */
void ft_interleave_leave(const double *med, const double *min, int n, double over,
			 const double *prior, int *left);

/* Times jobs[0..n) (n <= FT_INTERLEAVE_MAX) interleaved through run. out[i]
 * gets candidate i's pooled verdict: ok with statistics over every sample it
 * took (rel_err and max_abs_err the largest seen, phases summed), or the
 * first verdict that was not ok (it runs no more rounds); rounds[i] (rounds
 * may be NULL) the ok rounds it ran; *njobs (may be NULL) the jobs run in
 * all. Returns -1 with err when run does (out is then incomplete). */
int ft_interleave(const struct ft_interleave_opts *o, const struct ft_job *jobs, int n,
		  ft_job_run_fn run, void *ctx, struct ft_job_result *out, int *rounds,
		  long long *njobs, struct ft_err *err);

#endif
