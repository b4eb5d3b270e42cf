/* launch.c - launching the kernel a fatune build_config.h describes, through the CUDA driver API.
 *
 * Build the kernel first (build_config.h says how):
 *   printf '#include "build_config.h"\n#include "attention.cu"\n' > kernel.cu
 *   nvcc -arch=sm_90 -cubin -o attention.cubin kernel.cu
 * then this file: cc -I<fatune>/kernel_templates -I/usr/local/cuda/include launch.c -lcuda
 * For a self-attention [B, H, S, D] fp16/bf16 (the dtype FATUNE_BF16 says), contiguous bhsd.
 * Every CUresult is checked; tests/cli/024-export-builds.sh compiles this file against exported
 * headers of both shipped templates.
 */
#include <cuda.h>
#include <math.h>
#include <stdio.h>

#include "build_config.h" /* FATUNE_LAUNCH_* and the macros the kernel was built with */
#include "fatune_abi.h"	  /* struct fatune_attn_params, the version FATUNE_ABI names */

#define CHECK(call)                                                                         \
	do {                                                                                \
		CUresult r_ = (call);                                                       \
		if (r_ != CUDA_SUCCESS) {                                                   \
			fprintf(stderr, "%s failed: error %d\n", #call, (int)r_);           \
			return -1;                                                          \
		}                                                                           \
	} while (0)

/* q, k, v, o: device pointers to [b, h, s, HEAD_DIM] 16-bit elements; the module holds the CUBIN. */
int fatune_attention(CUmodule mod, CUstream stream, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v, CUdeviceptr o,
		     int b, int h, int s)
{
	CUfunction f, combine;
	CUdeviceptr o_partial = 0, lse_partial = 0, workspace = 0;
	struct fatune_attn_params p = { 0 };
	void *args[] = { &p };
	unsigned grid_x = FATUNE_LAUNCH_GRID_X; /* the tuned shape's; another shape: the formula beside it */

	CHECK(cuModuleGetFunction(&f, mod, FATUNE_LAUNCH_KERNEL));
	if (FATUNE_LAUNCH_SMEM_OPTIN) /* over 48 KB of dynamic shared memory: opt in once */
		CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, FATUNE_LAUNCH_SMEM_BYTES));
	if (FATUNE_LAUNCH_NUM_SPLITS > 1) {
		CHECK(cuMemAlloc(&o_partial, FATUNE_LAUNCH_O_PARTIAL_BYTES));
		CHECK(cuMemAlloc(&lse_partial, FATUNE_LAUNCH_LSE_PARTIAL_BYTES));
	}
	if (FATUNE_LAUNCH_WORKSPACE_BYTES) {
		CHECK(cuMemAlloc(&workspace, FATUNE_LAUNCH_WORKSPACE_BYTES));
		if (FATUNE_LAUNCH_WORKSPACE_INIT == FATUNE_WORKSPACE_ZERO ||
		    FATUNE_LAUNCH_WORKSPACE_INIT == FATUNE_WORKSPACE_ZERO_ONCE)
			CHECK(cuMemsetD8Async(workspace, 0, FATUNE_LAUNCH_WORKSPACE_BYTES, stream));
	}
	p.q = (const void *)q;
	p.k = (const void *)k;
	p.v = (const void *)v;
	p.o = (void *)o;
	p.o_partial = (float *)o_partial;
	p.lse_partial = (float *)lse_partial;
	p.workspace = (void *)workspace;
	p.workspace_bytes = FATUNE_LAUNCH_WORKSPACE_BYTES;
	p.q_stride_s = p.k_stride_s = p.v_stride_s = p.o_stride_s = HEAD_DIM;	/* bhsd, contiguous */
	p.q_stride_h = p.k_stride_h = p.v_stride_h = p.o_stride_h = (long long)s * HEAD_DIM;
	p.q_stride_b = p.k_stride_b = p.v_stride_b = p.o_stride_b = (long long)h * s * HEAD_DIM;
	p.b = b;
	p.h = p.h_kv = h;
	p.s_q = p.s_kv = s;
	p.d = HEAD_DIM;
	p.num_splits = FATUNE_LAUNCH_NUM_SPLITS;
	p.causal_offset = 0;
	p.scale = 1.0f / sqrtf((float)HEAD_DIM);
	p.scale_log2 = p.scale * 1.44269504f;
	p.layout = FATUNE_LAYOUT_BHSD;
	p.abi_version = FATUNE_ABI;
	/* (a wgmma build also fills p.tma_q, tma_k, tma_v with cuTensorMapEncodeTiled and the
	 * FATUNE_LAUNCH_TMA_* boxes) */
	CHECK(cuLaunchKernel(f, grid_x, FATUNE_LAUNCH_GRID_Y, FATUNE_LAUNCH_GRID_Z, FATUNE_LAUNCH_THREADS, 1, 1,
			     FATUNE_LAUNCH_SMEM_BYTES, stream, args, NULL));
#ifdef FATUNE_LAUNCH_COMBINE_KERNEL
	if (FATUNE_LAUNCH_NUM_SPLITS > 1 && FATUNE_LAUNCH_COMBINE_THREADS > 0) {
		CHECK(cuModuleGetFunction(&combine, mod, FATUNE_LAUNCH_COMBINE_KERNEL));
		CHECK(cuLaunchKernel(combine, FATUNE_LAUNCH_COMBINE_GRID_X, FATUNE_LAUNCH_COMBINE_GRID_Y,
				     FATUNE_LAUNCH_COMBINE_GRID_Z, FATUNE_LAUNCH_COMBINE_THREADS, 1, 1, 0, stream, args,
				     NULL));
	}
#endif
	(void)combine;
	return 0; /* free o_partial, lse_partial and workspace once the stream is done with them */
}
