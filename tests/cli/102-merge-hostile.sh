# 102-merge-hostile: a merge input is untrusted (issue 18, item 6 and Low): its schema must be exactly
# fatune's (a recursive VIEW named trials, a trigger or an extra table is refused at once, exit 2,
# instead of a merge that never ends); WAL-mode inputs are read without leaving '-wal'/'-shm' beside
# them, a WAL with committed frames is read, a read-only directory's shard is readable (as non-root),
# and two distinct trial rows are never merged into one.
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
run search --replay "$REC" --arch sm_90 --shape 1x8x512x64 --quiet --strategy random --budget 20 --db "$T/good.db"; expect_rc 0
[ "$(sql "$T/good.db" "PRAGMA journal_mode")" = wal ] || fail "the shard is not in WAL mode"
md5() { md5sum "$1" | cut -d" " -f1; }
n=$(sql "$T/good.db" "SELECT count(*) FROM trials")

# a recursive view in place of trials: refused within seconds, nothing created
cp "$T/good.db" "$T/view.db"
sql "$T/view.db" "ALTER TABLE trials RENAME TO trials_real; CREATE VIEW trials AS WITH RECURSIVE c(x) AS
  (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT t.* FROM c, trials_real t;"
set +e; timeout 60 "$FATUNE" db merge "$T/out.db" "$T/view.db" >"$T/out" 2>"$T/err"; rc=$?; set -e
[ "$rc" -ne 124 ] || fail "the merge of a recursive view did not end within 60 s"
expect_bad_input "merge input '.*view.db' is not fatune's schema [0-9]+: it holds"
[ ! -e "$T/out.db" ] || fail "a refused merge created its output"
# a trigger, an extra table, a missing index: each refused
for what in "CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END;|holds 'trigger t runs" \
	"CREATE TABLE extra (x);|holds 'table extra extra" "DROP INDEX trials_by_run;|lacks 'index trials_by_run"; do
	cp "$T/good.db" "$T/h.db"; sql "$T/h.db" "${what%%|*}"
	run db merge "$T/out.db" "$T/h.db"; expect_bad_input "${what#*|}"
done

# no '-wal' or '-shm' left beside a WAL-mode input, the input unchanged
mg=$(md5 "$T/good.db")
run db merge "$T/out.db" "$T/good.db"; expect_rc 0
[ ! -e "$T/good.db-wal" ] && [ ! -e "$T/good.db-shm" ] || { ls -la "$T"; fail "the merge left -wal/-shm beside its input"; }
[ "$(md5 "$T/good.db")" = "$mg" ] || fail "the merge changed its input"
[ "$(sql "$T/out.db" "SELECT count(*) FROM trials")" -eq "$n" ] || fail "not every trial merged"

# committed frames in a WAL (a writer killed before its checkpoint) are read
cp "$T/good.db" "$T/walin.db"
python3 -c 'import sqlite3, os, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE runs SET started_at = ?", ("1999-01-01T00:00:00Z",)); c.commit()
os._exit(0)' "$T/walin.db"
[ -s "$T/walin.db-wal" ] || fail "no WAL content to test with"
run db merge "$T/out2.db" "$T/walin.db"; expect_rc 0
[ "$(sql "$T/out2.db" "SELECT started_at FROM runs")" = 1999-01-01T00:00:00Z ] || fail "the WAL's commit was not read"

# a shard in a read-only directory (root writes anyway: only as another user)
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$T/ro"; cp "$T/good.db" "$T/ro/s.db"; chmod 0555 "$T/ro"
	run db merge "$T/out3.db" "$T/ro/s.db"; chmod 0755 "$T/ro"; expect_rc 0
	[ "$(sql "$T/out3.db" "SELECT count(*) FROM trials")" -eq "$n" ] || fail "the read-only shard was not merged whole"
else
	echo "(root: the read-only directory part is skipped)"
fi

# two distinct trials that agree on run, config, status, time and created_at stay two
cp "$T/good.db" "$T/dup.db"
sql "$T/dup.db" "INSERT INTO trials (run_id, search_key, config, status, reason, created_at, t_median_us, samples, regs)
  SELECT run_id, search_key, config, status, reason, created_at, t_median_us, samples, 99 FROM trials
  WHERE id = (SELECT min(id) FROM trials)"
run db merge "$T/out4.db" "$T/dup.db"; expect_rc 0
[ "$(sql "$T/out4.db" "SELECT count(*) FROM trials")" -eq $((n + 1)) ] || fail "two distinct trials were merged into one"
run db merge "$T/out4.db" "$T/dup.db"; expect_rc 0; expect_out "0 trials added"
echo ok
