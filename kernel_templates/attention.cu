/* attention.cu - a FlashAttention-2-style forward pass, compiled by NVRTC at run time.
 *
 * One block owns TILE_M query rows of one (batch, head). Each of its warps owns
 * 16 or 32 of them (one or two m16 tiles: TILE_M / NUM_WARPS_PER_BLOCK) and
 * keeps its scores, row statistics and output in registers, and its Q fragments
 * too unless they would not fit (then they are re-read from shared memory at
 * each k step). Two m16 tiles per warp share every K and V fragment read from
 * shared memory, halving that traffic per mma. The block walks the keys in
 * tiles of TILE_N: K and V tiles arrive in shared memory through cp.async
 * (KV_STAGES buffers deep), S = Q K^T and O += P V run on the tensor cores
 * (mma.sync m16n8k16, fed by ldmatrix; .trans for V), and the softmax is the
 * online one, in exp2 with the scale folded in. P goes from the S accumulators
 * straight into the A operand of the next mma: the m16n8 C fragments of two
 * adjacent key octets are exactly the m16n8k16 A fragment.
 *
 * Split-KV (p.num_splits > 1, chosen at launch, no recompile): block x of the
 * grid is (row block, split); each split takes an equal share of its row block's
 * KV tiles and writes its normalised partial output and log-sum-exp in fp32; the
 * combine kernel merges them (fatune_abi.h). Causal masking is top-left aligned;
 * a row block reads only the tiles up to its diagonal, masks only the tiles that
 * cross it, and row blocks are issued heaviest first.
 *
 * Compile-time parameters (-D): HEAD_DIM (32, 64, 128), IS_CAUSAL, FATUNE_BF16,
 * NUM_WARPS_PER_BLOCK, TILE_M (16 or 32 times NUM_WARPS_PER_BLOCK), TILE_N
 * (multiple of 16), KV_STAGES (1..3) and FATUNE_SMEM_BYTES, the space's
 * smem_bytes formula, which must equal what this file computes (static_assert).
 *
 * Shared memory is dynamic: [Q: TILE_M rows][K stage 0..][V stage 0..], each
 * row HEAD_DIM 16-bit values, 16-byte chunks XOR-swizzled so that the eight row
 * addresses of every ldmatrix phase and cp.async row land in distinct banks.
 * Design notes and measurements: docs/kernel.md.
 */
#include "fatune_abi.h"
#include "attention_ptx.cuh"

#if !defined(HEAD_DIM) || !defined(IS_CAUSAL) || !defined(NUM_WARPS_PER_BLOCK) || \
	!defined(TILE_M) || !defined(TILE_N) || !defined(KV_STAGES) || !defined(FATUNE_SMEM_BYTES)
#error "attention.cu needs -DHEAD_DIM -DIS_CAUSAL -DNUM_WARPS_PER_BLOCK -DTILE_M -DTILE_N -DKV_STAGES -DFATUNE_SMEM_BYTES"
#endif

namespace {

constexpr int D = HEAD_DIM;
constexpr int NW = NUM_WARPS_PER_BLOCK;
constexpr int NT = NW * 32;		/* threads per block */
constexpr int BM = TILE_M;
constexpr int BN = TILE_N;
constexpr int STAGES = KV_STAGES;
constexpr int MT = BM / (16 * NW);	/* m16 tiles per warp */
constexpr int WROWS = 16 * MT;		/* query rows per warp */
/* Per thread, O takes MT * D / 2 registers, S MT * TILE_N / 2 and the Q
 * fragments MT * D / 4. Q stays in registers for the whole loop while the three
 * fit in 160 (every one-tile warp; ptxas needs the rest of the 255 for
 * addresses, K/V fragments and the softmax); otherwise it is re-read from
 * shared memory at each k step, MT ldmatrix per 16 of the head dim. */
constexpr bool Q_REGS = MT * (D / 2 + BN / 2 + D / 4) <= 160;
constexpr int CPR = D / 8;		/* 16-byte chunks per row */
constexpr int Q_BYTES = BM * D * 2;
constexpr int KV_BYTES = BN * D * 2;	/* one K (or V) tile */
constexpr int SMEM_BYTES = Q_BYTES + 2 * STAGES * KV_BYTES;
constexpr float LN2 = 0.693147180559945309f;
constexpr float LOG2E = 1.442695040888963407f;

static_assert(D == 32 || D == 64 || D == 128, "HEAD_DIM must be 32, 64 or 128");
static_assert(BM == WROWS * NW && (MT == 1 || MT == 2),
	      "each warp owns 16 or 32 query rows: TILE_M == 16 or 32 times NUM_WARPS_PER_BLOCK");
static_assert(NW >= 1 && NW <= 8, "1 to 8 warps per block");
static_assert(BN % 16 == 0 && BN >= 16 && BN <= 128, "TILE_N must be a multiple of 16, at most 128");
static_assert(STAGES >= 1 && STAGES <= 3, "KV_STAGES must be 1, 2 or 3");
static_assert(SMEM_BYTES == FATUNE_SMEM_BYTES,
	      "the space's smem_bytes formula disagrees with the template's layout");

/* Byte offset of 16-byte chunk `chunk` of row `row` in a [rows][D] tile. Rows of
 * 128 bytes or more: the chunk index within each 128-byte segment is XORed with
 * row % 8, so 8 consecutive rows at the same logical chunk hit 8 different
 * 16-byte bank groups. Rows of 64 bytes (D = 32) put two rows in one 128-byte
 * line: XOR with (row / 2) % 4 gives the same property. */
static __device__ __forceinline__ unsigned swz(int row, int chunk)
{
	if (CPR >= 8)
		return (unsigned)(row * CPR * 16 + ((chunk & ~7) | ((chunk ^ row) & 7)) * 16);
	return (unsigned)(row * CPR * 16 + ((chunk ^ (row >> 1)) & 3) * 16);
}

/* Issues the cp.async copies of rows [row0, row0 + ROWS) of a [S][D] matrix into
 * the tile at dst; rows at or past s are zero-filled. Thread tid always copies
 * chunk tid % CPR of rows tid / CPR + k * RP, so its global addresses are one
 * base plus constants, and so are its shared ones when RP is a multiple of the
 * swizzle period (8 rows). */
template <int ROWS>
static __device__ __forceinline__ void load_tile(unsigned dst, const unsigned short *g, int row0,
						 int s, int tid)
{
	constexpr int RP = NT / CPR;	/* rows per pass: NT >= 32 >= 2 * CPR */
	constexpr int PASSES = (ROWS + RP - 1) / RP;
	const int r0 = tid / CPR, ch = tid % CPR;
	const int valid = s - row0 - r0;	/* pass k copies a real row iff k * RP < valid */
	const unsigned short *src = g + (long long)(row0 + r0) * D + ch * 8;

#pragma unroll
	for (int k = 0; k < PASSES; k++) {
		if (ROWS % RP == 0 || r0 + k * RP < ROWS) {
			const bool ok = k * RP < valid;

			ft_cp_async16(dst + swz(r0 + k * RP, ch), ok ? src + k * RP * D : g, ok ? 16 : 0);
		}
	}
}

/* Row max of the two rows (g, g + 8) this thread holds, reduced over the quad of
 * lanes that share them (lanes 4g..4g+3). */
static __device__ __forceinline__ float quad_max(float x)
{
	x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
	return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

static __device__ __forceinline__ float quad_sum(float x)
{
	x += __shfl_xor_sync(0xffffffffu, x, 1);
	return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* Per-warp state: the warp's Q fragments (when kept in registers), its output
 * accumulators and the online-softmax statistics of the two rows per m16 tile
 * each lane holds (g and g + 8). */
struct warp_state {
	unsigned q[Q_REGS ? MT : 1][Q_REGS ? D / 16 : 1][4];	/* A fragments of Q per k step */
	float o[MT][D / 8][4];	/* C fragments of O, one per 8-wide d octet */
	float m[MT][2];		/* running raw-score max of rows g and g + 8 */
	float l[MT][2];		/* this lane's part of the running exp sum */
};

/* The A fragments of Q for k step kk of m16 tile mt: matrices (rows 0-7, d 0-7),
 * (rows 8-15, d 0-7), (rows 0-7, d 8-15), (rows 8-15, d 8-15) = a0..a3. qrow0 is
 * the warp's first row in the Q tile. */
static __device__ __forceinline__ void load_q(unsigned a[4], unsigned q_smem, int qrow0, int mt,
					      int kk, int lane)
{
	ft_ldmatrix_x4(a, q_smem + swz(qrow0 + 16 * mt + (lane & 15), 2 * kk + (lane >> 4)));
}

/* Masks one tile's scores, then the online softmax update: new row max, P =
 * exp2(S * scale_log2 - max * scale_log2), running sums and O rescaled. P goes
 * out packed to 16 bits as the A fragments of the P V mma: pa[mt][kk] is k step
 * kk (keys 16kk..16kk+15), made of the C fragments of key octets 2kk and
 * 2kk + 1: (row g, k 2t), (row g+8, k 2t), (row g, k 2t+8), (row g+8, k 2t+8).
 * Packing here frees the fp32 scores before P V. n0 is the tile's first key,
 * m0w the warp's first query row. */
static __device__ __forceinline__ void process_scores(warp_state &w, float (&sc)[MT][BN / 8][4],
						      unsigned (&pa)[MT][BN / 16][4], int n0,
						      int m0w, int s_len, int lane, float scale_log2)
{
	const int g = lane >> 2, t = lane & 3;
	const bool need_mask = (n0 + BN > s_len) || (IS_CAUSAL && n0 + BN - 1 > m0w);

#pragma unroll
	for (int mt = 0; mt < MT; mt++) {
		if (need_mask) {
			/* key n0 + 8j + 2t + c is visible to row iff 8j + c < lim,
			 * lim = min(s_len, row + 1) - n0 - 2t (row + 1 when causal) */
			int lim[2];
#pragma unroll
			for (int r = 0; r < 2; r++) {
				const int row = m0w + 16 * mt + g + 8 * r;

				lim[r] = (IS_CAUSAL ? min(s_len, row + 1) : s_len) - n0 - 2 * t;
			}
#pragma unroll
			for (int j = 0; j < BN / 8; j++)
#pragma unroll
				for (int e = 0; e < 4; e++)
					if (8 * j + (e & 1) >= lim[e >> 1])
						sc[mt][j][e] = ft_neg_inf();
		}

		float mx[2] = { w.m[mt][0], w.m[mt][1] };
#pragma unroll
		for (int j = 0; j < BN / 8; j++) {
			mx[0] = fmaxf(mx[0], fmaxf(sc[mt][j][0], sc[mt][j][1]));
			mx[1] = fmaxf(mx[1], fmaxf(sc[mt][j][2], sc[mt][j][3]));
		}
		float msc[2], alpha[2];
#pragma unroll
		for (int r = 0; r < 2; r++) {
			mx[r] = quad_max(mx[r]);
			/* a row with every key masked so far keeps max -inf; 0 stands
			 * in for it so that exp2(-inf - 0) = 0 rather than NaN */
			const float mu = mx[r] == ft_neg_inf() ? 0.f : mx[r];
			msc[r] = mu * scale_log2;
			alpha[r] = ft_exp2(w.m[mt][r] * scale_log2 - msc[r]);	/* old max -inf: 0 */
			w.m[mt][r] = mx[r];
		}
		float rs[2] = { 0.f, 0.f };
#pragma unroll
		for (int j = 0; j < BN / 8; j++) {
			float p[4];

#pragma unroll
			for (int e = 0; e < 4; e++) {
				p[e] = ft_exp2(fmaf(sc[mt][j][e], scale_log2, -msc[e >> 1]));
				rs[e >> 1] += p[e];
			}
			pa[mt][j >> 1][2 * (j & 1)] = ft_pack2(p[0], p[1]);
			pa[mt][j >> 1][2 * (j & 1) + 1] = ft_pack2(p[2], p[3]);
		}
#pragma unroll
		for (int r = 0; r < 2; r++)
			w.l[mt][r] = w.l[mt][r] * alpha[r] + rs[r];
#pragma unroll
		for (int j = 0; j < D / 8; j++) {
			w.o[mt][j][0] *= alpha[0];
			w.o[mt][j][1] *= alpha[0];
			w.o[mt][j][2] *= alpha[1];
			w.o[mt][j][3] *= alpha[1];
		}
	}
}

/* S = Q K^T over the K tile at k_smem: sc[mt][j] is key octet j of the tile for
 * m16 tile mt. Every K fragment serves all MT tiles. */
static __device__ __forceinline__ void qk(const warp_state &w, float (&sc)[MT][BN / 8][4],
					  unsigned k_smem, unsigned q_smem, int qrow0, int lane)
{
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int j = 0; j < BN / 8; j++)
			sc[mt][j][0] = sc[mt][j][1] = sc[mt][j][2] = sc[mt][j][3] = 0.f;
	/* ldmatrix.x4 over keys 16jj..16jj+15 and d 16kk..16kk+15: matrices (keys
	 * 0-7, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 0-7), (keys 8-15, d 8-15),
	 * i.e. the B fragments (b0, b1) of key octets 2jj and 2jj + 1 */
	const int krow = (lane & 7) + ((lane >> 4) << 3);
	const int kch = (lane >> 3) & 1;
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		unsigned qa[Q_REGS ? 1 : MT][4];

		if (!Q_REGS)
#pragma unroll
			for (int mt = 0; mt < MT; mt++)
				load_q(qa[Q_REGS ? 0 : mt], q_smem, qrow0, mt, kk, lane);
#pragma unroll
		for (int jj = 0; jj < BN / 16; jj++) {
			unsigned b[4];

			ft_ldmatrix_x4(b, k_smem + swz(16 * jj + krow, 2 * kk + kch));
#pragma unroll
			for (int mt = 0; mt < MT; mt++) {
				const unsigned *a = Q_REGS ? w.q[Q_REGS ? mt : 0][Q_REGS ? kk : 0]
							   : qa[Q_REGS ? 0 : mt];

				ft_mma16816(sc[mt][2 * jj], a, b[0], b[1]);
				ft_mma16816(sc[mt][2 * jj + 1], a, b[2], b[3]);
			}
		}
	}
}

/* O += P V over the V tile at v_smem, P as packed by process_scores. */
static __device__ __forceinline__ void pv(warp_state &w, const unsigned (&pa)[MT][BN / 16][4],
					  unsigned v_smem, int lane)
{
	/* ldmatrix.x4.trans over keys 16kk..16kk+15 and d 16dd..16dd+15: matrices
	 * (keys 0-7, d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15), (keys 8-15,
	 * d 8-15), i.e. the B fragments (b0, b1) of d octets 2dd and 2dd + 1 */
	const int vrow = lane & 15;
	const int vch = lane >> 4;
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++) {
#pragma unroll
		for (int dd = 0; dd < D / 16; dd++) {
			unsigned b[4];

			ft_ldmatrix_x4_trans(b, v_smem + swz(16 * kk + vrow, 2 * dd + vch));
#pragma unroll
			for (int mt = 0; mt < MT; mt++) {
				ft_mma16816(w.o[mt][2 * dd], pa[mt][kk], b[0], b[1]);
				ft_mma16816(w.o[mt][2 * dd + 1], pa[mt][kk], b[2], b[3]);
			}
		}
	}
}

/* Writes the neutral partial of an empty split: O = 0, lse = -inf for every
 * valid row of the block. */
static __device__ __forceinline__ void write_empty_partial(const fatune_attn_params &p, long long prow0, int m0,
					   int tid)
{
	const int rows = min(BM, p.s - m0);
	float *op = p.o_partial + (prow0 + m0) * D;

	for (int i = tid; i < rows * (D / 4); i += NT)
		reinterpret_cast<ft_v4f *>(op)[i] = ft_v4f{ 0.f, 0.f, 0.f, 0.f };
	for (int i = tid; i < rows; i += NT)
		p.lse_partial[prow0 + m0 + i] = ft_neg_inf();
}

} /* namespace */

extern "C" __global__ void __launch_bounds__(NT, 1) fatune_attention_fwd(struct fatune_attn_params p)
{
	extern __shared__ __align__(128) unsigned char smem[];
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int g = lane >> 2, t = lane & 3;
	const int s_len = p.s, splits = p.num_splits;
	const int m_blocks = (s_len + BM - 1) / BM;
	const int split = blockIdx.x % splits;
	/* causal: the last row blocks see the most keys, so they go first */
	const int mb = IS_CAUSAL ? m_blocks - 1 - (int)(blockIdx.x / splits) : (int)(blockIdx.x / splits);
	const int m0 = mb * BM, m0w = m0 + WROWS * warp;
	const long long bh = (long long)blockIdx.z * p.h + blockIdx.y;
	const long long base = bh * s_len * D;
	/* first row of this (split, b, h) in lse_partial, [splits, B, H, S] */
	const long long prow0 = ((long long)split * p.b * p.h + bh) * s_len;

	const int kv_end = IS_CAUSAL ? min(s_len, m0 + BM) : s_len;
	const int n_tiles = (kv_end + BN - 1) / BN;
	const int per_split = (n_tiles + splits - 1) / splits;
	const int t_begin = split * per_split;
	const int t_end = min(n_tiles, t_begin + per_split);

	if (t_begin >= t_end) {	/* only when splits > 1 */
		write_empty_partial(p, prow0, m0, tid);
		return;
	}

	const unsigned short *gq = static_cast<const unsigned short *>(p.q) + base;
	const unsigned short *gk = static_cast<const unsigned short *>(p.k) + base;
	const unsigned short *gv = static_cast<const unsigned short *>(p.v) + base;
	const unsigned q_smem = ft_smem_addr(smem);
	const unsigned k_smem = q_smem + Q_BYTES;
	const unsigned v_smem = k_smem + STAGES * KV_BYTES;
	const bool warp_active = m0w < s_len;

	warp_state w;
#pragma unroll
	for (int mt = 0; mt < MT; mt++) {
#pragma unroll
		for (int j = 0; j < D / 8; j++)
			w.o[mt][j][0] = w.o[mt][j][1] = w.o[mt][j][2] = w.o[mt][j][3] = 0.f;
		w.m[mt][0] = w.m[mt][1] = ft_neg_inf();
		w.l[mt][0] = w.l[mt][1] = 0.f;
	}

	/* prologue: Q, then the first tiles; every commit is unconditional so that
	 * the group arithmetic below holds at the end of the range too */
	load_tile<BM>(q_smem, gq, m0, s_len, tid);
	ft_cp_async_commit();
	if (STAGES == 1) {
		load_tile<BN>(k_smem, gk, t_begin * BN, s_len, tid);
		ft_cp_async_commit();
		load_tile<BN>(v_smem, gv, t_begin * BN, s_len, tid);
		ft_cp_async_commit();
		ft_cp_async_wait<2>();	/* Q landed; K0, V0 may be in flight */
	} else {
#pragma unroll
		for (int st = 0; st < STAGES - 1; st++) {
			if (t_begin + st < t_end) {
				load_tile<BN>(k_smem + st * KV_BYTES, gk, (t_begin + st) * BN, s_len, tid);
				load_tile<BN>(v_smem + st * KV_BYTES, gv, (t_begin + st) * BN, s_len, tid);
			}
			ft_cp_async_commit();
		}
		ft_cp_async_wait<STAGES - 1>();
	}
	__syncthreads();
	if (Q_REGS)
#pragma unroll
		for (int mt = 0; mt < MT; mt++)
#pragma unroll
			for (int kk = 0; kk < D / 16; kk++)
				load_q(w.q[Q_REGS ? mt : 0][Q_REGS ? kk : 0], q_smem, WROWS * warp, mt, kk, lane);

	/* One KV tile per step: wait for it, refill the buffer freed by the last
	 * step, compute. (Splitting off the tiles that need no mask into a
	 * branch-free loop of their own made ptxas spill more, not less.) */
	for (int i = t_begin; i < t_end; i++) {
		const int n0 = i * BN;
		/* a warp whose rows all precede the tile's first key has nothing to
		 * do (a warp past the sequence end computes on zero-filled rows that
		 * are never stored: branching on it costs registers everywhere) */
		const bool skip = IS_CAUSAL && n0 > m0w + WROWS - 1;
		float sc[MT][BN / 8][4];
		unsigned pa[MT][BN / 16][4];

		if (STAGES == 1) {
			/* one buffer each for K and V: K(i+1) streams in during
			 * softmax and P V, V(i+1) during the next Q K^T */
			ft_cp_async_wait<1>();	/* K(i) */
			__syncthreads();
			if (!skip)
				qk(w, sc, k_smem, q_smem, WROWS * warp, lane);
			__syncthreads();	/* every warp is done with K(i) */
			if (i + 1 < t_end)
				load_tile<BN>(k_smem, gk, (i + 1) * BN, s_len, tid);
			ft_cp_async_commit();
			ft_cp_async_wait<1>();	/* V(i) */
			__syncthreads();
			if (!skip) {
				process_scores(w, sc, pa, n0, m0w, s_len, lane, p.scale_log2);
				pv(w, pa, v_smem, lane);
			}
			__syncthreads();	/* every warp is done with V(i) */
			if (i + 1 < t_end)
				load_tile<BN>(v_smem, gv, (i + 1) * BN, s_len, tid);
			ft_cp_async_commit();
		} else {
			const int r = i - t_begin;
			const int st = r % STAGES;
			const int nst = (r + STAGES - 1) % STAGES;

			/* tile i landed (its group is older than the STAGES-2 newest),
			 * and every warp is done with tile i-1, whose buffer is refilled */
			ft_cp_async_wait<(STAGES >= 2 ? STAGES - 2 : 0)>();
			__syncthreads();
			if (i + STAGES - 1 < t_end) {
				load_tile<BN>(k_smem + nst * KV_BYTES, gk, (i + STAGES - 1) * BN, s_len, tid);
				load_tile<BN>(v_smem + nst * KV_BYTES, gv, (i + STAGES - 1) * BN, s_len, tid);
			}
			ft_cp_async_commit();
			if (!skip) {
				qk(w, sc, k_smem + st * KV_BYTES, q_smem, WROWS * warp, lane);
				process_scores(w, sc, pa, n0, m0w, s_len, lane, p.scale_log2);
				pv(w, pa, v_smem + st * KV_BYTES, lane);
			}
		}
	}
	ft_cp_async_wait<0>();	/* leave no copy in flight (the trailing groups are empty) */

	/* epilogue: each row's full sum, then O / l; a row that saw no key (only in
	 * a split) has l = 0: 1 stands in for 1/l and O stays 0 */
	float inv[MT][2], lse[MT][2];
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const float l = quad_sum(w.l[mt][r]);

			inv[mt][r] = l > 0.f ? ft_rcp(l) : 1.f;
			lse[mt][r] = l > 0.f ? (w.m[mt][r] * p.scale_log2 + ft_log2(l)) * LN2 : ft_neg_inf();
		}
	if (!warp_active)
		return;

	if (splits == 1) {
		/* stage the warp's output rows in its own rows of the Q buffer (only
		 * this warp ever reads them), then write 16-byte chunks */
		unsigned char *stage = smem;
#pragma unroll
		for (int mt = 0; mt < MT; mt++) {
			const int srow = WROWS * warp + 16 * mt + g;
#pragma unroll
			for (int j = 0; j < D / 8; j++) {
				*reinterpret_cast<unsigned *>(stage + swz(srow, j) + 4 * t) =
					ft_pack2(w.o[mt][j][0] * inv[mt][0], w.o[mt][j][1] * inv[mt][0]);
				*reinterpret_cast<unsigned *>(stage + swz(srow + 8, j) + 4 * t) =
					ft_pack2(w.o[mt][j][2] * inv[mt][1], w.o[mt][j][3] * inv[mt][1]);
			}
		}
		__syncwarp();
		unsigned short *go = static_cast<unsigned short *>(p.o) + base;
#pragma unroll
		for (int it = 0; it < (WROWS * CPR) / 32; it++) {
			const int c = lane + 32 * it;
			const int r = c / CPR, ch = c % CPR;

			if (m0w + r < s_len)
				*reinterpret_cast<ft_v4u *>(go + (long long)(m0w + r) * D + ch * 8) =
					*reinterpret_cast<const ft_v4u *>(stage + swz(WROWS * warp + r, ch));
		}
	} else {
		float *op = p.o_partial + prow0 * D;
#pragma unroll
		for (int mt = 0; mt < MT; mt++)
#pragma unroll
			for (int r = 0; r < 2; r++) {
				const int row = m0w + 16 * mt + g + 8 * r;

				if (row >= s_len)
					continue;
#pragma unroll
				for (int j = 0; j < D / 8; j++)
					*reinterpret_cast<ft_v2f *>(op + (long long)row * D + 8 * j + 2 * t) =
						ft_v2f{ w.o[mt][j][2 * r] * inv[mt][r],
							w.o[mt][j][2 * r + 1] * inv[mt][r] };
				if (t == 0)
					p.lse_partial[prow0 + row] = lse[mt][r];
			}
	}
}

/* Combine: D/4 threads per row, each owning 4 consecutive columns (one 16-byte
 * fp32 load per split), so a block of COMBINE_THREADS covers 4 * 128 / D rows:
 * the space's combine_grid is [ceil_div(S, 512 / D), H, B]. */
namespace {
constexpr int COMBINE_THREADS = 128;
constexpr int COMBINE_TPR = D / 4;
constexpr int COMBINE_RPB = COMBINE_THREADS / COMBINE_TPR;
static_assert(COMBINE_THREADS % COMBINE_TPR == 0, "a row's threads must fit a block");
}

extern "C" __global__ void __launch_bounds__(COMBINE_THREADS)
	fatune_attention_combine(struct fatune_attn_params p)
{
	const int row = blockIdx.x * COMBINE_RPB + threadIdx.x / COMBINE_TPR;
	const int c4 = threadIdx.x % COMBINE_TPR;
	const int s_len = p.s, splits = p.num_splits;
	const long long bh = (long long)blockIdx.z * p.h + blockIdx.y;
	const long long stride = (long long)p.b * p.h * s_len;	/* one split, in rows */

	if (row >= s_len)
		return;
	const long long prow = bh * s_len + row;
	float mx = ft_neg_inf();
	for (int i = 0; i < splits; i++)
		mx = fmaxf(mx, p.lse_partial[i * stride + prow]);
	/* every split empty (cannot happen for a valid row, but stay finite) */
	if (mx == ft_neg_inf())
		mx = 0.f;
	float sum = 0.f;
	for (int i = 0; i < splits; i++)
		sum += ft_exp2((p.lse_partial[i * stride + prow] - mx) * LOG2E);
	/* weight_i = exp(lse_i - lse) with lse = log(sum) + mx; a zero sum gives 0 */
	const float inv = sum > 0.f ? ft_rcp(sum) : 0.f;
	ft_v4f acc = { 0.f, 0.f, 0.f, 0.f };
	for (int i = 0; i < splits; i++) {
		const float wgt = ft_exp2((p.lse_partial[i * stride + prow] - mx) * LOG2E) * inv;
		const ft_v4f x = reinterpret_cast<const ft_v4f *>(p.o_partial + (i * stride + prow) * D)[c4];

		if (wgt > 0.f) {	/* an empty split's O is 0, but never trust 0 * garbage */
			acc.x += wgt * x.x;
			acc.y += wgt * x.y;
			acc.z += wgt * x.z;
			acc.w += wgt * x.w;
		}
	}
	unsigned short *go = static_cast<unsigned short *>(p.o) + prow * D;
	reinterpret_cast<ft_v2u *>(go)[c4] = ft_v2u{ ft_pack2(acc.x, acc.y), ft_pack2(acc.z, acc.w) };
}
