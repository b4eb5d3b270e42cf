# 010-cache: compiled CUBINs are reused across launch-time parameters and sequence lengths, never
# handed back for a changed template or a changed header it includes; cache stats and clear.
. "$FT_TEST_LIB"
# a private copy of the fault space and its kernel, so the test can edit them (the kernel under the
# space's directory: outside fatune's data directory a template must lie there)
mkdir -p "$T/spaces/kernels"
sed 's|file: \.\./kernels/|file: kernels/|' "$TESTSPACES/fault.yaml" >"$T/spaces/fault.yaml"
sed 's|#include "../../kernel_templates/fatune_abi.h"|#include "fault_abi.h"|' \
	"$FATUNE_SOURCE_DIR/tests/kernels/fault.cu" >"$T/spaces/kernels/fault.cu"
cp "$FATUNE_SOURCE_DIR/kernel_templates/fatune_abi.h" "$T/spaces/kernels/fault_abi.h"
SP="$T/spaces/fault.yaml"
summary() { grep -oE "[0-9]+ compiled, [0-9]+ cache hits" "$T/err"; }
check() { run check --arch sm_90 --shape "$1" --space "$SP" --compile --format csv; expect_rc 0; summary; }

[ "$(check 1x2x64x64)" = "12 compiled, 0 cache hits" ] || fail "cold cache: $(summary)"
[ "$(check 1x2x64x64)" = "0 compiled, 12 cache hits" ] || fail "warm cache: $(summary)"
# B, H and S are launch-time: another shape compiles nothing
[ "$(check 4x8x1000x64)" = "0 compiled, 12 cache hits" ] || fail "new S recompiled: $(summary)"
# head dim, dtype and causal are compile-time: new CUBINs
run check --arch sm_90 --shape 1x2x64x128 --space "$SP" --compile --dtype bf16 --causal; expect_rc 0
[ "$(summary)" = "12 compiled, 0 cache hits" ] || fail "new D/dtype/causal reused CUBINs: $(summary)"
# a changed template: every entry of it is new
echo "/* changed */" >>"$T/spaces/kernels/fault.cu"
[ "$(check 1x2x64x64)" = "12 compiled, 0 cache hits" ] || fail "changed template hit the cache: $(summary)"
[ "$(check 1x2x64x64)" = "0 compiled, 12 cache hits" ] || fail "changed template not cached: $(summary)"
# a changed header the template includes: new entries too
echo "/* changed */" >>"$T/spaces/kernels/fault_abi.h"
[ "$(check 1x2x64x64)" = "12 compiled, 0 cache hits" ] || fail "changed header hit the cache: $(summary)"
run cache stats; expect_rc 0
expect_out "^entries: 48$"
run cache clear; expect_rc 0; expect_out "removed 48 entries"
run cache stats; expect_out "^entries: 0$"
[ "$(check 1x2x64x64)" = "12 compiled, 0 cache hits" ] || fail "clear left entries: $(summary)"
echo "ok"
