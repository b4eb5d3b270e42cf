# 005-search-nogpu: search for an arch with no device of it here (no GPU at all in CI, another
# arch on a GPU machine) stores the feasibility part, says timing needs a GPU, and resumes.
. "$FT_TEST_LIB"
run search --arch sm_89 --shape 1x8x512x64
cat "$T/out" "$T/err"
expect_rc 0 "feasibility search"
expect_err "timing needs an sm_89 device"
expect_out "search sm_89 1x8x512x64 fp16"
[ -s "$FATUNE_DB" ] || fail "no database written"
run query --trials --format json
expect_rc 0
python3 - "$T/out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
st = {}
for r in rows:
    st[r["status"]] = st.get(r["status"], 0) + 1
    assert r["arch"] == "sm_89" and r["shape"] == "1x8x512x64", r
    assert r["t_median_us"] is None, "nothing may be timed without a device"
    if r["status"].startswith("rejected"):
        assert r["reason"], r
print(st)
assert st.get("compiled", 0) > 0, "no candidate compiled"
assert sum(v for k, v in st.items() if k.startswith("rejected")) > 0, "nothing rejected"
assert "ok" not in st
PY
# no timing, so no best config yet: --best gives an empty JSON array; plain query lists the
# stored trials instead and says why; export says what to run
run query --best --format json; expect_rc 0
[ "$(tr -d ' \n' <"$T/out")" = "[]" ] || fail "a best config appeared without timing"
run query --arch sm_89 --shape 1x8x512x64 --format json; expect_rc 0
expect_err "no best config matches yet"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r) > 100 and all(x["arch"]=="sm_89" for x in r), len(r)' "$T/out" ||
	fail "plain query did not list the stored trials"
run export --arch sm_89 --shape 1x8x512x64
expect_bad_input "run 'fatune search --arch sm_89 --shape 1x8x512x64"
# the same search again: everything is already done
n1=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials")
run search --arch sm_89 --shape 1x8x512x64 --quiet
expect_rc 0
expect_out "already done, skipped"
n2=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials")
[ "$n1" -eq "$n2" ] || fail "resume stored $((n2 - n1)) trials again"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM runs WHERE outcome='done'")" -eq 2 ] || fail "runs not recorded"
echo "ok ($n1 trials)"
