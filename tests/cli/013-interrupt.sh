# 013-interrupt: Ctrl-C (SIGINT) during a search stops it cleanly: what finished is stored, the run is
# marked interrupted, exit 1, and the same search resumes where it stopped.
. "$FT_TEST_LIB"
S="--arch sm_90 --shape 1x8x512x64 --jobs 1 --space $FATUNE_SOURCE_DIR/search_spaces/attention.yaml"
"$FATUNE" search $S >"$T/first.out" 2>"$T/first.err" &
pid=$!
# wait until some candidates are stored (NVRTC takes ~0.25 s each on one thread)
wait_rows "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status='compiled'" 3
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
[ "$rc" -eq 1 ] || { cat "$T/first.err"; fail "interrupted search exited $rc, not 1"; }
grep -q "interrupted: finished trials are stored" "$T/first.err" || { cat "$T/first.err"; fail "no interrupted message"; }
[ "$(sql "$FATUNE_DB" "SELECT outcome FROM runs")" = "interrupted" ] || fail "run not marked interrupted"
stored=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status='compiled'")
total=$("$FATUNE" check $S 2>/dev/null | grep -c "accepted")
[ "$stored" -lt "$total" ] || fail "the search finished before the interrupt: make it longer"
run search $S
expect_rc 0 "resumed search"
expect_out "\($stored already done, skipped\)"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status='compiled'")" -eq "$total" ] || fail "resume lost or repeated candidates"
echo "ok ($stored of $total kept across the interrupt)"
