# 011-byo-examples: the bring-your-own examples of tests/kernels run and verify on the GPU: the
# workspace kernel (state per row in a NaN-poisoned workspace; SKIP_INIT=1 reads it before writing
# and must be wrong_result) and the C++ template kernel behind its extern "C" wrapper, each on a
# self-attention shape and on a grouped-query, causal, bshd shape with S_q < S_kv.
. "$FT_TEST_LIB"
gpu_or_skip
for shape in "--shape 1x8x256x64" "--shape 2x8x33x64 --kv-heads 2 --kv-len 300 --layout bshd --causal"; do
	# shellcheck disable=SC2086
	run search --space "$TESTSPACES/fa1_workspace.yaml" $shape --samples 3 --fresh --quiet --json
	cat "$T/out" "$T/err"
	expect_rc 0 "workspace search ($shape)"
	# shellcheck disable=SC2086
	run search --space "$TESTSPACES/cxx_template.yaml" $shape --samples 3 --fresh --quiet --json
	cat "$T/out" "$T/err"
	expect_rc 0 "C++ template search ($shape)"
done
run query --trials --format json --limit 1000
expect_rc 0
python3 - "$T/out" <<'PY'
import json, sys
# the race final re-measures the finalists in rows of their own (docs/timing.md): one row per candidate here
rows = [r for r in json.load(open(sys.argv[1])) if not r["reason"].startswith("race final:")]
ws = [r for r in rows if r["space"] == "fa1_workspace"]
cxx = [r for r in rows if r["space"] == "cxx_template"]
assert len(ws) == 16 and len(cxx) == 8, (len(ws), len(cxx))
for r in ws:
    skip = "SKIP_INIT=1" in r["config"]
    want = ("wrong_result",) if skip else ("ok", "cut")  # a correct but slow kernel may be raced out
    print(r["shape"], r["config"], r["status"], r["reason"], r["workspace_bytes"])
    assert r["status"] in want, r
    assert r["workspace_bytes"] > 0, r
for r in cxx:
    print(r["shape"], r["config"], r["status"], r["reason"], r["t_median_us"])
    assert r["status"] in ("ok", "cut"), r
PY
# the best of each space is its own row, exportable by its space file
ARCH=$(sql "$FATUNE_DB" "SELECT arch FROM runs LIMIT 1")
run export --arch "$ARCH" --space "$TESTSPACES/fa1_workspace.yaml" --shape 1x8x256x64 -o "$T/ws.h"
expect_rc 0
grep -q "SKIP_INIT 0\|SKIP_INIT = 0" "$T/ws.h" || { cat "$T/ws.h"; fail "exported workspace config"; }
echo "ok"
