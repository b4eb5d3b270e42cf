/* db_internal.h - what db.c and db_query.c share: the connection and the
 * statement helpers. Private to the database module (the only sqlite3.h users
 * besides expr.c); nothing else includes it.
 */
#ifndef FT_DB_INTERNAL_H
#define FT_DB_INTERNAL_H

#include <sqlite3.h>

#include "db/db.h"

/* "FaTn" in ASCII: marks a file as fatune's (`file` and `sqlite3` show it). */
#define FT_DB_APPLICATION_ID 0x4661546e

/* Trials stored by one statement of a batch (db.c put_trials): the schema's
 * CHECKs on status and stage are IN lists, which SQLite builds into a
 * temporary index once per statement run - per row with a one-row INSERT.
 * A model rejection row took 12-15 us one to a statement and 9-10 us 16 to
 * a statement on this project's 2-core CI machine (the rest is the row, its
 * two index entries and, without --fresh, the lookup for an earlier run's
 * row). 16 rows x 32 parameters stay within the 999 parameters a statement
 * of SQLite's oldest default limit. */
#define FT_DBI_PUT_ROWS 16

/* SQLite's "now" as the schema's UTC ISO-8601 text. */
#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

/* One connection. Use it from one thread at a time (the cached statements are
 * shared state); another process or thread opens its own. */
struct ft_db {
	sqlite3 *h;
	char path[FT_PATH_MAX];
	sqlite3_stmt *put_trial;	/* cached: runs once per finished trial */
	sqlite3_stmt *put_trials;	/* cached: FT_DBI_PUT_ROWS trials in one statement */
	sqlite3_stmt *latest_trial;	/* cached: runs once per candidate on resume */
	int opened;			/* ft_db_open succeeded: writes may have happened since */
	int damaged;			/* SQLite reported SQLITE_CORRUPT/NOTADB: write nothing more */
	double busy_t0_ms;		/* when the current wait for another's lock began */
	double busy_ms;			/* the waits so far (ft_db_wait_ms) */
	int sqlite_wait;		/* FATUNE_DB_BUSY=sqlite, read at open */
};

/* Binds parameters 1, 2, ... in order; the first failure sticks in rc. */
struct binder {
	sqlite3_stmt *st;
	int i;
	int rc;
};

/* The one message for a damaged file (db_check.c): what is damaged (detail),
 * whether fatune wrote to it before finding out (written), how to recover.
 * FT_EFAIL; returns -1. */
int ft_dbi_damaged(struct ft_err *err, const char *path, const char *detail, int written);

/* Turns an SQLite failure into err (SQLITE_CORRUPT and SQLITE_NOTADB also mark
 * the connection damaged, see ft_dbi_begin): names what was attempted and the file,
 * copies SQLite's own message, and says what to do next. Returns -1. */
int ft_dbi_fail(struct ft_db *db, int rc, struct ft_err *err, const char *what);
int ft_dbi_prep(struct ft_db *db, const char *sql, unsigned flags, sqlite3_stmt **st,
		const char *what, struct ft_err *err);
/* Runs SQL without values (transaction control, schema, fixed PRAGMAs). */
int ft_dbi_exec(struct ft_db *db, const char *sql, const char *what, struct ft_err *err);
/* BEGIN IMMEDIATE; refused, touching nothing, once the connection is marked damaged. */
int ft_dbi_begin(struct ft_db *db, struct ft_err *err);
int ft_dbi_commit(struct ft_db *db, struct ft_err *err);
/* Undoes the open transaction after a failure already described in err. */
void ft_dbi_rollback(struct ft_db *db);

/* ft_db_best_refresh inside the caller's transaction (db_merge.c refreshes
 * every merged search in the merge's one transaction). */
int ft_dbi_best_refresh(struct ft_db *db, const struct ft_best_key *key, const char *search_key,
			struct ft_err *err);

/* The WAL and shared-memory files beside a database, as found before a
 * read-only connection opened it (db_check.c). */
struct ft_dbi_sides {
	char wal[FT_PATH_MAX + 8], shm[FT_PATH_MAX + 8];
	int had_wal, had_shm;
};
void ft_dbi_sides_note(const char *path, struct ft_dbi_sides *f);
/* Removes the empty WAL and the '-shm' made since ft_dbi_sides_note. */
void ft_dbi_sides_clean(const struct ft_dbi_sides *f);

/* Creates schema version `version` (schema.sql, then the migrations up to
 * it) in the empty database h: what a fatune file of that version holds
 * (db_merge.c compares inputs with it). */
int ft_dbi_schema_build(sqlite3 *h, long long version, struct ft_err *err);

/* Binding parameters 1, 2, ... in order (see struct binder). */
void ft_dbi_b_text(struct binder *b, const char *s);
void ft_dbi_b_text_opt(struct binder *b, const char *s);	/* "" stored as NULL */
void ft_dbi_b_int(struct binder *b, long long v);
void ft_dbi_b_count(struct binder *b, long long v);		/* negative stored as NULL */
void ft_dbi_b_real(struct binder *b, double v);			/* NaN stored as NULL */
/* No failure, and exactly as many values as placeholders. */
int ft_dbi_b_done(struct ft_db *db, struct binder *b, const char *what, struct ft_err *err);

/* Columns: NULL reads back as -1, NAN, "" (text that does not fit fails). */
long long ft_dbi_c_count(sqlite3_stmt *st, int i);
double ft_dbi_c_real(sqlite3_stmt *st, int i);
int ft_dbi_c_text(sqlite3_stmt *st, int i, char *dst, size_t size, struct ft_err *err);

#endif
