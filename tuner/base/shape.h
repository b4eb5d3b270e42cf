/* shape.h - the attention problem a search is for: sizes, KV cache, heads, layout, dtype, causal.
 *
 * Queries Q [B, H, S, D] attend to keys/values K, V [B, H_kv, S_kv, D]: S
 * query rows over S_kv keys (decode: S of 1 to 16 over a long KV cache;
 * chunked prefill: S < S_kv), H query heads over H_kv KV heads (grouped-query
 * attention: H a multiple of H_kv; query head h reads KV head h / (H / H_kv)).
 * Self-attention is S_kv = S and H_kv = H. The layout says how the tensors
 * sit in memory: bhsd ([B, H, S, D], each head's rows contiguous) or bshd
 * ([B, S, H, D], each position's heads contiguous). Causal masking with
 * S != S_kv is bottom-right aligned (FlashAttention >= 2.1, serving engines):
 * query i sees keys 0 .. i + S_kv - S, so the last query sees every key.
 *
 * Text form (what --shape takes, and what fatune prints and stores):
 *
 *     BxHxSxD[,kv_heads=N][,kv_len=N][,layout=bhsd|bshd]
 *
 * e.g. "1x8x512x64" or "16x32x1x128,kv_heads=8,kv_len=32768". The canonical
 * form (ft_shape_format) omits what equals self-attention in bhsd and writes
 * the rest in the order above, so equal shapes give equal text.
 */
#ifndef FT_SHAPE_H
#define FT_SHAPE_H

#include <stddef.h>

#include "base/err.h"

enum ft_dtype { FT_FP16 = 0, FT_BF16 = 1 };

enum ft_layout { FT_LAYOUT_BHSD = 0, FT_LAYOUT_BSHD = 1 };	/* = FATUNE_LAYOUT_* */

/* Longest canonical text plus its NUL, with room to spare. */
#define FT_SHAPE_TEXT_MAX 96

struct ft_shape {
	int b, h, s, d;		/* batch, query heads, query rows, head dim; all >= 1 */
	int causal;		/* 0 or 1 */
	enum ft_dtype dtype;
	int s_kv;		/* keys (KV length), >= 1; = s for self-attention */
	int h_kv;		/* key/value heads, >= 1, divides h; = h without GQA */
	enum ft_layout layout;
};

/* Parses the text form into the size and layout fields of *out (leaves causal
 * and dtype). Bad text -> -1, FT_EINPUT, a message naming the text and the
 * expected form; also H not a multiple of kv_heads, or a tensor of more than
 * 2^31 elements. */
int ft_shape_parse(const char *text, struct ft_shape *out, struct ft_err *err);

/* A set of shapes written as one: any number in the text may be a list
 * "A:B:C" or a doubling range "A..B" (A, 2A, 4A, ... up to B), e.g.
 * "1x8x256..8192x64" (S = 256 to 8192) or "16x32x1x128,kv_heads=8,kv_len=1024..32768";
 * the set is the cartesian product, in the order written (leftmost slowest).
 * Fills out[0..*n) (at most max, else FT_EINPUT), each parsed as
 * ft_shape_parse does (causal and dtype left as *proto has them). */
int ft_shape_expand(const char *text, const struct ft_shape *proto, struct ft_shape *out, int max,
		    int *n, struct ft_err *err);

/* Overrides the KV length, KV heads or layout of a parsed shape (0 or NULL:
 * keep), as --kv-len, --kv-heads and --layout do, and re-checks it. A value
 * the shape's text set already (kv_len != S, kv_heads != H, layout bshd) that
 * the option contradicts is FT_EINPUT: the user gave it twice. */
int ft_shape_set_kv(struct ft_shape *sh, long long kv_len, long long kv_heads, const char *layout,
		    struct ft_err *err);

/* Fills s_kv and h_kv with s and h where they are 0 (a shape written with
 * only B, H, S, D: code and tests that build one field by field). */
void ft_shape_norm(struct ft_shape *sh);

/* Checks the sizes (>= 1, H % H_kv, element counts); FT_EINPUT naming the
 * shape when bad. */
int ft_shape_check(const struct ft_shape *sh, struct ft_err *err);

/* 1 for self-attention in bhsd (what ABI v1 templates can run). */
int ft_shape_is_plain(const struct ft_shape *sh);

/* The canonical text form into buf (FT_SHAPE_TEXT_MAX bytes are enough);
 * returns buf. A short buffer is cut, never overrun. */
char *ft_shape_format(const struct ft_shape *s, char *buf, size_t size);

/* Floating-point operations of one forward pass: 4 * B * H * S * S_kv * D,
 * counting only the unmasked part when causal. */
double ft_shape_flops(const struct ft_shape *s);

/* "bhsd" / "bshd"; parse returns -1 with FT_EINPUT for anything else. */
const char *ft_layout_name(enum ft_layout l);
int ft_layout_parse(const char *text, enum ft_layout *out, struct ft_err *err);

/* "fp16" / "bf16" (parse also takes float16, half, bfloat16); -1 with
 * FT_EINPUT for anything else. */
const char *ft_dtype_name(enum ft_dtype t);
int ft_dtype_parse(const char *text, enum ft_dtype *out, struct ft_err *err);

/* Bytes per element of the dtype (2 for both). */
int ft_dtype_size(enum ft_dtype t);

#endif
