/* runner.h - what evaluates a search's candidates: the runner interface and the runner table.
 *
 * The pipeline (search/pipeline.c) never knows what stands behind a runner. A
 * runner is opened by its table name with a struct ft_runner_cfg, says what it
 * is (struct ft_runner_info), evaluates jobs, and is closed. The table (one
 * line per runner) is FT_RUNNERS in run/runner.c: `gpu` (run/runner_gpu.c, a
 * worker process on one GPU, run/worker.c: real verification and timing,
 * crashes and hangs isolated) and `replay` (search/replay.c, the verdicts and
 * times recorded in a database, `search --replay DB`: no GPU, no compile),
 * and whatever the table lists besides (tuner/README.md lists them all).
 *
 * Adding a runner: one file defining `const struct ft_runner_ops
 * ft_runner_<name>` and one line in FT_RUNNERS, like the families
 * (space/family.c). A runner defined in a higher folder (replay reads the
 * database) is named by the table only; no header of this folder includes it.
 *
 * The contract, per op:
 *
 *   open(cfg)      starts the runner: a worker process, a table loaded from a
 *                  database, nothing. Fills *info. -1 with err (FT_EINPUT for a
 *                  bad cfg: a recording without the target, a bad spec;
 *                  FT_EFAIL when fatune itself failed). A GPU runner on a
 *                  machine without a GPU opens (info->dev.present == 0) and
 *                  evaluates nothing: the caller checks present.
 *   answer(t)      optional; main thread, in the order the strategy sends (so a
 *                  seed gives the same run): 1 when the runner gives the trial
 *                  its final stage and verdict itself, from a record, before
 *                  it is compiled (replay answers every candidate: not in the
 *                  recording is a verdict too); 0: the candidate goes on to
 *                  compile and evaluate. An answered trial is raced as a
 *                  recorded verdict (ft_race_recorded).
 *   evaluate(job)  optional (NULL: every candidate is answered); one job, on
 *                  one thread at a time per opened runner (the pipeline runs
 *                  one evaluation thread per runner, concurrently). The job
 *                  names its CUBIN by content key (job->cubin_key, the CUBIN
 *                  cache's key): the runner resolves it (the GPU runner in
 *                  its worker, through the cache of the host it runs on).
 *                  Returns 0 with a verdict in *res: ok (timed when
 *                  job->timing, with t_median_us etc.), wrong_result, crashed
 *                  or timeout - a candidate's failure is a verdict, never an
 *                  error; -1 with err only when fatune itself failed (the
 *                  run stops and the candidate is stored nowhere). Racing
 *                  (search/race.c) calls it with quick jobs (fewer samples,
 *                  job->sample_max_us lower) and full ones; a runner does not
 *                  know it is raced and never returns `cut`. Runners opened
 *                  on one GPU take turns (the gpu runner holds a lock per
 *                  GPU ordinal around a job), so that no two jobs ever time
 *                  at once on one GPU; the wait is the job's FT_PH_SHARED
 *                  phase (run/job.h).
 *   sweep(g)       optional; like evaluate, several candidates in one job,
 *                  one sample of each in turn (run/sweep.h: the race's final
 *                  by default). Returns 0 with *out measured, or
 *                  failed (out->failed: no verdict, the caller times them
 *                  otherwise), -1 with err as evaluate. NULL: ft_runner_sweep
 *                  emulates it with a job per sample through evaluate
 *                  (ft_sweep_by_jobs; the tests' fake runner does the same in
 *                  its own op, whose @nosweep fails every sweep).
 *   hold(on)       optional; the thread that evaluates the runner's jobs. on 1:
 *                  the GPU is this runner's until hold(0): the jobs of other
 *                  runners on its GPU wait, this runner's own jobs run
 *                  (the race's final holds it through its rounds, so that no
 *                  other unit's job lands between two finalists' samples).
 *                  Returns the ms waited for the GPU (FT_PH_SHARED). Runners
 *                  that share nothing have none (ft_runner_hold returns 0).
 *   close()        stops what open started. NULL-safe through ft_runner_close.
 *   leave()        optional; close for a process about to exit: what open
 *                  started may end on its own after it (the gpu runner does
 *                  not wait for its worker's exit, a CUDA context teardown:
 *                  run/worker.h ft_worker_leave). NULL: close. Through
 *                  ft_runner_leave.
 *
 * A runner whose times are not measurements of its device (info.measured 0:
 * a replay, a test's made-up times) has its runs stored as mode `replayed`, which export refuses
 * without --allow-replayed and which no replay takes as a recording.
 */
#ifndef FT_RUNNER_H
#define FT_RUNNER_H

#include "base/err.h"
#include "base/shape.h"
#include "base/trial.h"
#include "run/job.h"
#include "run/sweep.h"

/* Most runners one pipeline drives (one per GPU of a host). */
#define FT_MAX_RUNNERS 16

/* What a runner is, filled by open. */
struct ft_runner_info {
	const char *name;		/* its table name: "gpu", "replay", ... */
	char device[128];		/* the device its times are of: the GPU's name, the
					 * recording's ("" unknown), or the runner's name */
	int device_index;		/* the GPU's ordinal, -1: none */
	int cc;				/* compute capability major*10+minor, 0: unknown */
	int sm_count;			/* 0: unknown */
	int measured;			/* 1: times are measured here and now; 0: replayed
					 * from a recording or made up (stored as replayed) */
	int needs_cubin;		/* 1: evaluate loads the job's CUBIN, so the pipeline
					 * compiles and caches it first; 0: it never does (no
					 * compile, no cache check) */
	const char *search_tag;		/* what the search key records of the runner (search.c):
					 * "no" for a GPU, "yes" for a replay (the values the
					 * key held before runners existed), else the name */
	struct ft_device_info dev;	/* gpu: what its worker found (present 0: no GPU
					 * here, why_not says why); others: present 0 */
};

/* What open may need; each runner reads its own fields, the rest are ignored. */
struct ft_runner_cfg {
	/* gpu */
	int device;			/* GPU ordinal, -1: $FATUNE_DEVICE or 0 */
	const char *reference_path;	/* kernel_templates/reference.cu */
	int start_timeout_ms;		/* the worker's hello */
	/* replay */
	const char *db_path;		/* the recording */
	const char *arch;		/* the target the trials were recorded for */
	const struct ft_shape *shape;
	const char *template_name;	/* NULL: any template */
	/* any */
	const char *spec;		/* the runner's argument, the text after "NAME:" in
					 * --runner NAME:SPEC ("" or NULL: none) */
};

struct ft_runner_ops {
	const char *name;
	const char *summary;		/* one line, for messages and docs */
	int (*open)(void **ctx, const struct ft_runner_cfg *cfg, struct ft_runner_info *info,
		    struct ft_err *err);
	int (*answer)(void *ctx, struct ft_trial *t);
	int (*evaluate)(void *ctx, const struct ft_job *job, int timeout_ms, struct ft_job_result *res,
			struct ft_err *err);
	int (*sweep)(void *ctx, const struct ft_sweep *g, int timeout_ms, struct ft_sweep_result *out,
		     struct ft_err *err);
	double (*hold)(void *ctx, int on);
	void (*close)(void *ctx);
	void (*leave)(void *ctx);
};

/* The table entry named `name`, or NULL with FT_EINPUT listing the names. */
const struct ft_runner_ops *ft_runner_find(const char *name, struct ft_err *err);

/* An opened runner. */
struct ft_runner;

/* Opens the runner `name` ("NAME:SPEC" passes SPEC as cfg->spec when
 * cfg->spec is NULL). -1 with err (the op's, prefixed by nothing). */
int ft_runner_open(struct ft_runner **out, const char *name, const struct ft_runner_cfg *cfg,
		   struct ft_err *err);
const struct ft_runner_info *ft_runner_info(const struct ft_runner *r);
/* The op's answer; 0 when the runner has none. Main thread. */
int ft_runner_answer(struct ft_runner *r, struct ft_trial *t);
/* 1 when the runner evaluates jobs (it has an evaluate op). */
int ft_runner_evaluates(const struct ft_runner *r);
/* The op's evaluate (res initialised first, ft_job_result_init). */
int ft_runner_evaluate(struct ft_runner *r, const struct ft_job *job, int timeout_ms,
		       struct ft_job_result *res, struct ft_err *err);
/* The op's sweep, or its emulation by jobs (the contract above); -1 with
 * err also for a runner that evaluates no jobs. */
int ft_runner_sweep(struct ft_runner *r, const struct ft_sweep *g, int timeout_ms,
		    struct ft_sweep_result *out, struct ft_err *err);
/* The op's hold (see the contract above): ms waited; 0 without the op. */
double ft_runner_hold(struct ft_runner *r, int on);
void ft_runner_close(struct ft_runner *r);
/* ft_runner_close for a process about to exit (the op leave above). */
void ft_runner_leave(struct ft_runner *r);

/* The devices among rs[0..n): runners on one GPU ordinal count once
 * (--units-per-gpu opens several per GPU), one without a GPU (device_index
 * -1) counts on its own. */
int ft_runners_devices(struct ft_runner *const *rs, int n);

#endif
