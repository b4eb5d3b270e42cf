# 128-race-anchor: the race's anchor (search/race.h, FATUNE_RACE_ANCHOR_MS) end to end through the fake runner,
# whose @drift=P makes a GPU that slows by P % of a config's time with every timed job, as a GPU's clocks fall under
# sustained load. Without anchors (the default) the candidates timed late look slow and are cut; with them the
# best so far is timed again, candidates are compared at the drift it shows, and the search keeps the best it
# finds without drift: the final's winner, which is also the stored best row (in a run with a final, only the
# final's rows count: a config timed early, at higher clocks, is not preferred to it). Stored rows keep the times
# measured. An empty or malformed value is off.
. "$FT_TEST_LIB"
A="--arch sm_90 --shape 1x8x512x64 --strategy exhaustive --quiet --json"
best_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["config"])' "$T/out"; }
anchors() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["race"]["anchors"])' "$T/out"; }
count() { sql "$1" "SELECT count(*) FROM trials WHERE $2"; }

# no drift: the fake's true best; no anchor without the variable
run search $A --runner fake --db "$T/true.db"; expect_rc 0
truth=$(best_of)
[ "$(anchors)" = 0 ] || fail "anchors ran without FATUNE_RACE_ANCHOR_MS"
nok=$(sql "$T/true.db" "SELECT count(DISTINCT config) FROM trials WHERE status IN ('ok', 'cut')")

# drift, no anchor: the race compares times taken at ever lower clocks
run search $A --runner fake:@drift=3,@ms=1 --db "$T/off.db"; expect_rc 0
[ "$(anchors)" = 0 ] || fail "anchors ran without FATUNE_RACE_ANCHOR_MS"
off=$(best_of)
off_cut=$(count "$T/off.db" "status = 'cut'")

# run again, every trial stored: the summary's best is the best row, chosen by the same rule over the stored rows
run query --best --db "$T/off.db" --format json; expect_rc 0; expect_out "$off"
run search $A --runner fake:@drift=3,@ms=1 --db "$T/off.db"; expect_rc 0
[ "$(best_of)" = "$off" ] || fail "the run that found every trial stored names $(best_of), the first $off"

# drift, an anchor before every candidate
export FATUNE_RACE_ANCHOR_MS=0.001
run search $A --runner fake:@drift=3,@ms=1 --db "$T/on.db"; expect_rc 0
unset FATUNE_RACE_ANCHOR_MS
[ "$(anchors)" -gt 10 ] || fail "only $(anchors) anchors with FATUNE_RACE_ANCHOR_MS=0.001"
[ "$(best_of)" = "$truth" ] || fail "with anchors the search kept $(best_of), not the best without drift $truth"
# the stored best row agrees: in a run with a final only the final's rows count (db_query.c)
run query --best --db "$T/on.db" --format json; expect_rc 0; expect_out "$truth"
[ "$off" != "$truth" ] || fail "the test needs drift that misleads a search without anchors: it found $truth"
on_cut=$(count "$T/on.db" "status = 'cut'")
[ "$on_cut" -lt "$off_cut" ] || fail "anchors did not spare candidates from the cut ($on_cut against $off_cut)"
# every candidate judged once (ok or cut), no row for an anchor job
[ "$(sql "$T/on.db" "SELECT count(DISTINCT config) FROM trials WHERE status IN ('ok', 'cut')")" -eq "$nok" ] ||
	fail "anchors changed which candidates were judged"
[ "$(count "$T/on.db" "status = 'cut' AND reason NOT LIKE '%at this GPU''s drift%'")" -eq 0 ] ||
	fail "a cut under drift does not say the drift: $(sql "$T/on.db" "SELECT reason FROM trials WHERE status = 'cut' LIMIT 1")"
# stored as measured: the fake's times are 10-100 us without drift; rows timed late keep their drifted times
[ "$(count "$T/on.db" "status = 'ok' AND t_median_us > 100")" -gt 0 ] || fail "the stored rows hold corrected times"
# an empty or malformed value is off, not a period of 0 read as a number
for v in "" "25O"; do
	export FATUNE_RACE_ANCHOR_MS="$v"
	run search $A --runner fake:@drift=3 --db "$T/v.db"; expect_rc 0
	[ "$(anchors)" = 0 ] || fail "FATUNE_RACE_ANCHOR_MS='$v' ran anchors"
done
unset FATUNE_RACE_ANCHOR_MS
# the fake's new item is checked like the others
run search $A --runner fake:@drift=101 --db "$T/bad.db"; expect_rc 2; expect_err "@drift=P takes 0..100"
