/* db_merge.c - merging tuning databases: the runs and trials of other files
 * (one per SLURM shard, one per host) into one, and its best rows recomputed.
 *
 * Part of the database module (shares db_internal.h). Inputs are untrusted
 * (shards come from cluster nodes): each is opened read-only (immutable when
 * no WAL content lies beside it) and checked before anything is written (a
 * regular file, fatune's application_id, a schema version this build knows,
 * exactly that version's tables, indexes and columns with no view, trigger or
 * virtual table, PRAGMA quick_check), within a time bound, so a refused input
 * leaves every file as it was; an input of an older schema is read through a
 * migrated copy in $TMPDIR, never upgraded in place. The copy is one BEGIN IMMEDIATE transaction on the
 * output over all inputs: all of it lands, or nothing does. Each input is
 * read through its own read-only connection rather than ATTACH, because
 * SQLite attaches at most 10 files and not inside a transaction, and a SLURM
 * array easily has more shards than that.
 *
 * Identity (what makes a merge idempotent):
 *   - a run is (search_key, started_at, fatune_version, arch, device, seed):
 *     the search key hashes the space, template, target, shape and mode, and
 *     the start time and seed tell two searches of the same key apart. A
 *     run already there that is unfinished takes the input's end (finished_at,
 *     outcome, wall_s) when the input has one;
 *   - a trial is a row of its run with every column equal (NULLs match):
 *     two evaluations that differ in anything (a reason, a register count,
 *     a device index) stay two rows, and a row merged before is recognised.
 * Rows are copied column by column under the output's column names (both
 * files have the same schema version, so the same columns), run ids being
 * remapped. The best row of every search that gained a trial is recomputed
 * with the search's own rule (ft_dbi_best_refresh), in the same transaction.
 */
#include "base/clock.h"
#include "db/db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/interrupt.h"
#include "db/db_internal.h"

/* Column lists of a table: "\"a\", \"b\"" and "?, ?"; the widest table
 * (trials, 35 columns of at most 20 characters) needs far less. */
#define COLS_MAX 4096

struct cols {
	char names[COLS_MAX];
	char marks[COLS_MAX];
	int n;
};

/* One input: a read-only connection (db.path is the file as given, for
 * messages) to the file itself, or to an upgraded copy of an older one. */
struct input {
	struct ft_db db;
	char tmp[FT_PATH_MAX];		/* the copy, "" when none; removed on close */
	struct ft_dbi_sides sides;	/* its '-wal' and '-shm' before we opened it */
	int noted;			/* sides is set: close removes what we made */
	double limit_s, deadline;	/* the time bound on reading it (past_deadline) */
	const char *role;		/* in messages: "merge input", "seed database" */
	const char *drop;		/* what to do about a refused one */
};

#define MERGE_ROLE "merge input"
#define MERGE_DROP "leave it out of the merge"

/* Copies an older input (through SQLite's backup API, which takes a
 * consistent snapshot, WAL included) to a temporary file, migrates the copy
 * with ft_db_open and reads that instead: the input itself is never written. */
static int upgrade_copy(struct input *in, struct ft_err *err)
{
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct ft_db *up = NULL;
	sqlite3_backup *bk;
	sqlite3 *dst = NULL;
	int fd, rc;

	snprintf(in->tmp, sizeof(in->tmp), "%s/fatune-merge-XXXXXX", dir);
	if ((fd = mkstemp(in->tmp)) < 0) {
		in->tmp[0] = '\0';
		return ft_error(err, FT_EFAIL, "cannot copy %s '%s' to upgrade it: %s in '%s': set TMPDIR to a writable directory",
				in->role, in->db.path, strerror(errno), dir);
	}
	close(fd);
	rc = sqlite3_open_v2(in->tmp, &dst, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK) {
		bk = sqlite3_backup_init(dst, "main", in->db.h, "main");
		if (!bk) {
			rc = sqlite3_errcode(dst);
		} else {
			rc = sqlite3_backup_step(bk, -1);
			rc = sqlite3_backup_finish(bk) == SQLITE_OK && rc == SQLITE_DONE ? SQLITE_OK : rc;
		}
	}
	if (rc != SQLITE_OK)
		ft_error(err, FT_EFAIL, "cannot copy %s '%s' to upgrade it: %s: check the space in '%s'",
			 in->role, in->db.path, dst ? sqlite3_errmsg(dst) : sqlite3_errstr(rc), dir);
	sqlite3_close_v2(dst);
	if (rc != SQLITE_OK)
		return -1;
	if (ft_db_open(&up, in->tmp, 0, err)) {
		ft_err_prefix(err, "upgrading a copy of %s '%s'", in->role, in->db.path);
		return -1;
	}
	ft_db_close(up);
	sqlite3_close_v2(in->db.h);
	in->db.h = NULL;
	rc = sqlite3_open_v2(in->tmp, &in->db.h, SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK)
		return ft_error(err, FT_EFAIL, "cannot read the upgraded copy of %s '%s': %s", in->role,
				in->db.path, in->db.h ? sqlite3_errmsg(in->db.h) : sqlite3_errstr(rc));
	return 0;
}

/* How long reading one input may take: a generous 60 s, plus 1 s per MB of
 * file. quick_check reads at disk speed (hundreds of MB/s) and the copy
 * costs about as much again, so a healthy input stays far inside it; what
 * the bound catches is a file built to make a query run forever (the schema
 * check below already refuses the views and triggers that could). */
#define INPUT_BASE_S 60.0
#define INPUT_S_PER_MB 1.0

/* SQLite's progress handler: interrupts a statement on an input past its deadline. */
static int past_deadline(void *arg)
{
	const struct input *in = arg;

	return ft_mono_ms() / 1e3 > in->deadline;
}

static void start_clock(struct input *in)
{
	in->deadline = ft_mono_ms() / 1e3 + in->limit_s;
}

/* The URI that opens path read-only and immutable: no locks, no '-shm' or
 * '-wal' made beside it, readable on a read-only mount. Only for a file with
 * no WAL content (immutable ignores a WAL). Bytes other than [A-Za-z0-9/._-]
 * are percent-encoded; an absolute path gets an empty authority. */
static int immutable_uri(const char *path, char *out, size_t size)
{
	size_t n = (size_t)snprintf(out, size, "file:%s", path[0] == '/' ? "//" : "");

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (n + 4 >= size)
			return -1;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/._-", *p))
			out[n++] = (char)*p;
		else
			n += (size_t)snprintf(out + n, size - n, "%%%02X", *p);
	}
	return (size_t)snprintf(out + n, size - n, "?immutable=1") >= size - n ? -1 : 0;
}

/* One line per schema object, in a fixed order: type, name, table, virtual or
 * not, and its columns (name, type, NOT NULL, key, hidden) or indexed
 * columns. The statistics tables ANALYZE adds are left out. */
static const char schema_sql[] =
	"SELECT m.type || ' ' || m.name || ' ' || m.tbl_name || ' '"
	" || (coalesce(m.sql, '') LIKE 'CREATE VIRTUAL%') || ' ' || coalesce(CASE m.type"
	" WHEN 'table' THEN (SELECT group_concat(x.name || ':' || x.type || ':' || x.\"notnull\" || ':' || x.pk"
	"  || ':' || x.hidden, ',') FROM pragma_table_xinfo(m.name) x)"
	" WHEN 'index' THEN (SELECT group_concat(coalesce(x.name, '(expr)') || ':' || x.desc || ':' || x.key, ',')"
	"  FROM pragma_index_xinfo(m.name) x) END, '')"
	" FROM sqlite_master m WHERE m.name NOT LIKE 'sqlite\\_stat%' ESCAPE '\\' ORDER BY m.type, m.name";

/* The schema lines of h, one per line, into a malloc'ed string (*out). */
static int schema_lines(sqlite3 *h, char **out)
{
	sqlite3_stmt *st = NULL;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int rc;

	*out = NULL;
	if (!buf)
		return SQLITE_NOMEM;
	buf[0] = '\0';
	rc = sqlite3_prepare_v2(h, schema_sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *line = (const char *)sqlite3_column_text(st, 0);
		size_t n = line ? strlen(line) : 0;

		rc = SQLITE_OK;
		if (len + n + 2 > cap) {
			char *bigger = realloc(buf, cap = 2 * (len + n + 2));
			if (!bigger) {
				rc = SQLITE_NOMEM;
				break;
			}
			buf = bigger;
		}
		memcpy(buf + len, line ? line : "", n);
		len += n;
		buf[len++] = '\n';
		buf[len] = '\0';
	}
	sqlite3_finalize(st);	/* repeats the step's error, kept in rc */
	if (rc != SQLITE_DONE) {
		free(buf);
		return rc == SQLITE_OK ? SQLITE_ERROR : rc;
	}
	*out = buf;
	return SQLITE_OK;
}

/* The first line of a that b lacks, into dst ("" when none). */
static void first_extra(const char *a, const char *b, char *dst, size_t size)
{
	dst[0] = '\0';
	for (const char *l = a; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = (size_t)(nl - l);
		const char *p = b;
		int found = 0;

		for (; *p && !found;) {
			const char *q = strchr(p, '\n');
			found = (size_t)(q - p) == n && !strncmp(p, l, n);
			p = q + 1;
		}
		if (!found) {
			snprintf(dst, size, "%.*s", (int)(n < 160 ? n : 160), l);
			return;
		}
		l = nl + 1;
	}
}

/* Refuses an input whose schema is not exactly fatune's schema `version`:
 * only the expected tables and indexes with their columns; no view, trigger
 * or virtual table, nothing more or less. */
static int check_schema(struct input *input, long long version, struct ft_err *err)
{
	sqlite3 *mem = NULL;
	char *want = NULL, *have = NULL, extra[200];
	int rc, ret = -1;

	rc = sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE, NULL);
	if (rc != SQLITE_OK) {
		ft_error(err, FT_EFAIL, "cannot check %s '%s': %s", input->role, input->db.path,
			 sqlite3_errstr(rc));
		goto out;
	}
	if (ft_dbi_schema_build(mem, version, err))
		goto out;
	if ((rc = schema_lines(mem, &want)) != SQLITE_OK) {
		ft_error(err, FT_EFAIL, "cannot list fatune's schema %lld: %s: this is a fatune bug", version,
			 sqlite3_errmsg(mem));
		goto out;
	}
	if ((rc = schema_lines(input->db.h, &have)) != SQLITE_OK) {
		ft_error(err, FT_EINPUT, "%s '%s' has a schema fatune cannot read (%s): it was edited by hand or is hostile; %s",
			 input->role, input->db.path, sqlite3_errmsg(input->db.h), input->drop);
		goto out;
	}
	if (strcmp(want, have)) {
		first_extra(have, want, extra, sizeof(extra));
		if (extra[0])
			ft_error(err, FT_EINPUT, "%s '%s' is not fatune's schema %lld: it holds '%s' (type, name, table, virtual, columns), which fatune never makes; it was edited by hand or is hostile: %s",
				 input->role, input->db.path, version, extra, input->drop);
		else {
			first_extra(want, have, extra, sizeof(extra));
			ft_error(err, FT_EINPUT, "%s '%s' is not fatune's schema %lld: it lacks '%s' (type, name, table, virtual, columns); it was edited by hand or is damaged: %s",
				 input->role, input->db.path, version, extra, input->drop);
		}
		goto out;
	}
	ret = 0;
out:
	free(want);
	free(have);
	sqlite3_close_v2(mem);
	return ret;
}

/* Opens path read-only: immutable when no WAL content lies beside it (no
 * side files made, a read-only mount readable), else through SQLite's WAL
 * index, whose '-shm' (and empty WAL) made here close_input removes. */
static int open_ro(struct input *input, const char *path, int *wal)
{
	char uri[3 * FT_PATH_MAX + 32];
	struct stat sb;

	*wal = stat(input->sides.wal, &sb) == 0 && sb.st_size > 0;
	if (!*wal && !immutable_uri(path, uri, sizeof(uri)))
		return sqlite3_open_v2(uri, &input->db.h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	return sqlite3_open_v2(path, &input->db.h, SQLITE_OPEN_READONLY, NULL);
}

/* Opens path read-only and checks it is an intact fatune database of this
 * build's schema or an older one (which, with copy_older, is read through an
 * upgraded copy): a regular file (ft_db_path_ok), fatune's application id and
 * a known version, exactly that version's schema (check_schema), PRAGMA
 * quick_check; all of it within the input's time bound. Every refusal is
 * FT_EINPUT naming the file. */
static int open_input(struct input *input, const char *path, const char *role, const char *drop,
		      int copy_older, struct ft_err *err)
{
	struct ft_db *in = &input->db;
	static const char header[] = "SELECT (SELECT application_id FROM pragma_application_id),"
				     " (SELECT user_version FROM pragma_user_version),"
				     " (SELECT count(*) FROM sqlite_master)";
	sqlite3_stmt *st = NULL;
	long long app = 0, version = 0, objects = 0;
	int latest = ft_db_schema_version(), rc, wal = 0;
	const char *what = "reading its header";
	struct stat sb;

	memset(input, 0, sizeof(*input));
	input->role = role;
	input->drop = drop;
	if (ft_db_path_ok(path, 0, input->role, err))
		return -1;
	if (strlen(path) >= sizeof(in->path))
		return ft_error(err, FT_EINPUT, "%s path '%.64s...' is longer than %zu bytes: use a shorter one",
				input->role, path, sizeof(in->path) - 1);
	strcpy(in->path, path);
	ft_dbi_sides_note(path, &input->sides);
	input->noted = 1;
	input->limit_s = INPUT_BASE_S + (stat(path, &sb) == 0 ? (double)sb.st_size / 1e6 * INPUT_S_PER_MB : 0);
	start_clock(input);
	rc = open_ro(input, path, &wal);
	if (rc == SQLITE_OK) {
		sqlite3_progress_handler(in->h, 10000, past_deadline, input);
		rc = sqlite3_busy_timeout(in->h, 30000);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(in->h, header, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			app = sqlite3_column_int64(st, 0);
			version = sqlite3_column_int64(st, 1);
			objects = sqlite3_column_int64(st, 2);
			rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_OK && wal)
		return ft_error(err, FT_EINPUT,
				"%s '%s' has a WAL ('%s-wal') that cannot be read here (%s): checkpoint it where it was written (sqlite3 FILE 'PRAGMA wal_checkpoint') or copy it with its -wal to a writable directory",
				input->role, path, path, in->h ? sqlite3_errmsg(in->h) : sqlite3_errstr(rc));
	if (rc == SQLITE_OK && app == 0)
		return ft_error(err, FT_EINPUT, "%s '%s' is %s, not a fatune database: %s",
				input->role, path, objects ? "another SQLite database" : "empty", input->drop);
	if (rc == SQLITE_OK && app != FT_DB_APPLICATION_ID)
		return ft_error(err, FT_EINPUT,
				"%s '%s' belongs to another application (SQLite application_id 0x%08llx, fatune's is 0x%08x): %s",
				input->role, path, (unsigned long long)app & 0xffffffffULL, FT_DB_APPLICATION_ID, input->drop);
	if (rc == SQLITE_OK && version > latest)
		return ft_error(err, FT_EINPUT,
				"%s '%s' was written by a newer fatune (schema %lld > %d): merge with that fatune or upgrade this one",
				input->role, path, version, latest);
	if (rc == SQLITE_OK && version < 1)
		return ft_error(err, FT_EINPUT,
				"%s '%s' has fatune's application_id but schema version %lld: it is damaged; %s",
				input->role, path, version, input->drop);
	if (rc == SQLITE_OK && check_schema(input, version, err))
		return -1;
	if (rc == SQLITE_OK) {
		/* read-only: SQLite does not evaluate CHECK constraints here (db_check.c);
		 * the output enforces them on every copied row instead (merge_input) */
		what = "checking it (PRAGMA quick_check)";
		rc = sqlite3_prepare_v2(in->h, "SELECT quick_check FROM pragma_quick_check LIMIT 1", -1, &st, NULL);
		if (rc == SQLITE_OK) {
			int s = sqlite3_step(st);
			const char *res = s == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;

			if (res && strcmp(res, "ok")) {
				ft_error(err, FT_EINPUT,
					 "%s '%s' is corrupt (quick_check: %.200s): %s",
					 input->role, path, res, input->drop);
				sqlite3_finalize(st);
				return -1;
			}
			rc = s == SQLITE_ROW || s == SQLITE_DONE ? SQLITE_OK : s;
		}
		sqlite3_finalize(st);
	}
	if (rc == SQLITE_INTERRUPT)
		return ft_error(err, FT_EINPUT,
				"%s '%s' took more than %.0f s to check (%s): it may be built to never finish; %s",
				input->role, path, input->limit_s, what, input->drop);
	if (rc != SQLITE_OK)
		return ft_error(err, FT_EINPUT, "%s '%s' is not a readable database (%s: %s): %s",
				input->role, path, what, in->h ? sqlite3_errmsg(in->h) : sqlite3_errstr(rc), input->drop);
	return version < latest && copy_older ? upgrade_copy(input, err) : 0;
}

static void close_input(struct input *in)
{
	sqlite3_close_v2(in->db.h);	/* always SQLITE_OK */
	in->db.h = NULL;
	if (in->noted)
		ft_dbi_sides_clean(&in->sides);	/* what the read-only connection made */
	in->noted = 0;
	if (in->tmp[0]) {
		char side[FT_PATH_MAX + 8];

		unlink(in->tmp);
		snprintf(side, sizeof(side), "%s-wal", in->tmp);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", in->tmp);
		unlink(side);
		in->tmp[0] = '\0';
	}
}

int ft_db_merge_check(const char *path, struct ft_err *err)
{
	struct input in;
	int rc = open_input(&in, path, MERGE_ROLE, MERGE_DROP, 0, err);

	close_input(&in);
	return rc;
}

int ft_db_read_best(const char *path, const char *drop, const struct ft_query_filter *f, ft_row_fn fn,
		    void *ctx, struct ft_err *err)
{
	struct input in;
	int rc = open_input(&in, path, "seed database", drop, 1, err);

	if (!rc) {
		/* the read too stays within the input's time bound */
		rc = ft_db_query(&in.db, FT_Q_BEST, f, fn, ctx, err);
		if (rc && err->status != FT_EINPUT && past_deadline(&in))
			ft_error(err, FT_EINPUT,
				 "seed database '%s' took more than %.0f s to read: it may be built to never finish; %s",
				 path, in.limit_s, drop);
	}
	close_input(&in);
	return rc;
}

/* The output's columns of table but id and run_id (identifiers of our own
 * schema, quoted: the only text put into SQL here). */
static int table_cols(struct ft_db *db, const char *table, struct cols *c, struct ft_err *err)
{
	sqlite3_stmt *st;
	struct binder b;
	size_t ln = 0, lm = 0;
	int rc;

	if (ft_dbi_prep(db, "SELECT name FROM pragma_table_info(?1) WHERE name NOT IN ('id', 'run_id') ORDER BY cid",
			0, &st, "listing columns", err))
		return -1;
	b = (struct binder){ st, 0, SQLITE_OK };
	ft_dbi_b_text(&b, table);
	if (ft_dbi_b_done(db, &b, "listing columns", err)) {
		sqlite3_finalize(st);
		return -1;
	}
	c->n = 0;
	c->names[0] = c->marks[0] = '\0';
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		if (strchr(name, '"') || ln + strlen(name) + 5 >= sizeof(c->names) || lm + 4 >= sizeof(c->marks)) {
			sqlite3_finalize(st);
			return ft_error(err, FT_EFAIL, "table '%s' of '%s' has an odd column '%.64s': the file was edited by hand",
					table, db->path, name);
		}
		ln += (size_t)snprintf(c->names + ln, sizeof(c->names) - ln, "%s\"%s\"", c->n ? ", " : "", name);
		lm += (size_t)snprintf(c->marks + lm, sizeof(c->marks) - lm, "%s?", c->n ? ", " : "");
		c->n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return ft_dbi_fail(db, rc, err, "listing columns");
	return 0;
}

/* The statements of one input's merge: s_* read the input, o_* the output. */
struct merge {
	struct ft_db *out, *in;
	struct ft_merge_stats *st;
	sqlite3_stmt *s_runs, *s_trials, *o_find_run, *o_add_run, *o_finish_run, *o_find_trial,
		*o_add_trial, *o_touch;
};

static void merge_release(struct merge *m)
{
	sqlite3_stmt *all[] = { m->s_runs, m->s_trials, m->o_find_run, m->o_add_run,
				m->o_finish_run, m->o_find_trial, m->o_add_trial, m->o_touch };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		sqlite3_finalize(all[i]);	/* repeats a failed step's error, already in err */
}

/* Steps a bound output statement; *row = 1 if it returned a row, and *id its
 * first column. Resets it for the next use. */
static int step_out(struct merge *m, sqlite3_stmt *st, int *row, long long *id, const char *what,
		    struct ft_err *err)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		/* the output's CHECK constraints catch what a read-only check of
		 * the input cannot (a status fatune never stores, ...) */
		if ((rc & 0xff) == SQLITE_CONSTRAINT)
			ft_error(err, FT_EINPUT,
				 "merge input '%s' holds a row that breaks fatune's schema (%s: %s): it was edited by hand or is damaged; leave it out of the merge",
				 m->in->path, what, sqlite3_errmsg(m->out->h));
		else
			ft_dbi_fail(m->out, rc, err, what);
		sqlite3_reset(st);
		return -1;
	}
	if (row)
		*row = rc == SQLITE_ROW;
	if (id)
		*id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_reset(st);
	return 0;
}

/* Binds the input row's columns from..from+n-1 to st's parameters at..at+n-1. */
static int copy_values(struct merge *m, sqlite3_stmt *st, int at, sqlite3_stmt *src, int from, int n,
		       struct ft_err *err)
{
	for (int i = 0; i < n; i++) {
		int rc = sqlite3_bind_value(st, at + i, sqlite3_column_value(src, from + i));

		if (rc != SQLITE_OK)
			return ft_dbi_fail(m->out, rc, err, "copying a value");
	}
	return 0;
}

/* Trials of the input's run in_id into the output's run out_id. The lookup
 * uses trials_by_key (search_key, config): "+run_id" keeps the planner off
 * trials_by_run, which would scan the whole run for every trial. */
static int merge_trials(struct merge *m, long long in_id, long long out_id, const struct cols *tc,
			struct ft_err *err)
{
	int rc, found;

	sqlite3_reset(m->s_trials);
	if ((rc = sqlite3_bind_int64(m->s_trials, 1, in_id)) != SQLITE_OK)
		return ft_dbi_fail(m->in, rc, err, "reading trials");
	while ((rc = sqlite3_step(m->s_trials)) == SQLITE_ROW) {
		if (ft_interrupted())
			return ft_interrupt_error(err, "nothing was merged (the merge is one transaction)");
		/* s_trials: config, status, created_at, t_median_us, search_key, <tc> */
		if (sqlite3_bind_int64(m->o_find_trial, 1, out_id) != SQLITE_OK ||
		    copy_values(m, m->o_find_trial, 2, m->s_trials, 5, tc->n, err) ||
		    step_out(m, m->o_find_trial, &found, NULL, "looking up a trial", err))
			return -1;
		if (found) {
			m->st->trials_known++;
			continue;
		}
		if (sqlite3_bind_int64(m->o_add_trial, 1, out_id) != SQLITE_OK ||
		    copy_values(m, m->o_add_trial, 2, m->s_trials, 5, tc->n, err) ||
		    step_out(m, m->o_add_trial, NULL, NULL, "adding a trial", err) ||
		    copy_values(m, m->o_touch, 1, m->s_trials, 4, 1, err) ||
		    step_out(m, m->o_touch, NULL, NULL, "noting a changed search", err))
			return -1;
		m->st->trials_added++;
	}
	if (rc != SQLITE_DONE)
		return ft_dbi_fail(m->in, rc, err, "reading trials");
	return 0;
}

/* Every run of one input (and its trials) into the output. */
static int merge_input(struct merge *m, const struct cols *rc_, const struct cols *tc, struct ft_err *err)
{
	char sql[2 * COLS_MAX + 256];
	int rc, found;
	long long out_id;

	/* the identity columns first (0..5), then the end (6..8), then every column */
	snprintf(sql, sizeof(sql),
		 "SELECT id, search_key, started_at, fatune_version, arch, device, seed, finished_at, outcome,"
		 " wall_s, %s FROM runs ORDER BY id", rc_->names);
	if (ft_dbi_prep(m->in, sql, 0, &m->s_runs, "reading runs", err))
		return -1;
	snprintf(sql, sizeof(sql),
		 "SELECT config, status, created_at, t_median_us, search_key, %s FROM trials WHERE run_id = ?1 ORDER BY id",
		 tc->names);
	if (ft_dbi_prep(m->in, sql, 0, &m->s_trials, "reading trials", err))
		return -1;
	while ((rc = sqlite3_step(m->s_runs)) == SQLITE_ROW) {
		long long in_id = sqlite3_column_int64(m->s_runs, 0);

		if (ft_interrupted())
			return ft_interrupt_error(err, "nothing was merged (the merge is one transaction)");
		if (copy_values(m, m->o_find_run, 1, m->s_runs, 1, 6, err) ||
		    step_out(m, m->o_find_run, &found, &out_id, "looking up a run", err))
			return -1;
		if (found) {
			int changed;

			m->st->runs_known++;
			if (sqlite3_bind_int64(m->o_finish_run, 1, out_id) != SQLITE_OK ||
			    copy_values(m, m->o_finish_run, 2, m->s_runs, 7, 3, err) ||
			    step_out(m, m->o_finish_run, NULL, NULL, "recording a run's end", err))
				return -1;
			changed = sqlite3_changes(m->out->h);
			m->st->runs_finished += changed;
		} else {
			if (copy_values(m, m->o_add_run, 1, m->s_runs, 10, rc_->n, err) ||
			    step_out(m, m->o_add_run, NULL, NULL, "adding a run", err))
				return -1;
			out_id = sqlite3_last_insert_rowid(m->out->h);
			m->st->runs_added++;
		}
		if (merge_trials(m, in_id, out_id, tc, err))
			return -1;
	}
	if (rc != SQLITE_DONE)
		return ft_dbi_fail(m->in, rc, err, "reading runs");
	return 0;
}

/* Recomputes the best row of every search that gained a trial, keyed by
 * its latest timed (or replayed) run. */
static int refresh_best(struct ft_db *db, struct ft_merge_stats *stats, struct ft_err *err)
{
	static const char sql[] =
		"SELECT r.search_key, r.arch, r.device, coalesce(r.space_name, r.template_name), r.b, r.h, r.s,"
		" r.d, r.dtype, r.causal, r.s_kv, r.h_kv, r.layout FROM runs r"
		" WHERE r.search_key IN (SELECT search_key FROM temp.merge_touched) AND r.mode IN ('timed', 'replayed')"
		" AND r.id = (SELECT max(x.id) FROM runs x WHERE x.search_key = r.search_key AND x.mode IN ('timed', 'replayed'))"
		" ORDER BY r.id";
	sqlite3_stmt *st;
	struct ft_err ignored;
	int rc, ret = -1;

	if (ft_dbi_prep(db, sql, 0, &st, "listing merged searches", err))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ft_best_key k = { 0 };
		const char *key = (const char *)sqlite3_column_text(st, 0);
		int got;

		k.arch = (const char *)sqlite3_column_text(st, 1);
		k.device = (const char *)sqlite3_column_text(st, 2);
		k.space = (const char *)sqlite3_column_text(st, 3);
		k.shape.b = sqlite3_column_int(st, 4);
		k.shape.h = sqlite3_column_int(st, 5);
		k.shape.s = sqlite3_column_int(st, 6);
		k.shape.d = sqlite3_column_int(st, 7);
		k.shape.causal = sqlite3_column_int(st, 9) != 0;
		k.shape.s_kv = sqlite3_column_int(st, 10);
		k.shape.h_kv = sqlite3_column_int(st, 11);
		if (ft_dtype_parse((const char *)sqlite3_column_text(st, 8), &k.shape.dtype, &ignored) ||
		    ft_layout_parse((const char *)sqlite3_column_text(st, 12), &k.shape.layout, &ignored)) {
			ft_error(err, FT_EFAIL, "run of search '%s' in '%s' has an unknown dtype or layout: the file was edited by hand",
				 key ? key : "", db->path);
			goto out;
		}
		got = ft_dbi_best_refresh(db, &k, key, err);
		if (got < 0)
			goto out;
		stats->best_rows += got;
	}
	if (rc != SQLITE_DONE) {
		ft_dbi_fail(db, rc, err, "listing merged searches");
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* The trial lookup: a row of the same run with every column equal (IS, so
 * NULLs match), parameters ?1 the run, ?2.. the columns of tc in order.
 * search_key and config (never NULL) lead, for trials_by_key. */
static int find_trial_sql(const struct cols *tc, char *sql, size_t size, struct ft_err *err)
{
	const char *p = tc->names;
	size_t n = (size_t)snprintf(sql, size, "SELECT id FROM trials WHERE +run_id = ?1");

	for (int i = 0; i < tc->n; i++) {
		const char *end = strstr(p, ", ");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int eq = (len == 12 && !strncmp(p, "\"search_key\"", len)) || (len == 8 && !strncmp(p, "\"config\"", len));

		n += (size_t)snprintf(sql + (n < size ? n : size), n < size ? size - n : 0, " AND %.*s %s ?%d",
				      (int)len, p, eq ? "=" : "IS", i + 2);
		p = end ? end + 2 : p + len;
	}
	if (n + 9 >= size)
		return ft_error(err, FT_EFAIL, "the trial lookup is longer than %zu bytes: this is a fatune bug", size);
	strcat(sql, " LIMIT 1");
	return 0;
}

/* The output statements, prepared once for all inputs. */
static int prepare_out(struct merge *m, const struct cols *rc_, const struct cols *tc, struct ft_err *err)
{
	char sql[4 * COLS_MAX + 256];

	snprintf(sql, sizeof(sql), "INSERT INTO runs (%s) VALUES (%s)", rc_->names, rc_->marks);
	if (ft_dbi_prep(m->out, sql, 0, &m->o_add_run, "preparing the run copy", err))
		return -1;
	snprintf(sql, sizeof(sql), "INSERT INTO trials (run_id, %s) VALUES (?, %s)", tc->names, tc->marks);
	if (ft_dbi_prep(m->out, sql, 0, &m->o_add_trial, "preparing the trial copy", err))
		return -1;
	return ft_dbi_prep(m->out,
			   "SELECT id FROM runs WHERE search_key = ?1 AND started_at = ?2 AND fatune_version = ?3"
			   " AND arch = ?4 AND device = ?5 AND seed IS ?6 ORDER BY id LIMIT 1",
			   0, &m->o_find_run, "preparing the run lookup", err) ||
	       ft_dbi_prep(m->out,
			   "UPDATE runs SET finished_at = ?2, outcome = ?3, wall_s = ?4"
			   " WHERE id = ?1 AND finished_at IS NULL AND ?2 IS NOT NULL",
			   0, &m->o_finish_run, "preparing the run update", err) ||
	       find_trial_sql(tc, sql, sizeof(sql), err) ||
	       ft_dbi_prep(m->out, sql, 0, &m->o_find_trial, "preparing the trial lookup", err) ||
	       ft_dbi_prep(m->out, "INSERT OR IGNORE INTO temp.merge_touched (search_key) VALUES (?1)", 0,
			   &m->o_touch, "preparing the search list", err);
}

/* Refuses an input that is the output itself (same device and inode). */
static int not_output(struct ft_db *out, const char *path, struct ft_err *err)
{
	struct stat a, b;

	if (stat(out->path, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return ft_error(err, FT_EINPUT, "merge input '%s' is the output '%s' itself: leave it out of the inputs",
				path, out->path);
	return 0;
}

int ft_db_merge(struct ft_db *out, const char *const *paths, int n, struct ft_merge_stats *stats,
		struct ft_err *err)
{
	struct cols *cr = NULL, *ct = NULL;
	struct input *ins = NULL;
	struct merge m = { 0 };
	int opened = 0, ret = -1;

	memset(stats, 0, sizeof(*stats));
	cr = calloc(1, sizeof(*cr));
	ct = calloc(1, sizeof(*ct));
	ins = calloc((size_t)(n > 0 ? n : 1), sizeof(*ins));
	if (!cr || !ct || !ins) {
		ft_error(err, FT_EFAIL, "out of memory merging %d tuning databases", n);
		goto out;
	}
	/* every input checked before the first write */
	for (; opened < n; opened++)
		if (not_output(out, paths[opened], err) || open_input(&ins[opened], paths[opened], MERGE_ROLE, MERGE_DROP, 1, err)) {
			close_input(&ins[opened]);
			goto out;
		}
	if (table_cols(out, "runs", cr, err) || table_cols(out, "trials", ct, err) || ft_dbi_begin(out, err))
		goto out;
	m.out = out;
	m.st = stats;
	if (ft_dbi_exec(out, "CREATE TEMP TABLE merge_touched (search_key TEXT PRIMARY KEY)",
			"noting changed searches", err) ||
	    prepare_out(&m, cr, ct, err))
		goto fail;
	for (int i = 0; i < n; i++) {
		m.in = &ins[i].db;
		start_clock(&ins[i]);
		if (merge_input(&m, cr, ct, err)) {
			if (sqlite3_errcode(ins[i].db.h) == SQLITE_INTERRUPT)
				ft_error(err, FT_EINPUT,
					 "merge input '%s' took more than %.0f s to read: it may be built to never finish; leave it out of the merge",
					 ins[i].db.path, ins[i].limit_s);
			ft_err_prefix(err, "merging '%s'", ins[i].db.path);
			goto fail;
		}
		sqlite3_finalize(m.s_runs);
		sqlite3_finalize(m.s_trials);
		m.s_runs = m.s_trials = NULL;
	}
	if (refresh_best(out, stats, err))
		goto fail;
	merge_release(&m);
	memset(&m, 0, sizeof(m));
	if (ft_dbi_exec(out, "DROP TABLE temp.merge_touched", "dropping the search list", err) ||
	    ft_dbi_commit(out, err))
		goto fail;
	ret = 0;
	goto out;
fail:
	merge_release(&m);
	ft_dbi_rollback(out);
out:
	for (int i = 0; i < opened; i++)
		close_input(&ins[i]);
	free(ins);
	free(cr);
	free(ct);
	return ret;
}
