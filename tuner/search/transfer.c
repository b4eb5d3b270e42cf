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
	int other_device;	/* tuned on another GPU model */
};

struct collect {
	const char *arch;
	const char *space;
	const char *device;	/* this GPU model */
	const struct ft_shape *shape;
	struct cand *v;
	long long n, cap;
};

static double log_ratio(double a, double b)
{
	return a > 0 && b > 0 ? fabs(log2(a) - log2(b)) : INFINITY;
}

/* One row of FT_Q_BEST as the fields transfer reads; 0, or -1 when a field
 * it needs is missing or too long (such a row seeds nothing). */
static int parse_row(int ncols, const char *const *names, const char *const *values,
		     struct ft_transfer_row *r)
{
	enum ft_dtype dtype;
	int have = 0;

	memset(r, 0, sizeof(*r));
	snprintf(r->layout, sizeof(r->layout), "bhsd");
	r->dtype = -1;
	for (int i = 0; i < ncols; i++) {
		const char *v = values[i], *k = names[i];
		char *dst = NULL;
		size_t size = 0;

		if (!v)
			continue;
		if (!strcmp(k, "arch"))
			dst = r->arch, size = sizeof(r->arch);
		else if (!strcmp(k, "space"))
			dst = r->space, size = sizeof(r->space), have |= 1;
		else if (!strcmp(k, "config"))
			dst = r->config, size = sizeof(r->config), have |= 2;
		else if (!strcmp(k, "device"))
			dst = r->device, size = sizeof(r->device);
		else if (!strcmp(k, "layout"))
			dst = r->layout, size = sizeof(r->layout);
		else if (!strcmp(k, "dtype"))
			r->dtype = ft_dtype_parse(v, &dtype, NULL) ? -1 : (int)dtype;
		else if (!strcmp(k, "b") || !strcmp(k, "h") || !strcmp(k, "s") || !strcmp(k, "d") ||
			 !strcmp(k, "s_kv") || !strcmp(k, "h_kv") || !strcmp(k, "causal")) {
			long long n = strtoll(v, NULL, 10);
			*(!strcmp(k, "b") ? &r->b : !strcmp(k, "h") ? &r->h : !strcmp(k, "s") ? &r->s
			  : !strcmp(k, "d") ? &r->d : !strcmp(k, "s_kv") ? &r->s_kv
			  : !strcmp(k, "h_kv") ? &r->h_kv : &r->causal) = n;
		}
		if (dst && (size_t)snprintf(dst, size, "%s", v) >= size)
			return -1;
	}
	r->s_kv = r->s_kv ? r->s_kv : r->s;
	r->h_kv = r->h_kv ? r->h_kv : r->h;
	return have == 3 ? 0 : -1;
}

double ft_transfer_shape_distance(long long s, long long s_kv, long long bh, long long causal, long long d,
				  const struct ft_shape *sh)
{
	return log_ratio((double)s, sh->s) + log_ratio((double)s_kv, sh->s_kv) +
	       log_ratio((double)bh, (double)sh->b * sh->h) + (causal != sh->causal ? FT_TRANSFER_CAUSAL_COST : 0) +
	       FT_TRANSFER_HEADDIM_COST * log_ratio((double)d, sh->d);
}

/* Keeps row r when it may seed the shape, with its distance. */
static int consider(struct collect *c, const struct ft_transfer_row *r)
{
	const struct ft_shape *sh = c->shape;
	struct cand x;

	if (strcmp(r->arch, c->arch) || strcmp(r->space, c->space) || r->d < 1 || r->dtype != (int)sh->dtype ||
	    strcmp(r->layout, ft_layout_name(sh->layout)) || r->h_kv < 1 ||
	    r->h * sh->h_kv != (long long)sh->h * r->h_kv)
		return 0;
	snprintf(x.config, sizeof(x.config), "%s", r->config);
	x.other_device = strcmp(r->device, c->device) != 0;
	x.distance = ft_transfer_shape_distance(r->s, r->s_kv, r->b * r->h, r->causal, r->d, sh) +
		     (x.other_device ? FT_TRANSFER_DEVICE_COST : 0);
	x.order = c->n;
	x.same_d = r->d == sh->d;
	if (c->n == c->cap) {
		struct cand *n = realloc(c->v, (size_t)(c->cap = c->cap ? 2 * c->cap : 32) * sizeof(*n));
		if (!n)
			return FT_ROW_ERROR; /* no seeds from a partial read */
		c->v = n;
	}
	c->v[c->n++] = x;
	return 0;
}

/* One row of FT_Q_BEST of the tuning database. */
static int on_best(void *ctx, int ncols, const char *const *names, const char *const *values,
		   const int *types)
{
	struct ft_transfer_row r;

	(void)types;
	return parse_row(ncols, names, values, &r) ? 0 : consider(ctx, &r);
}

static int is_seed(const struct ft_transfer_seeds *s, const char *config)
{
	for (int k = 0; k < s->n; k++)
		if (!strcmp(s->config[k], config))
			return 1;
	return 0;
}

static void add_seed(struct ft_transfer_seeds *s, const struct cand *x)
{
	snprintf(s->config[s->n], FT_CONFIG_MAX, "%s", x->config);
	s->ptr[s->n] = s->config[s->n];
	s->other_device += x->other_device;
	s->distance[s->n++] = x->distance;
}

static int by_distance(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->distance != y->distance)
		return x->distance < y->distance ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* One row of FT_Q_BEST of a --seeds-from database: kept as it is. */
static int on_pool_row(void *ctx, int ncols, const char *const *names, const char *const *values,
		       const int *types)
{
	struct ft_transfer_pool *p = ctx;
	struct ft_transfer_row r;

	(void)types;
	if (parse_row(ncols, names, values, &r))
		return 0;
	if (p->n >= FT_TRANSFER_POOL_MAX) {
		p->full = 1;
		return FT_ROW_ERROR;
	}
	if (p->n == p->cap) {
		long long cap = p->cap ? 2 * p->cap : 64;
		struct ft_transfer_row *v;

		if (!(v = realloc(p->v, (size_t)cap * sizeof(*v))))
			return FT_ROW_ERROR;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = r;
	return 0;
}

int ft_transfer_pool_read(struct ft_transfer_pool *p, const char *path, struct ft_err *err)
{
	struct ft_query_filter f = { .arch = NULL, .device = NULL, .shape = NULL,
				     .dtype = -1, .causal = -1, .run_id = -1, .limit = -1 };

	if (!ft_db_read_best(path, "leave it out of --seeds-from", &f, on_pool_row, p, err))
		return 0;
	if (p->full)
		ft_error(err, FT_EINPUT,
			 "seed database '%s' holds more than %d best rows: give one with fewer (fatune db merge of the shards you need)",
			 path, FT_TRANSFER_POOL_MAX);
	ft_err_prefix(err, "--seeds-from");
	return -1;
}

void ft_transfer_pool_free(struct ft_transfer_pool *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

int ft_transfer_seeds(struct ft_db *db, const struct ft_transfer_pool *pool, const char *arch,
		      const char *device, const char *space, const struct ft_shape *shape,
		      struct ft_transfer_seeds *out, struct ft_err *err)
{
	/* every GPU model of the arch: another model's rows cost more (consider) */
	struct ft_query_filter f = { .arch = arch, .device = NULL, .shape = NULL,
				     .dtype = shape->dtype, .causal = -1, .run_id = -1, .limit = -1 };
	struct collect c = { .arch = arch, .space = space, .device = device, .shape = shape };
	int any_same_d = 0;

	memset(out, 0, sizeof(*out));
	if (ft_db_query(db, FT_Q_BEST, &f, on_best, &c, err)) {
		free(c.v);
		ft_err_prefix(err, "transfer: reading the best configs");
		return -1;
	}
	for (long long i = 0; pool && i < pool->n; i++)
		if (consider(&c, &pool->v[i])) {
			free(c.v);
			return ft_error(err, FT_EFAIL, "out of memory choosing transfer seeds");
		}
	if (c.n)
		qsort(c.v, (size_t)c.n, sizeof(*c.v), by_distance);
	for (long long i = 0; i < c.n; i++)
		any_same_d |= c.v[i].same_d;
	for (long long i = 0; i < c.n && out->n < FT_TRANSFER_NEIGHBOURS; i++) {
		if (!isfinite(c.v[i].distance) || (any_same_d && !c.v[i].same_d) ||
		    is_seed(out, c.v[i].config))
			continue;
		add_seed(out, &c.v[i]);
	}
	/* after the same head dim's: the nearest best of another (transfer.h) */
	for (long long i = 0; any_same_d && i < c.n; i++)
		if (isfinite(c.v[i].distance) && !c.v[i].same_d && !is_seed(out, c.v[i].config)) {
			add_seed(out, &c.v[i]);
			break;
		}
	free(c.v);
	return 0;
}
