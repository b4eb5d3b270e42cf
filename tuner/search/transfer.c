/* transfer.c - choosing the transfer strategy's seeds from the best rows (see transfer.h). */
#include "search/transfer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A best row of a neighbouring shape. */
struct cand {
	char config[FT_CONFIG_MAX];
	double distance;
	long long order;
	int same_d;		/* the shape's head dim: preferred over any other */
};

struct collect {
	const char *space;
	const struct ft_shape *shape;
	struct cand *v;
	long long n, cap;
};

static double log_ratio(double a, double b)
{
	return a > 0 && b > 0 ? fabs(log2(a) - log2(b)) : INFINITY;
}

/* One row of FT_Q_BEST: keep it when it may seed the shape, with its distance. */
static int on_best(void *ctx, int ncols, const char *const *names, const char *const *values,
		   const int *types)
{
	struct collect *c = ctx;
	const struct ft_shape *sh = c->shape;
	const char *space = NULL, *config = NULL, *layout = "bhsd";
	long long b = 0, h = 0, s = 0, d = 0, s_kv = 0, h_kv = 0, causal = 0;
	struct cand x;

	(void)types;
	for (int i = 0; i < ncols; i++) {
		const char *v = values[i], *k = names[i];
		if (!v)
			continue;
		if (!strcmp(k, "space"))
			space = v;
		else if (!strcmp(k, "config"))
			config = v;
		else if (!strcmp(k, "layout"))
			layout = v;
		else if (!strcmp(k, "b") || !strcmp(k, "h") || !strcmp(k, "s") || !strcmp(k, "d") ||
			 !strcmp(k, "s_kv") || !strcmp(k, "h_kv") || !strcmp(k, "causal")) {
			long long n = strtoll(v, NULL, 10);
			*(!strcmp(k, "b") ? &b : !strcmp(k, "h") ? &h : !strcmp(k, "s") ? &s
			  : !strcmp(k, "d") ? &d : !strcmp(k, "s_kv") ? &s_kv
			  : !strcmp(k, "h_kv") ? &h_kv : &causal) = n;
		}
	}
	s_kv = s_kv ? s_kv : s;
	h_kv = h_kv ? h_kv : h;
	if (!space || !config || strcmp(space, c->space) || d < 1 ||
	    strcmp(layout, ft_layout_name(sh->layout)) || h_kv < 1 ||
	    h * sh->h_kv != (long long)sh->h * h_kv)
		return 0;
	snprintf(x.config, sizeof(x.config), "%s", config);
	x.distance = log_ratio((double)s, sh->s) + log_ratio((double)s_kv, sh->s_kv) +
		     log_ratio((double)b * h, (double)sh->b * sh->h) +
		     (causal != sh->causal ? FT_TRANSFER_CAUSAL_COST : 0) +
		     FT_TRANSFER_HEADDIM_COST * log_ratio((double)d, sh->d);
	x.order = c->n;
	x.same_d = d == sh->d;
	if (c->n == c->cap) {
		struct cand *n = realloc(c->v, (size_t)(c->cap = c->cap ? 2 * c->cap : 32) * sizeof(*n));
		if (!n)
			return FT_ROW_ERROR; /* no seeds from a partial read */
		c->v = n;
	}
	c->v[c->n++] = x;
	return 0;
}

static int by_distance(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->distance != y->distance)
		return x->distance < y->distance ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int ft_transfer_seeds(struct ft_db *db, const char *arch, const char *device, const char *space,
		      const struct ft_shape *shape, struct ft_transfer_seeds *out,
		      struct ft_err *err)
{
	struct ft_query_filter f = { .arch = arch, .device = device, .shape = NULL,
				     .dtype = shape->dtype, .causal = -1, .run_id = -1, .limit = -1 };
	struct collect c = { .space = space, .shape = shape };
	int rc, any_same_d = 0;

	memset(out, 0, sizeof(*out));
	rc = ft_db_query(db, FT_Q_BEST, &f, on_best, &c, err);
	if (rc) {
		free(c.v);
		ft_err_prefix(err, "transfer: reading the best configs");
		return -1;
	}
	if (c.n)
		qsort(c.v, (size_t)c.n, sizeof(*c.v), by_distance);
	for (long long i = 0; i < c.n; i++)
		any_same_d |= c.v[i].same_d;
	for (long long i = 0; i < c.n && out->n < FT_TRANSFER_NEIGHBOURS; i++) {
		int dup = 0;

		if (!isfinite(c.v[i].distance) || (any_same_d && !c.v[i].same_d))
			continue;
		for (int k = 0; k < out->n; k++)
			dup |= !strcmp(out->config[k], c.v[i].config);
		if (dup)
			continue;
		snprintf(out->config[out->n], FT_CONFIG_MAX, "%s", c.v[i].config);
		out->ptr[out->n] = out->config[out->n];
		out->distance[out->n++] = c.v[i].distance;
	}
	free(c.v);
	return 0;
}
