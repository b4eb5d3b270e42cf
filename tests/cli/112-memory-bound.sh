# 112-memory-bound: memory stays flat over a 10^9-candidate space. `check --format table` streams its
# rows (it buffered all of them: 4.4 GB in 40 s) and `search` keeps a bounded compile queue (the
# enumeration ran ahead of the compile threads: 5 GB). Each runs 5 s; the peak resident set must stay
# under 300 MB and grow by less than 32 MB between the 2nd and the 5th second (before the fixes both
# grew by 30-40 MB a second on this 2-core machine). Figures for longer runs: docs/testing.md.
. "$FT_TEST_LIB"
# under AddressSanitizer (tools/test.sh's second pass) freed memory waits in a 256 MB quarantine that
# counts as resident: without it the sanitized binary measures what fatune itself holds (about 55 MB)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }
# flat WHAT CMD...: runs CMD 5 s, checks its memory, stops it (SIGTERM; SIGKILL 2 s later)
flat() {
	local what=$1 pid early peak
	shift
	"$FATUNE" "$@" >/dev/null 2>"$T/err" &
	pid=$!
	sleep 2
	early=$(kb $pid VmRSS)
	sleep 3
	peak=$(kb $pid VmHWM)
	late=$(kb $pid VmRSS)
	kill -TERM $pid
	for i in $(seq 1 40); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
	kill -KILL $pid 2>/dev/null || true
	wait $pid || true
	[ -n "$early" ] && [ -n "$peak" ] || { cat "$T/err"; fail "$what ended before 5 s"; }
	echo "$what: resident $((early / 1024)) MB at 2 s, $((late / 1024)) MB at 5 s, peak $((peak / 1024)) MB"
	[ "$peak" -lt $((300 * 1024)) ] || fail "$what: peak resident set $((peak / 1024)) MB (300 allowed)"
	[ $((late - early)) -lt $((32 * 1024)) ] || fail "$what: grew $(((late - early) / 1024)) MB in 3 s"
}
flat "check --format table" check --arch sm_89 --shape 1x8x512x64 --space "$TESTSPACES/huge_rejected.yaml" --format table
flat "search (all rejected)" search --arch sm_89 --shape 1x8x512x64 --space "$TESTSPACES/huge_rejected.yaml" --quiet
flat "search (all compiled)" search --arch sm_89 --shape 1x8x512x64 --space "$TESTSPACES/huge_feasible.yaml" --jobs 2 --quiet
echo "ok"
