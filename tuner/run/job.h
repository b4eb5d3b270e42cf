/* job.h - one candidate's GPU job and its verdict: what the search sends a worker and gets back.
 *
 * Fixed-size structs, sent as they are over the worker's pipe (same binary on
 * both ends, worker.c), built by the pipeline, handed to a runner (runner.h)
 * and read by the evaluator (evaluate.c) and the verification arithmetic
 * (verify.c). A job names no local file: its CUBIN is a content key.
 */
#ifndef FT_JOB_H
#define FT_JOB_H

#include "base/arch.h"
#include "base/limits.h"
#include "base/shape.h"
#include "base/trial.h"
#include "space/family.h"

/* What the worker found when it started. */
struct ft_device_info {
	int present;			/* 1: a CUDA device was opened */
	char why_not[256];		/* when !present: "no NVIDIA driver: libcuda.so.1: ..." */
	int driver_version;		/* cuDriverGetVersion, e.g. 13000 */
	struct ft_device_limits lim;	/* device 0 (or $FATUNE_DEVICE) */
};

struct ft_job {
	char cubin_key[17];		/* the CUBIN by content: its key in the CUBIN cache
					 * (ft_compile_key), resolved by the runner where it
					 * runs (the GPU worker: ft_cache_path on its host) */
	char next_cubin_key[17];	/* a hint: the CUBIN of the job the parent expects to
					 * send next ("": none known), which the worker may
					 * load while this job runs (run/modules.h) */
	char config[FT_CONFIG_MAX];	/* the candidate's config text, for messages and the
					 * runners that answer by config (a test's fake) */
	char kernel[FT_NAME_MAX];
	char combine_kernel[FT_NAME_MAX];	/* "" when none */
	struct ft_shape shape;
	long long dynamic_smem;		/* bytes passed at launch; > 48 KB raises the attribute */
	long long threads, grid[3];
	long long combine_threads, combine_grid[3];
	int combine_pdl;		/* 1: combine launched with programmatic dependent launch */
	int num_splits;			/* >= 1; > 1 also launches the combine kernel */
	int abi;			/* the params struct the kernels take: 1 or 2 (fatune_abi.h) */
	struct ft_launch_plan plan;	/* TMA descriptors to encode (family.h; ABI v2) */
	long long workspace_bytes;	/* scratch for the kernel (ABI v2), 0: none */
	int workspace_init;		/* enum ft_workspace_init */
	unsigned long long seed;	/* inputs are a function of (seed, shape) */
	double tolerance;		/* max relative L2 error vs the reference */
	int timing;			/* 0: verify only; 1: verify, then time */
	int warmup;			/* untimed graph launches before sampling */
	double heat_ms;			/* > 0: the warm-up lasts at least this long, the
					 * kernel back to back: the GPU brought to the clock
					 * it holds under sustained load (search/race.h,
					 * FT_RACE_HEAT_MS); 0..FT_EVAL_HEAT_MAX_MS */
	int samples;			/* R: timed samples; the median is reported */
	int launches_per_sample;	/* K: back-to-back calls captured in one CUDA graph */
	int cold;			/* 1: flush L2 before each call (not graph-captured) */
	double sample_max_us;		/* K is lowered so that a sample lasts at most this;
					 * 0: FT_EVAL_SAMPLE_MAX_US (the race's quick pass
					 * asks for less, search/race.h) */
	/* Ending the samples early (run/sampling.h; all 0: every planned sample) */
	int quick_samples;		/* > 0: after this many, stop when their min is over
					 * cut_above_us (the race's quick pass, in the job) */
	double cut_above_us;		/* the race's cut line when the job was sent */
	double stable_rel;		/* > 0: stop once the median's interval is this narrow */
};

/* Where a job's wall time went inside the worker (docs/timing.md, "Where a
 * candidate's time goes"), summed per search into `--json`'s phases.worker. */
enum ft_phase {
	FT_PH_START,		/* the worker's start (driver, context, reference kernels),
				 * charged to its first job */
	FT_PH_LOAD,		/* CUBIN read from the cache, hash checked, module loaded */
	FT_PH_INPUTS,		/* inputs and reference made (only when (shape, seed) changed) */
	FT_PH_VERIFY,		/* poison, verified call, check kernels (both checks) */
	FT_PH_SIZE,		/* the one warm call that sizes K */
	FT_PH_GRAPH,		/* capturing and instantiating (and destroying) the CUDA graph */
	FT_PH_WARMUP,		/* warm-up launches */
	FT_PH_QUICK,		/* the race's quick-pass samples (the race moves them here) */
	FT_PH_SAMPLES,		/* timed samples of a full measurement */
	FT_PH_UNLOAD,		/* module unloaded */
	FT_PH_JOB,		/* the whole job in the evaluator; the rest is the other phases'
				 * complement (host bookkeeping) */
	FT_PH_SHARED,		/* before the job, outside it: waiting for the GPU while a job of
				 * another runner on it ran (a campaign's units side by side on
				 * one GPU take turns, --units-per-gpu; run/runner.h) */
	FT_PH_COUNT
};

/* "load", "inputs", ... : the JSON keys of the phases above. */
extern const char *const ft_phase_names[FT_PH_COUNT];

/* Raw samples a result carries back (the race's final rounds pool them). */
#define FT_RAW_SAMPLES_MAX 64

struct ft_job_result {
	enum ft_status status;		/* FT_ST_OK, _WRONG_RESULT, _CRASHED or _TIMEOUT */
	char reason[512];		/* "" for ok */
	double rel_err;			/* NAN when not computed */
	double max_abs_err;		/* largest |O - reference| over finite outputs, NAN when not computed */
	long long nonfinite;		/* outputs that were NaN/Inf (incl. never written) */
	double t_median_us, t_min_us, t_p90_us, t_spread;	/* NAN when not timed */
	int samples;			/* R taken (ft_eval_plan may cut the job's) */
	int launches_per_sample;	/* K used (ft_eval_plan may lower the job's) */
	double verify_ms;		/* wall time of the verified calls and their checks */
	double time_ms;			/* wall time of timing: sizing call, warm-up, samples */
	int stop;			/* enum ft_samples_stop (sampling.h): why the samples
					 * ended; FT_SAMPLES_CUT: the statistics are the
					 * quick samples' */
	int nraw;			/* raw_us[0..nraw): the samples, unsorted; 0 when
					 * more than FT_RAW_SAMPLES_MAX were taken */
	float raw_us[FT_RAW_SAMPLES_MAX];
	double phase_ms[FT_PH_COUNT];	/* wall time per enum ft_phase (0: none) */
	int loaded_ahead;		/* 1: its module was loaded while the job before ran
					 * (job.next_cubin_key, run/modules.h) */
};

/* Adds from's phase times to into's (the race and the final sum the jobs of
 * one candidate); with quick, from's samples count as quick-pass samples. */
void ft_phases_add(struct ft_job_result *into, const struct ft_job_result *from, int quick);

/* The largest errors seen into into: from's rel_err and max_abs_err where
 * they are larger, or not a number, or into's are not a number yet (the
 * rounds and the sweep pool one candidate's jobs this way). */
void ft_errors_add(struct ft_job_result *into, const struct ft_job_result *from);

/* "Not measured": every NaN field NAN, status ok, reason "". */
void ft_job_result_init(struct ft_job_result *r);

/* A runner's verdict into trial t: status, reason, errors, times, samples,
 * K, and the stage (timed when an ok or cut verdict has a time, else
 * verified). The device is the caller's to set. */
void ft_trial_take(struct ft_trial *t, const struct ft_job_result *res);

#endif
