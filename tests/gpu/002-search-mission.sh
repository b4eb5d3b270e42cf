# 002-search-mission: the mission shape searched on the GPU present with the default spaces (every
# shipped family that fits the arch: attention (mma) everywhere, attention_sm90 (wgmma) too on sm_90):
# one verified best row per space that timed something, the search's best is the fastest of them and
# names its space, and query --best, bench --best and export all follow that winner.
. "$FT_TEST_LIB"
gpu_or_skip
arch=$("$FATUNE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["arch"])')
run search --shape 1x8x512x64 --quiet --json
cat "$T/out" "$T/err"
expect_rc 0 "search"
cp "$T/out" "$T/search.json"
python3 - "$T/search.json" "$arch" <<'PY'
import json, sys
s, arch = json.load(open(sys.argv[1])), sys.argv[2]
assert s["timed"] is True, s
assert s["status"]["ok"] > 0, s
want = {"attention"} | ({"attention_sm90"} if arch == "sm_90" else set())
got = {x["space"] for x in s["spaces"]}
assert got == want, ("spaces searched", got, "expected", want)
# every space searched verified and timed something
timed = [x for x in s["spaces"] if "best" in x]
assert {x["space"] for x in timed} == want, ("spaces without a verified best", s["spaces"])
for x in s["spaces"]:
    assert x["family"] == {"attention": "mma", "attention_sm90": "wgmma"}[x["space"]], x
win = min(timed, key=lambda x: x["best"]["t_median_us"])
assert s["best"]["space"] == win["space"], ("the best is not the fastest space's", s["best"], win)
assert s["best"]["config"] == win["best"]["config"], s
assert s["best"]["t_median_us"] > 0 and s["best"]["rel_err"] < 2e-3, s
# most jobs found their module loaded while the job before ran (run/modules.h): one worker, the
# evaluation queue full with a warm cache or not; never more than the jobs that loaded one
ahead, ev = s["phases"]["loaded_ahead"], s["evaluated"]
assert 0 < ahead <= ev, ("modules loaded ahead", ahead, "of", ev)
PY
# every trial's stored stage fits its status (tuner/base/trial.h): ok is timed, a GPU verdict is
# verified, nothing is left 'accepted', and the run is a measurement, not a replay
bad=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE (status = 'ok' AND stage != 'timed')
	OR (status IN ('wrong_result', 'crashed', 'timeout') AND stage != 'verified')
	OR (status IN ('compile_failed', 'spills', 'compiled') AND stage != 'compiled')")
[ "$bad" -eq 0 ] || fail "$bad trials have a stage that does not fit their status"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM runs WHERE mode != 'timed'")" -eq 0 ] || fail "a GPU run is not stored as timed"
# the race in one job per candidate (run/sampling.h): the real worker ends a cut candidate's samples
# after the quick pass (2) and a full measurement between the 5 of the stable rule and the search's 15;
# some full measurements end stable on a GPU (the mission kernels' samples are well under 1 % apart)
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'cut' AND samples != 2")" -eq 0 ] ||
	fail "a cut trial's samples are not the quick pass's 2"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'ok' AND reason NOT LIKE 'race final:%'
	AND (samples < 5 OR samples > 15)")" -eq 0 ] || fail "a full measurement took outside 5..15 samples"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'cut'")" -gt 0 ] || fail "the race cut nothing"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["race"]; sys.exit(not 0 < r["stable"] <= r["full"])' \
	"$T/search.json" || fail "no full measurement ended stable: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["race"])' "$T/search.json")"
# one best row per space, fastest first, each naming its space and family
run query --best --shape 1x8x512x64 --format json
expect_rc 0
python3 - "$T/out" "$T/search.json" <<'PY'
import json, sys
rows, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
timed = {x["space"]: x for x in s["spaces"] if "best" in x}
assert sorted(r["space"] for r in rows) == sorted(timed), (rows, list(timed))
for r in rows:
    assert r["shape"] == "1x8x512x64" and r["t_median_us"] > 0, r
    assert r["family"] == timed[r["space"]]["family"], r
    assert r["config"] == timed[r["space"]]["best"]["config"], (r, timed[r["space"]])
assert rows == sorted(rows, key=lambda r: r["t_median_us"]), "best rows not fastest first"
assert rows[0]["space"] == s["best"]["space"] and rows[0]["config"] == s["best"]["config"], rows[0]
PY
winner=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["config"])' "$T/search.json")
wspace=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["space"])' "$T/search.json")
wfamily=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print([x for x in s["spaces"] if x["space"]==s["best"]["space"]][0]["family"])' "$T/search.json")
# bench --best times the winner, from its own space file
run bench --shape 1x8x512x64 --best --json
cat "$T/out" "$T/err"
expect_rc 0 "bench --best"
expect_bench_config "$winner"
# bench compares: the winner and the runner-up of its space (in that space's file), verified and
# timed interleaved on one worker, one JSON line each, both ok, each with 30 samples from 10 rounds
# and its ratio to the faster (which reads 1)
rup=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print([x for x in s["spaces"] if x["space"]==s["best"]["space"]][0].get("runner_up", {}).get("config", ""))' "$T/search.json")
if [ -n "$rup" ]; then
	run bench --shape 1x8x512x64 --best --space "$SPACES/$wspace.yaml" --config "$rup" --json
	cat "$T/out" "$T/err"
	expect_rc 0 "bench --best --config RUNNER_UP"
	python3 - "$T/out" "$winner" "$rup" <<'PY' || fail "bench of two configs: $(cat "$T/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["config"] for r in rows] == [sys.argv[3], sys.argv[2]], rows
for r in rows:
    assert r["status"] == "ok" and r["samples"] == 30 and r["rounds"] == 10, r
    assert 0 < r["t_min_us"] <= r["t_median_us"] and r["rel_err"] < 2e-2, r
    assert r["vs_fastest"] >= 1.0, r
assert min(r["vs_fastest"] for r in rows) == 1.0, rows
PY
fi
# export writes the winner: its space and family, each of its parameters
run export --arch "$arch" --shape 1x8x512x64 -o "$T/build_config.h"
expect_rc 0 "export"
cat "$T/build_config.h"
expect_header "$T/build_config.h" "$wspace" "$wfamily" "$winner"
# export --space picks each space's own best
python3 -c 'import json,sys; [print(x["space"], x["family"], x["best"]["config"]) for x in json.load(open(sys.argv[1]))["spaces"]]' \
	"$T/search.json" >"$T/per-space"
while read -r sp fam cfg; do
	run export --arch "$arch" --shape 1x8x512x64 --space "$SPACES/$sp.yaml"
	expect_rc 0 "export --space $sp"
	expect_header "$T/out" "$sp" "$fam" "$cfg"
done <"$T/per-space"
echo "ok (winner $wspace: $winner)"
