# 105-name: `search --name` takes what a campaign file's name: takes, [A-Za-z0-9_-] (issue 18, Low):
# markup or a line break is refused (exit 2, one line) and nothing is stored.
. "$FT_TEST_LIB"
S="search --arch sm_89 --shape 1x2x64x64 --space $TESTSPACES/fault.yaml --quiet"
for bad in '<img src=x onerror=alert(1)>' "$(printf 'two\nlines')" 'a b' '' "$(printf 'x%.0s' $(seq 64))"; do
	run $S --name "$bad"
	expect_bad_input "bad --name '.*': use 1 to 63 letters, digits, '_' and '-'"
	[ ! -e "$FATUNE_DB" ] || fail "a refused --name stored something"
done
run $S --name ok_Name-1; expect_rc 0
[ "$(sql "$FATUNE_DB" "SELECT campaign FROM runs")" = ok_Name-1 ] || fail "--name not stored"
echo ok
