# 003-check-sm89: check --all lists every candidate of the default space for sm_89, accepted or rejected with a
# reason; without --all only those that pass the model check, the others counted per reason in one line.
. "$FT_TEST_LIB"
run check --arch sm_89 --shape 1x8x512x64 --format json --all
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
# by default: the accepted ones only, and one line counting the others per reason; the counts add up
run check --arch sm_89 --shape 1x8x512x64 --format json; expect_rc 0
python3 - "$T/out" "$T/err" <<'PY' || fail "check without --all"
import json, re, sys
rows = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
assert rows and all(r["status"] == "accepted" for r in rows), len(rows)
m = re.search(r"check: (\d+) rejected before compiling are not listed \(--all lists them\): (.*)", err)
assert m, err
parts = [p.strip().split(" ", 1) for p in m.group(2).split(",")]
assert sum(int(n) for n, _ in parts) == int(m.group(1)), parts
assert any(why.startswith("constraint '") for _, why in parts), parts
total = re.search(r"(\d+) candidates, (\d+) accepted, (\d+) rejected", err)
assert int(total.group(2)) == len(rows) and int(total.group(3)) == int(m.group(1)), (total.groups(), len(rows))
PY
[ "$(wc -l <"$T/out")" -lt 1000 ] || fail "check prints thousands of lines without --all"
# the table format is the default; csv too
run check --arch sm_89 --shape 1x8x512x64; expect_rc 0; expect_out "config +status +reason"
run check --arch sm_89 --shape 1x8x512x64 --format csv; expect_rc 0; expect_out "^config,status,reason"
echo "ok"
