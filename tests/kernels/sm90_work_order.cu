/* sm90_work_order.cu - host-side check of attention_sm90.cu's work-tile order (tests/cli/114).
 *
 * Includes the Hopper template itself (compiled with its usual -D flags plus
 * TILE_ORDER) and runs its host-and-device mapping functions (tiles_per_head,
 * work_of, tile_of) on the CPU over a grid of shapes: every work index
 * 0 .. tph * H * B - 1 must name a distinct (row block, split, head, batch),
 * so the walk is a bijection onto the work tiles (a tile missed would leave
 * rows of O unwritten, one taken twice would race); with TILE_ORDER 1 and one
 * split the tiles of each L2 group must come heaviest first (their KV tile
 * counts rise only where a group starts, at a heaviest row block), and the
 * groups must be as many as 32 MB of K and V per group (whole KV heads, at
 * least one) makes. Prints "ok N shapes" and exits 0, or names the first failure and
 * exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_sm90.cu"

static int check(int b, int h, int h_kv, int s_q, int s_kv, int splits)
{
	fatune_attn_params p;
	memset(&p, 0, sizeof(p));
	p.b = b;
	p.h = h;
	p.h_kv = h_kv;
	p.s_q = s_q;
	p.s_kv = s_kv;
	p.num_splits = splits;
	p.causal_offset = s_kv - s_q;
	const int tph = tiles_per_head(p);
	const int total = tph * h * b;
	const int mblocks = (s_q + BM - 1) / BM;
	char *seen = (char *)calloc((size_t)total, 1);
	int prev_n = 1 << 30, groups = 1;

	for (int i = 0; i < total; i++) {
		const block_work w = tile_of(p, i, tph);
		const int mb = w.m0 / BM;
		const int key = ((w.batch * h + w.head) * mblocks + mb) * splits + w.split;

		if (w.m0 % BM || mb < 0 || mb >= mblocks || w.split < 0 || w.split >= splits || w.head < 0 ||
		    w.head >= h || w.batch < 0 || w.batch >= b || w.head_kv != w.head / (h / h_kv)) {
			printf("FAIL %dx%dx%d kv %d/%d splits %d: index %d names no tile (m0 %d split %d head %d batch %d)\n",
			       b, h, s_q, s_kv, h_kv, splits, i, w.m0, w.split, w.head, w.batch);
			return 1;
		}
		if (seen[key]++) {
			printf("FAIL %dx%dx%d kv %d/%d splits %d: index %d repeats a tile\n", b, h, s_q, s_kv, h_kv,
			       splits, i);
			return 1;
		}
		if (TILE_ORDER == 1 && splits == 1) {
			/* heaviest first within a group: the KV tile count rises only
			 * where the next group starts, at a head's heaviest row block */
			if (w.n > prev_n) {
				if (mb != mblocks - 1) {
					printf("FAIL %dx%dx%d kv %d: index %d has %d KV tiles after %d (not heaviest first)\n",
					       b, h, s_q, s_kv, i, w.n, prev_n);
					return 1;
				}
				groups++;
			}
			prev_n = w.n;
		}
	}
	/* the L2 groups: 32 MB of K and V, at least one KV head, whole KV heads */
	if (TILE_ORDER == 1 && splits == 1 && s_q == s_kv && mblocks > 1) {
		const long long kv_heads = (32ll << 20) / (4ll * s_kv * D);
		const long long hg = (kv_heads < 1 ? 1 : kv_heads) * (h / h_kv);
		const long long want = (b * h + (hg < b * h ? hg : b * h) - 1) / (hg < b * h ? hg : b * h);

		if (groups != want) {
			printf("FAIL %dx%dx%d: %d L2 groups, expected %lld\n", b, h, s_q, groups, want);
			return 1;
		}
	}
	free(seen);
	return 0;
}

int main(void)
{
	/* B, H, H_kv, S_q, S_kv, splits: one block, ragged row blocks, GQA, S_q != S_kv both ways,
	 * decode, splits, and K/V large enough for several L2 groups (32 MB / (4 S_kv D) KV heads:
	 * at D 128, S 16384 two KV heads a group, 32768 one, 65536 one, rounded up) */
	static const int shapes[][6] = {
		{ 1, 1, 1, 1, 1, 1 },	       { 2, 3, 3, 17, 17, 1 },	    { 1, 8, 8, 500, 500, 2 },
		{ 2, 8, 2, 300, 300, 1 },      { 1, 4, 4, 128, 1000, 4 },   { 1, 4, 4, 1000, 128, 1 },
		{ 2, 32, 32, 2048, 2048, 1 },  { 4, 16, 16, 2048, 2048, 1 }, { 2, 40, 8, 1, 8192, 4 },
		{ 1, 32, 8, 4096, 65536, 1 },  { 3, 7, 7, 777, 131072, 1 },  { 2, 12, 4, 1500, 40000, 2 },
		{ 1, 64, 64, 8192, 8192, 1 },  { 2, 16, 4, 16384, 16384, 1 }, { 1, 8, 8, 32768, 32768, 1 },
		{ 3, 6, 6, 1000, 1000, 1 },    { 1, 5, 5, 16384, 16384, 1 }, { 2, 3, 1, 4096, 40000, 1 },
	};
	const int n = (int)(sizeof(shapes) / sizeof(shapes[0]));

	for (int k = 0; k < n; k++)
		if (check(shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3], shapes[k][4], shapes[k][5]))
			return 1;
	printf("ok %d shapes (TILE_ORDER %d, BLOCK_M %d)\n", n, TILE_ORDER, BM);
	return 0;
}
