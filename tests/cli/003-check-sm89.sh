# 003-check-sm89: check lists every candidate of the default space for sm_89, accepted or rejected with a reason.
. "$FT_TEST_LIB"
run check --arch sm_89 --shape 1x8x512x64 --format json
cat "$T/err"
expect_rc 0 "check"
expect_err "check: sm_89 1x8x512x64: [0-9]+ candidates, [0-9]+ accepted, [0-9]+ rejected"
python3 - "$T/out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
acc = [r for r in rows if r["status"] == "accepted"]
rej = [r for r in rows if r["status"].startswith("rejected")]
assert len(acc) + len(rej) == len(rows) and acc and rej, (len(acc), len(rej), len(rows))
for r in rej:
    assert r["reason"], r
for r in acc:
    assert r["smem_model"] <= 101376, r     # sm_89 opt-in limit
for r in rows:
    if r["smem_model"] > 101376:
        assert r["status"] == "rejected_smem" or r["status"] == "rejected_constraint", r
print(len(acc), "accepted,", len(rej), "rejected")
PY
# the table format is the default; csv too
run check --arch sm_89 --shape 1x8x512x64; expect_rc 0; expect_out "config +status +reason"
run check --arch sm_89 --shape 1x8x512x64 --format csv; expect_rc 0; expect_out "^config,status,reason"
echo "ok"
