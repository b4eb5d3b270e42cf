/* campaign_run.h - a campaign driven over the search: units x GPU models x spaces.
 *
 * The driver above the pipeline: for each unit of a campaign (campaign.h), in
 * order (with --strategy transfer: one representative of each head-dim group
 * first, see ft_campaign_order), for each target (one per GPU model; a single untimed or replayed
 * target without GPUs), for each space that can run the unit there, one
 * search (search.h) stored as it goes. A space that cannot run a unit (its
 * family needs another arch, its ABI cannot express the shape) is skipped and
 * the reason handed to on_skip. One progress display (progress.h) spans the
 * whole campaign. Each unit's outcomes go to on_unit as soon as its searches
 * end, so a long campaign reports as it goes.
 *
 * Units side by side: with several GPUs of one model (one target, no unit
 * runner) and parallel_units, the units run in lanes (campaign_lanes.c), one
 * per GPU: a lane takes the next unit that can start (in the order above;
 * under transfer, a neighbour only once its group's representative is done,
 * so that it starts from its seeds), with its share of the GPUs that are
 * free (free GPUs / units that can start, at least one: the only unit that
 * can start takes every free GPU, as one at a time would), on a database
 * connection of its own. A campaign is compile-bound from a cold cache and a
 * search leaves the compile threads idle between its rounds: side by side,
 * one unit's compiles fill the other's gaps. Which unit ran where and when:
 * each outcome's started_ms, ended_ms and gpus.
 *
 * Interrupts (SIGINT/SIGTERM, see base/interrupt.h) stop the search in
 * flight: its finished trials are stored, the campaign stops, and running it
 * again skips every finished trial, so it resumes at the first unit not yet
 * tuned. kill -9 loses at most the candidates in flight (search.h).
 *
 * Nothing here prints: the command (cmd_search.c) reports through the hooks.
 */
#ifndef FT_CAMPAIGN_RUN_H
#define FT_CAMPAIGN_RUN_H

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
	int gpus;			/* GPUs (runners) it ran on, 0: none */
};

struct ft_campaign_run_opts {
	const struct ft_campaign *camp;
	struct ft_space *const *sps;	/* the spaces to try on every unit */
	int nsp;
	const struct ft_campaign_target *targets;
	int ntargets;			/* >= 1 */
	const char *unit_runner;	/* non-NULL: the runner (runner.h table name) opened
					 * per unit with unit_cfg, its shape, the first
					 * target's arch and sps[0]'s name as the template
					 * (replay: a recording per shape), for every target */
	struct ft_runner_cfg unit_cfg;
	struct ft_search_opts search;	/* the template of every search: arch, device
					 * and runners are filled per target */
	int no_prefetch;		/* 1: no search compiles ahead for the next one
					 * (search/prefetch.h; 0, the default: each does) */
	int one_at_a_time;		/* 1: one unit at a time, each on every GPU of its
					 * target (0, the default: side by side, above) */
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

/* Runs the campaign into db. Returns 0 when every unit ran (individual
 * candidates and units fail as statuses), -1 with err on a failure beyond
 * them (storage, a replay DB without the target, an interrupt:
 * r->interrupted). *r is filled either way; release it with
 * ft_campaign_result_release. */
int ft_campaign_run(struct ft_db *db, const struct ft_campaign_run_opts *o,
		    struct ft_campaign_result *r, struct ft_err *err);

void ft_campaign_result_release(struct ft_campaign_result *r);

/* The outcome with the fastest verified best among out[0..n), -1 if none. */
int ft_campaign_winner(const struct ft_campaign_outcome *out, int n);

/* The order a campaign's units run in: order[0..nunits) is a permutation
 * of the unit indices. Without transfer, the campaign's own order. With it,
 * first one representative of each group of units that can seed each other
 * (same head dim, dtype, layout and H/H_kv; transfer.h), the middle one by
 * log2 S + log2 S_kv + log2 B*H, groups in the order they first appear; then
 * every other unit in the campaign's order, each seeded by the tuned units
 * of its group. */
void ft_campaign_order(const struct ft_campaign *c, int transfer, int *order);

#endif
