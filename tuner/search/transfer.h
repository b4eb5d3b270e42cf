/* transfer.h - the transfer strategy's seeds: best configs of the nearest shapes already tuned.
 *
 * In a campaign most shapes are near one already tuned, and near shapes have
 * near best configs. `--strategy transfer` starts each search from the best
 * configs stored in the database for the nearest shapes, evaluates those
 * first, continues as the guided strategy does (the untried candidate nearest
 * the best so far) and stops early:
 *
 *   neighbours: best rows of the same arch, device, space (template) and
 *     dtype, with the same head dim D, KV layout and grouped-query ratio H/H_kv;
 *   distance:   |log2 S - log2 S'| + |log2 S_kv - log2 S_kv'| + |log2 B*H - log2 B'*H'|,
 *     plus FT_TRANSFER_CAUSAL_COST when the causal flag differs (a shape of
 *     the other flag is used only when none of the same flag is nearer);
 *   seeds:      the best configs of the FT_TRANSFER_NEIGHBOURS nearest (ties
 *     in the order stored), without repeats;
 *   stop:       once FT_TRANSFER_PATIENCE results in a row, after the seeds,
 *     have not made the best more than FT_TRANSFER_GAIN faster.
 *
 * With no neighbour (the first shape of a campaign), transfer is the guided
 * strategy and does not stop early. Measured by replay with
 * `bench/strategies.py --transfer` (docs/perf.md) over a recorded H100
 * campaign of 12 units (tests/data/recorded_h100_campaign.sql): with a
 * patience of 12, two of the 12 targets stopped at 1.036x and 1.060x of their
 * optimum; with 24 every target ends at its optimum, for 2-3 more
 * evaluations to within 5% on average (which the patience does not change)
 * and 12 more spent per shape.
 */
#ifndef FT_TRANSFER_H
#define FT_TRANSFER_H

#include "db/db.h"

#define FT_TRANSFER_NEIGHBOURS 4
#define FT_TRANSFER_CAUSAL_COST 2.0
#define FT_TRANSFER_PATIENCE 24
#define FT_TRANSFER_GAIN 0.01

struct ft_transfer_seeds {
	int n;
	char config[FT_TRANSFER_NEIGHBOURS][FT_CONFIG_MAX];
	const char *ptr[FT_TRANSFER_NEIGHBOURS];	/* config[i], for the pipeline */
	double distance[FT_TRANSFER_NEIGHBOURS];
};

/* Fills *out with the seeds for shape (out->n = 0: no neighbour). */
int ft_transfer_seeds(struct ft_db *db, const char *arch, const char *device, const char *space,
		      const struct ft_shape *shape, struct ft_transfer_seeds *out,
		      struct ft_err *err);

#endif
