# 001-reference-selftest: the GPU fp32 reference attention agrees with an fp64 CPU reference.
. "$FT_TEST_LIB"
gpu_or_skip
run __worker --selftest
cat "$T/out" "$T/err"
expect_rc 0 "reference self-test"
echo "ok"
