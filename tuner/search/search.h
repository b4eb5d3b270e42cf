/* search.h - one search: a space's candidates for one shape on one target, stored as it goes.
 *
 * The unit `fatune search` runs once per space and a campaign runs once per
 * shape x space: record the run, run the pipeline (model check, compile and,
 * with a worker, verify and time), commit every trial as it finishes
 * (rejections by model in small batches), refresh the best row, record how the
 * run ended. An interrupted search loses at most the candidates in flight;
 * run again with the same key, it skips what is already finished.
 *
 * The search key hashes everything a trial's verdict depends on (space and
 * template hashes, arch, device, the whole shape, dtype, causal, timing mode,
 * NVRTC version, seed, the runner's search_tag): a change starts a new search.
 */
#ifndef FT_SEARCH_H
#define FT_SEARCH_H

#include "db/db.h"
#include "search/pipeline.h"
#include "search/transfer.h"
#include "ui/progress.h"

struct ft_search_opts {
	const struct ft_arch *arch;	/* the limits that govern (the device's when timed) */
	const char *device;		/* the GPU's name, "" when nothing is timed */
	const char *driver_version;	/* "" without a driver */
	struct ft_runner **runners;	/* what evaluates (run/runner.h): one per GPU, or one
					 * replay or test runner; nrunners 0: no timing */
	int nrunners;
	int sm_count;			/* SMs of the device (model strategy), 0 unknown */
	int jobs;			/* compile threads */
	const struct ft_strategy *strategy;	/* strategy.h; NULL: exhaustive */
	const struct ft_transfer_pool *seed_pool;	/* transfer: more best rows to seed from
							 * (--seeds-from); NULL: none */
	long long seed;			/* inputs and strategy */
	long long budget_n;		/* candidates, -1 none */
	double budget_s;		/* seconds, 0 none */
	const char *timing;		/* "warm" or "cold" */
	int samples, launches;		/* R and K of the timing method */
	int timeout_ms;			/* watchdog per candidate */
	struct ft_race_opts race;	/* racing (race.h): quick pass, cut, final */
	int fresh;			/* redo trials finished by an earlier run of this search */
	const char *campaign;		/* recorded with the run, NULL: none */
	double incumbent_us;		/* transfer: the unit's best so far in another space on
					 * this GPU model (campaign_unit.c), 0: none; this search
					 * stops once it cannot beat it (ft_guide_incumbent) */
	struct ft_progress *progress;	/* counts every trial; NULL: none */
	void (*compiles_done)(void *ctx);	/* pipeline.h's; NULL: none */
	void *compiles_ctx;
};

struct ft_search_result {
	int timed;			/* candidates were verified and timed */
	long long run_id;
	char search_key[17];
	char template_hash[17];
	struct ft_pipeline_stats st;
	long long counts[FT_ST_COUNT];	/* this search's trials by status, incl. skipped */
	long long done;
	struct ft_trial top[2];		/* best and runner-up (incl. resumed); NAN when none */
	int interrupted;		/* stopped by SIGINT/SIGTERM: run the same search again */
	int nseeds;			/* transfer: configs of tuned neighbours tried first */
	int nseeds_other;		/* ... of them, tuned on another GPU model */
	int finals;			/* the race's final: finalists measured again */
	double db_wait_ms;		/* waited for the database's write lock (ft_db_wait_ms) */
};

/* Runs one search of sp for shape and stores it in db. Returns 0 when it ran
 * to the end (individual candidates fail as trial statuses), -1 with err
 * otherwise (bad expression, storage failure, interrupt: res->interrupted).
 * *res is filled either way. */
int ft_search_run(struct ft_db *db, const struct ft_space *sp, const struct ft_shape *shape,
		  const struct ft_search_opts *o, struct ft_search_result *res, struct ft_err *err);

#endif
