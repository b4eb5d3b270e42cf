# 005-concurrent: two searches writing one database at once both finish, without lock errors or lost rows.
. "$FT_TEST_LIB"
gpu_or_skip
"$FATUNE" search --shape 1x8x256x64 --quiet >"$T/a.out" 2>"$T/a.err" & a=$!
"$FATUNE" search --shape 2x4x256x64 --quiet >"$T/b.out" 2>"$T/b.err" & b=$!
wait $a || { cat "$T/a.err"; fail "search a failed"; }
wait $b || { cat "$T/b.err"; fail "search b failed"; }
! grep -qi "locked\|busy" "$T/a.err" "$T/b.err" || fail "lock errors"
for s in 1x8x256x64 2x4x256x64; do
	run query --shape "$s" --format json; expect_rc 0
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r)==1, r' "$T/out" || fail "no best for $s"
done
echo "ok"
