# 132-heated-final: the race's heated final (search/race.h FT_RACE_HEAT_MS) end to end through the fake runner,
# whose @scale=N makes every kernel N times longer. A search whose fastest kernel takes 30 us or more ends in a
# final that is heated (its first job asks for 100 ms of heat, which the fake counts as warm-up, as the GPU worker
# does) and widened to every candidate within 1.10x of the fastest (here more than the 4 finalists asked for); its
# rows say so. FATUNE_RACE_HEAT_MS=0 and a light search (the fake's 10-100 us, its fastest near 10) keep the final
# as before; a bad @scale is refused with one line. FATUNE_RACE_CLOSE_ROUNDS=N gives a heated final's close
# finalists N rounds alone (such a final runs by rounds, not as one sweep); FATUNE_RACE_ROUNDS=N splits the final's
# samples over N rounds (0: the default 3).
. "$FT_TEST_LIB"
# --seed 3: the fake's times (a hash of config and seed) put 7 full measurements within 1.10x of the fastest
A="--arch sm_90 --shape 1x8x512x64 --space $SPACES/attention_sm90.yaml --strategy exhaustive --seed 3 --quiet --json"
field() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"j": j}))' "$T/out" "$1"; }
finalists() { sql "$1" "SELECT max(CAST(substr(reason, instr(reason, 'rounds of ') + 10) AS INTEGER)) FROM trials WHERE reason LIKE 'race final%'"; }

run search $A --runner fake:@scale=10 --db "$T/heavy.db"; expect_rc 0
[ "$(field 'j["race"]["heated_finals"]')" = 1 ] || fail "the heavy search's final was not heated: $(field 'j["race"]')"
python3 -c "import sys; sys.exit(not float('$(field 'j["phases"]["worker"]["warmup_ms"]')') >= 100)" \
	|| fail "no 100 ms of heat in the warm-up phase: $(field 'j["phases"]["worker"]')"
n=$(finalists "$T/heavy.db")
near=$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE status = 'ok' AND reason NOT LIKE 'race final%' AND t_median_us <= 1.10 * (SELECT min(t_median_us) FROM trials WHERE status = 'ok' AND reason NOT LIKE 'race final%')")
[ "$near" -gt 4 ] || fail "only $near full measurements within 1.10x: the case does not widen the final (pick another --seed)"
[ "$n" = "$near" ] || fail "the heated final took $n finalists, $near were within 1.10x of the fastest"
heated=$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final%the GPU heated 100 ms first%'")
[ "$heated" = "$n" ] || fail "$heated of the final's $n rows say it was heated"
# each final row's log says what every round it ran measured of it, and where in the round it ran: round 1
# holds all n finalists, the first of them the fastest full measurement, run right after the heat
logged=$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final%' AND log LIKE 'round 1: % of $n, median % us%'")
[ "$logged" = "$n" ] || fail "$logged of the final's $n rows log their round 1: $(sql "$T/heavy.db" "SELECT log FROM trials WHERE reason LIKE 'race final%' LIMIT 1")"
first=$(sql "$T/heavy.db" "SELECT f.config FROM trials f WHERE f.reason LIKE 'race final%' AND f.log LIKE 'round 1: 1 of %'")
fastest=$(sql "$T/heavy.db" "SELECT config FROM trials WHERE status = 'ok' AND reason NOT LIKE 'race final%' ORDER BY t_median_us LIMIT 1")
[ -n "$first" ] && [ "$first" = "$fastest" ] || fail "round 1's first place was '$first', not the fastest full measurement '$fastest'"
full=$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final: % over 3 interleaved%' AND log LIKE '%round 3: % us'")
[ "$full" = "$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final: % over 3 interleaved%'")" ] ||
	fail "a finalist that ran all three rounds does not log round 3"
# every finalist was within 1.10x of the fastest full measurement
sql "$T/heavy.db" "SELECT count(*) FROM trials f WHERE f.reason LIKE 'race final%' AND (SELECT t_median_us FROM trials o WHERE o.config = f.config AND o.reason NOT LIKE 'race final%' AND o.status = 'ok') > 1.10 * (SELECT min(t_median_us) FROM trials WHERE status = 'ok' AND reason NOT LIKE 'race final%')" >"$T/far"
[ "$(cat "$T/far")" = 0 ] || fail "$(cat "$T/far") finalists were over 1.10x the fastest"

# FATUNE_RACE_CLOSE_ROUNDS=4: the heated final's finalists within 1.02x of the fastest pooled median (2 or 3
# here) run 4 more rounds alone; their rows say so, hold 15 + 4 x 5 samples and log rounds 4 to 7; without the
# variable (above) no row does
[ "$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE '%then % rounds of the %' OR log LIKE '%round 4:%'")" = 0 ] ||
	fail "a final without FATUNE_RACE_CLOSE_ROUNDS ran close rounds"
FATUNE_RACE_CLOSE_ROUNDS=4 run search $A --runner fake:@scale=10 --db "$T/close.db"; expect_rc 0
close=$(sql "$T/close.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final: 35 samples over 3 interleaved rounds of % finalists, then 4 rounds of the % within 1.02x of the fastest, the GPU heated 100 ms first' AND log LIKE '%round 4: % of %round 7: % of %'")
[ "$close" -ge 2 ] && [ "$close" -le 3 ] || fail "$close close finalists ran 4 rounds alone (want 2 or 3): $(sql "$T/close.db" "SELECT reason FROM trials WHERE reason LIKE 'race final%'")"
[ "$(sql "$T/close.db" "SELECT count(*) FROM trials WHERE reason LIKE '%then 4 rounds of the $close within%'")" = "$close" ] ||
	fail "the close rows do not say how many ran the close rounds"
best=$(sql "$T/close.db" "SELECT config FROM best")
[ "$(sql "$T/close.db" "SELECT count(*) FROM trials WHERE config = '$best' AND reason LIKE '%then 4 rounds%'")" = 1 ] ||
	fail "the best is not one of the close finalists"
FATUNE_RACE_CLOSE_ROUNDS=4 run search $A --runner fake --db "$T/light-close.db"; expect_rc 0
[ "$(sql "$T/light-close.db" "SELECT count(*) FROM trials WHERE reason LIKE '%then % rounds of the %'")" = 0 ] ||
	fail "a light (not heated) final ran close rounds"

FATUNE_RACE_HEAT_MS=0 run search $A --runner fake:@scale=10 --db "$T/off.db"; expect_rc 0
[ "$(field 'j["race"]["heated_finals"]')" = 0 ] || fail "FATUNE_RACE_HEAT_MS=0 heated the final"
[ "$(finalists "$T/off.db")" = 4 ] || fail "with the heat off the final took $(finalists "$T/off.db") finalists (want 4)"

run search $A --runner fake --db "$T/light.db"; expect_rc 0
[ "$(field 'j["race"]["heated_finals"]')" = 0 ] || fail "the light search's final was heated"
[ "$(sql "$T/light.db" "SELECT count(*) FROM trials WHERE reason LIKE '%heated%'")" = 0 ] || fail "a light final's row says heated"

# FATUNE_RACE_ROUNDS=5: the final's 15 samples over 5 rounds of 3, each finalist's log a line a round
FATUNE_RACE_ROUNDS=5 run search $A --runner fake --db "$T/rounds5.db"; expect_rc 0
n5=$(sql "$T/rounds5.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final: 15 samples over 5 interleaved rounds of 4 finalists, one sample of each in turn' AND log LIKE '%round 5: % of 4, median %' AND log NOT LIKE '%round 6:%'")
[ "$n5" = 4 ] || fail "$n5 of 4 finalists ran 5 rounds with FATUNE_RACE_ROUNDS=5: $(sql "$T/rounds5.db" "SELECT reason FROM trials WHERE reason LIKE 'race final%'")"
FATUNE_RACE_ROUNDS=0 run search $A --runner fake --db "$T/rounds0.db"; expect_rc 0
[ "$(sql "$T/rounds0.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final: 15 samples over 3 interleaved rounds of 4 finalists, one sample of each in turn'")" = 4 ] ||
	fail "FATUNE_RACE_ROUNDS=0 did not keep the 3 rounds: $(sql "$T/rounds0.db" "SELECT reason FROM trials WHERE reason LIKE 'race final%'")"

run search $A --runner fake:@scale=0 --db "$T/bad.db"; expect_bad_input "@scale=N takes 1..1000"
echo "heavy finals heated and widened; heat off and light finals as before"
