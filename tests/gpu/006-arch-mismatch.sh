# 006-arch-mismatch: --arch of another arch than the GPU's runs the feasibility part only and says so.
. "$FT_TEST_LIB"
gpu_or_skip
arch=$("$FATUNE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["arch"])')
other=sm_89; [ "$arch" != sm_89 ] || other=sm_90
run search --arch $other --shape 1x8x512x64 --quiet
expect_rc 0
expect_err "timing needs an $other device"
timed=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE t_median_us IS NOT NULL")
[ "$timed" -eq 0 ] || fail "$timed trials were timed on the wrong arch"
echo "ok"
