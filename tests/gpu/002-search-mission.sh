# 002-search-mission: the mission shape searched on the GPU present: a verified best is stored,
# bench re-times it, export writes the header.
. "$FT_TEST_LIB"
gpu_or_skip
run search --shape 1x8x512x64 --quiet --json
cat "$T/out" "$T/err"
expect_rc 0 "search"
python3 - "$T/out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["timed"] is True, s
assert s["status"]["ok"] > 0, s
assert s["best"]["t_median_us"] > 0 and s["best"]["rel_err"] < 2e-3, s
PY
run query --format json
expect_rc 0
python3 - "$T/out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 1 and rows[0]["shape"] == "1x8x512x64", rows
assert rows[0]["t_median_us"] > 0, rows
PY
run bench --shape 1x8x512x64 --best --json
cat "$T/out"
expect_rc 0 "bench --best"
arch=$("$FATUNE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["arch"])')
run export --arch "$arch" --shape 1x8x512x64 -o "$T/build_config.h"
expect_rc 0 "export"
grep -q "constexpr int NUM_WARPS_PER_BLOCK = " "$T/build_config.h" || fail "no NUM_WARPS_PER_BLOCK in the header"
echo "ok"
