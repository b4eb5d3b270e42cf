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

#include "db/db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, "fuzz.db");
	struct ft_query_filter f = { .dtype = -1, .causal = -1, .run_id = -1, .limit = 100 };
	struct ft_trial t;
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };
	long long rows = 0;

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
	(void)fz_write_run(db, &err);
	ft_db_close(db);
	fz_remove_db(path);
	return 0;
}
