# 103-check-constraint-damage: every complaint of PRAGMA quick_check is damage (issue 18, item 13): a
# trial whose record breaks the schema's CHECK (status 'bogus', written past the constraint) makes
# search and query refuse the file before writing anything; SQLite reports it only on a read-write
# connection, which the check therefore uses (query_only).
. "$FT_TEST_LIB"
S="search --arch sm_89 --shape 1x2x64x64 --space $TESTSPACES/fault.yaml --quiet"
run $S; expect_rc 0
sql "$FATUNE_DB" "PRAGMA ignore_check_constraints = 1; UPDATE trials SET status = 'bogus'
  WHERE id = (SELECT id FROM trials ORDER BY id LIMIT 1 OFFSET (SELECT count(*) / 2 FROM trials));"
[ "$(sql "$FATUNE_DB" "PRAGMA quick_check")" = "CHECK constraint failed in trials" ] || fail "the damage is not what SQLite reports"
md5() { md5sum "$1" | cut -d" " -f1; }
m=$(md5 "$FATUNE_DB")
n=$(sql "$FATUNE_DB" "SELECT count(*) FROM runs")
run $S --fresh
expect_rc 1; expect_err "is corrupt or not a database \(PRAGMA quick_check: CHECK constraint failed in trials\); nothing was written to it"
run query --runs
expect_rc 1; expect_err "CHECK constraint failed in trials"
[ "$(md5 "$FATUNE_DB")" = "$m" ] || fail "the damaged file was written to"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM runs")" -eq "$n" ] || fail "a run was added to the damaged file"
echo ok
