# 110-interrupt-everywhere: SIGINT and SIGTERM end a run within 2 s on every path, also while
# every candidate is rejected by the model (a 10^9-candidate space: before the fix `search` went on
# writing rejections for minutes): search, check, and a campaign of two shapes. Each exits 1 with
# the one "interrupted:" line, the database passes integrity_check, the run is marked interrupted
# and holds no trial twice.
. "$FT_TEST_LIB"
S="--arch sm_89 --space $TESTSPACES/huge_rejected.yaml"
# interrupt SIG OUT CMD...: starts CMD, sends SIG after $AFTER s (default 1), waits; sets rc and ms (kill to exit)
interrupt() {
	local sig=$1 out=$2 pid
	shift 2
	"$FATUNE" "$@" >"$out" 2>"$T/err" &
	pid=$!
	sleep "${AFTER:-1}"
	kill -0 $pid 2>/dev/null || { cat "$T/err"; fail "$* ended before the signal"; }
	signal_gone "$sig" $pid 2000 "$*"
	[ "$rc" -eq 1 ] || { cat "$T/err"; fail "$* exited $rc after SIG$sig, not 1"; }
	expect_err "^fatune: error: interrupted: "
	# (a default table's notes on what it narrowed to fit 120 columns are not counted)
	[ "$(grep -Evc '^$|^fatune: (config lists the values of|[0-9]+ columns? hidden)' "$T/err")" -le 2 ] ||
		{ cat "$T/err"; fail "more than the interrupt's line (and the no-GPU note)"; }
}
db_ok() {
	[ "$(sql "$FATUNE_DB" "PRAGMA integrity_check")" = ok ] || fail "database damaged after the interrupt"
	[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM runs WHERE outcome IS NOT 'interrupted'")" -eq 0 ] ||
		fail "a run is not marked interrupted: $(sql "$FATUNE_DB" "SELECT id, outcome FROM runs")"
	[ "$(sql "$FATUNE_DB" "SELECT count(*) - count(DISTINCT search_key || config) FROM trials")" -eq 0 ] ||
		fail "a trial is stored twice"
}

interrupt INT "$T/out" search $S --shape 1x8x512x64 --quiet
expect_err "interrupted: finished trials are stored"
db_ok
n1=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials")
[ "$n1" -gt 0 ] || fail "nothing stored in the second before the interrupt"

# the resumed search first passes over what the first one stored: 3 s before its signal, so that it stores
# something new also under ASan on a loaded machine (1 s was not always enough there)
AFTER=3 interrupt TERM "$T/out" search $S --shape 1x8x512x64 --quiet
db_ok
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials")" -gt "$n1" ] || fail "the resumed search added nothing"

interrupt INT "$T/check.txt" check $S --shape 1x8x512x64 --all
expect_err "interrupted: check stopped after [0-9]+ candidates"
[ "$(grep -c rejected_constraint "$T/check.txt")" -gt 1000 ] || fail "check printed no rows before the interrupt"

interrupt TERM "$T/check.txt" check $S --shape 1x8x512x64 --format json --all

# a campaign of two units: the first is interrupted, the second never starts
interrupt INT "$T/out" search $S --shape 1x8x256:512x64 --quiet
db_ok
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM runs WHERE s = 256")" -eq 1 ] || fail "the campaign's first unit has no run"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM runs WHERE s = 512")" -eq 2 ] || fail "the campaign went on to its second unit"
echo "ok (interrupted search, check and a campaign each ended within 2 s)"
