# 003-fault-injection: a faulting, a hanging and a NaN-writing candidate among good ones:
# the search finishes and stores each under the right status (a good one may be raced out: cut).
. "$FT_TEST_LIB"
gpu_or_skip
run search --space "$TESTSPACES/fault.yaml" --shape 1x2x64x64 --timeout 3 --samples 3 --launches 2
cat "$T/out" "$T/err"
expect_rc 0 "fault-injection search"
run query --trials --format json
expect_rc 0
python3 - "$T/out" <<'PY'
import json, sys
want = {"0": "ok", "1": "crashed", "2": "timeout", "3": "wrong_result"}
rows = json.load(open(sys.argv[1]))
seen = {}
for r in rows:
    cfg = dict(kv.split("=") for kv in r["config"].split(","))
    seen[(cfg["FAULT"], cfg["ROWS_PER_BLOCK"])] = (r["status"], r["reason"])
for fault, status in want.items():
    for rows_per_block in ("1", "2", "4"):
        got = seen.get((fault, rows_per_block))
        print(f"FAULT={fault} ROWS_PER_BLOCK={rows_per_block}: {got}")
        # racing: a good candidate slower than the margin is cut after its quick pass
        assert got and (got[0] == status or (status == "ok" and got[0] == "cut")), f"expected {status}"
PY
echo "ok"
