/* campaign_order.h - the order a campaign's units run in, and which units seed each other (transfer). */
#ifndef FT_CAMPAIGN_ORDER_H
#define FT_CAMPAIGN_ORDER_H

#include "space/campaign.h"

/* The order a campaign's units run in: order[0..nunits) is a permutation
 * of the unit indices. Without transfer, the campaign's own order. With it,
 * first one representative of each group of units that can seed each other
 * (same head dim, dtype, layout and H/H_kv; transfer.h), the middle one by
 * log2 S + log2 S_kv + log2 B*H, groups in the order they first appear; then
 * every other unit in the campaign's order, each seeded by the tuned units
 * of its group. */
void ft_campaign_order(const struct ft_campaign *c, int transfer, int *order);

/* Units a and b can seed each other under transfer (transfer.h): same head
 * dim, dtype, layout and grouped-query ratio; causal may differ. */
int ft_campaign_same_group(const struct ft_shape *a, const struct ft_shape *b);

/* The unit of u's group nearest to u by transfer's distance
 * (ft_transfer_shape_distance: the size steps, plus FT_TRANSFER_CAUSAL_COST
 * across the causal flag), ties to the earlier unit; -1 when no other unit
 * is in u's group. */
int ft_campaign_nearest(const struct ft_campaign *c, int u);

#endif
