/* transfer.h - the transfer strategy's seeds: best configs of the nearest shapes already tuned.
 *
 * In a campaign most shapes are near one already tuned, and near shapes have
 * near best configs. `--strategy transfer` starts each search from the best
 * configs stored in the database for the nearest shapes, evaluates those
 * first, continues as the guided strategy does (the untried candidate nearest
 * the best so far) and stops early:
 *
 *   neighbours: best rows of the same arch, space (template) and dtype,
 *     with the same KV layout and grouped-query ratio H/H_kv, and the same
 *     head dim D; only when no row has the same D, rows of another D (the
 *     first unit of a head-dim group: its configs still name tiles and warps
 *     of the same space, and those that are feasible here are tried). When
 *     some row has the same D, the nearest row of another D that is not a
 *     repeat of theirs comes after them as one more seed (below). Rows
 *     of this GPU model in the tuning database, and rows of any GPU model of
 *     the arch in it or in the databases of `--seeds-from` (another GPU's
 *     results, a colleague's shards): those of another model cost
 *     FT_TRANSFER_DEVICE_COST more;
 *   distance:   |log2 S - log2 S'| + |log2 S_kv - log2 S_kv'| + |log2 B*H - log2 B'*H'|,
 *     plus FT_TRANSFER_CAUSAL_COST when the causal flag differs (a shape of
 *     the other flag is used only when none of the same flag is nearer),
 *     FT_TRANSFER_HEADDIM_COST x |log2 D - log2 D'|, and
 *     FT_TRANSFER_DEVICE_COST for another GPU model;
 *   seeds:      the best configs of the FT_TRANSFER_NEIGHBOURS nearest (ties
 *     in the order stored), then of the nearest of another head dim when
 *     they have the same, without repeats; each starts at its own
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
 * (campaign_order.c), so every unit but one per group starts seeded. A search
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
 * 2,320 (48: 22 with 2,099; 32: 20 with 1,812). A patience of 40 for far
 * seeds was tried on 2026-11-30 (two H200s, KV_WARPGROUPS in the space):
 * replayed in campaign order it kept every unit and cut the Hopper space's
 * evaluations by 15 %, and on the GPUs suite24 cold came 2-4 s sooner, but
 * there the mission shape's two units run side by side, each seeded only by
 * 1x8x2048x64 causal (far), and both stopped before their two-consumer
 * optimum (1.064 and 1.041 of exhaustive's best): its one-consumer-per-block
 * neighbours first meet KV_WARPGROUPS=2 with INTRA_WG_OVERLAP=1, 10 % slower
 * than the best so far, and its optimum (overlap 2) is one step further.
 * Replayed in that order on the pass's own recording, 64 finds it.
 *
 * Probes (strategy.h ft_guide_probe; issue 16): 64 found it by a hair. From
 * the one-consumer seed the walk first meets the two-consumer structure
 * (NUM_CONSUMER_WG=2 and KV_WARPGROUPS=2 together, the one step the
 * constraints allow) at INTRA_WG_OVERLAP=1, ~10 % behind the best, and then
 * walks on near the best (other tiles, splits, PDL) until the distance
 * brings it back. Replayed in the lanes' order (1x8x2048x64 causal, then
 * each mission unit seeded by it alone) on the three exhaustive suite24
 * recordings of two H200s (2026-11-30), the optimum came 36, 39, 65, 25, 36
 * and 25 results after the seed's gain: on one the 65th, in flight when the
 * patience of 64 fired. So a transfer search probes: a competitive result
 * (within the race's 1.15x of the best) that holds a value no competitive
 * result held and is 2 or more steps from each of them (a structure reached
 * only by a coupled step) has its untried neighbours tried next, and so has
 * a neighbour that beats it by more than FT_TRANSFER_GAIN (the probe
 * descends). The same replays: 36, 39, 41, 25, 36, 25; with each
 * recording's times scaled by a random 1 % (8 seeds each, 48 searches) the
 * walk without probes ended 5 at 1.023-1.039 of the optimum (the
 * one-consumer best), with them none (the worst 1.020, a config recorded
 * twice), 5,249 -> 5,057 evaluations. Replayed as campaigns (suite24 on
 * the three, hopper.yaml on the recorded H100 campaign) every unit ends
 * where it did without probes, the Hopper space's evaluations 1,405 ->
 * 1,419, 1,391 -> 1,453 (the mission unit, stopped at 68 before, runs 64
 * past its optimum at 42), 1,442 -> 1,448 and 1,200 -> 1,190. Probing every
 * new competitive value (one step from the others too) displaced the walk
 * near the best in the near-seeded searches of patience 24 and lost
 * 1x8x8192x64 causal (1.000 -> 1.015-1.033) on two of the three.
 *
 * Another GPU: replayed as a campaign over the recorded H100 campaign (12
 * units, both spaces, campaign order) with `--seeds-from` the bests of
 * suite24 tuned on an H200 (tests/data/h200_suite24_best.sql, 2026-11-28):
 * 760 evaluations instead of 1,000, every unit still at its exhaustive
 * optimum; the D 64 group's first unit then starts seeded (47 and 52
 * evaluations became 27 and 26 in the two spaces). FT_TRANSFER_DEVICE_COST
 * is half a size step: the other GPU's result for the same shape comes
 * before this GPU's for a 2x other S, and the other GPU's 2x neighbour
 * (distance 2.5) is still near (under FT_TRANSFER_FAR); a cost of 1 made it
 * far (3.0) and gave 806 evaluations, the same bests. A unit whose dtype the
 * other GPU did not tune (bf16 there) gains nothing.
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
/*
 * One seed of another head dim (2026-12-01): the units of a head-dim group
 * tuned first are small shapes whose bests are one-consumer configs, and a
 * larger unit of the group seeded only by them walked from there: in an
 * exhaustive suite24 recording of one H200 (the twenty-first session's) the
 * optimum of 1x8x2048x64 (two consumers, ping-pong, 3 stages) was 3 steps
 * from each seed and the search stopped 1.042 off it, as it had on the GPU
 * (1.041); the D 128 units tuned before it had two-consumer ping-pong bests.
 * A structure that wins at one head dim is a candidate at the next, so the
 * nearest best of another D (at FT_TRANSFER_HEADDIM_COST per factor 2 of D,
 * never the nearest seed, so the patience stays the same-D seeds') is tried
 * after the same-D ones. Replayed over five exhaustive suite24 recordings
 * of H200s (both spaces, campaign order): 24, 23, 24, 24, 20 units within
 * 1 % with 1743, 1769, 1650, 1678, 1662 evaluations before; 24, 23, 24, 24,
 * 22 with 1706, 1769, 1616, 1655, 1707 after (the fifth's 1x8x2048x64 1.042
 * -> 1.000); on the recorded H100 campaign (mma space, bench/strategies.py)
 * 2.8 -> 2.4 evaluations to within 5 % leave-one-out and 5.1 -> 4.9 in
 * campaign order, 725 -> 721 evaluations until the stops, every unit still
 * at its optimum.
 *
 * Behind the incumbent (FT_TRANSFER_PATIENCE_BEHIND): a later space of a unit
 * (search.h incumbent_us; on sm_90 the mma space after the Hopper one) whose
 * best has not beaten the unit's best stops after 12 results without doing
 * so, whatever its seeds; once it beats it, the usual patience applies.
 * Replayed over the recorded H100 campaign with both spaces in campaign
 * order (tests/cli/131-replay-spaces.sh; 2026-11-30): the mma space spent
 * 181 evaluations instead of 595 (6: 109, 8: 133, 16: 234, 24: 344), every
 * unit still at the recording's optimum over both spaces; the mma space won
 * no unit there, nor in any exhaustive suite24 pass on an H200.
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
#define FT_TRANSFER_PATIENCE_BEHIND 12
#define FT_TRANSFER_FAR 3.0
#define FT_TRANSFER_HEADDIM_COST 3.0
#define FT_TRANSFER_DEVICE_COST 0.5
#define FT_TRANSFER_GAIN 0.01
/* the neighbours of the same head dim and the nearest of another (above) */
#define FT_TRANSFER_SEEDS_MAX (FT_TRANSFER_NEIGHBOURS + 1)

struct ft_transfer_seeds {
	int n;
	char config[FT_TRANSFER_SEEDS_MAX][FT_CONFIG_MAX];
	const char *ptr[FT_TRANSFER_SEEDS_MAX];	/* config[i], for the pipeline */
	double distance[FT_TRANSFER_SEEDS_MAX];
	int other_device;		/* how many of them were tuned on another GPU model */
};

/* A best row as transfer reads it. */
struct ft_transfer_row {
	char arch[16];
	char space[FT_NAME_MAX + 1];
	char device[256];
	char layout[8];
	char config[FT_CONFIG_MAX];
	long long b, h, s, d, s_kv, h_kv, causal;
	int dtype;			/* enum ft_dtype, -1: another */
};

/* The best rows of the --seeds-from databases, every arch's, read once
 * before any GPU is set up (each file is opened read only, checked as a
 * merge input is, and closed again); ft_transfer_seeds keeps the target
 * arch's. */
#define FT_TRANSFER_POOL_MAX 65536	/* rows (~900 bytes each); a best row is one per
					 * shape x space x GPU model */
struct ft_transfer_pool {
	struct ft_transfer_row *v;
	long long n, cap;
	int full;			/* a file held more than fits */
};

/* Adds the best rows of the database at path to p. FT_EINPUT with the file
 * named when it is no intact fatune database (nothing is written to it), or
 * holds too many rows. */
int ft_transfer_pool_read(struct ft_transfer_pool *p, const char *path, struct ft_err *err);
void ft_transfer_pool_free(struct ft_transfer_pool *p);

/* The shape part of transfer's distance (above) from a shape of S s, KV
 * length s_kv, B*H bh, causal flag and head dim d to sh: the size steps, the
 * causal and head-dim costs (the GPU model's cost is the caller's). */
double ft_transfer_shape_distance(long long s, long long s_kv, long long bh, long long causal, long long d,
				  const struct ft_shape *sh);

/* Fills *out with the seeds for shape (out->n = 0: no neighbour) from the
 * best rows of db and of pool (NULL: none), device being this GPU model's
 * name. */
int ft_transfer_seeds(struct ft_db *db, const struct ft_transfer_pool *pool, const char *arch,
		      const char *device, const char *space, const struct ft_shape *shape,
		      struct ft_transfer_seeds *out, struct ft_err *err);

#endif
