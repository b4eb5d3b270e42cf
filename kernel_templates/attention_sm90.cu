/* attention_sm90.cu - a FlashAttention-3-style forward pass for Hopper (sm_90a), compiled by NVRTC.
 *
 * One block owns BLOCK_M = 64 * NUM_CONSUMER_WG query rows of one (batch, head)
 * and, with split-KV, one share of the keys. Its threads are warpgroups (4 warps):
 *
 *   warpgroup 0, the producer: gives back registers (setmaxnreg.dec) and one
 *     thread issues every copy: the Q tile, then K and V tiles of BLOCK_N
 *     keys into a ring of KV_STAGES buffers, by TMA (cp.async.bulk.tensor),
 *     each completing on a "full" mbarrier; it waits on the buffer's "empty"
 *     mbarrier before reusing it.
 *   warpgroups 1..NUM_CONSUMER_WG, the consumers: take registers
 *     (setmaxnreg.inc); each owns 64 query rows and runs
 *     S = Q K^T (wgmma, K in shared memory, 128-byte swizzle; Q in shared
 *     memory too, or with Q_IN_REGS in registers, loaded once by ldmatrix),
 *     the online softmax in fp32 registers (exp2, scale folded in), and
 *     O += P V (wgmma, P from registers, V in shared memory read as N-major).
 *
 * The softmax of tile j overlaps the tensor cores' work on tile j's Q K^T and
 * tile j-1's P V: per step a consumer issues S_j = Q K_j^T and O += P_{j-1} V_{j-1},
 * waits for S_j only, runs the softmax of S_j while P V runs, then waits for
 * P V, rescales O and packs P_j to 16 bits. With PINGPONG (two consumer
 * warpgroups) named barriers make the two warpgroups take turns issuing their
 * GEMMs, so that one's softmax runs under the other's GEMMs. With PERSISTENT
 * the grid holds about one block per SM and each block walks the work tiles
 * (row block, split, head, batch) with a stride of gridDim.x; the producer
 * loads the next tile's Q and K/V while the consumers finish the current one.
 *
 * ABI v2 (fatune_abi.h): separate S_q/S_kv and H/H_kv (query head h reads KV
 * head h / (H / H_kv)), strides (TMA reads through the descriptors; the
 * output is written with o_stride_*), bottom-right causal mask (query i sees
 * keys <= i + causal_offset; a row that sees none outputs 0), split-KV with
 * fp32 partials + LSE merged by fatune_sm90_combine.
 *
 * TMA descriptors (encoded by the host: rank 4, dims (D, S, H, B), 128-byte
 * swizzle, zero OOB fill, box (64, BOX_ROWS, 1, 1)):
 *
 *   | descriptor | BOX_ROWS       | boxes per tile                       |
 *   |------------|----------------|--------------------------------------|
 *   | tma_q      | 64             | D / 64 per consumer warpgroup        |
 *   | tma_k      | BLOCK_N        | D / 64                               |
 *   | tma_v      | BLOCK_N        | D / 64                               |
 *   | tma_o      | (not used)     | O is stored with plain 16-byte stores |
 *
 * Grid: [ceil_div(S_q, BLOCK_M) * num_splits, H, B], or with PERSISTENT
 * [min(that many tiles, blocks per SM * SMs), 1, 1] (any count is correct).
 *
 * Compile-time parameters (-D): HEAD_DIM (64, 128, 256), IS_CAUSAL, FATUNE_BF16,
 * NUM_CONSUMER_WG (1-3), BLOCK_M (= 64 * NUM_CONSUMER_WG), BLOCK_N (multiple of
 * 16, 64..256), KV_STAGES (2-4), PINGPONG (0/1, needs 2 consumer warpgroups),
 * PERSISTENT (0/1), Q_IN_REGS (0/1), PRODUCER_REGS (default 24: the producer's
 * registers after setmaxnreg; the consumers get what is left), PDL (0/1:
 * programmatic dependent launch of the combine kernel: with split-KV every
 * thread runs griddepcontrol.launch_dependents once its work is stored, and the
 * combine kernel griddepcontrol.wait before it reads the partials; the launch
 * attribute is the space's launch.combine_pdl), INTRA_WG_OVERLAP (1, the
 * default: the overlapped loop above; 2: the same with the producer loading V
 * one tile behind K, in the order the consumers read them), TILE_ORDER (0, the
 * default: work tiles x fastest, then head, then batch; 1, causal only: the
 * heaviest row blocks of every head first, in groups of heads whose K and V
 * fit in L2, for persistent and non-persistent grids alike), MASK_PEEL (0, the
 * default: each KV tile tests whether it needs the mask; 1: the loop peeled
 * into the tiles before the warpgroup's diagonal, never masked, and those from
 * it on, always masked), KV_WARPGROUPS (1, the default: each consumer owns
 * 64 rows; 2: the two consumers share one block's 64 rows, split its KV tiles
 * every other one and merge at the end), CLUSTER_M (1, the default; 2: blocks
 * run in clusters of two that hold consecutive row blocks of one head, and each
 * K and V tile is read from L2 once for both: each block's producer copies half
 * of its column boxes into both blocks' shared memory by TMA multicast, and a
 * ring stage is refilled once the consumers of both blocks have released it;
 * non-causal, D >= 128, one block per tile's KV range: the kernel is built with
 * __cluster_dims__, so the host launches it as before, with an even grid.x),
 * FATUNE_SMEM_BYTES (static_assert'ed below).
 * Design notes and measurements: docs/kernel_sm90.md.
 */
#include "fatune_abi.h"
#include "attention_ptx.cuh"
#include "attention_common.cuh"
#include "sm90_ptx.cuh"
#include "sm90_wgmma.cuh"

#if !defined(FATUNE_ABI) || FATUNE_ABI != 2
#error "attention_sm90.cu speaks ABI v2: compile with -DFATUNE_ABI=2"
#endif
#if !defined(HEAD_DIM) || !defined(IS_CAUSAL) || !defined(NUM_CONSUMER_WG) || !defined(BLOCK_M) || \
	!defined(BLOCK_N) || !defined(KV_STAGES) || !defined(PINGPONG) || !defined(FATUNE_SMEM_BYTES)
#error "attention_sm90.cu needs -DHEAD_DIM -DIS_CAUSAL -DNUM_CONSUMER_WG -DBLOCK_M -DBLOCK_N -DKV_STAGES -DPINGPONG -DFATUNE_SMEM_BYTES"
#endif
/* measured on an H100: 24 and 40 time the same (the producer needs few) */
#ifndef PRODUCER_REGS
#define PRODUCER_REGS 24
#endif
#ifndef PERSISTENT
#define PERSISTENT 0
#endif
#ifndef Q_IN_REGS
#define Q_IN_REGS 0
#endif
#ifndef PDL
#define PDL 0
#endif
/* 1 (today's loop, the default): the softmax of tile j runs while P V of
 * tile j-1 does; 2: the same, with the producer loading V one tile behind K
 * (FlashAttention-3's order); 0: no overlap (each GEMM waited for at once) */
#ifndef INTRA_WG_OVERLAP
#define INTRA_WG_OVERLAP 1
#endif
/* causal work order (issue 17; 0 the default): 0 x fastest, then head, then
 * batch (within a head heaviest row block first); 1 heaviest row blocks of
 * every head first, in groups of heads whose K and V fit in L2 */
#ifndef TILE_ORDER
#define TILE_ORDER 0
#endif
/* 0 (the default): each KV tile of the loop tests at run time whether it needs
 * the mask; 1: the loop is peeled into the tiles before a warpgroup's diagonal
 * (never masked, no test) and the tiles from it on (always masked) */
#ifndef MASK_PEEL
#define MASK_PEEL 0
#endif
/* the prologue (issue 17): 1 has the thread that initialises the mbarriers
 * issue the copies of Q and of the first K tile at once, before the block's
 * barrier and setmaxnreg, so that their latency runs under both; 0 issues
 * them after (the order before). Not persistent grids (their producer loop
 * waits for the previous tile's Q to be released first). Measured on an H200
 * (docs/kernel_sm90.md): 0.976-0.997x on every non-causal shape tried, but
 * 1.01-1.03x on causal 1x8x512x64, so the default is on for non-causal only. */
#ifndef EARLY_LOADS
#define EARLY_LOADS (IS_CAUSAL ? 0 : 1)
#endif
/* small grids (issue 17): 2 has the two consumer warpgroups share one 64-row
 * block and split its KV tiles (consumer c takes tiles c, c + 2, ...), then
 * merge their softmax states through shared memory; 1 (the default): each
 * consumer owns 64 rows of its own and reads every tile. */
#ifndef KV_WARPGROUPS
#define KV_WARPGROUPS 1
#endif
/* K/V multicast in clusters of CLUSTER_M blocks (issue 17, FlashAttention-3's
 * 2-CTA clusters for D >= 128 non-causal); 1 (the default): no cluster. */
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif

namespace {

constexpr int D = HEAD_DIM;
constexpr int NCWG = NUM_CONSUMER_WG;
constexpr int BM = BLOCK_M;
constexpr int BN = BLOCK_N;
constexpr int ST = KV_STAGES;
constexpr bool PP = PINGPONG != 0;
/* persistent: a grid of about one block per SM walks the work tiles (row
 * block, split, head, batch) with a stride of gridDim.x; the producer loads
 * the next tile's Q and K/V while the consumers finish the current one */
constexpr bool PERSIST = PERSISTENT != 0;
/* Q in registers: each consumer reads its Q fragments once (ldmatrix) and
 * Q K^T takes A from registers, so the GEMM reads only K from shared memory
 * (D / 4 more registers per thread) */
constexpr bool QREG = Q_IN_REGS != 0;
/* intra-warpgroup overlap of the softmax with P V (consume), and V loaded one
 * tile behind K (produce) */
constexpr bool V_LAG = INTRA_WG_OVERLAP == 2;
/* blocks per cluster sharing each K and V tile (multicast) */
constexpr int CL = CLUSTER_M;
/* Q and K_0 issued in the prologue (non-persistent grids only; not in a
 * cluster, where a multicast copy may write into the other block only once
 * the cluster's barriers are initialised) */
constexpr bool EARLY = EARLY_LOADS != 0 && !PERSIST && CL == 1;
/* consumer warpgroups that share one 64-row block's keys, and the row groups */
constexpr int KVWG = KV_WARPGROUPS;
constexpr int RWG = NCWG / KVWG;
constexpr int NT = 128 * (1 + NCWG);	/* threads: the producer warpgroup + the consumers */
/* One consumer warpgroup leaves registers for two blocks per SM (the two
 * blocks' softmax and GEMMs then overlap, and short sequences fill more SMs). */
constexpr int BLOCKS_PER_SM = NCWG == 1 ? 2 : 1;
/* Registers per thread at entry: what __launch_bounds__(NT, BLOCKS_PER_SM)
 * lets ptxas use (64K per SM, in steps of 8). setmaxnreg moves them between
 * warpgroups within the block's allocation. */
constexpr int ENTRY_REGS = (65536 / (NT * BLOCKS_PER_SM)) / 8 * 8 > 255 ? 255 : (65536 / (NT * BLOCKS_PER_SM)) / 8 * 8;
constexpr int PROD_REGS = PRODUCER_REGS;
constexpr int CONS_REGS_FIT = ((ENTRY_REGS * NT - 128 * PROD_REGS) / (128 * NCWG)) / 8 * 8;
constexpr int CONS_REGS = CONS_REGS_FIT > 240 ? 240 : CONS_REGS_FIT;

constexpr int DBOX = D / 64;			/* 64-wide column boxes per row (128 bytes each) */
constexpr int Q_BOX_BYTES = 64 * 128;		/* one box of a consumer's 64 Q rows */
constexpr int Q_WG_BYTES = 64 * D * 2;		/* a consumer's Q rows */
constexpr int Q_BYTES = BM * D * 2;
constexpr int KV_BOX_BYTES = BN * 128;		/* one column box of a K or V tile */
constexpr int KV_TILE_BYTES = BN * D * 2;
constexpr int NBAR = 2 + 4 * ST;		/* q_full, q_empty, full_k, full_v, empty_k, empty_v */
constexpr int SMEM_BYTES = Q_BYTES + 2 * ST * KV_TILE_BYTES + 8 * NBAR;

/* named barrier ids (0 is __syncthreads): the ping-pong turn of consumer w,
 * and the merge of KV_WARPGROUPS 2 */
constexpr unsigned PP_BAR0 = 1;
constexpr unsigned MERGE_BAR = 3;

static_assert(D == 64 || D == 128 || D == 256, "HEAD_DIM must be 64, 128 or 256");
static_assert(NCWG >= 1 && NCWG <= 3, "1 to 3 consumer warpgroups");
static_assert(BM == 64 * RWG, "BLOCK_M must be 64 * NUM_CONSUMER_WG / KV_WARPGROUPS (each row group owns 64 rows)");
/* KV_WARPGROUPS 2: consumer c waits for tile j on stage j % ST, whose last
 * tile j - ST must have been its own (a barrier's parity tells only one phase
 * from the next), so ST is even; one block per tile, no ping-pong turns */
static_assert(KVWG == 1 || (KVWG == 2 && NCWG == 2 && ST % 2 == 0 && !PP && PERSISTENT == 0 && MASK_PEEL == 0),
	      "KV_WARPGROUPS 2 needs two consumers, an even KV_STAGES, PINGPONG 0, PERSISTENT 0 and MASK_PEEL 0");
static_assert(BN % 16 == 0 && BN >= 64 && BN <= 256, "BLOCK_N must be a multiple of 16 in 64..256");
static_assert(ST >= 2 && ST <= 4, "KV_STAGES must be 2..4");
static_assert(!PP || NCWG == 2, "PINGPONG needs exactly two consumer warpgroups");
static_assert(PROD_REGS >= 24 && PROD_REGS % 8 == 0 && CONS_REGS >= PROD_REGS,
	      "bad register split");
static_assert(128 * PROD_REGS + 128 * NCWG * CONS_REGS <= ENTRY_REGS * NT,
	      "setmaxnreg split exceeds the block's registers");
static_assert(PDL == 0 || PDL == 1, "PDL must be 0 or 1");
static_assert(INTRA_WG_OVERLAP == 1 || INTRA_WG_OVERLAP == 2,
	      "INTRA_WG_OVERLAP must be 1 or 2 (0, a loop without overlap, was an ablation that gave wrong results "
	      "on an H100 with PINGPONG=1 or Q_IN_REGS=1 and was removed: docs/kernel_sm90.md)");
static_assert(TILE_ORDER == 0 || (TILE_ORDER == 1 && IS_CAUSAL),
	      "TILE_ORDER must be 0, or 1 with IS_CAUSAL (non-causal tiles weigh the same)");
static_assert(MASK_PEEL == 0 || MASK_PEEL == 1, "MASK_PEEL must be 0 or 1");
static_assert(KVWG == 1 || (D / 2 + 4) * 128 * 4 <= 2 * ST * KV_TILE_BYTES,
	      "the merge's state does not fit the K/V ring");
/* CLUSTER_M 2: both blocks of a cluster must walk the same K/V tiles in the
 * same order (non-causal, no KV_WARPGROUPS split), and each copies whole
 * column boxes (D / 64 of them: an even count from D 128) */
static_assert(CL == 1 || (CL == 2 && !IS_CAUSAL && KVWG == 1 && DBOX % 2 == 0),
	      "CLUSTER_M 2 needs IS_CAUSAL 0, KV_WARPGROUPS 1 and HEAD_DIM >= 128");
static_assert(SMEM_BYTES == FATUNE_SMEM_BYTES,
	      "the space's smem_bytes formula disagrees with the template's layout");

struct smem_map {
	unsigned q, k, v, bar;

	__device__ unsigned q_full() const { return bar; }
	__device__ unsigned q_empty() const { return bar + 8; }
	__device__ unsigned full_k(int s) const { return bar + 8 * (2 + s); }
	__device__ unsigned full_v(int s) const { return bar + 8 * (2 + ST + s); }
	__device__ unsigned empty_k(int s) const { return bar + 8 * (2 + 2 * ST + s); }
	__device__ unsigned empty_v(int s) const { return bar + 8 * (2 + 3 * ST + s); }
	__device__ unsigned k_tile(int s) const { return k + s * KV_TILE_BYTES; }
	__device__ unsigned v_tile(int s) const { return v + s * KV_TILE_BYTES; }
};

/* The block's work, the same in every thread. */
struct block_work {
	int m0;		/* first query row */
	int split;
	int head, head_kv, batch;
	int t_begin;	/* first KV tile (of BN keys) */
	int n;		/* KV tiles to process (0: none) */
};

/* Work tiles: x = row block * num_splits + split (x fastest, then head, then
 * batch: the row blocks of one head, which share its K and V, run together). */
static __host__ __device__ __forceinline__ int tiles_per_head(const fatune_attn_params &p)
{
	return (p.s_q + BM - 1) / BM * p.num_splits;
}

static __host__ __device__ __forceinline__ block_work work_of(const fatune_attn_params &p, int x, int head, int batch)
{
	block_work w;
	const int splits = p.num_splits;
	const int m_blocks = (p.s_q + BM - 1) / BM;
	const int mbx = x / splits;

	w.split = x % splits;
	/* causal: the last row blocks see the most keys, so they go first */
	w.m0 = (IS_CAUSAL ? m_blocks - 1 - mbx : mbx) * BM;
	w.head = head;
	w.batch = batch;
	w.head_kv = w.head / (p.h / p.h_kv);
	int kv_end = p.s_kv;
	if (IS_CAUSAL)	/* the block's last real row sees keys < its index + 1 + causal_offset */
		kv_end = max(0, min(p.s_kv, min(w.m0 + BM, p.s_q) + p.causal_offset));
	const int n_tiles = (kv_end + BN - 1) / BN;
	const int per = (n_tiles + splits - 1) / splits;
	w.t_begin = w.split * per;
	w.n = max(0, min(n_tiles, w.t_begin + per) - w.t_begin);
	return w;
}

/* K and V of the heads one group of TILE_ORDER 1 walks together, in KB: what
 * FlashAttention-3's scheduler keeps in L2 (32 MB of the H100's 50) */
constexpr int L2_GROUP_KB = 32 << 10;

/* Work tile i (0 .. tiles_per_head * H * B - 1) of the block walk, and the
 * block_work it names. TILE_ORDER 0: i = (batch * H + head) * tph + x.
 * TILE_ORDER 1 (causal): the (batch, head) pairs are cut into groups of hg,
 * hg a multiple of the query heads per KV head such that the group's K and V
 * fit in L2_GROUP_KB (at least one KV head); groups are walked one after
 * the other and within a group x is slowest, so the heaviest row blocks of
 * all the group's heads come first (work_of reverses the row blocks when
 * causal) and a block walking i, i + gridDim.x, ... meets tiles of like
 * weight in each round. Both are bijections on 0 .. total - 1. */
static __host__ __device__ __forceinline__ block_work tile_of(const fatune_attn_params &p, int i, int tph)
{
	if (TILE_ORDER == 0)
		return work_of(p, i % tph, (i / tph) % p.h, i / (tph * p.h));
	/* 32-bit arithmetic only: the producer runs this with 24 registers (in
	 * the persistent loop a 64-bit division made it spill 4-12 bytes) */
	const int h = p.h;
	const int nbh = p.b * h;
	const int g = h / p.h_kv;	/* query heads per KV head */
	const int kv_head_kb = max(1, p.s_kv * (D / 64) / 4);	/* K and V of one KV head: 4 S_kv D bytes */
	const int kv_heads = max(1, L2_GROUP_KB / kv_head_kb);
	const int hg = min(nbh, kv_heads * g);
	const int per_group = tph * hg;
	const int grp = i / per_group;
	const int nh = min(hg, nbh - grp * hg);	/* the last group may be smaller */
	const int r = i - grp * per_group;
	const int bh = grp * hg + r % nh;

	return work_of(p, r / nh, bh % h, bh / h);
}

/* The work tile of a non-persistent block (grid [tph, H, B]): its own with
 * TILE_ORDER 0; with 1, tile_of of its linear index, which is the order the
 * hardware dispatches blocks in (x fastest, then y, then z). */
static __device__ __forceinline__ block_work block_tile(const fatune_attn_params &p, int tph)
{
	if (TILE_ORDER == 0)
		return work_of(p, blockIdx.x, blockIdx.y, blockIdx.z);
	return tile_of(p, (int)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)), tph);
}

/* ---- producer ---------------------------------------------------------------- */

/* Issues the copies of one K or V tile (keys n0 ..) into `tile`, completing
 * on `full`. In a cluster, this block (rank: its ft_cluster_rank; 0 without
 * a cluster) copies the column boxes b with b % CL == rank into the same
 * stage of every block of the cluster (each block's `full` expects the whole
 * tile). */
static __device__ __forceinline__ void load_kv_tile(unsigned tile, const void *map, unsigned full, int n0,
						    int head_kv, int batch, int rank)
{
	if (CL == 1) {
#pragma unroll
		for (int b = 0; b < DBOX; b++)
			ft_tma_load_4d(tile + b * KV_BOX_BYTES, map, full, 64 * b, n0, head_kv, batch);
	} else {
#pragma unroll
		for (int b = 0; b < DBOX; b += CL)
			ft_tma_load_4d_mc<(1u << CL) - 1u>(tile + (b + rank) * KV_BOX_BYTES, map, full, 64 * (b + rank),
							   n0, head_kv, batch);
	}
}

/* A consumer warp's release of a K or V ring stage: one arrival on the
 * stage's empty barrier of each block of the cluster (every block's
 * producer refills the stage in all of them). */
static __device__ __forceinline__ void release_kv(unsigned empty)
{
	ft_mbar_arrive(empty);
	if (CL == 2)
		ft_mbar_arrive_cluster(empty, ft_cluster_rank() ^ 1u);
}

/* Issues the copy of K (v false) or V tile j of a work tile into its ring
 * stage, once the consumers have released the stage. */
static __device__ __forceinline__ void produce_kv(const fatune_attn_params &p, const smem_map &sm,
						  const block_work &w, int kv, int j, bool v)
{
	const int s = (kv + j) % ST;
	const unsigned ph = (unsigned)((kv + j) / ST) & 1u;
	const int n0 = (w.t_begin + j) * BN;
	const unsigned full = v ? sm.full_v(s) : sm.full_k(s);
	const unsigned tile = v ? sm.v_tile(s) : sm.k_tile(s);

	ft_mbar_wait(v ? sm.empty_v(s) : sm.empty_k(s), ph ^ 1u);
	ft_mbar_arrive_tx(full, KV_TILE_BYTES);
	load_kv_tile(tile, v ? &p.tma_v : &p.tma_k, full, n0, w.head_kv, w.batch,
		     CL > 1 ? (int)ft_cluster_rank() : 0);
}

/* Issues a work tile's Q: 64 rows per consumer warpgroup, D / 64 boxes each
 * (rows past S_q read as zeros: the descriptor's bounds are the tensor's),
 * once the consumers are done with the last tile's Q. */
static __device__ __forceinline__ void produce_q(const fatune_attn_params &p, const smem_map &sm,
						 const block_work &w, int nq)
{
	if (PERSIST)
		ft_mbar_wait(sm.q_empty(), ((unsigned)nq & 1u) ^ 1u);
	ft_mbar_arrive_tx(sm.q_full(), Q_BYTES);
#pragma unroll
	for (int c = 0; c < RWG; c++)
#pragma unroll
		for (int b = 0; b < DBOX; b++)
			ft_tma_load_4d(sm.q + c * Q_WG_BYTES + b * Q_BOX_BYTES, &p.tma_q, sm.q_full(), 64 * b,
				       w.m0 + 64 * c, w.head, w.batch);
}

/* Issues one work tile's copies. kv is the block's running count of KV tiles
 * (ring stage and phase continue across tiles), nq its count of Q loads.
 * With EARLY the prologue issued Q and K_0 already (produce_q and produce_kv
 * of tile 0). */
static __device__ __forceinline__ void produce(const fatune_attn_params &p, const smem_map &sm,
					       const block_work &w, int kv, int nq)
{
	if (!EARLY)
		produce_q(p, sm, w, nq);
	if (V_LAG) {
		/* K one tile ahead of V, in the order the overlapped consumer
		 * reads them: K_0, then (K_j, V_{j-1}), then V_{n-1} */
		for (int j = 0; j <= w.n; j++) {
			if (j < w.n && !(EARLY && j == 0))
				produce_kv(p, sm, w, kv, j, false);
			if (j > 0)
				produce_kv(p, sm, w, kv, j - 1, true);
		}
	} else if (CL > 1) {
		/* K_j, V_j by produce_kv (the loop below, written out, spilled
		 * 4 bytes in the persistent producer with multicast copies) */
		for (int j = 0; j < w.n; j++) {
			produce_kv(p, sm, w, kv, j, false);
			produce_kv(p, sm, w, kv, j, true);
		}
	} else {
		/* K_j, V_j: written out rather than two produce_kv calls, which
		 * ptxas schedules differently (this is the loop of every release
		 * before INTRA_WG_OVERLAP, instruction for instruction); no
		 * cluster here */
		for (int j = 0; j < w.n; j++) {
			const int s = (kv + j) % ST;
			const unsigned ph = (unsigned)((kv + j) / ST) & 1u;
			const int n0 = (w.t_begin + j) * BN;

			if (!(EARLY && j == 0)) {
				ft_mbar_wait(sm.empty_k(s), ph ^ 1u);
				ft_mbar_arrive_tx(sm.full_k(s), KV_TILE_BYTES);
				load_kv_tile(sm.k_tile(s), &p.tma_k, sm.full_k(s), n0, w.head_kv, w.batch, 0);
			}
			ft_mbar_wait(sm.empty_v(s), ph ^ 1u);
			ft_mbar_arrive_tx(sm.full_v(s), KV_TILE_BYTES);
			load_kv_tile(sm.v_tile(s), &p.tma_v, sm.full_v(s), n0, w.head_kv, w.batch, 0);
		}
	}
}

/* ---- consumer ---------------------------------------------------------------- */

/* S = Q K^T for one KV tile: D / 16 k-steps, both operands K-major in shared
 * memory. k-step kk reads 32 bytes at column byte 32 (kk % 4) of box kk / 4. */
static __device__ __forceinline__ void issue_qk(float (&s)[BN / 2], unsigned q_wg,
						const unsigned (&qa)[QREG ? D / 16 : 1][4], unsigned k_tile)
{
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		const ft_u64 db = ft_wgmma_desc(k_tile + (kk / 4) * KV_BOX_BYTES + (kk % 4) * 32, 16, 1024);

		if (QREG) {
			ft_wgmma_rs<BN, 0>(s, qa[QREG ? kk : 0], db, kk > 0);
		} else {
			const ft_u64 da = ft_wgmma_desc(q_wg + (kk / 4) * Q_BOX_BYTES + (kk % 4) * 32, 16, 1024);

			ft_wgmma_ss<BN, 0>(s, da, db, kk > 0);
		}
	}
	ft_wgmma_commit();
}

/* The A fragments of the warp's 16 Q rows (m16n8k16 layout) from the
 * swizzled Q area: ldmatrix.x4, lanes 0-15 at rows 0-15 of chunk 2kk, lanes
 * 16-31 at chunk 2kk + 1, give (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows
 * 0-7, k 8-15), (rows 8-15, k 8-15) = a0..a3. */
static __device__ __forceinline__ void load_q_frags(unsigned (&qa)[QREG ? D / 16 : 1][4], unsigned q_wg,
						    int warp, int lane)
{
	const int r = 16 * warp + (lane & 15);
#pragma unroll
	for (int kk = 0; kk < (QREG ? D / 16 : 0); kk++) {
		const int ch = 2 * kk + (lane >> 4);

		ft_ldmatrix_x4(qa[QREG ? kk : 0],
			       q_wg + (ch >> 3) * Q_BOX_BYTES + r * 128 + (((ch & 7) ^ (r & 7)) << 4));
	}
}

/* O += P V: BN / 16 k-steps over the keys; V is N-major (d contiguous):
 * k-step kk starts at key 16 kk (2 swizzle atoms of 8 keys x 128 bytes),
 * the next 64 columns of d are one box (BN * 128 bytes) further. */
static __device__ __forceinline__ void issue_pv(float (&o)[D / 2], const unsigned (&pa)[BN / 16][4],
						unsigned v_tile)
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++) {
		const ft_u64 db = ft_wgmma_desc(v_tile + kk * 2048, KV_BOX_BYTES, 1024);

		ft_wgmma_rs<D, 1>(o, pa[kk], db, 1);
	}
	ft_wgmma_commit();
}

/* wgmma.wait_group 0 placed after the computation of `dep` (the softmax).
 * A plain wait at the end of the softmax is hoisted by ptxas's scheduler to
 * the top of the softmax's basic block (a wait has no register operands, and
 * what follows it is the longer dependency chain), which serialises the
 * softmax with the P V GEMM it should overlap. Branching on a value the
 * softmax computes puts the wait in later blocks that cannot move above it;
 * both branches wait (the condition is always true: a row sum is >= 0 or NaN),
 * and ptxas still pairs the wait with its groups (a predicated wait made it
 * serialise every wgmma instead). Checked in the SASS: DEPBAR.LE gsb0, 0x0
 * after the loop's MUFU.EX2, HGMMA issued back to back. */
static __device__ __forceinline__ void wait_all_after(float dep)
{
	if (!(dep < 0.f))
		ft_wgmma_wait<0>();
	else
		ft_wgmma_wait<0>();
}

template <int N> static __device__ __forceinline__ void fence_regs(float (&r)[N])
{
#pragma unroll
	for (int i = 0; i < N; i++)
		ft_reg_fence(r[i]);
}

/* Masks one tile's scores (when need_mask), then the online softmax update of
 * the thread's two rows: new running max m, alpha = exp2((m_old - m_new) *
 * scale_log2), l = l * alpha + this lane's part of the row sum, and s is
 * replaced by P = exp2(s * scale_log2 - m_new * scale_log2) in fp32. The key
 * of s[4j + e] is 8j + 2t + (e & 1) past the tile's first; it is visible to
 * row e >> 1 iff that is < lim[e >> 1] (lim already has the tile start and 2t
 * subtracted). A row with no visible key so far keeps max -inf; 0 stands in
 * for it so that exp2(-inf - 0) = 0 rather than NaN. */
static __device__ __forceinline__ void online_softmax(float (&s)[BN / 2], float (&m)[2], float (&l)[2],
						      float (&alpha)[2], bool need_mask, const int (&lim)[2],
						      float scale_log2)
{
	if (need_mask) {
#pragma unroll
		for (int j = 0; j < BN / 8; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				if (8 * j + (e & 1) >= lim[e >> 1])
					s[4 * j + e] = ft_neg_inf();
	}
	float mx[2] = { ft_row_max<BN / 8>(m[0], s, 0), ft_row_max<BN / 8>(m[1], s, 1) };
	float msc[2];
	ft_softmax_stats(mx, m, scale_log2, msc, alpha);
	float rs[2] = { 0.f, 0.f };
#pragma unroll
	for (int j = 0; j < BN / 8; j++)
#pragma unroll
		for (int e = 0; e < 4; e++) {
			s[4 * j + e] = ft_exp2(fmaf(s[4 * j + e], scale_log2, -msc[e >> 1]));
			rs[e >> 1] += s[4 * j + e];
		}
#pragma unroll
	for (int r = 0; r < 2; r++)
		l[r] = l[r] * alpha[r] + rs[r];
}

/* P (fp32 in s) -> the A fragments of P V: k-step kk (keys 16kk..16kk+15) is
 * made of the accumulator groups j = 2kk (a0, a1) and 2kk + 1 (a2, a3). */
static __device__ __forceinline__ void pack_p(unsigned (&pa)[BN / 16][4], const float (&s)[BN / 2])
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
		for (int i = 0; i < 4; i++)
			pa[kk][i] = ft_pack2(s[8 * kk + 2 * i], s[8 * kk + 2 * i + 1]);
}

static __device__ __forceinline__ void rescale_o(float (&o)[D / 2], const float (&alpha)[2])
{
#pragma unroll
	for (int j = 0; j < D / 8; j++) {
		o[4 * j] *= alpha[0];
		o[4 * j + 1] *= alpha[0];
		o[4 * j + 2] *= alpha[1];
		o[4 * j + 3] *= alpha[1];
	}
}

/* byte offset of 16-byte chunk `ch` of row r in a consumer's Q area, laid out
 * like the TMA boxes (128-byte swizzle): box ch / 8, chunk (ch % 8) ^ (r % 8) */
static __device__ __forceinline__ unsigned q_chunk(int r, int ch)
{
	return (unsigned)((ch >> 3) * Q_BOX_BYTES + r * 128 + (((ch & 7) ^ (r & 7)) << 4));
}

/* One work tile of consumer warpgroup cw. kv is the block's running count of
 * KV tiles (ring stage and phase), nq its count of Q loads (q_full parity).
 * With KV_WARPGROUPS 2 both consumers own the block's 64 rows, consumer cw
 * takes KV tiles cw, cw + 2, ..., and consumer 1 hands its state (O, the row
 * max and sums) to consumer 0 through the freed K/V ring; consumer 0 merges
 * the two and stores. */
static __device__ __forceinline__ void consume(const fatune_attn_params &p, const smem_map &sm,
					       const block_work &w, int cw, unsigned char *smem, int kv, int nq)
{
	const int tid = threadIdx.x % 128;
	const int warp = tid / 32, lane = tid % 32;
	const int g = lane / 4, t = lane % 4;
	const int rw = KVWG == 2 ? 0 : cw;		/* the warpgroup's row group */
	/* its KV tiles: kw, kw + KVWG, ... Read through a shuffle: ptxas then
	 * knows it is the same in the whole warp; taken from cw as it is, the
	 * causal loop's wgmma were serialized (C7520, "WG.AR in divergent path") */
	const int kw = KVWG == 2 ? __shfl_sync(0xffffffffu, cw, 0) : 0;
	const int nmine = w.n > kw ? (w.n - kw + KVWG - 1) / KVWG : 0;
	const unsigned q_wg = sm.q + rw * Q_WG_BYTES;
	const int row = w.m0 + 64 * rw + 16 * warp + g;	/* this thread's rows: row, row + 8 */
	const int m0w = w.m0 + 64 * rw;			/* the warpgroup's first row */
	const float sl2 = p.scale_log2;
	const int s_kv = p.s_kv;

	float o[D / 2];
	float s[BN / 2];
	unsigned pa[BN / 16][4];
	unsigned qa[QREG ? D / 16 : 1][4];
	float m[2] = { ft_neg_inf(), ft_neg_inf() };
	float l[2] = { 0.f, 0.f };
#pragma unroll
	for (int i = 0; i < D / 2; i++)
		o[i] = 0.f;

	if (nmine > 0) {
		/* key limits of the two rows, relative to key 2t of a tile */
		int lim_abs[2];
#pragma unroll
		for (int r = 0; r < 2; r++)
			lim_abs[r] = IS_CAUSAL ? min(s_kv, row + 8 * r + 1 + p.causal_offset) : s_kv;
		const unsigned my_turn = PP_BAR0 + cw, other_turn = PP_BAR0 + (cw ^ 1);

		if (PP && cw == 1)
			ft_bar_arrive(PP_BAR0, 256);	/* consumer 0 issues first */
		ft_mbar_wait(sm.q_full(), (unsigned)nq & 1u);
		if (QREG)	/* released after the first Q K^T has read them (tile 0 below) */
			load_q_frags(qa, q_wg, warp, lane);

		{	/* the overlapped loop (INTRA_WG_OVERLAP 1 or 2) */
			/* tile 0 (the warpgroup's first): S_0 alone */
			{
				const int st = (kv + kw) % ST;
				const unsigned ph = (unsigned)((kv + kw) / ST) & 1u;
				const int n0 = (w.t_begin + kw) * BN;
				const bool need_mask = n0 + BN > s_kv || (IS_CAUSAL && n0 + BN > m0w + 1 + p.causal_offset);
				const int lim[2] = { lim_abs[0] - n0 - 2 * t, lim_abs[1] - n0 - 2 * t };
				float alpha[2];

				ft_mbar_wait(sm.full_k(st), ph);
				if (PP)
					ft_bar_sync(my_turn, 256);
				fence_regs(s);
				ft_wgmma_fence();
				issue_qk(s, q_wg, qa, sm.k_tile(st));
				if (PP)
					ft_bar_arrive(other_turn, 256);
				ft_wgmma_wait<0>();
				fence_regs(s);
				/* Q in registers: the ldmatrix reads of the Q area (generic
				 * proxy) are complete (S_0 used their registers) and ordered
				 * before the producer's next TMA write there (async proxy).
				 * Releasing Q right after the ldmatrix, without the fence,
				 * let that write land first now and then: a wrong 64-row
				 * tile, seen only on tiles of one KV tile, whose producer
				 * issues the next Q at once (docs/kernel_sm90.md). */
				if (PERSIST && QREG)
					ft_fence_proxy_async();
				__syncwarp();
				if (lane == 0) {
					release_kv(sm.empty_k(st));
					/* Q's last reader is done: the next tile's may come */
					if (PERSIST && (QREG || w.n == 1))
						ft_mbar_arrive(sm.q_empty());
				}
				online_softmax(s, m, l, alpha, need_mask, lim, sl2);
				pack_p(pa, s);
			}
			/* steps j = 1 .. n - 1: S_j, P_{j-1} V_{j-1}, the softmax of S_j.
			 * Without MASK_PEEL one pass tests per tile whether it needs the
			 * mask. With it, tile j needs no mask iff its last key is visible
			 * to the warpgroup's first row, (t_begin + j + 1) BN <= lim_wg:
			 * pass 0 runs the tiles before jm and never masks, pass 1 those
			 * from jm on and always masks; the pass loop is unrolled, so each
			 * pass is a loop of its own with the mask decided at compile time
			 * (lim_wg < 0 truncates towards 0: jm stays >= 1). */
			const int lim_wg = IS_CAUSAL ? min(s_kv, m0w + 1 + p.causal_offset) : s_kv;
			const int jm = MASK_PEEL ? max(1, min(nmine, lim_wg / BN - w.t_begin)) : nmine;
#pragma unroll
			for (int pass = 0; pass < (MASK_PEEL ? 2 : 1); pass++) {
				const int i_end = MASK_PEEL && pass == 0 ? jm : nmine;

				/* i counts the warpgroup's tiles, j is the block's (the same
				 * unless KV_WARPGROUPS 2), pj the warpgroup's previous */
				for (int i = pass == 0 ? 1 : jm; i < i_end; i++) {
					const int j = kw + KVWG * i, pj = j - KVWG;
					const int st = (kv + j) % ST, pst = (kv + pj) % ST;
					const unsigned ph = (unsigned)((kv + j) / ST) & 1u, pph = (unsigned)((kv + pj) / ST) & 1u;
					const int n0 = (w.t_begin + j) * BN;
					/* MASK_PEEL: pass 0 never masks, pass 1 always does */
					const bool need_mask = MASK_PEEL ? pass == 1
									 : n0 + BN > s_kv || (IS_CAUSAL && n0 + BN > m0w + 1 + p.causal_offset);
					const int lim[2] = { lim_abs[0] - n0 - 2 * t, lim_abs[1] - n0 - 2 * t };
					float alpha[2];

					ft_mbar_wait(sm.full_k(st), ph);
					if (PP)
						ft_bar_sync(my_turn, 256);
					fence_regs(s);
					fence_regs(o);
					ft_wgmma_fence();
					issue_qk(s, q_wg, qa, sm.k_tile(st));
					ft_mbar_wait(sm.full_v(pst), pph);
					issue_pv(o, pa, sm.v_tile(pst));
					if (PP)
						ft_bar_arrive(other_turn, 256);
					ft_wgmma_wait<1>();	/* S_j done, P V may run on */
					fence_regs(s);
					__syncwarp();
					if (lane == 0) {
						release_kv(sm.empty_k(st));
						if (PERSIST && !QREG && j == w.n - 1)	/* the tile's last Q K^T is done */
							ft_mbar_arrive(sm.q_empty());
					}
					online_softmax(s, m, l, alpha, need_mask, lim, sl2);
					fence_regs(s);
					fence_regs(alpha);
					fence_regs(l);
					wait_all_after(l[0]);
					fence_regs(o);
					__syncwarp();
					if (lane == 0)
						release_kv(sm.empty_v(pst));
					rescale_o(o, alpha);
					pack_p(pa, s);
				}
			}
			/* the last tile's P V */
			{
				const int jl = kw + KVWG * (nmine - 1);
				const int pst = (kv + jl) % ST;
				const unsigned pph = (unsigned)((kv + jl) / ST) & 1u;

				ft_mbar_wait(sm.full_v(pst), pph);
				if (PP)
					ft_bar_sync(my_turn, 256);
				fence_regs(o);
				ft_wgmma_fence();
				issue_pv(o, pa, sm.v_tile(pst));
				/* consumer 1 gave consumer 0 one turn ahead: it skips its last */
				if (PP && cw == 0)
					ft_bar_arrive(other_turn, 256);
				ft_wgmma_wait<0>();
				fence_regs(o);
				__syncwarp();
				if (lane == 0)
					release_kv(sm.empty_v(pst));
			}
		}
	}

	if (KVWG == 2) {
		/* the merge: both consumers are past their loops (every tile of the
		 * block waited for, every wgmma complete), so the K/V ring is free;
		 * consumer 1 stores its state there, one float per thread per row
		 * (conflict-free), consumer 0 reads the same thread's values: both
		 * hold the same rows and columns in the same accumulator slots */
		float *xb = reinterpret_cast<float *>(smem + (sm.k - sm.q));

		ft_fence_proxy_async();
		ft_bar_sync(MERGE_BAR, 256);
		if (cw == 1) {
#pragma unroll
			for (int i = 0; i < D / 2; i++)
				xb[i * 128 + tid] = o[i];
#pragma unroll
			for (int r = 0; r < 2; r++) {
				xb[(D / 2 + r) * 128 + tid] = m[r];
				xb[(D / 2 + 2 + r) * 128 + tid] = l[r];
			}
		}
		ft_bar_sync(MERGE_BAR, 256);
		if (cw == 1)
			return;
		float a0[2], a1[2];
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const float m1 = xb[(D / 2 + r) * 128 + tid], l1 = xb[(D / 2 + 2 + r) * 128 + tid];
			const float mn = fmaxf(m[r], m1);
			const float ms = (mn == ft_neg_inf() ? 0.f : mn) * sl2;	/* no key in either: 0, not NaN */

			a0[r] = ft_exp2(m[r] * sl2 - ms);
			a1[r] = ft_exp2(m1 * sl2 - ms);
			l[r] = l[r] * a0[r] + l1 * a1[r];
			m[r] = mn;
		}
#pragma unroll
		for (int i = 0; i < D / 2; i++)
			o[i] = o[i] * a0[(i >> 1) & 1] + xb[i * 128 + tid] * a1[(i >> 1) & 1];
	}

	/* epilogue: full row sums; a row that saw no key has l = 0 and O = 0 */
	float inv[2], lse[2];
#pragma unroll
	for (int r = 0; r < 2; r++)
		ft_row_finish(l[r], m[r], sl2, inv[r], lse[r]);

	if (p.num_splits == 1 && PERSIST) {
		/* the Q area already holds (or receives) the next tile's Q: store
		 * straight from the accumulators, 4 bytes per row and column pair */
		unsigned short *go = static_cast<unsigned short *>(p.o) + (long long)w.batch * p.o_stride_b +
				     (long long)w.head * p.o_stride_h;
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const int gr = row + 8 * r;

			if (gr >= p.s_q)
				continue;
			unsigned short *orow = go + (long long)gr * p.o_stride_s + 2 * t;
#pragma unroll
			for (int j = 0; j < D / 8; j++)
				*reinterpret_cast<unsigned *>(orow + 8 * j) =
					ft_pack2(o[4 * j + 2 * r] * inv[r], o[4 * j + 2 * r + 1] * inv[r]);
		}
	} else if (p.num_splits == 1) {
		/* stage the warp's 16 rows in its own rows of the Q area (its
		 * wgmma reads are complete), then 16-byte stores */
		unsigned char *qa = smem + (q_wg - sm.q);
		ft_fence_proxy_async();
#pragma unroll
		for (int j = 0; j < D / 8; j++) {
			const int r = 16 * warp + g;

			*reinterpret_cast<unsigned *>(qa + q_chunk(r, j) + 4 * t) =
				ft_pack2(o[4 * j] * inv[0], o[4 * j + 1] * inv[0]);
			*reinterpret_cast<unsigned *>(qa + q_chunk(r + 8, j) + 4 * t) =
				ft_pack2(o[4 * j + 2] * inv[1], o[4 * j + 3] * inv[1]);
		}
		__syncwarp();
		unsigned short *go = static_cast<unsigned short *>(p.o) + (long long)w.batch * p.o_stride_b +
				     (long long)w.head * p.o_stride_h;
		constexpr int CPR = D / 8;	/* 16-byte chunks per row */
#pragma unroll
		for (int it = 0; it < 16 * CPR / 32; it++) {
			const int c = lane + 32 * it;
			const int r = c / CPR, ch = c % CPR;
			const int grow = m0w + 16 * warp + r;

			if (grow < p.s_q)
				*reinterpret_cast<ft_v4u *>(go + (long long)grow * p.o_stride_s + ch * 8) =
					*reinterpret_cast<const ft_v4u *>(qa + q_chunk(16 * warp + r, ch));
		}
	} else {
		/* o_partial [splits, B, H, S_q, D] and lse_partial [splits, B, H, S_q], fp32 */
		const long long prow0 = (((long long)w.split * p.b + w.batch) * p.h + w.head) * p.s_q;
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const int gr = row + 8 * r;

			if (gr >= p.s_q)
				continue;
			float *op = p.o_partial + (prow0 + gr) * D;
#pragma unroll
			for (int j = 0; j < D / 8; j++)
				*reinterpret_cast<ft_v2f *>(op + 8 * j + 2 * t) =
					ft_v2f{ o[4 * j + 2 * r] * inv[r], o[4 * j + 2 * r + 1] * inv[r] };
			if (t == 0)
				p.lse_partial[prow0 + gr] = lse[r];
		}
	}
}

} /* namespace */

/* CLUSTER_M > 1: the cluster shape is the kernel's own, so a plain launch
 * (cuLaunchKernel) runs it in clusters; the grid's x must be a multiple */
#if CLUSTER_M > 1
#define FT_SM90_CLUSTER __cluster_dims__(CLUSTER_M, 1, 1)
#else
#define FT_SM90_CLUSTER
#endif

extern "C" __global__ void __launch_bounds__(NT, BLOCKS_PER_SM) FT_SM90_CLUSTER
	fatune_sm90_fwd(const __grid_constant__ struct fatune_attn_params p)
{
	extern __shared__ __align__(1024) unsigned char smem[];
	const int tid = threadIdx.x;
	smem_map sm;

	sm.q = ft_smem_addr(smem);
	sm.k = sm.q + Q_BYTES;
	sm.v = sm.k + ST * KV_TILE_BYTES;
	sm.bar = sm.v + ST * KV_TILE_BYTES;
	const int tph = tiles_per_head(p);
	const int total = tph * p.h * p.b;

	if (tid == 0) {
		/* the 128-byte swizzle repeats every 1024 bytes: TMA writes and
		 * wgmma reads agree only on 1024-aligned tiles */
		if (sm.q & 1023)
			asm volatile("trap;");
		ft_tma_prefetch_desc(&p.tma_q);
		ft_tma_prefetch_desc(&p.tma_k);
		ft_tma_prefetch_desc(&p.tma_v);
		ft_mbar_init(sm.q_full(), 1);
		ft_mbar_init(sm.q_empty(), 4 * NCWG);
		for (int s = 0; s < ST; s++) {
			ft_mbar_init(sm.full_k(s), 1);
			ft_mbar_init(sm.full_v(s), 1);
			/* one arrival per warp of the consumers that read the tile,
			 * in every block of the cluster */
			ft_mbar_init(sm.empty_k(s), 4 * RWG * CL);
			ft_mbar_init(sm.empty_v(s), 4 * RWG * CL);
		}
		ft_mbar_init_fence();
		if (EARLY) {
			/* the same thread that initialised the barriers: no other
			 * thread waits on them before the block's barrier below */
			const block_work w = block_tile(p, tph);

			if (w.n > 0) {
				produce_q(p, sm, w, 0);
				produce_kv(p, sm, w, 0, 0, false);
			}
		}
	}
	__syncthreads();
	/* in a cluster, the other blocks' barriers are initialised before this
	 * block's first multicast copy or remote release reaches them */
	if (CL > 1)
		ft_cluster_sync();

	if (tid < 128) {
		ft_setmaxnreg_dec<PROD_REGS>();
		if (tid == 0) {
			if (PERSIST) {
				int kv = 0, nq = 0;

				for (int i = blockIdx.x; i < total; i += gridDim.x) {
					const block_work w = tile_of(p, i, tph);

					if (w.n > 0) {
						produce(p, sm, w, kv, nq);
						kv += w.n;
						nq++;
					}
				}
			} else {
				const block_work w = block_tile(p, tph);

				if (w.n > 0)
					produce(p, sm, w, 0, 0);
			}
		}
	} else {
		ft_setmaxnreg_inc<CONS_REGS>();
		if (PERSIST) {
			int kv = 0, nq = 0;

			for (int i = blockIdx.x; i < total; i += gridDim.x) {
				const block_work w = tile_of(p, i, tph);

				consume(p, sm, w, tid / 128 - 1, smem, kv, nq);
				if (w.n > 0) {
					kv += w.n;
					nq++;
				}
			}
		} else {
			consume(p, sm, block_tile(p, tph), tid / 128 - 1, smem, 0, 0);
		}
	}
	/* the partials are stored: the combine kernel may be scheduled (it waits
	 * for this grid to complete before reading them) */
	if (PDL && p.num_splits > 1)
		ft_griddep_launch_dependents();
	/* no block of a cluster leaves while another may still release a stage
	 * of its ring (remote arrivals land in this block's shared memory) */
	if (CL > 1)
		ft_cluster_sync();
}

/* Combine: attention_common.cuh's ft_combine with one group of D/4 threads
 * per row (each owning 4 consecutive columns: one 16-byte fp32 load per
 * split), 128 threads, 512 / D rows per block: the space's combine_grid is
 * [ceil_div(S_q, 512 / D), H, B]. */
extern "C" __global__ void __launch_bounds__(ft_combine_threads)
	fatune_sm90_combine(const __grid_constant__ struct fatune_attn_params p)
{
	ft_combine<D, false, PDL != 0>(p);
}
