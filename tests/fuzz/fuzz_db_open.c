/* fuzz_db_open.c - opening arbitrary bytes as a tuning database (ft_db_check,
 * ft_db_open), then reading and writing through the opened connection.
 *
 * Properties: open refuses or opens, never crashes; a refused file is left
 * byte for byte as it was (the README's promise); on an opened one the
 * queries and a small search's writes either work or fail with a message.
 * A target for `fatune db merge` is one more file like this one: the fuzzed
 * bytes as the source (or target) via fz_file and fz_remove_db, a fixed
 * seed database for the other side. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, "fuzz.db");
	struct ft_query_filter f = { .dtype = -1, .causal = -1, .run_id = -1, .limit = 100 };
	struct ft_run run = { .fatune_version = "0", .arch = "sm_90", .device = "", .nvrtc_version = "13.0",
			      .driver_version = "", .template_name = "t", .template_hash = "0",
			      .space_name = "s", .family = "mma", .abi = 2, .space_path = "s.yaml",
			      .space_hash = "0", .search_key = "k", .mode = "feasibility",
			      .strategy = "exhaustive", .seed = 1, .budget = -1, .timing = "warm" };
	struct ft_trial t;
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };
	long long rows = 0, run_id = 0;

	if (ft_db_open(&db, path, 0, &err)) {
		if (!err.msg[0] || strchr(err.msg, '\n') || !fz_unchanged(path, data, size))
			FZ_FAIL(&err);
		fz_remove_db(path);
		return 0;
	}
	for (int w = FT_Q_BEST; w <= FT_Q_RUNS; w++)
		(void)ft_db_query(db, (enum ft_query_what)w, &f, fz_count_row, &rows, &err);
	ft_trial_init(&t);
	(void)ft_db_trial_latest(db, "k", "A=1", &t, &err);
	ft_trial_init(&t);
	strcpy(t.config, "A=1");
	t.status = FT_ST_COMPILED;
	run.shape = (struct ft_shape){ 1, 8, 256, 64, 0, FT_FP16, 256, 8, FT_LAYOUT_BHSD };
	if (ft_db_run_begin(db, &run, &run_id, &err) == 0) {
		(void)ft_db_trials_put(db, run_id, "k", &t, 1, &err);
		(void)ft_db_run_finish(db, run_id, "done", 1.0, &err);
	}
	ft_db_close(db);
	fz_remove_db(path);
	return 0;
}
