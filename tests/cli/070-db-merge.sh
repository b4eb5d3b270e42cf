# 070-db-merge: `fatune db merge` unites shard files: idempotent, a run split over two files
# comes back whole, best rows recomputed; foreign, corrupt, damaged and newer files are refused
# (exit 2, one line) with every file unchanged; an older file is merged through an upgraded copy
# and left as it was; a merge failing halfway writes nothing.
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
R="search --replay $REC --arch sm_90 --shape 1x8x512x64 --quiet"
run $R --strategy random --budget 20 --seed 3 --db "$T/a.db"; expect_rc 0
run $R --causal --db "$T/b.db"; expect_rc 0
best() { sql "$1" "SELECT causal || ' ' || config || ' ' || t_median_us FROM best ORDER BY causal"; }
trials() { sql "$1" "SELECT r.search_key || ' ' || r.started_at || ' ' || t.config || ' ' || t.status || ' ' || coalesce(t.t_median_us, '-') FROM trials t JOIN runs r ON r.id = t.run_id ORDER BY 1"; }
md5() { if [ -e "$1" ]; then md5sum "$1" | cut -d" " -f1; else echo none; fi; }
ma=$(md5 "$T/a.db"); mb=$(md5 "$T/b.db")

# idempotent: the second merge adds nothing and leaves the file as it was
run db merge "$T/out.db" "$T/a.db" "$T/b.db"; expect_rc 0
expect_out "merged 2 files into .*out.db: 2 runs added \(0 already there"
n=$(sql "$T/out.db" "SELECT count(*) FROM trials")
[ "$n" -eq $(($(sql "$T/a.db" "SELECT count(*) FROM trials") + $(sql "$T/b.db" "SELECT count(*) FROM trials"))) ] ||
	fail "out.db has $n trials, not the sum of its inputs"
[ "$(best "$T/out.db")" = "$(printf '%s\n%s' "$(best "$T/a.db")" "$(best "$T/b.db")")" ] || fail "best rows differ from the inputs'"
[ "$(trials "$T/out.db")" = "$(cat <(trials "$T/a.db") <(trials "$T/b.db") | sort)" ] || fail "trials differ from the inputs'"
mo=$(md5 "$T/out.db")
run db merge "$T/out.db" "$T/b.db" "$T/a.db"; expect_rc 0
expect_out "0 runs added \(2 already there.*0 trials added \($n already there\), 0 best rows"
[ "$(md5 "$T/out.db")" = "$mo" ] || fail "merging again changed out.db"
[ "$(md5 "$T/a.db")" = "$ma" ] && [ "$(md5 "$T/b.db")" = "$mb" ] || fail "merging changed an input"

# conflicting: one run in two files, each with part of its trials (the first copy taken while it
# ran: no end yet): the merge holds the whole run, finished, and the whole run's best
cp "$T/a.db" "$T/a1.db"; cp "$T/a.db" "$T/a2.db"
sql "$T/a1.db" "DELETE FROM trials WHERE id % 2 = 0; UPDATE runs SET finished_at = NULL, outcome = NULL; DELETE FROM best;"
sql "$T/a2.db" "DELETE FROM trials WHERE id % 2 = 1 AND id % 3 != 0; DELETE FROM best;"	# odd multiples of 3 in both
run db merge "$T/split.db" "$T/a1.db"; expect_rc 0
[ -z "$(sql "$T/split.db" "SELECT finished_at FROM runs")" ] || fail "the first part should be unfinished"
run db merge "$T/split.db" "$T/a2.db"; expect_rc 0
expect_out "0 runs added \(1 already there, 1 of them finished now\)"
[ "$(trials "$T/split.db")" = "$(trials "$T/a.db")" ] || fail "the split run did not come back whole"
[ "$(sql "$T/split.db" "SELECT outcome FROM runs")" = done ] || fail "the split run did not take its end"
[ "$(best "$T/split.db")" = "$(best "$T/a.db")" ] || fail "the split run's best row differs"

# refusals: one line, exit 2, no output file created, inputs and an existing output unchanged
sql "$T/foreign.db" "CREATE TABLE t(x); PRAGMA application_id=1234;"
sql "$T/plain.db" "CREATE TABLE t(x);"
sql "$T/newer.db" "PRAGMA application_id=1180783726; PRAGMA user_version=99; CREATE TABLE runs(id);"
head -c 8192 /dev/urandom >"$T/garbage.db"
head -c 1048576 "$T/a.db" >"$T/truncated.db"
check_refused() { # FILE PATTERN
	local before; before=$(md5 "$1")
	run db merge "$T/new.db" "$T/a.db" "$1"; expect_bad_input "$2"
	[ ! -e "$T/new.db" ] || fail "a refused merge created its output"
	run db merge "$T/out.db" "$1" "$T/b.db"; expect_bad_input "$2"
	[ "$(md5 "$T/out.db")" = "$mo" ] || fail "a refused merge changed the output"
	[ "$(md5 "$1")" = "$before" ] || fail "a refused merge changed its input"
}
check_refused "$T/foreign.db" "merge input .*foreign.db' belongs to another application"
check_refused "$T/plain.db" "plain.db' is another SQLite database, not a fatune database"
check_refused "$T/newer.db" "newer fatune \(schema 99 > "
check_refused "$T/garbage.db" "garbage.db' is not a readable database"
check_refused "$T/truncated.db" "truncated.db' is (corrupt|not a readable database)"
check_refused "$T/missing.db" "merge input .*missing.db': No such file"
run db merge "$T/out.db" "$T/out.db"; expect_bad_input "is the output .* itself"
run db merge "$T/out.db"; expect_bad_input "needs OUT.db and at least one IN.db"
run db frobnicate; expect_bad_input "no subcommand 'frobnicate'"
run db merge --help; expect_rc 0; expect_out "usage: fatune db merge OUT.db IN.db"; expect_out "--quiet"
run db --help; expect_rc 0; expect_out "merge +merge tuning databases"

# an input of an older schema (the recorded fixture is schema 1) is read through an upgraded copy in
# $TMPDIR: merged, left unchanged, and the copy removed
sql_load "$T/old.db" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
mold=$(md5 "$T/old.db"); mkdir "$T/tmp"
TMPDIR="$T/tmp" run db merge "$T/fromold.db" "$T/old.db"; expect_rc 0
expect_out "2 runs added \(0 already there.*2 best rows recomputed"
[ "$(md5 "$T/old.db")" = "$mold" ] || fail "merging changed the older input"
[ "$(sql "$T/old.db" "PRAGMA user_version")" = 1 ] || fail "the older input was upgraded in place"
[ -z "$(ls -A "$T/tmp")" ] || fail "the upgraded copy was left in TMPDIR: $(ls "$T/tmp")"
[ "$(sql "$T/fromold.db" "SELECT count(*) FROM trials")" = "$(sql "$T/old.db" "SELECT count(*) FROM trials")" ] ||
	fail "trials of the older input were lost"
sql "$T/damaged.db" "PRAGMA application_id=1180783726; CREATE TABLE runs(id);"
check_refused "$T/damaged.db" "schema version 0: it is damaged"

# all or nothing: an input whose last trial breaks the schema's CHECK (hand-edited; a read-only check
# cannot see it) is refused (exit 2) after its other rows were copied; the output is left as it was
cp "$T/a.db" "$T/bad.db"
sql "$T/bad.db" "UPDATE runs SET started_at = '2000-01-01T00:00:00Z'; PRAGMA ignore_check_constraints = 1; UPDATE trials SET status = 'bogus' WHERE id = (SELECT max(id) FROM trials);"
run db merge "$T/out.db" "$T/bad.db"; expect_bad_input "merging .*bad.db.*breaks fatune.s schema.*CHECK constraint"
[ "$(md5 "$T/out.db")" = "$mo" ] || fail "a failed merge changed the output"
echo "ok ($n trials)"
