/* shape.c - parsing, checking and printing attention shapes (see shape.h). */
#include "base/shape.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds keep every tensor inside what one search can allocate and index
 * with 32-bit ints on the device: 2^31 elements. Each size is at most 10^6, so
 * partial products are checked before they can overflow. */
#define MAX_ELEMS 2147483647LL
#define MAX_DIM 1000000L

/* Values one list or range of a shape set may take (a range 1..2^20 doubles 21 times). */
#define FT_SHAPE_SET_MAX_VALUES 64

#define FORM "BxHxSxD[,kv_heads=N][,kv_len=N][,layout=bhsd|bshd], e.g. 1x8x512x64 or 16x32x1x128,kv_heads=8,kv_len=32768"

/* A decimal number in 1..MAX_DIM at *p; advances *p. */
static int number(const char **p, long *out)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno || *out < 1 || *out > MAX_DIM)
		return -1;
	*p = end;
	return 0;
}

/* Elements of a [a, b, c, d] tensor within MAX_ELEMS, without overflow. */
static int fits(long long a, long long b, long long c, long long d)
{
	return a * b <= MAX_ELEMS && a * b * c <= MAX_ELEMS && a * b * c * d <= MAX_ELEMS;
}

int ft_shape_check(const struct ft_shape *sh, struct ft_err *err)
{
	char text[FT_SHAPE_TEXT_MAX];

	if (sh->b < 1 || sh->h < 1 || sh->s < 1 || sh->d < 1 || sh->s_kv < 1 || sh->h_kv < 1 ||
	    sh->b > MAX_DIM || sh->h > MAX_DIM || sh->s > MAX_DIM || sh->d > MAX_DIM ||
	    sh->s_kv > MAX_DIM || sh->h_kv > MAX_DIM)
		return ft_error(err, FT_EINPUT, "shape '%s': every size must be 1 to %ld",
				ft_shape_format(sh, text, sizeof(text)), MAX_DIM);
	if (sh->h % sh->h_kv)
		return ft_error(err, FT_EINPUT,
				"shape '%s': %d query heads is not a multiple of %d KV heads: each KV head serves H / kv_heads query heads",
				ft_shape_format(sh, text, sizeof(text)), sh->h, sh->h_kv);
	if (!fits(sh->b, sh->h, sh->s, sh->d) || !fits(sh->b, sh->h_kv, sh->s_kv, sh->d))
		return ft_error(err, FT_EINPUT,
				"shape '%s' has more than 2^31 elements per tensor: use a smaller B, H or S",
				ft_shape_format(sh, text, sizeof(text)));
	return 0;
}

int ft_shape_parse(const char *text, struct ft_shape *out, struct ft_err *err)
{
	struct ft_shape sh = *out;
	long v[4], kv_len = 0, kv_heads = 0;
	const char *p = text;
	enum ft_layout layout = FT_LAYOUT_BHSD;
	int seen[3] = { 0, 0, 0 };

	for (int i = 0; i < 4; i++) {
		if (number(&p, &v[i]))
			goto bad;
		if (i < 3) {
			if (*p != 'x' && *p != 'X')
				goto bad;
			p++;
		}
	}
	/* the options, each at most once, in any order */
	while (*p == ',') {
		static const char *const keys[] = { "kv_heads=", "kv_len=", "layout=" };
		int k;

		p++;
		for (k = 0; k < 3; k++)
			if (!strncmp(p, keys[k], strlen(keys[k])))
				break;
		if (k == 3 || seen[k])
			goto bad;
		seen[k] = 1;
		p += strlen(keys[k]);
		if (k == 0 && number(&p, &kv_heads))
			goto bad;
		if (k == 1 && number(&p, &kv_len))
			goto bad;
		if (k == 2) {
			size_t n = strcspn(p, ",");
			if (n == 4 && !strncmp(p, "bhsd", 4))
				layout = FT_LAYOUT_BHSD;
			else if (n == 4 && !strncmp(p, "bshd", 4))
				layout = FT_LAYOUT_BSHD;
			else
				goto bad;
			p += n;
		}
	}
	if (*p)
		goto bad;
	sh.b = (int)v[0];
	sh.h = (int)v[1];
	sh.s = (int)v[2];
	sh.d = (int)v[3];
	sh.s_kv = kv_len ? (int)kv_len : sh.s;
	sh.h_kv = kv_heads ? (int)kv_heads : sh.h;
	sh.layout = layout;
	if (ft_shape_check(&sh, err))
		return -1;
	*out = sh;
	return 0;
bad:
	return ft_error(err, FT_EINPUT, "bad shape '%s': expected " FORM, text);
}

int ft_shape_set_kv(struct ft_shape *sh, long long kv_len, long long kv_heads, const char *layout,
		    struct ft_err *err)
{
	struct ft_shape t = *sh;
	char text[128];
	const char *clash = NULL, *opt = NULL;

	/* the shape's own ",kv_len=" / ",kv_heads=" / ",layout=" and the option
	 * both given, and different: which one was meant? */
	if (kv_len && sh->s_kv != sh->s && kv_len != sh->s_kv)
		clash = "kv_len", opt = "kv-len";
	else if (kv_heads && sh->h_kv != sh->h && kv_heads != sh->h_kv)
		clash = "kv_heads", opt = "kv-heads";
	else if (layout && sh->layout != FT_LAYOUT_BHSD && strcmp(layout, ft_layout_name(sh->layout)))
		clash = "layout", opt = "layout";
	if (clash)
		return ft_error(err, FT_EINPUT,
				"shape '%s' sets %s and the option --%s says otherwise: give it once",
				ft_shape_format(sh, text, sizeof(text)), clash, opt);
	if (kv_len)
		t.s_kv = kv_len > MAX_DIM ? -1 : (int)kv_len;
	if (kv_heads)
		t.h_kv = kv_heads > MAX_DIM ? -1 : (int)kv_heads;
	if (layout && ft_layout_parse(layout, &t.layout, err))
		return -1;
	if (ft_shape_check(&t, err))
		return -1;
	*sh = t;
	return 0;
}

void ft_shape_norm(struct ft_shape *sh)
{
	if (!sh->s_kv)
		sh->s_kv = sh->s;
	if (!sh->h_kv)
		sh->h_kv = sh->h;
}

int ft_shape_is_plain(const struct ft_shape *sh)
{
	return sh->s_kv == sh->s && sh->h_kv == sh->h && sh->layout == FT_LAYOUT_BHSD;
}

char *ft_shape_format(const struct ft_shape *s, char *buf, size_t size)
{
	size_t n;

	if (!size)
		return buf;
	n = (size_t)snprintf(buf, size, "%dx%dx%dx%d", s->b, s->h, s->s, s->d);
	if (n < size && s->h_kv && s->h_kv != s->h)
		n += (size_t)snprintf(buf + n, size - n, ",kv_heads=%d", s->h_kv);
	if (n < size && s->s_kv && s->s_kv != s->s)
		n += (size_t)snprintf(buf + n, size - n, ",kv_len=%d", s->s_kv);
	if (n < size && s->layout != FT_LAYOUT_BHSD)
		snprintf(buf + n, size - n, ",layout=%s", ft_layout_name(s->layout));
	return buf;
}

double ft_shape_flops(const struct ft_shape *s)
{
	double pairs = 0;
	long long skv = s->s_kv ? s->s_kv : s->s, off = skv - s->s;

	if (!s->causal) {
		pairs = (double)s->s * (double)skv;
	} else {
		/* query i sees min(S_kv, max(0, i + off + 1)) keys */
		for (long long i = 0; i < s->s; i++) {
			long long n = i + off + 1;
			pairs += (double)(n < 0 ? 0 : n > skv ? skv : n);
		}
	}
	return 4.0 * s->b * s->h * pairs * s->d;
}

const char *ft_layout_name(enum ft_layout l)
{
	return l == FT_LAYOUT_BSHD ? "bshd" : "bhsd";
}

int ft_layout_parse(const char *text, enum ft_layout *out, struct ft_err *err)
{
	if (!strcmp(text, "bhsd")) {
		*out = FT_LAYOUT_BHSD;
		return 0;
	}
	if (!strcmp(text, "bshd")) {
		*out = FT_LAYOUT_BSHD;
		return 0;
	}
	return ft_error(err, FT_EINPUT,
			"bad layout '%s': use bhsd ([B, H, S, D], the default) or bshd ([B, S, H, D])",
			text);
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

/* The first list or range token of text: [*start, *end) spans it, or -1. */
static int find_set(const char *text, size_t *start, size_t *end)
{
	for (size_t i = 0; text[i]; i++) {
		size_t j = i;

		if (text[i] < '0' || text[i] > '9' || (i && text[i - 1] >= '0' && text[i - 1] <= '9'))
			continue;
		while (text[j] >= '0' && text[j] <= '9')
			j++;
		if (text[j] == ':' || (text[j] == '.' && text[j + 1] == '.')) {
			while ((text[j] >= '0' && text[j] <= '9') || text[j] == ':' || text[j] == '.')
				j++;
			*start = i;
			*end = j;
			return 0;
		}
		i = j - 1;
	}
	return -1;
}

static int expand(const char *text, const char *whole, const struct ft_shape *proto,
		  struct ft_shape *out, int max, int *n, struct ft_err *err)
{
	size_t s, e;
	char tok[64], buf[256];
	long vals[FT_SHAPE_SET_MAX_VALUES];
	int nv = 0;

	if (find_set(text, &s, &e)) {
		if (*n >= max)
			return ft_error(err, FT_EINPUT,
					"shape set '%s' holds more than %d shapes: split it", whole, max);
		out[*n] = *proto;
		if (ft_shape_parse(text, &out[*n], err))
			return -1;
		(*n)++;
		return 0;
	}
	if (e - s >= sizeof(tok) || strlen(text) >= sizeof(buf))
		goto bad;
	memcpy(tok, text + s, e - s);
	tok[e - s] = '\0';
	if (strstr(tok, "..")) {
		char *dots = strstr(tok, ".."), *end;
		long a, b;

		*dots = '\0';
		a = strtol(tok, &end, 10);
		if (*end || dots[2] < '0' || dots[2] > '9')
			goto bad;
		b = strtol(dots + 2, &end, 10);
		if (*end || a < 1 || b < a || b > MAX_DIM)
			goto bad;
		for (long v = a; v <= b && nv < FT_SHAPE_SET_MAX_VALUES; v *= 2)
			vals[nv++] = v;
	} else {
		for (char *p = tok; *p;) {
			char *end;
			long v = strtol(p, &end, 10);
			if (end == p || (*end && *end != ':') || nv == FT_SHAPE_SET_MAX_VALUES)
				goto bad;
			vals[nv++] = v;
			p = *end ? end + 1 : end;
			if (*end && !*p)
				goto bad;
		}
	}
	for (int i = 0; i < nv; i++) {
		snprintf(buf, sizeof(buf), "%.*s%ld%s", (int)s, text, vals[i], text + e);
		if (expand(buf, whole, proto, out, max, n, err))
			return -1;
	}
	return 0;
bad:
	return ft_error(err, FT_EINPUT,
			"bad shape set '%s': a list is A:B:C and a range A..B (doubling), e.g. 1x8x256..8192x64 or 2:4x16x2048x128",
			whole);
}

int ft_shape_expand(const char *text, const struct ft_shape *proto, struct ft_shape *out, int max,
		    int *n, struct ft_err *err)
{
	*n = 0;
	return expand(text, text, proto, out, max, n, err);
}
