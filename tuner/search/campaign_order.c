/* campaign_order.c - the order of a campaign's units under transfer (see campaign_order.h). */
#include "search/campaign_order.h"

#include <math.h>
#include <stdlib.h>

#include "search/transfer.h"

int ft_campaign_same_group(const struct ft_shape *a, const struct ft_shape *b)
{
	return a->d == b->d && a->dtype == b->dtype && a->layout == b->layout &&
	       (long long)a->h * b->h_kv == (long long)b->h * a->h_kv;
}

int ft_campaign_nearest(const struct ft_campaign *c, int u)
{
	const struct ft_shape *a = &c->units[u];
	double best = INFINITY;
	int pick = -1;

	for (int v = 0; v < c->nunits; v++) {
		const struct ft_shape *b = &c->units[v];
		double d;

		if (v == u || !ft_campaign_same_group(a, b))
			continue;
		d = ft_transfer_shape_distance(b->s, b->s_kv, (long long)b->b * b->h, b->causal, b->d, a);
		if (d < best) {
			best = d;
			pick = v;
		}
	}
	return pick;
}

/* A unit's size for choosing a group's representative: log2 of S, S_kv, B*H. */
static double unit_size(const struct ft_shape *u)
{
	return log2((double)u->s) + log2((double)u->s_kv) + log2((double)u->b * u->h);
}

void ft_campaign_order(const struct ft_campaign *c, int transfer, int *order)
{
	int n = c->nunits, k = 0;
	char *placed = calloc((size_t)(n ? n : 1), 1);

	if (!transfer || !placed) {
		for (int u = 0; u < n; u++)
			order[u] = u;
		free(placed);
		return;
	}
	/* one representative per group, in the order the groups first appear:
	 * the member in the middle by size (the lower middle; ties by position) */
	for (int u = 0; u < n; u++) {
		int members = 0, rank, pick = -1;

		if (placed[u])
			continue;
		for (int v = 0; v < n; v++)
			members += ft_campaign_same_group(&c->units[u], &c->units[v]) && !placed[v];
		rank = (members - 1) / 2;
		for (int v = 0; v < n && pick < 0; v++) {
			int below = 0;

			if (!ft_campaign_same_group(&c->units[u], &c->units[v]) || placed[v])
				continue;
			for (int x = 0; x < n; x++)
				if (ft_campaign_same_group(&c->units[u], &c->units[x]) && !placed[x] &&
				    (unit_size(&c->units[x]) < unit_size(&c->units[v]) ||
				     (unit_size(&c->units[x]) == unit_size(&c->units[v]) && x < v)))
					below++;
			if (below == rank)
				pick = v;
		}
		if (pick < 0)
			pick = u;
		order[k++] = pick;
		/* the group is represented: mark every member (placed below) */
		for (int v = 0; v < n; v++)
			if (ft_campaign_same_group(&c->units[u], &c->units[v]))
				placed[v] = 2;
		placed[pick] = 1;
	}
	/* then the neighbours, in the campaign's order */
	for (int u = 0; u < n; u++)
		if (placed[u] == 2)
			order[k++] = u;
	free(placed);
}

