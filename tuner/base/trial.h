/* trial.h - one candidate's outcome: the unit the pipeline produces and the DB stores.
 *
 * Every candidate ends as a trial with a typed status, never as an error that
 * stops the search (after Kernel Tuner's InvalidConfig / CompilationFailedConfig /
 * RuntimeFailedConfig). Next to its status a trial carries its stage: how far
 * the candidate got. Both are stored (trials.stage, trials.status); nothing
 * recovers the stage from the status, the registers or the reason text.
 *
 * The states (SQLite pager.c style). A trial moves down this ladder; each
 * step either ends it with a verdict or lets it go on:
 *
 *      ENUMERATED  produced by the space (ft_enum_next), nothing judged
 *          |
 *          |  ft_feasible_model (compile/feasibility.c)
 *          v
 *      MODEL ------> rejected_constraint | rejected_smem        (ends)
 *          |  \----> accepted        check without --compile     (ends)
 *          |   \---> not_in_recording  a replay has no record    (ends)
 *          |
 *          |  compile_one + ft_feasible_compiled (search/pipeline.c, feasibility.c)
 *          v
 *      COMPILED ---> compile_failed | spills | rejected_smem
 *          |         | rejected_constraint (registers)           (ends)
 *          |  \----> compiled        no runner takes it           (ends)
 *          |
 *          |  evaluate_one (search/pipeline.c): the runner's evaluate (run/runner.h)
 *          v
 *      VERIFIED ---> wrong_result | crashed | timeout            (ends)
 *          |  \----> ok              verified, not timed (bench's verify-only jobs)
 *          v
 *      TIMED ------> ok              verified and timed           (ends)
 *          \-----> cut             timed by the race's quick pass only, slower
 *                                   than the margin over the best (ends)
 *
 * Transitions, and the function that makes each:
 *
 *   from        to          status (verdict)                      made by
 *   ENUMERATED  MODEL       rejected_constraint, rejected_smem    ft_feasible_model
 *   ENUMERATED  MODEL       accepted                              ft_feasible_model (returns 1)
 *   MODEL       COMPILED    compile_failed                        compile_one
 *   MODEL       COMPILED    rejected_smem, rejected_constraint,   ft_feasible_compiled
 *                           spills, compile_failed (smem formula)
 *   MODEL       COMPILED    compiled                              ft_feasible_compiled (returns 1)
 *   MODEL       MODEL       not_in_recording                      replay runner's answer
 *   MODEL       (recorded)  the recorded stage and verdict        replay runner's answer
 *   COMPILED    VERIFIED    wrong_result, crashed, timeout, ok    evaluate_one (runner verdict)
 *   COMPILED    TIMED       ok                                    evaluate_one (runner verdict)
 *   MODEL       VERIFIED,   as the two rows above, for a runner   evaluate_one (runner verdict)
 *               TIMED       that loads no CUBIN (needs_cubin 0)
 *   COMPILED    TIMED       cut                                   ft_race_evaluate (search/race.c)
 *   MODEL       TIMED       cut (a recorded ok over the line)     ft_race_recorded
 *
 * A trial with status accepted (MODEL) or compiled (COMPILED) is still going:
 * the pipeline routes it by ft_trial_pending - accepted goes to the compile
 * threads, compiled to the GPU workers when there are any - and when no
 * further step runs, that is its final verdict. A replay (`search --replay`)
 * gives each accepted candidate the recording's stage and verdict as it is
 * sent (send, search/pipeline.c; the runner's answer, run/runner.h), so it
 * skips compiling and running. 'accepted' is never stored
 * (only `check` without --compile ends there).
 */
#ifndef FT_TRIAL_H
#define FT_TRIAL_H

#include "base/limits.h"

/* How the reason of a race final's ok row starts (search/race.h): such a row
 * times the finalists of its run together, interleaved, and while they are
 * among the latest trials they alone decide their run's part of the best
 * (db_query.c, search.c); every other ok row's reason is "". Stored: a
 * database keeps this text. */
#define FT_FINAL_REASON "race final:"

struct ft_trial;

enum ft_status {
	FT_ST_REJECTED_CONSTRAINT = 0,	/* a space constraint or an arch limit (threads) is false */
	FT_ST_REJECTED_SMEM,		/* shared memory over the arch's limit (model or compiled) */
	FT_ST_COMPILE_FAILED,		/* NVRTC failed; log kept */
	FT_ST_SPILLS,			/* compiled but spills registers / uses local memory */
	FT_ST_COMPILED,			/* compiled and feasible after ptxas; not run (no runner) */
	FT_ST_OK,			/* verified and timed */
	FT_ST_WRONG_RESULT,		/* ran, but the output is wrong, unwritten or not finite */
	FT_ST_CRASHED,			/* faulted or killed its worker process */
	FT_ST_TIMEOUT,			/* ran past the watchdog */
	FT_ST_NOT_IN_RECORDING,		/* replay: the recording has no result for this config */
	FT_ST_ACCEPTED,			/* passed the model check, not compiled (check only;
					 * never stored) */
	FT_ST_CUT,			/* verified, timed only by the race's quick first pass
					 * and slower than the best by more than the margin:
					 * its time is that rough one (search/race.h) */
	FT_ST_COUNT
};

/* How far a trial got: the ladder above. Stored as its name. */
enum ft_stage {
	FT_STAGE_ENUMERATED = 0,	/* produced by the space, nothing judged */
	FT_STAGE_MODEL,			/* judged by the model before compiling */
	FT_STAGE_COMPILED,		/* compiled (or failed to), judged on ptxas's report */
	FT_STAGE_VERIFIED,		/* ran and was checked against the reference */
	FT_STAGE_TIMED,			/* verified and timed */
	FT_STAGE_COUNT
};

/* "model", "compiled", ...; parse returns -1 for an unknown name. */
const char *ft_stage_name(enum ft_stage s);
int ft_stage_parse(const char *name, enum ft_stage *out);

/* 1 when t's verdict is not final if a later step runs: accepted at MODEL,
 * compiled at COMPILED (see the ladder above). */
int ft_trial_pending(const struct ft_trial *t);

/* "rejected_constraint", "ok", ...; parse returns -1 for an unknown name. */
const char *ft_status_name(enum ft_status s);
int ft_status_parse(const char *name, enum ft_status *out);

/* Resource usage as reported by ptxas for one kernel; -1 where unknown. */
struct ft_resources {
	int regs;		/* registers per thread */
	int smem_static;	/* bytes of static __shared__ */
	int stack_bytes;	/* stack frame (local memory) bytes */
	int spill_stores;	/* bytes */
	int spill_loads;	/* bytes */
	int wgmma_serialized;	/* ptxas's note that it serialized this kernel's
				 * wgmma.mma_async (Hopper): the note's number (7520
				 * for "(C7520) Potential Performance Loss: ...
				 * serialized"), 1 for such a note without a number,
				 * 0 for none (-1 unknown) */
};

struct ft_trial {
	char config[FT_CONFIG_MAX];	/* canonical "NAME=V,..." (ft_config_format) */
	long long values[FT_MAX_PARAMS];	/* the same, parallel to the space's params */
	enum ft_status status;		/* the verdict at its stage */
	enum ft_stage stage;		/* how far it got (the ladder above) */
	char reason[512];		/* why it was rejected / failed; "" for ok */
	char *log;			/* compile log, a final row's rounds (search/pipeline.c)
					 * or NULL; owned by whoever filled it */
	char compile_key[17];		/* CUBIN cache key (hex), "" if never compiled */

	long long smem_model;		/* the space's smem_bytes formula */
	long long threads, grid[3];	/* launch geometry */
	long long combine_threads, combine_grid[3];
	int combine_pdl;		/* 1: the combine kernel is launched with programmatic
					 * dependent launch (launch.combine_pdl); not stored */
	long long workspace_bytes;	/* the space's workspace.bytes, 0 when none */
	long long define_values[FT_MAX_SPACE_DEFINES];	/* compile.defines, parallel to the space's */
	struct ft_resources res;	/* main kernel, after compiling */
	double compile_ms;		/* NAN if not compiled here (0 on a cache hit) */

	int device_index;		/* the GPU that ran it, -1 if none */
	char device[96];		/* its name, "" if none */
	double rel_err;			/* relative L2 error vs reference, NAN if not run */
	double t_median_us;		/* per call, NAN if not timed */
	double t_min_us;
	double t_p90_us;
	double t_spread;		/* (p90 - min) / median */
	int samples;			/* timing samples taken */
	int launches_per_sample;	/* calls per sample (not stored: follows from the duration) */
	long long run_id;		/* the run that stored it, as read back from a
					 * database (0: not read back) */
	double race_drift;		/* the GPU's drift when it was timed, by the race's
					 * anchor (search/race.h; not stored): 0 or 1 none */
};

/* Resets *t to "nothing known": NAN times, -1 resources, empty strings. */
void ft_trial_init(struct ft_trial *t);

#endif
