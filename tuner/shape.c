/* shape.c - parsing and printing attention shapes (see shape.h). */
#include "shape.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds keep B*H*S*D inside what one search can allocate and index with
 * 32-bit ints on the device: 2^31 elements. */
#define MAX_ELEMS 2147483647LL

int ft_shape_parse(const char *text, struct ft_shape *out, struct ft_err *err)
{
	long v[4];
	const char *p = text;
	char *end;

	for (int i = 0; i < 4; i++) {
		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		v[i] = strtol(p, &end, 10);
		if (errno || v[i] < 1 || v[i] > 1000000)
			goto bad;
		p = end;
		if (i < 3) {
			if (*p != 'x' && *p != 'X')
				goto bad;
			p++;
		}
	}
	if (*p)
		goto bad;
	/* each factor is <= 1e6, so each partial product is checked before it can overflow */
	if ((long long)v[0] * v[1] > MAX_ELEMS || (long long)v[0] * v[1] * v[2] > MAX_ELEMS ||
	    (long long)v[0] * v[1] * v[2] * v[3] > MAX_ELEMS)
		return ft_error(err, FT_EINPUT,
				"shape '%s' has more than 2^31 elements per tensor: use a smaller B, H or S",
				text);
	out->b = (int)v[0];
	out->h = (int)v[1];
	out->s = (int)v[2];
	out->d = (int)v[3];
	return 0;
bad:
	return ft_error(err, FT_EINPUT,
			"bad shape '%s': expected BxHxSxD with positive integers, e.g. 1x8x512x64",
			text);
}

char *ft_shape_format(const struct ft_shape *s, char *buf, size_t size)
{
	snprintf(buf, size, "%dx%dx%dx%d", s->b, s->h, s->s, s->d);
	return buf;
}

const char *ft_dtype_name(enum ft_dtype t)
{
	return t == FT_BF16 ? "bf16" : "fp16";
}

int ft_dtype_parse(const char *text, enum ft_dtype *out, struct ft_err *err)
{
	if (!strcmp(text, "fp16") || !strcmp(text, "float16") || !strcmp(text, "half")) {
		*out = FT_FP16;
		return 0;
	}
	if (!strcmp(text, "bf16") || !strcmp(text, "bfloat16")) {
		*out = FT_BF16;
		return 0;
	}
	return ft_error(err, FT_EINPUT, "bad dtype '%s': use fp16 or bf16", text);
}

int ft_dtype_size(enum ft_dtype t)
{
	(void)t;
	return 2;
}
