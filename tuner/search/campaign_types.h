/* campaign_types.h - what a campaign run takes and gives: its targets, options, outcomes and result
 * (campaign_run.h runs it; campaign_unit.h and campaign_lanes.h are its parts).
 */
#ifndef FT_CAMPAIGN_TYPES_H
#define FT_CAMPAIGN_TYPES_H

#include "space/campaign.h"
#include "search/search.h"

/* Where a campaign's searches run: one GPU model and its workers, or no GPU. */
struct ft_campaign_target {
	const struct ft_arch *arch;	/* the limits that govern */
	const char *device;		/* the model's name, "" when nothing is timed */
	const char *driver_version;	/* "" without a driver */
	struct ft_runner **runners;	/* the model's GPUs, one gpu runner each */
	int nrunners;			/* 0: no GPU (feasibility only, or a unit runner) */
	int sm_count;			/* 0 unknown */
};

struct ft_prefetch;

/* The outcome of one search (one unit x target x space), for the summary. */
struct ft_campaign_outcome {
	const struct ft_space *sp;
	char device[128];		/* the GPU model ("" when nothing was timed) */
	struct ft_search_result res;
	long long prefetched;		/* CUBINs compiled during this search's GPU tail for
					 * the next search (search/prefetch.h), counted at the
					 * unit's end: those still running then are not */
	const struct ft_prefetch *pf;	/* that prefetch until the unit's end (not owned) */
	double started_ms, ended_ms;	/* the search's start and end, since the campaign's */
	int gpus;			/* GPUs it ran on (runners on one GPU count once), 0: none */
	int jobs;			/* its compile threads (search.h jobs) */
};

struct ft_campaign_run_opts {
	const struct ft_campaign *camp;
	struct ft_space *const *sps;	/* the spaces to try on every unit */
	int nsp;
	const struct ft_campaign_target *targets;
	int ntargets;			/* >= 1 */
	const char *unit_runner;	/* non-NULL: the runner (runner.h table name) opened
					 * per search with unit_cfg, the unit's shape, the
					 * first target's arch and the space's name as the
					 * template (replay: a recording per shape and
					 * template), for every target */
	struct ft_runner_cfg unit_cfg;
	struct ft_search_opts search;	/* the template of every search: arch, device
					 * and runners are filled per target */
	int no_prefetch;		/* 1: no search compiles ahead for the next one
					 * (search/prefetch.h; 0, the default: each does) */
	int one_at_a_time;		/* 1: one unit at a time, each on every GPU of its
					 * target (0, the default: side by side where
					 * campaign_run.h says) */
	/* A space skipped for unit u (why: the reason). May be NULL. */
	void (*on_skip)(void *ctx, int u, const struct ft_space *sp, const char *why);
	/* Unit u's searches ended (n may be 0: every space skipped, why says the
	 * last reason). Not called for a unit an interrupt cut short. Side by
	 * side: called from a lane's thread, one call at a time. */
	void (*on_unit)(void *ctx, int u, const struct ft_campaign_outcome *out, int n,
			const char *why);
	void *ctx;
};

struct ft_campaign_result {
	struct ft_campaign_outcome *out;	/* every search, unit by unit (in the order
						 * the units ended) */
	int nout;
	int *first, *count;		/* unit u's outcomes: out[first[u] .. + count[u]) */
	int searched;			/* searches started */
	int interrupted;		/* stopped by SIGINT/SIGTERM: run again to resume */
	int tuned;			/* units with a verified best */
	int untuned_timed;		/* units timed without any verified candidate */
	double wall_ms;
};

void ft_campaign_result_release(struct ft_campaign_result *r);

/* The outcome with the fastest verified best among out[0..n), -1 if none. */
int ft_campaign_winner(const struct ft_campaign_outcome *out, int n);

#endif
