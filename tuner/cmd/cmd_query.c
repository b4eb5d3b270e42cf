/* cmd_query.c - `fatune query`: best configs, trials or runs from the tuning database. */
#include <stdio.h>
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

int cmd_query(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"query", "fatune query [--best | --trials | --runs] [filters] [--format table|json|csv]",
		"Read the tuning database: the best config per arch, device, shape, dtype, causal flag\n"
		"and template (--best), every trial (--trials), or every search run (--runs).",
		"Without a mode, query shows the best configs, or the trials when no best config matches\n"
		"the filters yet (after a search without a GPU, say) and says so on stderr; scripts that\n"
		"need one shape of output pass the mode. Filters combine: --arch, --device, --shape\n"
		"(B, H, S, D), --dtype, --causal, and for trials --status and --run. Column names are\n"
		"stable; db/README.md documents them."
	};
	struct ft_target_opts o = { 0 };
	const char *format = "table", *status = NULL, *device = NULL;
	long long run = -1, limit = -1;
	int best = 0, trials = 0, runs = 0, npos, rc;
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
	if (!best && !trials && !runs) {
		if (ft_db_query(db, FT_Q_BEST, &f, count_row, &nbest, &err)) {
			ft_db_close(db);
			return ft_report(&err);
		}
		if (nbest == 0) {
			trials = 1;
			fprintf(stderr, "fatune: no best config matches yet (nothing timed on a GPU): listing the trials; pass --best for best configs only\n");
		}
	}
	pr = ft_printer_new(stdout, fmt);
	rc = ft_db_query(db, trials ? FT_Q_TRIALS : runs ? FT_Q_RUNS : FT_Q_BEST, &f, ft_printer_row,
			 pr, &err);
	ft_printer_finish(pr);
	ft_db_close(db);
	return rc ? ft_report(&err) : FT_OK;
}
