# 009-two-gpus: a campaign with --devices 0,1 on a host with two GPUs of one model (skipped with
# fewer): candidates run on both GPUs (the units side by side, a GPU each: --parallel-units), every
# trial names its GPU, the bests match one GPU's within 5%, and the campaign runs at least 1.5x as
# fast as on one GPU (issue 10's target is 1.8x: the measured ratio is printed for docs/perf.md).
. "$FT_TEST_LIB"
gpu_or_skip
FATUNE_DEVICE=1 "$FATUNE" devices >/dev/null 2>&1 || { echo "SKIP: no second GPU here"; exit 77; }
[ "$(FATUNE_DEVICE=0 "$FATUNE" devices | head -1 | sed 's/^device 0: //; s/ (.*//')" = \
  "$(FATUNE_DEVICE=1 "$FATUNE" devices | head -1 | sed 's/^device [0-9]*: //; s/ (.*//')" ] ||
	{ echo "SKIP: GPUs 0 and 1 are different models"; exit 77; }
C="search --shape 1x8x512..4096x64 --shape 2x16x1024..2048x128 --causal --quiet --json"
run $C --devices 0 --db "$T/warm.db"; expect_rc 0 "warming the CUBIN cache"
run $C --devices 0 --db "$T/one.db"; expect_rc 0 "one GPU"
cp "$T/out" "$T/one.json"
run $C --devices 0,1 --db "$T/two.db"; expect_rc 0 "two GPUs"
cp "$T/out" "$T/two.json"
[ "$(sql "$T/two.db" "SELECT count(DISTINCT device_index) FROM trials WHERE status = 'ok'")" -eq 2 ] ||
	fail "the 2-GPU campaign did not time on both GPUs"
[ "$(sql "$T/two.db" "SELECT count(*) FROM trials WHERE status = 'ok' AND (device_index IS NULL OR device = '')")" -eq 0 ] ||
	fail "a trial does not name its GPU"
python3 "$FATUNE_SOURCE_DIR/tests/gpu/same_bests.py" "$T/one.json" "$T/two.json" || fail "2 GPUs: different bests"
python3 - "$T/one.json" "$T/two.json" <<'PY' || fail "2 GPUs: too slow"
import json, sys
one, two = ([json.loads(l) for l in open(f) if l.strip()] for f in sys.argv[1:])
ratio = one[-1]["wall_s"] / two[-1]["wall_s"]
print(f"campaign of {one[-1]['units']} units: {one[-1]['wall_s']:.1f} s on one GPU, "
      f"{two[-1]['wall_s']:.1f} s on two: {ratio:.2f}x")
assert ratio >= 1.5, ratio
PY
echo "ok"
