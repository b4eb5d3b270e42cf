/* strategy_transfer.c - guided, started from the best configs of the nearest shapes
 * already tuned (transfer.h), stopping early once it stops improving. */
#include "search/strategy.h"

const struct ft_strategy ft_strategy_transfer = {
	.name = "transfer",
	.summary = "guided, from the best configs of the nearest tuned shapes; stops early",
	.feed = FT_FEED_GUIDE,
	.transfer = 1,	/* the guide starts from the seeds; the rest in enumeration order */
};
