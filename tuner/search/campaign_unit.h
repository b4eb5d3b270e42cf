/* campaign_unit.h - one unit of a campaign: its searches, then its report
 * (for the campaign's drivers: campaign_run.c runs the units one at a time,
 * campaign_lanes.c side by side; campaign_run.h says when each).
 */
#ifndef FT_CAMPAIGN_UNIT_H
#define FT_CAMPAIGN_UNIT_H

#include "search/campaign_types.h"

struct ft_campaign_unit {
	/* in */
	struct ft_db *db;		/* the connection of the calling thread */
	struct ft_progress *progress;	/* the unit's display, NULL: none */
	struct ft_runner **runners;	/* the GPUs of the (single) target this unit
					 * takes; NULL: each target's own */
	int nrunners;
	const struct ft_shape *next;	/* the unit to compile ahead for, NULL: none */
	int position;			/* units ended before this one (the display's ETA) */
	double t0_ms;			/* the campaign's start (ft_mono_ms) */
	/* out */
	struct ft_campaign_outcome *out;	/* room for nsp x ntargets searches */
	int nout;
	int interrupted;
	char why[512];			/* the last space skipped, and why */
};

/* Unit u's searches into cu->out: every target, every space that fits.
 * Returns -1 on a failure beyond the unit (err), also with cu->interrupted
 * on an interrupt. */
int ft_campaign_unit_run(const struct ft_campaign_run_opts *o, int u, struct ft_campaign_unit *cu,
			 struct ft_err *err);

/* Files unit u's searches (rc: ft_campaign_unit_run's) into r: its outcomes,
 * first and count, the tallies; then, when it ran to its end, on_unit. */
void ft_campaign_unit_file(const struct ft_campaign_run_opts *o, int u, int rc,
			   const struct ft_campaign_unit *cu, struct ft_campaign_result *r);

#endif
