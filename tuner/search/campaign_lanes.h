/* campaign_lanes.h - a campaign's units side by side over one target's GPUs (campaign_run.h says when). */
#ifndef FT_CAMPAIGN_LANES_H
#define FT_CAMPAIGN_LANES_H

#include "search/campaign_types.h"

/* The units in `order` over the single target's GPUs, a lane (thread) per
 * GPU, t0_ms the campaign's start (ft_mono_ms). Returns as ft_campaign_run. */
int ft_campaign_lanes(struct ft_db *db, const struct ft_campaign_run_opts *o, const int *order, double t0_ms,
		      struct ft_campaign_result *r, struct ft_err *err);

#endif
