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
 * The reference is simple rather than fast: it runs once per (shape, seed).
 */
#include "fatune_abi.h"

typedef unsigned short ft_u16;
typedef unsigned int ft_u32;
typedef unsigned long long ft_u64;

/* The attention kernel: 4 warps per block (one key's dot product per warp at a
 * time; lanes split D), keys processed in chunks whose scores sit in shared
 * memory; thread t owns output dims t and t + 128, so D <= 256. */
#define REF_THREADS 128
#define REF_CHUNK 64
#define REF_MAX_D 256
#define REF_WARPS (REF_THREADS / 32)

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

/* One block per query row (grid-stride over the B*H*S_q rows), over the
 * tensors of an ABI v2 params struct: any strides, H_kv KV heads (query head
 * h reads KV head h / (H / H_kv)), S_kv keys, bottom-right causal masking
 * (query i sees keys 0 .. i + causal_offset). p.o is the fp32 output, laid
 * out with O's strides. Online softmax over key chunks: m is the running
 * max, l the running sum of exp(s - m), acc the running sum of exp(s - m) * v;
 * expf (not __expf) keeps the error near one ulp. A row with no keys (S_q >
 * S_kv, causal) writes 0, not NaN: l stays 0 and is replaced by 1. */
extern "C" __global__ void __launch_bounds__(REF_THREADS)
fatune_ref_attention(const fatune_attn_params_v2 p, int causal, int bf16)
{
	__shared__ float qs[REF_MAX_D];
	__shared__ float ps[REF_CHUNK];
	const long long rows = (long long)p.b * p.h * p.s_q;
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, d = p.d;
	const int group = p.h / p.h_kv;
	const ft_u16 *q = (const ft_u16 *)p.q, *k = (const ft_u16 *)p.k, *v = (const ft_u16 *)p.v;
	float *o = (float *)p.o;

	for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
		const int i = (int)(row % p.s_q);
		const int hq = (int)(row / p.s_q % p.h);
		const int bi = (int)(row / p.s_q / p.h);
		const int hk = hq / group;
		const long long qo = bi * p.q_stride_b + hq * p.q_stride_h + i * p.q_stride_s;
		const long long oo = bi * p.o_stride_b + hq * p.o_stride_h + i * p.o_stride_s;
		const ft_u16 *kb = k + bi * p.k_stride_b + hk * p.k_stride_h;
		const ft_u16 *vb = v + bi * p.v_stride_b + hk * p.v_stride_h;
		const int nk = causal ? max(0, min(p.s_kv, i + p.causal_offset + 1)) : p.s_kv;
		float m = -__int_as_float(0x7f800000), l = 0.0f, acc[2] = { 0.0f, 0.0f };

		__syncthreads(); /* the previous row is done with qs */
		for (int t = threadIdx.x; t < d; t += REF_THREADS)
			qs[t] = ref_load(q, qo + t, bf16);
		__syncthreads();
		for (int j0 = 0; j0 < nk; j0 += REF_CHUNK) {
			const int nc = min(REF_CHUNK, nk - j0);
			float cm = m, corr;

			for (int jj = warp; jj < nc; jj += REF_WARPS) {
				const long long kr = (long long)(j0 + jj) * p.k_stride_s;
				float dot = 0.0f;
				for (int t = lane; t < d; t += 32)
					dot += qs[t] * ref_load(kb, kr + t, bf16);
				for (int off = 16; off > 0; off >>= 1)
					dot += __shfl_xor_sync(0xffffffffu, dot, off);
				if (lane == 0)
					ps[jj] = dot * p.scale;
			}
			__syncthreads();
			for (int jj = 0; jj < nc; jj++)
				cm = fmaxf(cm, ps[jj]);
			corr = expf(m - cm); /* 0 on the first chunk: m = -inf, cm finite */
			l *= corr;
			acc[0] *= corr;
			acc[1] *= corr;
			for (int jj = 0; jj < nc; jj++) {
				const float pj = expf(ps[jj] - cm);
				const long long vr = (long long)(j0 + jj) * p.v_stride_s;
				l += pj;
				for (int u = 0; u < 2; u++) {
					const int t = threadIdx.x + u * REF_THREADS;
					if (t < d)
						acc[u] += pj * ref_load(vb, vr + t, bf16);
				}
			}
			m = cm;
			__syncthreads(); /* everyone has read ps before the next chunk */
		}
		for (int u = 0; u < 2; u++) {
			const int t = threadIdx.x + u * REF_THREADS;
			if (t < d)
				o[oo + t] = acc[u] / (l > 0.0f ? l : 1.0f);
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
