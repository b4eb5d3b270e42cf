/* library_overhead.c - host and GPU time of fatune_attention_forward against bare cuLaunchKernel (tests/gpu/016).
 *
 * Links a library `fatune export --library` wrote (static) and libcuda. For
 * one shape (argv: B H H_KV S_Q S_KV D CAUSAL BF16 BSHD) it allocates the
 * tensors and a workspace kept for the library (calls after the first pass
 * FATUNE_WORKSPACE_KEPT), and builds the bare baseline from the library's
 * plan and tables: its own module of the same CUBIN, the same kernel and
 * combine kernel, grid, block, dynamic shared memory (and opt-in attribute),
 * the same parameter block with the TMA descriptors the family needs, the
 * combine with programmatic dependent launch where the entry's PDL is 1, and
 * the memset of the scratch where the space's init is zero (every call) - so
 * a bare call issues exactly the launches a library call issues, with raw
 * cuLaunchKernel. On one non-blocking stream it measures:
 *   library_us, bare_us: host time per call, best of 20 rounds of 200 calls
 *     (each round synchronised before the next; the queue is never full);
 *   overhead_us: library_us - bare_us, the library's own host cost;
 *   gpu_us, bare_gpu_us: GPU time per call as fatune's worker times a config
 *     (median of 30 samples, each one CUDA-graph replay of 20 calls between
 *     two events, divided by 20), library calls and bare calls captured;
 *   gpu_stream_us, bare_gpu_stream_us: GPU time per call of 200 calls
 *     launched on the stream (launch gaps included), best of the 20 rounds.
 * Prints one JSON line with these, "combine" (the config has a combine
 * launch) and "memset" (a call zeroes the scratch).
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fatune_abi.h"
#include "fatune_attention.h"
#include "fatune_library.h"

#define CK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "%s: %d\n", #x, (int)r_); exit(1); } } while (0)

#define ROUNDS 20
#define CALLS 200
#define GRAPH_CALLS 20	/* the worker's default launches per sample (fatune bench --launches) */
#define GRAPH_SAMPLES 30

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The bare baseline's launch: everything resolved up front, as in the worker. */
struct bare {
	CUfunction main_fn, combine_fn;
	struct fatune_attn_params_v2 prm;
	void *args[1];
	struct fatune_attention_plan p;
	unsigned smem;
	CUdeviceptr scratch;
	size_t scratch_bytes;	/* > 0: zeroed before every call (init zero) */
};

static struct fatune_attention_args a;
static struct bare bare;

static void library_call(CUstream st)
{
	int rc = fatune_attention_forward(&a, st);

	if (rc) {
		fprintf(stderr, "fatune_attention_forward: %s\n", fatune_strerror(rc));
		exit(1);
	}
}

static void bare_call(CUstream st)
{
	if (bare.scratch_bytes)
		CK(cuMemsetD8Async(bare.scratch, 0, bare.scratch_bytes, st));
	CK(cuLaunchKernel(bare.main_fn, bare.p.grid[0], bare.p.grid[1], bare.p.grid[2], bare.p.threads, 1, 1, bare.smem,
			  st, bare.args, NULL));
	if (bare.combine_fn && !fatune_lib_parts[bare.p.part].combine_pdl[bare.p.entry])
		CK(cuLaunchKernel(bare.combine_fn, bare.p.combine_grid[0], bare.p.combine_grid[1], bare.p.combine_grid[2],
				  bare.p.combine_threads, 1, 1, 0, st, bare.args, NULL));
	if (bare.combine_fn && fatune_lib_parts[bare.p.part].combine_pdl[bare.p.entry]) {	/* as the worker launches a PDL=1 combine */
		CUlaunchAttribute attr;
		CUlaunchConfig cfg;

		memset(&attr, 0, sizeof(attr));
		attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
		attr.value.programmaticStreamSerializationAllowed = 1;
		memset(&cfg, 0, sizeof(cfg));
		cfg.gridDimX = bare.p.combine_grid[0];
		cfg.gridDimY = bare.p.combine_grid[1];
		cfg.gridDimZ = bare.p.combine_grid[2];
		cfg.blockDimX = bare.p.combine_threads;
		cfg.blockDimY = cfg.blockDimZ = 1;
		cfg.hStream = st;
		cfg.attrs = &attr;
		cfg.numAttrs = 1;
		CK(cuLaunchKernelEx(&cfg, bare.combine_fn, bare.args, NULL));
	}
}

/* The TMA descriptors of the entry (its part's tma: rows, cols, swizzle per
 * Q, K, V, O), rank 4 over (D, S, H, B), as the library and worker encode them. */
static void encode_tma(struct fatune_attn_params_v2 *prm, int part, int entry)
{
	struct fatune_tma_desc *out[4] = { &prm->tma_q, &prm->tma_k, &prm->tma_v, &prm->tma_o };
	const void *base[4] = { a.q, a.k, a.v, a.o };
	const long long *st[4] = { a.q_stride, a.k_stride, a.v_stride, a.o_stride };

	for (int t = 0; t < 4; t++) {
		const int *bx = fatune_lib_parts[part].tma[entry][t];
		const int kv = t == 1 || t == 2;
		cuuint64_t dims[4] = { (cuuint64_t)a.d, (cuuint64_t)(kv ? a.s_kv : a.s_q), (cuuint64_t)(kv ? a.h_kv : a.h),
				       (cuuint64_t)a.b };
		cuuint64_t strides[3] = { (cuuint64_t)st[t][2] * 2, (cuuint64_t)st[t][1] * 2, (cuuint64_t)st[t][0] * 2 };
		cuuint32_t box[4] = { (cuuint32_t)bx[1], (cuuint32_t)bx[0], 1, 1 }, elem[4] = { 1, 1, 1, 1 };
		CUtensorMapSwizzle sw = bx[2] == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : bx[2] == 64 ? CU_TENSOR_MAP_SWIZZLE_64B :
					bx[2] == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;

		if (!bx[0])
			continue;
		CK(cuTensorMapEncodeTiled((CUtensorMap *)(void *)out[t],
					  a.dtype == FATUNE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
					  4, (void *)base[t], dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
					  CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	}
}

static void make_bare(CUdeviceptr ws, int bshd)
{
	struct fatune_attn_params_v2 *prm = &bare.prm;
	const struct fatune_lib_part *part = &fatune_lib_parts[bare.p.part];
	const int c = part->cubin_of[bare.p.entry];
	size_t scratch = 0;
	CUmodule mod;

	CK(cuModuleLoadData(&mod, fatune_lib_cubins[c].data));
	CK(cuModuleGetFunction(&bare.main_fn, mod, part->kernel));
	if (bare.p.combine_threads)
		CK(cuModuleGetFunction(&bare.combine_fn, mod, part->combine_kernel));
	/* the opt-in exactly where the library raises it, once, outside the timed loops */
	if (part->smem_dynamic && fatune_lib_cubins[c].smem > part->smem_static_limit)
		CK(cuFuncSetAttribute(bare.main_fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fatune_lib_cubins[c].smem));
	bare.smem = part->smem_dynamic ? bare.p.smem_bytes : 0;
	memset(prm, 0, sizeof(*prm));
	prm->q = a.q; prm->k = a.k; prm->v = a.v; prm->o = a.o;
	prm->q_stride_b = a.q_stride[0]; prm->q_stride_h = a.q_stride[1]; prm->q_stride_s = a.q_stride[2];
	prm->k_stride_b = a.k_stride[0]; prm->k_stride_h = a.k_stride[1]; prm->k_stride_s = a.k_stride[2];
	prm->v_stride_b = a.v_stride[0]; prm->v_stride_h = a.v_stride[1]; prm->v_stride_s = a.v_stride[2];
	prm->o_stride_b = a.o_stride[0]; prm->o_stride_h = a.o_stride[1]; prm->o_stride_s = a.o_stride[2];
	prm->b = a.b; prm->h = a.h; prm->h_kv = a.h_kv; prm->s_q = a.s_q; prm->s_kv = a.s_kv; prm->d = a.d;
	prm->num_splits = bare.p.num_splits;
	prm->causal_offset = a.s_kv - a.s_q;
	prm->scale = (float)(1.0 / sqrt((double)a.d));
	prm->scale_log2 = (float)(1.4426950408889634 / sqrt((double)a.d));
	prm->layout = bshd ? FATUNE_LAYOUT_BSHD : FATUNE_LAYOUT_BHSD;
	prm->abi_version = 2;
	if (bare.p.num_splits > 1) {	/* the runtime's workspace layout: partial O, partial LSE, scratch */
		size_t rows = (size_t)bare.p.num_splits * a.b * a.h * a.s_q, lse = (rows * a.d * 4 + 255) & ~(size_t)255;

		scratch = lse + ((rows * 4 + 255) & ~(size_t)255);
		prm->o_partial = (float *)ws;
		prm->lse_partial = (float *)(ws + lse);
	}
	if (bare.p.workspace_bytes > scratch) {
		prm->workspace = (void *)(ws + scratch);
		prm->workspace_bytes = (long long)(bare.p.workspace_bytes - scratch);
		/* the worker zeroes before every call only with init zero (zero_once: before the first) */
		if (part->workspace_init == FATUNE_WORKSPACE_ZERO) {
			bare.scratch = ws + scratch;
			bare.scratch_bytes = bare.p.workspace_bytes - scratch;
		}
	}
	encode_tma(prm, bare.p.part, bare.p.entry);
	bare.args[0] = prm;
}

static int cmp_double(const void *x, const void *y)
{
	double d = *(const double *)x - *(const double *)y;

	return (d > 0) - (d < 0);
}

/* The worker's timing: median of samples, each one graph replay of GRAPH_CALLS calls / GRAPH_CALLS. */
static double graph_us(void (*call)(CUstream), CUstream st, CUevent e0, CUevent e1)
{
	double us[GRAPH_SAMPLES];
	CUgraph g;
	CUgraphExec x;
	float ms;

	CK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	for (int i = 0; i < GRAPH_CALLS; i++)
		call(st);
	CK(cuStreamEndCapture(st, &g));
	CK(cuGraphInstantiateWithFlags(&x, g, 0));
	for (int i = 0; i < 3; i++)	/* warm-up */
		CK(cuGraphLaunch(x, st));
	for (int i = 0; i < GRAPH_SAMPLES; i++) {
		CK(cuEventRecord(e0, st));
		CK(cuGraphLaunch(x, st));
		CK(cuEventRecord(e1, st));
		CK(cuEventSynchronize(e1));
		CK(cuEventElapsedTime(&ms, e0, e1));
		us[i] = ms * 1e3 / GRAPH_CALLS;
	}
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	qsort(us, GRAPH_SAMPLES, sizeof(us[0]), cmp_double);
	return us[GRAPH_SAMPLES / 2];
}

/* Host time per call of CALLS calls (best of the rounds) and their GPU time per call. */
static void stream_us(void (*call)(CUstream), CUstream st, CUevent e0, CUevent e1, double *host, double *gpu)
{
	*host = *gpu = 1e30;
	for (int round = 0; round < ROUNDS; round++) {
		double t0, t1;
		float ms;

		CK(cuStreamSynchronize(st));
		CK(cuEventRecord(e0, st));
		t0 = now_us();
		for (int i = 0; i < CALLS; i++)
			call(st);
		t1 = now_us() - t0;
		CK(cuEventRecord(e1, st));
		CK(cuEventSynchronize(e1));
		CK(cuEventElapsedTime(&ms, e0, e1));
		if (t1 / CALLS < *host)
			*host = t1 / CALLS;
		if (ms * 1e3 / CALLS < *gpu)
			*gpu = ms * 1e3 / CALLS;
	}
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	CUstream st;
	CUdeviceptr q, k, v, o, ws = 0;
	CUevent e0, e1;
	double lib_host, bare_host, lib_gpu_stream, bare_gpu_stream, lib_gpu, bare_gpu;
	int bshd, sz[9], rc;

	if (argc != 10)
		return fprintf(stderr, "usage: %s B H H_KV S_Q S_KV D CAUSAL BF16 BSHD\n", argv[0]), 2;
	for (int i = 0; i < 9; i++)
		sz[i] = atoi(argv[i + 1]);
	bshd = sz[8];
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	memset(&a, 0, sizeof(a));
	a.b = sz[0]; a.h = sz[1]; a.h_kv = sz[2]; a.s_q = sz[3]; a.s_kv = sz[4]; a.d = sz[5];
	a.causal = sz[6]; a.dtype = sz[7];
	for (int t = 0; t < 4; t++) {
		long long *s = t == 0 ? a.q_stride : t == 1 ? a.k_stride : t == 2 ? a.v_stride : a.o_stride;
		long long heads = t == 1 || t == 2 ? a.h_kv : a.h, rows = t == 1 || t == 2 ? a.s_kv : a.s_q;

		s[0] = heads * rows * a.d;
		s[1] = bshd ? a.d : rows * a.d;
		s[2] = bshd ? heads * a.d : a.d;
	}
	CK(cuMemAlloc(&q, (size_t)a.b * a.h * a.s_q * a.d * 2));
	CK(cuMemAlloc(&o, (size_t)a.b * a.h * a.s_q * a.d * 2));
	CK(cuMemAlloc(&k, (size_t)a.b * a.h_kv * a.s_kv * a.d * 2));
	CK(cuMemAlloc(&v, (size_t)a.b * a.h_kv * a.s_kv * a.d * 2));
	CK(cuMemsetD8(q, 0, (size_t)a.b * a.h * a.s_q * a.d * 2));
	CK(cuMemsetD8(k, 0, (size_t)a.b * a.h_kv * a.s_kv * a.d * 2));
	CK(cuMemsetD8(v, 0, (size_t)a.b * a.h_kv * a.s_kv * a.d * 2));
	a.q = (void *)q; a.k = (void *)k; a.v = (void *)v; a.o = (void *)o;
	if ((rc = fatune_attention_plan(&a, &bare.p)))
		return fprintf(stderr, "plan: %s\n", fatune_strerror(rc)), 1;
	if (bare.p.workspace_bytes)
		CK(cuMemAlloc(&ws, bare.p.workspace_bytes));
	a.workspace = (void *)ws;
	a.workspace_bytes = bare.p.workspace_bytes;
	make_bare(ws, bshd);
	/* the first call loads the module and zeroes a zero_once scratch; the
	 * workspace is the library's alone from now on */
	library_call(st);
	a.flags |= FATUNE_WORKSPACE_KEPT;
	library_call(st);
	bare_call(st);
	CK(cuStreamSynchronize(st));
	CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
	stream_us(library_call, st, e0, e1, &lib_host, &lib_gpu_stream);
	stream_us(bare_call, st, e0, e1, &bare_host, &bare_gpu_stream);
	lib_gpu = graph_us(library_call, st, e0, e1);
	bare_gpu = graph_us(bare_call, st, e0, e1);
	CK(cuCtxSynchronize());
	printf("{\"library_us\": %.3f, \"bare_us\": %.3f, \"overhead_us\": %.3f, \"gpu_us\": %.3f, \"bare_gpu_us\": %.3f, "
	       "\"gpu_stream_us\": %.3f, \"bare_gpu_stream_us\": %.3f, \"combine\": %d, \"pdl\": %d, \"memset\": %d}\n",
	       lib_host, bare_host, lib_host - bare_host, lib_gpu, bare_gpu, lib_gpu_stream, bare_gpu_stream,
	       bare.p.combine_threads > 0, bare.p.combine_threads > 0 && fatune_lib_parts[bare.p.part].combine_pdl[bare.p.entry],
	       bare.scratch_bytes > 0);
	return 0;
}
