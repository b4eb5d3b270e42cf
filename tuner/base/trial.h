/* trial.h - one candidate's outcome: the unit the pipeline produces and the DB stores.
 *
 * Every candidate ends as a trial with a typed status, never as an error that
 * stops the search (after Kernel Tuner's InvalidConfig / CompilationFailedConfig /
 * RuntimeFailedConfig).
 */
#ifndef FT_TRIAL_H
#define FT_TRIAL_H

#include "base/limits.h"

enum ft_status {
	FT_ST_REJECTED_CONSTRAINT = 0,	/* a space constraint or an arch limit (threads) is false */
	FT_ST_REJECTED_SMEM,		/* shared memory over the arch's limit (model or compiled) */
	FT_ST_COMPILE_FAILED,		/* NVRTC failed; log kept */
	FT_ST_SPILLS,			/* compiled but spills registers / uses local memory */
	FT_ST_COMPILED,			/* feasible and compiled; not timed (no GPU for this arch) */
	FT_ST_OK,			/* verified and timed */
	FT_ST_WRONG_RESULT,		/* ran, but the output is wrong, unwritten or not finite */
	FT_ST_CRASHED,			/* faulted or killed its worker process */
	FT_ST_TIMEOUT,			/* ran past the watchdog */
	FT_ST_COUNT
};

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
};

struct ft_trial {
	char config[FT_CONFIG_MAX];	/* canonical "NAME=V,..." (ft_config_format) */
	long long values[FT_MAX_PARAMS];	/* the same, parallel to the space's params */
	enum ft_status status;
	char reason[512];		/* why it was rejected / failed; "" for ok */
	char *log;			/* compile log or NULL; owned by whoever filled it */
	char compile_key[17];		/* CUBIN cache key (hex), "" if never compiled */

	long long smem_model;		/* the space's smem_bytes formula */
	long long threads, grid[3];	/* launch geometry */
	long long combine_threads, combine_grid[3];
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
};

/* Resets *t to "nothing known": NAN times, -1 resources, empty strings. */
void ft_trial_init(struct ft_trial *t);

#endif
