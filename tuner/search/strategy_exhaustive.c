/* strategy_exhaustive.c - every feasible candidate, in enumeration order, streamed. */
#include "search/strategy.h"

const struct ft_strategy ft_strategy_exhaustive = {
	.name = "exhaustive",
	.summary = "every feasible candidate, in enumeration order (streamed)",
	.feed = FT_FEED_STREAM,
};
