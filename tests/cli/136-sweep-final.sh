# 136-sweep-final: the race's final as one sweep (run/sweep.h; the default, FATUNE_RACE_FINAL=sweep) end to end
# through the fake runner, which emulates a sweep with a job per sample (ft_sweep_by_jobs), in the order the GPU
# worker samples them. Each final is then one sweep (the search's final_jobs are its swept finals, none failed); its rows say
# "one sample of each in turn", hold the rounds' 15 samples and log every round; the best is one of them. A heavy
# final (@scale=10) is heated and widened as the rounds' is, and the same finalists leave after round 1, stored
# as cut (their samples are round 1's only, the others' pool the later rounds): never the best.
# A sweep that fails leaves the final to the rounds (fake:@nosweep); FATUNE_RACE_FINAL=rounds keeps the rounds;
# bench/final_rounds.py reads the swept rows.
. "$FT_TEST_LIB"
# --seed 3: the fake's times put 7 full measurements within 1.10x of the fastest (as in 132)
A="--arch sm_90 --shape 1x8x512x64 --space $SPACES/attention_sm90.yaml --strategy exhaustive --seed 3 --quiet --json"
field() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"j": j}))' "$T/out" "$1"; }
SWEPT="one sample of each in turn"

FATUNE_RACE_FINAL=sweep run search $A --runner fake --db "$T/light.db"; expect_rc 0
[ "$(field '(j["race"]["swept_finals"], j["race"]["final_jobs"], j["race"]["sweeps_failed"])')" = "(1, 1, 0)" ] ||
	fail "the light final was not one sweep: $(field 'j["race"]')"
rows=$(sql "$T/light.db" "SELECT count(*) FROM trials WHERE reason = 'race final: 15 samples over 3 interleaved rounds of 4 finalists, $SWEPT' AND samples = 15 AND log LIKE 'round 1: % of 4, median % us%round 3: % of 4, median % us'")
[ "$rows" = 4 ] || fail "$rows of 4 swept final rows: $(sql "$T/light.db" "SELECT reason, samples, log FROM trials WHERE reason LIKE 'race final%'")"
# each round's first sweep starts one finalist later: round 1's places are 1..4, each taken once
[ "$(sql "$T/light.db" "SELECT group_concat(substr(log, 10, 1), '') FROM (SELECT log FROM trials WHERE reason LIKE 'race final%' ORDER BY substr(log, 10, 1))")" = 1234 ] ||
	fail "round 1's places are not 1..4: $(sql "$T/light.db" "SELECT log FROM trials WHERE reason LIKE 'race final%'")"
[ "$(sql "$T/light.db" "SELECT count(*) FROM trials t JOIN best b ON t.config = b.config AND t.reason LIKE 'race final%$SWEPT'")" = 1 ] ||
	fail "the best is not a row of the swept final"

# heavy: heated and widened as by rounds, and the same finalists leave after round 1
run search $A --runner fake:@scale=10 --db "$T/heavy-rounds.db"; expect_rc 0
FATUNE_RACE_FINAL=sweep run search $A --runner fake:@scale=10 --db "$T/heavy.db"; expect_rc 0
[ "$(field '(j["race"]["heated_finals"], j["race"]["swept_finals"], j["race"]["final_jobs"])')" = "(1, 1, 1)" ] ||
	fail "the heavy final was not one heated sweep: $(field 'j["race"]')"
python3 -c "import sys; sys.exit(not float('$(field 'j["phases"]["worker"]["warmup_ms"]')') >= 100)" ||
	fail "no 100 ms of heat in the warm-up phase: $(field 'j["phases"]["worker"]')"
q="SELECT group_concat(config || ':' || (reason LIKE '%over 1 of 3%'), ' ') FROM (SELECT config, reason FROM trials WHERE reason LIKE 'race final%' ORDER BY config)"
[ "$(sql "$T/heavy.db" "$q")" = "$(sql "$T/heavy-rounds.db" "$q")" ] ||
	fail "the sweep's finalists or those who left differ from the rounds': $(sql "$T/heavy.db" "$q") against $(sql "$T/heavy-rounds.db" "$q")"
# those who left are cut (their 5 samples are of round 1 only, the others' pool the later rounds): never the best
left=$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final%over 1 of 3 interleaved rounds%$SWEPT, the GPU heated 100 ms first (left over 1.03x the fastest of round 1)' AND samples = 5 AND status = 'cut'")
[ "$left" -ge 1 ] || fail "no finalist left the heavy sweep after round 1 as cut: $(sql "$T/heavy.db" "SELECT status, reason FROM trials WHERE reason LIKE 'race final%'")"
[ "$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final%' AND (status = 'cut') = (reason LIKE '%left over%')")" = "$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final%'")" ] ||
	fail "a final row's status does not say whether it left: $(sql "$T/heavy.db" "SELECT status, reason FROM trials WHERE reason LIKE 'race final%'")"
[ "$(sql "$T/heavy.db" "SELECT count(*) FROM trials t JOIN best b ON t.config = b.config AND t.id = b.trial_id AND t.status = 'ok' AND t.samples = 15")" = 1 ] ||
	fail "the best is not a finalist that ran every round"
[ "$(sql "$T/heavy.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final%' AND reason NOT LIKE '%$SWEPT, the GPU heated 100 ms first%'")" = 0 ] ||
	fail "a heavy final row does not say it was swept and heated"
python3 "$FATUNE_SOURCE_DIR/bench/final_rounds.py" "$T/heavy.db" --min-finalists 2 --by-round >"$T/fr" 2>&1 ||
	fail "final_rounds.py on the swept rows: $(cat "$T/fr")"
grep -q "round 1" "$T/fr" || fail "final_rounds.py read no round of the swept rows: $(cat "$T/fr")"

# a sweep that fails (fake:@nosweep, as a worker that died in it) is no verdict: the rounds time the final, the
# rows are the rounds', --json counts it and the summary says so
run search ${A/ --quiet --json/} --runner fake:@nosweep --db "$T/failed.db"; expect_rc 0
expect_out "4 in the final \(its sweep failed: the finalists were timed by rounds\)"
run search $A --runner fake:@nosweep --db "$T/failed2.db"; expect_rc 0
[ "$(field '(j["race"]["swept_finals"], j["race"]["sweeps_failed"], j["race"]["final_jobs"])')" = "(0, 1, 12)" ] ||
	fail "a failed sweep was not timed by rounds: $(field 'j["race"]')"
[ "$(sql "$T/failed2.db" "SELECT count(*) FROM trials WHERE reason = 'race final: 15 samples over 3 interleaved rounds of 4 finalists'")" = 4 ] ||
	fail "the rounds' rows after a failed sweep: $(sql "$T/failed2.db" "SELECT reason FROM trials WHERE reason LIKE 'race final%'")"

FATUNE_RACE_FINAL=rounds run search $A --runner fake --db "$T/rounds.db"; expect_rc 0
[ "$(field '(j["race"]["swept_finals"], j["race"]["final_jobs"])')" = "(0, 12)" ] ||
	fail "FATUNE_RACE_FINAL=rounds swept: $(field 'j["race"]')"
[ "$(sql "$T/rounds.db" "SELECT count(*) FROM trials WHERE reason LIKE '%$SWEPT%'")" = 0 ] || fail "a row of the rounds says it was swept"
echo "swept finals: one job each, rows and leaving as the rounds', heated when heavy"
