/* test_db.c - the tuning database: opening, refusals, migrations, trials, best rows,
 * queries, concurrent writers, merging files; also the trial status names (status.c).
 *
 * Fixtures that fatune itself must never write (foreign or newer files) are
 * made with sqlite3 directly; everything else goes through db.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/clock.h"
#include "db/db.h"
#include "db/embedded_sql.h"
#include "test_files.h"

/* db.c's test hook (not part of db.h) */
void ft_db_test_set_migrations(const struct ft_sql_migration *list);

struct fx {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->dir, "/tmp/fatune-test-db.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/tune.db", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char p[192];

	ft_db_test_set_migrations(NULL);
	unlink(fx->path);
	snprintf(p, sizeof(p), "%s-wal", fx->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", fx->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-journal", fx->path);
	unlink(p);
	assert_int_equal(rmdir(fx->dir), 0);
	free(fx);
	return 0;
}

/* ---- helpers ---------------------------------------------------------- */

static void write_all(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* Runs SQL on path with sqlite3 itself (fixtures and inspection). */
static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *h;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
}

static long long raw_int(const char *path, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	long long v;

	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(h));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -999 : sqlite3_column_int64(st, 0);
	assert_int_equal(sqlite3_finalize(st), SQLITE_OK);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	return v;
}

static struct ft_db *open_ok(const char *path)
{
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };

	if (ft_db_open(&db, path, 1, &err))
		fail_msg("open '%s': %s", path, err.msg);
	return db;
}

static struct ft_run sample_run(const char *device, const char *key, int s, int causal)
{
	struct ft_run r = {
		.fatune_version = "0.1.0",
		.arch = "sm_90",
		.device = device,
		.nvrtc_version = "13.0",
		.driver_version = "13000",
		.template_name = "attention",
		.template_hash = "00112233aabbccdd",
		.space_path = "search_spaces/attention.yaml",
		.space_hash = "0123456789abcdef",
		.search_key = key,
		.shape = { .b = 1, .h = 8, .s = s, .d = 64, .causal = causal, .dtype = FT_FP16 },
		.mode = "timed",
		.strategy = "exhaustive",
		.seed = 7,
		.budget = -1,
		.timing = "warm",
	};
	return r;
}

static long long begin_run(struct ft_db *db, const struct ft_run *r)
{
	struct ft_err err = { 0 };
	long long id = -1;

	if (ft_db_run_begin(db, r, &id, &err))
		fail_msg("run_begin: %s", err.msg);
	assert_true(id > 0);
	return id;
}

static void put(struct ft_db *db, long long run, const char *key, const char *config,
		enum ft_status st, double median)
{
	struct ft_trial t;
	struct ft_err err = { 0 };

	ft_trial_init(&t);
	snprintf(t.config, sizeof(t.config), "%s", config);
	t.status = st;
	t.t_median_us = median;
	t.t_min_us = median * 0.9;
	t.threads = 128;
	t.grid[0] = 4;
	t.grid[1] = 8;
	t.grid[2] = 1;
	t.combine_threads = 0;
	t.smem_model = 24576;
	if (ft_db_trials_put(db, run, key, &t, 1, &err))
		fail_msg("trials_put: %s", err.msg);
}

/* A row collector for ft_db_query: keeps one column of each row, and checks
 * that every row has the same column names. */
struct rows {
	const char *want;	/* column to keep */
	int n;
	int ncols;
	char vals[64][128];
	int types[64];
	char first_names[64][32];
	int stop_after;		/* 0: never stop */
};

/* A row reader that runs out of memory on its first row. */
static int refuse_row(void *ctx, int ncols, const char *const *names, const char *const *values,
		      const int *types)
{
	(void)ncols, (void)names, (void)values, (void)types;
	++*(int *)ctx;
	return FT_ROW_ERROR;
}

static int collect(void *ctx, int ncols, const char *const *names, const char *const *values,
		   const int *types)
{
	struct rows *r = ctx;
	int found = 0;

	if (r->n == 0) {
		r->ncols = ncols;
		for (int i = 0; i < ncols && i < 64; i++)
			snprintf(r->first_names[i], sizeof(r->first_names[i]), "%s", names[i]);
	}
	assert_int_equal(ncols, r->ncols);
	for (int i = 0; i < ncols; i++) {
		if (strcmp(names[i], r->want))
			continue;
		assert_true(r->n < 64);
		snprintf(r->vals[r->n], sizeof(r->vals[r->n]), "%s", values[i] ? values[i] : "NULL");
		r->types[r->n] = types[i];
		assert_int_equal(values[i] == NULL, types[i] == 0);
		found = 1;
	}
	assert_true(found);
	r->n++;
	return r->stop_after && r->n >= r->stop_after;
}

static int has_column(const struct rows *r, const char *name)
{
	for (int i = 0; i < r->ncols; i++)
		if (!strcmp(r->first_names[i], name))
			return 1;
	return 0;
}

static struct ft_query_filter any_filter(void)
{
	struct ft_query_filter f = { NULL, NULL, NULL, -1, -1, NULL, -1, -1 };
	return f;
}

/* ---- status.c --------------------------------------------------------- */

static void test_status_names(void **state)
{
	static const char *const want[] = { "rejected_constraint", "rejected_smem", "compile_failed",
					    "spills", "compiled", "ok", "wrong_result", "crashed", "timeout",
					    "not_in_recording", "accepted", "cut" };
	enum ft_status s;

	(void)state;
	assert_int_equal(sizeof(want) / sizeof(want[0]), FT_ST_COUNT);
	for (int i = 0; i < FT_ST_COUNT; i++) {
		assert_string_equal(ft_status_name((enum ft_status)i), want[i]);
		assert_int_equal(ft_status_parse(want[i], &s), 0);
		assert_int_equal(s, i);
	}
	assert_int_equal(ft_status_parse("OK", &s), -1);
	assert_int_equal(ft_status_parse("", &s), -1);
	assert_int_equal(ft_status_parse(NULL, &s), -1);
	assert_int_equal(ft_status_parse("ok ", &s), -1);
	assert_int_equal(ft_status_parse("ok", &s), 0);
	assert_int_equal(s, FT_ST_OK);
	/* out of range: printable, but not a storable name */
	assert_int_equal(ft_status_parse(ft_status_name(FT_ST_COUNT), &s), -1);
}

static void test_trial_init(void **state)
{
	struct ft_trial t;

	(void)state;
	memset(&t, 0x5a, sizeof(t));
	ft_trial_init(&t);
	assert_string_equal(t.config, "");
	assert_string_equal(t.reason, "");
	assert_string_equal(t.compile_key, "");
	assert_null(t.log);
	assert_true(isnan(t.t_median_us) && isnan(t.t_min_us) && isnan(t.t_p90_us));
	assert_true(isnan(t.rel_err) && isnan(t.compile_ms) && isnan(t.t_spread));
	assert_int_equal(t.res.regs, -1);
	assert_int_equal(t.res.smem_static, -1);
	assert_int_equal(t.res.stack_bytes, -1);
	assert_int_equal(t.res.spill_stores, -1);
	assert_int_equal(t.res.spill_loads, -1);
	assert_int_equal(t.threads, -1);
	assert_int_equal(t.grid[2], -1);
	assert_int_equal(t.samples, 0);
	assert_int_equal(t.values[FT_MAX_PARAMS - 1], 0);
}

/* ---- opening and refusals --------------------------------------------- */

static void test_fresh_file(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	long long want_id = ('F' << 24) | ('a' << 16) | ('T' << 8) | 'n';

	ft_db_close(db);
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), ft_db_schema_version());
	assert_int_equal(ft_db_schema_version(), 1 + ft_sql_migration_count);
	assert_int_equal(raw_int(fx->path, "PRAGMA application_id"), want_id);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM sqlite_master WHERE name IN"
					   " ('runs', 'trials', 'best', 'trials_by_key')"), 4);
	/* WAL is a property of the file: a plain sqlite3 connection sees it */
	{
		sqlite3 *h;
		sqlite3_stmt *st;

		assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
		sqlite3_finalize(st);
		sqlite3_close(h);
	}
	/* opening again changes nothing */
	db = open_ok(fx->path);
	ft_db_close(db);
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), ft_db_schema_version());
}

static void test_missing_without_create(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = (struct ft_db *)1;
	struct ft_err err = { 0 };
	char want[256];

	assert_int_equal(ft_db_open(&db, fx->path, 0, &err), -1);
	assert_null(db);
	assert_int_equal(err.status, FT_EINPUT);
	snprintf(want, sizeof(want), "no tuning database at '%s': run 'fatune search' first or pass --db",
		 fx->path);
	assert_string_equal(err.msg, want);
	assert_int_equal(access(fx->path, F_OK), -1);
}

/* Opens path (both with and without create) and expects a refusal whose
 * message contains want, with the file left byte for byte as it was. */
static void expect_refused(const char *path, const char *want)
{
	size_t n0, n1;
	char *before = test_read_file(path, &n0);

	for (int create = 0; create < 2; create++) {
		struct ft_db *db = NULL;
		struct ft_err err = { 0 };
		char *after;

		assert_int_equal(ft_db_open(&db, path, create, &err), -1);
		assert_null(db);
		assert_int_equal(err.status, FT_EFAIL);
		if (!strstr(err.msg, want))
			fail_msg("message '%s' lacks '%s'", err.msg, want);
		assert_non_null(strstr(err.msg, path));
		after = test_read_file(path, &n1);
		assert_int_equal(n0, n1);
		assert_memory_equal(before, after, n0);
		free(after);
	}
	free(before);
}

static void test_garbage_refused(void **state)
{
	struct fx *fx = *state;
	unsigned char junk[8192];
	uint32_t x = 12345;

	/* deterministic noise, plus some text a user might have put there */
	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (unsigned char)(x >> 16);
	}
	memcpy(junk, "not a database, just notes\n", 27);
	write_all(fx->path, junk, sizeof(junk));
	expect_refused(fx->path, "is corrupt or not a database");
	expect_refused(fx->path, "nothing was written to it: recover what it holds with 'sqlite3 ");
}

static void test_corrupt_sqlite_refused(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_run r = sample_run("", "k", 512, 0);
	size_t n;
	char *buf;

	begin_run(db, &r);
	ft_db_close(db);
	buf = test_read_file(fx->path, &n);
	assert_true(n >= 4096);
	/* keep the 100-byte header (so it still looks like SQLite), wreck the
	 * schema page that follows it */
	memset(buf + 100, 0xee, 3000);
	write_all(fx->path, buf, n);
	free(buf);
	expect_refused(fx->path, "is corrupt or not a database");
}

/* Damage met after a successful open (here: the trials table's page wrecked
 * under an open connection) stops the writer: the failing write and every
 * later one give the damage message, and the file is not written again. */
static void test_damage_found_later(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_run r = sample_run("", "k", 512, 0);
	struct ft_trial t;
	struct ft_err err = { 0 };
	long long run = begin_run(db, &r), root, page;
	size_t n0, n1;
	char *before, *after, junk[512];
	FILE *f;

	put(db, run, "k", "A=1", FT_ST_OK, 10.0);
	ft_db_close(db);	/* checkpoints: every page is in the file itself */
	root = raw_int(fx->path, "SELECT rootpage FROM sqlite_master WHERE name = 'trials'");
	page = raw_int(fx->path, "PRAGMA page_size");
	db = open_ok(fx->path);	/* passes the check, has not read the trials page yet */
	memset(junk, 0xa5, sizeof(junk));
	f = fopen(fx->path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (root - 1) * page, SEEK_SET), 0);
	assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	assert_int_equal(fclose(f), 0);
	before = test_read_file(fx->path, &n0);

	ft_trial_init(&t);
	strcpy(t.config, "A=2");
	t.status = FT_ST_OK;
	assert_int_equal(ft_db_trials_put(db, run, "k", &t, 1, &err), -1);
	if (!strstr(err.msg, "is corrupt or not a database") || !strstr(err.msg, "fatune stopped before writing more") ||
	    !strstr(err.msg, ".recover > fixed.sql"))
		fail_msg("unexpected message: %s", err.msg);
	ft_err_clear(&err);
	assert_int_equal(ft_db_run_finish(db, run, "failed", 1.0, &err), -1);
	assert_non_null(strstr(err.msg, "found earlier on this connection"));
	ft_db_close(db);
	after = test_read_file(fx->path, &n1);
	assert_int_equal(n0, n1);
	assert_memory_equal(before, after, n0);
	free(before);
	free(after);
	/* and the next open refuses it before writing anything */
	expect_refused(fx->path, "nothing was written to it");
}

static void test_foreign_refused(void **state)
{
	struct fx *fx = *state;

	raw_exec(fx->path, "PRAGMA application_id = 1234; CREATE TABLE notes (x); INSERT INTO notes VALUES (1)");
	expect_refused(fx->path, "another application (SQLite application_id 0x000004d2");
}

static void test_plain_sqlite_refused(void **state)
{
	struct fx *fx = *state;

	raw_exec(fx->path, "CREATE TABLE notes (x); INSERT INTO notes VALUES ('keep me')");
	expect_refused(fx->path, "not a fatune one");
}

static void test_newer_refused(void **state)
{
	struct fx *fx = *state;
	char sql[64], want[128];
	int newer = ft_db_schema_version() + 5;

	ft_db_close(open_ok(fx->path));
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", newer);
	raw_exec(fx->path, sql);
	snprintf(want, sizeof(want), "written by a newer fatune (schema %d > %d): upgrade fatune", newer,
		 ft_db_schema_version());
	expect_refused(fx->path, want);
}

/* ---- migrations --------------------------------------------------------- */

static void make_v1_file(const char *path)
{
	struct ft_db *db = open_ok(path);
	struct ft_run r = sample_run("", "k1", 512, 0);

	assert_int_equal(ft_db_schema_version(), 1);
	begin_run(db, &r);
	ft_db_close(db);
	assert_int_equal(raw_int(path, "PRAGMA user_version"), 1);
}

static void test_migrations_apply_in_order(void **state)
{
	struct fx *fx = *state;
	/* 003 only works after 002: order is observable */
	static const struct ft_sql_migration two[] = {
		{ "002_add_notes.sql", "CREATE TABLE notes (run_id INTEGER REFERENCES runs (id));" },
		{ "003_notes_text.sql",
		  "ALTER TABLE notes ADD COLUMN text TEXT;"
		  "INSERT INTO notes SELECT id, 'migrated ' || arch FROM runs;" },
		{ NULL, NULL },
	};

	ft_db_test_set_migrations(ft_sql_migrations);
	if (ft_sql_migration_count)
		skip();	/* a real v2 exists: its own upgrade test replaces this one */
	make_v1_file(fx->path);
	ft_db_test_set_migrations(two);
	assert_int_equal(ft_db_schema_version(), 3);
	ft_db_close(open_ok(fx->path));
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 3);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM notes WHERE text = 'migrated sm_90'"), 1);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM runs"), 1);
	/* a new file gets the same end state */
	unlink(fx->path);
	ft_db_close(open_ok(fx->path));
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 3);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM pragma_table_info('notes')"), 2);
}

static void test_failed_migration_rolls_back(void **state)
{
	struct fx *fx = *state;
	static const struct ft_sql_migration bad[] = {
		{ "002_ok.sql", "CREATE TABLE notes (x);" },
		{ "003_broken.sql", "ALTER TABLE no_such_table ADD COLUMN y;" },
		{ NULL, NULL },
	};
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };

	if (ft_sql_migration_count)
		skip();
	make_v1_file(fx->path);
	ft_db_test_set_migrations(bad);
	assert_int_equal(ft_db_open(&db, fx->path, 1, &err), -1);
	assert_null(db);
	assert_int_equal(err.status, FT_EFAIL);
	assert_non_null(strstr(err.msg, "upgrading schema 2 to 3"));
	assert_non_null(strstr(err.msg, "003_broken.sql"));
	assert_non_null(strstr(err.msg, "no_such_table"));
	/* all or nothing: 002's table is gone with the failed 003 */
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 1);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM sqlite_master WHERE name = 'notes'"), 0);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM runs"), 1);
}

static void test_migration_gap_refused(void **state)
{
	struct fx *fx = *state;
	static const struct ft_sql_migration gap[] = {
		{ "003_skips_two.sql", "CREATE TABLE notes (x);" },
		{ NULL, NULL },
	};
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };

	if (ft_sql_migration_count)
		skip();
	make_v1_file(fx->path);
	ft_db_test_set_migrations(gap);
	assert_int_equal(ft_db_open(&db, fx->path, 1, &err), -1);
	assert_non_null(strstr(err.msg, "'003_skips_two.sql' is out of sequence"));
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 1);
}

/* 005_cut_status.sql rebuilds trials for its longer CHECK list: rows, ids,
 * stages and the best row's trial id survive; 'cut' is storable only after it. */
static void test_cut_status_migration(void **state)
{
	struct fx *fx = *state;
	struct ft_sql_migration upto4[4] = { { NULL, NULL }, { NULL, NULL }, { NULL, NULL }, { NULL, NULL } };
	const char *put = "INSERT INTO trials (run_id, search_key, config, status, created_at, stage)"
			  " VALUES (1, 'k', 'A=2', 'cut', 'now', 'timed')";
	struct ft_db *db;

	if (ft_sql_migration_count < 4)
		skip();
	for (int i = 0; i < 3; i++)
		upto4[i] = ft_sql_migrations[i];
	ft_db_test_set_migrations(upto4);
	db = open_ok(fx->path);
	ft_db_close(db);
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 4);
	raw_exec(fx->path,
		 "INSERT INTO runs (id, started_at, fatune_version, arch, template_name, search_key,"
		 " b, h, s, d, dtype, causal) VALUES (1, 'now', 'v', 'sm_90', 'a', 'k', 1, 8, 512, 64,"
		 " 'fp16', 0);"
		 "INSERT INTO trials (id, run_id, search_key, config, status, t_median_us, created_at,"
		 " device_index, device, stage) VALUES (7, 1, 'k', 'A=1', 'ok', 5.5, 'now', 0, 'gpu',"
		 " 'timed');"
		 "INSERT INTO best (arch, device, space_name, template_hash, template_name, b, h, s, d,"
		 " s_kv, h_kv, dtype, causal, config, fatune_version, run_id, trial_id, updated_at)"
		 " VALUES ('sm_90', 'gpu', 'a', '', 'a', 1, 8, 512, 64, 512, 8, 'fp16', 0, 'A=1', 'v', 1,"
		 " 7, 'now')");
	{
		sqlite3 *h;
		assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
		assert_int_not_equal(sqlite3_exec(h, put, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(h);
	}
	ft_db_test_set_migrations(NULL);
	ft_db_close(open_ok(fx->path));
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), ft_db_schema_version());
	assert_int_equal(raw_int(fx->path, "SELECT trial_id FROM best"), 7);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE id = 7 AND device = 'gpu'"
					   " AND t_median_us = 5.5 AND status = 'ok' AND stage = 'timed'"), 1);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM sqlite_master WHERE name IN"
					   " ('trials_by_key', 'trials_by_run', 'trials_v5', 'best_trial_v5')"), 2);
	raw_exec(fx->path, put);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE status = 'cut'"), 1);
}

/* ---- runs and trials ---------------------------------------------------- */

static void test_trial_roundtrip(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_run r = sample_run("NVIDIA H200", "key-a", 512, 1);
	struct ft_trial t, got;
	struct ft_err err = { 0 };
	long long run = begin_run(db, &r);
	/* quotes and SQL in a value must be stored, not executed */
	const char *evil = "TILE_M=64,X='); DROP TABLE trials; --";

	ft_trial_init(&t);
	snprintf(t.config, sizeof(t.config), "%s", evil);
	t.status = FT_ST_OK;
	snprintf(t.reason, sizeof(t.reason), "line one\nline \"two\"");
	t.log = "ptxas info: 0 bytes spill";
	snprintf(t.compile_key, sizeof(t.compile_key), "fedcba9876543210");
	t.smem_model = 40960;
	t.threads = 256;
	t.grid[0] = 8;
	t.grid[1] = 8;
	t.grid[2] = 1;
	t.combine_threads = 0;
	t.combine_grid[0] = 0;
	t.res.regs = 96;
	t.res.smem_static = 40960;
	t.res.stack_bytes = 0;
	t.res.spill_stores = 0;
	/* spill_loads stays -1: unknown */
	t.compile_ms = 812.5;
	t.rel_err = 3.0517578125e-4;
	t.t_median_us = 10.25;
	t.t_min_us = 9.75;
	t.t_p90_us = 11.5;
	/* t_spread stays NaN */
	t.samples = 200;
	assert_int_equal(ft_db_trials_put(db, run, "key-a", &t, 1, &err), 0);

	assert_int_equal(ft_db_trial_latest(db, "key-a", evil, &got, &err), 1);
	assert_string_equal(got.config, evil);
	assert_int_equal(got.status, FT_ST_OK);
	assert_string_equal(got.reason, t.reason);
	assert_null(got.log);
	assert_string_equal(got.compile_key, t.compile_key);
	assert_int_equal(got.smem_model, 40960);
	assert_int_equal(got.threads, 256);
	assert_int_equal(got.grid[0], 8);
	assert_int_equal(got.grid[2], 1);
	assert_int_equal(got.combine_threads, 0);
	assert_int_equal(got.combine_grid[0], 0);
	assert_int_equal(got.combine_grid[1], -1);
	assert_int_equal(got.res.regs, 96);
	assert_int_equal(got.res.stack_bytes, 0);
	assert_int_equal(got.res.spill_loads, -1);
	assert_true(got.compile_ms == t.compile_ms);
	assert_true(got.rel_err == t.rel_err);
	assert_true(got.t_median_us == t.t_median_us);
	assert_true(got.t_min_us == t.t_min_us);
	assert_true(got.t_p90_us == t.t_p90_us);
	assert_true(isnan(got.t_spread));
	assert_int_equal(got.samples, 200);
	ft_db_close(db);

	/* unknowns are NULL in the file, the log is kept, the table survived */
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE t_spread IS NULL"
					   " AND spill_loads IS NULL AND combine_grid_y IS NULL"), 1);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE log = 'ptxas info: 0 bytes spill'"), 1);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE created_at GLOB"
					   " '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'"), 1);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM runs WHERE device = 'NVIDIA H200' AND"
					   " causal = 1 AND s = 512 AND dtype = 'fp16' AND budget = -1 AND finished_at IS NULL"), 1);
}

static void test_trial_latest_and_batch(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_run r = sample_run("", "key-b", 512, 0);
	struct ft_trial batch[3], got;
	struct ft_err err = { 0 };
	long long run = begin_run(db, &r);

	assert_int_equal(ft_db_trial_latest(db, "key-b", "A=1", &got, &err), 0);
	for (int i = 0; i < 3; i++) {
		ft_trial_init(&batch[i]);
		snprintf(batch[i].config, sizeof(batch[i].config), "A=%d", i == 2 ? 1 : i + 1);
		batch[i].status = i == 2 ? FT_ST_TIMEOUT : FT_ST_COMPILED;
	}
	assert_int_equal(ft_db_trials_put(db, run, "key-b", batch, 3, &err), 0);
	/* the later of the two A=1 trials wins; another key sees nothing */
	assert_int_equal(ft_db_trial_latest(db, "key-b", "A=1", &got, &err), 1);
	assert_int_equal(got.status, FT_ST_TIMEOUT);
	assert_int_equal(ft_db_trial_latest(db, "key-b", "A=2", &got, &err), 1);
	assert_int_equal(got.status, FT_ST_COMPILED);
	assert_int_equal(ft_db_trial_latest(db, "key-c", "A=1", &got, &err), 0);

	/* a bad status anywhere in a batch stores nothing of it */
	batch[1].status = (enum ft_status)FT_ST_COUNT;
	assert_int_equal(ft_db_trials_put(db, run, "key-b", batch, 3, &err), -1);
	assert_int_equal(err.status, FT_EFAIL);
	assert_non_null(strstr(err.msg, "'A=2' has status"));
	/* a trial of a run that does not exist breaks the foreign key: the batch
	 * is rolled back as a whole */
	batch[1].status = FT_ST_OK;
	assert_int_equal(ft_db_trials_put(db, run + 100, "key-b", batch, 3, &err), -1);
	assert_non_null(strstr(err.msg, "FOREIGN KEY"));
	assert_int_equal(ft_db_run_finish(db, run, "done", 1.5, &err), 0);
	assert_int_equal(ft_db_run_finish(db, run + 100, "done", 1.5, &err), -1);
	assert_int_equal(ft_db_run_finish(db, run, "exploded", 1.5, &err), -1);
	assert_non_null(strstr(err.msg, "CHECK constraint"));
	ft_db_close(db);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials"), 3);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM runs WHERE outcome = 'done' AND"
					   " wall_s = 1.5 AND finished_at >= started_at"), 1);
}

/* Trials stored 16 to a statement (db.c put_trials): every row as given, in
 * the given order, a whole batch or nothing; with only_new, a config already
 * stored, or earlier in the batch (within and across the 16), left out. */
static void test_trial_batches_of_rows(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_run r = sample_run("", "key-m", 512, 0);
	struct ft_trial t[40], got;
	struct ft_err err = { 0 };
	long long run = begin_run(db, &r);

	for (int i = 0; i < 40; i++) {
		ft_trial_init(&t[i]);
		snprintf(t[i].config, sizeof(t[i].config), "M=%d", i);
		snprintf(t[i].reason, sizeof(t[i].reason), "reason %d", i);
		t[i].status = i % 2 ? FT_ST_REJECTED_CONSTRAINT : FT_ST_REJECTED_SMEM;
		t[i].smem_model = 1000 + i;
		t[i].threads = i;
	}
	/* 37: two statements of 16, then 5 one by one */
	assert_int_equal(ft_db_trials_put(db, run, "key-m", t, 37, &err), 0);
	for (int i = 0; i < 37; i++) {
		assert_int_equal(ft_db_trial_latest(db, "key-m", t[i].config, &got, &err), 1);
		assert_int_equal(got.status, t[i].status);
		assert_string_equal(got.reason, t[i].reason);
		assert_int_equal(got.smem_model, 1000 + i);
		assert_int_equal(got.threads, i);
	}
	/* only_new: 37 stored, 3 new, one of them (M=38) twice; then a batch of
	 * 20 new ones with a repeat inside the first 16 and one across them */
	snprintf(t[39].config, sizeof(t[39].config), "M=38");
	assert_int_equal(ft_db_trials_put_new(db, run, "key-m", t, 40, &err), 0);
	for (int i = 0; i < 20; i++)
		snprintf(t[i].config, sizeof(t[i].config), "N=%d", i == 5 ? 2 : i == 17 ? 3 : i);
	assert_int_equal(ft_db_trials_put_new(db, run, "key-m", t, 20, &err), 0);
	/* a broken row inside a statement of 16 (no such run) rolls the batch back */
	for (int i = 0; i < 20; i++)
		snprintf(t[i].config, sizeof(t[i].config), "R=%d", i);
	assert_int_equal(ft_db_trials_put(db, run + 100, "key-m", t, 20, &err), -1);
	assert_non_null(strstr(err.msg, "FOREIGN KEY"));
	assert_non_null(strstr(err.msg, "'R=0' or one of the 15 after it"));
	ft_db_close(db);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE config GLOB 'M=*'"), 39);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE config GLOB 'N=*'"), 18);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE config GLOB 'R=*'"), 0);
	/* ids in the order given: M=0..M=38, then N=0.. */
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials a JOIN trials b ON b.id = a.id + 1"
					   " WHERE a.config GLOB 'M=*' AND b.config GLOB 'M=*' AND"
					   " CAST(substr(b.config, 3) AS INTEGER) != CAST(substr(a.config, 3) AS INTEGER) + 1"), 0);
	assert_int_equal(raw_int(fx->path, "SELECT max(id) FROM trials WHERE config GLOB 'M=*'") + 1,
			 raw_int(fx->path, "SELECT min(id) FROM trials WHERE config GLOB 'N=*'"));
}

/* Another connection holding the write lock (sqlite3 itself, BEGIN
 * IMMEDIATE) until the time in ms after it took it. */
struct holder {
	const char *path;
	int hold_ms;
	volatile int held;
};

static void *hold_lock(void *arg)
{
	struct holder *h = arg;
	sqlite3 *c;
	struct timespec ts = { h->hold_ms / 1000, (long)(h->hold_ms % 1000) * 1000000L };

	if (sqlite3_open(h->path, &c) != SQLITE_OK || sqlite3_exec(c, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return NULL;
	h->held = 1;
	nanosleep(&ts, NULL);
	sqlite3_exec(c, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(c);
	return NULL;
}

/* ft_db_trials_put_if_free: with the lock held elsewhere it stores nothing
 * and returns 1 at once; the connection's wait is back afterwards (a plain
 * put waits for the lock and succeeds); with the lock free it stores, with
 * only_new leaving out what is stored. Both waits: fatune's and SQLite's. */
static void test_trials_put_if_free(void **state)
{
	struct fx *fx = *state;

	for (int mode = 0; mode < 2; mode++) {
		struct ft_db *db;
		struct ft_run r;
		struct ft_trial t[3];
		struct ft_err err = { 0 };
		struct holder h = { fx->path, 600, 0 };
		pthread_t th;
		long long run;
		char key[16];
		double t0;

		if (mode)
			setenv("FATUNE_DB_BUSY", "sqlite", 1);
		snprintf(key, sizeof(key), "key-f%d", mode);
		r = sample_run("", key, 512, 0);
		db = open_ok(fx->path);
		run = begin_run(db, &r);
		for (int i = 0; i < 3; i++) {
			ft_trial_init(&t[i]);
			snprintf(t[i].config, sizeof(t[i].config), "F=%d", i);
			t[i].status = FT_ST_REJECTED_CONSTRAINT;
		}
		assert_int_equal(pthread_create(&th, NULL, hold_lock, &h), 0);
		while (!h.held)
			sched_yield();
		t0 = ft_mono_ms();
		assert_int_equal(ft_db_trials_put_if_free(db, run, key, t, 2, 1, &err), 1);
		assert_true(ft_mono_ms() - t0 < 300);
		/* the wait is back: this one waits for the holder, then stores */
		assert_int_equal(ft_db_trials_put(db, run, key, &t[2], 1, &err), 0);
		assert_true(ft_mono_ms() - t0 >= 300);
		assert_int_equal(pthread_join(th, NULL), 0);
		assert_int_equal(ft_db_trials_put_if_free(db, run, key, t, 3, 1, &err), 0);
		assert_int_equal(ft_db_trials_put_if_free(db, run, key, t, 2, 0, &err), 0);
		ft_db_close(db);
		unsetenv("FATUNE_DB_BUSY");
	}
	/* F=0, F=1 twice (only_new 0), F=2 once, in each of the two keys */
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE config GLOB 'F=*'"), 10);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM trials WHERE config = 'F=2'"), 2);
}

/* ---- best rows ---------------------------------------------------------- */

static void test_best_refresh_and_get(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_run r = sample_run("NVIDIA H200", "key-s", 512, 0);
	struct ft_best_key key = { "sm_90", "NVIDIA H200", "attention", r.shape };
	struct ft_best best;
	struct ft_err err = { 0 };
	long long run = begin_run(db, &r);

	/* nothing ok yet: no best row, and none appears */
	put(db, run, "key-s", "T=16", FT_ST_COMPILE_FAILED, NAN);
	assert_int_equal(ft_db_best_refresh(db, &key, "key-s", &err), 0);
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 0);

	put(db, run, "key-s", "T=32", FT_ST_OK, 12.0);
	put(db, run, "key-s", "T=64", FT_ST_OK, 9.0);	/* fastest, then re-measured wrong */
	put(db, run, "key-s", "T=128", FT_ST_OK, 10.0);
	put(db, run, "other", "T=8", FT_ST_OK, 1.0);	/* another search: ignored */
	put(db, run, "key-s", "T=64", FT_ST_WRONG_RESULT, NAN);
	assert_int_equal(ft_db_best_refresh(db, &key, "key-s", &err), 1);
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_string_equal(best.config, "T=128");
	assert_true(best.t_median_us == 10.0);
	assert_true(best.t_min_us == 9.0);
	assert_string_equal(best.arch, "sm_90");
	assert_string_equal(best.device, "NVIDIA H200");
	assert_string_equal(best.template_name, "attention");
	assert_string_equal(best.template_hash, "00112233aabbccdd");
	assert_string_equal(best.fatune_version, "0.1.0");
	assert_int_equal(best.shape.s, 512);
	assert_int_equal(best.shape.dtype, FT_FP16);
	assert_int_equal(best.threads, 128);
	assert_int_equal(best.grid[1], 8);
	assert_int_equal(best.combine_threads, 0);
	assert_int_equal(best.combine_grid[0], -1);
	assert_int_equal(best.smem_model, 24576);
	assert_int_equal(best.run_id, run);
	assert_true(isnan(best.rel_err));
	assert_int_equal(strlen(best.updated_at), 20);

	/* a faster trial later replaces it; failures later leave it alone */
	put(db, run, "key-s", "T=32", FT_ST_OK, 8.0);
	assert_int_equal(ft_db_best_refresh(db, &key, "key-s", &err), 1);
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_string_equal(best.config, "T=32");
	/* another shape, dtype or causality is another row */
	key.shape.causal = 1;
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 0);
	key.shape.causal = 0;
	key.shape.dtype = FT_BF16;
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 0);
	ft_db_close(db);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM best"), 1);
}

/* In a run with the race's final, its final rows alone decide: a config timed
 * early at higher clocks (9.0, not a finalist) does not beat the final's
 * winner (10.2); a later run without a final competes as before. */
static void test_best_final_decides(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_run r = sample_run("NVIDIA H200", "key-f", 512, 0);
	struct ft_best_key key = { "sm_90", "NVIDIA H200", "attention", r.shape };
	struct ft_best best;
	struct ft_trial t;
	struct ft_err err = { 0 };
	long long run = begin_run(db, &r), run2;
	const char *finals[] = { "T=B", "T=C" };
	const double final_us[] = { 10.5, 10.2 };

	put(db, run, "key-f", "T=A", FT_ST_OK, 9.0);
	put(db, run, "key-f", "T=B", FT_ST_OK, 9.4);
	put(db, run, "key-f", "T=C", FT_ST_OK, 9.6);
	assert_int_equal(ft_db_best_refresh(db, &key, "key-f", &err), 1);
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_string_equal(best.config, "T=A");	/* no final yet */
	for (int i = 0; i < 2; i++) {
		ft_trial_init(&t);
		snprintf(t.config, sizeof(t.config), "%s", finals[i]);
		snprintf(t.reason, sizeof(t.reason), "%s 15 samples over 3 interleaved rounds of 2 finalists",
			 FT_FINAL_REASON);
		t.status = FT_ST_OK;
		t.t_median_us = final_us[i];
		t.t_min_us = final_us[i];
		assert_int_equal(ft_db_trials_put(db, run, "key-f", &t, 1, &err), 0);
	}
	assert_int_equal(ft_db_best_refresh(db, &key, "key-f", &err), 1);
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_string_equal(best.config, "T=C");
	assert_true(best.t_median_us == 10.2);
	/* a later run without a final (resumed, --race off): its rows count */
	run2 = begin_run(db, &r);
	put(db, run2, "key-f", "T=D", FT_ST_OK, 10.0);
	assert_int_equal(ft_db_best_refresh(db, &key, "key-f", &err), 1);
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_string_equal(best.config, "T=D");
	ft_db_close(db);
}

/* A best row belongs to a space (its name) and a template hash, never to the
 * template's file name: two spaces over one .cu, and two different files both
 * called attention.cu, keep their own rows (migration 002). */
static void test_best_identity_is_the_space(void **state)
{
	static const struct {
		const char *space, *hash, *key, *config;
		double us;
	} runs[] = {
		{ "attn_a", "aaaaaaaaaaaaaaaa", "k-a", "T=16", 10.0 },	/* two spaces */
		{ "attn_b", "aaaaaaaaaaaaaaaa", "k-b", "T=32", 5.0 },	/* over one .cu */
		{ "attention", "1111111111111111", "k-c", "T=64", 7.0 },	/* attention.cu here */
		{ "mine", "2222222222222222", "k-d", "T=128", 8.0 },	/* a user's attention.cu */
	};
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_best best;
	struct ft_err err = { 0 };

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct ft_run r = sample_run("NVIDIA H200", runs[i].key, 512, 0);
		struct ft_best_key key = { "sm_90", "NVIDIA H200", runs[i].space, r.shape };
		long long run;

		r.space_name = runs[i].space;
		r.template_hash = runs[i].hash;	/* every template file is called attention.cu */
		run = begin_run(db, &r);
		put(db, run, runs[i].key, runs[i].config, FT_ST_OK, runs[i].us);
		assert_int_equal(ft_db_best_refresh(db, &key, runs[i].key, &err), 1);
	}
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct ft_best_key key = { "sm_90", "NVIDIA H200", runs[i].space,
					   sample_run("", "", 512, 0).shape };
		assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
		assert_string_equal(best.config, runs[i].config);
		assert_string_equal(best.space, runs[i].space);
		assert_string_equal(best.template_hash, runs[i].hash);
		assert_string_equal(best.template_name, "attention");
		assert_true(best.t_median_us == runs[i].us);
	}
	/* without a space: the winner across them */
	{
		struct ft_best_key key = { "sm_90", "NVIDIA H200", NULL, sample_run("", "", 512, 0).shape };
		assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
		assert_string_equal(best.space, "attn_b");
	}
	/* the same space over an edited template: a row of its own hash, and the
	 * space's current row is the latest */
	{
		struct ft_run r = sample_run("NVIDIA H200", "k-e", 512, 0);
		struct ft_best_key key = { "sm_90", "NVIDIA H200", "attn_a", r.shape };
		long long run;

		r.space_name = "attn_a";
		r.template_hash = "bbbbbbbbbbbbbbbb";
		run = begin_run(db, &r);
		put(db, run, "k-e", "T=8", FT_ST_OK, 20.0);
		assert_int_equal(ft_db_best_refresh(db, &key, "k-e", &err), 1);
		assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
		assert_string_equal(best.config, "T=8");
		assert_string_equal(best.template_hash, "bbbbbbbbbbbbbbbb");
	}
	ft_db_close(db);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM best"), 5);
	assert_int_equal(raw_int(fx->path, "SELECT count(DISTINCT space_name || template_hash) FROM best"), 5);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM best WHERE template_name = 'attention'"), 5);
}

static void test_best_ambiguous_device(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	const char *devs[2] = { "NVIDIA H200", "NVIDIA H100 80GB HBM3" };
	struct ft_best best;
	struct ft_err err = { 0 };

	for (int i = 0; i < 2; i++) {
		struct ft_run r = sample_run(devs[i], devs[i], 512, 0);
		struct ft_best_key key = { "sm_90", devs[i], "attention", r.shape };
		long long run = begin_run(db, &r);

		put(db, run, devs[i], "T=64", FT_ST_OK, 10.0 + i);
		assert_int_equal(ft_db_best_refresh(db, &key, devs[i], &err), 1);
	}
	{
		struct ft_best_key key = { "sm_90", NULL, "attention", sample_run("", "", 512, 0).shape };

		assert_int_equal(ft_db_best_get(db, &key, &best, &err), -1);
		assert_int_equal(err.status, FT_EINPUT);
		assert_non_null(strstr(err.msg, "'NVIDIA H200'"));
		assert_non_null(strstr(err.msg, "'NVIDIA H100 80GB HBM3'"));
		assert_non_null(strstr(err.msg, "pass --device NAME"));
		key.device = devs[1];
		assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
		assert_true(best.t_median_us == 11.0);
		key.arch = "sm_89";
		assert_int_equal(ft_db_best_get(db, &key, &best, &err), 0);
	}
	ft_db_close(db);
}

/* Two template families tune one shape: each space keeps its own best row
 * (named by space, family and template), the winner across spaces is the
 * fastest current row and says which space won, --space's lookup takes that
 * space's row, and a space's outdated template (an older template hash) no
 * longer competes even when it was faster. */
static long long family_run(struct ft_db *db, const char *space, const char *family,
			    const char *hash, const char *key)
{
	struct ft_run r = sample_run("NVIDIA H100 80GB HBM3", key, 2048, 0);

	r.template_name = space;
	r.space_name = space;
	r.family = family;
	r.template_hash = hash;
	r.space_path = !strcmp(family, "wgmma") ? "search_spaces/attention_sm90.yaml"
						: "search_spaces/attention.yaml";
	r.abi = 2;
	return begin_run(db, &r);
}

static void refresh_space(struct ft_db *db, const char *space, const char *key)
{
	struct ft_best_key k = { "sm_90", "NVIDIA H100 80GB HBM3", space,
				 sample_run("", "", 2048, 0).shape };
	struct ft_err err = { 0 };

	if (ft_db_best_refresh(db, &k, key, &err) != 1)
		fail_msg("refresh %s: %s", space, err.msg);
}

static void expect_winner(struct ft_db *db, const char *space, const char *want_space,
			  const char *want_family, const char *want_config, double want_us)
{
	struct ft_best_key k = { "sm_90", NULL, space, sample_run("", "", 2048, 0).shape };
	struct ft_best b;
	struct ft_err err = { 0 };

	if (ft_db_best_get(db, &k, &b, &err) != 1)
		fail_msg("best_get(%s): %s", space ? space : "any space", err.msg);
	assert_string_equal(b.space, want_space);
	assert_string_equal(b.family, want_family);
	assert_string_equal(b.template_name, want_space);
	assert_string_equal(b.config, want_config);
	assert_true(b.t_median_us == want_us);
	assert_string_equal(b.space_path, !strcmp(want_family, "wgmma") ? "search_spaces/attention_sm90.yaml"
									 : "search_spaces/attention.yaml");
}

static void test_best_across_spaces(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_query_filter f = any_filter();
	struct ft_err err = { 0 };
	struct rows rows = { .want = "space" };
	long long mma = family_run(db, "attention", "mma", "00112233aabbccdd", "k-mma");
	long long wg = family_run(db, "attention_sm90", "wgmma", "4455667788990011", "k-wg");
	long long wg2;

	put(db, mma, "k-mma", "TILE_M=64", FT_ST_OK, 400.0);
	put(db, mma, "k-mma", "TILE_M=128", FT_ST_OK, 380.0);
	put(db, wg, "k-wg", "NUM_CONSUMER_WG=2", FT_ST_OK, 220.0);
	put(db, wg, "k-wg", "NUM_CONSUMER_WG=3", FT_ST_OK, 240.0);
	put(db, wg, "k-wg", "NUM_CONSUMER_WG=1", FT_ST_WRONG_RESULT, NAN);
	refresh_space(db, "attention", "k-mma");
	refresh_space(db, "attention_sm90", "k-wg");
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM best"), 2);

	/* the winner across spaces is wgmma's, and says so; each space keeps its own */
	expect_winner(db, NULL, "attention_sm90", "wgmma", "NUM_CONSUMER_WG=2", 220.0);
	expect_winner(db, "attention", "attention", "mma", "TILE_M=128", 380.0);
	expect_winner(db, "attention_sm90", "attention_sm90", "wgmma", "NUM_CONSUMER_WG=2", 220.0);

	/* query --best: one row per space, fastest first, each naming its family */
	f.shape = &(struct ft_shape){ 1, 8, 2048, 64, 0, FT_FP16, 2048, 8, FT_LAYOUT_BHSD };
	assert_int_equal(ft_db_query(db, FT_Q_BEST, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 2);
	assert_string_equal(rows.vals[0], "attention_sm90");
	assert_string_equal(rows.vals[1], "attention");
	memset(&rows, 0, sizeof(rows));
	rows.want = "family";
	assert_int_equal(ft_db_query(db, FT_Q_BEST, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 2);
	assert_string_equal(rows.vals[0], "wgmma");
	assert_string_equal(rows.vals[1], "mma");

	/* mma improves past it: the winner follows */
	put(db, mma, "k-mma", "TILE_M=32", FT_ST_OK, 200.0);
	refresh_space(db, "attention", "k-mma");
	expect_winner(db, NULL, "attention", "mma", "TILE_M=32", 200.0);

	/* the wgmma template changes (new hash) and its new best is slower than its old
	 * one: the old template's row no longer counts, for the space or across spaces */
	wg2 = family_run(db, "attention_sm90", "wgmma", "ffeeddccbbaa9988", "k-wg2");
	put(db, wg2, "k-wg2", "NUM_CONSUMER_WG=2", FT_ST_OK, 150.0);
	refresh_space(db, "attention_sm90", "k-wg2");
	expect_winner(db, NULL, "attention_sm90", "wgmma", "NUM_CONSUMER_WG=2", 150.0);
	put(db, wg2, "k-wg2", "NUM_CONSUMER_WG=2", FT_ST_OK, 260.0); /* re-measured slower */
	refresh_space(db, "attention_sm90", "k-wg2");
	expect_winner(db, "attention_sm90", "attention_sm90", "wgmma", "NUM_CONSUMER_WG=2", 260.0);
	expect_winner(db, NULL, "attention", "mma", "TILE_M=32", 200.0);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM best"), 3);
	ft_db_close(db);
}

/* ---- queries ------------------------------------------------------------ */

static void test_query_trials_order_and_filters(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_run r1 = sample_run("", "q1", 512, 0), r2 = sample_run("", "q2", 2048, 1);
	struct ft_query_filter f = any_filter();
	struct ft_err err = { 0 };
	struct rows rows = { .want = "config" };
	long long a = begin_run(db, &r1), b = begin_run(db, &r2);
	const char *want_all[] = { "C=3", "C=1", "C=2", "C=4", "D=2", "D=1" };

	put(db, a, "q1", "C=1", FT_ST_OK, 20.0);
	put(db, a, "q1", "C=2", FT_ST_REJECTED_SMEM, NAN);
	put(db, a, "q1", "C=3", FT_ST_OK, 5.0);
	put(db, a, "q1", "C=4", FT_ST_CRASHED, NAN);
	put(db, b, "q2", "D=1", FT_ST_SPILLS, NAN);
	put(db, b, "q2", "D=2", FT_ST_OK, 50.0);

	/* run, then median time, untimed last (in insertion order) */
	assert_int_equal(ft_db_query(db, FT_Q_TRIALS, NULL, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 6);
	for (int i = 0; i < 6; i++)
		assert_string_equal(rows.vals[i], want_all[i]);
	for (const char *const *c = (const char *const[]){ "id", "run_id", "arch", "shape", "dtype", "causal",
							  "config", "status", "reason", "regs", "smem_static",
							  "smem_model", "spill_stores", "spill_loads", "compile_ms",
							  "rel_err", "t_median_us", "t_min_us", "t_p90_us", NULL };
	     *c; c++)
		if (!has_column(&rows, *c))
			fail_msg("trial rows lack column '%s'", *c);

	memset(&rows, 0, sizeof(rows));
	rows.want = "t_median_us";
	f.status = "ok";
	assert_int_equal(ft_db_query(db, FT_Q_TRIALS, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 3);
	assert_int_equal(rows.types[0], 2);
	assert_true(strtod(rows.vals[0], NULL) == 5.0);

	memset(&rows, 0, sizeof(rows));
	rows.want = "shape";
	f = any_filter();
	f.causal = 1;
	assert_int_equal(ft_db_query(db, FT_Q_TRIALS, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 2);
	assert_string_equal(rows.vals[0], "1x8x2048x64");
	assert_int_equal(rows.types[0], 3);

	memset(&rows, 0, sizeof(rows));
	rows.want = "config";
	f = any_filter();
	f.run_id = a;
	f.limit = 2;
	assert_int_equal(ft_db_query(db, FT_Q_TRIALS, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 2);
	assert_string_equal(rows.vals[1], "C=1");

	memset(&rows, 0, sizeof(rows));
	rows.want = "config";
	rows.stop_after = 1;
	assert_int_equal(ft_db_query(db, FT_Q_TRIALS, NULL, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 1);

	/* a reader that cannot take a row fails the query: no silent partial result */
	{
		int calls = 0;
		err = (struct ft_err){ 0 };
		assert_int_equal(ft_db_query(db, FT_Q_TRIALS, NULL, refuse_row, &calls, &err), -1);
		assert_int_equal(calls, 1);
		assert_int_equal(err.status, FT_EFAIL);
		assert_non_null(strstr(err.msg, "out of memory"));
	}

	memset(&rows, 0, sizeof(rows));
	rows.want = "config";
	f = any_filter();
	f.shape = &r1.shape;
	f.dtype = FT_FP16;
	f.arch = "sm_90";
	assert_int_equal(ft_db_query(db, FT_Q_TRIALS, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 4);
	f.arch = "sm_89";
	memset(&rows, 0, sizeof(rows));
	rows.want = "config";
	assert_int_equal(ft_db_query(db, FT_Q_TRIALS, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 0);
	ft_db_close(db);
}

static void test_query_runs_and_best(void **state)
{
	struct fx *fx = *state;
	struct ft_db *db = open_ok(fx->path);
	struct ft_query_filter f = any_filter();
	struct ft_err err = { 0 };
	struct rows rows = { .want = "id" };
	long long ids[3];
	const int seqs[3] = { 2048, 512, 1024 };

	for (int i = 0; i < 3; i++) {
		char key[8];
		struct ft_run r;
		struct ft_best_key k;

		snprintf(key, sizeof(key), "r%d", i);
		r = sample_run("NVIDIA H200", key, seqs[i], 0);
		k = (struct ft_best_key){ "sm_90", "NVIDIA H200", "attention", r.shape };
		ids[i] = begin_run(db, &r);
		put(db, ids[i], key, "T=64", FT_ST_OK, 3.0 * (i + 1));
		put(db, ids[i], key, "T=32", FT_ST_REJECTED_CONSTRAINT, NAN);
		assert_int_equal(ft_db_best_refresh(db, &k, key, &err), 1);
	}
	assert_int_equal(ft_db_query(db, FT_Q_RUNS, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(strtoll(rows.vals[i], NULL, 10), ids[i]);
	assert_true(has_column(&rows, "trials") && has_column(&rows, "ok") && has_column(&rows, "best_us"));

	memset(&rows, 0, sizeof(rows));
	rows.want = "trials";
	f.shape = &(struct ft_shape){ 1, 8, 1024, 64, 0, FT_FP16, 1024, 8, FT_LAYOUT_BHSD };
	assert_int_equal(ft_db_query(db, FT_Q_RUNS, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 1);
	assert_string_equal(rows.vals[0], "2");

	/* best rows: ordered by arch, then shape */
	memset(&rows, 0, sizeof(rows));
	rows.want = "shape";
	assert_int_equal(ft_db_query(db, FT_Q_BEST, NULL, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 3);
	assert_string_equal(rows.vals[0], "1x8x512x64");
	assert_string_equal(rows.vals[1], "1x8x1024x64");
	assert_string_equal(rows.vals[2], "1x8x2048x64");
	for (const char *const *c = (const char *const[]){ "arch", "device", "template", "shape", "dtype",
							  "causal", "config", "t_median_us", "t_min_us",
							  "rel_err", "threads", "grid_x", "grid_y", "grid_z",
							  "combine_threads", "combine_grid_x", "combine_grid_y",
							  "combine_grid_z", "smem_bytes", "compile_key",
							  "template_hash", "updated_at", NULL };
	     *c; c++)
		if (!has_column(&rows, *c))
			fail_msg("best rows lack column '%s'", *c);

	memset(&rows, 0, sizeof(rows));
	rows.want = "t_median_us";
	f = any_filter();
	f.device = "NVIDIA H200";
	f.causal = 0;
	f.dtype = FT_FP16;
	f.limit = 1;
	assert_int_equal(ft_db_query(db, FT_Q_BEST, &f, collect, &rows, &err), 0);
	assert_int_equal(rows.n, 1);
	assert_true(strtod(rows.vals[0], NULL) == 6.0);	/* the 512 run was second */
	ft_db_close(db);
}

/* ---- concurrency -------------------------------------------------------- */

#define WRITERS 4		/* processes writing one file at once */
#define PER_WRITER 300		/* trials each, committed one by one */

/* One writer process: its own connection and run, PER_WRITER single-trial
 * transactions. Exits 0 when every call succeeded. */
static void writer(const char *path, int w)
{
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };
	char key[16];
	struct ft_run r;
	long long run;

	snprintf(key, sizeof(key), "w%d", w);
	r = sample_run("", key, 512, 0);
	if (ft_db_open(&db, path, 1, &err) || ft_db_run_begin(db, &r, &run, &err))
		goto fail;
	for (int i = 0; i < PER_WRITER; i++) {
		struct ft_trial t;

		ft_trial_init(&t);
		snprintf(t.config, sizeof(t.config), "W=%d,I=%d", w, i);
		t.status = (enum ft_status)(i % FT_ST_ACCEPTED); /* every storable status */
		t.t_median_us = i;
		if (ft_db_trials_put(db, run, key, &t, 1, &err))
			goto fail;
	}
	if (ft_db_run_finish(db, run, "done", 0.0, &err))
		goto fail;
	ft_db_close(db);
	_exit(0);
fail:
	fprintf(stderr, "writer %d: %s\n", w, err.msg);
	_exit(1);
}

static void run_writers(const char *path)
{
	pid_t pids[WRITERS];

	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0)
			writer(path, w);
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;

		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

static void check_writers(const char *path)
{
	assert_int_equal(raw_int(path, "SELECT count(*) FROM runs WHERE outcome = 'done'"), WRITERS);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM trials"), WRITERS * PER_WRITER);
	assert_int_equal(raw_int(path, "SELECT count(DISTINCT config) FROM trials"), WRITERS * PER_WRITER);
	/* each run holds exactly its own writer's trials, each index once */
	assert_int_equal(raw_int(path, "SELECT count(*) FROM (SELECT run_id, count(*) AS n,"
				       " count(DISTINCT config) AS c, min(t_median_us) AS lo, max(t_median_us) AS hi"
				       " FROM trials GROUP BY run_id) WHERE n = 300 AND c = 300 AND lo = 0 AND hi = 299"),
			 WRITERS);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM trials t JOIN runs r ON r.id = t.run_id"
				       " WHERE t.search_key <> r.search_key OR t.config NOT LIKE"
				       " 'W=' || substr(r.search_key, 2) || ',I=%'"), 0);
}

static void test_concurrent_writers(void **state)
{
	struct fx *fx = *state;

	ft_db_close(open_ok(fx->path));	/* the file exists before they start */
	run_writers(fx->path);
	check_writers(fx->path);
}

static void test_concurrent_create(void **state)
{
	struct fx *fx = *state;

	/* no file yet: all writers race to create and initialise it */
	run_writers(fx->path);
	check_writers(fx->path);
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), ft_db_schema_version());
}

/* ---- merge (db_merge.c) --------------------------------------------------- */

static void merge_ok(struct ft_db *out, const char *const *in, int n, struct ft_merge_stats *st)
{
	struct ft_err err = { 0 };

	if (ft_db_merge(out, in, n, st, &err))
		fail_msg("merge: %s", err.msg);
}

static void test_merge(void **state)
{
	struct fx *fx = *state;
	char a[160], b[160], out[160], foreign[160];
	const char *both[2] = { a, b }, *bad[2] = { a, foreign };
	struct ft_run r = sample_run("NVIDIA H200", "key-m", 512, 0);
	struct ft_best_key key = { "sm_90", "NVIDIA H200", "attention", r.shape };
	struct ft_merge_stats st;
	struct ft_err err = { 0 };
	struct ft_best best;
	struct ft_db *db;
	long long run;
	size_t n;
	char *buf;

	snprintf(a, sizeof(a), "%s/a.db", fx->dir);
	snprintf(b, sizeof(b), "%s/b.db", fx->dir);
	snprintf(out, sizeof(out), "%s/out.db", fx->dir);
	snprintf(foreign, sizeof(foreign), "%s/foreign.db", fx->dir);
	/* a: one run with two trials; b: a copy of a whose run then gained a faster trial */
	db = open_ok(a);
	run = begin_run(db, &r);
	put(db, run, "key-m", "T=32", FT_ST_OK, 12.0);
	put(db, run, "key-m", "T=64", FT_ST_REJECTED_SMEM, NAN);
	ft_db_close(db);
	buf = test_read_file(a, &n);
	write_all(b, buf, n);
	free(buf);
	db = open_ok(b);
	put(db, run, "key-m", "T=128", FT_ST_OK, 7.0);
	ft_db_close(db);

	db = open_ok(out);
	merge_ok(db, both, 1, &st);
	assert_int_equal(st.runs_added, 1);
	assert_int_equal(st.trials_added, 2);
	assert_int_equal(st.best_rows, 1);
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_string_equal(best.config, "T=32");
	/* the same run again, with one trial more: only that trial is added, and it wins */
	merge_ok(db, both, 2, &st);
	assert_int_equal(st.runs_added, 0);
	assert_int_equal(st.runs_known, 2);
	assert_int_equal(st.trials_added, 1);
	assert_int_equal(st.trials_known, 4);
	assert_int_equal(ft_db_best_get(db, &key, &best, &err), 1);
	assert_string_equal(best.config, "T=128");
	merge_ok(db, both, 2, &st);
	assert_int_equal(st.runs_added + st.trials_added + st.best_rows, 0);
	/* a foreign input: refused before anything is written */
	raw_exec(foreign, "CREATE TABLE t(x); PRAGMA application_id = 42;");
	assert_int_equal(ft_db_merge_check(foreign, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "another application"));
	assert_int_equal(ft_db_merge(db, bad, 2, &st, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	/* the output as an input */
	assert_int_equal(ft_db_merge(db, (const char *const[]){ out }, 1, &st, &err), -1);
	assert_non_null(strstr(err.msg, "the output"));
	ft_db_close(db);
	assert_int_equal(raw_int(out, "SELECT count(*) FROM trials"), 3);
	assert_int_equal(raw_int(out, "SELECT count(*) FROM runs"), 1);
	for (const char *const *p = (const char *const[]){ a, b, out, foreign, NULL }; *p; p++) {
		char side[200];

		unlink(*p);
		snprintf(side, sizeof(side), "%s-wal", *p);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", *p);
		unlink(side);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_trial_init),
		cmocka_unit_test_setup_teardown(test_fresh_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_without_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_sqlite_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damage_found_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_sqlite_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrations_apply_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_migration_rolls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_gap_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_status_migration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trial_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trial_latest_and_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trial_batches_of_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trials_put_if_free, setup, teardown),
		cmocka_unit_test_setup_teardown(test_best_refresh_and_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_best_final_decides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_best_ambiguous_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_best_across_spaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_best_identity_is_the_space, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_trials_order_and_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_runs_and_best, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
