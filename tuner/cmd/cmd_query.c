/* cmd_query.c - `fatune query`: best configs, trials or runs from the tuning database. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "db/db.h"
#include "ui/format.h"
#include "cmd/target.h"

static int count_row(void *ctx, int ncols, const char *const *names, const char *const *values,
		     const int *types)
{
	(*(long long *)ctx)++;
	return 0;
}

/* The columns a default table shows (--wide: all), in the query's order. */
static const char *const best_cols[] = { "shape", "dtype", "causal", "config", "t_median_us",
					 "rel_err", "space", NULL };
static const char *const trial_cols[] = { "id", "run_id", "config", "status", "reason",
					  "t_median_us", NULL };
static const char *const run_cols[] = { "id", "started_at", "outcome", "arch", "shape", "dtype",
					"causal", "strategy", "trials", "ok", "best_us", "space",
					NULL };

/* ---- the latest run's summary (plain `fatune query`) ------------------- */

#define FIELD_MAX 256

/* The last run of the runs listing, its fields by name. */
struct last_run {
	long long n;
	char id[32], arch[FIELD_MAX], device[FIELD_MAX], shape[FIELD_MAX], dtype[16], causal[8],
		space[FIELD_MAX], strategy[32], started[64], outcome[FIELD_MAX], wall_s[32];
};

static void field(char *out, size_t size, int ncols, const char *const *names,
		  const char *const *values, const char *name)
{
	int i = ft_row_col(ncols, names, name);

	snprintf(out, size, "%s", i >= 0 && values[i] ? values[i] : "");
}

static int last_run_row(void *ctx, int ncols, const char *const *names, const char *const *values,
			const int *types)
{
	struct last_run *r = ctx;

	r->n++;
	field(r->id, sizeof(r->id), ncols, names, values, "id");
	field(r->arch, sizeof(r->arch), ncols, names, values, "arch");
	field(r->device, sizeof(r->device), ncols, names, values, "device");
	field(r->shape, sizeof(r->shape), ncols, names, values, "shape");
	field(r->dtype, sizeof(r->dtype), ncols, names, values, "dtype");
	field(r->causal, sizeof(r->causal), ncols, names, values, "causal");
	field(r->space, sizeof(r->space), ncols, names, values, "space");
	field(r->strategy, sizeof(r->strategy), ncols, names, values, "strategy");
	field(r->started, sizeof(r->started), ncols, names, values, "started_at");
	field(r->outcome, sizeof(r->outcome), ncols, names, values, "outcome");
	field(r->wall_s, sizeof(r->wall_s), ncols, names, values, "wall_s");
	return 0;
}

/* A run's trials by status, and its fastest ok trial. */
struct run_trials {
	long long n, count[FT_ST_COUNT];
	double best_us;
	char best_config[FIELD_MAX];
};

static int run_trial_row(void *ctx, int ncols, const char *const *names, const char *const *values,
			 const int *types)
{
	struct run_trials *t = ctx;
	int si = ft_row_col(ncols, names, "status"), ti = ft_row_col(ncols, names, "t_median_us");
	enum ft_status st;

	t->n++;
	if (si < 0 || !values[si] || ft_status_parse(values[si], &st))
		return 0;
	t->count[st]++;
	if (st == FT_ST_OK && ti >= 0 && values[ti] && (t->best_us < 0 || atof(values[ti]) < t->best_us)) {
		t->best_us = atof(values[ti]);
		field(t->best_config, sizeof(t->best_config), ncols, names, values, "config");
	}
	return 0;
}

/* `fatune query` with no mode and no filter: what the latest search did, in a
 * few lines, and the queries that show more (never every trial). */
static int latest_summary(struct ft_db *db, const char *path, struct ft_err *err)
{
	struct ft_query_filter f = { NULL, NULL, NULL, -1, -1, NULL, -1, -1 };
	struct last_run r = { 0 };
	struct run_trials t = { .best_us = -1 };

	if (ft_db_query(db, FT_Q_RUNS, &f, last_run_row, &r, err))
		return -1;
	if (!r.n) {
		fprintf(stderr, "fatune: '%s' holds no search yet: run 'fatune search' first\n", path);
		return 0;
	}
	f.run_id = atoll(r.id);
	if (ft_db_query(db, FT_Q_TRIALS, &f, run_trial_row, &t, err))
		return -1;
	printf("latest run %s (of %lld): %s%s%s %s %s%s, space %s, %s, started %s, %s", r.id, r.n,
	       r.arch, r.device[0] ? " " : "", r.device, r.shape, r.dtype,
	       !strcmp(r.causal, "1") ? " causal" : "", r.space, r.strategy, r.started,
	       r.outcome[0] ? r.outcome : "unfinished");
	if (r.wall_s[0])
		printf(" in %.1f s", atof(r.wall_s));
	printf("\n");
	printf("  %lld trials:", t.n);
	for (int s = 0; s < FT_ST_COUNT; s++)
		if (t.count[s])
			printf("  %s %lld", ft_status_name((enum ft_status)s), t.count[s]);
	printf("\n");
	if (t.best_us >= 0)
		printf("  best: %.2f us  %s\n", t.best_us, t.best_config);
	else
		printf("  best: none (%s)\n", t.count[FT_ST_COMPILED] ? "nothing timed: no GPU of the arch"
								  : "no candidate passed verification");
	printf("more: 'fatune query --trials --run %s' (its trials), '--best' (best configs), "
	       "'--runs' (every run)\n", r.id);
	return 0;
}

/* ---- empty results ----------------------------------------------------- */

/* Runs whose B, H, S, D match the filter's shape while its KV length, KV
 * heads or layout differ: the rows a --layout/--kv-* filter hid. */
struct near_shapes {
	const struct ft_shape *want;
	long long n;
	char first[FIELD_MAX];
};

static int near_row(void *ctx, int ncols, const char *const *names, const char *const *values,
		    const int *types)
{
	struct near_shapes *ns = ctx;
	int i = ft_row_col(ncols, names, "shape");
	struct ft_shape sh = { 0 };
	struct ft_err ignored;

	if (i < 0 || !values[i] || ft_shape_parse(values[i], &sh, &ignored))
		return 0;
	if (sh.b == ns->want->b && sh.h == ns->want->h && sh.s == ns->want->s && sh.d == ns->want->d) {
		if (!ns->n++)
			snprintf(ns->first, sizeof(ns->first), "%s", values[i]);
	}
	return 0;
}

/* Says on stderr that nothing matched, and why when a filter hid rows. */
static void say_empty(struct ft_db *db, const char *what, const struct ft_query_filter *f,
		      const char *path)
{
	struct ft_query_filter any = { NULL, NULL, NULL, -1, -1, NULL, -1, -1 };
	struct ft_err ignored = { 0 };
	long long runs = 0;

	if (ft_db_query(db, FT_Q_RUNS, &any, count_row, &runs, &ignored) || !runs) {
		fprintf(stderr, "fatune: no %s: '%s' holds no search yet: run 'fatune search' first\n", what,
			path);
		return;
	}
	if (f->shape) {
		struct ft_query_filter g = *f;
		struct near_shapes ns = { f->shape, 0, "" };
		char want[FT_SHAPE_TEXT_MAX];

		g.shape = NULL;
		g.status = NULL;
		g.run_id = -1;
		g.limit = -1;
		if (!ft_db_query(db, FT_Q_RUNS, &g, near_row, &ns, &ignored) && ns.n) {
			fprintf(stderr,
				"fatune: no %s for %s (layout %s); %lld run%s %s: pass --shape %s\n",
				what, ft_shape_format(f->shape, want, sizeof(want)),
				ft_layout_name(f->shape->layout), ns.n, ns.n == 1 ? " has" : "s have",
				ns.first, ns.first);
			return;
		}
	}
	if (!strcmp(what, "best configs"))
		fprintf(stderr,
			"fatune: no best configs match: a best config needs a search timed on a GPU (%lld "
			"run%s in '%s': 'fatune query --runs' lists them)\n",
			runs, runs == 1 ? "" : "s", path);
	else
		fprintf(stderr, "fatune: no %s match these filters (%lld run%s in '%s': 'fatune query --runs' lists them)\n",
			what, runs, runs == 1 ? "" : "s", path);
}

int cmd_query(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"query", "fatune query [--best | --trials | --runs] [filters] [--format table|json|csv]",
		"Read the tuning database: the best config per arch, device, shape, dtype, causal flag\n"
		"and template (--best), every trial (--trials), or every search run (--runs).",
		"Without a mode or filter, query summarises the latest search run (its counts by status\n"
		"and best) and names the queries that show more. Without a mode but with filters, it shows\n"
		"the best configs, or the trials when no best config matches yet (after a search without\n"
		"a GPU, say) and says so on stderr; scripts that need one shape of output pass the mode.\n"
		"Filters combine: --arch, --device, --shape (B, H, S, D, and the KV length, KV heads and\n"
		"layout), --dtype, --causal, and for trials --status and --run. An empty result says so\n"
		"on stderr, and names the shape a --layout or --kv-* filter hid. Tables show the main\n"
		"columns within 120 characters (--wide: every column in full); csv and json have every\n"
		"column. Column names are stable; db/README.md documents them."
	};
	struct ft_target_opts o = { 0 };
	const char *format = "table", *status = NULL, *device = NULL;
	long long run = -1, limit = -1;
	int best = 0, trials = 0, runs = 0, wide = 0, npos, rc;
	long long nbest = 0;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(&o), FT_DB_OPTION(&o),
		FT_OPT_FLAG_("best", 0, &best, "list best configs (the default when any match)"),
		FT_OPT_FLAG_("trials", 0, &trials, "list trials instead of best configs"),
		FT_OPT_FLAG_("runs", 0, &runs, "list search runs instead of best configs"),
		FT_OPT_STR_("status", 0, &status, "STATUS", "trials with this status (ok, rejected_smem, ...)"),
		FT_OPT_STR_("device", 0, &device, "NAME", "only results measured on this device"),
		FT_OPT_INT_("run", 0, &run, "ID", "trials of this run", 1, 9e18),
		FT_OPT_INT_("limit", 'n', &limit, "N", "at most N rows", 1, 9e18),
		FT_OPT_STR_("format", 0, &format, "FMT", "table, json or csv (default table)"),
		FT_OPT_FLAG_("wide", 0, &wide, "tables: every column, in full (default: the main ones in 120 characters)"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_shape shape = { 0 };
	struct ft_query_filter f = { 0 };
	struct ft_printer *pr;
	struct ft_db *db = NULL;
	enum ft_format fmt;
	enum ft_status st;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (best + trials + runs > 1) {
		ft_error(&err, FT_EINPUT, "fatune query: --best, --trials and --runs exclude each other: pick one");
		return ft_report(&err);
	}
	if ((status || run > 0) && !trials) {
		ft_error(&err, FT_EINPUT, "fatune query: --status and --run filter trials: add --trials");
		return ft_report(&err);
	}
	if (ft_format_parse(format, &fmt, &err))
		return ft_report(&err);
	if (status && ft_status_parse(status, &st)) {
		ft_error(&err, FT_EINPUT,
			 "fatune query: bad --status '%s': use rejected_constraint, rejected_smem, compile_failed, spills, compiled, ok, wrong_result, crashed or timeout",
			 status);
		return ft_report(&err);
	}
	if (o.arch && !ft_arch_find(o.arch, &err))
		return ft_report(&err);
	f.arch = o.arch ? ft_arch_find(o.arch, &err)->name : NULL;
	f.device = device;
	f.dtype = -1;
	f.causal = o.causal ? 1 : -1;
	f.status = status;
	f.run_id = run;
	f.limit = limit;
	if (o.shape) {
		if (ft_shape_parse(o.shape, &shape, &err) ||
		    ft_shape_set_kv(&shape, o.kv_len, o.kv_heads, o.layout, &err))
			return ft_report(&err);
		f.shape = &shape;
	} else if (o.kv_len || o.kv_heads || o.layout) {
		ft_error(&err, FT_EINPUT, "fatune query: --kv-len, --kv-heads and --layout refine --shape: add --shape");
		return ft_report(&err);
	}
	if (o.dtype) {
		enum ft_dtype t;
		if (ft_dtype_parse(o.dtype, &t, &err))
			return ft_report(&err);
		f.dtype = t;
	}
	if (ft_db_open(&db, ft_db_path(&o), 0, &err))
		return ft_report(&err);
	if (!best && !trials && !runs && !o.arch && !o.shape && !o.dtype && !o.causal && !device &&
	    limit < 0 && fmt == FT_FMT_TABLE) {
		rc = latest_summary(db, ft_db_path(&o), &err);
		ft_db_close(db);
		return rc ? ft_report(&err) : FT_OK;
	}
	if (!best && !trials && !runs) {
		if (ft_db_query(db, FT_Q_BEST, &f, count_row, &nbest, &err)) {
			ft_db_close(db);
			return ft_report(&err);
		}
		if (nbest == 0) {
			trials = 1;
			fprintf(stderr, "fatune: no best config matches yet (none timed on a GPU for these filters): listing the trials; pass --best for best configs only\n");
		}
	}
	pr = ft_printer_new(stdout, fmt);
	if (!wide)
		ft_printer_narrow(pr, trials ? trial_cols : runs ? run_cols : best_cols, FT_TABLE_WIDTH,
				  stderr);
	rc = ft_db_query(db, trials ? FT_Q_TRIALS : runs ? FT_Q_RUNS : FT_Q_BEST, &f, ft_printer_row,
			 pr, &err);
	if (ft_printer_finish(pr) == 0 && !rc)
		say_empty(db, trials ? "trials" : runs ? "runs" : "best configs", &f, ft_db_path(&o));
	ft_db_close(db);
	return rc ? ft_report(&err) : FT_OK;
}
