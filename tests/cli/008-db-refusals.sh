# 008-db-refusals: a corrupt file, a foreign SQLite file and a newer schema are refused, never overwritten.
. "$FT_TEST_LIB"
head -c 4096 /dev/urandom >"$T/garbage.db"
cp "$T/garbage.db" "$T/garbage.orig"
run query --db "$T/garbage.db"; expect_rc 1; expect_err "corrupt or not a database"
run search --arch sm_89 --shape 1x8x512x64 --db "$T/garbage.db" --space "$TESTSPACES/fault.yaml"
expect_rc 1; expect_err "corrupt or not a database"
cmp -s "$T/garbage.db" "$T/garbage.orig" || fail "the corrupt file was modified"

sql "$T/foreign.db" "CREATE TABLE t(x); PRAGMA application_id=1234;"
run query --db "$T/foreign.db"; expect_rc 1; expect_err "another application"

sql "$T/newer.db" "PRAGMA application_id=1180783726; PRAGMA user_version=99; CREATE TABLE runs(id);"
cp "$T/newer.db" "$T/newer.orig"
run query --db "$T/newer.db"; expect_rc 1; expect_err "newer fatune \(schema 99"
run search --arch sm_89 --shape 1x8x512x64 --db "$T/newer.db" --space "$TESTSPACES/fault.yaml"
expect_rc 1; expect_err "newer fatune"
cmp -s "$T/newer.db" "$T/newer.orig" || fail "the newer file was modified"
echo "ok"
