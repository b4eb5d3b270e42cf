/* fatune_attention.h - the launch API of a library `fatune export --library DIR` made (copied by the exporter).
 *
 * One call runs the attention forward pass O = softmax(Q K^T * scale) V with
 * the config fatune tuned for the shape, from CUBINs embedded in the library
 * (no compiler at run time). Q, O: [B, H, S_q, D]; K, V: [B, H_kv, S_kv, D],
 * as contiguous [B,H,S,D] ("bhsd") or [B,S,H,D] ("bshd") tensors given by
 * their strides in elements (D itself contiguous); causal masks are
 * bottom-right aligned (query i sees keys <= i + S_kv - S_q).
 *
 * One library holds the configs fatune tuned on every arch and in every
 * space (template family) it was exported with: one table per (arch, space),
 * its "part". A call chooses for the compute capability of the current
 * context's device (asked once per context): the parts whose CUBINs run there
 * (the same compute capability, or for targets without the `a` suffix the
 * same major and a lower minor; sm_90a CUBINs only on 9.0), of the nearest
 * such arch; none: FATUNE_E_ARCH.
 *
 * The choice is deterministic: the same library, device and arguments pick
 * the same config in every process and on every rank. In each part only
 * configs fatune's space accepts for the shape (fatune_pN_pick in
 * fatune_table_N.h, generated from the space's constraints), the nearest
 * tuned one; across parts the nearer (the same measure), then the faster
 * tuned time, then the earlier part (ordered by arch, then space name).
 * Shapes that were not tuned get that nearest valid entry, or
 * FATUNE_E_UNTUNED when the caller sets FATUNE_STRICT.
 *
 * The driver (libcuda.so.1) is opened on the first call; CUBINs are loaded
 * once per CUDA context and kernel (the caller's current context), under a
 * mutex; a call allocates nothing: split-KV partials and the kernel's
 * scratch live in the caller's workspace (fatune_attention_workspace_size).
 * A call issues what fatune's worker issued when it timed the config: the
 * main kernel, the combine kernel when the config has one (with
 * programmatic dependent launch where the space's launch.combine_pdl is
 * non-zero: PDL 1 or 2), and a memset of the scratch only where the space's
 * workspace init asks for it; a thread
 * calling again with the same arguments and context reuses the previous
 * call's parameter block (TMA descriptors included) and functions.
 * All functions are thread-safe.
 */
#ifndef FATUNE_ATTENTION_H
#define FATUNE_ATTENTION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fatune_status {
	FATUNE_OK = 0,
	FATUNE_E_ARGS = 1,	/* a NULL pointer, a size < 1, H not a multiple of H_kv */
	FATUNE_E_DTYPE = 2,	/* dtype neither FATUNE_FP16 nor FATUNE_BF16 */
	FATUNE_E_HEAD_DIM = 3,	/* no config of this head dim, dtype and causal flag */
	FATUNE_E_LAYOUT = 4,	/* strides of neither contiguous bhsd nor bshd tensors */
	FATUNE_E_UNTUNED = 5,	/* FATUNE_STRICT and the shape was not tuned */
	FATUNE_E_NO_CONFIG = 6,	/* no tuned config is valid for this shape */
	FATUNE_E_WORKSPACE = 7,	/* workspace NULL or smaller than the size asked for */
	FATUNE_E_DRIVER = 8,	/* libcuda.so.1 cannot be opened, or no current context */
	FATUNE_E_ARCH = 9,	/* no CUBIN of the library runs on the device (or args.cc is not the device's) */
	FATUNE_E_CUDA = 10,	/* a driver call failed (module load, launch) */
	FATUNE_E_RECORD = 11,	/* the untuned-shape file cannot be written */
};

enum fatune_dtype { FATUNE_FP16 = 0, FATUNE_BF16 = 1 };

#define FATUNE_STRICT 1u	/* flags: refuse shapes that were not tuned */
/* flags: the workspace is the one the previous call with the same arguments
 * (but pointers) used, on this stream, and nothing else has written it since
 * (not even a call of another shape: its split-KV partials may lie where this
 * shape's scratch is). Configs whose scratch is zeroed once (workspace init
 * zero_once: the kernels leave it zero) then skip the cuMemsetD8Async that a
 * call otherwise issues before its launch, as fatune's worker zeroes it only
 * before the first call. Set it from the second call on a workspace kept for
 * the library (a serving loop's); never on memory that is fresh or shared.
 * The Python package keeps one workspace per device and stream and sets it
 * exactly then. */
#define FATUNE_WORKSPACE_KEPT 2u

struct fatune_attention_args {
	const void *q, *k, *v;		/* device pointers */
	void *o;			/* device pointer, same dtype and strides as q */
	long long q_stride[3];		/* elements between batches, heads, rows */
	long long k_stride[3];
	long long v_stride[3];
	long long o_stride[3];
	int b, h, h_kv, s_q, s_kv, d;	/* batch, query heads, KV heads, query rows, keys, head dim */
	int dtype;			/* enum fatune_dtype */
	int causal;			/* 0 or 1 */
	unsigned flags;			/* FATUNE_STRICT, FATUNE_WORKSPACE_KEPT */
	void *workspace;		/* device memory of workspace_bytes, NULL when 0 are needed */
	size_t workspace_bytes;
	int cc;				/* 0: the current context's device; else a compute capability
					 * (major*10+minor: 90) to plan for without a GPU (plan and
					 * workspace_size; forward refuses one that is not the device's) */
};

/* What a call would launch (fatune_attention_plan). */
struct fatune_attention_plan {
	int entry;			/* index in its part's table (fatune_pN_table) */
	int tuned;			/* 1: the entry was tuned for exactly this shape */
	int num_splits;			/* KV splits */
	unsigned threads, grid[3];	/* the main kernel */
	unsigned smem_bytes;		/* its dynamic shared memory */
	unsigned combine_threads, combine_grid[3];	/* 0 threads: no combine launch */
	size_t workspace_bytes;		/* what the call needs (fatune_attention_workspace_size) */
	char config[256];		/* "NAME=V,..." */
	int part;			/* the table it came from (fatune_lib_parts) */
	int cc;				/* the compute capability chosen for */
	char arch[16];			/* what its CUBIN was compiled for: "sm_90a" */
	char space[64];			/* the space (template family) it came from */
};

/* Runs the forward pass on stream (a CUstream; NULL: the default stream) in
 * the current CUDA context. FATUNE_OK, or the first problem found; nothing
 * is launched unless FATUNE_OK. */
int fatune_attention_forward(const struct fatune_attention_args *a, void *stream);

/* Bytes of workspace a call with these arguments needs (pointers and the
 * workspace fields are not looked at) into *bytes; the same checks and
 * status as fatune_attention_forward up to the choice of config. */
int fatune_attention_workspace_size(const struct fatune_attention_args *a, size_t *bytes);

/* The config and launch a call would use, without a GPU: for a->cc, else
 * the current context's device, else (no driver or context) the library's
 * compute capability when it holds one only (FATUNE_E_DRIVER when several). */
int fatune_attention_plan(const struct fatune_attention_args *a, struct fatune_attention_plan *out);

/* A one-line description of a status. */
const char *fatune_strerror(int status);

/* Opt-in: from now on, every shape called without a tuned entry (whether run
 * on the nearest one or refused) is written to path as a campaign file that
 * `fatune search --campaign path` takes (rewritten as a whole when a new
 * shape comes; at most 256 shapes). NULL stops. Also switched on by the
 * environment variable FATUNE_RECORD_UNTUNED=path at the first call. */
int fatune_attention_record_untuned(const char *path);

#ifdef __cplusplus
}
#endif

#endif
