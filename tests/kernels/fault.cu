/* fault.cu - an attention kernel that fails on purpose, for fatune's isolation tests.
 *
 * FAULT selects the behaviour (tests/spaces/fault.yaml enumerates all four):
 *   0  correct: one warp per query row, lanes split D, online softmax in fp32
 *      (simple and slow, but a valid candidate; ROWS_PER_BLOCK rows per block)
 *   1  writes 16 TiB past the output: an illegal address that loses the context
 *      (the worker must answer `crashed`)
 *   2  never returns (the watchdog must kill the worker: `timeout`)
 *   3  correct except one output element set to NaN (`wrong_result`)
 *   4  correct except one output row (row S/2 of the first head) doubled, off
 *      by its own norm: in a large output the whole output's relative error
 *      stays under the tolerance and only the window check catches it
 *      (tests/spaces/fault_window.yaml; `wrong_result`)
 * No shared memory at all, so the space's smem_bytes is 0.
 */
#include "../../kernel_templates/fatune_abi.h"

#if !defined(FAULT) || !defined(ROWS_PER_BLOCK) || !defined(HEAD_DIM) || !defined(IS_CAUSAL) || \
	!defined(FATUNE_BF16)
#error "fault.cu needs -DFAULT, -DROWS_PER_BLOCK, -DHEAD_DIM, -DIS_CAUSAL and -DFATUNE_BF16"
#endif

/* head dims each lane owns: lane, lane + 32, ... */
#define DIMS_PER_LANE ((HEAD_DIM + 31) / 32)

typedef unsigned short fault_u16;

__device__ __forceinline__ float fault_load(const void *base, long long i)
{
	fault_u16 h = ((const fault_u16 *)base)[i];
	float f;
#if FATUNE_BF16
	f = __uint_as_float((unsigned)h << 16);
#else
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
#endif
	return f;
}

__device__ __forceinline__ void fault_store(void *base, long long i, float f)
{
	fault_u16 h;
#if FATUNE_BF16
	unsigned u = __float_as_uint(f);
	u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
	h = (fault_u16)(u >> 16);
#else
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
#endif
	((fault_u16 *)base)[i] = h;
}

extern "C" __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
fatune_fault_attention(struct fatune_attn_params p)
{
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const int i = blockIdx.x * ROWS_PER_BLOCK + warp;
	const long long bh = (long long)blockIdx.z * p.h + blockIdx.y;
	const long long base = bh * p.s * HEAD_DIM;
	float qv[DIMS_PER_LANE], acc[DIMS_PER_LANE];
	float m = -__int_as_float(0x7f800000), l = 0.0f;

#if FAULT == 1
	/* 2^43 elements = 16 TiB past o: far beyond any allocation */
	if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0)
		((volatile fault_u16 *)p.o)[1ull << 43] = 0;
#elif FAULT == 2
	/* nanosleep is an asm side effect, so the loop cannot be removed; it also
	 * keeps the spinning warps from burning power */
	for (;;)
		asm volatile("nanosleep.u32 1000;");
#endif
	if (i >= p.s)
		return;
#pragma unroll
	for (int u = 0; u < DIMS_PER_LANE; u++) {
		const int t = lane + 32 * u;
		qv[u] = t < HEAD_DIM ? fault_load(p.q, base + (long long)i * HEAD_DIM + t) : 0.0f;
		acc[u] = 0.0f;
	}
	const int nk = IS_CAUSAL ? i + 1 : p.s;
	for (int j = 0; j < nk; j++) {
		const long long kr = base + (long long)j * HEAD_DIM;
		float dot = 0.0f, s, mn, corr, pj;
#pragma unroll
		for (int u = 0; u < DIMS_PER_LANE; u++) {
			const int t = lane + 32 * u;
			if (t < HEAD_DIM)
				dot += qv[u] * fault_load(p.k, kr + t);
		}
		for (int off = 16; off > 0; off >>= 1)
			dot += __shfl_xor_sync(0xffffffffu, dot, off);
		s = dot * p.scale;
		mn = fmaxf(m, s);
		corr = expf(m - mn);
		pj = expf(s - mn);
		l = l * corr + pj;
#pragma unroll
		for (int u = 0; u < DIMS_PER_LANE; u++) {
			const int t = lane + 32 * u;
			acc[u] = acc[u] * corr + (t < HEAD_DIM ? pj * fault_load(p.v, kr + t) : 0.0f);
		}
		m = mn;
	}
	const float out_scale = FAULT == 4 && bh == 0 && i == p.s / 2 ? 2.0f : 1.0f;
#pragma unroll
	for (int u = 0; u < DIMS_PER_LANE; u++) {
		const int t = lane + 32 * u;
		if (t < HEAD_DIM)
			fault_store(p.o, base + (long long)i * HEAD_DIM + t, out_scale * acc[u] / l);
	}
#if FAULT == 3
	/* 0x7fff is a NaN in fp16 and in bf16 */
	if (bh == 0 && i == 0 && lane == 0)
		((fault_u16 *)p.o)[0] = 0x7fff;
#endif
}
