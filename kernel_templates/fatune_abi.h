/* fatune_abi.h - the kernel ABI between fatune and an attention template.
 *
 * Included by the C tuner and by CUDA templates alike, so it is plain C (the
 * alignment attribute is understood by gcc, clang, nvcc and NVRTC).
 * Bring your own kernel: implement these entry points, describe your parameters
 * in a search space, and fatune compiles, verifies and times it.
 *
 *   extern "C" __global__ void <kernel>(const __grid_constant__ struct fatune_attn_params p);
 *   extern "C" __global__ void <combine_kernel>(const __grid_constant__ struct fatune_attn_params p);
 *
 * (the combine kernel is optional; `__grid_constant__` is needed only to take
 * the address of a TMA descriptor in p, and is harmless otherwise)
 *
 * Two versions exist. A space says which one its template speaks
 * (`template: {abi: 2}`; 1 when absent) and fatune compiles the template with
 * -DFATUNE_ABI=<that>, so `struct fatune_attn_params` below is that version's
 * struct. After compiling, fatune checks that the entry points exist and take
 * exactly sizeof(that struct) bytes of parameters (a template built for the
 * other version is `compile_failed` with both sizes named).
 *
 * ---- ABI v2 (FATUNE_ABI_VERSION) -------------------------------------------
 * Queries and keys/values have their own length and head count:
 *   Q, O  [B, H, S_q, D]   (logical index order; the layout is in the strides)
 *   K, V  [B, H_kv, S_kv, D]   with H % H_kv == 0: query head h reads KV head
 *                              h / (H / H_kv) (grouped-query attention)
 * in the dtype chosen at compile time. D is always contiguous; every other
 * dimension has a stride in elements (q_stride_b/_h/_s, ...), so [B,H,S,D]
 * ("bhsd") and [B,S,H,D] ("bshd") are both served; `layout` says which one
 * fatune used. Strides are multiples of 8 elements (16 bytes), as TMA needs.
 *
 * Causal masking is bottom-right aligned (FlashAttention >= 2.1, serving
 * engines): query i attends to keys 0 .. i + causal_offset with
 * causal_offset = S_kv - S_q, so the last query sees every key. With S_q ==
 * S_kv this is the usual top-left mask. A query row that sees no key at all
 * (S_q > S_kv) must come out as 0, never NaN.
 *
 * Split-KV (num_splits > 1, a launch-time parameter): the main kernel writes,
 * per split, its partial output already divided by its own row sum to
 * o_partial [num_splits, B, H, S_q, D] fp32 (contiguous) and the row's
 * log-sum-exp (natural log, of the scaled scores; -inf for a split with no
 * key) to lse_partial [num_splits, B, H, S_q]; the combine kernel merges them
 * into O. With num_splits == 1 the main kernel writes O directly and the
 * combine kernel is not launched; nor is it for a candidate whose
 * launch.combine_threads is 0: its main kernel merges the splits itself
 * (o_partial and lse_partial are still allocated for it).
 *
 * Workspace: `workspace` points at workspace_bytes bytes of device memory
 * whose size the space's `workspace.bytes` formula gives (NULL and 0 when it
 * gives 0). The space's `workspace.init` says what it holds at each launch:
 * `zero` (fatune zeroes it before every call, inside the timed region, so its
 * cost is counted), `poison` (filled with 0xff bytes - NaN in fp16, bf16 and
 * fp32 - once before the verified call: the kernel must write before it
 * reads), `none`, or `zero_once` (zeroed once before a candidate's first call;
 * each call must leave it zero again, which fatune checks after the verified
 * and after the timed calls: e.g. arrival counters that the last arriving
 * block sets back to 0, with no memset per call).
 *
 * TMA: tma_q, tma_k, tma_v and tma_o are CUtensorMap descriptors (128 bytes,
 * 64-byte aligned) that fatune encodes with cuTensorMapEncodeTiled when the
 * template's family asks for them (zeros otherwise). Each is rank 4 over the
 * tensor as (D, S, H, B), innermost first, with the strides above, a box of
 * (box_d, box_rows, 1, 1) elements chosen by the family for the candidate,
 * 16-bit elements, interleave none, out-of-bound elements filled with zeros
 * (so rows past S read as 0), and the swizzle the family asks for. Use it as
 * `cp.async.bulk.tensor.4d... [smem], [&p.tma_k, {d0, row, head, batch}], [mbar]`.
 *
 * ---- ABI v1 ---------------------------------------------------------------
 * Self-attention only: Q, K, V, O contiguous [B, H, S, D], S queries = S keys,
 * H query heads = H KV heads, top-left causal mask, no workspace, no TMA.
 * Still compiled and run as before; a shape it cannot express (S_q != S_kv,
 * H_kv != H, layout bshd) is rejected before compiling with the reason.
 *
 * Every template also gets -DHEAD_DIM (= D), -DIS_CAUSAL (0/1), -DFATUNE_BF16
 * (0: fp16, 1: bf16), -DFATUNE_SMEM_BYTES (the space's smem_bytes formula) and
 * one -D per compile-time parameter of its space.
 */
#ifndef FATUNE_ABI_H
#define FATUNE_ABI_H

#define FATUNE_ABI_VERSION 2	/* the newest version this header defines */

#define FATUNE_LAYOUT_BHSD 0	/* [B, H, S, D]: each head's rows contiguous */
#define FATUNE_LAYOUT_BSHD 1	/* [B, S, H, D]: each position's heads contiguous */

#define FATUNE_WORKSPACE_ZERO 0
#define FATUNE_WORKSPACE_POISON 1
#define FATUNE_WORKSPACE_NONE 2
#define FATUNE_WORKSPACE_ZERO_ONCE 3

/* A CUtensorMap: opaque to the template, built by the driver on the host. */
struct __attribute__((aligned(64))) fatune_tma_desc {
	unsigned long long opaque[16];
};

struct fatune_attn_params_v2 {
	/* first, so their 64-byte alignment costs no padding */
	struct fatune_tma_desc tma_q;	/* zeros unless the family asks for TMA */
	struct fatune_tma_desc tma_k;
	struct fatune_tma_desc tma_v;
	struct fatune_tma_desc tma_o;
	const void *q;			/* [B, H, S_q, D] by the strides below */
	const void *k;			/* [B, H_kv, S_kv, D] */
	const void *v;			/* [B, H_kv, S_kv, D] */
	void *o;			/* [B, H, S_q, D], same dtype and strides as q */
	float *o_partial;		/* [num_splits, B, H, S_q, D] fp32; NULL when num_splits == 1 */
	float *lse_partial;		/* [num_splits, B, H, S_q] fp32; NULL when num_splits == 1 */
	void *workspace;		/* workspace_bytes of scratch; NULL when 0 */
	long long workspace_bytes;
	long long q_stride_b, q_stride_h, q_stride_s;	/* elements; D is contiguous */
	long long k_stride_b, k_stride_h, k_stride_s;
	long long v_stride_b, v_stride_h, v_stride_s;
	long long o_stride_b, o_stride_h, o_stride_s;
	int b;				/* batch */
	int h;				/* query heads */
	int h_kv;			/* key/value heads, divides h */
	int s_q;			/* query rows */
	int s_kv;			/* keys */
	int d;				/* head dim (= HEAD_DIM) */
	int num_splits;			/* >= 1: how many parts the KV sequence is split into */
	int causal_offset;		/* s_kv - s_q (may be negative) */
	float scale;			/* softmax scale, 1/sqrt(D) */
	float scale_log2;		/* scale * log2(e), for exp2-based softmax */
	int layout;			/* FATUNE_LAYOUT_*: informational, the strides rule */
	int abi_version;		/* 2 */
};

struct fatune_attn_params_v1 {
	const void *q;		/* [B, H, S, D] */
	const void *k;		/* [B, H, S, D] */
	const void *v;		/* [B, H, S, D] */
	void *o;		/* [B, H, S, D], same dtype */
	float *o_partial;	/* [num_splits, B, H, S, D] fp32; NULL when num_splits == 1 */
	float *lse_partial;	/* [num_splits, B, H, S] fp32; NULL when num_splits == 1 */
	int b;			/* batch */
	int h;			/* heads */
	int s;			/* sequence length (queries = keys) */
	int num_splits;		/* >= 1: how many parts the KV sequence is split into */
	float scale;		/* softmax scale, 1/sqrt(D) */
	float scale_log2;	/* scale * log2(e), for exp2-based softmax */
};

/* The struct a template sees as `struct fatune_attn_params`: the version its
 * space declares (fatune passes -DFATUNE_ABI); v1 when compiled without it,
 * which is what templates written before v2 expect. */
#if defined(FATUNE_ABI) && FATUNE_ABI == 2
#define fatune_attn_params fatune_attn_params_v2
#elif !defined(FATUNE_ABI) || FATUNE_ABI == 1
#define fatune_attn_params fatune_attn_params_v1
#else
#error "fatune_abi.h: FATUNE_ABI must be 1 or 2"
#endif

#endif
