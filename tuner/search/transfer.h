/* transfer.h - the transfer strategy's seeds: best configs of the nearest shapes already tuned.
 *
 * In a campaign most shapes are near one already tuned, and near shapes have
 * near best configs. `--strategy transfer` starts each search from the best
 * configs stored in the database for the nearest shapes, evaluates those
 * first, continues as the guided strategy does (the untried candidate nearest
 * the best so far) and stops early:
 *
 *   neighbours: best rows of the same arch, device, space (template) and
 *     dtype, with the same KV layout and grouped-query ratio H/H_kv, and the
 *     same head dim D; only when no row has the same D, rows of another D
 *     (the first unit of a head-dim group: its configs still name tiles and
 *     warps of the same space, and those that are feasible here are tried);
 *   distance:   |log2 S - log2 S'| + |log2 S_kv - log2 S_kv'| + |log2 B*H - log2 B'*H'|,
 *     plus FT_TRANSFER_CAUSAL_COST when the causal flag differs (a shape of
 *     the other flag is used only when none of the same flag is nearer) and
 *     FT_TRANSFER_HEADDIM_COST x |log2 D - log2 D'|;
 *   seeds:      the best configs of the FT_TRANSFER_NEIGHBOURS nearest (ties
 *     in the order stored), without repeats; each starts at its own
 *     candidate, or at the nearest one when this shape has none (a causal
 *     neighbour's TILE_ORDER=1, which a non-causal shape derives to 0: on
 *     the H100 on 2026-11-27 two such units matched no seed and ran their
 *     whole feasible sets, 264 and 312 candidates, where the winner came at
 *     53 and 72);
 *   stop:       once P results in a row, after the seeds, have not made the
 *     best more than FT_TRANSFER_GAIN faster, where P is
 *     FT_TRANSFER_PATIENCE_FRAC of the feasible candidates, at least
 *     FT_TRANSFER_PATIENCE_MIN and at most FT_TRANSFER_PATIENCE (a fixed 24
 *     never stopped a search of 40 feasible candidates); with no seed at all,
 *     or when even the nearest seed is FT_TRANSFER_FAR or more away (another
 *     head dim; the other causal flag and a 2x other size), once
 *     FT_TRANSFER_PATIENCE_UNSEEDED results in a row have not (below).
 *   in flight:  when the stop fires, the candidates already chosen that
 *     have not reached a compile thread or the GPU are dropped (never
 *     stored): a window of ncompilers + 2 x GPUs used to add ~18 evaluations
 *     to every search after its stop.
 *
 * A campaign run with transfer tunes one representative of each group (D,
 * dtype, layout, H/H_kv; the middle one by size) first, then the others
 * (campaign_run.c), so every unit but one per group starts seeded. A search
 * with no neighbour at all (the first unit of a campaign, or of a dtype) runs
 * as the guided strategy and stops after FT_TRANSFER_PATIENCE_UNSEEDED
 * results without a gain: in suite24's first unit on the H100 (2026-11-27,
 * both spaces, 938 feasible) the gains of more than 1 % came at most 50
 * results apart (at 1, 3, 16, 45, 51, 101 and 1, 8, 13, 17, 58, 74, 87, 115)
 * and the winners at 108 and 129, so a patience of 64 keeps both and ends
 * the searches near 165 and 180 instead of 230 and 708. Replayed on the
 * recorded H100 campaign, each of its 24 searches unseeded: 64 ends every
 * one at its exhaustive optimum (3,047 of 3,764 evaluations; a candidate the
 * recording lacks is no result), 48 and 32 end one 1.59x off (bf16 causal
 * D 128, attention_sm90: its optimum came ~80 results after a plateau).
 * Until then such a search ran to the end (a stop of 24 ended 1.15x off).
 *
 * Far seeds: replayed over an exhaustive suite24 search recorded on an H100
 * (2026-11-27, both spaces, every feasible candidate timed; docs/perf.md),
 * patience 24 for every seeded search ended 20 of 24 units within 1 % of the
 * replay's optimum (worst 1.045: wgmma searches seeded from small shapes'
 * one-consumer configs, the optimum a two-consumer one) with 1,668
 * evaluations; the unseeded patience for far seeds ends 23 (worst 1.029) with
 * 2,320 (48: 22 with 2,099; 32: 20 with 1,812).
 *
 * Measured by replay with `bench/strategies.py --transfer` over the
 * recorded H100 campaign of 12 units, both spaces
 * (tests/data/recorded_h100_campaign.sql, docs/perf.md): in campaign order
 * the units spent 835 evaluations of the 1791 an exhaustive search makes
 * (1210 before these rules), every unit ending at its exhaustive optimum.
 * A patience of 0.25 of the feasible set (at least 12) spent 637 but ended
 * 4 units 1.1-7 % off, 0.4 (at least 16) 889 with one 3.6 % off: on these
 * spaces the optimum of a small set (32-42 feasible) is sometimes found only
 * by its last candidates, so the patience is scaled down only below 32
 * candidates (0.75 of them), and is 24 above. With racing a candidate the
 * search did not need costs a quick pass (a few ms), not a full timing.
 */
#ifndef FT_TRANSFER_H
#define FT_TRANSFER_H

#include "db/db.h"

#define FT_TRANSFER_NEIGHBOURS 4
#define FT_TRANSFER_CAUSAL_COST 2.0
#define FT_TRANSFER_PATIENCE 24
#define FT_TRANSFER_PATIENCE_FRAC 0.75
#define FT_TRANSFER_PATIENCE_MIN 12
#define FT_TRANSFER_PATIENCE_UNSEEDED 64
#define FT_TRANSFER_FAR 3.0
#define FT_TRANSFER_HEADDIM_COST 3.0
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
