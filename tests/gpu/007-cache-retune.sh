# 007-cache-retune: a re-tune at a new sequence length reuses every CUBIN (compiles nothing).
. "$FT_TEST_LIB"
gpu_or_skip
run search --shape 1x8x512x64 --quiet --json; expect_rc 0
run search --shape 1x8x1024x64 --quiet --json; expect_rc 0
cat "$T/out"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["compiles"]==0 and s["cache_hits"]>0, s' "$T/out" ||
	fail "the re-tune compiled again"
echo "ok"
