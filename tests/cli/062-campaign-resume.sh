# 062-campaign-resume: a no-GPU campaign of the shipped space (S 256..2048) killed with -9, or
# stopped with Ctrl-C (SIGINT), in the middle of its first unit, then run again, ends with exactly
# the trials of an uninterrupted run: every (search, config) once, with the same statuses, the
# finished part skipped, nothing lost.
. "$FT_TEST_LIB"
C="search --arch sm_89 --shape 1x8x256..2048x64 --space $SPACES/attention.yaml --quiet"
# the uninterrupted campaign
run $C --json --db "$T/whole.db"
expect_rc 0 "uninterrupted campaign"
[ "$(grep -c '"shape"' "$T/out")" -eq 4 ] || fail "1x8x256..2048x64 must be 4 units"
# the same with a cold compile cache (slow enough to kill), killed once some compiles are stored
export FATUNE_CACHE_DIR="$T/cold-cache"
"$FATUNE" $C --db "$T/killed.db" >/dev/null 2>&1 &
pid=$!
wait_rows "$T/killed.db" "SELECT count(*) FROM trials WHERE status = 'compiled'" 10
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
[ "$(sql "$T/killed.db" "PRAGMA integrity_check")" = "ok" ] || fail "the database is damaged after kill -9"
before=$(sql "$T/killed.db" "SELECT count(*) FROM trials WHERE status = 'compiled'")
units=$(sql "$T/killed.db" "SELECT count(*) FROM runs")
[ "$before" -ge 10 ] && [ "$units" -lt 4 ] || fail "the kill came too late ($before compiled, $units units started)"
run $C --json --db "$T/killed.db"
expect_rc 0 "resumed campaign"
python3 - "$T/out" "$before" <<'PY' || fail "the resumed campaign did not skip the finished part"
import json, sys
first = json.loads(open(sys.argv[1]).readline())
assert first["skipped"] > 0 and first["skipped"] <= int(sys.argv[2]), (first["skipped"], sys.argv[2])
PY
trials() { sql "$1" "SELECT search_key, config, status FROM trials ORDER BY 1, 2"; }
[ "$(sql "$T/killed.db" "SELECT count(*) FROM (SELECT 1 FROM trials GROUP BY search_key, config HAVING count(*) > 1)")" -eq 0 ] ||
	fail "a config was stored twice after the resume"
[ "$(trials "$T/killed.db")" = "$(trials "$T/whole.db")" ] || {
	diff <(trials "$T/whole.db") <(trials "$T/killed.db") | head >&2
	fail "the resumed campaign's trials differ from the uninterrupted run's"
}
# Ctrl-C: exit 1, the closing line says interrupted, the run row too; the rerun completes it
export FATUNE_CACHE_DIR="$T/cold-cache2"
"$FATUNE" $C --json --db "$T/int.db" >"$T/int.out" 2>"$T/int.err" &
pid=$!
wait_rows "$T/int.db" "SELECT count(*) FROM trials WHERE status = 'compiled'" 10
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
[ "$rc" -eq 1 ] || { cat "$T/int.err" >&2; fail "an interrupted campaign exited $rc, not 1"; }
grep -q "interrupted: finished trials are stored; run the same command to resume" "$T/int.err" ||
	{ cat "$T/int.err" >&2; fail "no resume hint after Ctrl-C"; }
tail -1 "$T/int.out" | grep -q '"interrupted":true' || fail "the closing JSON line does not say interrupted"
[ "$(sql "$T/int.db" "SELECT outcome FROM runs ORDER BY id DESC LIMIT 1")" = "interrupted" ] || fail "the run is not marked interrupted"
run $C --db "$T/int.db"
expect_rc 0 "campaign resumed after Ctrl-C"
[ "$(trials "$T/int.db")" = "$(trials "$T/whole.db")" ] || fail "the campaign resumed after Ctrl-C differs from the uninterrupted run"
echo "ok (killed after $before compiled trials in $units unit(s); $(trials "$T/whole.db" | wc -l) trials match)"
