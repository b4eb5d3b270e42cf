/* strategy_random.c - a seeded shuffle of the feasible candidates, cut by the budget. */
#include "search/strategy.h"

/* Fisher-Yates over the seeded splitmix64. */
static void shuffle(const struct ft_strategy_ctx *c, struct ft_trial **ts, long long n)
{
	unsigned long long state = c->seed;

	for (long long i = n - 1; i > 0; i--) {
		long long j = (long long)(ft_strategy_rand(&state) % (unsigned long long)(i + 1));
		struct ft_trial *tmp = ts[i];
		ts[i] = ts[j];
		ts[j] = tmp;
	}
}

const struct ft_strategy ft_strategy_random = {
	.name = "random",
	.summary = "a seeded random order, cut by the budget",
	.feed = FT_FEED_ORDER,
	.order = shuffle,
};
