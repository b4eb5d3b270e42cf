/* fa1_workspace.cu - bring your own kernel with a workspace (ABI v2): per-row
 * softmax state kept in global memory, FlashAttention-1 style.
 *
 * FlashAttention-1 keeps each query row's running max m and sum l (and the
 * unnormalised output) in GPU memory between KV tiles instead of registers.
 * Such a kernel needs scratch memory of a size that depends on the shape:
 * ABI v2's `workspace` pointer, sized by the space's formula
 * (tests/spaces/fa1_workspace.yaml):
 *
 *   workspace: {bytes: B * H * S * (D + 2) * 4, init: poison}
 *
 * Layout: for query row r of (b, h), at float offset ((b * H + h) * S_q + r)
 * * (D + 2): m, l, then D fp32 accumulators. `init: poison` makes fatune fill
 * the workspace with 0xff bytes (NaN) before the verified call, so a kernel
 * that reads its state before writing it is caught as wrong_result: the
 * SKIP_INIT=1 candidates do exactly that, on purpose. (`init: zero` would
 * clear it before every call, inside the timed region; `none` leaves it.)
 *
 * One thread per query row walks the keys in tiles of KV_TILE: it reads m and
 * l back from the workspace, scores the tile, rescales and adds to the
 * accumulators in the workspace, and writes m and l back; the last step
 * divides by l into O. Strides, grouped-query heads and bottom-right causal
 * masks as ABI v2 says. Plain and slow: an example, not a contender.
 *
 * Macros (from fatune): ROWS_PER_BLOCK, KV_TILE, SKIP_INIT, HEAD_DIM,
 * IS_CAUSAL, FATUNE_BF16.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fatune_abi.h"

#if FATUNE_BF16
typedef __nv_bfloat16 elem_t;
#define TO_FLOAT(x) __bfloat162float(x)
#define FROM_FLOAT(x) __float2bfloat16(x)
#else
typedef __half elem_t;
#define TO_FLOAT(x) __half2float(x)
#define FROM_FLOAT(x) __float2half(x)
#endif

extern "C" __global__ void __launch_bounds__(ROWS_PER_BLOCK)
fatune_fa1_workspace_fwd(const __grid_constant__ struct fatune_attn_params p)
{
	const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x;
	const int h = blockIdx.y, b = blockIdx.z, hk = h / (p.h / p.h_kv);
	const elem_t *q = (const elem_t *)p.q + b * p.q_stride_b + h * p.q_stride_h + row * p.q_stride_s;
	const elem_t *k = (const elem_t *)p.k + b * p.k_stride_b + hk * p.k_stride_h;
	const elem_t *v = (const elem_t *)p.v + b * p.v_stride_b + hk * p.v_stride_h;
	elem_t *o = (elem_t *)p.o + b * p.o_stride_b + h * p.o_stride_h + row * p.o_stride_s;
	float *state, *acc, s[KV_TILE];
	int nkeys = p.s_kv;

	if (row >= p.s_q)
		return;
	/* this row's m, l and accumulators: no other thread touches them */
	state = (float *)p.workspace + (((long long)b * p.h + h) * p.s_q + row) * (HEAD_DIM + 2);
	acc = state + 2;
	if (IS_CAUSAL)
		nkeys = min(p.s_kv, max(0, row + p.causal_offset + 1));
	if (!SKIP_INIT) {
		state[0] = -__int_as_float(0x7f800000);
		state[1] = 0.0f;
		for (int d = 0; d < HEAD_DIM; d++)
			acc[d] = 0.0f;
	}
	for (int kv0 = 0; kv0 < nkeys; kv0 += KV_TILE) {
		const float m = state[0];
		float m_new = m, corr, sum = 0.0f;

#pragma unroll
		for (int j = 0; j < KV_TILE; j++) {
			float dot = 0.0f;
			if (kv0 + j < nkeys)
				for (int d = 0; d < HEAD_DIM; d++)
					dot += TO_FLOAT(q[d]) * TO_FLOAT(k[(kv0 + j) * p.k_stride_s + d]);
			s[j] = kv0 + j < nkeys ? dot * p.scale : -__int_as_float(0x7f800000);
			m_new = fmaxf(m_new, s[j]);
		}
		corr = __expf(m - m_new);	/* 0 on the first tile: exp(-inf) */
#pragma unroll
		for (int j = 0; j < KV_TILE; j++) {
			s[j] = __expf(s[j] - m_new);
			sum += s[j];
		}
		for (int d = 0; d < HEAD_DIM; d++) {
			float a = acc[d] * corr;
#pragma unroll
			for (int j = 0; j < KV_TILE; j++)
				if (kv0 + j < nkeys)
					a += s[j] * TO_FLOAT(v[(kv0 + j) * p.v_stride_s + d]);
			acc[d] = a;
		}
		state[0] = m_new;
		state[1] = state[1] * corr + sum;
	}
	/* a row that sees no key is 0, never NaN */
	for (int d = 0; d < HEAD_DIM; d++)
		o[d] = FROM_FLOAT(nkeys > 0 ? acc[d] / state[1] : 0.0f);
}
