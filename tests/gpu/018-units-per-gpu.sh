# 018-units-per-gpu: a campaign's units side by side on one GPU (--units-per-gpu 2, the default),
# their jobs taking turns on it (tests/unit/test_campaign_run.c checks the turns with fake GPUs; here
# the real worker): every unit is tuned, runs on one GPU, and its best is within 5 % of the best of
# the same campaign run a unit at a time (--units-per-gpu 1, same warm CUBIN cache) - taking turns
# does not distort the times; the JSON counts the turns' waits (phases.worker.shared_ms) apart from
# the GPU's busy time, and with 1 there is none.
. "$FT_TEST_LIB"
gpu_or_skip
C="search --shape 1x8x512..2048x64 --shape 2x16x1024x128 --causal --devices 0 --quiet --json"
run $C --db "$T/warm.db"; expect_rc 0 "warming the CUBIN cache"
run $C --units-per-gpu 1 --db "$T/one.db"; expect_rc 0 "a unit at a time"
cp "$T/out" "$T/one.json"
run $C --db "$T/two.db"; expect_rc 0 "two units side by side"
cp "$T/out" "$T/two.json"
python3 "$FATUNE_SOURCE_DIR/tests/gpu/same_bests.py" "$T/one.json" "$T/two.json" || fail "units side by side on one GPU: different bests"
python3 - "$T/one.json" "$T/two.json" <<'PY' || fail "units side by side on one GPU: GPUs or turns"
import json, sys
one, two = ([json.loads(l) for l in open(f) if l.strip()] for f in sys.argv[1:])
assert all(s["gpus"] == 1 for u in two[:-1] for s in u["spaces"]), [u["spaces"] for u in two[:-1]]
# at least two units overlapped in time, and their jobs waited for each other
spans = sorted((s["started_s"], s["ended_s"]) for u in two[:-1] for s in u["spaces"])
assert any(spans[i + 1][0] < spans[i][1] for i in range(len(spans) - 1)), spans
shared = lambda rows: sum(u["phases"]["worker"]["shared_ms"] for u in rows[:-1])
assert shared(two) > 0, "no job waited for its turn"
assert shared(one) == 0, shared(one)
print(f"one at a time {one[-1]['wall_s']:.1f} s, two side by side {two[-1]['wall_s']:.1f} s, "
      f"turn waits {shared(two) / 1e3:.2f} s")
PY
echo "ok"
