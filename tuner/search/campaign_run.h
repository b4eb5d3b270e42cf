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

#include "search/campaign_order.h"
#include "search/campaign_types.h"

/* Runs the campaign into db. Returns 0 when every unit ran (individual
 * candidates and units fail as statuses), -1 with err on a failure beyond
 * them (storage, a replay DB without the target, an interrupt:
 * r->interrupted). *r is filled either way; release it with
 * ft_campaign_result_release. */
int ft_campaign_run(struct ft_db *db, const struct ft_campaign_run_opts *o,
		    struct ft_campaign_result *r, struct ft_err *err);

#endif
