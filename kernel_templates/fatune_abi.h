/* fatune_abi.h - the kernel ABI between fatune and an attention template.
 *
 * Included by the C tuner and by CUDA templates alike, so it is plain C.
 * Bring your own kernel: implement these entry points, describe your parameters
 * in a search space, and fatune compiles, verifies and times it.
 *
 *   extern "C" __global__ void <kernel>(struct fatune_attn_params p);
 *   extern "C" __global__ void <combine_kernel>(struct fatune_attn_params p);  (optional)
 *
 * Tensors are contiguous [B, H, S, D] (row-major, D fastest) in the dtype chosen
 * at compile time. The template receives as -D macros: every compile-time
 * parameter of its space (e.g. -DTILE_M=64), HEAD_DIM (= D), IS_CAUSAL (0/1) and
 * FATUNE_BF16 (0: fp16, 1: bf16). Launch-time parameters arrive in the struct.
 *
 * Split-KV (num_splits > 1): the main kernel writes, per split, an unnormalised-
 * free partial output (already divided by its own row sum) to o_partial
 * [num_splits, B, H, S, D] fp32 and the row's log-sum-exp (natural log, of the
 * scaled scores) to lse_partial [num_splits, B, H, S]; the combine kernel then
 * merges them into o. With num_splits == 1 the main kernel writes o directly and
 * the combine kernel is not launched.
 *
 * Causal masking is top-left aligned: query i attends to keys 0..i.
 */
#ifndef FATUNE_ABI_H
#define FATUNE_ABI_H

#define FATUNE_ABI_VERSION 1

struct fatune_attn_params {
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

#endif
