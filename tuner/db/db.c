/* db.c - the tuning database on SQLite: opening, migrations, runs, trials, best rows, queries.
 *
 * The contract is in db.h; the schema in db/schema.sql (version 1) and
 * db/migrations/NNN_*.sql (version NNN), compiled in by cmake/embed_sql.cmake
 * and documented in db/README.md. Every value reaches SQLite through a bound
 * parameter; the only SQL text built at run time is two PRAGMAs whose operands
 * are integers computed here. Every write runs inside BEGIN IMMEDIATE, so the
 * write lock is taken (or waited for) up front and two searches sharing a file
 * queue behind each other instead of failing with SQLITE_BUSY halfway through.
 */
#include "base/clock.h"
#include "db/db.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#include "db/db_internal.h"
#include "db/embedded_sql.h"


/* How long a connection waits for another's write lock. fatune's write
 * transactions last milliseconds (one trial row, or one best-row upsert), so
 * even a dozen searches queueing on one file wait far less than this; the
 * limit only bites when something holds the lock for good (an sqlite3 shell
 * left inside BEGIN), and then a clear error after 30 s beats hanging. */
#define BUSY_TIMEOUT_MS 30000

/* The wait for another connection's lock: SQLite has no wake-up, a waiter
 * polls. Its own handler (sqlite3_busy_timeout) sleeps 1, 2, 5, 10 ... up to
 * 100 ms between polls, made for writers that hold the lock long; fatune's
 * hold it a millisecond, and a campaign's units side by side (one connection
 * each, a write per claim, per trial and per batch of rejections) then slept
 * tens of ms for a lock that was free after one, with their GPUs idle. So
 * polls here start at 50 us and double up to 2 ms, until BUSY_TIMEOUT_MS. */
#define BUSY_POLL_FIRST_US 50
#define BUSY_POLL_MAX_US 2000

static int busy_wait(void *arg, int count)
{
	struct ft_db *db = arg;
	long us = BUSY_POLL_MAX_US;
	struct timespec ts;
	double now = ft_mono_ms();

	if (count == 0)
		db->busy_t0_ms = now;
	else if (now - db->busy_t0_ms >= BUSY_TIMEOUT_MS)
		return 0;	/* SQLITE_BUSY: the caller says who holds it */
	if (count < 6)
		us = (long)BUSY_POLL_FIRST_US << count;
	if (us > BUSY_POLL_MAX_US)
		us = BUSY_POLL_MAX_US;
	ts.tv_sec = 0;
	ts.tv_nsec = us * 1000L;
	nanosleep(&ts, NULL);
	db->busy_ms += ft_mono_ms() - now;	/* as slept, not as asked */
	return 1;
}

/* FATUNE_DB_BUSY=sqlite: SQLite's own wait instead (A/B timing only) */
static int sqlite_wait(void)
{
	const char *v = getenv("FATUNE_DB_BUSY");

	return v && !strcmp(v, "sqlite");
}

/* The connection's wait for another's lock (on 1): fatune's polls, or
 * SQLite's with FATUNE_DB_BUSY=sqlite; on 0 none (SQLITE_BUSY at once). */
static int set_wait(struct ft_db *db, int on)
{
	if (!on)
		return sqlite3_busy_handler(db->h, NULL, NULL);
	return db->sqlite_wait ? sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS) : sqlite3_busy_handler(db->h, busy_wait, db);
}

/* BEGIN IMMEDIATE only if no other connection holds the write lock: 0
 * begun, 1 held elsewhere (nothing begun), -1 with err. */
static int begin_if_free(struct ft_db *db, struct ft_err *err)
{
	int rc, rc2;

	if (db->damaged)
		return ft_dbi_damaged(err, db->path, "found earlier on this connection", 1);
	rc = set_wait(db, 0);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	rc2 = set_wait(db, 1);
	if ((rc & 0xff) == SQLITE_BUSY && rc2 == SQLITE_OK)
		return 1;
	if (rc == SQLITE_OK && rc2 != SQLITE_OK)
		ft_dbi_rollback(db);
	if (rc != SQLITE_OK || rc2 != SQLITE_OK)
		return ft_dbi_fail(db, rc != SQLITE_OK ? rc : rc2, err, "BEGIN IMMEDIATE");
	return 0;
}

double ft_db_wait_ms(const struct ft_db *db)
{
	return db ? db->busy_ms : 0;
}



/* The migrations in force: the compiled-in ones, or a test's (see below). */
static const struct ft_sql_migration *migrations = ft_sql_migrations;

/* Test hook, declared by tests/unit/test_db.c: replaces the compiled-in
 * migrations with list ({NULL, NULL}-ended; NULL restores the compiled-in
 * ones), so the runner can be tested before a real migration exists. */
void ft_db_test_set_migrations(const struct ft_sql_migration *list);

void ft_db_test_set_migrations(const struct ft_sql_migration *list)
{
	migrations = list ? list : ft_sql_migrations;
}

int ft_db_schema_version(void)
{
	int n = 0;

	while (migrations[n].name)
		n++;
	return 1 + n;
}

/* ---- errors and statement helpers ------------------------------------- */

int ft_dbi_fail(struct ft_db *db, int rc, struct ft_err *err, const char *what)
{
	const char *msg = db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc);

	switch (rc & 0xff) {
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT: {
		char detail[256];

		snprintf(detail, sizeof(detail), "%s: %s", what, msg);
		/* after the open, this connection may have committed before */
		ft_dbi_damaged(err, db->path, detail, db->opened);
		db->damaged = 1;
		return -1;
	}
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return ft_error(err, FT_EFAIL,
				"tuning database '%s' is locked by another process (%s: %s, after waiting up to %d s): end the process holding it or pass --db",
				db->path, what, msg, BUSY_TIMEOUT_MS / 1000);
	case SQLITE_FULL:
		return ft_error(err, FT_EFAIL, "%s on tuning database '%s' failed: %s: free some disk space",
				what, db->path, msg);
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_CANTOPEN:
	case SQLITE_IOERR:
		return ft_error(err, FT_EFAIL,
				"%s on tuning database '%s' failed: %s: check that the file and its directory are writable (SQLite also writes '%s-wal' and '%s-shm') or pass --db",
				what, db->path, msg, db->path, db->path);
	case SQLITE_CONSTRAINT:
		return ft_error(err, FT_EFAIL,
				"%s on tuning database '%s' broke a constraint: %s: this is a fatune bug or a hand-edited file; please report it",
				what, db->path, msg);
	default:
		return ft_error(err, FT_EFAIL, "%s on tuning database '%s' failed: %s: check the file or pass --db",
				what, db->path, msg);
	}
}

int ft_dbi_prep(struct ft_db *db, const char *sql, unsigned flags, sqlite3_stmt **st,
		const char *what, struct ft_err *err)
{
	int rc = sqlite3_prepare_v3(db->h, sql, -1, flags, st, NULL);

	if (rc != SQLITE_OK) {
		*st = NULL;
		return ft_dbi_fail(db, rc, err, what);
	}
	return 0;
}

int ft_dbi_exec(struct ft_db *db, const char *sql, const char *what, struct ft_err *err)
{
	int rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : ft_dbi_fail(db, rc, err, what);
}

int ft_dbi_begin(struct ft_db *db, struct ft_err *err)
{
	if (db->damaged)
		return ft_dbi_damaged(err, db->path, "found earlier on this connection", 1);
	return ft_dbi_exec(db, "BEGIN IMMEDIATE", "BEGIN IMMEDIATE", err);
}

int ft_dbi_commit(struct ft_db *db, struct ft_err *err)
{
	return ft_dbi_exec(db, "COMMIT", "COMMIT", err);
}

/* Undoes the open transaction after a failure already described in err. Its
 * own failure is not reported over the first one: SQLite may have rolled back
 * by itself (then there is nothing to undo), and closing the connection
 * rolls back anyway. */
void ft_dbi_rollback(struct ft_db *db)
{
	if (!sqlite3_get_autocommit(db->h))
		(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}


void ft_dbi_b_text(struct binder *b, const char *s)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = s ? sqlite3_bind_text(b->st, b->i, s, -1, SQLITE_TRANSIENT)
			  : sqlite3_bind_null(b->st, b->i);
}

/* "" means "none" for the optional keys (compile_key): stored as NULL. */
void ft_dbi_b_text_opt(struct binder *b, const char *s)
{
	ft_dbi_b_text(b, s && *s ? s : NULL);
}

void ft_dbi_b_int(struct binder *b, long long v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_int64(b->st, b->i, v);
}

/* Counts and sizes where -1 (any negative) means unknown: stored as NULL. */
void ft_dbi_b_count(struct binder *b, long long v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = v < 0 ? sqlite3_bind_null(b->st, b->i) : sqlite3_bind_int64(b->st, b->i, v);
}

/* NaN is stored as NULL (SQLite would do the same, but say so here). */
void ft_dbi_b_real(struct binder *b, double v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = isnan(v) ? sqlite3_bind_null(b->st, b->i) : sqlite3_bind_double(b->st, b->i, v);
}

/* Checks the binder: no failure, and exactly as many values as placeholders. */
int ft_dbi_b_done(struct ft_db *db, struct binder *b, const char *what, struct ft_err *err)
{
	if (b->rc != SQLITE_OK)
		return ft_dbi_fail(db, b->rc, err, what);
	if (b->i != sqlite3_bind_parameter_count(b->st))
		return ft_error(err, FT_EFAIL, "%s: bound %d values for %d placeholders: this is a fatune bug",
				what, b->i, sqlite3_bind_parameter_count(b->st));
	return 0;
}

long long ft_dbi_c_count(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

double ft_dbi_c_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Copies a text column into dst; NULL becomes "". Fails when it does not fit. */
int ft_dbi_c_text(sqlite3_stmt *st, int i, char *dst, size_t size, struct ft_err *err)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	size_t n = s ? strlen((const char *)s) : 0;

	if (n >= size)
		return ft_error(err, FT_EFAIL,
				"column '%s' holds %zu bytes, more than the %zu fatune reads: the file was edited by hand or is corrupt",
				sqlite3_column_name(st, i), n, size - 1);
	memcpy(dst, s ? (const char *)s : "", n);
	dst[n] = '\0';
	return 0;
}

/* ---- opening and migrating -------------------------------------------- */

struct db_state {
	long long app_id;	/* PRAGMA application_id */
	long long version;	/* PRAGMA user_version */
	long long objects;	/* rows of sqlite_master: 0 for a new file */
};

/* Reads the header fields and the schema size, in one statement so that all
 * three come from one snapshot (another process may be creating the file).
 * The first read of a file that is not SQLite fails here with SQLITE_NOTADB,
 * before anything is written. */
static int inspect(struct ft_db *db, struct db_state *s, struct ft_err *err)
{
	static const char sql[] = "SELECT (SELECT application_id FROM pragma_application_id),"
				  " (SELECT user_version FROM pragma_user_version),"
				  " (SELECT count(*) FROM sqlite_master)";
	sqlite3_stmt *st;
	int rc;

	if (ft_dbi_prep(db, sql, 0, &st, "reading the database header", err))
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		s->app_id = sqlite3_column_int64(st, 0);
		s->version = sqlite3_column_int64(st, 1);
		s->objects = sqlite3_column_int64(st, 2);
	} else {
		ft_dbi_fail(db, rc == SQLITE_DONE ? SQLITE_ERROR : rc, err, "reading the database header");
	}
	sqlite3_finalize(st);	/* repeats the step's error, handled above */
	return rc == SQLITE_ROW ? 0 : -1;
}

static int is_new(const struct db_state *s)
{
	return s->app_id == 0 && s->version == 0 && s->objects == 0;
}

/* Refuses files fatune must not touch; 0 when s is a new file or one of ours
 * at a version this build knows. */
static int check_state(struct ft_db *db, const struct db_state *s, struct ft_err *err)
{
	int latest = ft_db_schema_version();

	if (is_new(s))
		return 0;
	if (s->app_id == 0)
		return ft_error(err, FT_EFAIL,
				"'%s' is an SQLite database but not a fatune one (no application_id): pass --db with a fatune database",
				db->path);
	if (s->app_id != FT_DB_APPLICATION_ID)
		return ft_error(err, FT_EFAIL,
				"'%s' belongs to another application (SQLite application_id 0x%08llx, fatune's is 0x%08x): pass --db with a fatune database",
				db->path, (unsigned long long)s->app_id & 0xffffffffULL, FT_DB_APPLICATION_ID);
	if (s->version > latest)
		return ft_error(err, FT_EFAIL,
				"tuning database '%s' was written by a newer fatune (schema %lld > %d): upgrade fatune",
				db->path, s->version, latest);
	if (s->version < 1)
		return ft_error(err, FT_EFAIL,
				"tuning database '%s' has fatune's application_id but schema version %lld: it is damaged; move it away or pass --db",
				db->path, s->version);
	return 0;
}

int ft_dbi_schema_build(sqlite3 *h, long long version, struct ft_err *err)
{
	int rc = sqlite3_exec(h, ft_sql_schema, NULL, NULL, NULL);

	for (long long v = 1; rc == SQLITE_OK && v < version && migrations[v - 1].name; v++)
		rc = sqlite3_exec(h, migrations[v - 1].sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return ft_error(err, FT_EFAIL, "building schema %lld in memory failed: %s: this is a fatune bug", version,
				sqlite3_errmsg(h));
	return 0;
}

/* The schema version a migration file makes: its leading NNN, or -1. */
static long migration_version(const char *name)
{
	char *end;
	long v;

	if (name[0] < '0' || name[0] > '9')
		return -1;
	errno = 0;
	v = strtol(name, &end, 10);
	return errno || *end != '_' ? -1 : v;
}

static int set_pragma(struct ft_db *db, const char *name, long long v, struct ft_err *err)
{
	char sql[96];

	/* PRAGMAs take no bound parameters; v is an integer fatune computed */
	snprintf(sql, sizeof(sql), "PRAGMA %s = %lld", name, v);
	return ft_dbi_exec(db, sql, sql, err);
}

static int prepare_cached(struct ft_db *db, struct ft_err *err);

/* Brings a new file or an older version of ours to the latest schema. Runs in
 * one transaction: a failing step leaves the file exactly as it was, and so
 * does a file whose tables do not match its version (edited by hand): the
 * cached statements are prepared before the commit. */
static int upgrade(struct ft_db *db, struct ft_err *err)
{
	struct db_state s;
	long long v;
	int latest = ft_db_schema_version();

	if (ft_dbi_begin(db, err))
		return -1;
	/* again under the write lock: another process may have done it meanwhile */
	if (inspect(db, &s, err) || check_state(db, &s, err))
		goto fail;
	v = s.version;
	if (is_new(&s)) {
		if (ft_dbi_exec(db, ft_sql_schema, "creating the schema (db/schema.sql)", err))
			goto fail;
		v = 1;
	}
	for (; v < latest; v++) {
		const struct ft_sql_migration *m = &migrations[v - 1];

		if (migration_version(m->name) != v + 1) {
			ft_error(err, FT_EFAIL,
				 "migration '%s' is out of sequence: db/migrations/NNN_*.sql must number 002, 003, ... with no gaps (expected %03lld)",
				 m->name, v + 1);
			goto fail;
		}
		if (ft_dbi_exec(db, m->sql, m->name, err)) {
			ft_err_prefix(err, "upgrading schema %lld to %lld", v, v + 1);
			goto fail;
		}
	}
	if (prepare_cached(db, err) || set_pragma(db, "application_id", FT_DB_APPLICATION_ID, err) ||
	    set_pragma(db, "user_version", latest, err) || ft_dbi_commit(db, err))
		goto fail;
	return 0;
fail:
	ft_dbi_rollback(db);
	return -1;
}

/* Puts the file in WAL mode, which lets readers (query, export) run while a
 * search writes; the mode is stored in the file, so later opens find it set
 * and this costs nothing. Switching needs the file to itself for a moment,
 * and SQLite answers SQLITE_BUSY at once (without the busy handler) when it
 * sees others about to lock it, which happens when several searches create
 * one new file together: so it retries, backing off from 1 to 64 ms, for up
 * to the busy timeout. NORMAL sync is safe in WAL mode: a crashed process
 * loses nothing committed, a power cut at most the last trials, which a
 * resumed search measures again. */
static int use_wal(struct ft_db *db, struct ft_err *err)
{
	sqlite3_stmt *st;
	const char *mode;
	int rc, waited = 0, pause = 1;

	if (ft_dbi_prep(db, "PRAGMA journal_mode = WAL", 0, &st, "PRAGMA journal_mode", err))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_BUSY && waited < BUSY_TIMEOUT_MS) {
		sqlite3_reset(st);	/* repeats SQLITE_BUSY */
		waited += sqlite3_sleep(pause);
		pause = pause < 64 ? pause * 2 : 64;
	}
	if (rc != SQLITE_ROW) {
		ft_dbi_fail(db, rc, err, "switching to WAL mode");
		sqlite3_finalize(st);
		return -1;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	/* "memory" is what an in-memory database (":memory:") reports */
	if (!mode || (strcmp(mode, "wal") && strcmp(mode, "memory"))) {
		ft_error(err, FT_EFAIL,
			 "tuning database '%s' cannot use WAL mode (got '%s'): put it on a local file system or pass --db",
			 db->path, mode ? mode : "nothing");
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);	/* succeeded: the step returned a row */
	return 0;
}

#define PUT_TRIAL_INTO                                                                      \
	"INSERT INTO trials (run_id, search_key, config, status, reason, log, compile_key,"  \
	" smem_model, threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x,"     \
	" combine_grid_y, combine_grid_z, regs, smem_static, stack_bytes, spill_stores,"    \
	" spill_loads, compile_ms, rel_err, t_median_us, t_min_us, t_p90_us, t_spread,"     \
	" samples, workspace_bytes, device_index, device, stage, created_at) VALUES "
/* one trial's values, in bind_trial's order */
#define PUT_TRIAL_ROW                                                                       \
	"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"          \
	" ?, ?, ?, ?, ?, ?, ?, ?, " NOW_SQL ")"
#define PUT_TRIAL_ROWS_4 PUT_TRIAL_ROW ", " PUT_TRIAL_ROW ", " PUT_TRIAL_ROW ", " PUT_TRIAL_ROW
#define PUT_TRIAL_ROWS_16 PUT_TRIAL_ROWS_4 ", " PUT_TRIAL_ROWS_4 ", " PUT_TRIAL_ROWS_4 ", " PUT_TRIAL_ROWS_4

static const char sql_put_trial[] = PUT_TRIAL_INTO PUT_TRIAL_ROW;
static const char sql_put_trials[] = PUT_TRIAL_INTO PUT_TRIAL_ROWS_16;
_Static_assert(FT_DBI_PUT_ROWS == 16, "sql_put_trials holds 16 rows");

/* Columns of a trial as ft_db_trial_latest reads them (see read_trial). */
#define TRIAL_COLS                                                                          \
	"config, status, reason, compile_key, smem_model, threads, grid_x, grid_y, grid_z," \
	" combine_threads, combine_grid_x, combine_grid_y, combine_grid_z, regs,"           \
	" smem_static, stack_bytes, spill_stores, spill_loads, compile_ms, rel_err,"        \
	" t_median_us, t_min_us, t_p90_us, t_spread, samples, workspace_bytes, device_index,"   \
	" device, stage, run_id"

static const char sql_latest_trial[] =
	"SELECT " TRIAL_COLS " FROM trials WHERE search_key = ? AND config = ?"
	" ORDER BY id DESC LIMIT 1";

/* The statements every search runs (they fail to prepare on a file whose
 * tables do not match its schema version). */
static int prepare_cached(struct ft_db *db, struct ft_err *err)
{
	return ft_dbi_prep(db, sql_put_trial, SQLITE_PREPARE_PERSISTENT, &db->put_trial, "preparing the trial insert", err) ||
	       ft_dbi_prep(db, sql_put_trials, SQLITE_PREPARE_PERSISTENT, &db->put_trials,
			   "preparing the trials insert", err) ||
	       ft_dbi_prep(db, sql_latest_trial, SQLITE_PREPARE_PERSISTENT, &db->latest_trial,
			   "preparing the trial lookup", err);
}

/* ft_db_open, with the file's health check (ft_db_check) or, for another
 * connection to a file this process has open and checked, without it. */
static int open_db(struct ft_db **out, const char *path, int create, int check, struct ft_err *err)
{
	struct ft_db *db;
	struct db_state s;
	int rc, flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);

	*out = NULL;
	if (ft_db_path_ok(path, create, "tuning database", err))
		return -1;
	if (strlen(path) >= sizeof(db->path))
		return ft_error(err, FT_EINPUT, "tuning database path '%.64s...' is longer than %zu bytes: use a shorter one",
				path, sizeof(db->path) - 1);
	/* before this connection exists: nothing it does may reach a damaged file */
	if (check && ft_db_check(path, err))
		return -1;
	db = calloc(1, sizeof(*db));
	if (!db)
		return ft_error(err, FT_EFAIL, "out of memory opening tuning database '%s'", path);
	strcpy(db->path, path);

	rc = sqlite3_open_v2(path, &db->h, flags, NULL);
	if (rc != SQLITE_OK) {
		ft_dbi_fail(db, rc, err, "opening");
		goto fail;
	}
	db->sqlite_wait = sqlite_wait();
	rc = sqlite3_extended_result_codes(db->h, 1);
	/* until the file is known to be ours, closing must not checkpoint a WAL
	 * left behind into it (refusals leave the file and its WAL as they were) */
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
	if (rc == SQLITE_OK)
		rc = set_wait(db, 1);
	if (rc != SQLITE_OK) {
		ft_dbi_fail(db, rc, err, "configuring the connection");
		goto fail;
	}
	if (ft_dbi_exec(db, "PRAGMA foreign_keys = ON", "PRAGMA foreign_keys", err) || inspect(db, &s, err) ||
	    check_state(db, &s, err))
		goto fail;
	/* Only now, with the file known to be new or ours, may anything be written. */
	if ((is_new(&s) || s.version < ft_db_schema_version()) && upgrade(db, err))
		goto fail;
	/* the statements first: a file whose tables do not match its schema
	 * version (edited by hand) is refused before WAL mode is written into it */
	if (!db->put_trial && prepare_cached(db, err))
		goto fail;
	if (use_wal(db, err) || ft_dbi_exec(db, "PRAGMA synchronous = NORMAL", "PRAGMA synchronous", err))
		goto fail;
	rc = sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, (int *)NULL);
	if (rc != SQLITE_OK) {
		ft_dbi_fail(db, rc, err, "configuring the connection");
		goto fail;
	}
	db->opened = 1;
	*out = db;
	return 0;
fail:
	ft_db_close(db);
	return -1;
}

int ft_db_open(struct ft_db **out, const char *path, int create, struct ft_err *err)
{
	return open_db(out, path, create, 1, err);
}

int ft_db_open_again(const struct ft_db *db, struct ft_db **out, struct ft_err *err)
{
	/* checked when db was opened: a quick_check reads the whole file */
	return open_db(out, db->path, 0, 0, err);
}

void ft_db_close(struct ft_db *db)
{
	if (!db)
		return;
	sqlite3_finalize(db->put_trial);	/* returns the last step's error: already reported */
	sqlite3_finalize(db->put_trials);
	sqlite3_finalize(db->latest_trial);
	/* close_v2 always returns SQLITE_OK; the last connection checkpoints the WAL */
	sqlite3_close_v2(db->h);
	free(db);
}

/* ---- runs and trials --------------------------------------------------- */

static const char sql_run_begin[] =
	"INSERT INTO runs (started_at, fatune_version, arch, device, nvrtc_version, driver_version,"
	" template_name, template_hash, space_path, space_hash, search_key, b, h, s, d, dtype,"
	" causal, mode, strategy, seed, budget, timing, s_kv, h_kv, layout, space_name, family,"
	" abi, campaign)"
	" VALUES (" NOW_SQL ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
	" ?, ?, ?, ?, ?, ?, ?)";

/* Runs one bound write statement inside its own BEGIN IMMEDIATE and finalizes
 * it. *changes receives how many rows it changed and *rowid the last rowid it
 * inserted, both read before COMMIT (inside the transaction no other
 * connection writes, so they are this statement's). */
static int write_one(struct ft_db *db, sqlite3_stmt *st, struct binder *b, const char *what,
		     long long *changes, long long *rowid, struct ft_err *err)
{
	int rc;

	if (ft_dbi_b_done(db, b, what, err) || ft_dbi_begin(db, err))
		goto fail;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		ft_dbi_fail(db, rc, err, what);
		goto fail;
	}
	*changes = sqlite3_changes(db->h);
	*rowid = sqlite3_last_insert_rowid(db->h);
	if (ft_dbi_commit(db, err))
		goto fail;
	sqlite3_finalize(st);
	return 0;
fail:
	sqlite3_finalize(st);
	ft_dbi_rollback(db);
	return -1;
}

int ft_db_run_begin(struct ft_db *db, const struct ft_run *r, long long *run_id,
		    struct ft_err *err)
{
	sqlite3_stmt *st;
	struct binder b;
	long long changes;

	if (ft_dbi_prep(db, sql_run_begin, 0, &st, "preparing the run insert", err))
		return -1;
	b = (struct binder){ st, 0, SQLITE_OK };
	ft_dbi_b_text(&b, r->fatune_version);
	ft_dbi_b_text(&b, r->arch);
	ft_dbi_b_text(&b, r->device ? r->device : "");
	ft_dbi_b_text(&b, r->nvrtc_version);
	ft_dbi_b_text(&b, r->driver_version);
	ft_dbi_b_text(&b, r->template_name);
	ft_dbi_b_text(&b, r->template_hash);
	ft_dbi_b_text(&b, r->space_path);
	ft_dbi_b_text(&b, r->space_hash);
	ft_dbi_b_text(&b, r->search_key);
	ft_dbi_b_int(&b, r->shape.b);
	ft_dbi_b_int(&b, r->shape.h);
	ft_dbi_b_int(&b, r->shape.s);
	ft_dbi_b_int(&b, r->shape.d);
	ft_dbi_b_text(&b, ft_dtype_name(r->shape.dtype));
	ft_dbi_b_int(&b, r->shape.causal != 0);
	ft_dbi_b_text(&b, r->mode);
	ft_dbi_b_text(&b, r->strategy);
	ft_dbi_b_int(&b, r->seed);
	ft_dbi_b_int(&b, r->budget);
	ft_dbi_b_text(&b, r->timing);
	ft_dbi_b_int(&b, r->shape.s_kv ? r->shape.s_kv : r->shape.s);
	ft_dbi_b_int(&b, r->shape.h_kv ? r->shape.h_kv : r->shape.h);
	ft_dbi_b_text(&b, ft_layout_name(r->shape.layout));
	ft_dbi_b_text(&b, r->space_name ? r->space_name : r->template_name);
	ft_dbi_b_text(&b, r->family ? r->family : "mma");
	ft_dbi_b_int(&b, r->abi ? r->abi : 1);
	ft_dbi_b_text(&b, r->campaign);
	return write_one(db, st, &b, "recording the run", &changes, run_id, err);
}

int ft_db_run_finish(struct ft_db *db, long long run_id, const char *outcome, double wall_s,
		     struct ft_err *err)
{
	sqlite3_stmt *st;
	struct binder b;
	long long changes, rowid;

	if (ft_dbi_prep(db, "UPDATE runs SET finished_at = " NOW_SQL ", outcome = ?, wall_s = ? WHERE id = ?", 0,
		 &st, "preparing the run update", err))
		return -1;
	b = (struct binder){ st, 0, SQLITE_OK };
	ft_dbi_b_text(&b, outcome);
	ft_dbi_b_real(&b, wall_s);
	ft_dbi_b_int(&b, run_id);
	if (write_one(db, st, &b, "recording the end of the run", &changes, &rowid, err))
		return -1;
	if (changes != 1)
		return ft_error(err, FT_EFAIL, "no run %lld in tuning database '%s' to finish: this is a fatune bug",
				run_id, db->path);
	return 0;
}

static void bind_trial(struct binder *b, long long run_id, const char *search_key,
		       const struct ft_trial *t)
{
	ft_dbi_b_int(b, run_id);
	ft_dbi_b_text(b, search_key);
	ft_dbi_b_text(b, t->config);
	ft_dbi_b_text(b, ft_status_name(t->status));
	ft_dbi_b_text(b, t->reason);
	ft_dbi_b_text(b, t->log);
	ft_dbi_b_text_opt(b, t->compile_key);
	ft_dbi_b_count(b, t->smem_model);
	ft_dbi_b_count(b, t->threads);
	for (int i = 0; i < 3; i++)
		ft_dbi_b_count(b, t->grid[i]);
	ft_dbi_b_count(b, t->combine_threads);
	for (int i = 0; i < 3; i++)
		ft_dbi_b_count(b, t->combine_grid[i]);
	ft_dbi_b_count(b, t->res.regs);
	ft_dbi_b_count(b, t->res.smem_static);
	ft_dbi_b_count(b, t->res.stack_bytes);
	ft_dbi_b_count(b, t->res.spill_stores);
	ft_dbi_b_count(b, t->res.spill_loads);
	ft_dbi_b_real(b, t->compile_ms);
	ft_dbi_b_real(b, t->rel_err);
	ft_dbi_b_real(b, t->t_median_us);
	ft_dbi_b_real(b, t->t_min_us);
	ft_dbi_b_real(b, t->t_p90_us);
	ft_dbi_b_real(b, t->t_spread);
	ft_dbi_b_int(b, t->samples);
	ft_dbi_b_count(b, t->workspace_bytes);
	ft_dbi_b_count(b, t->device_index);
	ft_dbi_b_text(b, t->device[0] ? t->device : NULL);
	/* a trial nothing judged yet (tests, fuzz targets) is stored as judged by the model */
	ft_dbi_b_text(b, ft_stage_name(t->stage > FT_STAGE_MODEL ? t->stage : FT_STAGE_MODEL));
}

/* Runs st (put_trial or put_trials) on the k trials of rows, bound in order. */
static int put_rows(struct ft_db *db, sqlite3_stmt *st, long long run_id, const char *search_key,
		    const struct ft_trial *const *rows, int k, struct ft_err *err)
{
	struct binder b = { st, 0, SQLITE_OK };
	int rc;

	for (int j = 0; j < k; j++)
		bind_trial(&b, run_id, search_key, rows[j]);
	if (ft_dbi_b_done(db, &b, "storing a trial", err))
		goto fail;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		ft_dbi_fail(db, rc, err, "storing a trial");
		if (k > 1)
			ft_err_prefix(err, "trial '%s' or one of the %d after it", rows[0]->config, k - 1);
		else
			ft_err_prefix(err, "trial '%s'", rows[0]->config);
		goto fail;
	}
	sqlite3_reset(st);		/* returns the step's status: SQLITE_OK here */
	sqlite3_clear_bindings(st);	/* always SQLITE_OK */
	return 0;
fail:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return -1;
}

/* Whether config is among the first k of rows. */
static int among(const struct ft_trial *const *rows, int k, const char *config)
{
	for (int j = 0; j < k; j++)
		if (!strcmp(rows[j]->config, config))
			return 1;
	return 0;
}

/* Stores trials in one transaction, FT_DBI_PUT_ROWS to a statement where
 * there are that many (the rest one by one); with only_new, one whose
 * (search_key, config) already has a row, or is earlier in t, is left out
 * (the check and the insert are one transaction, so concurrent writers
 * cannot both add it). With if_free, nothing is stored and 1 returned when
 * another connection holds the write lock; else 0, or -1 with err. */
static int put_trials(struct ft_db *db, long long run_id, const char *search_key,
		      const struct ft_trial *t, int n, int only_new, int if_free, struct ft_err *err)
{
	const struct ft_trial *rows[FT_DBI_PUT_ROWS];
	int i = 0, busy;

	for (int j = 0; j < n; j++)
		if ((int)t[j].status < 0 || t[j].status >= FT_ST_COUNT ||
		    t[j].status == FT_ST_ACCEPTED || (int)t[j].stage < 0 || t[j].stage >= FT_STAGE_COUNT)
			return ft_error(err, FT_EFAIL,
					"trial '%s' has status %d at stage %d, not a storable one: this is a fatune bug",
					t[j].config, (int)t[j].status, (int)t[j].stage);
	busy = if_free ? begin_if_free(db, err) : ft_dbi_begin(db, err);
	if (busy)
		return busy;
	while (i < n) {
		int k = 0;

		for (; i < n && k < FT_DBI_PUT_ROWS; i++) {
			if (only_new) {
				int got = among(rows, k, t[i].config) ? 1 :
					  ft_db_trial_latest(db, search_key, t[i].config, NULL, err);

				if (got < 0)
					goto fail;
				if (got)
					continue;
			}
			rows[k++] = &t[i];
		}
		if (k == FT_DBI_PUT_ROWS) {
			if (put_rows(db, db->put_trials, run_id, search_key, rows, k, err))
				goto fail;
			continue;
		}
		for (int j = 0; j < k; j++)
			if (put_rows(db, db->put_trial, run_id, search_key, &rows[j], 1, err))
				goto fail;
	}
	return ft_dbi_commit(db, err) ? (ft_dbi_rollback(db), -1) : 0;
fail:
	ft_dbi_rollback(db);
	return -1;
}

int ft_db_trials_put(struct ft_db *db, long long run_id, const char *search_key,
		     const struct ft_trial *t, int n, struct ft_err *err)
{
	return put_trials(db, run_id, search_key, t, n, 0, 0, err);
}

int ft_db_trials_put_new(struct ft_db *db, long long run_id, const char *search_key,
			 const struct ft_trial *t, int n, struct ft_err *err)
{
	return put_trials(db, run_id, search_key, t, n, 1, 0, err);
}

int ft_db_trials_put_if_free(struct ft_db *db, long long run_id, const char *search_key,
			     const struct ft_trial *t, int n, int only_new, struct ft_err *err)
{
	return put_trials(db, run_id, search_key, t, n, only_new, 1, err);
}

/* Fills *t from a row of TRIAL_COLS. */
static int read_trial(struct ft_db *db, sqlite3_stmt *st, struct ft_trial *t, struct ft_err *err)
{
	const char *status = (const char *)sqlite3_column_text(st, 1);
	int c = 4;

	ft_trial_init(t);
	if (ft_dbi_c_text(st, 0, t->config, sizeof(t->config), err))
		return -1;
	if (ft_status_parse(status, &t->status))
		return ft_error(err, FT_EFAIL, "trial '%s' in '%s' has unknown status '%s': the file was edited by hand",
				t->config, db->path, status ? status : "(null)");
	/* reason is cut to fit: it is for people, nothing parses it */
	snprintf(t->reason, sizeof(t->reason), "%s",
		 sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "");
	if (ft_dbi_c_text(st, 3, t->compile_key, sizeof(t->compile_key), err))
		return -1;
	t->smem_model = ft_dbi_c_count(st, c++);
	t->threads = ft_dbi_c_count(st, c++);
	for (int i = 0; i < 3; i++)
		t->grid[i] = ft_dbi_c_count(st, c++);
	t->combine_threads = ft_dbi_c_count(st, c++);
	for (int i = 0; i < 3; i++)
		t->combine_grid[i] = ft_dbi_c_count(st, c++);
	t->res.regs = (int)ft_dbi_c_count(st, c++);
	t->res.smem_static = (int)ft_dbi_c_count(st, c++);
	t->res.stack_bytes = (int)ft_dbi_c_count(st, c++);
	t->res.spill_stores = (int)ft_dbi_c_count(st, c++);
	t->res.spill_loads = (int)ft_dbi_c_count(st, c++);
	t->compile_ms = ft_dbi_c_real(st, c++);
	t->rel_err = ft_dbi_c_real(st, c++);
	t->t_median_us = ft_dbi_c_real(st, c++);
	t->t_min_us = ft_dbi_c_real(st, c++);
	t->t_p90_us = ft_dbi_c_real(st, c++);
	t->t_spread = ft_dbi_c_real(st, c++);
	t->samples = (int)sqlite3_column_int64(st, c++);
	t->workspace_bytes = ft_dbi_c_count(st, c++);
	if (t->workspace_bytes < 0)
		t->workspace_bytes = 0;
	t->device_index = (int)ft_dbi_c_count(st, c++);
	snprintf(t->device, sizeof(t->device), "%s",
		 sqlite3_column_text(st, c) ? (const char *)sqlite3_column_text(st, c) : "");
	c++;
	if (ft_stage_parse((const char *)sqlite3_column_text(st, c), &t->stage))
		return ft_error(err, FT_EFAIL, "trial '%s' in '%s' has an unknown stage: the file was edited by hand",
				t->config, db->path);
	c++;
	t->run_id = sqlite3_column_int64(st, c);
	return 0;
}

int ft_db_trial_latest(struct ft_db *db, const char *search_key, const char *config,
		       struct ft_trial *out, struct ft_err *err)
{
	sqlite3_stmt *st = db->latest_trial;
	struct binder b = { st, 0, SQLITE_OK };
	int rc, ret = -1;

	ft_dbi_b_text(&b, search_key);
	ft_dbi_b_text(&b, config);
	if (ft_dbi_b_done(db, &b, "looking up a trial", err))
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ret = out && read_trial(db, st, out, err) ? -1 : 1;
	else if (rc == SQLITE_DONE)
		ret = 0;
	else
		ft_dbi_fail(db, rc, err, "looking up a trial");
out:
	sqlite3_reset(st);	/* repeats the step's status, handled above */
	sqlite3_clear_bindings(st);
	return ret;
}

