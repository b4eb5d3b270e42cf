/* library_overhead.c - host time of one fatune_attention_forward call against a bare cuLaunchKernel (tests/gpu/013).
 *
 * Links a library `fatune export --library` wrote (static) and libcuda. For
 * one shape (argv: B H H_KV S_Q S_KV D CAUSAL BF16 BSHD) it allocates the
 * tensors and workspace, then times on the host, best of 20 rounds of 200
 * calls each (the GPU queue never fills, so no call blocks): the library's
 * forward, and cuLaunchKernel of the same CUBIN's kernel with the same
 * grid, block, shared memory and parameter block (built by the library's own
 * plan), and the GPU time of the library's 200 calls between two events.
 * Prints one JSON line: library_us, bare_us, overhead_us (host, per call),
 * gpu_us (per call).
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fatune_abi.h"
#include "fatune_attention.h"
#include "fatune_library.h"

#define CK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "%s: %d\n", #x, (int)r_); exit(1); } } while (0)

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	struct fatune_attention_args a;
	struct fatune_attention_plan p;
	struct fatune_attn_params_v2 prm;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr q, k, v, o, ws = 0;
	void *args[1] = { &prm };
	double best_lib = 1e30, best_bare = 1e30, best_gpu = 1e30;
	CUevent e0, e1;
	int bshd, sz[9];

	if (argc != 10)
		return fprintf(stderr, "usage: %s B H H_KV S_Q S_KV D CAUSAL BF16 BSHD\n", argv[0]), 2;
	for (int i = 0; i < 9; i++)
		sz[i] = atoi(argv[i + 1]);
	bshd = sz[8];
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	memset(&a, 0, sizeof(a));
	a.b = sz[0]; a.h = sz[1]; a.h_kv = sz[2]; a.s_q = sz[3]; a.s_kv = sz[4]; a.d = sz[5];
	a.causal = sz[6]; a.dtype = sz[7];
	for (int t = 0; t < 4; t++) {
		long long *st = t == 0 ? a.q_stride : t == 1 ? a.k_stride : t == 2 ? a.v_stride : a.o_stride;
		long long heads = t == 1 || t == 2 ? a.h_kv : a.h, rows = t == 1 || t == 2 ? a.s_kv : a.s_q;

		st[0] = heads * rows * a.d;
		st[1] = bshd ? a.d : rows * a.d;
		st[2] = bshd ? heads * a.d : a.d;
	}
	CK(cuMemAlloc(&q, (size_t)a.b * a.h * a.s_q * a.d * 2));
	CK(cuMemAlloc(&o, (size_t)a.b * a.h * a.s_q * a.d * 2));
	CK(cuMemAlloc(&k, (size_t)a.b * a.h_kv * a.s_kv * a.d * 2));
	CK(cuMemAlloc(&v, (size_t)a.b * a.h_kv * a.s_kv * a.d * 2));
	CK(cuMemsetD8(q, 0, (size_t)a.b * a.h * a.s_q * a.d * 2));
	CK(cuMemsetD8(k, 0, (size_t)a.b * a.h_kv * a.s_kv * a.d * 2));
	CK(cuMemsetD8(v, 0, (size_t)a.b * a.h_kv * a.s_kv * a.d * 2));
	a.q = (void *)q; a.k = (void *)k; a.v = (void *)v; a.o = (void *)o;
	if (fatune_attention_plan(&a, &p))
		return fprintf(stderr, "plan: %s\n", fatune_strerror(fatune_attention_plan(&a, &p))), 1;
	if (p.workspace_bytes)
		CK(cuMemAlloc(&ws, p.workspace_bytes));
	a.workspace = (void *)ws;
	a.workspace_bytes = p.workspace_bytes;
	/* the bare launch: the same CUBIN, kernel, geometry and parameters */
	CK(cuModuleLoadData(&mod, fatune_lib_cubins[fatune_lib_cubin_of[p.entry]].data));
	CK(cuModuleGetFunction(&fn, mod, FATUNE_LIB_KERNEL));
	if (p.smem_bytes > 48 * 1024)
		CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)p.smem_bytes));
	memset(&prm, 0, sizeof(prm));
	prm.q = a.q; prm.k = a.k; prm.v = a.v; prm.o = a.o;
	prm.q_stride_b = prm.o_stride_b = a.q_stride[0]; prm.q_stride_h = prm.o_stride_h = a.q_stride[1];
	prm.q_stride_s = prm.o_stride_s = a.q_stride[2];
	prm.k_stride_b = prm.v_stride_b = a.k_stride[0]; prm.k_stride_h = prm.v_stride_h = a.k_stride[1];
	prm.k_stride_s = prm.v_stride_s = a.k_stride[2];
	prm.b = a.b; prm.h = a.h; prm.h_kv = a.h_kv; prm.s_q = a.s_q; prm.s_kv = a.s_kv; prm.d = a.d;
	prm.num_splits = p.num_splits; prm.causal_offset = a.s_kv - a.s_q; prm.scale = 0.125f;
	prm.scale_log2 = 0.18f; prm.layout = bshd; prm.abi_version = 2;
	if (p.num_splits > 1) {	/* the runtime's workspace layout: partial O, partial LSE, scratch */
		size_t rows = (size_t)p.num_splits * a.b * a.h * a.s_q, lse = (rows * a.d * 4 + 255) & ~(size_t)255;
		size_t scratch = lse + ((rows * 4 + 255) & ~(size_t)255);

		prm.o_partial = (float *)ws;
		prm.lse_partial = (float *)(ws + lse);
		if (p.workspace_bytes > scratch) {
			prm.workspace = (void *)(ws + scratch);
			prm.workspace_bytes = (long long)(p.workspace_bytes - scratch);
		}
	} else if (p.workspace_bytes) {
		prm.workspace = (void *)ws;
		prm.workspace_bytes = (long long)p.workspace_bytes;
	}
	if (fatune_attention_forward(&a, NULL))
		return fprintf(stderr, "forward: %s\n", fatune_strerror(fatune_attention_forward(&a, NULL))), 1;
	CK(cuCtxSynchronize());
	CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
	for (int round = 0; round < 20; round++) {
		double t0 = now_us(), t1, t2;
		float ms;

		CK(cuEventRecord(e0, NULL));
		for (int i = 0; i < 200; i++)
			if (fatune_attention_forward(&a, NULL))
				return 1;
		t1 = now_us();
		CK(cuEventRecord(e1, NULL));
		CK(cuCtxSynchronize());
		CK(cuEventElapsedTime(&ms, e0, e1));
		if (ms * 1e3 / 200 < best_gpu)
			best_gpu = ms * 1e3 / 200;
		t1 -= t0;
		t0 = now_us();
		for (int i = 0; i < 200; i++)
			CK(cuLaunchKernel(fn, p.grid[0], p.grid[1], p.grid[2], p.threads, 1, 1, p.smem_bytes, NULL, args, NULL));
		t2 = now_us() - t0;
		CK(cuCtxSynchronize());
		if (t1 < best_lib)
			best_lib = t1;
		if (t2 < best_bare)
			best_bare = t2;
	}
	printf("{\"library_us\": %.3f, \"bare_us\": %.3f, \"overhead_us\": %.3f, \"gpu_us\": %.3f, \"combine\": %d}\n",
	       best_lib / 200, best_bare / 200, (best_lib - best_bare) / 200, best_gpu, p.combine_threads > 0);
	return 0;
}
