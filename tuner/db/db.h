/* db.h - the tuning database: runs, trials, best configs (SQLite).
 *
 * db.c (open, migrations, writes) and db_query.c (best rows, listings), which
 * share db_internal.h, are the only sqlite3.h users besides expr.c (whose
 * in-memory engine never touches a file). Schema in db/schema.sql, upgrades in db/migrations/NNN_*.sql, both
 * compiled into the binary; `PRAGMA user_version` is the schema version and
 * `PRAGMA application_id` marks the file as fatune's. WAL mode, a busy timeout,
 * prepared statements only (values are bound, never formatted into SQL), and
 * BEGIN IMMEDIATE around every write, so several searches may share one file.
 *
 * A connection (struct ft_db) is for one thread at a time: it keeps prepared
 * statements. fatune's pipeline stores from its main thread only.
 *
 * Refusals (FT_EFAIL unless noted, nothing is ever overwritten):
 *   - a path that is not a regular file (ft_db_path_ok, FT_EINPUT);
 *   - a file that is not an SQLite database, or fails `PRAGMA quick_check`
 *     (every complaint is damage, CHECK constraints included)
 *     (ft_db_check: "tuning database 'X' is corrupt or not a database (what);
 *     nothing was written to it: recover ... with 'sqlite3 X .recover > fixed.sql'
 *     ..., or pass --db with another file"), the file and its WAL left
 *     byte-identical; SQLITE_CORRUPT or SQLITE_NOTADB met later gives the same
 *     message ("fatune stopped before writing more to it") and the connection
 *     then refuses every write;
 *   - an SQLite file with another application_id (not fatune's);
 *   - a user_version newer than this fatune knows ("written by a newer fatune
 *     (schema N > M): upgrade fatune").
 */
#ifndef FT_DB_H
#define FT_DB_H

#include <stdio.h>

#include "base/err.h"
#include "base/shape.h"
#include "base/trial.h"

struct ft_db;

/* The one gate before SQLite sees a database path (every open: --db,
 * --replay, merge inputs and output, the check below). path must be a
 * regular file (a symbolic link to one is followed), or absent where create
 * is set; its '-wal', '-shm' and '-journal' files, where present, regular
 * files too (SQLite writes them). Refused with FT_EINPUT, one line naming
 * what the path is (a device node, a fifo, a directory), nothing opened or
 * written: what is "tuning database" or "merge input", for the message.
 * A missing file without create: FT_EINPUT "no tuning database at 'PATH':
 * run 'fatune search' first or pass --db". */
int ft_db_path_ok(const char *path, int create, const char *what, struct ft_err *err);

/* Checks the file at path with `PRAGMA quick_check` on a read-only connection
 * that writes nothing into it or its WAL (an empty WAL and SQLite's '-shm'
 * index, made by opening a WAL-mode file, are removed again on refusal). 0: healthy, or no file yet (missing or empty); -1: FT_EFAIL,
 * damaged (the message above) or unreadable. ft_db_open calls it before it
 * opens the file for writing; a command that writes a database some other way
 * (a merge target) calls it before its first write. */
int ft_db_check(const char *path, struct ft_err *err);

/* Opens (create != 0: creating if missing) and migrates the database at path,
 * after ft_db_check (so a damaged file is refused before anything is written).
 * With create == 0 a missing file is FT_EINPUT: "no tuning database at 'PATH':
 * run 'fatune search' first or pass --db". */
int ft_db_open(struct ft_db **out, const char *path, int create, struct ft_err *err);
void ft_db_close(struct ft_db *db);

/* Another connection to the file db has open, as ft_db_open(path, 0) would
 * make it but without ft_db_check again: for a thread of its own (a connection serves one thread at a time;
 * SQLite's WAL mode and busy timeout let the connections write in turn). */
int ft_db_open_again(const struct ft_db *db, struct ft_db **out, struct ft_err *err);

/* ms this connection has waited for another connection's write lock since it
 * opened (a campaign's units side by side write in turn: docs/timing.md). */
double ft_db_wait_ms(const struct ft_db *db);

/* Schema version this build writes. */
int ft_db_schema_version(void);

/* What identifies a search for resume and best-config purposes. */
struct ft_run {
	const char *fatune_version;
	const char *arch;		/* "sm_89" */
	const char *device;		/* device name, "" when not timed on a device */
	const char *nvrtc_version;	/* "13.0" */
	const char *driver_version;	/* "13000", "" without a driver */
	const char *template_name;	/* "attention": the template file's base name */
	const char *template_hash;	/* hex xxh64 of the template and its includes */
	const char *space_name;		/* the space's name: with the hash, the template's identity */
	const char *family;		/* "mma", "wgmma" */
	int abi;			/* the kernel ABI version its space declares */
	const char *campaign;		/* the campaign this search belongs to, NULL: none */
	const char *space_path;
	const char *space_hash;		/* hex xxh64 of the space file */
	const char *search_key;		/* hex hash of everything a trial's result depends on */
	struct ft_shape shape;		/* incl. dtype and causal */
	const char *mode;		/* "feasibility" (no timing), "timed", or "replayed"
					 * (results copied from a recording) */
	const char *strategy;		/* "exhaustive", "random", ... */
	long long seed;			/* strategy and input seed */
	long long budget;		/* evaluations, -1 for none */
	const char *timing;		/* "warm" or "cold" */
};

/* Records the start of a run; *run_id receives its id. */
int ft_db_run_begin(struct ft_db *db, const struct ft_run *run, long long *run_id,
		    struct ft_err *err);

/* Records how the run ended ("done", "interrupted", "failed") and its wall time. */
int ft_db_run_finish(struct ft_db *db, long long run_id, const char *outcome, double wall_s,
		     struct ft_err *err);

/* Stores n trials of run_id in one transaction (n may be 1: each finished
 * trial is committed as it finishes, so kill -9 loses only the one in flight). */
int ft_db_trials_put(struct ft_db *db, long long run_id, const char *search_key,
		     const struct ft_trial *t, int n, struct ft_err *err);

/* ft_db_trials_put for trials that may already be stored by a concurrent
 * search of the same key (rejections by model, committed in batches): in the
 * one transaction, a trial whose (search_key, config) has a row is left out. */
int ft_db_trials_put_new(struct ft_db *db, long long run_id, const char *search_key,
			 const struct ft_trial *t, int n, struct ft_err *err);

/* ft_db_trials_put (only_new 0) or ft_db_trials_put_new (1) without waiting:
 * when another connection holds the write lock, nothing is stored and it
 * returns 1 at once (the caller keeps the trials for later); 0 when stored,
 * -1 with err. */
int ft_db_trials_put_if_free(struct ft_db *db, long long run_id, const char *search_key,
			     const struct ft_trial *t, int n, int only_new, struct ft_err *err);

/* Claims candidate (search_key, config) for run_id before it is compiled, so
 * that concurrent searches of one key never evaluate it twice (db_claim.c,
 * db/README.md). In one transaction: 1 when another run has stored a trial of
 * it (with fresh: since run_id began; *done, if not NULL, receives the latest
 * one), 2 when another run that is still alive holds the claim (ask again
 * later), 0 when the claim is now run_id's (new, or taken over from an owner
 * that died or ended); -1 with err. */
int ft_db_claim(struct ft_db *db, long long run_id, const char *search_key, const char *config,
		int fresh, struct ft_trial *done, struct ft_err *err);

/* Deletes run_id's claims (when it ends, however it ends). */
int ft_db_claims_release(struct ft_db *db, long long run_id, struct ft_err *err);

/* The latest stored trial of (search_key, config): 1 found (into *out, log not
 * loaded: out->log = NULL; out may be NULL to ask only whether there is one),
 * 0 none, -1 error. */
int ft_db_trial_latest(struct ft_db *db, const char *search_key, const char *config,
		       struct ft_trial *out, struct ft_err *err);

/* Key of a best-config row: one per arch x device x shape (all of it: sizes,
 * KV length and heads, layout, dtype, causal) x space name x template hash. */
struct ft_best_key {
	const char *arch;
	const char *device;		/* NULL: any device (ft_db_best_get only) */
	const char *space;		/* the space's name; NULL: the winner across spaces
					 * (ft_db_best_get only) */
	struct ft_shape shape;
};

/* Recomputes, in one transaction, the best row of search_key's latest run
 * (key->arch, key->device, the run's space and template hash, key->shape)
 * from the latest `ok` trials of search_key (lowest median time; of a run
 * whose ok race-final rows, FT_FINAL_REASON in base/trial.h, are among those
 * latest trials, only those rows) and upserts it. No ok trial: the existing
 * best row is left alone. Returns 1 if a best row exists afterwards. */
int ft_db_best_refresh(struct ft_db *db, const struct ft_best_key *key, const char *search_key,
		       struct ft_err *err);

struct ft_best {
	char arch[16];
	char device[128];
	char space[FT_NAME_MAX];	/* the space's name */
	char space_path[FT_PATH_MAX];	/* the space file its run searched, "" if unknown */
	char family[16];
	char template_name[FT_NAME_MAX];
	char template_hash[17];
	char fatune_version[32];
	struct ft_shape shape;
	char config[FT_CONFIG_MAX];	/* canonical "NAME=V,..." */
	char compile_key[17];		/* CUBIN cache key */
	double t_median_us, t_min_us, rel_err;
	long long smem_model, threads, grid[3], combine_threads, combine_grid[3];
	long long workspace_bytes;
	char updated_at[32];		/* UTC ISO-8601 */
	long long run_id;
	int replayed;			/* 1: its run was `search --replay` (mode replayed):
					 * copied from a recording, not measured */
};

/* The best row for key. With key->space == NULL, the winner across spaces:
 * for each space the row updated last (its current template), then the
 * fastest of those. With key->device == NULL and rows for several devices,
 * fails with FT_EINPUT listing them ("... pass --device NAME"). 1 found, 0
 * none, -1 error. */
int ft_db_best_get(struct ft_db *db, const struct ft_best_key *key, struct ft_best *out,
		   struct ft_err *err);

/* ---- merge ------------------------------------------------------------ */

struct ft_merge_stats {
	long long runs_added;		/* runs new to the output */
	long long runs_known;		/* runs the output already held (see db_merge.c) */
	long long runs_finished;	/* ... of which an input recorded the end */
	long long trials_added, trials_known;
	long long best_rows;		/* searches whose best row was recomputed and exists */
};

/* Checks that path can be merged: an intact fatune database of this build's
 * schema or an older one (opened read-only; nothing is written). FT_EINPUT
 * naming the file and the fix otherwise: missing, not SQLite, corrupt,
 * another application's, a newer schema. */
int ft_db_merge_check(const char *path, struct ft_err *err);

/* Merges the runs and trials of the n files at paths into out, recognising
 * runs and trials it already holds (so merging again adds nothing), and
 * recomputes the best row of every search that gained a trial. One
 * transaction: on any failure out is left as it was; inputs are only read
 * (an older one through a migrated copy in $TMPDIR, removed afterwards).
 * Inputs are checked as by ft_db_merge_check, and one that is out itself is
 * refused (FT_EINPUT). */
int ft_db_merge(struct ft_db *out, const char *const *paths, int n, struct ft_merge_stats *stats,
		struct ft_err *err);

/* ---- query --------------------------------------------------------------- */

enum ft_query_what { FT_Q_BEST, FT_Q_TRIALS, FT_Q_RUNS };

/* Set dtype, causal, run_id and limit to -1 for "any": a zero-initialised
 * filter means fp16, non-causal, run 0 and no rows. */
struct ft_query_filter {
	const char *arch;		/* NULL: any */
	const char *device;		/* NULL: any */
	const struct ft_shape *shape;	/* NULL: any; else B, H, S, D, KV length and heads,
					 * layout must match */
	int dtype;			/* -1 any, else enum ft_dtype */
	int causal;			/* -1 any, 0, 1 */
	const char *status;		/* trials only; NULL any */
	long long run_id;		/* trials only; -1 any */
	long long limit;		/* -1 no limit */
};

/* One row of a query result. types[i]: 0 NULL, 1 integer, 2 real, 3 text. */
typedef int (*ft_row_fn)(void *ctx, int ncols, const char *const *names,
			 const char *const *values, const int *types);

/* The index of the column called name in a row given to an ft_row_fn, -1 if none. */
int ft_row_col(int ncols, const char *const *names, const char *name);

/* What an ft_row_fn returns: FT_ROW_NEXT for the next row; FT_ROW_STOP to end
 * the query early, which is no failure (a reader that has what it wants, or
 * whose output already failed and says so itself); FT_ROW_ERROR when the row
 * could not be taken (out of memory): the query then fails, so a caller never
 * mistakes a partial result for the whole. */
enum ft_row_rc { FT_ROW_ERROR = -1, FT_ROW_NEXT = 0, FT_ROW_STOP = 1 };

/* Runs a query and calls fn per row (see enum ft_row_rc: FT_ROW_ERROR makes
 * it return -1 with FT_EFAIL "... out of memory"). Rows come in a stable order
 * (best: arch, shape; trials: run, then median time with untimed last; runs:
 * id). */
int ft_db_query(struct ft_db *db, enum ft_query_what what, const struct ft_query_filter *f,
		ft_row_fn fn, void *ctx, struct ft_err *err);

/* Reads the best rows (FT_Q_BEST, filter f) of a database that is input,
 * not the tuning database (`search --seeds-from`): opened read only and
 * checked as a merge input is (a regular file, fatune's application id and
 * exact schema, PRAGMA quick_check, within a time bound), an older schema
 * read through an upgraded copy in $TMPDIR; nothing is written to it.
 * Refusals are FT_EINPUT naming it as a "seed database", ending with drop
 * (what to do about it). */
int ft_db_read_best(const char *path, const char *drop, const struct ft_query_filter *f, ft_row_fn fn,
		    void *ctx, struct ft_err *err);

#endif
