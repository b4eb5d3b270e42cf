/* strategy_guided.c - a local search: a few random picks, then always the untried
 * candidate nearest the best measured so far (the guide, strategy.c). */
#include "search/strategy.h"

const struct ft_strategy ft_strategy_guided = {
	.name = "guided",
	.summary = "a few random picks, then the untried candidate nearest the best so far",
	.feed = FT_FEED_GUIDE,
	.order = ft_strategy_model_order,	/* the guide breaks ties by the model */
};
