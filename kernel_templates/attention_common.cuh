/* attention_common.cuh - the device code both attention templates share.
 *
 * attention.cu (mma.sync, sm_80+) and attention_sm90.cu (wgmma, sm_90a) hold
 * their accumulators in the same m16n8 layout: each thread owns two rows of a
 * 16-row tile (g = lane / 4 and g + 8) and the four lanes of a quad share them.
 * What follows from that layout is written once here:
 *
 *   - the quad reductions of a row (max, sum);
 *   - the online softmax's statistics step (new running max, the -inf rule,
 *     the rescale factor alpha) and the epilogue's (1 / l, log-sum-exp);
 *   - the split-KV merge rule (weights from the per-split log-sum-exp) and
 *     the combine kernel's body, which each template wraps in its own entry
 *     point (fatune_attention_combine, fatune_sm90_combine).
 *
 * Found through the template's own directory (NVRTC: fatune passes -I of the
 * template's folder and of kernel_templates/; nvcc: a quoted include searches
 * the including file's folder first), so an exported build_config.h plus the
 * template still build with nvcc alone. Needs attention_ptx.cuh (ft_exp2,
 * ft_pack2, ...) and fatune_abi.h (the parameter block).
 */
#ifndef FATUNE_ATTENTION_COMMON_CUH
#define FATUNE_ATTENTION_COMMON_CUH

#include "fatune_abi.h"
#include "attention_ptx.cuh"

constexpr float ft_ln2 = 0.693147180559945309f;
constexpr float ft_log2e = 1.442695040888963407f;

/* ---- the two rows of a thread ---------------------------------------------- */

/* Row max and row sum over the quad of lanes that share a row (lanes 4g..4g+3). */
static __device__ __forceinline__ float ft_quad_max(float x)
{
	x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
	return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

/* The max of v[0..N-1] as a balanced tree: log2(N) dependent FMNMX where a
 * running max is N, and every exp of the row waits for it (docs/kernel_sm90.md,
 * "What limits it at D 64"). fmaxf is exact, so the order changes no value. */
template <int N> struct ft_max_tree {
	static __device__ __forceinline__ float of(const float *v)
	{
		return fmaxf(ft_max_tree<N / 2>::of(v), ft_max_tree<N - N / 2>::of(v + N / 2));
	}
};
template <> struct ft_max_tree<1> {
	static __device__ __forceinline__ float of(const float *v) { return v[0]; }
};

/* The running max m of a thread's row r folded with the row's scores of one
 * tile. sc holds NJ accumulator groups of 4 (the m16n8 accumulator layout):
 * group j's elements 2r and 2r + 1 are row r's. The Hopper template's; the
 * mma template keeps its running chain (the tree spilled in 7 of its configs,
 * NVRTC 13.0, and bought 0.2 % where it did not). */
template <int NJ> static __device__ __forceinline__ float ft_row_max(float m, const float *sc, int r)
{
	float v[2 * NJ];
#pragma unroll
	for (int j = 0; j < NJ; j++) {
		v[2 * j] = sc[4 * j + 2 * r];
		v[2 * j + 1] = sc[4 * j + 2 * r + 1];
	}
	return fmaxf(m, ft_max_tree<2 * NJ>::of(v));
}

static __device__ __forceinline__ float ft_quad_sum(float x)
{
	x += __shfl_xor_sync(0xffffffffu, x, 1);
	return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* The online softmax's statistics step for the thread's two rows. mx holds
 * this lane's max of the tile's (masked) raw scores folded with the running
 * max m; it is reduced over the quad, and then per row:
 *   msc   = new max * scale_log2, the exponent's offset (exp2(s * scale_log2 - msc));
 *   alpha = exp2(old max * scale_log2 - msc), what O and l are rescaled by;
 *   m     = the new max.
 * A row with every key masked so far keeps max -inf; 0 stands in for it in msc
 * so that exp2(-inf - 0) = 0 rather than NaN (and alpha = 0 while the old max
 * was -inf). */
static __device__ __forceinline__ void ft_softmax_stats(float (&mx)[2], float (&m)[2], float scale_log2,
							float (&msc)[2], float (&alpha)[2])
{
#pragma unroll
	for (int r = 0; r < 2; r++) {
		mx[r] = ft_quad_max(mx[r]);
		const float mu = mx[r] == ft_neg_inf() ? 0.f : mx[r];
		msc[r] = mu * scale_log2;
		alpha[r] = ft_exp2(m[r] * scale_log2 - msc[r]);	/* old max -inf: 0 */
		m[r] = mx[r];
	}
}

/* The epilogue of one row: l_lane is this lane's part of the row's exp sum, m
 * its running max. inv = 1 / l, lse = the row's log-sum-exp (natural log, of the
 * scaled scores). A row that saw no key (in a split, or a causal row before
 * every key) has l = 0: inv = 1 keeps its O at 0, and lse = -inf. */
static __device__ __forceinline__ void ft_row_finish(float l_lane, float m, float scale_log2, float &inv,
						     float &lse)
{
	const float l = ft_quad_sum(l_lane);

	inv = l > 0.f ? ft_rcp(l) : 1.f;
	lse = l > 0.f ? (m * scale_log2 + ft_log2(l)) * ft_ln2 : ft_neg_inf();
}

/* ---- split-KV: the merge rule and the combine kernel ------------------------- */

/* Splits the combine kernel (and the mma template's in-kernel combine) can
 * merge: what their shared memory stages. */
constexpr int ft_max_splits = 64;

/* Split i of a row, with log-sum-exp lse_i (-inf: it saw no key), weighs
 * exp(lse_i - mx) / sum_j exp(lse_j - mx), mx the largest lse_i; a row whose
 * every split is empty keeps mx = 0 and inv = 0, so it comes out 0.
 * lse(i) gives split i's lse. */
template <class LSE>
static __device__ __forceinline__ void ft_merge_stats(int splits, LSE lse, float &mx, float &inv)
{
	mx = ft_neg_inf();
	for (int i = 0; i < splits; i++)
		mx = fmaxf(mx, lse(i));
	/* every split empty (a causal row before every key): stay finite */
	if (mx == ft_neg_inf())
		mx = 0.f;
	float sum = 0.f;
	for (int i = 0; i < splits; i++)
		sum += ft_exp2((lse(i) - mx) * ft_log2e);
	/* weight_i = exp(lse_i - lse) with lse = log(sum) + mx; a zero sum gives 0 */
	inv = sum > 0.f ? ft_rcp(sum) : 0.f;
}

static __device__ __forceinline__ float ft_merge_weight(float lse, float mx, float inv)
{
	return ft_exp2((lse - mx) * ft_log2e) * inv;
}

/* acc += wgt * x, skipped for a zero weight: an empty split's O is 0, but
 * never trust 0 * garbage */
static __device__ __forceinline__ void ft_merge_add(ft_v4f &acc, float wgt, const ft_v4f &x)
{
	if (wgt > 0.f) {
		acc.x += wgt * x.x;
		acc.y += wgt * x.y;
		acc.z += wgt * x.z;
		acc.w += wgt * x.w;
	}
}

/* The combine kernel's threads per block (its entry points' __launch_bounds__). */
constexpr int ft_combine_threads = 128;

/* Groups of D / 4 threads per row for n splits. With SHARE_ROWS: 1 (n <= 4),
 * 4 (n <= 16), else 8, at most the block's groups (512 / D); without, always 1.
 * A space's combine_grid repeats this formula: [ceil_div(S_q, (512 / D) /
 * groups), H, B]. */
template <int D, bool SHARE_ROWS> static __device__ __forceinline__ int ft_combine_groups(int n)
{
	constexpr int groups = ft_combine_threads / (D / 4);

	return SHARE_ROWS ? min(groups, n <= 4 ? 1 : (n <= 16 ? 4 : 8)) : 1;
}

/* The combine kernel's body: one row of O from its p.num_splits fp32 partials
 * (o_partial [splits, B, H, S_q, D], lse_partial [splits, B, H, S_q]). A
 * group of D / 4 threads covers a row, one float4 column each; a block of 128
 * threads has 512 / D groups. With few splits each group takes a row of its
 * own; with many (and SHARE_ROWS), SG groups share a row and each sums every SG-th
 * split (more loads in flight, which is what a decode step's few rows need),
 * then they add up through shared memory. The block's lse are staged in
 * shared memory once; more than ft_max_splits splits trap. With WAIT (PDL) the
 * kernel was launched before the main one ended: it waits for its partials
 * (griddepcontrol.wait) before reading them. Grid: [ceil_div(S_q, (512 / D) /
 * ft_combine_groups<D, SHARE_ROWS>(splits)), H, B], 128 threads. */
template <int D, bool SHARE_ROWS, bool WAIT>
static __device__ __forceinline__ void ft_combine(const fatune_attn_params &p)
{
	constexpr int TPR = D / 4;			/* threads per group */
	constexpr int GROUPS = ft_combine_threads / TPR;	/* 512 / D */
	static_assert(ft_combine_threads % TPR == 0, "a row's threads must fit a block");
	__shared__ float lse_s[GROUPS][ft_max_splits];
	__shared__ ft_v4f part[ft_combine_threads];
	const int splits = p.num_splits;
	const int sg = ft_combine_groups<D, SHARE_ROWS>(splits);
	const int rpb = GROUPS / sg;			/* rows per block */
	const int grp = threadIdx.x / TPR, c4 = threadIdx.x % TPR;
	const int rl = grp / sg, gi = grp % sg;		/* row in block, group in row */
	const int pos = blockIdx.x * rpb + rl;
	const int b = blockIdx.z, h = blockIdx.y;
	const long long stride = (long long)p.b * p.h * p.s_q;	/* one split, in rows */
	const long long prow = ((long long)b * p.h + h) * p.s_q + pos;
	const bool valid = pos < p.s_q;

	if (splits > ft_max_splits)
		__trap();
	if (WAIT)	/* launched before the main kernel ended: wait for its partials */
		ft_griddep_wait();
	/* stage the lse of the block's rows: rpb * splits values */
	for (int i = threadIdx.x; i < rpb * splits; i += ft_combine_threads) {
		const int r = i / splits, sp = i - r * splits;
		const int ps = blockIdx.x * rpb + r;

		lse_s[r][sp] = ps < p.s_q ? p.lse_partial[sp * stride + ((long long)b * p.h + h) * p.s_q + ps]
					  : ft_neg_inf();
	}
	__syncthreads();
	float mx, inv;
	ft_merge_stats(splits, [&](int i) { return lse_s[rl][i]; }, mx, inv);
	ft_v4f acc = { 0.f, 0.f, 0.f, 0.f };
	if (valid) {
#pragma unroll 4
		for (int i = gi; i < splits; i += sg)
			ft_merge_add(acc, ft_merge_weight(lse_s[rl][i], mx, inv),
				     reinterpret_cast<const ft_v4f *>(p.o_partial + (i * stride + prow) * D)[c4]);
	}
	if (sg > 1) {
		part[threadIdx.x] = acc;
		__syncthreads();
		if (gi != 0)
			return;
		for (int k = 1; k < sg; k++) {
			const ft_v4f y = part[threadIdx.x + k * TPR];

			acc.x += y.x;
			acc.y += y.y;
			acc.z += y.z;
			acc.w += y.w;
		}
	}
	if (!valid)
		return;
	unsigned short *go = static_cast<unsigned short *>(p.o) + b * p.o_stride_b + h * p.o_stride_h +
			     pos * p.o_stride_s;
	reinterpret_cast<ft_v2u *>(go)[c4] = ft_v2u{ ft_pack2(acc.x, acc.y), ft_pack2(acc.z, acc.w) };
}

#endif
