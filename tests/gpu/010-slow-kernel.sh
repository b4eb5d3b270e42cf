# 010-slow-kernel: a deliberately slow but correct kernel (tests/kernels/slow.cu, tens of ms a call)
# is timed, not killed: one call per sample, samples cut to ~1 s of sampling (at least 5), and a
# watchdog grown from the measured duration. With 20 calls per sample and 15 samples, a 50 ms call
# used to need 18 s and ran past the 10 s watchdog as `timeout`.
. "$FT_TEST_LIB"
gpu_or_skip
SP="$TESTSPACES/slow.yaml"
# racing: the slow candidate's quick pass and the final are timed, never killed; the fast one wins
run search --space "$SP" --shape 1x8x512x64 --samples 30 --quiet --json --db "$T/race.db"
cat "$T/out" "$T/err"
expect_rc 0 "slow-kernel search, racing"
[ "$(sql "$T/race.db" "SELECT count(*) FROM trials WHERE status NOT IN ('ok', 'cut')")" -eq 0 ] ||
	fail "racing a slow kernel: $(sql "$T/race.db" "SELECT status, reason FROM trials WHERE status NOT IN ('ok', 'cut')")"
[ "$(sql "$T/race.db" "SELECT config FROM best")" = "PASSES=1,ROWS_PER_BLOCK=64" ] || fail "racing: the slow kernel won"
# one full measurement each (--race off): the worker's plan for a slow kernel
run search --space "$SP" --shape 1x8x512x64 --samples 30 --race off --quiet --json
cat "$T/out" "$T/err"
expect_rc 0 "slow-kernel search"
run query --trials --format json
expect_rc 0
python3 - "$T/out" <<'PY'
import json, sys
rows = {r["config"]: r for r in json.load(open(sys.argv[1]))}
for cfg, r in rows.items():
    print(cfg, r["status"], r["reason"], r["t_median_us"], r["samples"])
    assert r["status"] == "ok", (cfg, r["status"], r["reason"])
slow = rows["PASSES=400,ROWS_PER_BLOCK=64"]
t = slow["t_median_us"]
assert t > 5000, f"PASSES=400 takes {t} us: not slow enough to test anything; raise PASSES in slow.yaml"
# R is planned from one warm call (not the median): about 1 s of samples, 5 to 30
want = max(5, min(30, int(1e6 // t)))
assert 5 <= slow["samples"] <= 30, slow["samples"]
assert abs(slow["samples"] - want) <= max(2, want // 5), (slow["samples"], want)
assert t * 30 <= 1.2e6 or slow["samples"] < 30, "samples not cut for a slow kernel"
fast = rows["PASSES=1,ROWS_PER_BLOCK=64"]
assert fast["samples"] == 30 or fast["t_median_us"] * 30 > 1e6, fast
print(f"slow kernel timed: {t:.0f} us a call, {slow['samples']} samples")
PY
# bench says how many calls each sample held: 1 for a call of milliseconds
run bench --space "$SP" --shape 1x8x512x64 --config PASSES=400,ROWS_PER_BLOCK=64 --json
cat "$T/out" "$T/err"
expect_rc 0 "bench of the slow kernel"
python3 - "$T/out" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["status"] == "ok", r
assert r["launches_per_sample"] == 1, r
assert 5 <= r["samples"] <= 30, r
PY
echo "ok"
