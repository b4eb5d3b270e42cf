/* cxx_template.cu - bring your own C++ template kernel: the extern "C" wrapper.
 *
 * fatune launches a kernel by its name in the CUBIN, so the entry point must be
 * `extern "C" __global__` (a C++ name is mangled: `_Z...`, and fatune reports
 * the names it found as compile_failed). A kernel written as a C++ template -
 * over the element type, the head dim, the rows per warp - is reached through
 * a thin extern "C" wrapper that instantiates it with fatune's macros:
 *
 *   template <typename T, int HEAD_DIM_T, int ROWS> __device__ void attend(p);
 *   extern "C" __global__ void fatune_cxx_template_fwd(const __grid_constant__
 *           struct fatune_attn_params p) { attend<elem_t, HEAD_DIM, ROWS_PER_WARP>(p); }
 *
 * The space (tests/spaces/cxx_template.yaml) shows the rest of what a C++
 * kernel may need: a header directory of its own and CUDA's libcu++ headers
 * (`compile.include: [../kernels/include, "{cuda}/cccl"]`: <cuda/std/limits>
 * lives in include/cccl under CUDA 13), a define computed from the shape
 * (`compile.defines: {KEYS_PER_LANE: ...}`) and an NVRTC option
 * (`compile.options: [-std=c++17]`).
 *
 * The algorithm is plain (one warp per ROWS query rows, each lane a strided
 * subset of the keys, lanes merged by cooperative_groups reductions); ABI v2:
 * strides, grouped-query heads and bottom-right causal masks.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fatune_abi.h"
#include "warp_softmax.cuh"	/* from compile.include */

namespace byo {

__device__ __forceinline__ float load(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ float load(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
template <typename T> __device__ T store(float x);
template <> __device__ __half store<__half>(float x) { return __float2half(x); }
template <> __device__ __nv_bfloat16 store<__nv_bfloat16>(float x) { return __float2bfloat16(x); }

/* ROWS query rows per warp of one (batch, head); the grid's x covers the rows */
template <typename T, int DIMS, int ROWS, bool CAUSAL>
__device__ void attend(const struct fatune_attn_params &p)
{
	auto warp = cg::tiled_partition<32>(cg::this_thread_block());
	const int h = blockIdx.y, b = blockIdx.z, hk = h / (p.h / p.h_kv);
	const int row0 = (blockIdx.x * (blockDim.x / 32) + warp.meta_group_rank()) * ROWS;
	const T *q = (const T *)p.q + b * p.q_stride_b + h * p.q_stride_h;
	const T *k = (const T *)p.k + b * p.k_stride_b + hk * p.k_stride_h;
	const T *v = (const T *)p.v + b * p.v_stride_b + hk * p.v_stride_h;
	T *o = (T *)p.o + b * p.o_stride_b + h * p.o_stride_h;

	for (int r = row0; r < row0 + ROWS && r < p.s_q; r++) {
		const int nkeys = CAUSAL ? min(p.s_kv, max(0, r + p.causal_offset + 1)) : p.s_kv;
		row_state<DIMS> st;

		for (int j = warp.thread_rank(); j < nkeys; j += 32) {
			float s = 0.0f;
			for (int d = 0; d < DIMS; d++)
				s += load(q + r * p.q_stride_s + d) * load(k + j * p.k_stride_s + d);
			st.add(s * p.scale, [&](int d) { return load(v + j * p.v_stride_s + d); });
		}
		st.merge(warp);
		/* lane l writes dims l, l + 32, ...; constant indices keep acc in
		 * registers. A row that sees no key is 0, never NaN. */
#pragma unroll
		for (int d = 0; d < DIMS; d++)
			if (d % 32 == (int)warp.thread_rank())
				o[r * p.o_stride_s + d] = store<T>(st.l > 0.0f ? st.acc[d] / st.l : 0.0f);
	}
}

} /* namespace byo */

#if FATUNE_BF16
typedef __nv_bfloat16 elem_t;
#else
typedef __half elem_t;
#endif

static_assert(KEYS_PER_LANE >= 1, "compile.defines gives KEYS_PER_LANE from the shape");

/* the entry point fatune launches: C linkage, one instantiation */
extern "C" __global__ void __launch_bounds__(WARPS * 32)
fatune_cxx_template_fwd(const __grid_constant__ struct fatune_attn_params p)
{
	byo::attend<elem_t, HEAD_DIM, ROWS_PER_WARP, IS_CAUSAL != 0>(p);
}
