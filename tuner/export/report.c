/* report.c - the report's model: every search of the database, grouped by
 * search key, with the latest trial of each config (see report.h).
 *
 * Reads through db.h's listings only (runs, then trials), so the report sees
 * exactly what `fatune query --runs` and `--trials` print. The heatmap axes
 * default to the two parameters with the most distinct values among the
 * search's verified configs (then among all; ties: the one earlier in the
 * config): the parameters along which the measured latency varies most.
 */
#include "export/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Distinct values a parameter can show on one heatmap axis. */
#define AXIS_MAX 64

struct run_map {
	long long run_id;
	int shape;			/* index into r->s */
};

struct loader {
	struct ft_report *r;
	const struct ft_report_opts *o;
	struct run_map *runs;
	int nruns, cap;
	int bad;			/* out of memory, or a row fatune cannot read */
};

static const char *val(int ncols, const char *const *names, const char *const *values, const char *name)
{
	int i = ft_row_col(ncols, names, name);

	return i >= 0 && values[i] ? values[i] : "";
}

static double num(int ncols, const char *const *names, const char *const *values, const char *name)
{
	const char *v = val(ncols, names, values, name);

	return *v ? strtod(v, NULL) : NAN;
}

static void *grow(void *p, int *cap, int n, size_t size)
{
	void *q;

	if (n < *cap)
		return p;
	q = realloc(p, (size_t)(*cap ? *cap * 2 : 16) * size);
	if (q)
		*cap = *cap ? *cap * 2 : 16;
	return q;
}

/* ft_db_query callback over the runs: one shape per search key. */
static int on_run(void *ctx, int ncols, const char *const *names, const char *const *values, const int *types)
{
	struct loader *l = ctx;
	struct ft_report *r = l->r;
	const char *key = val(ncols, names, values, "search_key");
	const char *camp = val(ncols, names, values, "campaign");
	struct ft_err ignored;
	struct run_map *m;
	int g;

	(void)types;
	if (l->o->campaign && strcmp(camp, l->o->campaign))
		return 0;
	for (g = 0; g < r->n; g++)
		if (!strcmp(r->s[g].search_key, key))
			break;
	if (g == r->n) {
		struct ft_report_shape *s;
		int cap = r->n;	/* grows by one at a time: searches are few */

		s = realloc(r->s, (size_t)(cap + 1) * sizeof(*s));
		if (!s)
			return l->bad = 1;
		r->s = s;
		s = &r->s[r->n];
		memset(s, 0, sizeof(*s));
		snprintf(s->search_key, sizeof(s->search_key), "%s", key);
		snprintf(s->arch, sizeof(s->arch), "%s", val(ncols, names, values, "arch"));
		snprintf(s->device, sizeof(s->device), "%s", val(ncols, names, values, "device"));
		snprintf(s->space, sizeof(s->space), "%s", val(ncols, names, values, "space"));
		snprintf(s->campaign, sizeof(s->campaign), "%s", camp);
		s->replayed = !strcmp(val(ncols, names, values, "mode"), "replayed");
		if (ft_shape_parse(val(ncols, names, values, "shape"), &s->shape, &ignored) ||
		    ft_dtype_parse(val(ncols, names, values, "dtype"), &s->shape.dtype, &ignored))
			return l->bad = 1;
		s->shape.causal = atoi(val(ncols, names, values, "causal")) != 0;
		s->row_param = s->col_param = -1;
		r->n++;
	}
	m = grow(l->runs, &l->cap, l->nruns, sizeof(*l->runs));
	if (!m)
		return l->bad = 1;
	l->runs = m;
	l->runs[l->nruns++] = (struct run_map){ atoll(val(ncols, names, values, "id")), g };
	return 0;
}

/* ft_db_query callback over the trials: each to its run's shape. */
static int on_trial(void *ctx, int ncols, const char *const *names, const char *const *values, const int *types)
{
	struct loader *l = ctx;
	long long run = atoll(val(ncols, names, values, "run_id"));
	struct ft_report_trial *t;
	struct ft_report_shape *s;
	int lo = 0, hi = l->nruns - 1;

	(void)types;
	while (lo <= hi) {	/* the runs listing comes ordered by id */
		int mid = (lo + hi) / 2;

		if (l->runs[mid].run_id == run)
			break;
		if (l->runs[mid].run_id < run)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	if (lo > hi)
		return 0;	/* a run the filters left out */
	s = &l->r->s[l->runs[(lo + hi) / 2].shape];
	t = grow(s->t, &s->cap, s->nt, sizeof(*s->t));
	if (!t)
		return l->bad = 1;
	s->t = t;
	t = &s->t[s->nt];
	memset(t, 0, sizeof(*t));
	if (ft_status_parse(val(ncols, names, values, "status"), &t->status))
		return l->bad = 1;
	t->config = strdup(val(ncols, names, values, "config"));
	t->reason = strdup(val(ncols, names, values, "reason"));
	if (!t->config || !t->reason) {
		free(t->config);
		free(t->reason);
		return l->bad = 1;
	}
	t->t_median_us = num(ncols, names, values, "t_median_us");
	t->t_min_us = num(ncols, names, values, "t_min_us");
	t->rel_err = num(ncols, names, values, "rel_err");
	t->id = atoll(val(ncols, names, values, "id"));
	s->nt++;
	return 0;
}

static int by_config_id(const void *pa, const void *pb)
{
	const struct ft_report_trial *a = pa, *b = pb;
	int c = strcmp(a->config, b->config);

	return c ? c : (a->id > b->id) - (a->id < b->id);
}

/* ok ones first, fastest first (ties: the earlier trial), then the rest by config */
static int by_rank(const void *pa, const void *pb)
{
	const struct ft_report_trial *a = pa, *b = pb;
	int aok = a->status == FT_ST_OK && isfinite(a->t_median_us), bok = b->status == FT_ST_OK && isfinite(b->t_median_us);

	if (aok != bok)
		return bok - aok;
	if (aok && a->t_median_us != b->t_median_us)
		return a->t_median_us < b->t_median_us ? -1 : 1;
	if (aok)
		return (a->id > b->id) - (a->id < b->id);
	return strcmp(a->config, b->config);
}

static int param_index(const struct ft_report_shape *s, const char *name)
{
	for (int i = 0; name && i < s->nparams; i++)
		if (!strcmp(s->params[i], name))
			return i;
	return -1;
}

/* Distinct values of parameter p among the first n trials (AXIS_MAX + 1: more). */
static int distinct(const struct ft_report_shape *s, int p, int n)
{
	int v[AXIS_MAX], nv = 0;

	for (int i = 0; i < n; i++) {
		int k = 0;

		while (k < nv && v[k] != s->t[i].vals[p])
			k++;
		if (k == nv) {
			if (nv == AXIS_MAX)
				return AXIS_MAX + 1;
			v[nv++] = s->t[i].vals[p];
		}
	}
	return nv;
}

/* How well parameter p suits an axis: its distinct values among the
 * verified configs (where the latency varies), then among all; -1 when it
 * has more than AXIS_MAX values or only one. */
static long axis_score(const struct ft_report_shape *s, int p)
{
	int all = distinct(s, p, s->nt), ok = distinct(s, p, s->nok);

	return all > AXIS_MAX || all < 2 ? -1 : (long)ok * (AXIS_MAX + 2) + all;
}

/* Keeps the latest trial per config, reads the parameters, ranks, counts and
 * picks the heatmap axes. */
static void finish_shape(struct ft_report_shape *s, const struct ft_report_opts *o)
{
	struct ft_export_entry e[FT_EXPORT_MAX_ENTRIES];
	struct ft_err ignored;
	int n = 0, ne, best[2] = { -1, -1 };
	long nd[2] = { -1, -1 };

	qsort(s->t, (size_t)s->nt, sizeof(*s->t), by_config_id);
	for (int i = 0; i < s->nt; i++) {
		if (i + 1 < s->nt && !strcmp(s->t[i].config, s->t[i + 1].config)) {
			free(s->t[i].config);	/* an older trial of the same config */
			free(s->t[i].reason);
			continue;
		}
		s->t[n++] = s->t[i];
	}
	s->nt = n;
	for (int i = 0; i < s->nt; i++) {
		struct ft_report_trial *t = &s->t[i];

		s->status_count[t->status]++;
		if (ft_export_parse_config(t->config, e, &ne, &ignored))
			continue;	/* no parameters to place it by: counted, not drawn */
		if (!s->nparams)
			for (; s->nparams < ne; s->nparams++)
				snprintf(s->params[s->nparams], sizeof(s->params[0]), "%s", e[s->nparams].name);
		for (int k = 0; k < ne; k++) {
			int p = param_index(s, e[k].name);

			if (p >= 0)
				t->vals[p] = e[k].value;
		}
	}
	qsort(s->t, (size_t)s->nt, sizeof(*s->t), by_rank);
	for (s->nok = 0; s->nok < s->nt && s->t[s->nok].status == FT_ST_OK && isfinite(s->t[s->nok].t_median_us);)
		s->nok++;
	for (int p = 0; p < s->nparams; p++) {
		long sc = axis_score(s, p);

		if (sc < 0)
			continue;
		if (sc > nd[0]) {
			best[1] = best[0], nd[1] = nd[0];
			best[0] = p, nd[0] = sc;
		} else if (sc > nd[1]) {
			best[1] = p, nd[1] = sc;
		}
	}
	/* the two chosen, in config order: rows the earlier one */
	s->row_param = best[1] >= 0 && best[1] < best[0] ? best[1] : best[0];
	s->col_param = best[1] >= 0 && best[1] < best[0] ? best[0] : best[1];
	if (param_index(s, o->rows) >= 0 && distinct(s, param_index(s, o->rows), s->nt) <= AXIS_MAX)
		s->row_param = param_index(s, o->rows);
	if (param_index(s, o->cols) >= 0 && distinct(s, param_index(s, o->cols), s->nt) <= AXIS_MAX)
		s->col_param = param_index(s, o->cols);
	if (s->row_param == s->col_param)
		s->row_param = -1;	/* one axis: a single row */
}

/* The report's order: target, then D, dtype, causal, S, KV length, B*H, space. */
static int by_shape(const void *pa, const void *pb)
{
	const struct ft_report_shape *a = pa, *b = pb;
	long long k[][2] = { { a->shape.d, b->shape.d },
			     { a->shape.dtype, b->shape.dtype },
			     { a->shape.causal, b->shape.causal },
			     { a->shape.s, b->shape.s },
			     { a->shape.s_kv, b->shape.s_kv },
			     { (long long)a->shape.b * a->shape.h, (long long)b->shape.b * b->shape.h },
			     { a->shape.b, b->shape.b } };
	int c = strcmp(a->arch, b->arch);

	if (c || (c = strcmp(a->device, b->device)))
		return c;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i][0] != k[i][1])
			return k[i][0] < k[i][1] ? -1 : 1;
	return strcmp(a->space, b->space);
}

static int axis_named(const struct ft_report *r, const char *name)
{
	for (int g = 0; g < r->n; g++)
		if (param_index(&r->s[g], name) >= 0)
			return 1;
	return 0;
}

int ft_report_load(struct ft_db *db, const char *db_path, const struct ft_report_opts *o,
		   struct ft_report *out, struct ft_err *err)
{
	struct ft_query_filter f = { o->arch, o->device, NULL, -1, -1, NULL, -1, -1 };
	struct loader l = { out, o, NULL, 0, 0, 0 };
	int ret = -1;

	memset(out, 0, sizeof(*out));
	snprintf(out->db_path, sizeof(out->db_path), "%s", db_path);
	if (ft_db_query(db, FT_Q_RUNS, &f, on_run, &l, err) || ft_db_query(db, FT_Q_TRIALS, &f, on_trial, &l, err))
		goto out;
	if (l.bad) {
		ft_error(err, FT_EFAIL, "cannot read '%s' for the report: out of memory or a hand-edited database", db_path);
		goto out;
	}
	if (!out->n) {
		ft_error(err, FT_EINPUT, "no search in '%s'%s%s%s%s%s%s: run 'fatune search' first or widen the filters", db_path,
			 o->arch ? " for " : "", o->arch ? o->arch : "", o->device ? " on " : "",
			 o->device ? o->device : "", o->campaign ? " in campaign " : "", o->campaign ? o->campaign : "");
		goto out;
	}
	for (int g = 0; g < out->n; g++)
		finish_shape(&out->s[g], o);
	if ((o->rows && !axis_named(out, o->rows)) || (o->cols && !axis_named(out, o->cols))) {
		ft_error(err, FT_EINPUT, "no search in '%s' has a parameter '%s': pass a name its configs hold (see 'fatune query --trials')",
			 db_path, o->rows && !axis_named(out, o->rows) ? o->rows : o->cols);
		goto out;
	}
	qsort(out->s, (size_t)out->n, sizeof(*out->s), by_shape);
	ret = 0;
out:
	free(l.runs);
	if (ret)
		ft_report_release(out);
	return ret;
}

void ft_report_release(struct ft_report *r)
{
	for (int g = 0; g < r->n; g++) {
		for (int i = 0; i < r->s[g].nt; i++) {
			free(r->s[g].t[i].config);
			free(r->s[g].t[i].reason);
		}
		free(r->s[g].t);
	}
	free(r->s);
	r->s = NULL;
	r->n = 0;
}
