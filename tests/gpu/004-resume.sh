# 004-resume: kill -9 in the middle of a search loses at most the candidate in flight;
# running it again skips what was finished and completes.
. "$FT_TEST_LIB"
gpu_or_skip
count() { sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status='ok'" 2>/dev/null || echo 0; }
"$FATUNE" search --shape 1x8x256x64 --quiet >"$T/first.out" 2>&1 &
pid=$!
for i in $(seq 1 600); do
	[ "$(count)" -ge 3 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
before=$(count)
[ "$before" -ge 1 ] || fail "nothing was stored before the kill"
run search --shape 1x8x256x64
cat "$T/out" "$T/err"
expect_rc 0 "resumed search"
expect_out "already done, skipped"
# (a finalist of the race has a second row, its final re-measurement: docs/timing.md)
dups=$(sql "$FATUNE_DB" "SELECT count(*) FROM (SELECT config FROM trials WHERE status='ok' AND reason NOT LIKE 'race final:%' GROUP BY config HAVING count(*) > 1)")
[ "$dups" -eq 0 ] || fail "$dups configs were timed twice after resume"
echo "ok ($before ok trials survived the kill)"
