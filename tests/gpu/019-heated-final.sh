# 019-heated-final: on an sm_90 GPU, the race's final of a heavy shape (its fastest finalist at 30 us
# or more, search/race.h FT_RACE_HEAT_MIN_US) is heated: its first job runs the kernel back to back
# for 100 ms before its samples (the GPU at the clock it holds under sustained load, docs/timing.md),
# so the worker's warm-up phase holds at least that; with FATUNE_RACE_HEAT_MS=0 it is not, and a light
# shape's final never is. The heavy search's stored best is a row of the final, which says it was heated.
# The finals above run by rounds (FATUNE_RACE_FINAL=rounds: a job per finalist per round). By default each
# final is one worker job (run/sweep.h) that holds every finalist and samples them one after another; it is
# heated the same way, no sweep fails, and its rows say so.
. "$FT_TEST_LIB"
sm90_or_skip

heated() { # ARGS... : a transfer search in the Hopper space; prints "heated_finals warmup_ms final_jobs"
	rm -f "$T/h.db"*
	FATUNE_RACE_FINAL=rounds run search --space "$SPACES/attention_sm90.yaml" --strategy transfer --db "$T/h.db" --quiet --json "$@"
	[ "$rc" = 0 ] || fail "search $* exited $rc: $(cat "$T/err")"
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["race"]["heated_finals"], s["phases"]["worker"]["warmup_ms"], s["race"]["final_jobs"])' "$T/out"
}
read -r h warm finals <<<"$(heated --shape 2x8x2048x128)"
[ "$h" = 1 ] || fail "the heavy shape's final was heated $h times (want 1)"
python3 -c "import sys; sys.exit(not float('$warm') >= 100)" || fail "warm-up $warm ms with a 100 ms heat"
n=$(sql "$T/h.db" "SELECT count(*) FROM trials t JOIN best b ON t.config = b.config AND t.reason LIKE 'race final%the GPU heated 100 ms first%'")
[ "$n" -ge 1 ] || fail "the stored best has no row of the heated final"
read -r h warm finals <<<"$(FATUNE_RACE_HEAT_MS=0 heated --shape 2x8x2048x128)"
[ "$h" = 0 ] || fail "FATUNE_RACE_HEAT_MS=0 still heated $h finals"
read -r h warm finals <<<"$(heated --shape 1x8x512x64)"
[ "$h" = 0 ] || fail "the light shape's final was heated"
sweep() { # ARGS... : as heated, the final one sweep (the default); prints "swept failed final_jobs heated warmup_ms"
	rm -f "$T/s.db"*
	run search --space "$SPACES/attention_sm90.yaml" --strategy transfer --db "$T/s.db" --quiet --json "$@"
	[ "$rc" = 0 ] || fail "swept search $* exited $rc: $(cat "$T/err")"
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); r=s["race"]; print(r["swept_finals"], r["sweeps_failed"], r["final_jobs"], r["heated_finals"], s["phases"]["worker"]["warmup_ms"])' "$T/out"
}
for shape in 2x8x2048x128 1x8x512x64; do
	read -r swept failed finals h warm <<<"$(sweep --shape $shape)"
	[ "$failed" = 0 ] || fail "$shape: $failed sweeps failed: $(cat "$T/err")"
	[ "$swept" -ge 1 ] && [ "$swept" = "$finals" ] || fail "$shape: $swept swept finals of $finals final jobs"
	rows=$(sql "$T/s.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final: 15 samples over % interleaved rounds of % finalists, one sample of each in turn%' AND log LIKE 'round 1: % of %, median % us%'")
	[ "$rows" -ge 2 ] || fail "$shape: $rows final rows say they were swept: $(sql "$T/s.db" "SELECT reason FROM trials WHERE reason LIKE 'race final%'")"
	[ "$(sql "$T/s.db" "SELECT count(*) FROM trials t JOIN best b ON t.config = b.config AND t.reason LIKE 'race final%one sample of each in turn%'")" -ge 1 ] ||
		fail "$shape: the stored best is not a row of the swept final"
	bad=$(sql "$T/s.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final%' AND status = 'ok' AND NOT (t_min_us > 0 AND t_min_us <= t_median_us AND t_median_us <= t_p90_us)")
	[ "$bad" = 0 ] || fail "$shape: $bad swept rows with times out of order"
	if [ "$shape" = 2x8x2048x128 ]; then
		[ "$h" -ge 1 ] && python3 -c "import sys; sys.exit(not float('$warm') >= 100)" ||
			fail "the heavy swept final: heated $h, warm-up $warm ms"
	else
		[ "$h" = 0 ] || fail "the light shape's swept final was heated"
	fi
done
echo "heavy final heated, light and heat-off finals not; swept finals measured in one job each"
