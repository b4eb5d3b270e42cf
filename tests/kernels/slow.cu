/* slow.cu - a deliberately slow but correct attention (ABI v2), for timing tests.
 *
 * One thread per query row, with no shared memory and no tensor cores: each
 * thread walks every visible key with an online softmax in fp32 registers.
 * To make a call last tens of milliseconds at a small shape, the whole row is
 * recomputed PASSES times, each pass starting at a different key (the softmax
 * does not depend on the order of the keys, so every pass gives the same row
 * up to fp32 rounding, and no compiler can fold the passes into one), and the
 * output is the mean of the passes. Searching tests/spaces/slow.yaml shows
 * that timing follows the kernel's duration (evaluate.h, ft_eval_plan): a
 * call of ~50 ms is timed with one call per sample and fewer samples, under a
 * watchdog that grew with the measured duration, where a fixed 20 calls per
 * sample used to run past the 10 s watchdog.
 *
 * Macros (from fatune): PASSES, ROWS_PER_BLOCK, HEAD_DIM, FATUNE_BF16,
 * FATUNE_ABI (2). Causal masks are bottom-right aligned, as the ABI says.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fatune_abi.h"

#if !defined(FATUNE_ABI) || FATUNE_ABI != 2
#error "slow.cu speaks ABI v2: its space says template.abi: 2"
#endif

#if FATUNE_BF16
typedef __nv_bfloat16 elem_t;
static __device__ __forceinline__ float to_float(elem_t x) { return __bfloat162float(x); }
static __device__ __forceinline__ elem_t from_float(float x) { return __float2bfloat16(x); }
#else
typedef __half elem_t;
static __device__ __forceinline__ float to_float(elem_t x) { return __half2float(x); }
static __device__ __forceinline__ elem_t from_float(float x) { return __float2half(x); }
#endif

extern "C" __global__ void __launch_bounds__(ROWS_PER_BLOCK)
fatune_slow_fwd(const __grid_constant__ struct fatune_attn_params p)
{
	const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x;
	const int h = blockIdx.y, b = blockIdx.z;
	const int hk = h / (p.h / p.h_kv);
	const elem_t *q = (const elem_t *)p.q + b * p.q_stride_b + h * p.q_stride_h;
	const elem_t *k = (const elem_t *)p.k + b * p.k_stride_b + hk * p.k_stride_h;
	const elem_t *v = (const elem_t *)p.v + b * p.v_stride_b + hk * p.v_stride_h;
	elem_t *o = (elem_t *)p.o + b * p.o_stride_b + h * p.o_stride_h;
	float qr[HEAD_DIM], out[HEAD_DIM], acc[HEAD_DIM];
	int nkeys = p.s_kv;

	if (row >= p.s_q)
		return;
	if (IS_CAUSAL)
		nkeys = min(p.s_kv, max(0, row + p.causal_offset + 1));
	for (int d = 0; d < HEAD_DIM; d++) {
		qr[d] = to_float(q[row * p.q_stride_s + d]) * p.scale;
		out[d] = 0.0f;
	}
	for (int pass = 0; pass < PASSES; pass++) {
		float m = -__int_as_float(0x7f800000), l = 0.0f;

		for (int d = 0; d < HEAD_DIM; d++)
			acc[d] = 0.0f;
		for (int n = 0; n < nkeys; n++) {
			const int j = (n + pass) % nkeys;
			float s = 0.0f, m_new, corr, e;

			for (int d = 0; d < HEAD_DIM; d++)
				s += qr[d] * to_float(k[j * p.k_stride_s + d]);
			m_new = fmaxf(m, s);
			corr = __expf(m - m_new);	/* exp(-inf) = 0 on the first key */
			e = __expf(s - m_new);
			l = l * corr + e;
			for (int d = 0; d < HEAD_DIM; d++)
				acc[d] = acc[d] * corr + e * to_float(v[j * p.v_stride_s + d]);
			m = m_new;
		}
		/* a row that sees no key is 0, never NaN */
		for (int d = 0; d < HEAD_DIM; d++)
			out[d] += l > 0.0f ? acc[d] / l : 0.0f;
	}
	for (int d = 0; d < HEAD_DIM; d++)
		o[row * p.o_stride_s + d] = from_float(out[d] / PASSES);
}
