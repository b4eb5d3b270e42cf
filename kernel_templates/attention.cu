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
 * It speaks ABI v2 (fatune_abi.h, compiled with -DFATUNE_ABI=2): S_q queries
 * over S_kv keys, H query heads over H_kv KV heads (query head h reads KV head
 * h / (H / H_kv)), every tensor through its strides, causal masks aligned
 * bottom-right (query i sees keys 0 .. i + S_kv - S_q).
 *
 * With PACK_GQA = 1 (the decode path) a block's rows are not the positions of
 * one query head but the (position, head) pairs of the H / H_kv query heads
 * that share one KV head, position-major: packed row r is position r / g of
 * head r % g of the group. K and V are then read once per group, and a decode
 * step (S_q = 1, g = 4) fills a quarter of one m16 tile instead of a sixteenth
 * of four. grid.y runs over KV heads instead of query heads.
 *
 * Split-KV (p.num_splits > 1, chosen at launch, no recompile): block x of the
 * grid is (row block, split); each split takes an equal share of its row block's
 * KV tiles and writes its normalised partial output and log-sum-exp in fp32; the
 * combine kernel merges them (fatune_abi.h). This is what fills the GPU in
 * decode, where B * H_kv blocks are far fewer than the SMs. With
 * COMBINE_IN_KERNEL = 1 there is no second launch: each split block, once its
 * partial is written, arrives on a counter of its (row block, head (group),
 * batch) in the workspace, and the last to arrive merges every split's
 * partial (the combine kernel's rule, attention_common.cuh) and sets the
 * counter back to 0, so the workspace is zero again for the next launch (the
 * space's workspace.init is zero_once). A causal row block
 * reads only the tiles up to its last row's diagonal, masks only the tiles that
 * cross a row's diagonal, and row blocks are issued heaviest first.
 *
 * Compile-time parameters (-D): HEAD_DIM (32, 64, 128), IS_CAUSAL, FATUNE_BF16,
 * NUM_WARPS_PER_BLOCK, TILE_M (16 or 32 times NUM_WARPS_PER_BLOCK), TILE_N
 * (multiple of 16), KV_STAGES (1..3), PACK_GQA (0/1), DENSE_KV (0/1: K and V
 * rows are D elements apart and K and V have the same strides, so the copy
 * addresses of the KV loop are immediates; the kernel traps when the strides
 * say otherwise), COMBINE_IN_KERNEL (0, the default, or 1: merge the splits in
 * this kernel, see above; needs a workspace of 4 bytes per (row block, grid.y,
 * batch)), PDL (0, the default; 1 or 2: programmatic dependent launch of the
 * combine kernel, sm_90+: with 1 each split block runs
 * griddepcontrol.launch_dependents after its partial's stores, with 2 as it
 * starts, so that the combine's blocks are resident and waiting before the last
 * main block ends; either way the combine kernel runs griddepcontrol.wait, which
 * returns only once the whole main grid has completed and its stores are
 * visible, before it reads the partials; the launch attribute is the space's
 * launch.combine_pdl) and
 * FATUNE_SMEM_BYTES, the space's smem_bytes formula, which must equal what this
 * file computes (static_assert).
 *
 * KV_WARPS (optional: 0, the default, or 1, search_spaces/attention_decode.yaml):
 * the block's warps share its one m16 tile of rows (TILE_M 16, the decode rows
 * of a query head group) and split its KV range among themselves instead: warp
 * w takes tiles w, w + NUM_WARPS_PER_BLOCK, ... of the block's share, each warp
 * in K/V buffers of its own with no block barrier in the loop, and at the end
 * the warps' (max, sum, O) are merged in shared memory by the split-KV rule
 * and warp 0 writes the rows. A decode block then streams K and V with 2-8
 * warps (the bytes in flight of one block) instead of one, with fewer splits
 * and so fewer partials to combine.
 *
 * Shared memory is dynamic: [Q: TILE_M rows][K stage 0..][V stage 0..] (with
 * KV_WARPS, one [K stages][V stages] per warp), each row HEAD_DIM 16-bit
 * values, 16-byte chunks XOR-swizzled so that the eight row addresses of
 * every ldmatrix phase and cp.async row land in distinct banks.
 * Design notes and measurements: docs/kernel.md.
 */
#include "fatune_abi.h"
#include "attention_ptx.cuh"
#include "attention_common.cuh"

#if !defined(FATUNE_ABI) || FATUNE_ABI != 2
#error "attention.cu speaks ABI v2: compile it with -DFATUNE_ABI=2 (the space's template.abi)"
#endif
#if !defined(HEAD_DIM) || !defined(IS_CAUSAL) || !defined(NUM_WARPS_PER_BLOCK) || !defined(TILE_M) || \
	!defined(TILE_N) || !defined(KV_STAGES) || !defined(PACK_GQA) || !defined(DENSE_KV) || \
	!defined(FATUNE_SMEM_BYTES)
#error "attention.cu needs -DHEAD_DIM -DIS_CAUSAL -DNUM_WARPS_PER_BLOCK -DTILE_M -DTILE_N -DKV_STAGES -DPACK_GQA -DDENSE_KV -DFATUNE_SMEM_BYTES"
#endif

#ifndef COMBINE_IN_KERNEL
#define COMBINE_IN_KERNEL 0
#endif
#ifndef PDL
#define PDL 0
#endif
#ifndef KV_WARPS
#define KV_WARPS 0
#endif

#if PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "PDL=1 or 2 (griddepcontrol) needs sm_90 or newer"
#endif

namespace {

constexpr int D = HEAD_DIM;
constexpr int NW = NUM_WARPS_PER_BLOCK;
constexpr int NT = NW * 32;		/* threads per block */
constexpr int BM = TILE_M;
constexpr int BN = TILE_N;
constexpr int STAGES = KV_STAGES;
constexpr bool KVW = KV_WARPS != 0;	/* the warps share the rows, split the keys */
constexpr int MT = KVW ? BM / 16 : BM / (16 * NW);	/* m16 tiles per warp */
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
constexpr int WARP_KV_BYTES = 2 * STAGES * KV_BYTES;	/* a warp's K and V stages (KV_WARPS) */
constexpr int SMEM_BYTES = Q_BYTES + WARP_KV_BYTES * (KVW ? NW : 1);

static_assert(D == 32 || D == 64 || D == 128, "HEAD_DIM must be 32, 64 or 128");
static_assert(KVW || (BM == WROWS * NW && (MT == 1 || MT == 2)),
	      "each warp owns 16 or 32 query rows: TILE_M == 16 or 32 times NUM_WARPS_PER_BLOCK");
static_assert(KV_WARPS == 0 || (KV_WARPS == 1 && BM == 16 && NW >= 2 && BN >= 32),
	      "KV_WARPS=1: 2 to 8 warps share one m16 tile (TILE_M 16) and take KV tiles of >= 32 keys");
static_assert(NW >= 1 && NW <= 8, "1 to 8 warps per block");
static_assert(BN % 16 == 0 && BN >= 16 && BN <= 128, "TILE_N must be a multiple of 16, at most 128");
static_assert(STAGES >= 1 && STAGES <= 3, "KV_STAGES must be 1, 2 or 3");
static_assert(PACK_GQA == 0 || PACK_GQA == 1, "PACK_GQA must be 0 or 1");
static_assert(DENSE_KV == 0 || DENSE_KV == 1, "DENSE_KV must be 0 or 1");
static_assert(COMBINE_IN_KERNEL == 0 || COMBINE_IN_KERNEL == 1, "COMBINE_IN_KERNEL must be 0 or 1");
static_assert(PDL == 0 || ((PDL == 1 || PDL == 2) && COMBINE_IN_KERNEL == 0),
	      "PDL must be 0, 1 or 2, and 1 or 2 only with the combine kernel (COMBINE_IN_KERNEL 0)");
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

/* Issues the cp.async copies of rows [row0, row0 + ROWS) of a K or V matrix
 * (rows `stride` elements apart) into the tile at dst; rows at or past s are
 * zero-filled (src-size 0; the source address stays a valid one). THREADS
 * threads copy (tid 0 .. THREADS - 1): the block's NT, or one warp's 32 (its
 * lanes) with KV_WARPS. Below NT stands for THREADS.
 *
 * With at least 8 rows per pass (RP = NT / CPR), thread tid copies chunk
 * tid % CPR of rows tid / CPR + k * RP: its shared addresses are one base plus
 * constants (RP is a multiple of the swizzle period), and so are its global
 * ones when the stride is the compile-time D (DENSE_KV); a run-time stride
 * costs one multiply-add per copy. With fewer (one warp at D >= 64, two at
 * D = 128) that mapping would put the swizzle phase of every copy in a
 * register, so thread tid copies chunks tid / 8 + (NT / 8) i of rows
 * tid % 8 + 8 k instead: all its rows share one swizzle phase (two bases plus
 * constants on the shared side) and a row's chunks one global address. */
template <int ROWS, int THREADS = NT>
static __device__ __forceinline__ void load_tile(unsigned dst, const unsigned short *g, int stride,
						 int row0, int s, int tid)
{
	constexpr int RP = THREADS / CPR;	/* rows per pass: THREADS >= 32 >= 2 * CPR */

	if constexpr (RP >= 8) {
		constexpr int PASSES = (ROWS + RP - 1) / RP;
		const int r0 = tid / CPR, ch = tid % CPR;
		const int valid = s - row0 - r0;	/* pass k copies a real row iff k * RP < valid */
		/* the dense form is spelled with D itself: the same arithmetic
		 * through `stride`, even when that folds to D, made ptxas rebuild
		 * every copy's address in the loop (+127 instructions per tile at
		 * D=128, 128-key tiles) */
		const unsigned short *src =
			g + (DENSE_KV ? (long long)(row0 + r0) * D : (long long)(row0 + r0) * stride) + ch * 8;

#pragma unroll
		for (int k = 0; k < PASSES; k++) {
			if (ROWS % RP == 0 || r0 + k * RP < ROWS) {
				const bool ok = k * RP < valid;

				ft_cp_async16(dst + swz(r0 + k * RP, ch),
					      ok ? (DENSE_KV ? src + k * RP * D : src + (long long)(k * RP) * stride) : g,
					      ok ? 16 : 0);
			}
		}
	} else {
		constexpr int CS = THREADS / 8;	/* chunk stride: 4 or 8 */
		constexpr int CPT = CPR / CS;	/* chunks per thread per row */
		static_assert(CPR >= 8 && CS >= 4 && CPR % CS == 0 && ROWS % 8 == 0,
			      "the narrow copy mapping needs rows of >= 128 bytes");
		const int r0 = tid & 7, cg = tid >> 3;	/* cg < CS */
		const int valid = s - row0 - r0;
		const unsigned short *src = g + (long long)(row0 + r0) * stride + cg * 8;
		/* chunk c = cg + CS i of a row = r0 (mod 8) sits at (c & ~7) | ((c ^
		 * r0) & 7) = (CS i & ~7) | (x ^ (CS i & 7)), x = (cg ^ r0) & 7, as
		 * cg < CS leaves no carry; CS i & 7 is 0 or 4 */
		const int x = (cg ^ r0) & 7;
		const unsigned d0 = dst + (unsigned)(r0 * CPR * 16 + x * 16);
		const unsigned d4 = dst + (unsigned)(r0 * CPR * 16 + (x ^ 4) * 16);

#pragma unroll
		for (int k = 0; k < ROWS / 8; k++) {
			const bool ok = 8 * k < valid;
			const unsigned short *rs = ok ? src + (long long)(8 * k) * stride : g;

#pragma unroll
			for (int i = 0; i < CPT; i++) {
				const int a = (CS * i) & ~7, bsel = (CS * i) & 7;

				ft_cp_async16((bsel ? d4 : d0) + (unsigned)((8 * k * CPR + a) * 16),
					      rs + CS * i * 8, ok ? 16 : 0);
			}
		}
	}
}

/* Where a block's query rows live. Row r of the block's row space is position
 * r (PACK_GQA = 0) or position r / grp of head r % grp of the group
 * (PACK_GQA = 1); q and o point at position 0 of the block's first head. */
struct row_map {
	const unsigned short *q;
	unsigned short *o;
	long long q_s, q_h, o_s, o_h;	/* strides, elements */
	long long prow0;		/* row of (split, b, first head, position 0) in lse_partial */
	int grp;			/* heads per KV head (PACK_GQA) */
	int s_q;			/* query positions */

	__device__ __forceinline__ void split(int r, int &pos, int &j) const
	{
		if (PACK_GQA) {
			pos = r / grp;
			j = r - pos * grp;
		} else {
			pos = r;
			j = 0;
		}
	}
	__device__ __forceinline__ const unsigned short *q_row(int r) const
	{
		int pos, j;

		split(r, pos, j);
		return q + pos * q_s + j * q_h;
	}
	__device__ __forceinline__ unsigned short *o_row(int r) const
	{
		int pos, j;

		split(r, pos, j);
		return o + pos * o_s + j * o_h;
	}
	/* the row's index in lse_partial ([splits, B, H, S_q]; times D in o_partial) */
	__device__ __forceinline__ long long partial_row(int r) const
	{
		int pos, j;

		split(r, pos, j);
		return prow0 + (long long)j * s_q + pos;
	}
};

/* The row map of the block at (b, first query head hq); prow0 as in row_map. */
static __device__ __forceinline__ row_map make_rows(const fatune_attn_params &p, int b, int hq, int grp,
						    long long prow0)
{
	row_map rm;

	rm.q = static_cast<const unsigned short *>(p.q) + b * p.q_stride_b + hq * p.q_stride_h;
	rm.o = static_cast<unsigned short *>(p.o) + b * p.o_stride_b + hq * p.o_stride_h;
	rm.q_s = p.q_stride_s;
	rm.q_h = p.q_stride_h;
	rm.o_s = p.o_stride_s;
	rm.o_h = p.o_stride_h;
	rm.prow0 = prow0;
	rm.grp = grp;
	rm.s_q = p.s_q;
	return rm;
}

/* The Q tile: rows [m0, m0 + BM) of the block's row space, zero-filled past
 * m_rows. Run-time strides (and, packed, a division per row): this runs once
 * per block. */
static __device__ __forceinline__ void load_q_tile(unsigned dst, const row_map &rm, int m0, int m_rows,
						   int tid)
{
	constexpr int RP = NT / CPR;
	constexpr int PASSES = (BM + RP - 1) / RP;
	const int r0 = tid / CPR, ch = tid % CPR;

#pragma unroll
	for (int k = 0; k < PASSES; k++) {
		const int r = r0 + k * RP;

		if (BM % RP == 0 || r < BM) {
			const bool ok = m0 + r < m_rows;

			ft_cp_async16(dst + swz(r, ch), ok ? rm.q_row(m0 + r) + ch * 8 : rm.q, ok ? 16 : 0);
		}
	}
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
 * Packing here frees the fp32 scores before P V. n0 is the tile's first key;
 * wk the last key the warp's first row may see (its position + causal offset).
 * A lane's rows g and g + 8 of m16 tile mt see keys below
 *   PACK_GQA = 0: min(s_kv, wk + 16 mt + g + 8 r + 1) (row = position),
 *   PACK_GQA = 1: plim[mt][r] + 2t (precomputed: a division per row).
 * Either way the per-tile cost is one subtraction per row. */
static __device__ __forceinline__ void process_scores(warp_state &w, float (&sc)[MT][BN / 8][4],
						      unsigned (&pa)[MT][BN / 16][4], int n0, int wk,
						      const int (&plim)[MT][2], int s_kv, int lane,
						      float scale_log2)
{
	const int g = lane >> 2, t = lane & 3;
	const bool need_mask = (n0 + BN > s_kv) || (IS_CAUSAL && n0 + BN - 1 > wk);

#pragma unroll
	for (int mt = 0; mt < MT; mt++) {
		if (need_mask) {
			/* key n0 + 8j + 2t + c is visible to row iff 8j + c < lim,
			 * lim = min(s_kv, last visible key + 1) - n0 - 2t */
			int lim[2];
#pragma unroll
			for (int r = 0; r < 2; r++) {
				if (PACK_GQA && IS_CAUSAL)
					lim[r] = plim[mt][r] - n0;
				else
					lim[r] = (IS_CAUSAL ? min(s_kv, wk + 16 * mt + g + 8 * r + 1) : s_kv) -
						 n0 - 2 * t;
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
		ft_softmax_stats(mx, w.m[mt], scale_log2, msc, alpha);
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

/* A block with no KV tile to read (an empty split, or causal rows that see no
 * key because S_q > S_kv): with one split O = 0, else the neutral partial
 * (O = 0, lse = -inf), for every valid row of the block. */
static __device__ __forceinline__ void write_empty(const fatune_attn_params &p, const row_map &rm, int m0,
						   int m_rows, int tid)
{
	const int rows = min(BM, m_rows - m0);

	for (int i = tid; i < rows * CPR; i += NT) {
		const int r = m0 + i / CPR, ch = i % CPR;

		if (p.num_splits == 1) {
			*reinterpret_cast<ft_v4u *>(rm.o_row(r) + ch * 8) = ft_v4u{ 0u, 0u, 0u, 0u };
		} else {
			float *op = p.o_partial + rm.partial_row(r) * D + ch * 8;

			reinterpret_cast<ft_v4f *>(op)[0] = ft_v4f{ 0.f, 0.f, 0.f, 0.f };
			reinterpret_cast<ft_v4f *>(op)[1] = ft_v4f{ 0.f, 0.f, 0.f, 0.f };
			if (ch == 0)
				p.lse_partial[rm.partial_row(r)] = ft_neg_inf();
		}
	}
}

/* blockIdx.x through volatile asm: the compiler cannot reuse the kernel's first
 * read, so what the epilogue derives from it is recomputed there instead of
 * being held (or spilled) across the KV loop. */
static __device__ __forceinline__ unsigned ctaid_x_again(void)
{
	unsigned r;

	asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(r));
	return r;
}

/* x through volatile asm: an opaque copy, so what is derived from it is
 * recomputed where it is used rather than shared with (and held from) an
 * earlier use of the same value. */
static __device__ __forceinline__ int opaque(int x)
{
	int r;

	asm volatile("mov.b32 %0, %1;" : "=r"(r) : "r"(x));
	return r;
}

/* Loads at L2 (ld.global.cg): the partials the in-kernel combine reads were
 * written by other blocks of the same launch, and L1 is not coherent. Volatile,
 * so they stay after the fence that orders them. */
static __device__ __forceinline__ float ld_cg(const float *a)
{
	float r;

	asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(r) : "l"(a));
	return r;
}

static __device__ __forceinline__ ft_v4f ld_cg4(const float *a)
{
	ft_v4f r;

	asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
		     : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
		     : "l"(a));
	return r;
}

/* The in-kernel combine (COMBINE_IN_KERNEL, num_splits > 1), run by every
 * thread of every block once its partial rows (or the empty split's neutral
 * ones) are stored. The block arrives on the counter of its (row block mb,
 * blockIdx.y, batch) in the workspace; the num_splits-th to arrive merges rows
 * [m0, m0 + BM) of every split into O and zeroes the counter. Ordering: each
 * thread fences its stores before the barrier that precedes the arrival (the
 * CUDA threadFenceReduction pattern), the last block fences after seeing the
 * count and reads the partials at L2. smem is free here: every warp is past
 * its KV loop. Rows go in chunks of MC: their lse are staged in shared memory
 * and turned into weights (ft_merge_stats, as the combine kernel does), then each
 * thread sums one float4 column of a row over the splits, MU loads in flight. */
constexpr int MAX_SPLITS = ft_max_splits;	/* what the combine kernels' shared memory holds */
constexpr int MC = BM < SMEM_BYTES / (4 * MAX_SPLITS) ? BM : SMEM_BYTES / (4 * MAX_SPLITS);
constexpr int MU = 16;	/* loads in flight per thread: one 32-thread block is latency-bound */
static_assert(MC >= 1, "the in-kernel combine stages at least one row's lse");

static __device__ __forceinline__ void arrive_and_merge(const fatune_attn_params &p, unsigned char *smem)
{
	constexpr int C4 = D / 4;		/* float4 columns per row */
	constexpr int RSTEP = NT / C4;		/* rows one pass covers */
	static_assert(NT % C4 == 0, "a block covers whole rows");
	/* the block's place, recomputed from scratch (through volatile asm, so
	 * that nothing the kernel derived before its KV loop is held across it
	 * for this: the widest tiles have no register to spare) */
	const int tid = threadIdx.x;
	const int splits = p.num_splits;
	const int h = opaque(p.h);
	const int grp = h == p.h_kv ? 1 : h / p.h_kv;
	const int m_rows = PACK_GQA ? p.s_q * grp : p.s_q;
	const int m_blocks = (m_rows + BM - 1) / BM;
	const int mbx = (int)(ctaid_x_again() / (unsigned)splits);
	const int mb = IS_CAUSAL ? m_blocks - 1 - mbx : mbx;
	const int m0 = mb * BM;
	const long long ctr = ((long long)blockIdx.z * gridDim.y + blockIdx.y) * m_blocks + mb;
	unsigned *counter = static_cast<unsigned *>(p.workspace) + ctr;

	if (p.workspace == nullptr || (ctr + 1) * (long long)sizeof(unsigned) > p.workspace_bytes ||
	    splits > MAX_SPLITS)
		__trap();	/* a workspace too small for this grid, or too many splits */
	__threadfence();	/* this thread's partial, visible before the arrival */
	__syncthreads();	/* ... of every thread of the block */
	int last = 0;
	if (tid == 0) {
		last = atomicAdd(counter, 1u) == (unsigned)(splits - 1);
		__threadfence();
	}
	if (!__syncthreads_or(last))
		return;
	__threadfence();	/* the other blocks' partials, after their arrivals */
	if (tid == 0)
		atomicExch(counter, 0u);	/* zero again for the next launch */

	const int rows = min(BM, m_rows - m0);
	const int hq = PACK_GQA ? blockIdx.y * grp : blockIdx.y;
	const long long stride = (long long)p.b * p.h * p.s_q;	/* one split, in rows */
	/* the rows of split 0 */
	const row_map rm = make_rows(p, blockIdx.z, hq, grp, ((long long)blockIdx.z * p.h + hq) * p.s_q);
	float (*wts)[MAX_SPLITS] = reinterpret_cast<float (*)[MAX_SPLITS]>(smem);	/* [MC][MAX_SPLITS] */
	const int c4 = tid % C4, r0 = tid / C4;

	for (int c0 = 0; c0 < rows; c0 += MC) {
		const int rc = min(MC, rows - c0), n = rc * splits;

		/* stage the chunk's lse, MU / 2 loads in flight per thread */
		for (int j0 = tid; j0 < n; j0 += MU / 2 * NT) {
			float v[MU / 2];
#pragma unroll
			for (int u = 0; u < MU / 2; u++) {
				const int j = min(j0 + u * NT, n - 1), r = j / splits, i = j - r * splits;

				v[u] = ld_cg(p.lse_partial + i * stride + rm.partial_row(m0 + c0 + r));
			}
#pragma unroll
			for (int u = 0; u < MU / 2; u++) {
				const int j = j0 + u * NT, r = j / splits;

				if (j < n)
					wts[r][j - r * splits] = v[u];
			}
		}
		__syncthreads();
		/* one thread per row: its lse become its weights */
		if (tid < rc) {
			float mx, inv;

			ft_merge_stats(splits, [&](int i) { return wts[tid][i]; }, mx, inv);
			for (int i = 0; i < splits; i++)
				wts[tid][i] = ft_merge_weight(wts[tid][i], mx, inv);
		}
		__syncthreads();
		for (int r = r0; r < rc; r += RSTEP) {
			const long long pr = rm.partial_row(m0 + c0 + r);
			ft_v4f acc = { 0.f, 0.f, 0.f, 0.f };

			for (int i0 = 0; i0 < splits; i0 += MU) {
				ft_v4f x[MU];
#pragma unroll
				for (int u = 0; u < MU; u++)	/* past the last split: reload it, weight 0 */
					x[u] = ld_cg4(p.o_partial + (min(i0 + u, splits - 1) * stride + pr) * D + 4 * c4);
#pragma unroll
				for (int u = 0; u < MU; u++)
					ft_merge_add(acc, i0 + u < splits ? wts[r][i0 + u] : 0.f, x[u]);
			}
			reinterpret_cast<ft_v2u *>(rm.o_row(m0 + c0 + r))[c4] =
				ft_v2u{ ft_pack2(acc.x, acc.y), ft_pack2(acc.z, acc.w) };
		}
		__syncthreads();	/* the next chunk overwrites wts */
	}
}

/* KV_WARPS: the warps' states, each over its own KV tiles, merged into warp
 * 0's. Every lane of every warp holds the same rows and columns (the same
 * offset in the same m16 tile), so lane L of warp 0 merges lane L of the
 * others: max, this lane's part of the exp sum and its O fragments, by the
 * split-KV rule (a warp that saw no key has max -inf and adds 0). Each warp
 * > 0 leaves its state in its own (now idle) K/V buffers, [value][lane]. All
 * threads of the block call it, after their last copies landed. */
static __device__ __forceinline__ void merge_warps(warp_state &w, unsigned char *smem, int warp, int lane,
						   float scale_log2)
{
	constexpr int NO = MT * (D / 8) * 4;	/* O values per lane */
	static_assert(!KVW || (NO + 4 * MT) * 32 * 4 <= WARP_KV_BYTES, "a warp's state fits in its buffers");
	float *mine = reinterpret_cast<float *>(smem + Q_BYTES + warp * WARP_KV_BYTES);

	__syncthreads();	/* every warp is done with its buffers */
	if (warp > 0) {
#pragma unroll
		for (int mt = 0; mt < MT; mt++) {
#pragma unroll
			for (int j = 0; j < D / 8; j++)
#pragma unroll
				for (int e = 0; e < 4; e++)
					mine[((mt * (D / 8) + j) * 4 + e) * 32 + lane] = w.o[mt][j][e];
#pragma unroll
			for (int r = 0; r < 2; r++) {
				mine[(NO + 2 * mt + r) * 32 + lane] = w.m[mt][r];
				mine[(NO + 2 * MT + 2 * mt + r) * 32 + lane] = w.l[mt][r];
			}
		}
	}
	__syncthreads();
	if (warp == 0) {
		for (int u = 1; u < NW; u++) {
			const float *su = reinterpret_cast<const float *>(smem + Q_BYTES + u * WARP_KV_BYTES);

#pragma unroll
			for (int mt = 0; mt < MT; mt++)
#pragma unroll
				for (int r = 0; r < 2; r++) {
					const float mu = su[(NO + 2 * mt + r) * 32 + lane];
					const float lu = su[(NO + 2 * MT + 2 * mt + r) * 32 + lane];
					const float mn = fmaxf(w.m[mt][r], mu);
					/* both -inf: 0 stands in, the factors are 0 (l, O stay 0) */
					const float msc = (mn == ft_neg_inf() ? 0.f : mn) * scale_log2;
					const float a = ft_exp2(w.m[mt][r] * scale_log2 - msc);
					const float c = ft_exp2(mu * scale_log2 - msc);

					w.l[mt][r] = w.l[mt][r] * a + lu * c;
					w.m[mt][r] = mn;
#pragma unroll
					for (int j = 0; j < D / 8; j++)
#pragma unroll
						for (int e = 2 * r; e < 2 * r + 2; e++)
							w.o[mt][j][e] = w.o[mt][j][e] * a +
									su[((mt * (D / 8) + j) * 4 + e) * 32 + lane] * c;
				}
		}
	}
	__syncthreads();	/* the buffers are free again (the epilogue's staging, the in-kernel combine) */
}

} /* namespace */

extern "C" __global__ void __launch_bounds__(NT, 1) fatune_attention_fwd(struct fatune_attn_params p)
{
	extern __shared__ __align__(128) unsigned char smem[];
	if (PDL == 2)	/* the combine's blocks may be scheduled now: they wait for the grid's end */
		ft_griddep_launch_dependents();
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int g = lane >> 2, t = lane & 3;
	const int s_kv = p.s_kv, splits = p.num_splits, off = p.causal_offset;
	/* query heads per KV head; self-attention skips the division (a
	 * division before the first copy costs a short sequence ~5%) */
	const int grp = p.h == p.h_kv ? 1 : p.h / p.h_kv;
	/* the block's row space: the positions of one query head, or the
	 * (position, head) pairs of one KV head's group */
	const int m_rows = PACK_GQA ? p.s_q * grp : p.s_q;
	const int m_blocks = (m_rows + BM - 1) / BM;
	const int split = blockIdx.x % splits;
	/* causal: the last row blocks see the most keys, so they go first */
	const int mb = IS_CAUSAL ? m_blocks - 1 - (int)(blockIdx.x / splits) : (int)(blockIdx.x / splits);
	/* the warp's first row in the Q tile: with KV_WARPS every warp's is 0 */
	const int qrow = KVW ? 0 : WROWS * warp;
	const int m0 = mb * BM, m0w = m0 + qrow;
	const int b = blockIdx.z;
	const int hq = PACK_GQA ? blockIdx.y * grp : blockIdx.y;	/* (first) query head */
	const int hk = PACK_GQA || grp == 1 ? blockIdx.y : blockIdx.y / grp;	/* its KV head */
	/* K/V row strides: the compile-time D when DENSE_KV (immediate copy
	 * offsets in the loop), else the run-time ones */
	const int kst = DENSE_KV ? D : (int)p.k_stride_s;
	const int vst = DENSE_KV ? D : (int)p.v_stride_s;

	if (DENSE_KV ? (p.k_stride_s != D || p.v_stride_s != D || p.v_stride_h != p.k_stride_h ||
			p.v_stride_b != p.k_stride_b)
		     : (p.k_stride_s > 0x7fffffffLL || p.v_stride_s > 0x7fffffffLL))
		__trap();	/* compiled for other strides than these */

	/* the last key a row may see is its position + off (causal); the block
	 * reads keys up to that of its last row */
	int kv_end = s_kv;
	if (IS_CAUSAL) {
		const int last = min(m_rows, m0 + BM) - 1;

		kv_end = max(0, min(s_kv, (PACK_GQA ? last / grp : last) + off + 1));
	}
	const int n_tiles = (kv_end + BN - 1) / BN;
	const int per_split = (n_tiles + splits - 1) / splits;
	const int t_begin = split * per_split;
	const int t_end = min(n_tiles, t_begin + per_split);

	if (t_begin >= t_end) {
		write_empty(p, make_rows(p, b, hq, grp, (((long long)split * p.b + b) * p.h + hq) * p.s_q), m0, m_rows, tid);
		if (COMBINE_IN_KERNEL && splits > 1)
			arrive_and_merge(p, smem);
		return;
	}

	/* with DENSE_KV, K and V share their strides (checked above): one offset
	 * for both, as the ABI v1 template had, leaves ptxas the registers to
	 * keep the loop's copy addresses */
	const long long k_off = b * p.k_stride_b + hk * p.k_stride_h;
	const long long v_off = DENSE_KV ? k_off : b * p.v_stride_b + hk * p.v_stride_h;
	const unsigned short *gk = static_cast<const unsigned short *>(p.k) + k_off;
	const unsigned short *gv = static_cast<const unsigned short *>(p.v) + v_off;
	const unsigned q_smem = ft_smem_addr(smem);
	const unsigned k_smem = q_smem + Q_BYTES + (KVW ? warp * WARP_KV_BYTES : 0);	/* (the warp's) */
	const unsigned v_smem = k_smem + STAGES * KV_BYTES;
	const bool warp_active = m0w < m_rows;
	/* the last key the warp's first and last rows may see (causal) */
	const int wk_first = (PACK_GQA ? m0w / grp : m0w) + off;
	const int wk_last = PACK_GQA ? (m0w + WROWS - 1) / grp + off : wk_first + WROWS - 1;
	/* packed causal: each of the lane's rows' key limit, less 2t */
	int plim[MT][2];
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int r = 0; r < 2; r++)
			plim[mt][r] = PACK_GQA && IS_CAUSAL
					      ? min(s_kv, (m0w + 16 * mt + g + 8 * r) / grp + off + 1) - 2 * t
					      : 0;

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
	load_q_tile(q_smem, make_rows(p, b, hq, grp, 0), m0, m_rows, tid);
	ft_cp_async_commit();
	if constexpr (KVW) {
		/* each warp's own tiles t_begin + warp + NW r: the first STAGES - 1 */
#pragma unroll
		for (int st = 0; st < STAGES - 1; st++) {
			const int ti = t_begin + warp + NW * st;

			if (ti < t_end) {
				load_tile<BN, 32>(k_smem + st * KV_BYTES, gk, kst, ti * BN, s_kv, lane);
				load_tile<BN, 32>(v_smem + st * KV_BYTES, gv, vst, ti * BN, s_kv, lane);
			}
			ft_cp_async_commit();
		}
		ft_cp_async_wait<STAGES - 1>();	/* Q landed */
	} else if (STAGES == 1) {
		load_tile<BN>(k_smem, gk, kst, t_begin * BN, s_kv, tid);
		ft_cp_async_commit();
		load_tile<BN>(v_smem, gv, vst, t_begin * BN, s_kv, tid);
		ft_cp_async_commit();
		ft_cp_async_wait<2>();	/* Q landed; K0, V0 may be in flight */
	} else {
#pragma unroll
		for (int st = 0; st < STAGES - 1; st++) {
			if (t_begin + st < t_end) {
				load_tile<BN>(k_smem + st * KV_BYTES, gk, kst, (t_begin + st) * BN, s_kv, tid);
				load_tile<BN>(v_smem + st * KV_BYTES, gv, vst, (t_begin + st) * BN, s_kv, tid);
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
				load_q(w.q[Q_REGS ? mt : 0][Q_REGS ? kk : 0], q_smem, qrow, mt, kk, lane);

	/* KV_WARPS: each warp walks its own tiles through its own ring of
	 * buffers, with no block barrier (warps may hold different numbers of
	 * tiles): refill the buffer of its last tile, wait for this one */
	if constexpr (KVW) {
		const int nmine = t_begin + warp < t_end ? (t_end - t_begin - warp + NW - 1) / NW : 0;
		for (int r = 0; r < nmine; r++) {
			const int n0 = (t_begin + warp + NW * r) * BN;
			const int st = r % STAGES;
			const bool skip = IS_CAUSAL && n0 > wk_last;
			float sc[MT][BN / 8][4];
			unsigned pa[MT][BN / 16][4];

			__syncwarp();	/* every lane is done with the buffer refilled next */
			if (r + STAGES - 1 < nmine) {
				const int nst = (r + STAGES - 1) % STAGES, n1 = n0 + NW * (STAGES - 1) * BN;

				load_tile<BN, 32>(k_smem + nst * KV_BYTES, gk, kst, n1, s_kv, lane);
				load_tile<BN, 32>(v_smem + nst * KV_BYTES, gv, vst, n1, s_kv, lane);
			}
			ft_cp_async_commit();
			ft_cp_async_wait<STAGES - 1>();	/* this tile landed */
			__syncwarp();			/* every lane's copies of it are visible */
			if (!skip) {
				qk(w, sc, k_smem + st * KV_BYTES, q_smem, 0, lane);
				process_scores(w, sc, pa, n0, wk_first, plim, s_kv, lane, p.scale_log2);
				pv(w, pa, v_smem + st * KV_BYTES, lane);
			}
		}
	} else {
		/* One KV tile per step: wait for it, refill the buffer freed by the last
		 * step, compute. (Splitting off the tiles that need no mask into a
		 * branch-free loop of their own made ptxas spill more, not less.) */
		for (int i = t_begin; i < t_end; i++) {
			const int n0 = i * BN;
			/* a warp whose rows all precede the tile's first key has nothing to
			 * do (a warp past the last row computes on zero-filled rows that are
			 * never stored: branching on it costs registers everywhere) */
			const bool skip = IS_CAUSAL && n0 > wk_last;
			float sc[MT][BN / 8][4];
			unsigned pa[MT][BN / 16][4];

			if (STAGES == 1) {
				/* one buffer each for K and V: K(i+1) streams in during
				 * softmax and P V, V(i+1) during the next Q K^T */
				ft_cp_async_wait<1>();	/* K(i) */
				__syncthreads();
				if (!skip)
					qk(w, sc, k_smem, q_smem, qrow, lane);
				__syncthreads();	/* every warp is done with K(i) */
				if (i + 1 < t_end)
					load_tile<BN>(k_smem, gk, kst, (i + 1) * BN, s_kv, tid);
				ft_cp_async_commit();
				ft_cp_async_wait<1>();	/* V(i) */
				__syncthreads();
				if (!skip) {
					process_scores(w, sc, pa, n0, wk_first, plim, s_kv, lane, p.scale_log2);
					pv(w, pa, v_smem, lane);
				}
				__syncthreads();	/* every warp is done with V(i) */
				if (i + 1 < t_end)
					load_tile<BN>(v_smem, gv, vst, (i + 1) * BN, s_kv, tid);
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
					load_tile<BN>(k_smem + nst * KV_BYTES, gk, kst, (i + STAGES - 1) * BN, s_kv, tid);
					load_tile<BN>(v_smem + nst * KV_BYTES, gv, vst, (i + STAGES - 1) * BN, s_kv, tid);
				}
				ft_cp_async_commit();
				if (!skip) {
					qk(w, sc, k_smem + st * KV_BYTES, q_smem, qrow, lane);
					process_scores(w, sc, pa, n0, wk_first, plim, s_kv, lane, p.scale_log2);
					pv(w, pa, v_smem + st * KV_BYTES, lane);
				}
			}
		}
	}
	ft_cp_async_wait<0>();	/* leave no copy in flight (the trailing groups are empty) */
	if constexpr (KVW)
		merge_warps(w, smem, warp, lane, p.scale_log2);
	/* with KV_WARPS only warp 0 holds the rows now */
	const bool owns = !KVW || warp == 0;

	/* epilogue: each row's full sum, then O / l; a row that saw no key (in a
	 * split, or a causal row before every key) has l = 0: 1 stands in for
	 * 1/l and O stays 0 */
	float inv[MT][2], lse[MT][2];
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int r = 0; r < 2; r++)
			ft_row_finish(w.l[mt][r], w.m[mt][r], p.scale_log2, inv[mt][r], lse[mt][r]);
	/* (with the in-kernel combine every warp must reach its barriers; an
	 * inactive warp's rows are all past m_rows, so it stores nothing) */
	if (!COMBINE_IN_KERNEL && !(warp_active && owns))
		return;

	/* where the rows go: recomputed here from the parameters rather than
	 * held across the loop */
	const int hq_e = PACK_GQA ? blockIdx.y * grp : blockIdx.y;
	row_map rm = make_rows(p, blockIdx.z, hq_e, grp, 0);
	if (splits == 1 && owns) {
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
#pragma unroll
		for (int it = 0; it < (WROWS * CPR) / 32; it++) {
			const int c = lane + 32 * it;
			const int r = c / CPR, ch = c % CPR;

			if (m0w + r < m_rows)
				*reinterpret_cast<ft_v4u *>(rm.o_row(m0w + r) + ch * 8) =
					*reinterpret_cast<const ft_v4u *>(stage + swz(WROWS * warp + r, ch));
		}
	} else {
		/* blockIdx.x read again (ctaid_x_again): an ordinary read is
		 * merged with the first one, and its division by num_splits is then
		 * held, or spilled, across the loop */
		rm.prow0 = (((long long)(ctaid_x_again() % (unsigned)splits) * p.b + blockIdx.z) * p.h + hq_e) *
			   p.s_q;
#pragma unroll
		for (int mt = 0; mt < MT; mt++)
#pragma unroll
			for (int r = 0; r < 2; r++) {
				const int row = m0w + 16 * mt + g + 8 * r;

				if (!owns || row >= m_rows)
					continue;
				const long long pr = rm.partial_row(row);
				float *op = p.o_partial + pr * D;
#pragma unroll
				for (int j = 0; j < D / 8; j++)
					*reinterpret_cast<ft_v2f *>(op + 8 * j + 2 * t) =
						ft_v2f{ w.o[mt][j][2 * r] * inv[mt][r],
							w.o[mt][j][2 * r + 1] * inv[mt][r] };
				if (t == 0)
					p.lse_partial[pr] = lse[mt][r];
			}
		if (COMBINE_IN_KERNEL)
			arrive_and_merge(p, smem);
		if (PDL == 1)	/* the combine kernel may be scheduled (it waits for us) */
			ft_griddep_launch_dependents();
	}
}

/* Combine: one row of O from its num_splits partials (attention_common.cuh's
 * ft_combine: the row's lse staged in shared memory once, then the weights
 * exp(lse_i - max) / sum). With few splits a group of D/4 threads takes a row
 * of its own; with many, up to 8 groups share a row. The space's combine_grid
 * is [ceil_div(S, rows per block), H, B] with rows per block = (512 / D) / SG,
 * SG = ft_combine_groups(NUM_SPLITS). */
extern "C" __global__ void __launch_bounds__(ft_combine_threads)
	fatune_attention_combine(struct fatune_attn_params p)
{
	ft_combine<D, true, PDL != 0>(p);
}
