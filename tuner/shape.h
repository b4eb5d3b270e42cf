/* shape.h - the attention problem a search is for: B x H x S x D, dtype, causal.
 *
 * Text form "BxHxSxD" (batch, heads, sequence length, head dim), e.g.
 * "1x8x512x64". Q, K, V and O are contiguous [B, H, S, D] tensors (kernel ABI in
 * kernel_templates/fatune_abi.h).
 */
#ifndef FT_SHAPE_H
#define FT_SHAPE_H

#include "err.h"

enum ft_dtype { FT_FP16 = 0, FT_BF16 = 1 };

struct ft_shape {
	int b, h, s, d;		/* batch, heads, sequence length, head dim; all >= 1 */
	int causal;		/* 0 or 1 */
	enum ft_dtype dtype;
};

/* Parses "BxHxSxD" into the size fields of *out (leaves causal and dtype).
 * Bad text -> -1, FT_EINPUT, message naming the text and the expected form. */
int ft_shape_parse(const char *text, struct ft_shape *out, struct ft_err *err);

/* "1x8x512x64" into buf (>= 64 bytes); returns buf. */
char *ft_shape_format(const struct ft_shape *s, char *buf, size_t size);

/* "fp16" / "bf16" (parse also takes float16, half, bfloat16); -1 with
 * FT_EINPUT for anything else. */
const char *ft_dtype_name(enum ft_dtype t);
int ft_dtype_parse(const char *text, enum ft_dtype *out, struct ft_err *err);

/* Bytes per element of the dtype (2 for both). */
int ft_dtype_size(enum ft_dtype t);

#endif
