/* reference.cu - fatune's own GPU helpers: random inputs, the reference attention, the check.
 *
 * Compiled by the worker with NVRTC for the device it runs on (evaluate.c) and
 * checked against an fp64 CPU attention by `fatune __worker --selftest`. Plain
 * CUDA C++ with no toolkit includes, so it compiles wherever NVRTC does.
 *
 *   fatune_ref_fill       fp16/bf16 tensor of values uniform in [-1, 1], never 0,
 *                         a pure function of (seed, tensor id, element index)
 *   fatune_ref_attention  softmax(Q K^T * scale) V in fp32 arithmetic for any
 *                         D <= 256, any S_q and S_kv, grouped-query heads, any
 *                         strides, causal (bottom-right) or not; fp32 output
 *   fatune_ref_check      a candidate's fp16/bf16 output against the fp32
 *                         reference, reduced on the GPU to a few sums (squared
 *                         error, squared reference, max abs error, non-finite
 *                         count, the worst window of 64 rows) that the worker
 *                         reads back instead of O
 *
 * The tensors travel in an ABI v2 params struct (kernel_templates/fatune_abi.h).
 * The reference is simple rather than fast (tiled only so that it reads K and
 * V less often): it runs once per (shape, seed) per worker.
 */
#include "fatune_abi.h"

typedef unsigned short ft_u16;
typedef unsigned int ft_u32;
typedef unsigned long long ft_u64;

/* splitmix64's finalizer (Steele, Lea, Flood 2014): a bijection on 64 bits
 * whose output bits all depend on every input bit. */
__device__ __forceinline__ ft_u64 ref_mix64(ft_u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

__device__ __forceinline__ float ref_decode(ft_u16 h, int bf16)
{
	float f;

	if (bf16) {
		ft_u32 u = (ft_u32)h << 16;	/* bf16 is the top half of an fp32 */
		f = __uint_as_float(u);
	} else {
		asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	}
	return f;
}

__device__ __forceinline__ float ref_load(const ft_u16 *p, long long i, int bf16)
{
	return ref_decode(p[i], bf16);
}

/* Round to nearest even; inputs are finite. */
__device__ __forceinline__ ft_u16 ref_round(float f, int bf16)
{
	ft_u16 h;

	if (bf16) {
		ft_u32 u = __float_as_uint(f);
		u += 0x7fffu + ((u >> 16) & 1u);
		h = (ft_u16)(u >> 16);
	} else {
		asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	}
	return h;
}

/* x[i] for i < n: t = 2u + 1 - 2^24 with u the top 24 bits of a hash of
 * (seed, tensor, i) is an odd integer in (-2^24, 2^24), exact in fp32, so
 * t * 2^-24 lies in (-1, 1) and is never 0; its smallest magnitude, 2^-24, is
 * still representable in fp16 (the smallest subnormal) and bf16, so rounding
 * never makes a zero either. */
extern "C" __global__ void fatune_ref_fill(ft_u16 *x, long long n, ft_u64 seed, ft_u64 tensor,
					   int bf16)
{
	const ft_u64 key = ref_mix64(seed ^ ref_mix64(tensor + 0x9e3779b97f4a7c15ull));
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	const long long stride = (long long)gridDim.x * blockDim.x;

	for (; i < n; i += stride) {
		ft_u64 h = ref_mix64(key + (ft_u64)i * 0x9e3779b97f4a7c15ull);
		int t = 2 * (int)(h >> 40) + 1 - (1 << 24);
		x[i] = ref_round((float)t * (1.0f / 16777216.0f), bf16);
	}
}

/* The attention kernel, tiled: a block takes REF_TILE_Q consecutive query
 * rows of one (batch, head), each of its REF_WARPS warps REF_ROWS of them,
 * and walks the keys in chunks of REF_CHUNK (one key per lane), so that a
 * chunk of K or V read into shared memory serves all the tile's rows. The
 * row-per-block kernel it replaces read K and V once per row and reduced
 * every dot product across a warp: 0.5 s for the reference of 1x32x8192x128
 * on an H200, 12 % of that unit's GPU time in a warm suite24 pass and 34 %
 * of its causal twin's (docs/timing.md). Dynamic
 * shared memory, as evaluate.c's ref_smem_bytes sizes it: the tile's Q and
 * one chunk of K or V as fp32, in rows of ref_ld(d) floats, then the chunk's
 * probabilities [REF_CHUNK, REF_TILE_Q]. */
#define REF_THREADS 128
#define REF_WARPS (REF_THREADS / 32)
#define REF_ROWS 4
#define REF_TILE_Q (REF_WARPS * REF_ROWS)
#define REF_CHUNK 32
#define REF_MAX_D 256
#define REF_DIMS (REF_MAX_D / 32)	/* output dims per lane: lane + 32 u */
static_assert(REF_ROWS == 4, "a warp reads its rows' probabilities as one float4");

/* A shared row: D rounded up to a float4 (zeros past D) and 4 more floats,
 * so that lanes reading float4s of consecutive rows hit distinct banks. */
__device__ __forceinline__ int ref_ld(int d)
{
	return (d + 3) / 4 * 4 + 4;
}

__device__ __forceinline__ float ref_warp_max(float x)
{
	for (int off = 16; off > 0; off >>= 1)
		x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
	return x;
}

__device__ __forceinline__ float ref_warp_sum(float x)
{
	for (int off = 16; off > 0; off >>= 1)
		x += __shfl_xor_sync(0xffffffffu, x, off);
	return x;
}

/* pp.x .. pp.w by a (compile-time) index */
__device__ __forceinline__ float ref_part(float4 pp, int i)
{
	return i == 0 ? pp.x : i == 1 ? pp.y : i == 2 ? pp.z : pp.w;
}

/* rows [0, n) of a [rows, D] fp16/bf16 matrix (row stride `stride`
 * elements) into dst [n_pad, ld] fp32, zero past D and for rows >= n: a warp
 * per row, its lanes on consecutive elements (coalesced reads). */
__device__ __forceinline__ void ref_stage(float *dst, int ld, int n_pad, const ft_u16 *src,
					  long long stride, int n, int d, int bf16)
{
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

	for (int r = warp; r < n_pad; r += REF_WARPS)
		for (int c = lane; c < ld; c += 32)
			dst[r * ld + c] = r < n && c < d ? ref_load(src, r * stride + c, bf16) : 0.0f;
}

/* The keys query row i sees: all S_kv, or causal 0 .. i + causal_offset
 * (none when that is below 0). */
static __device__ __forceinline__ int ref_keys(const fatune_attn_params_v2 &p, int causal, int i)
{
	return causal ? max(0, min(p.s_kv, i + p.causal_offset + 1)) : p.s_kv;
}

/* Over the tensors of an ABI v2 params struct: any strides, H_kv KV heads
 * (query head h reads KV head h / (H / H_kv)), S_kv keys, bottom-right causal
 * masking (query i sees keys 0 .. i + causal_offset). p.o is the fp32 output,
 * laid out with O's strides. Grid-stride over the B*H*ceil(S_q / REF_TILE_Q)
 * tiles. Online softmax over key chunks, per row: m the running max, l the
 * running sum of exp(s - m), acc the running sum of exp(s - m) * v; expf
 * (not __expf) keeps the error near one ulp. A row with no keys (S_q > S_kv,
 * causal) writes 0, not NaN: l stays 0 and is replaced by 1. */
extern "C" __global__ void __launch_bounds__(REF_THREADS, 1) /* (, 1): no spill on sm_80 */
fatune_ref_attention(const fatune_attn_params_v2 p, int causal, int bf16)
{
	extern __shared__ float4 ref_smem4[];
	const int d = p.d, ld = ref_ld(d), d4 = (d + 3) / 4;
	float *qs = (float *)ref_smem4;			/* [REF_TILE_Q, ld] */
	float *kv = qs + REF_TILE_Q * ld;		/* [REF_CHUNK, ld] */
	float *ps = kv + REF_CHUNK * ld;		/* [REF_CHUNK, REF_TILE_Q] */
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const int group = p.h / p.h_kv, tiles_s = (p.s_q + REF_TILE_Q - 1) / REF_TILE_Q;
	const long long tiles = (long long)p.b * p.h * tiles_s;
	const ft_u16 *q = (const ft_u16 *)p.q, *k = (const ft_u16 *)p.k, *v = (const ft_u16 *)p.v;
	float *o = (float *)p.o;

	for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		const int i0 = (int)(tile % tiles_s) * REF_TILE_Q;
		const int hq = (int)(tile / tiles_s % p.h);
		const int bi = (int)(tile / tiles_s / p.h);
		const int hk = hq / group, nq = min(REF_TILE_Q, p.s_q - i0);
		const ft_u16 *qb = q + bi * p.q_stride_b + hq * p.q_stride_h + (long long)i0 * p.q_stride_s;
		const ft_u16 *kb = k + bi * p.k_stride_b + hk * p.k_stride_h;
		const ft_u16 *vb = v + bi * p.v_stride_b + hk * p.v_stride_h;
		/* keys the tile's last row sees: the most of any of its rows */
		const int nk_tile = ref_keys(p, causal, i0 + nq - 1);
		int nk[REF_ROWS];
		float m[REF_ROWS], l[REF_ROWS], acc[REF_ROWS][REF_DIMS];

#pragma unroll
		for (int rr = 0; rr < REF_ROWS; rr++) {
			const int r = warp * REF_ROWS + rr;
			nk[rr] = r >= nq ? 0 : ref_keys(p, causal, i0 + r);
			m[rr] = -__int_as_float(0x7f800000);
			l[rr] = 0.0f;
#pragma unroll
			for (int u = 0; u < REF_DIMS; u++)
				acc[rr][u] = 0.0f;
		}
		__syncthreads(); /* the previous tile is done with qs */
		ref_stage(qs, ld, REF_TILE_Q, qb, p.q_stride_s, nq, d, bf16);
		for (int j0 = 0; j0 < nk_tile; j0 += REF_CHUNK) {
			const int nc = min(REF_CHUNK, nk_tile - j0);
			float s[REF_ROWS], corr[REF_ROWS];

			__syncthreads(); /* the previous chunk is done with kv and ps */
			ref_stage(kv, ld, REF_CHUNK, kb + (long long)j0 * p.k_stride_s, p.k_stride_s, nc,
				  d, bf16);
			__syncthreads();
			/* scores: lane = key j0 + lane, for the warp's rows */
#pragma unroll
			for (int rr = 0; rr < REF_ROWS; rr++)
				s[rr] = 0.0f;
			for (int c = 0; c < d4; c++) {
				const float4 kk = ((const float4 *)(kv + lane * ld))[c];
#pragma unroll
				for (int rr = 0; rr < REF_ROWS; rr++) {
					const float4 qq =
						((const float4 *)(qs + (warp * REF_ROWS + rr) * ld))[c];
					s[rr] += qq.x * kk.x + qq.y * kk.y + qq.z * kk.z + qq.w * kk.w;
				}
			}
#pragma unroll
			for (int rr = 0; rr < REF_ROWS; rr++) {
				const int seen = j0 + lane < nk[rr];
				const float sc = seen ? s[rr] * p.scale : -__int_as_float(0x7f800000);
				const float cm = fmaxf(m[rr], ref_warp_max(sc));
				/* a row that has seen no key yet keeps m = -inf: nothing
				 * to rescale, and exp(-inf - -inf) would be NaN */
				const float pj = seen ? expf(sc - cm) : 0.0f;

				corr[rr] = cm == -__int_as_float(0x7f800000) ? 1.0f : expf(m[rr] - cm);
				l[rr] = l[rr] * corr[rr] + ref_warp_sum(pj);
				m[rr] = cm;
				ps[lane * REF_TILE_Q + warp * REF_ROWS + rr] = pj;
			}
			__syncthreads(); /* every warp is done with K */
			ref_stage(kv, ld, REF_CHUNK, vb + (long long)j0 * p.v_stride_s, p.v_stride_s, nc,
				  d, bf16);
			__syncthreads();
#pragma unroll
			for (int rr = 0; rr < REF_ROWS; rr++)
#pragma unroll
				for (int u = 0; u < REF_DIMS; u++)
					acc[rr][u] *= corr[rr];
			for (int c = 0; c < nc; c++) {
				const float4 pp = *(const float4 *)(ps + c * REF_TILE_Q + warp * REF_ROWS);
#pragma unroll
				for (int u = 0; u < REF_DIMS; u++) {
					const int t = lane + 32 * u;

					if (t < d) {
						const float vv = kv[c * ld + t];
#pragma unroll
						for (int rr = 0; rr < REF_ROWS; rr++)
							acc[rr][u] += ref_part(pp, rr) * vv;
					}
				}
			}
		}
#pragma unroll
		for (int rr = 0; rr < REF_ROWS; rr++) {
			const int r = warp * REF_ROWS + rr;
			const long long oo = bi * p.o_stride_b + hq * p.o_stride_h +
					     (long long)(i0 + r) * p.o_stride_s;

			if (r >= nq)
				continue;
#pragma unroll
			for (int u = 0; u < REF_DIMS; u++) {
				const int t = lane + 32 * u;
				if (t < d)
					o[oo + t] = acc[rr][u] / (l[rr] > 0.0f ? l[rr] : 1.0f);
			}
		}
	}
}

/* ---- the check: a candidate's output against the reference ----------------- */

/* What fatune_ref_check accumulates; the worker zeroes it before the launch
 * and reads these 48 bytes back (evaluate.c's struct check_sums mirrors it). */
struct fatune_check_sums {
	double num;		/* sum over finite outputs of (o - ref)^2 */
	double den;		/* sum over the same outputs of ref^2 */
	double onorm;		/* sum over the same outputs of o^2 (when ref is all 0) */
	ft_u64 nonfinite;	/* outputs that are NaN or infinite (unwritten: NaN poison) */
	ft_u32 max_abs_bits;	/* the largest |o - ref| as fp32 bits (>= 0, so the bits
				 * order as the values do and atomicMax works) */
	ft_u32 pad;
	ft_u64 worst_window;	/* the worst window of `window` outputs: the fp32 bits of
				 * its sum (o - ref)^2 / sum ref^2 (of sum (o - ref)^2
				 * when its ref is all 0) in the high half, its index in
				 * the low half, so that atomicMax keeps the worst */
};

#define CHECK_THREADS 256
#define CHECK_WARPS (CHECK_THREADS / 32)

/* NaN or infinity: all exponent bits set (fp16: 5 bits, bf16: 8 bits). */
__device__ __forceinline__ int ref_nonfinite16(ft_u16 h, int bf16)
{
	return bf16 ? (h & 0x7f80u) == 0x7f80u : (h & 0x7c00u) == 0x7c00u;
}

/* One output h against its reference r: the sums of fatune_ref_check. */
__device__ __forceinline__ void check_one(ft_u16 h, float r, int bf16, double &num, double &den, double &on,
					  float &mx, ft_u64 &bad)
{
	double x, d;

	if (ref_nonfinite16(h, bf16)) {
		bad++;
		return;
	}
	x = (double)ref_decode(h, bf16);
	d = x - (double)r;
	num += d * d;
	den += (double)r * (double)r;
	on += x * x;
	mx = fmaxf(mx, fabsf((float)d));
}

/* Over the n outputs o[i] (16-bit, laid out as ref, which is fp32), in
 * windows of `window` consecutive outputs (the worker's: 64 rows of D), one
 * warp per window at a time: each thread sums in fp64 (the host's
 * ft_rel_l2 and ft_window_l2 do the same over the same outputs, so the
 * verdict is unchanged), warps reduce with shuffles, one atomic per block and
 * quantity. The windows catch what the whole output's relative error
 * dilutes: one wrong tile of a large output. */
extern "C" __global__ void __launch_bounds__(CHECK_THREADS)
fatune_ref_check(const ft_u16 *o, const float *ref, long long n, int bf16, long long window,
		 fatune_check_sums *out)
{
	__shared__ double s_num[CHECK_WARPS], s_den[CHECK_WARPS], s_on[CHECK_WARPS];
	__shared__ ft_u64 s_bad[CHECK_WARPS], s_win[CHECK_WARPS];
	__shared__ float s_max[CHECK_WARPS];
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const long long warps = (long long)gridDim.x * CHECK_WARPS;
	const long long windows = (n + window - 1) / window;
	double num = 0.0, den = 0.0, on = 0.0;
	ft_u64 bad = 0, worst = 0;
	float mx = 0.0f;

	for (long long w = (long long)blockIdx.x * CHECK_WARPS + warp; w < windows; w += warps) {
		const long long end = (w + 1) * window < n ? (w + 1) * window : n;
		double wn = 0.0, wd = 0.0;
		long long i = w * window + lane;

		/* four outputs per lane per step, loaded before any is used, so that a
		 * warp has eight loads in flight (a window is 64 D outputs: few
		 * windows, few warps) */
		for (; i + 96 < end; i += 128) {
			ft_u16 h[4];
			float r[4];
#pragma unroll
			for (int u = 0; u < 4; u++) {
				h[u] = o[i + 32 * u];
				r[u] = ref[i + 32 * u];
			}
#pragma unroll
			for (int u = 0; u < 4; u++)
				check_one(h[u], r[u], bf16, wn, wd, on, mx, bad);
		}
		for (; i < end; i += 32)
			check_one(o[i], ref[i], bf16, wn, wd, on, mx, bad);
		for (int off = 16; off > 0; off >>= 1) {
			wn += __shfl_xor_sync(0xffffffffu, wn, off);
			wd += __shfl_xor_sync(0xffffffffu, wd, off);
		}
		num += wn;
		den += wd;
		/* every lane holds the window's sums: lane 0 keeps the worst */
		const ft_u64 key = (ft_u64)__float_as_uint((float)(wd > 0.0 ? wn / wd : wn)) << 32 | (ft_u64)(ft_u32)w;
		if (key > worst)
			worst = key;
	}
	/* num and den are already the same in every lane (sums of whole windows) */
	for (int off = 16; off > 0; off >>= 1) {
		on += __shfl_xor_sync(0xffffffffu, on, off);
		bad += __shfl_xor_sync(0xffffffffu, bad, off);
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
	}
	if (lane == 0) {
		s_num[warp] = num;
		s_den[warp] = den;
		s_on[warp] = on;
		s_bad[warp] = bad;
		s_max[warp] = mx;
		s_win[warp] = worst;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int w = 1; w < CHECK_WARPS; w++) {
			num += s_num[w];
			den += s_den[w];
			on += s_on[w];
			bad += s_bad[w];
			mx = fmaxf(mx, s_max[w]);
			worst = s_win[w] > worst ? s_win[w] : worst;
		}
		atomicAdd(&out->num, num);
		atomicAdd(&out->den, den);
		atomicAdd(&out->onorm, on);
		if (bad)
			atomicAdd(&out->nonfinite, bad);
		atomicMax(&out->max_abs_bits, __float_as_uint(mx));
		if (worst)
			atomicMax(&out->worst_window, worst);
	}
}
