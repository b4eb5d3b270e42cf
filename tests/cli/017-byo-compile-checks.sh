# 017-byo-compile-checks: what `check --compile` finds in a brought-your-own kernel without a GPU:
# a misspelled or C++-mangled entry point (compile_failed naming the entry points the CUBIN has),
# a template built for another ABI version, and a static-shared-memory formula that disagrees
# with ptxas either way, or lets a config past 48 KB reach ptxas (ptxas's own error, recovered).
. "$FT_TEST_LIB"
KSRC="$FATUNE_SOURCE_DIR/tests/kernels/static_smem.cu"
# space FILE TEMPLATE KERNEL SMEM_BYTES [ABI]: a space over a static_smem.cu variant
space() {
	cat >"$1" <<YAML
fatune_space: 1
name: byo
template: {file: $2, kernel: $3, shared_memory: static, abi: ${5:-1}}
parameters:
  NUM_WARPS_PER_BLOCK: [4, 8]
  TILE_M: [16, 64, 128]   # 8 warps x 128 rows needs 65536 B: past the 48 KB static limit
  KEYS_PER_WARP: [8]
compile:
  defines: {SMEM_SELF_CHECK: 0}   # the kernel's own static_assert would catch a wrong formula first
smem_bytes: $4
launch: {threads: NUM_WARPS_PER_BLOCK * 32, grid: [ceil_div(S, TILE_M), H, B]}
YAML
}
EXACT="DTYPE_BYTES * D * (TILE_M + 2 * KEYS_PER_WARP * NUM_WARPS_PER_BLOCK) + 4 * TILE_M * KEYS_PER_WARP * NUM_WARPS_PER_BLOCK"
# reasons FILE: "status|reason" per candidate of a --format json listing
reasons() { python3 -c 'import json, sys
for r in json.load(open(sys.argv[1])): print(r["status"] + "|" + (r["reason"] or ""))' "$1"; }

# the exact formula compiles (the control: every failure below comes from the one change)
space "$T/exact.yaml" "$KSRC" fatune_static_smem_fwd "$EXACT"
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/exact.yaml" --format json
expect_rc 0
reasons "$T/out" >"$T/r"
[ "$(grep -c '^compiled|' "$T/r")" -eq 5 ] || { cat "$T/r"; fail "exact formula: not 5 compiled"; }
grep -q '^rejected_smem|smem 65536 B > 49152 B static limit of sm_89$' "$T/r" || fail "exact formula: 65536 B not rejected"


# 1. a misspelled entry point
space "$T/typo.yaml" "$KSRC" fatune_static_smem_fw "$EXACT"
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/typo.yaml" --format json
expect_rc 1 "no candidate can compile"
reasons "$T/out" >"$T/r"
[ "$(grep -c "^compile_failed|entry point 'fatune_static_smem_fw' is not in the compiled template; it has fatune_static_smem_fwd: declare the kernel extern \"C\"" "$T/r")" -eq 5 ] ||
	{ cat "$T/r"; fail "misspelled entry point not reported with the names found"; }
expect_err "compile_failed 5"

# 2. a C++ kernel without extern "C": its name is mangled
sed 's/^extern "C" __global__/__global__/' "$KSRC" >"$T/mangled.cu"
grep -q '^__global__' "$T/mangled.cu" || fail "the test did not remove extern \"C\""
space "$T/cxx.yaml" "$T/mangled.cu" fatune_static_smem_fwd "$EXACT"
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/cxx.yaml" --format json
expect_rc 1
reasons "$T/out" >"$T/r"
[ "$(grep -c "^compile_failed|entry point 'fatune_static_smem_fwd' is not in the compiled template; it has _Z22fatune_static_smem_fwd" "$T/r")" -eq 5 ] ||
	{ cat "$T/r"; fail "mangled entry point not reported with its mangled name"; }

# 3. the ABI version check: a kernel that takes the v1 struct under a space that says abi: 2
sed 's/fatune_static_smem_fwd(struct fatune_attn_params p)/fatune_static_smem_fwd(struct fatune_attn_params_v1 p)/' "$KSRC" >"$T/v1.cu"
grep -q 'fatune_attn_params_v1 p' "$T/v1.cu" || fail "the test did not pin the v1 struct"
space "$T/abi.yaml" "$T/v1.cu" fatune_static_smem_fwd "$EXACT" 2
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/abi.yaml" --format json
expect_rc 1
reasons "$T/out" >"$T/r"
[ "$(grep -c "^compile_failed|kernel 'fatune_static_smem_fwd' takes 1 parameter of 72 bytes, but its ABI passes one struct fatune_attn_params of 768 bytes: a template built for another ABI version" "$T/r")" -eq 5 ] ||
	{ cat "$T/r"; fail "ABI mismatch not reported"; }

# ...and the other way: a v2 kernel under a space that declares no abi (v1)
sed 's/fatune_static_smem_fwd(struct fatune_attn_params p)/fatune_static_smem_fwd(struct fatune_attn_params_v2 p)/' "$KSRC" |
	sed 's/p\.s\b/p.s_q/g' >"$T/v2.cu"
space "$T/abi1.yaml" "$T/v2.cu" fatune_static_smem_fwd "$EXACT" 1
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/abi1.yaml" --format json
expect_rc 1
reasons "$T/out" >"$T/r"
[ "$(grep -c "^compile_failed|kernel 'fatune_static_smem_fwd' takes 1 parameter of 768 bytes, but its ABI passes one struct fatune_attn_params of 72 bytes" "$T/r")" -eq 5 ] ||
	{ cat "$T/r"; fail "v2 kernel under ABI v1 not reported"; }
# a v1 template still runs self-attention (above), and refuses what v1 cannot express, before compiling
run check --all --arch sm_89 --shape 1x8x512x64 --kv-len 1024 --space "$T/exact.yaml"
expect_bad_input "its template speaks ABI v1 .*which cannot run kv_len != S: migrate it to ABI v2"

# 4. a formula too small: under 48 KB the difference with ptxas is named; past 48 KB the model
# let the config through, and ptxas's own error (which NVRTC's log drops) is the reason
space "$T/small.yaml" "$KSRC" fatune_static_smem_fwd 1024
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/small.yaml" --format json
expect_rc 1
reasons "$T/out" >"$T/r"
cat "$T/r"
grep -q "^compile_failed|the space's smem_bytes formula gives 1024 B but ptxas reports 12288 B of static shared memory: fix smem_bytes in $T/small.yaml" "$T/r" ||
	fail "a too-small formula is not compared with ptxas"
grep -q "^compile_failed|ptxas error: Entry function 'fatune_static_smem_fwd' uses too much shared data (0x" "$T/r" ||
	fail "overflow past 48 KB not reported with ptxas's error"
! grep -q "see the log" "$T/r" || fail "a reason still says 'see the log'"
# the trial's log keeps what ptxas said
# (every candidate fails: the search says so and exits 1, with every trial stored)
run search --arch sm_89 --shape 1x8x512x64 --space "$T/small.yaml" --quiet
expect_rc 1
expect_err "no candidate of 1x8x512x64 can run on sm_89"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE log LIKE '%uses too much shared data%'")" -ge 1 ] ||
	fail "ptxas's error is not in the stored log"

# 5. a formula too large: ptxas's smaller number is named
space "$T/large.yaml" "$KSRC" fatune_static_smem_fwd 45000
run check --all --compile --arch sm_89 --shape 1x8x512x64 --space "$T/large.yaml" --format json
expect_rc 1
reasons "$T/out" >"$T/r"
grep -q "^compile_failed|the space's smem_bytes formula gives 45000 B but ptxas reports 12288 B" "$T/r" ||
	{ cat "$T/r"; fail "a too-large formula is not compared with ptxas"; }
echo "ok"
