/* fuzz_db_merge.c - `fatune db merge` of arbitrary bytes into a real tuning database.
 *
 * The fuzzed bytes are the input file; the output is a fresh database holding
 * one run and one trial. Properties: the check (ft_db_merge_check) and the
 * merge (ft_db_merge) refuse with one line or merge, never crash; the input
 * is left byte for byte as it was either way; a merge that worked, done
 * again, adds nothing (idempotent); a refused merge adds nothing either. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

/* Runs plus trials the output holds. */
static long long rows(struct ft_db *db)
{
	struct ft_query_filter f = { .dtype = -1, .causal = -1, .run_id = -1, .limit = -1 };
	struct ft_err err = { 0 };
	long long n = 0;

	if (ft_db_query(db, FT_Q_RUNS, &f, fz_count_row, &n, &err) ||
	    ft_db_query(db, FT_Q_TRIALS, &f, fz_count_row, &n, &err))
		FZ_FAIL(&err);
	return n;
}

/* A fresh output database with one run and one trial (aborts when it cannot
 * be made: that is the harness, not the input). */
static struct ft_db *seed_output(const char *path)
{
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };

	fz_remove_db(path);
	if (ft_db_open(&db, path, 1, &err) || fz_write_run(db, &err))
		FZ_FAIL(&err);
	return db;
}

static void one_line(const struct ft_err *err)
{
	if (!err->msg[0] || strchr(err->msg, '\n'))
		FZ_FAIL(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = fz_file(data, size, "in.db");
	char in_path[4096], out_path[4096];
	const char *paths[1];
	struct ft_merge_stats st = { 0 }, again = { 0 };
	struct ft_err err = { 0 };
	struct ft_db *out;
	long long before;

	snprintf(in_path, sizeof(in_path), "%s", in);
	snprintf(out_path, sizeof(out_path), "%s.out", in_path);
	paths[0] = in_path;
	if (ft_db_merge_check(in_path, &err)) {
		one_line(&err);
		if (!fz_unchanged(in_path, data, size))
			FZ_FAIL(&err);
		fz_remove_db(in_path);
		return 0;
	}
	out = seed_output(out_path);
	before = rows(out);
	if (ft_db_merge(out, paths, 1, &st, &err)) {
		one_line(&err);
		if (rows(out) != before)	/* one transaction: a failed merge adds nothing */
			FZ_FAIL(&err);
	} else {
		before = rows(out);
		memset(&err, 0, sizeof(err));
		if (ft_db_merge(out, paths, 1, &again, &err) || again.runs_added || again.trials_added ||
		    rows(out) != before)
			FZ_FAIL(&err);
	}
	ft_db_close(out);
	if (!fz_unchanged(in_path, data, size))
		FZ_FAIL(NULL);
	fz_remove_db(out_path);
	fz_remove_db(in_path);
	return 0;
}
