# 007-bad-spaces: every malformed space file is one line naming FILE:LINE and the key, exit 2.
. "$FT_TEST_LIB"
n=0
for f in "$TESTSPACES"/bad/*.yaml; do
	run check --arch sm_89 --shape 1x8x512x64 --space "$f"
	expect_bad_input "$(basename "$f")(:[0-9]+)?: "
	n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "only $n bad space files"
# an empty file and a missing one
: >"$T/empty.yaml"
run check --arch sm_89 --shape 1x8x512x64 --space "$T/empty.yaml"; expect_bad_input "empty.yaml"
run check --arch sm_89 --shape 1x8x512x64 --space "$T/missing.yaml"; expect_bad_input "missing.yaml"
echo "ok ($n bad files)"
