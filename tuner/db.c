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
#include "db.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "embedded_sql.h"

/* "FaTn" in ASCII: marks a file as fatune's (`file` and `sqlite3` show it). */
#define APPLICATION_ID 0x4661546e

/* How long a connection waits for another's write lock. fatune's write
 * transactions last milliseconds (one trial row, or one best-row upsert), so
 * even a dozen searches queueing on one file wait far less than this; the
 * limit only bites when something holds the lock for good (an sqlite3 shell
 * left inside BEGIN), and then a clear error after 30 s beats hanging. */
#define BUSY_TIMEOUT_MS 30000

/* The most columns a query returns (the trials listing, the widest, has 27). */
#define MAX_COLS 48

#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

/* One connection. Use it from one thread at a time (the cached statements are
 * shared state); another process or thread opens its own. */
struct ft_db {
	sqlite3 *h;
	char path[FT_PATH_MAX];
	sqlite3_stmt *put_trial;	/* cached: runs once per finished trial */
	sqlite3_stmt *latest_trial;	/* cached: runs once per candidate on resume */
};

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

/* Turns an SQLite failure into err: names what was attempted and the file,
 * copies SQLite's own message, and says what to do next. Returns -1. */
static int db_fail(struct ft_db *db, int rc, struct ft_err *err, const char *what)
{
	const char *msg = db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc);

	switch (rc & 0xff) {
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return ft_error(err, FT_EFAIL,
				"tuning database '%s' is corrupt or not a database (%s: %s): move it away or pass --db",
				db->path, what, msg);
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

static int prep(struct ft_db *db, const char *sql, unsigned flags, sqlite3_stmt **st,
		const char *what, struct ft_err *err)
{
	int rc = sqlite3_prepare_v3(db->h, sql, -1, flags, st, NULL);

	if (rc != SQLITE_OK) {
		*st = NULL;
		return db_fail(db, rc, err, what);
	}
	return 0;
}

/* Runs SQL without values (transaction control, schema, fixed PRAGMAs). */
static int exec(struct ft_db *db, const char *sql, const char *what, struct ft_err *err)
{
	int rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : db_fail(db, rc, err, what);
}

static int begin(struct ft_db *db, struct ft_err *err)
{
	return exec(db, "BEGIN IMMEDIATE", "BEGIN IMMEDIATE", err);
}

static int commit(struct ft_db *db, struct ft_err *err)
{
	return exec(db, "COMMIT", "COMMIT", err);
}

/* Undoes the open transaction after a failure already described in err. Its
 * own failure is not reported over the first one: SQLite may have rolled back
 * by itself (then there is nothing to undo), and closing the connection
 * rolls back anyway. */
static void rollback(struct ft_db *db)
{
	if (!sqlite3_get_autocommit(db->h))
		(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

/* Binds parameters 1, 2, ... in order; the first failure sticks in rc. */
struct binder {
	sqlite3_stmt *st;
	int i;
	int rc;
};

static void b_text(struct binder *b, const char *s)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = s ? sqlite3_bind_text(b->st, b->i, s, -1, SQLITE_TRANSIENT)
			  : sqlite3_bind_null(b->st, b->i);
}

/* "" means "none" for the optional keys (compile_key): stored as NULL. */
static void b_text_opt(struct binder *b, const char *s)
{
	b_text(b, s && *s ? s : NULL);
}

static void b_int(struct binder *b, long long v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_int64(b->st, b->i, v);
}

/* Counts and sizes where -1 (any negative) means unknown: stored as NULL. */
static void b_count(struct binder *b, long long v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = v < 0 ? sqlite3_bind_null(b->st, b->i) : sqlite3_bind_int64(b->st, b->i, v);
}

/* NaN is stored as NULL (SQLite would do the same, but say so here). */
static void b_real(struct binder *b, double v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = isnan(v) ? sqlite3_bind_null(b->st, b->i) : sqlite3_bind_double(b->st, b->i, v);
}

/* Checks the binder: no failure, and exactly as many values as placeholders. */
static int b_done(struct ft_db *db, struct binder *b, const char *what, struct ft_err *err)
{
	if (b->rc != SQLITE_OK)
		return db_fail(db, b->rc, err, what);
	if (b->i != sqlite3_bind_parameter_count(b->st))
		return ft_error(err, FT_EFAIL, "%s: bound %d values for %d placeholders: this is a fatune bug",
				what, b->i, sqlite3_bind_parameter_count(b->st));
	return 0;
}

static long long c_count(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

static double c_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Copies a text column into dst; NULL becomes "". Fails when it does not fit. */
static int c_text(sqlite3_stmt *st, int i, char *dst, size_t size, struct ft_err *err)
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

	if (prep(db, sql, 0, &st, "reading the database header", err))
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		s->app_id = sqlite3_column_int64(st, 0);
		s->version = sqlite3_column_int64(st, 1);
		s->objects = sqlite3_column_int64(st, 2);
	} else {
		db_fail(db, rc == SQLITE_DONE ? SQLITE_ERROR : rc, err, "reading the database header");
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
	if (s->app_id != APPLICATION_ID)
		return ft_error(err, FT_EFAIL,
				"'%s' belongs to another application (SQLite application_id 0x%08llx, fatune's is 0x%08x): pass --db with a fatune database",
				db->path, (unsigned long long)s->app_id & 0xffffffffULL, APPLICATION_ID);
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
	return exec(db, sql, sql, err);
}

/* Brings a new file or an older version of ours to the latest schema. Runs in
 * one transaction: a failing step leaves the file exactly as it was. */
static int upgrade(struct ft_db *db, struct ft_err *err)
{
	struct db_state s;
	long long v;
	int latest = ft_db_schema_version();

	if (begin(db, err))
		return -1;
	/* again under the write lock: another process may have done it meanwhile */
	if (inspect(db, &s, err) || check_state(db, &s, err))
		goto fail;
	v = s.version;
	if (is_new(&s)) {
		if (exec(db, ft_sql_schema, "creating the schema (db/schema.sql)", err))
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
		if (exec(db, m->sql, m->name, err)) {
			ft_err_prefix(err, "upgrading schema %lld to %lld", v, v + 1);
			goto fail;
		}
	}
	if (set_pragma(db, "application_id", APPLICATION_ID, err) ||
	    set_pragma(db, "user_version", latest, err) || commit(db, err))
		goto fail;
	return 0;
fail:
	rollback(db);
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

	if (prep(db, "PRAGMA journal_mode = WAL", 0, &st, "PRAGMA journal_mode", err))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_BUSY && waited < BUSY_TIMEOUT_MS) {
		sqlite3_reset(st);	/* repeats SQLITE_BUSY */
		waited += sqlite3_sleep(pause);
		pause = pause < 64 ? pause * 2 : 64;
	}
	if (rc != SQLITE_ROW) {
		db_fail(db, rc, err, "switching to WAL mode");
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

static const char sql_put_trial[] =
	"INSERT INTO trials (run_id, search_key, config, status, reason, log, compile_key,"
	" smem_model, threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x,"
	" combine_grid_y, combine_grid_z, regs, smem_static, stack_bytes, spill_stores,"
	" spill_loads, compile_ms, rel_err, t_median_us, t_min_us, t_p90_us, t_spread,"
	" samples, created_at)"
	" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
	" ?, ?, ?, ?, " NOW_SQL ")";

/* Columns of a trial as ft_db_trial_latest reads them (see read_trial). */
#define TRIAL_COLS                                                                          \
	"config, status, reason, compile_key, smem_model, threads, grid_x, grid_y, grid_z," \
	" combine_threads, combine_grid_x, combine_grid_y, combine_grid_z, regs,"           \
	" smem_static, stack_bytes, spill_stores, spill_loads, compile_ms, rel_err,"        \
	" t_median_us, t_min_us, t_p90_us, t_spread, samples"

static const char sql_latest_trial[] =
	"SELECT " TRIAL_COLS " FROM trials WHERE search_key = ? AND config = ?"
	" ORDER BY id DESC LIMIT 1";

int ft_db_open(struct ft_db **out, const char *path, int create, struct ft_err *err)
{
	struct ft_db *db;
	struct db_state s;
	struct stat sb;
	int rc, flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);

	*out = NULL;
	if (!create && stat(path, &sb) != 0) {
		if (errno == ENOENT)
			return ft_error(err, FT_EINPUT,
					"no tuning database at '%s': run 'fatune search' first or pass --db", path);
		return ft_error(err, FT_EFAIL, "cannot reach tuning database '%s': %s: check the path or pass --db",
				path, strerror(errno));
	}
	if (strlen(path) >= sizeof(db->path))
		return ft_error(err, FT_EINPUT, "tuning database path '%.64s...' is longer than %zu bytes: use a shorter one",
				path, sizeof(db->path) - 1);
	db = calloc(1, sizeof(*db));
	if (!db)
		return ft_error(err, FT_EFAIL, "out of memory opening tuning database '%s'", path);
	strcpy(db->path, path);

	rc = sqlite3_open_v2(path, &db->h, flags, NULL);
	if (rc != SQLITE_OK) {
		db_fail(db, rc, err, "opening");
		goto fail;
	}
	rc = sqlite3_extended_result_codes(db->h, 1);
	if (rc == SQLITE_OK)
		rc = sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
	if (rc != SQLITE_OK) {
		db_fail(db, rc, err, "configuring the connection");
		goto fail;
	}
	if (exec(db, "PRAGMA foreign_keys = ON", "PRAGMA foreign_keys", err) || inspect(db, &s, err) ||
	    check_state(db, &s, err))
		goto fail;
	/* Only now, with the file known to be new or ours, may anything be written. */
	if ((is_new(&s) || s.version < ft_db_schema_version()) && upgrade(db, err))
		goto fail;
	if (use_wal(db, err) || exec(db, "PRAGMA synchronous = NORMAL", "PRAGMA synchronous", err))
		goto fail;
	if (prep(db, sql_put_trial, SQLITE_PREPARE_PERSISTENT, &db->put_trial, "preparing the trial insert", err) ||
	    prep(db, sql_latest_trial, SQLITE_PREPARE_PERSISTENT, &db->latest_trial,
		 "preparing the trial lookup", err))
		goto fail;
	*out = db;
	return 0;
fail:
	ft_db_close(db);
	return -1;
}

void ft_db_close(struct ft_db *db)
{
	if (!db)
		return;
	sqlite3_finalize(db->put_trial);	/* returns the last step's error: already reported */
	sqlite3_finalize(db->latest_trial);
	/* close_v2 always returns SQLITE_OK; the last connection checkpoints the WAL */
	sqlite3_close_v2(db->h);
	free(db);
}

/* ---- runs and trials --------------------------------------------------- */

static const char sql_run_begin[] =
	"INSERT INTO runs (started_at, fatune_version, arch, device, nvrtc_version, driver_version,"
	" template_name, template_hash, space_path, space_hash, search_key, b, h, s, d, dtype,"
	" causal, mode, strategy, seed, budget, timing)"
	" VALUES (" NOW_SQL ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/* Runs one bound write statement inside its own BEGIN IMMEDIATE and finalizes
 * it. *changes receives how many rows it changed and *rowid the last rowid it
 * inserted, both read before COMMIT (inside the transaction no other
 * connection writes, so they are this statement's). */
static int write_one(struct ft_db *db, sqlite3_stmt *st, struct binder *b, const char *what,
		     long long *changes, long long *rowid, struct ft_err *err)
{
	int rc;

	if (b_done(db, b, what, err) || begin(db, err))
		goto fail;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		db_fail(db, rc, err, what);
		goto fail;
	}
	*changes = sqlite3_changes(db->h);
	*rowid = sqlite3_last_insert_rowid(db->h);
	if (commit(db, err))
		goto fail;
	sqlite3_finalize(st);
	return 0;
fail:
	sqlite3_finalize(st);
	rollback(db);
	return -1;
}

int ft_db_run_begin(struct ft_db *db, const struct ft_run *r, long long *run_id,
		    struct ft_err *err)
{
	sqlite3_stmt *st;
	struct binder b;
	long long changes;

	if (prep(db, sql_run_begin, 0, &st, "preparing the run insert", err))
		return -1;
	b = (struct binder){ st, 0, SQLITE_OK };
	b_text(&b, r->fatune_version);
	b_text(&b, r->arch);
	b_text(&b, r->device ? r->device : "");
	b_text(&b, r->nvrtc_version);
	b_text(&b, r->driver_version);
	b_text(&b, r->template_name);
	b_text(&b, r->template_hash);
	b_text(&b, r->space_path);
	b_text(&b, r->space_hash);
	b_text(&b, r->search_key);
	b_int(&b, r->shape.b);
	b_int(&b, r->shape.h);
	b_int(&b, r->shape.s);
	b_int(&b, r->shape.d);
	b_text(&b, ft_dtype_name(r->shape.dtype));
	b_int(&b, r->shape.causal != 0);
	b_text(&b, r->mode);
	b_text(&b, r->strategy);
	b_int(&b, r->seed);
	b_int(&b, r->budget);
	b_text(&b, r->timing);
	return write_one(db, st, &b, "recording the run", &changes, run_id, err);
}

int ft_db_run_finish(struct ft_db *db, long long run_id, const char *outcome, double wall_s,
		     struct ft_err *err)
{
	sqlite3_stmt *st;
	struct binder b;
	long long changes, rowid;

	if (prep(db, "UPDATE runs SET finished_at = " NOW_SQL ", outcome = ?, wall_s = ? WHERE id = ?", 0,
		 &st, "preparing the run update", err))
		return -1;
	b = (struct binder){ st, 0, SQLITE_OK };
	b_text(&b, outcome);
	b_real(&b, wall_s);
	b_int(&b, run_id);
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
	b_int(b, run_id);
	b_text(b, search_key);
	b_text(b, t->config);
	b_text(b, ft_status_name(t->status));
	b_text(b, t->reason);
	b_text(b, t->log);
	b_text_opt(b, t->compile_key);
	b_count(b, t->smem_model);
	b_count(b, t->threads);
	for (int i = 0; i < 3; i++)
		b_count(b, t->grid[i]);
	b_count(b, t->combine_threads);
	for (int i = 0; i < 3; i++)
		b_count(b, t->combine_grid[i]);
	b_count(b, t->res.regs);
	b_count(b, t->res.smem_static);
	b_count(b, t->res.stack_bytes);
	b_count(b, t->res.spill_stores);
	b_count(b, t->res.spill_loads);
	b_real(b, t->compile_ms);
	b_real(b, t->rel_err);
	b_real(b, t->t_median_us);
	b_real(b, t->t_min_us);
	b_real(b, t->t_p90_us);
	b_real(b, t->t_spread);
	b_int(b, t->samples);
}

int ft_db_trials_put(struct ft_db *db, long long run_id, const char *search_key,
		     const struct ft_trial *t, int n, struct ft_err *err)
{
	sqlite3_stmt *st = db->put_trial;
	int rc;

	for (int i = 0; i < n; i++)
		if ((int)t[i].status < 0 || t[i].status >= FT_ST_COUNT)
			return ft_error(err, FT_EFAIL, "trial '%s' has status %d, not a known one: this is a fatune bug",
					t[i].config, (int)t[i].status);
	if (begin(db, err))
		return -1;
	for (int i = 0; i < n; i++) {
		struct binder b = { st, 0, SQLITE_OK };

		bind_trial(&b, run_id, search_key, &t[i]);
		if (b_done(db, &b, "storing a trial", err))
			goto fail;
		rc = sqlite3_step(st);
		if (rc != SQLITE_DONE) {
			db_fail(db, rc, err, "storing a trial");
			ft_err_prefix(err, "trial '%s'", t[i].config);
			goto fail;
		}
		sqlite3_reset(st);	/* returns the step's status: SQLITE_OK here */
	}
	sqlite3_clear_bindings(st);	/* always SQLITE_OK */
	return commit(db, err) ? (rollback(db), -1) : 0;
fail:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	rollback(db);
	return -1;
}

/* Fills *t from a row of TRIAL_COLS. */
static int read_trial(struct ft_db *db, sqlite3_stmt *st, struct ft_trial *t, struct ft_err *err)
{
	const char *status = (const char *)sqlite3_column_text(st, 1);
	int c = 4;

	ft_trial_init(t);
	if (c_text(st, 0, t->config, sizeof(t->config), err))
		return -1;
	if (ft_status_parse(status, &t->status))
		return ft_error(err, FT_EFAIL, "trial '%s' in '%s' has unknown status '%s': the file was edited by hand",
				t->config, db->path, status ? status : "(null)");
	/* reason is cut to fit: it is for people, nothing parses it */
	snprintf(t->reason, sizeof(t->reason), "%s",
		 sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "");
	if (c_text(st, 3, t->compile_key, sizeof(t->compile_key), err))
		return -1;
	t->smem_model = c_count(st, c++);
	t->threads = c_count(st, c++);
	for (int i = 0; i < 3; i++)
		t->grid[i] = c_count(st, c++);
	t->combine_threads = c_count(st, c++);
	for (int i = 0; i < 3; i++)
		t->combine_grid[i] = c_count(st, c++);
	t->res.regs = (int)c_count(st, c++);
	t->res.smem_static = (int)c_count(st, c++);
	t->res.stack_bytes = (int)c_count(st, c++);
	t->res.spill_stores = (int)c_count(st, c++);
	t->res.spill_loads = (int)c_count(st, c++);
	t->compile_ms = c_real(st, c++);
	t->rel_err = c_real(st, c++);
	t->t_median_us = c_real(st, c++);
	t->t_min_us = c_real(st, c++);
	t->t_p90_us = c_real(st, c++);
	t->t_spread = c_real(st, c++);
	t->samples = (int)sqlite3_column_int64(st, c++);
	return 0;
}

int ft_db_trial_latest(struct ft_db *db, const char *search_key, const char *config,
		       struct ft_trial *out, struct ft_err *err)
{
	sqlite3_stmt *st = db->latest_trial;
	struct binder b = { st, 0, SQLITE_OK };
	int rc, ret = -1;

	b_text(&b, search_key);
	b_text(&b, config);
	if (b_done(db, &b, "looking up a trial", err))
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ret = read_trial(db, st, out, err) ? -1 : 1;
	else if (rc == SQLITE_DONE)
		ret = 0;
	else
		db_fail(db, rc, err, "looking up a trial");
out:
	sqlite3_reset(st);	/* repeats the step's status, handled above */
	sqlite3_clear_bindings(st);
	return ret;
}

/* ---- best rows --------------------------------------------------------- */

/* The fastest of the latest trial of each config of a search, if it is ok. A
 * config measured again and now failing (wrong_result after a template
 * change) no longer counts, even if an older trial of it was fast. */
static const char sql_best_trial[] =
	"SELECT t.id FROM trials t"
	" WHERE t.search_key = ?1 AND t.status = 'ok' AND t.t_median_us IS NOT NULL"
	" AND t.id = (SELECT max(u.id) FROM trials u WHERE u.search_key = t.search_key"
	" AND u.config = t.config)"
	" ORDER BY t.t_median_us, t.id LIMIT 1";

static const char sql_best_upsert[] =
	"INSERT INTO best (arch, device, template_name, b, h, s, d, dtype, causal, config,"
	" compile_key, template_hash, fatune_version, t_median_us, t_min_us, t_p90_us, rel_err,"
	" smem_bytes, threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x,"
	" combine_grid_y, combine_grid_z, run_id, trial_id, updated_at)"
	" SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, t.config, t.compile_key, r.template_hash,"
	" r.fatune_version, t.t_median_us, t.t_min_us, t.t_p90_us, t.rel_err, t.smem_model,"
	" t.threads, t.grid_x, t.grid_y, t.grid_z, t.combine_threads, t.combine_grid_x,"
	" t.combine_grid_y, t.combine_grid_z, t.run_id, t.id, " NOW_SQL
	" FROM trials t JOIN runs r ON r.id = t.run_id WHERE t.id = ?10"
	" ON CONFLICT (arch, device, template_name, b, h, s, d, dtype, causal) DO UPDATE SET"
	" config = excluded.config, compile_key = excluded.compile_key,"
	" template_hash = excluded.template_hash, fatune_version = excluded.fatune_version,"
	" t_median_us = excluded.t_median_us, t_min_us = excluded.t_min_us,"
	" t_p90_us = excluded.t_p90_us, rel_err = excluded.rel_err, smem_bytes = excluded.smem_bytes,"
	" threads = excluded.threads, grid_x = excluded.grid_x, grid_y = excluded.grid_y,"
	" grid_z = excluded.grid_z, combine_threads = excluded.combine_threads,"
	" combine_grid_x = excluded.combine_grid_x, combine_grid_y = excluded.combine_grid_y,"
	" combine_grid_z = excluded.combine_grid_z, run_id = excluded.run_id,"
	" trial_id = excluded.trial_id, updated_at = excluded.updated_at";

static const char sql_best_exists[] =
	"SELECT count(*) FROM best WHERE arch = ?1 AND device = ?2 AND template_name = ?3"
	" AND b = ?4 AND h = ?5 AND s = ?6 AND d = ?7 AND dtype = ?8 AND causal = ?9";

/* Binds ?1..?9 of the best-row key (device and template may be NULL). */
static void bind_best_key(struct binder *b, const struct ft_best_key *k)
{
	b_text(b, k->arch);
	b_text(b, k->device);
	b_text(b, k->template_name);
	b_int(b, k->shape.b);
	b_int(b, k->shape.h);
	b_int(b, k->shape.s);
	b_int(b, k->shape.d);
	b_text(b, ft_dtype_name(k->shape.dtype));
	b_int(b, k->shape.causal != 0);
}

/* Steps st (bound by the caller) to its single-integer row; *out = -1 for none. */
static int step_int(struct ft_db *db, sqlite3_stmt *st, struct binder *b, long long *out,
		    const char *what, struct ft_err *err)
{
	int rc;

	if (b_done(db, b, what, err))
		return -1;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(db, rc, err, what);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	return 0;
}

int ft_db_best_refresh(struct ft_db *db, const struct ft_best_key *key, const char *search_key,
		       struct ft_err *err)
{
	sqlite3_stmt *sel = NULL, *up = NULL, *ex = NULL;
	struct binder b;
	long long trial_id = -1, n = 0;
	int rc;

	if (!key->arch || !key->device || !key->template_name || !search_key)
		return ft_error(err, FT_EFAIL,
				"best-config refresh needs arch, device, template and search key: this is a fatune bug");
	if (prep(db, sql_best_trial, 0, &sel, "preparing the best-trial selection", err) ||
	    prep(db, sql_best_upsert, 0, &up, "preparing the best-row update", err) ||
	    prep(db, sql_best_exists, 0, &ex, "preparing the best-row check", err) || begin(db, err))
		goto fail;
	b = (struct binder){ sel, 0, SQLITE_OK };
	b_text(&b, search_key);
	if (step_int(db, sel, &b, &trial_id, "selecting the best trial", err))
		goto fail;
	if (trial_id >= 0) {
		b = (struct binder){ up, 0, SQLITE_OK };
		bind_best_key(&b, key);
		b_int(&b, trial_id);
		if (b_done(db, &b, "updating the best config", err))
			goto fail;
		rc = sqlite3_step(up);
		if (rc != SQLITE_DONE) {
			db_fail(db, rc, err, "updating the best config");
			goto fail;
		}
	}
	b = (struct binder){ ex, 0, SQLITE_OK };
	bind_best_key(&b, key);
	if (step_int(db, ex, &b, &n, "checking the best config", err) || commit(db, err))
		goto fail;
	sqlite3_finalize(sel);
	sqlite3_finalize(up);
	sqlite3_finalize(ex);
	return n > 0;
fail:
	/* finalize repeats the failed step's error, already in err */
	sqlite3_finalize(sel);
	sqlite3_finalize(up);
	sqlite3_finalize(ex);
	rollback(db);
	return -1;
}

static const char sql_best_get[] =
	"SELECT arch, device, template_name, template_hash, fatune_version, b, h, s, d, dtype,"
	" causal, config, compile_key, t_median_us, t_min_us, rel_err, smem_bytes, threads,"
	" grid_x, grid_y, grid_z, combine_threads, combine_grid_x, combine_grid_y,"
	" combine_grid_z, updated_at, run_id FROM best"
	" WHERE arch = ?1 AND (?2 IS NULL OR device = ?2) AND (?3 IS NULL OR template_name = ?3)"
	" AND b = ?4 AND h = ?5 AND s = ?6 AND d = ?7 AND dtype = ?8 AND causal = ?9"
	" ORDER BY device, template_name";

static int read_best(struct ft_db *db, sqlite3_stmt *st, struct ft_best *o, struct ft_err *err)
{
	struct ft_err ignored;
	int c = 13;

	memset(o, 0, sizeof(*o));
	if (c_text(st, 0, o->arch, sizeof(o->arch), err) ||
	    c_text(st, 1, o->device, sizeof(o->device), err) ||
	    c_text(st, 2, o->template_name, sizeof(o->template_name), err) ||
	    c_text(st, 3, o->template_hash, sizeof(o->template_hash), err) ||
	    c_text(st, 4, o->fatune_version, sizeof(o->fatune_version), err) ||
	    c_text(st, 11, o->config, sizeof(o->config), err) ||
	    c_text(st, 12, o->compile_key, sizeof(o->compile_key), err) ||
	    c_text(st, 25, o->updated_at, sizeof(o->updated_at), err))
		return -1;
	o->shape.b = sqlite3_column_int(st, 5);
	o->shape.h = sqlite3_column_int(st, 6);
	o->shape.s = sqlite3_column_int(st, 7);
	o->shape.d = sqlite3_column_int(st, 8);
	/* the schema's CHECK admits only the two names ft_dtype_parse knows */
	if (ft_dtype_parse((const char *)sqlite3_column_text(st, 9), &o->shape.dtype, &ignored))
		return ft_error(err, FT_EFAIL, "best row in '%s' has an unknown dtype: the file was edited by hand",
				db->path);
	o->shape.causal = sqlite3_column_int(st, 10) != 0;
	o->t_median_us = c_real(st, c++);
	o->t_min_us = c_real(st, c++);
	o->rel_err = c_real(st, c++);
	o->smem_model = c_count(st, c++);
	o->threads = c_count(st, c++);
	for (int i = 0; i < 3; i++)
		o->grid[i] = c_count(st, c++);
	o->combine_threads = c_count(st, c++);
	for (int i = 0; i < 3; i++)
		o->combine_grid[i] = c_count(st, c++);
	o->run_id = c_count(st, 26);
	return 0;
}

int ft_db_best_get(struct ft_db *db, const struct ft_best_key *key, struct ft_best *out,
		   struct ft_err *err)
{
	sqlite3_stmt *st;
	struct binder b;
	struct ft_best other;
	char shape[64], names[256];
	int rc, n = 0, ret = -1, differ_in_device = 0;
	size_t len = 0;

	if (prep(db, sql_best_get, 0, &st, "preparing the best-config lookup", err))
		return -1;
	b = (struct binder){ st, 0, SQLITE_OK };
	bind_best_key(&b, key);
	if (b_done(db, &b, "looking up the best config", err))
		goto out;
	/* the first row goes to out, later ones (ambiguity) only into the list */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ft_best *r = n ? &other : out;

		if (read_best(db, st, r, err))
			goto out;
		differ_in_device |= strcmp(r->device, out->device) != 0;
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s'%s' (%s)", n ? ", " : "",
						r->device, r->template_name);
		n++;
	}
	if (rc != SQLITE_DONE) {
		db_fail(db, rc, err, "looking up the best config");
		goto out;
	}
	if (n > 1) {
		ft_error(err, FT_EINPUT, "%d best configs for %s %s %s%s: %s: pass %s", n, key->arch,
			 ft_shape_format(&key->shape, shape, sizeof(shape)), ft_dtype_name(key->shape.dtype),
			 key->shape.causal ? " causal" : "", names,
			 differ_in_device ? "--device NAME" : "--template NAME");
		goto out;
	}
	ret = n;
out:
	sqlite3_finalize(st);	/* repeats a failed step's error, already in err */
	return ret;
}

/* ---- queries ----------------------------------------------------------- */

/* The filters every listing shares: ?1 arch, ?2 device, ?3..?6 shape, ?7 dtype,
 * ?8 causal (all NULL for "any"); P is the table holding them. */
#define FILTERS(P)                                                                      \
	" WHERE (?1 IS NULL OR " P "arch = ?1) AND (?2 IS NULL OR " P "device = ?2)"    \
	" AND (?3 IS NULL OR (" P "b = ?3 AND " P "h = ?4 AND " P "s = ?5 AND " P "d = ?6))" \
	" AND (?7 IS NULL OR " P "dtype = ?7) AND (?8 IS NULL OR " P "causal = ?8)"
#define SHAPE(P) P "b || 'x' || " P "h || 'x' || " P "s || 'x' || " P "d AS shape"

/* Column names are public (db/README.md): add columns, never rename them. */
static const char sql_q_best[] =
	"SELECT arch, device, template_name AS template, " SHAPE("") ", dtype, causal, config,"
	" t_median_us, t_min_us, t_p90_us, rel_err, threads, grid_x, grid_y, grid_z,"
	" combine_threads, combine_grid_x, combine_grid_y, combine_grid_z, smem_bytes,"
	" compile_key, template_hash, fatune_version, run_id, trial_id, updated_at FROM best"
	FILTERS("") " ORDER BY arch, b, h, s, d, dtype, causal, device, template_name LIMIT ?11";

static const char sql_q_trials[] =
	"SELECT t.id, t.run_id, r.arch, r.device, r.template_name AS template, " SHAPE("r.") ","
	" r.dtype, r.causal, t.config, t.status, t.reason, t.regs, t.smem_static, t.smem_model,"
	" t.stack_bytes, t.spill_stores, t.spill_loads, t.threads, t.compile_ms, t.rel_err,"
	" t.t_median_us, t.t_min_us, t.t_p90_us, t.t_spread, t.samples, t.compile_key,"
	" t.created_at FROM trials t JOIN runs r ON r.id = t.run_id" FILTERS("r.")
	" AND (?9 IS NULL OR t.status = ?9) AND (?10 IS NULL OR t.run_id = ?10)"
	" ORDER BY t.run_id, t.t_median_us IS NULL, t.t_median_us, t.id LIMIT ?11";

static const char sql_q_runs[] =
	"SELECT r.id, r.started_at, r.finished_at, r.outcome, r.wall_s, r.arch, r.device,"
	" r.template_name AS template, " SHAPE("r.") ", r.dtype, r.causal, r.mode, r.strategy,"
	" r.seed, r.budget, r.timing,"
	" (SELECT count(*) FROM trials t WHERE t.run_id = r.id) AS trials,"
	" (SELECT count(*) FROM trials t WHERE t.run_id = r.id AND t.status = 'ok') AS ok,"
	" (SELECT min(t.t_median_us) FROM trials t WHERE t.run_id = r.id AND t.status = 'ok')"
	" AS best_us, r.fatune_version, r.nvrtc_version, r.driver_version, r.template_hash,"
	" r.space_path, r.space_hash, r.search_key FROM runs r" FILTERS("r.")
	" AND ?9 IS NULL AND ?10 IS NULL ORDER BY r.id LIMIT ?11";

int ft_db_query(struct ft_db *db, enum ft_query_what what, const struct ft_query_filter *f,
		ft_row_fn fn, void *ctx, struct ft_err *err)
{
	static const struct ft_query_filter any = { NULL, NULL, NULL, -1, -1, NULL, -1, -1 };
	const char *sql = what == FT_Q_BEST ? sql_q_best : what == FT_Q_TRIALS ? sql_q_trials : sql_q_runs;
	const char *names[MAX_COLS], *values[MAX_COLS];
	int types[MAX_COLS], ncols, rc, ret = -1;
	sqlite3_stmt *st;
	struct binder b;

	if (!f)
		f = &any;
	if (prep(db, sql, 0, &st, "preparing the query", err))
		return -1;
	ncols = sqlite3_column_count(st);
	if (ncols > MAX_COLS) {
		ft_error(err, FT_EFAIL, "query has %d columns, more than %d: this is a fatune bug", ncols, MAX_COLS);
		goto out;
	}
	b = (struct binder){ st, 0, SQLITE_OK };
	b_text(&b, f->arch);
	b_text(&b, f->device);
	if (f->shape) {
		b_int(&b, f->shape->b);
		b_int(&b, f->shape->h);
		b_int(&b, f->shape->s);
		b_int(&b, f->shape->d);
	} else {
		for (int i = 0; i < 4; i++)
			b_text(&b, NULL);
	}
	b_text(&b, f->dtype < 0 ? NULL : ft_dtype_name((enum ft_dtype)f->dtype));
	if (f->causal < 0)
		b_text(&b, NULL);
	else
		b_int(&b, f->causal != 0);
	/* the runs listing ignores the trial filters (?9, ?10 are bound NULL) */
	b_text(&b, what == FT_Q_RUNS ? NULL : f->status);
	if (what == FT_Q_RUNS || f->run_id < 0)
		b_text(&b, NULL);
	else
		b_int(&b, f->run_id);
	b_int(&b, f->limit < 0 ? -1 : f->limit);	/* LIMIT -1: no limit */
	if (b_done(db, &b, "binding the query", err))
		goto out;
	for (int i = 0; i < ncols; i++)
		names[i] = sqlite3_column_name(st, i);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* types first: sqlite3_column_text converts the value in place */
		for (int i = 0; i < ncols; i++) {
			int t = sqlite3_column_type(st, i);

			types[i] = t == SQLITE_NULL ? 0 : t == SQLITE_INTEGER ? 1 : t == SQLITE_FLOAT ? 2 : 3;
		}
		for (int i = 0; i < ncols; i++)
			values[i] = types[i] ? (const char *)sqlite3_column_text(st, i) : NULL;
		if (fn(ctx, ncols, names, values, types)) {
			ret = 0;
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		db_fail(db, rc, err, "running the query");
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);	/* repeats a failed step's error, already in err */
	return ret;
}
