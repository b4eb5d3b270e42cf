/* sampling.h - when a job's timing loop ends: after its planned samples, or
 * earlier, after the race's quick samples when they are over the cut line, or
 * once the median is known closely enough.
 *
 * One rule for every runner: the GPU worker (evaluate.c) asks after each
 * sample, and the test runners (runner_fake.c, the unit tests' fakes) ask the
 * same question of their made-up samples, so the race's one-job path is
 * tested without a GPU.
 *
 *   cut:    job->quick_samples > 0 and sample number quick_samples has just
 *     been taken and the fastest of those is over job->cut_above_us: the
 *     race cuts the candidate (search/race.h); the result's statistics are
 *     those of the quick samples alone;
 *   stable: job->stable_rel > 0, at least FT_SAMPLES_STABLE_MIN samples, and
 *     the distribution-free confidence interval of the median, the order
 *     statistics [x_(k), x_(n+1-k)] with coverage >= FT_SAMPLES_COVERAGE
 *     (ft_median_ci_rank), is at most stable_rel of the median wide. Five
 *     samples are the fewest for which [min, max] covers the median with
 *     probability >= 0.9 (1 - 2 / 2^5 = 0.9375) whatever their distribution;
 *     more samples let the interval drop the extremes (k 2 from 8 samples).
 *
 * A job with quick_samples 0 and stable_rel 0 takes every planned sample, as
 * every job did before the race ran in one job (2026-11-29).
 */
#ifndef FT_SAMPLING_H
#define FT_SAMPLING_H

#include "run/job.h"

#define FT_SAMPLES_STABLE_MIN 5
#define FT_SAMPLES_COVERAGE 0.9

/* Why a job's samples ended (struct ft_job_result.stop). */
enum ft_samples_stop {
	FT_SAMPLES_ALL = 0,	/* every planned sample was taken */
	FT_SAMPLES_CUT,		/* only the quick ones: over the cut line */
	FT_SAMPLES_STABLE,	/* the median's interval was narrow enough */
};

/* The largest k >= 1 for which [x_(k), x_(n+1-k)] of n samples covers their
 * distribution's median with probability >= coverage (1 - 2 P(Bin(n, 1/2) <
 * k)); 0 when not even [min, max] does. n in 1..FT_RAW_SAMPLES_MAX. */
int ft_median_ci_rank(int n, double coverage);

/* Asked after each sample: us[0..n) are the samples so far (unsorted, n >= 1,
 * n <= FT_RAW_SAMPLES_MAX for the stable rule). FT_SAMPLES_ALL means go on
 * (the loop ends at its planned count anyway). */
enum ft_samples_stop ft_samples_stop(const struct ft_job *job, const double *us, int n);

/* How many samples a loop that queues samples back to back (evaluate.c)
 * should have queued once `done` of its `planned` samples are back: up to
 * the next count at which ft_samples_stop may end the job, so that no sample
 * is queued past a possible end (the quick samples all at once, then up to
 * FT_SAMPLES_STABLE_MIN), and from there one sample ahead of the one waited
 * for, so the GPU never waits for the loop's decision (a job that asks for
 * no early end queues everything); at most `ahead` more than done, at least
 * done + 1, never more than planned. */
int ft_samples_queue(const struct ft_job *job, int done, int planned, int ahead);

#endif
