# 127-bench-compare: `fatune bench` with several configs (issue 16's quality check): --config,
# --best and --best-from combine, every config is verified, then all are timed interleaved in
# rounds on one runner (the fake runner: made-up, deterministic times; no GPU), one JSON line
# or table row each with its ratio to the fastest; a wrong config is wrong_result and exit 1;
# a missing database is exit 2 and is not created. --sweep times them in one sweep instead (run/sweep.h;
# the fake emulates it with a job per sample): the same verdicts and times, one round; it refuses
# what a sweep does not take.
. "$FT_TEST_LIB"

S="--arch sm_90 --shape 1x8x512x64"
A='NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=32,KV_STAGES=1,PACK_GQA=0,DENSE_KV=1,NUM_SPLITS=2,COMBINE_IN_KERNEL=1,PDL=0'
B='NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=64,KV_STAGES=2,PACK_GQA=0,DENSE_KV=1,NUM_SPLITS=1,COMBINE_IN_KERNEL=0,PDL=0'
run search $S --runner fake --db "$T/a.db" --budget 20 --quiet; expect_rc 0
best=$(sql "$T/a.db" "SELECT config FROM best")
[ -n "$best" ] || fail "the search stored no best"

# two configs and a database's best: three JSON lines, in the documented order, each ok with
# every sample pooled from 10 rounds; the fastest at 1.0, the others at their median's ratio
run bench $S --runner fake --config "$A" --config "$B" --best-from "$T/a.db" --json; expect_rc 0
[ "$(wc -l <"$T/out")" -eq 3 ] || fail "not one line per config: $(cat "$T/out")"
python3 - "$T/out" "$A" "$B" "$best" "$T/a.db" <<'PY' || fail "bench JSON: $(cat "$T/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["config"] for r in rows] == sys.argv[2:5], rows
assert [r["from"] for r in rows] == ["--config", "--config", sys.argv[5]], rows
fastest = min(r["t_median_us"] for r in rows)
for r in rows:
    assert r["status"] == "ok" and r["device"] == "fake", r
    assert r["samples"] == 30 and r["rounds"] == 10, r
    assert abs(r["vs_fastest"] - r["t_median_us"] / fastest) < 1e-3, r
    assert r["t_min_us"] <= r["t_median_us"] <= r["t_p90_us"], r
assert min(r["vs_fastest"] for r in rows) == 1.0
PY
# the same config twice reads alike (the fake's samples depend on the config and the job only)
run bench $S --runner fake --config "$A" --config "$A" --rounds 5 --samples 20 --json; expect_rc 0
python3 - "$T/out" <<'PY' || fail "the same config twice: $(cat "$T/out")"
import json, sys
a, b = (json.loads(l) for l in open(sys.argv[1]))
assert a["rounds"] == b["rounds"] == 5 and a["samples"] == b["samples"] == 20, (a, b)
assert abs(a["t_median_us"] / b["t_median_us"] - 1) < 1e-3, (a, b)
PY
# a wrong config: its row says wrong_result, the others are still timed; exit 1
run bench $S --runner fake:TILE_N=64 --config "$A" --config "$B"; expect_rc 1
expect_out "2 configs, timed interleaved in 10 rounds"
expect_out "wrong_result"
expect_err "widest cut to fit 120 characters: --wide shows every column in full \(--json for scripts\)"
grep -E "^1 +[0-9.]+ +1 " "$T/out" >/dev/null || fail "the ok config is not first at 1.0x: $(cat "$T/out")"
# --best (--db's) with --config; the table within 120 characters unless --wide
run bench $S --runner fake --db "$T/a.db" --best --config "$A"; expect_rc 0
awk 'length > 120 { exit 1 }' "$T/out" || fail "a line over 120 characters: $(cat "$T/out")"
run bench $S --runner fake --db "$T/a.db" --best --config "$A" --wide; expect_rc 0
expect_out "$best"
# --sweep: one sweep, one sample of each in turn: the fake's times as in rounds (its samples depend on
# the config only), a wrong config still wrong_result and exit 1
run bench $S --runner fake --config "$A" --config "$B" --samples 12 --json; expect_rc 0
cp "$T/out" "$T/rounds.json"
run bench $S --runner fake --config "$A" --config "$B" --samples 12 --sweep --json; expect_rc 0
python3 - "$T/rounds.json" "$T/out" <<'PY' || fail "bench --sweep JSON: $(cat "$T/out")"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
s = [json.loads(l) for l in open(sys.argv[2])]
assert [x["config"] for x in s] == [x["config"] for x in r], (r, s)
for a, b in zip(r, s):
    assert b["status"] == "ok" and b["samples"] == 12 and b["rounds"] == 1, b
    assert abs(b["t_min_us"] / a["t_min_us"] - 1) < 1e-6, (a, b)
PY
run bench $S --runner fake:TILE_N=64 --config "$A" --config "$B" --sweep; expect_rc 1
expect_out "2 configs, timed in one sweep, one sample of each in turn"
expect_out "wrong_result"
run bench $S --runner fake --config "$A" --sweep; expect_bad_input "--sweep times several configs"
run bench $S --runner fake --config "$A" --config "$B" --sweep --rounds 2; expect_bad_input "without --rounds"
run bench $S --runner fake --config "$A" --config "$B" --sweep --samples 65; expect_bad_input "at most 64 samples"
run bench $S --runner fake --config "$A" --config "$B" --sweep --timing cold; expect_bad_input "warm"
# bad input: exit 2, nothing created
run bench $S --runner fake --config "$A" --best-from "$T/none.db"; expect_bad_input "no tuning database at"
[ ! -e "$T/none.db" ] || fail "bench created the database it was pointed at"
run bench $S --runner fake --config "$A" --rounds 0; expect_bad_input "rounds"
run bench --shape 1x8x512x64 --runner fake --config "$A"; expect_bad_input "needs --arch"
echo "ok"
