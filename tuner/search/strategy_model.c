/* strategy_model.c - candidates ranked by the predicted-time model (ft_strategy_predict). */
#include "search/strategy.h"

#include <stdlib.h>

struct keyed {
	double key;
	struct ft_trial *t;
	long long index;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Stable: equal predictions keep the enumeration order. Shared with the
 * guided strategies, whose local search starts from the model's order. */
void ft_strategy_model_order(const struct ft_strategy_ctx *c, struct ft_trial **ts, long long n)
{
	struct keyed *k = malloc((size_t)n * sizeof(*k));

	if (!k)
		return; /* keep enumeration order: still a valid (exhaustive) order */
	for (long long i = 0; i < n; i++) {
		k[i].key = ft_strategy_predict(c->sp, c->arch, c->shape, c->sm_count, ts[i]);
		k[i].t = ts[i];
		k[i].index = i;
	}
	qsort(k, (size_t)n, sizeof(*k), by_key);
	for (long long i = 0; i < n; i++)
		ts[i] = k[i].t;
	free(k);
}

const struct ft_strategy ft_strategy_model = {
	.name = "model",
	.summary = "ranked by a cheap predicted-time model, cut by the budget",
	.feed = FT_FEED_ORDER,
	.order = ft_strategy_model_order,
};
