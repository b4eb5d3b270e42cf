/* db_claim.c - candidates claimed by the search evaluating them (see db.h and
 * db/migrations/003_claims.sql): concurrent searches of one search key into
 * one database never compile or time one candidate twice.
 *
 * ft_db_claim runs in one BEGIN IMMEDIATE transaction, so between the check
 * ("is a trial of it stored? is it claimed by a live owner?") and the claim
 * no other connection writes. Liveness of an owner on this host is checked by
 * its pid and its start time (a reused pid is another process); on another
 * host, where neither can be checked, a claim younger than CLAIM_TRUST_SQL is
 * trusted.
 */
#include "db/db.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db/db_internal.h"

/* How long a claim of another host is trusted: one candidate's compile and
 * timing take seconds to a few minutes, so an hour means its owner died. */
#define CLAIM_TRUST_SQL "'-1 hour'"

/* Start time of process pid (field 22 of /proc/PID/stat, clock ticks since
 * boot), or 0 when it cannot be read (no /proc, gone). */
static long long proc_start(long long pid)
{
	char path[64], buf[1024], *p;
	long long v = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lld/stat", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name (field 2) may hold spaces and ')': skip to its last ')' */
	if (!(p = strrchr(buf, ')')))
		return 0;
	p++;
	for (int field = 3; field <= 22 && p; field++) {
		while (*p == ' ')
			p++;
		if (field == 22 && sscanf(p, "%lld", &v) != 1)
			v = 0;
		p = strchr(p, ' ');
	}
	return v;
}

/* This process's start time, read once per process (a claim per candidate
 * read /proc for it each time). */
static long long own_start(void)
{
	static long long pid, start;

	if (pid != (long long)getpid()) {
		pid = (long long)getpid();
		start = proc_start(pid);
	}
	return start;
}

static const char *host_name(void)
{
	static char host[256];

	if (!host[0] && gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "unknown");
	return host;
}

/* 1 when the owner of a claim still works on it. */
static int owner_live(const char *host, long long pid, long long start, int recent, int run_open)
{
	long long now;

	if (!run_open)
		return 0;	/* its run has ended (and did not store it) */
	if (strcmp(host, host_name()))
		return recent;
	if (pid == (long long)getpid())
		return 0;	/* an earlier run of this process, ended without a trial */
	if (pid <= 0 || (kill((pid_t)pid, 0) && errno == ESRCH))
		return 0;
	now = proc_start(pid);
	return !(now && start && now != start);
}

static const char sql_stored[] =
	"SELECT 1 FROM trials WHERE search_key = ?1 AND config = ?2 AND run_id <> ?3"
	" AND (?4 = 0 OR created_at >= (SELECT started_at FROM runs WHERE id = ?3)) LIMIT 1";
static const char sql_owner[] =
	"SELECT c.run_id, c.host, c.pid, c.pid_start, c.claimed_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', "
	CLAIM_TRUST_SQL "), (SELECT r.outcome IS NULL FROM runs r WHERE r.id = c.run_id)"
	" FROM claims c WHERE c.search_key = ?1 AND c.config = ?2";
static const char sql_take[] =
	"INSERT OR REPLACE INTO claims (search_key, config, run_id, host, pid, pid_start, claimed_at)"
	" VALUES (?, ?, ?, ?, ?, ?, " NOW_SQL ")";

/* One step of a bound query: 1 row, 0 none, -1 error. */
static int step(struct ft_db *db, sqlite3_stmt *st, const char *what, struct ft_err *err)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return ft_dbi_fail(db, rc, err, what);
}

int ft_db_claim(struct ft_db *db, long long run_id, const char *search_key, const char *config,
		int fresh, struct ft_trial *done, struct ft_err *err)
{
	sqlite3_stmt *st = NULL;
	struct binder b;
	int got, ret = -1;

	if (ft_dbi_begin(db, err))
		return -1;
	/* stored by another run meanwhile (with fresh: since this run began) */
	if (ft_dbi_prep(db, sql_stored, 0, &st, "looking up a candidate's trial", err))
		goto fail;
	b = (struct binder){ st, 0, SQLITE_OK };
	ft_dbi_b_text(&b, search_key);
	ft_dbi_b_text(&b, config);
	ft_dbi_b_int(&b, run_id);
	ft_dbi_b_int(&b, fresh != 0);
	if (ft_dbi_b_done(db, &b, "looking up a candidate's trial", err) ||
	    (got = step(db, st, "looking up a candidate's trial", err)) < 0)
		goto fail;
	sqlite3_finalize(st);
	st = NULL;
	if (got) {
		ret = 1;
		goto commit;
	}
	/* claimed by a live owner */
	if (ft_dbi_prep(db, sql_owner, 0, &st, "looking up a claim", err))
		goto fail;
	b = (struct binder){ st, 0, SQLITE_OK };
	ft_dbi_b_text(&b, search_key);
	ft_dbi_b_text(&b, config);
	if (ft_dbi_b_done(db, &b, "looking up a claim", err) || (got = step(db, st, "looking up a claim", err)) < 0)
		goto fail;
	if (got && sqlite3_column_int64(st, 0) != run_id &&
	    owner_live((const char *)sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "",
		       sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), sqlite3_column_int(st, 4),
		       sqlite3_column_int(st, 5))) {
		ret = 2;
		goto commit;
	}
	sqlite3_finalize(st);
	/* ours: a new claim, or one taken over from a dead owner */
	if (ft_dbi_prep(db, sql_take, 0, &st, "claiming a candidate", err))
		goto fail;
	b = (struct binder){ st, 0, SQLITE_OK };
	ft_dbi_b_text(&b, search_key);
	ft_dbi_b_text(&b, config);
	ft_dbi_b_int(&b, run_id);
	ft_dbi_b_text(&b, host_name());
	ft_dbi_b_int(&b, (long long)getpid());
	ft_dbi_b_int(&b, own_start());
	if (ft_dbi_b_done(db, &b, "claiming a candidate", err) || step(db, st, "claiming a candidate", err) < 0)
		goto fail;
	ret = 0;
commit:
	sqlite3_finalize(st);
	st = NULL;
	if (ft_dbi_commit(db, err))
		goto fail;
	if (ret == 1 && done && ft_db_trial_latest(db, search_key, config, done, err) != 1)
		return ft_error(err, FT_EFAIL, "trial of '%s' vanished from '%s' while it was read: this is a fatune bug",
				config, db->path);
	return ret;
fail:
	sqlite3_finalize(st);
	ft_dbi_rollback(db);
	return -1;
}

int ft_db_claims_release(struct ft_db *db, long long run_id, struct ft_err *err)
{
	sqlite3_stmt *st;
	int rc;

	if (ft_dbi_prep(db, "DELETE FROM claims WHERE run_id = ?1", 0, &st, "releasing the run's claims", err))
		return -1;
	if ((rc = sqlite3_bind_int64(st, 1, run_id)) != SQLITE_OK || (rc = sqlite3_step(st)) != SQLITE_DONE) {
		ft_dbi_fail(db, rc, err, "releasing the run's claims");
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}
