/* db_check.c - refusing a damaged tuning database before anything is written to it.
 *
 * ft_db_path_ok is the one gate every database path passes before SQLite sees
 * it: a regular file (or nothing, where one is to be created), never a device
 * node, fifo or directory, which SQLite would happily write its header into.
 *
 * ft_db_check runs `PRAGMA quick_check` on its own connection, opened before
 * the connection that may write: nothing that connection does (WAL mode,
 * schema creation, migrations, the first trial) can reach a damaged file. The
 * checking connection writes nothing into the database file or its WAL: it is
 * `PRAGMA query_only`, and it is told not to checkpoint on close (SQLite's last
 * connection otherwise copies a WAL left behind by a killed process into the
 * file, and deletes it). It is opened read-write nevertheless, because on a
 * read-only connection quick_check silently skips the CHECK constraints
 * (SQLite 3.40: 'CHECK constraint failed in trials' is reported read-write
 * only); a file SQLite can only read is still checked, without them. The one
 * thing the pager itself may do is roll back a hot journal (a process died
 * inside the rollback-mode transaction that creates a file), which restores
 * the file as it was before that transaction. The empty WAL and the
 * shared-memory index ('-shm') that opening a WAL-mode file creates are removed
 * again when it is refused. Every complaint quick_check makes is damage.
 *
 * quick_check reads every page and checks every B-tree's structure, free
 * list and record format, but not that each index agrees with its table
 * (integrity_check's costly part). It costs about as much as reading the file
 * once: docs/testing.md has the measurement on a 1M-trial file.
 *
 * ft_dbi_damaged is the one message for damage, used here and by ft_dbi_fail
 * when SQLite reports SQLITE_CORRUPT or SQLITE_NOTADB later, after which
 * ft_dbi_begin refuses every further write on that connection.
 */
#include "db/db.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/outfile.h"
#include "db/db_internal.h"

/* How long the check waits for a writer that holds the file locked (another
 * fatune creating it, in rollback mode for that one transaction): as long as
 * any other statement does, see db.c. */
#define CHECK_BUSY_MS 30000

int ft_dbi_damaged(struct ft_err *err, const char *path, const char *detail, int written)
{
	return ft_error(err, FT_EFAIL,
			"tuning database '%s' is corrupt or not a database (%s); %s: recover what it holds with 'sqlite3 %s .recover > fixed.sql', or pass --db with another file",
			path, detail,
			written ? "fatune stopped before writing more to it" : "nothing was written to it", path);
}

/* Copies SQLite's first complaint into dst, one line: quick_check returns
 * several lines ("*** in database main ***\nPage 11: ..."). */
static void one_line(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (; src && *src && n + 1 < size; src++)
		dst[n++] = (*src == '\n' || *src == '\r') ? ' ' : *src;
	dst[n] = '\0';
}

void ft_dbi_sides_note(const char *path, struct ft_dbi_sides *f)
{
	struct stat sb;

	snprintf(f->wal, sizeof(f->wal), "%s-wal", path);
	snprintf(f->shm, sizeof(f->shm), "%s-shm", path);
	f->had_wal = stat(f->wal, &sb) == 0;
	f->had_shm = stat(f->shm, &sb) == 0;
}

/* Opening a WAL-mode file creates an empty WAL and a '-shm' index, which a
 * read-only connection does not delete on close. Those made since
 * ft_dbi_sides_note are removed again, so a refused file's directory is left
 * as it was; a WAL that was there before, or that holds frames, stays. */
void ft_dbi_sides_clean(const struct ft_dbi_sides *f)
{
	struct stat sb;

	if (!f->had_wal && stat(f->wal, &sb) == 0 && sb.st_size == 0)
		(void)unlink(f->wal);	/* best effort: an empty WAL is harmless */
	if (!f->had_shm)
		(void)unlink(f->shm);	/* likewise: SQLite rebuilds it when needed */
}

int ft_db_path_ok(const char *path, int create, const char *what, struct ft_err *err)
{
	static const char *const sides[] = { "-wal", "-shm", "-journal" };
	char side[FT_PATH_MAX + 16];
	struct stat sb;

	if (!path || !*path)
		return ft_error(err, FT_EINPUT, "the %s path is empty: name a file", what);
	if (stat(path, &sb) != 0) {
		if (errno != ENOENT)
			return ft_error(err, FT_EFAIL, "cannot reach %s '%s': %s: check the path or pass --db", what, path,
					strerror(errno));
		if (!create && !strcmp(what, "tuning database"))
			return ft_error(err, FT_EINPUT, "no tuning database at '%s': run 'fatune search' first or pass --db",
					path);
		if (!create)
			return ft_error(err, FT_EINPUT, "%s '%s': %s: check the path", what, path, strerror(ENOENT));
	} else if (!S_ISREG(sb.st_mode)) {
		return ft_error(err, FT_EINPUT, "%s '%s' is %s, not a database file; nothing was written to it: pass a regular file",
				what, path, ft_file_kind(sb.st_mode));
	}
	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		snprintf(side, sizeof(side), "%s%s", path, sides[i]);
		if (stat(side, &sb) == 0 && !S_ISREG(sb.st_mode))
			return ft_error(err, FT_EINPUT,
					"'%s' beside %s '%s' is %s, where SQLite keeps a regular file; nothing was written: remove it or pass another file",
					side, what, path, ft_file_kind(sb.st_mode));
	}
	return 0;
}

int ft_db_check(const char *path, struct ft_err *err)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	char detail[256];
	struct ft_dbi_sides side;
	struct stat sb;
	int rc, ret = -1, damaged = 0;

	if (ft_db_path_ok(path, 1, "tuning database", err))
		return -1;
	ft_dbi_sides_note(path, &side);
	/* no bytes in the file or a WAL: a new file, nothing to check */
	if (!(stat(path, &sb) == 0 && sb.st_size > 0) && !(stat(side.wal, &sb) == 0 && sb.st_size > 0))
		return 0;
	/* read-write but query_only: SQLite skips CHECK constraints in
	 * quick_check on a read-only connection (see the file comment) */
	rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_extended_result_codes(h, 1);
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_busy_timeout(h, CHECK_BUSY_MS);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(h, "PRAGMA query_only = 1", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(h, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *verdict = (const char *)sqlite3_column_text(st, 0);

		if (verdict && !strcmp(verdict, "ok")) {
			ret = 0;
		} else {
			char line[200];

			one_line(line, sizeof(line), verdict ? verdict : "no verdict");
			snprintf(detail, sizeof(detail), "PRAGMA quick_check: %s", line);
			ft_dbi_damaged(err, path, detail, 0);
			damaged = 1;
		}
	} else if (rc == SQLITE_READONLY_ROLLBACK) {
		/* a hot journal: a process died inside the one rollback-mode
		 * transaction (creating the file). Only a writing connection may
		 * roll it back, which restores the file as it was before: that
		 * connection's own reads then meet any damage (ft_dbi_fail). */
		ret = 0;
	} else if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) {
		snprintf(detail, sizeof(detail), "PRAGMA quick_check: %s", h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
		ft_dbi_damaged(err, path, detail, 0);
		damaged = 1;
	} else {
		ft_error(err, FT_EFAIL,
			 "checking tuning database '%s' (PRAGMA quick_check) failed: %s: check that the file and its directory are readable or pass --db",
			 path, h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
	}
	sqlite3_finalize(st);	/* repeats the step's error, handled above */
	sqlite3_close_v2(h);	/* always SQLITE_OK; no checkpoint (see above) */
	/* only for damage: after another failure (busy, unreadable) a healthy
	 * file's WAL and index may belong to a writer that started meanwhile */
	if (damaged)
		ft_dbi_sides_clean(&side);
	return ret;
}
