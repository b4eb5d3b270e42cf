# 018-byo-examples: the bring-your-own examples of tests/kernels compile without a GPU: a C++
# template kernel behind an extern "C" wrapper (with compile.options, compile.defines from the
# shape, compile.include of its own headers and CUDA's cccl, DTYPE in a constraint), a kernel with
# a workspace (its size from a formula, stored with each trial), and the deliberately slow kernel.
. "$FT_TEST_LIB"
CXX="$TESTSPACES/cxx_template.yaml"
for arch in sm_89 sm_90; do
	run check --all --compile --arch "$arch" --shape 1x8x512x64 --space "$CXX" --format json
	cat "$T/err"
	expect_rc 0
	python3 - "$T/out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 4 and all(r["status"] == "compiled" for r in rows), rows
PY
done
# DTYPE in an expression: bf16 keeps only ROWS_PER_WARP=4 (constraint bf16_rows)
run check --all --arch sm_90 --shape 1x8x512x64 --dtype bf16 --space "$CXX" --format csv
expect_rc 0
[ "$(grep -c "constraint 'bf16_rows' is false" "$T/out")" -eq 2 ] || { cat "$T/out"; fail "DTYPE not seen by the constraint"; }
[ "$(grep -c ',accepted,' "$T/out")" -eq 2 ] || { cat "$T/out"; fail "bf16: not 2 accepted"; }
run check --all --arch sm_90 --shape 1x8x512x64 --space "$CXX" --format csv
[ "$(grep -c ',accepted,' "$T/out")" -eq 4 ] || { cat "$T/out"; fail "fp16: not 4 accepted"; }
# compile.defines from the shape reaches the code: KEYS_PER_LANE = ceil(S_KV / 32) >= 1 is
# static_asserted; a grouped-query decode shape in bshd compiles too
run check --all --compile --arch sm_90 --shape 2x8x4x64 --kv-heads 2 --kv-len 1000 --layout bshd --causal --space "$CXX"
cat "$T/err"
expect_rc 0
expect_err "4 compiled"

# a header found through compile.include is part of the template's hash: editing it recompiles.
# Outside fatune's data directory a space's template lies under the space file's directory.
mkdir -p "$T/byo/kernels/include"
cp "$FATUNE_SOURCE_DIR/tests/kernels/cxx_template.cu" "$T/byo/kernels/"
cp "$FATUNE_SOURCE_DIR/tests/kernels/include/warp_softmax.cuh" "$T/byo/kernels/include/"
sed 's/^  WARPS: .*/  WARPS: [2]/; s/^  ROWS_PER_WARP: .*/  ROWS_PER_WARP: [4]/; s|\.\./kernels/|kernels/|g' "$CXX" >"$T/byo/cxx.yaml"
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/byo/cxx.yaml"
expect_rc 0
expect_err "1 compiled, 0 cache hits"
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/byo/cxx.yaml"
expect_err "0 compiled, 1 cache hits"
echo "/* edited */" >>"$T/byo/kernels/include/warp_softmax.cuh"
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/byo/cxx.yaml"
expect_err "1 compiled, 0 cache hits"

# the workspace example: compiled, and each trial stores its workspace size (B*H*S*(D+2)*4)
WS="$TESTSPACES/fa1_workspace.yaml"
run search --arch sm_90 --shape 1x8x512x64 --space "$WS" --quiet
cat "$T/err"
expect_rc 0
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'compiled' AND workspace_bytes = 1 * 8 * 512 * 66 * 4")" -eq 8 ] ||
	{ sql "$FATUNE_DB" "SELECT config, status, reason, workspace_bytes FROM trials"; fail "workspace size not stored"; }

# the slow kernel compiles without spills at D 64 and is kept out of D 128
run check --all --compile --arch sm_90 --shape 1x8x512x64 --space "$TESTSPACES/slow.yaml"
expect_rc 0
expect_err "2 compiled"
run check --all --arch sm_90 --shape 1x8x512x128 --space "$TESTSPACES/slow.yaml"
expect_rc 1
echo "ok"
