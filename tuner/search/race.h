/* race.h - racing candidates: a quick first pass for each, a full measurement
 * only for those that can still win, an interleaved final for the top few.
 *
 * A search spends its GPU time timing candidates, most of which are far from
 * the best. With racing (the default; `--race off` restores one full
 * measurement per candidate):
 *
 *   quick pass: every verified candidate is timed with FT_RACE_QUICK_SAMPLES
 *     samples of at most FT_RACE_SAMPLE_US each, after one warm-up graph
 *     launch (its verified call and the call that sizes K came before);
 *   cut:        when the quick pass's fastest sample is slower than `margin`
 *     times the best full median so far, the candidate is stored as `cut`
 *     with its quick statistics (never `ok`); the quick min is used because
 *     noise (clocks, another process) only ever makes a sample slower;
 *   full:       the others are measured in full and stored as `ok`: the
 *     same job goes on past its quick samples, with the same graph (samples
 *     of at most FT_RACE_SAMPLE_US), until the median's interval is
 *     `stable` narrow (run/sampling.h) or the search's samples are taken;
 *     only full measurements move the best (and the cut line), so the best
 *     is never a quickly timed candidate. The worker decides the cut against
 *     the line sent with the job (the best when it was sent);
 *     FATUNE_RACE_JOBS=2 runs the quick pass and the full measurement as two
 *     jobs, the race's first form (the cut decided when the quick pass is
 *     back, the full job verified, sized and warmed up again), kept to
 *     measure one against the other;
 *   final:      after every candidate, the `finalists` fastest full ones are
 *     measured again on one GPU, FT_RACE_ROUNDS rounds of samples / rounds
 *     samples each (at most FT_RACE_FINAL_SAMPLE_US long), interleaved so
 *     that a clock drift during the final affects them all alike: by
 *     default in one job, one sample of each in turn (a sweep,
 *     ft_race_final_sweep, run/sweep.h), with FATUNE_RACE_FINAL=rounds a job
 *     per finalist per round, round-robin (the start rotating). A finalist
 *     clearly behind after the first round leaves, stored `cut` (its time is
 *     round 1's only); each other finalist's samples are pooled into one new
 *     trial row (its reason starts with FT_RACE_FINAL_REASON), which, being
 *     the latest of its config, is the one the best row is chosen from; of a
 *     run whose final rows are among the latest trials, only they count for
 *     the best (db_query.c).
 *
 * The defaults are justified in docs/timing.md. The race is shared by the
 * evaluation threads of every GPU of a search (its state is under a mutex)
 * and runs jobs through a runner callback, so the GPU worker, the replay of a
 * recording and the tests' fakes all race the same way.
 */
#ifndef FT_RACE_H
#define FT_RACE_H

#include "base/err.h"
#include "base/trial.h"
#include "run/interleave.h"
#include "run/sweep.h"
#include "run/worker.h"

/* Cut a candidate whose quick min is over 1.15x the best median: in the
 * recorded H100 campaign a full measurement's spread (p90 - min over the
 * median) is 0.6 % in the median and 5 % at the 90th percentile, and a quick
 * pass of 3 short samples adds a few percent more, so 15 % keeps every
 * candidate that could still be the best while cutting ~80 % of them
 * (docs/timing.md). The quick pass was 3 samples until 2026-12-01: its min
 * of 2 samples places a candidate against that 15 % as well (noise only
 * makes a sample slower), and the third was a fifth of a small kernel's
 * GPU time: the mission search (565 candidates, ~90 % cut, 5 us kernels)
 * took 0.83-0.93 s of unit wall with 2 against 0.96-1.00 s with 3 on one
 * H200, the same best found (docs/perf.md). */
#define FT_RACE_MARGIN 1.15
#define FT_RACE_QUICK_SAMPLES 2
/* A sample of the quick pass and of a full measurement (one graph in one
 * job) lasts at most ~0.5 ms, not the 20 ms of FT_EVAL_SAMPLE_MAX_US: K
 * calls are graphed into a sample to spread the events' ~0.5 us and a graph
 * launch's few us over the calls, ~1 % at 0.5 ms and about the same share
 * of every candidate's samples, while 15 samples of 20 ms (K 11 for the
 * suite's 1.8 ms kernel at 1x32x8192x128) took 300 ms of GPU time per
 * candidate - 2 x 18 s of the 126 s suite24 warm run on an H100. The quick
 * pass only has to place a candidate against a 15 % margin and a full
 * measurement among the finalists; the final (1 ms samples) decides. Samples
 * were 2 ms until 2026-11-27 and 1 ms until 2026-11-29, when the quick
 * pass's 3 samples and the warm-up launch were still ~3.4 of a cut
 * candidate's ~4.7 ms at the suite's larger shapes (H200). Kernels under
 * 25 us keep K = 20. FATUNE_RACE_SAMPLE_US=N sets another cap (A/B runs);
 * `--race off` keeps FT_EVAL_SAMPLE_MAX_US. */
#define FT_RACE_SAMPLE_US 500.0
/* The final's samples were 2 ms until 2026-11-29; a sample's fixed costs
 * (events, the graph launch: a few us) are the same share of every
 * finalist's time at one sample length, so they do not reorder the
 * finalists, and 1 ms halves the final of every kernel over 50 us (K 20
 * below): the final was ~6 s of a 23 s suite24 warm run on an H200, by
 * that run's phases (24 final jobs per unit). */
#define FT_RACE_FINAL_SAMPLE_US 1000.0
/* After the final's first round, a finalist whose fastest sample of it is
 * over 1.03x the round's fastest median, and whose full measurement was over
 * 1.03x the fastest finalist's, leaves the final with that round's
 * samples: in the hopper campaign on an H200 (2026-11-29) 33 of 96
 * finalists ended the final over 3 % behind its winner, and the final's
 * own spread (p90 - min over the median, three rounds pooled) averaged
 * 2.2 %, the between-round drift included; within a round the finalists
 * run back to back. A heated final keeps that rule: tried without the full
 * measurement's agreement (2026-12-01, one H200, suite24 one GPU), the first
 * five finalists of 2x16x4096x64 causal's round 1 (the fastest full
 * measurements, so run first after the heat) took 193-196 us in it and left,
 * the exhaustive pass's best (1.012x faster than the race's pick when the
 * two were timed interleaved) among them, while the finalists after them
 * took 181-188 over their three rounds: right after the heat the GPU runs
 * deeper in its cap than it settles at, so a heated round 1 is not a
 * steady state either. */
#define FT_RACE_FINAL_CUT 1.03
/* Warm-up graph launches of a full measurement after its quick pass and of
 * a final's job (the search's own is 3): the kernel has just run on a GPU at
 * its clocks (the worker still warms an idle GPU for 20 ms, evaluate.h), so
 * one launch, which uploads the new graph, is enough; the two more cost up to
 * 2 x 2 ms per full measurement. */
#define FT_RACE_WARMUP 1
/* A full measurement ends once the median's distribution-free interval
 * (run/sampling.h: [min, max] of 5 samples, more samples drop the extremes)
 * is at most 1 % of it wide: a full measurement places a candidate against
 * the cut line (a 15 % margin) and among the finalists, whose final decides
 * (docs/timing.md); 0 takes the search's samples. */
#define FT_RACE_STABLE 0.01
#define FT_RACE_FINALISTS 4
/* The final's rounds start one finalist later each. Its clock is not steady
 * (bench/final_rounds.py over the final rows' logs, six heavy suite24 units
 * on an H200, 2026-12-01: round 1's medians over the later rounds' were
 * 1.02-1.05 for the first quarter of its places after a 100-300 ms heat,
 * 0.98 for the last; 0.94-1.00 everywhere after a 1 ms heat; round 2's over
 * round 3's 0.96-1.01), so a finalist's places weigh on its pooled time,
 * and starting one later gives finalist i (i >= 2) places i, i - 1, i - 2:
 * the later-ranked ones are always timed later in a round.
 * FATUNE_RACE_FINAL_ORDER=spread starts round r at finalist r x n / 3
 * instead (run/interleave.h ft_interleave_start), each finalist then timed
 * early, midway and late once; measured against the default on one H200
 * (suite24 with its quality check, 2026-12-01): 22 of 24 units within 1 %
 * of exhaustive with it and without, so it stays opt-in. */
#define FT_RACE_ROUNDS 3
/* FATUNE_RACE_ROUNDS=N (1..FT_RACE_ROUNDS_MAX) splits the final's samples
 * over N rounds instead (each finalist's samples the same; a job a round,
 * so each round costs every finalist a job's fixed cost): more rounds of
 * fewer samples each take the rotation's places finer, for A/B runs against
 * the quality check (docs/timing.md); not measured on a GPU yet. */
#define FT_RACE_ROUNDS_MAX 16
#define FT_RACE_MAX_FINALISTS 16
/* A heated final's close finalists timed again alone (ft_interleave_opts
 * close_rounds). Its rounds of up to 16 finalists span a drift that one round
 * of two or three does not: in a one-GPU suite24 warm pass on an H200
 * (2026-12-01, eighteenth session) the final of 1x8x8192x64 moved by 3 %
 * between rounds 2 and 3 and its finalists' per-round medians by 2-4 % with
 * their places, while the exhaustive pass's best, which the quality check
 * timed 2.2 % faster than the race's pick (interleaved alone, within 0.6 %
 * over three checks), ended the final 1.5 % behind it. With
 * FATUNE_RACE_CLOSE_ROUNDS=N (0..16) the finalists whose pooled median is
 * within FT_RACE_CLOSE_WITHIN of the fastest one's (at most FT_RACE_CLOSE_MAX)
 * run N more rounds alone, pooled with their earlier samples. Measured
 * against the quality check with 4 rounds (22 of 24 units within 1 %, 2.4 s
 * more GPU time a warm pass) and 2 (22 of 24, both misses the final's own:
 * the exhaustive best's pooled median was not within 1.02x): off by
 * default (0), docs/timing.md. */
#define FT_RACE_CLOSE_WITHIN 1.02
#define FT_RACE_CLOSE_MAX 3
#define FT_RACE_CLOSE_ROUNDS_MAX 16
/* Drift: a GPU's clocks fall as a search keeps it busy, so a candidate timed
 * late in a search looks slower than one timed early. On two H200s
 * (2026-11-29, suite24) one config of 1x32x8192x128 took 1,605 us near the
 * start of its search and 1,857 us in the final 3.7 s later; the config that
 * the exhaustive pass and an interleaved check found 3-6 % faster than the
 * race's pick was timed late (1,790 us) and never reached the final. So,
 * every FT_RACE_ANCHOR_MS of an evaluation thread's (a GPU's) wall time,
 * before its next candidate, the race times the best so far again there
 * (its full job, FT_RACE_QUICK_SAMPLES samples): the anchor. A GPU's drift is
 * the anchor's median then over the anchor's own time when it became the
 * best, and a candidate's time over its GPU's drift is what the cut line, the
 * best, the guide and the choice of finalists compare (ft_race_drift; the
 * drift is 1 until the first anchor). Stored rows keep the times measured; the
 * final, interleaved, needs no correction. An anchor whose verdict is not ok
 * is dropped until the next best. Off by default, as measured:
 * FATUNE_RACE_ANCHOR_MS=N turns it on with a period of N ms
 * (FT_RACE_ANCHOR_MS, 250, the period measured: on two H200s it ended
 * 21 of 24 suite24 units within 1 % of exhaustive against 24 of 24 without
 * it, docs/perf.md 2026-11-29 eighth session; bench/anchor_ab.sh). */
#define FT_RACE_ANCHOR_MS 250.0
/* The power cap: a Hopper GPU kept busy by a heavy kernel lowers its SM clock
 * 50-75 ms into the load and is back at its boost clock after 20-100 ms idle
 * (bench/power_curve.py on an H200, 2026-11-30: 1x32x8192x128 3.08 ms a call
 * for 50 ms, then 3.22; after a 20 ms gap 4 % faster, after 100 ms 6.6 %).
 * A full measurement (a few ms of samples, gaps of a few ms for the next
 * candidate's load and verification) runs at either clock or between, and
 * configs do not slow alike under the cap: in a one-GPU suite24 pass the
 * exhaustive pass's best for 1x32x8192x128 had been 1.07x the race's
 * fastest in the race's full measurements (24th), 8x16x1024x128's 1.037x
 * (14th), yet both were faster when timed sustained, as the user's product
 * runs a heavy kernel. So a final whose fastest finalist takes at least
 * FT_RACE_HEAT_MIN_US is heated: its first job runs its kernel back to back
 * for `heat_ms` (FT_RACE_HEAT_MS) before its samples, the GPU reaches the
 * capped state, and the final's jobs, following one another within a few ms,
 * keep it there; and it takes every candidate within FT_RACE_HEAT_SPAN of
 * the fastest full measurement (`finalists` at least, FT_RACE_MAX_FINALISTS
 * at most), so that a config ranked late at the wrong clock still gets its
 * interleaved rounds (those clearly behind leave after the first).
 * Shorter kernels showed no cap in a final (final over full medians 0.99-1.01
 * under 21 us, up to 1.11 over 30 us, docs/perf.md 2026-11-30 fourteenth
 * session). A space whose fastest is over FT_RACE_HEAT_SPAN x the unit's
 * best in another space (`rival_us`; on sm_90 the mma space after the Hopper
 * one) cannot hold the unit's best: its final stays as before (in a one-GPU
 * suite24 pass, 17 of 33 heated finals were such, 1.7 s of heat).
 * FATUNE_RACE_HEAT_MS=N sets the heat (0: off, the earlier final). */
#define FT_RACE_HEAT_MIN_US 30.0
#define FT_RACE_HEAT_MS 100.0
#define FT_RACE_HEAT_SPAN 1.10
_Static_assert(FT_RACE_MAX_FINALISTS <= FT_INTERLEAVE_MAX, "the final interleaves its finalists");
_Static_assert(FT_RACE_ROUNDS <= FT_RACE_ROUNDS_MAX &&
		       FT_RACE_ROUNDS_MAX + FT_RACE_CLOSE_ROUNDS_MAX <= FT_INTERLEAVE_MAX_ROUNDS,
	       "the final's rounds and its close ones fit an interleaving");
/* How the reason of a final's ok row starts ("" is every other ok row's;
 * base/trial.h). */
#define FT_RACE_FINAL_REASON FT_FINAL_REASON

struct ft_race_opts {
	int on;			/* 0: every candidate gets one full measurement */
	double margin;		/* > 1: cut when quick min > margin x best median */
	int quick_samples;	/* samples of the quick pass, >= 1 */
	int finalists;		/* 0..FT_RACE_MAX_FINALISTS measured again at the end */
	double stable;		/* 0..1: a full measurement ends once its median's
				 * interval is this narrow (0: all its samples) */
	int two_jobs;		/* quick pass and full measurement as two jobs
				 * (FATUNE_RACE_JOBS=2; see above) */
	double sample_us;	/* > 0: a quick or full sample's cap (FT_RACE_SAMPLE_US) */
	double anchor_ms;	/* > 0: time the best again every this many ms of a
				 * thread's wall time (FT_RACE_ANCHOR_MS); 0: never
				 * (the default for now) */
	double heat_ms;		/* > 0: a heavy final is heated this long and widened
				 * (FT_RACE_HEAT_MS); 0: never */
	int spread;		/* the final's rounds start spread over the finalists
				 * (ft_interleave_opts.spread; FATUNE_RACE_FINAL_ORDER=spread);
				 * 0: each round one later (the default, see FT_RACE_ROUNDS) */
	int sweep;		/* 1: the final is one sweep, each finalist sampled in
				 * turn (ft_race_final_sweep; the default); 0: a job per
				 * finalist per round (FATUNE_RACE_FINAL=rounds) */
	int rounds;		/* the final's rounds, 1..FT_RACE_ROUNDS_MAX
				 * (FATUNE_RACE_ROUNDS); anything else: FT_RACE_ROUNDS */
	int close_rounds;	/* > 0: a heated final's close finalists run this many
				 * more rounds alone (FT_RACE_CLOSE_WITHIN;
				 * FATUNE_RACE_CLOSE_ROUNDS); 0: none (the default) */
	double rival_us;	/* > 0: the unit's best in another space (search.h
				 * incumbent_us): a final whose fastest finalist is over
				 * FT_RACE_HEAT_SPAN x this cannot hold the unit's best
				 * and is neither heated nor widened; 0: none */
};

/* The defaults above, racing on; two_jobs from FATUNE_RACE_JOBS, sample_us
 * from FATUNE_RACE_SAMPLE_US (10..20000), anchor_ms from
 * FATUNE_RACE_ANCHOR_MS (0..60000; unset, empty or not a number: 0) and
 * spread from FATUNE_RACE_FINAL_ORDER ("spread": 1; else 0),
 * heat_ms from FATUNE_RACE_HEAT_MS (0..FT_EVAL_HEAT_MAX_MS; unset, empty or
 * not a number: FT_RACE_HEAT_MS) when set, rounds from FATUNE_RACE_ROUNDS
 * (1..FT_RACE_ROUNDS_MAX; else FT_RACE_ROUNDS), sweep from
 * FATUNE_RACE_FINAL ("rounds": 0; else 1). */
void ft_race_defaults(struct ft_race_opts *o);

/* Runs one job (run/interleave.h). */
typedef ft_job_run_fn ft_race_run_fn;

struct ft_race;

/* NULL when out of memory. o is copied. */
struct ft_race *ft_race_new(const struct ft_race_opts *o);
void ft_race_free(struct ft_race *rc);

/* The final's rounds (ft_race_opts.rounds as ft_race_new took it;
 * FT_RACE_ROUNDS for a NULL rc): what its rows' reasons count. */
int ft_race_rounds(const struct ft_race *rc);

/* Evaluates one candidate whose full job is `job`: while no full
 * measurement is known, the full job alone; else the quick pass, then the
 * full measurement unless the quick min is over the cut line (then
 * res->status is FT_ST_CUT, with the quick statistics and a reason quoting
 * the numbers): one job, whose runner ends its samples by run/sampling.h,
 * or with two_jobs two.
 * A verdict other than ok (wrong_result, crashed, timeout) is returned as
 * it came. Thread-safe. Returns what run returns. */
int ft_race_evaluate(struct ft_race *rc, const struct ft_job *job, ft_race_run_fn run, void *ctx,
		     struct ft_job_result *res, struct ft_err *err);

/* The drift of the calling thread's GPU (see FT_RACE_ANCHOR_MS) as its
 * latest anchor measured it, for the candidate it has just evaluated: its
 * measured time over this is its time in the race's units. 1 before the
 * first anchor, without anchors, and for a NULL rc. The evaluation thread
 * that called ft_race_evaluate. */
double ft_race_drift(const struct ft_race *rc);

/* A trial's time in the race's units: its median over its race_drift (1
 * when unset). */
double ft_race_time(const struct ft_trial *t);

/* A recorded verdict (`search --replay`) raced as a worker's would be: an ok
 * trial whose recorded min is over the cut line becomes FT_ST_CUT (its
 * recorded times standing for the quick pass), one under it counts as a full
 * measurement and may move the line. NULL rc: nothing. Main thread. */
void ft_race_recorded(struct ft_race *rc, struct ft_trial *t);

/* Offers a finished trial as a finalist (only ok ones with a time count;
 * the race keeps the `finalists` fastest, copied without the log). Main
 * thread. */
void ft_race_offer(struct ft_race *rc, const struct ft_trial *t);

/* The finalists, fastest first, and how many: opts.finalists, or for a
 * heavy final (FT_RACE_HEAT_MIN_US, heat on, not behind its rival) every offered candidate within
 * FT_RACE_HEAT_SPAN of the fastest, opts.finalists at least and
 * FT_RACE_MAX_FINALISTS at most; no more than were offered. */
int ft_race_finalists(const struct ft_race *rc, const struct ft_trial **out);

/* The heat the final gets now: opts.heat_ms for a heavy final (above), else 0. */
double ft_race_heat_ms(const struct ft_race *rc);

/* The final: jobs[i] is finalist i's full job (samples = the search's);
 * a heavy final's first job heats the GPU (heat_ms, above) first;
 * each gets up to `rounds` jobs (ft_race_rounds) of ceil(samples / rounds) samples,
 * run round-robin by ft_interleave (run/interleave.h; after the first
 * round, those over FT_RACE_FINAL_CUT of its fastest leave, when their full
 * measurement was as far behind too: jobs[i] must be finalist i's, in
 * ft_race_finalists' order); out[i] gets the pooled verdict: ok with statistics
 * over every sample it took (rel_err the largest seen), or the first
 * verdict that was not ok; rounds[i] (rounds may be NULL) the rounds it
 * ran; trace (may be NULL) what each round measured of each finalist and
 * where in the round it ran (run/interleave.h). Returns -1 with err when run
 * does. */
int ft_race_final(struct ft_race *rc, const struct ft_job *jobs, int n, ft_race_run_fn run,
		  void *ctx, struct ft_job_result *out, int *rounds,
		  struct ft_interleave_trace *trace, struct ft_err *err);

/* Runs one sweep (run/sweep.h; a runner's ft_runner_sweep). */
typedef int (*ft_race_sweep_fn)(void *ctx, const struct ft_sweep *g, struct ft_sweep_result *out,
				struct ft_err *err);

/* The final as one sweep (opts.sweep, the default): the same finalists,
 * rounds, samples, heat and leaving as ft_race_final, but every finalist
 * held in one job and sampled one after another, the order rotating every
 * sweep (run/sweep.h), so a drift of the GPU's clock falls on all of them
 * alike. Returns 0 with out, rounds and trace as ft_race_final fills them
 * (a sweep counts as one final job); 1 when it was not swept (opts.sweep
 * off, fewer than 2 jobs, a heated final with close rounds - those are the
 * rounds' - or the sweep failed: the caller runs ft_race_final); -1 with
 * err when sweep does. */
int ft_race_final_sweep(struct ft_race *rc, const struct ft_job *jobs, int n, ft_race_sweep_fn sweep,
			void *ctx, struct ft_job_result *out, int *rounds,
			struct ft_interleave_trace *trace, struct ft_err *err);

/* Counts for the search's report. */
struct ft_race_stats {
	long long quick;	/* quick passes run */
	long long full;		/* full measurements run */
	long long cut;		/* candidates cut after the quick pass */
	long long final_jobs;	/* jobs of the final */
	long long stable;	/* full measurements ended stable, before their samples */
	long long anchors;	/* anchor jobs: the best timed again (FT_RACE_ANCHOR_MS) */
	long long heated;	/* finals heated (FT_RACE_HEAT_MS) */
	long long swept;	/* finals run as one sweep (ft_race_final_sweep) */
	long long sweeps_failed;	/* sweeps that failed, then run by rounds */
};
void ft_race_stats(const struct ft_race *rc, struct ft_race_stats *st);

/* "on" | "off" -> 1 | 0; -1 with err (FT_EINPUT) otherwise. */
int ft_race_parse(const char *text, int *on, struct ft_err *err);

#endif
