# 019-heated-final: on an sm_90 GPU, the race's final of a heavy shape (its fastest finalist at 30 us
# or more, search/race.h FT_RACE_HEAT_MIN_US) is heated: its first job runs the kernel back to back
# for 100 ms before its samples (the GPU at the clock it holds under sustained load, docs/timing.md),
# so the worker's warm-up phase holds at least that; with FATUNE_RACE_HEAT_MS=0 it is not, and a light
# shape's final never is. The heavy search's stored best is a row of the final, which says it was heated.
. "$FT_TEST_LIB"
sm90_or_skip

heated() { # ARGS... : a transfer search in the Hopper space; prints "heated_finals warmup_ms final_jobs"
	rm -f "$T/h.db"*
	run search --space "$SPACES/attention_sm90.yaml" --strategy transfer --db "$T/h.db" --quiet --json "$@"
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
echo "heavy final heated, light and heat-off finals not"
