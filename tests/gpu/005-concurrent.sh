# 005-concurrent: two searches writing one database at once both finish, without lock errors or lost
# rows: each shape has exactly one best row per space its search timed (two on sm_90: attention and
# attention_sm90), each the fastest that space's search reported.
. "$FT_TEST_LIB"
gpu_or_skip
"$FATUNE" search --shape 1x8x256x64 --quiet --json >"$T/a.out" 2>"$T/a.err" & a=$!
"$FATUNE" search --shape 2x4x256x64 --quiet --json >"$T/b.out" 2>"$T/b.err" & b=$!
wait $a || { cat "$T/a.err"; fail "search a failed"; }
wait $b || { cat "$T/b.err"; fail "search b failed"; }
! grep -qi "locked\|busy" "$T/a.err" "$T/b.err" || fail "lock errors"
for x in "1x8x256x64 a" "2x4x256x64 b"; do
	set -- $x
	run query --best --shape "$1" --format json; expect_rc 0
	python3 - "$T/out" "$T/$2.out" "$1" <<'PY' || fail "best rows of $1 do not match its search"
import json, sys
rows, s, shape = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
timed = {x["space"]: x["best"] for x in s["spaces"] if "best" in x}
assert timed, ("nothing timed", s)
assert sorted(r["space"] for r in rows) == sorted(timed), ("one best row per timed space", rows, timed)
for r in rows:
    assert r["shape"] == shape and r["config"] == timed[r["space"]]["config"], (r, timed)
    assert abs(r["t_median_us"] - timed[r["space"]]["t_median_us"]) < 1e-3, (r, timed)
assert rows[0]["config"] == s["best"]["config"], ("the first row is not the search's winner", rows, s["best"])
PY
done
# and no trial was lost: each run stored one trial per candidate it enumerated (and the race's
# final one more row for each of its finalists)
python3 - "$T/a.out" "$T/b.out" <<'PY' >"$T/cand" || fail "could not read the summaries"
import json, sys
print(sum(json.load(open(p))["candidates"] for p in sys.argv[1:]))
PY
n=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE reason NOT LIKE 'race final:%'")
[ "$n" -eq "$(cat "$T/cand")" ] || fail "$n trials stored, the searches enumerated $(cat "$T/cand")"
echo "ok"
