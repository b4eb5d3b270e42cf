# 120-runner-fake: racing and verification in CI through the toy `fake` runner (tuner/run/runner_fake.c, no GPU,
# no compile): a cut candidate is never stored ok (cut is its own status, with its quick pass's time), racing never
# cuts the true best, and a wrong-but-fast candidate is stored wrong_result and is never the best nor exported.
. "$FT_TEST_LIB"
A="--arch sm_90 --shape 1x8x512x64 --quiet --json"
best_of_file() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["config"])' "$1"; }
best_of() { best_of_file "$T/out"; }
count() { sql "$1" "SELECT count(*) FROM trials WHERE $2"; }

# race off: every candidate gets one full measurement; its best is the fake's true optimum
run search $A --runner fake --race off --db "$T/off.db"; expect_rc 0
off_best=$(best_of)
phase() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["phases"]["worker"][sys.argv[2] + "_ms"])' "$T/out" "$1"; }
# the workers' split (phases.worker): no quick pass without racing, the samples' time in full ones
[ "$(phase quick)" = 0.0 ] || fail "race off reported quick-pass time $(phase quick)"
python3 -c "import sys; sys.exit(not float('$(phase samples)') > 0)" || fail "no samples time in phases.worker"
[ -n "$off_best" ] || fail "no best without racing"
[ "$(count "$T/off.db" "status = 'cut'")" -eq 0 ] || fail "cut rows without racing"
nok=$(count "$T/off.db" "status = 'ok'")
[ "$nok" -gt 20 ] || fail "only $nok ok trials: the test needs a field to race"
# times that are not measurements are stored as such, with the runner's device
[ "$(sql "$T/off.db" "SELECT mode || ' ' || device FROM runs")" = "replayed fake" ] || fail "a fake run is not stored as replayed on device fake"

# the text summary speaks of the runner, which is not a GPU
run search --arch sm_90 --shape 1x8x512x64 --runner fake --db "$T/text.db"; expect_rc 0
expect_out "the fake runner \(not a GPU\): .* s evaluating"
grep -qE "GPU busy|waiting for compiles" "$T/out" && fail "the summary of a fake run speaks of a GPU"

# race on (the default): same optimum, most candidates cut, none of them ok
run search $A --runner fake --db "$T/on.db"; expect_rc 0
cp "$T/out" "$T/on.json"
python3 -c "import sys; sys.exit(not (float('$(phase quick)') > 0 and float('$(phase samples)') > 0))" ||
	fail "racing did not report quick-pass and full samples apart in phases.worker"
[ "$(best_of)" = "$off_best" ] || fail "racing lost the true best $off_best (got $(best_of))"
ncut=$(count "$T/on.db" "status = 'cut'")
[ "$ncut" -gt $((nok / 2)) ] || fail "only $ncut of $nok candidates cut: the race did not race"
[ "$(count "$T/on.db" "status = 'cut' AND (samples <> 2 OR t_median_us IS NULL OR t_min_us IS NULL OR stage <> 'timed')")" -eq 0 ] ||
	fail "a cut row lacks its quick pass (2 samples, timed, with a time)"
[ "$(sql "$T/on.db" "SELECT count(*) FROM trials c JOIN trials o ON o.run_id = c.run_id AND o.config = c.config
	WHERE c.status = 'cut' AND o.status = 'ok'")" -eq 0 ] || fail "a cut candidate was also stored ok"
# a cut's quick min is over the margin times the best so far, which is never below the final best
[ "$(count "$T/on.db" "status = 'cut' AND t_min_us <= 1.15 * (SELECT min(t_median_us) FROM trials WHERE status = 'ok')")" -eq 0 ] ||
	fail "a candidate within the margin of the best was cut"
# every candidate the race-off run judged is judged once here too: ok + cut (the final's rows aside)
[ "$(sql "$T/on.db" "SELECT count(DISTINCT config) FROM trials WHERE status IN ('ok', 'cut')")" -eq "$nok" ] ||
	fail "racing lost candidates"
[ "$(count "$T/on.db" "reason LIKE 'race final:%'")" -ge 2 ] || fail "the race's final did not run through the runner"
run query --best --db "$T/on.db" --format json; expect_rc 0; expect_out "$off_best"
# a full measurement ends once its median is stable (run/sampling.h): the fake's samples are 0.1 % apart,
# so after the fewest the rule allows (5, the quick pass's 2 among them), in the quick pass's one job
[ "$(count "$T/on.db" "status = 'ok' AND reason NOT LIKE 'race final:%' AND samples <> 5")" -eq 0 ] ||
	fail "a full measurement did not end stable at 5 samples: $(sql "$T/on.db" "SELECT group_concat(DISTINCT samples) FROM trials WHERE status = 'ok'")"
[ "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["race"]; print(r["stable"] == r["full"] > 0)' "$T/on.json")" = True ] ||
	fail "--json race.stable does not count the full measurements that ended stable"
# --race-stable 0: every full measurement takes the search's 15 samples
run search $A --runner fake --race-stable 0 --db "$T/all.db"; expect_rc 0
[ "$(count "$T/all.db" "status = 'ok' AND reason NOT LIKE 'race final:%' AND samples <> 15")" -eq 0 ] ||
	fail "--race-stable 0 ended a full measurement early"
# the race's first form (FATUNE_RACE_JOBS=2: the quick pass and the full measurement as two jobs) judges
# every candidate as the one-job form does: the same cut and ok sets, the same best
FATUNE_RACE_JOBS=2 run search $A --runner fake --race-stable 0 --db "$T/two.db"; expect_rc 0
[ "$(best_of)" = "$off_best" ] || fail "the two-job race lost the true best"
sets() { sql "$1" "SELECT status || ' ' || config FROM trials WHERE status IN ('ok', 'cut') AND reason NOT LIKE 'race final:%' ORDER BY 1"; }
[ "$(sets "$T/two.db")" = "$(sets "$T/all.db")" ] || fail "the one-job and two-job races judged differently"
# resume: the same search again finishes nothing twice (every candidate skipped, no row added)
rows=$(sql "$T/on.db" "SELECT count(*) FROM trials")
run search $A --runner fake --db "$T/on.db"; expect_rc 0 "resumed"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["skipped"])' "$T/out")" -eq "$nok" ] || fail "the resumed search did not skip every finished candidate"
[ "$(sql "$T/on.db" "SELECT count(*) FROM trials")" -eq "$rows" ] || fail "the resumed search stored rows again"

# wrong but fast: the true best made wrong (the fake reports it at 1 us, faster than any other)
second=$(sql "$T/off.db" "SELECT config FROM trials WHERE status = 'ok' AND config <> '$off_best' ORDER BY t_median_us LIMIT 1")
for race in on off; do
	run search $A --runner "fake:$off_best" --race $race --db "$T/wrong-$race.db"; expect_rc 0 "wrong, race $race"
	W="$T/wrong-$race.db"
	[ "$(sql "$W" "SELECT group_concat(DISTINCT status) FROM trials WHERE config = '$off_best'")" = wrong_result ] ||
		fail "race $race: the wrong candidate is stored $(sql "$W" "SELECT group_concat(status) FROM trials WHERE config = '$off_best'")"
	[ "$(count "$W" "config = '$off_best' AND t_median_us < (SELECT min(t_median_us) FROM trials WHERE status = 'ok')")" -ge 1 ] ||
		fail "race $race: the wrong candidate was not the fastest: the test proves nothing"
	[ "$(best_of)" = "$second" ] || fail "race $race: the best is $(best_of), not the fastest right one $second"
	# its 1 us never set the cut line: the field was still raced against the right ones
	[ "$(count "$W" "status = 'ok'")" -ge 2 ] || fail "race $race: the wrong candidate's time cut the field"
	run query --best --db "$W" --format json; expect_rc 0
	grep -q "$off_best" "$T/out" && fail "race $race: the best row is the wrong candidate"
	run export --arch sm_90 --shape 1x8x512x64 --db "$W" --allow-replayed; expect_rc 0
	expect_out "config +$second"
	# the header says what made its times: the fake runner, not a replayed recording
	expect_out "times made up by the 'fake' runner"
	grep -q "copied from a recording" "$T/out" && fail "race $race: the header calls the fake runner's times a recording's"
	grep -q "$off_best" "$T/out" && fail "race $race: export wrote the wrong candidate"
done

# transfer's early stop (tuner/search/transfer.h) with nothing to seed it: 64 results in a row without
# a gain of over 1% end the search, and what was chosen before the stop but has not reached the
# fake GPU (a window of 8 compile threads + 2) is dropped, not evaluated: at most the one on the
# GPU and one more pulled while the stop was being decided come after the 64th
run search $A --runner fake:@ms=5 --strategy transfer --jobs 8 --space "$FATUNE_SOURCE_DIR/search_spaces/attention.yaml" \
	--db "$T/stop.db"; expect_rc 0 "transfer with the fake runner"
sql "$T/stop.db" "SELECT status, coalesce(t_median_us, 0) FROM trials WHERE status NOT LIKE 'rejected%'
	AND reason NOT LIKE 'race final%' ORDER BY id" >"$T/stop.txt"
python3 - "$T/stop.txt" <<'PY' || fail "transfer's stop evaluated its in-flight window"
import sys
rows = [l.strip().split("|") for l in open(sys.argv[1]) if l.strip()]
ref, last = None, 0
for i, (st, m) in enumerate(rows, 1):
    if st == "ok" and (ref is None or float(m) < 0.99 * ref):
        ref, last = float(m), i
print(f"transfer with no seed: {len(rows)} evaluated, last gain at {last}")
assert 64 <= len(rows) - last <= 66, (len(rows), last)
PY

# exact ties (`@tie`: the race's final times every finalist at 5 us, as a GPU's timer steps make on the
# shortest kernels, after the race ranked them apart): the search's best and the stored best row agree on
# which tied config won (the one whose final trial was stored first; gpu.002 failed on an H200 when the
# search kept the one it had measured first instead)
run search $A --runner fake:@tie --db "$T/tie.db"; expect_rc 0 "a search of tied configs"
cp "$T/out" "$T/tie.json"
python3 - "$T/tie.json" <<'PY' || fail "the tied search's best: $(cat "$T/tie.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["best"]["t_median_us"] == s["runner_up"]["t_median_us"], "no tie: the test proves nothing"
assert s["best"]["config"] != s["runner_up"]["config"], s
PY
want=$(sql "$T/tie.db" "SELECT t.config FROM trials t WHERE t.status = 'ok' AND t.id = (SELECT max(u.id)
	FROM trials u WHERE u.config = t.config) ORDER BY t.t_median_us, t.id LIMIT 1")
[ "$(best_of_file "$T/tie.json")" = "$want" ] || fail "the search's best $(best_of_file "$T/tie.json") is not the first stored of the tied ($want)"
run query --best --db "$T/tie.db" --format json; expect_rc 0
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))[0]["config"] != sys.argv[2])' "$T/out" "$want" ||
	fail "query --best names another tied config than the search: $(cat "$T/out")"

# the runner's front door: one line, exit 2
run search --shape 1x8x512x64 --runner fake --db "$T/x.db"
expect_bad_input "--runner fake needs --arch"
run search $A --runner fake:NOPE --db "$T/x.db"
expect_bad_input "bad fake runner spec 'NOPE'"
run search $A --runner nope --db "$T/x.db"
expect_bad_input "unknown runner 'nope': use one of gpu, replay, fake"
exit 0
