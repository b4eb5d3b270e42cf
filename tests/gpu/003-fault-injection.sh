# 003-fault-injection: a faulting, a hanging and a NaN-writing candidate among good ones:
# the search finishes and stores each under the right status.
. "$FT_TEST_LIB"
gpu_or_skip
run search --space "$TESTSPACES/fault.yaml" --shape 1x2x64x64 --timeout 3 --samples 3 --launches 2
cat "$T/out" "$T/err"
expect_rc 0 "fault-injection search"
run query --trials --format csv
expect_rc 0
cat "$T/out"
for rows in 1 2 4; do
	grep -q "^[^,]*,.*FAULT=0,ROWS_PER_BLOCK=$rows,ok," "$T/out" || grep -q "FAULT=0,ROWS_PER_BLOCK=$rows\"*,ok" "$T/out" ||
		fail "FAULT=0 ROWS_PER_BLOCK=$rows is not ok"
	grep -q "FAULT=1,ROWS_PER_BLOCK=$rows\"*,crashed" "$T/out" || fail "FAULT=1 ROWS_PER_BLOCK=$rows is not crashed"
	grep -q "FAULT=2,ROWS_PER_BLOCK=$rows\"*,timeout" "$T/out" || fail "FAULT=2 ROWS_PER_BLOCK=$rows is not timeout"
	grep -q "FAULT=3,ROWS_PER_BLOCK=$rows\"*,wrong_result" "$T/out" || fail "FAULT=3 ROWS_PER_BLOCK=$rows is not wrong_result"
done
echo "ok"
