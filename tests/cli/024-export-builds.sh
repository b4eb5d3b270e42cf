# 024-export-builds: a build_config.h is enough to build the template with nvcc alone. A database
# made by replaying the recorded H100 campaign (no GPU) is exported in C and C++ style; each header,
# included before the template, builds it with `nvcc -arch=X` and nothing else for sm_80, sm_89
# (mma template) and sm_90a (both), with and without the same values as -D flags; another value is
# the header's #error; a bf16 export builds bf16 code and no fp16 path (PTX); the BYO example too.
# --config exports any space's config without a GPU and refuses one its constraints reject; the
# README's launch example compiles against the exported headers.
. "$FT_TEST_LIB"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }
REC="$T/rec.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
K="$FATUNE_SOURCE_DIR/kernel_templates"
DB="$T/tuned.db"
for sp in attention attention_sm90; do
	run search --replay "$REC" --arch sm_90 --shape 1x16x1024x128 --dtype bf16 --space "$SPACES/$sp.yaml" --db "$DB" --quiet
	expect_rc 0 "replay $sp bf16"
	expect_out "^next: fatune export --arch sm_90 --shape 1x16x1024x128 --dtype bf16 --space $SPACES/$sp.yaml --db $DB -o build_config.h\$"
done
for sp in attention attention_sm90; do
	run search --replay "$REC" --arch sm_90 --shape 1x8x512x64 --causal --space "$SPACES/$sp.yaml" --db "$DB" --quiet
	expect_rc 0 "replay $sp causal"
done

# unit DIR HEADER TEMPLATE: DIR/kernel.cu = the header, then the template
unit() {
	mkdir -p "$1"
	cp "$2" "$1/build_config.h"
	printf '#include "build_config.h"\n#include "%s"\n' "$3" >"$1/kernel.cu"
}
# no_fp16 PTX: bf16 instructions and no fp16 one
bf16_only() {
	grep -qE '\.bf16' "$1" || fail "$1: no bf16 instruction in a bf16 build"
	! grep -qE '\.f16(x2)?([^0-9a-z_]|$)' "$1" || fail "$1: an fp16 instruction in a bf16 build"
}

# 1. the stored best of each space, both styles
run export --arch sm_90 --shape 1x16x1024x128 --dtype bf16 --db "$DB" --allow-replayed --space "$SPACES/attention.yaml" -o "$T/mma_bf16.h"
expect_rc 0
grep -q -- "--space '$SPACES/attention.yaml' --db '$DB'\$" "$T/mma_bf16.h" || fail "the regenerate line drops --space or --db"
run export --arch sm_90 --shape 1x16x1024x128 --dtype bf16 --db "$DB" --allow-replayed --style c -o "$T/sm90_bf16.h"
expect_rc 0
grep -q "space            attention_sm90 (family wgmma)" "$T/sm90_bf16.h" || fail "the faster space (wgmma) was not exported"
grep -q "^#define FATUNE_LAUNCH_TMA_K_ROWS [1-9]" "$T/sm90_bf16.h" || fail "no TMA box for the wgmma family"
run export --arch sm_90 --shape 1x8x512x64 --causal --db "$DB" --allow-replayed --space "$SPACES/attention_sm90.yaml" -o "$T/sm90_causal.h"
expect_rc 0
# 2. a chosen config of the mma space for sm_80 and sm_89 (no database, no GPU): the fp16 causal
# winner of the sm_90 search, which fits both
cfg=$(sql "$DB" "SELECT config FROM best WHERE space_name = 'attention' AND s = 512 AND d = 64 AND causal = 1")
[ -n "$cfg" ] || fail "the replay left no mma best for 1x8x512x64 causal"
for arch in sm_80 sm_89; do
	run export --arch $arch --shape 1x8x512x64 --causal --config "$cfg" --style c -o "$T/mma_$arch.h"
	expect_rc 0 "--config on $arch"
	grep -q "Chosen with --config for $arch (not measured by fatune)" "$T/mma_$arch.h" || fail "--config claims a measurement"
done
# 3. the BYO example, bf16, chosen
run export --arch sm_89 --shape 1x8x256x64 --dtype bf16 --space "$TESTSPACES/fa1_workspace.yaml" \
	--config ROWS_PER_BLOCK=64,KV_TILE=32,SKIP_INIT=0 -o "$T/byo.h"
expect_rc 0 "BYO --config"
grep -q "^#define FATUNE_LAUNCH_WORKSPACE_BYTES $((1 * 8 * 256 * 66 * 4))\$" "$T/byo.h" || fail "BYO workspace bytes"

# 4. a chosen small-grid config of the Hopper space: two consumers on one row block (KV_WARPGROUPS 2)
run export --arch sm_90 --shape 1x8x512x64 --space "$SPACES/attention_sm90.yaml" -o "$T/sm90_kvwg.h" --config \
	NUM_CONSUMER_WG=2,BLOCK_M=64,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=2,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
expect_rc 0 "KV_WARPGROUPS --config"
grep -q "^#define KV_WARPGROUPS 2\$" "$T/sm90_kvwg.h" && grep -q "^#define BLOCK_M 64\$" "$T/sm90_kvwg.h" ||
	fail "the KV_WARPGROUPS header lacks its macros"

# 5. a chosen cluster config of the Hopper space (CLUSTER_M 2: the kernel's cluster shape is its own,
# __cluster_dims__, so a plain launch of the exported grid runs it in pairs)
run export --arch sm_90 --shape 4x16x2048x128 --space "$SPACES/attention_sm90.yaml" -o "$T/sm90_cluster.h" --config \
	NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=1,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=2,NUM_SPLITS=1,PDL=0
expect_rc 0 "CLUSTER_M --config"
grep -q "^#define CLUSTER_M 2\$" "$T/sm90_cluster.h" || fail "the cluster header lacks CLUSTER_M"

unit "$T/a" "$T/mma_sm_80.h" "$K/attention.cu"
unit "$T/b" "$T/mma_sm_89.h" "$K/attention.cu"
unit "$T/c" "$T/mma_bf16.h" "$K/attention.cu"
unit "$T/d" "$T/sm90_bf16.h" "$K/attention_sm90.cu"
unit "$T/e" "$T/sm90_causal.h" "$K/attention_sm90.cu"
unit "$T/f" "$T/byo.h" "$FATUNE_SOURCE_DIR/tests/kernels/fa1_workspace.cu"
unit "$T/k" "$T/sm90_kvwg.h" "$K/attention_sm90.cu"
unit "$T/m" "$T/sm90_cluster.h" "$K/attention_sm90.cu"
# the same values as -D flags are fine (the header's own, read back)
same=$(grep -E '^#define (HEAD_DIM|IS_CAUSAL|TILE_N|FATUNE_ABI) ' "$T/mma_sm_89.h" | awk '{printf " -D%s=%s", $2, $3}')
[ "$(echo "$same" | wc -w)" -eq 4 ] || fail "the header lacks HEAD_DIM, IS_CAUSAL, TILE_N or FATUNE_ABI"
sm90same=$(grep -E '^#define (BLOCK_N|FATUNE_BF16) ' "$T/sm90_bf16.h" | awk '{printf " -D%s=%s", $2, $3}')
sm90causal=$(grep -E '^#define (BLOCK_M|IS_CAUSAL|FATUNE_SMEM_BYTES) ' "$T/sm90_causal.h" | awk '{printf " -D%s=%s", $2, $3}')
[ "$(echo "$sm90causal" | wc -w)" -eq 3 ] || fail "the wgmma header lacks BLOCK_M, IS_CAUSAL or FATUNE_SMEM_BYTES"
# two nvcc at a time: (a, b), (c, d), (e, f)
cd "$T"
( cd a && "$NVCC" -arch=sm_80 -ptx -o k.ptx kernel.cu ) >a.log 2>&1 & pa=$!
( cd b && "$NVCC" -arch=sm_89 $same -cubin -o k.cubin kernel.cu ) >b.log 2>&1 & pb=$!
wait $pa || { cat a.log; fail "C-style header + attention.cu does not build for sm_80"; }
wait $pb || { cat b.log; fail "C-style header + attention.cu with matching -D flags does not build for sm_89"; }
( cd c && "$NVCC" -arch=sm_90 -ptx -o k.ptx kernel.cu ) >c.log 2>&1 & pc=$!
( cd d && "$NVCC" -arch=sm_90a $sm90same -ptx -o k.ptx kernel.cu ) >d.log 2>&1 & pd=$!
wait $pc || { cat c.log; fail "C++-style bf16 header + attention.cu does not build for sm_90"; }
wait $pd || { cat d.log; fail "C-style bf16 header + attention_sm90.cu does not build for sm_90a"; }
( cd e && "$NVCC" -arch=sm_90a $sm90causal -cubin -o k.cubin kernel.cu ) >e.log 2>&1 & pe=$!
( cd f && "$NVCC" -arch=sm_89 -I"$K" -ptx -o k.ptx kernel.cu ) >f.log 2>&1 & pf=$!
wait $pe || { cat e.log; fail "C++-style header + attention_sm90.cu with matching -D flags does not build for sm_90a"; }
wait $pf || { cat f.log; fail "the BYO header + fa1_workspace.cu does not build for sm_89"; }
( cd k && "$NVCC" -arch=sm_90a -cubin -o k.cubin kernel.cu ) >k.log 2>&1 ||
	{ cat k.log; fail "the KV_WARPGROUPS header + attention_sm90.cu does not build for sm_90a"; }
( cd m && "$NVCC" -arch=sm_90a -ptx -o k.ptx kernel.cu ) >m.log 2>&1 ||
	{ cat m.log; fail "the CLUSTER_M header + attention_sm90.cu does not build for sm_90a"; }
grep -A8 "entry fatune_sm90_fwd" m/k.ptx | grep -q "\.reqnctapercluster 2, 1, 1" ||
	fail "the CLUSTER_M 2 kernel is not built with its cluster shape"
grep -q "multicast::cluster" m/k.ptx || fail "the CLUSTER_M 2 kernel has no multicast copy"
bf16_only c/k.ptx
bf16_only d/k.ptx
bf16_only f/k.ptx
grep -q "\.entry fatune_attention_fwd" a/k.ptx || fail "sm_80 PTX lacks the kernel"
# another value as a -D flag: the header's #error, naming the macro (preprocessing is enough)
! "$NVCC" -arch=sm_89 -DHEAD_DIM=128 -E -o /dev/null b/kernel.cu 2>g.log || fail "a mismatching -D flag built"
grep -q 'HEAD_DIM: build_config.h says 64' g.log || { cat g.log; fail "the mismatch error does not name HEAD_DIM"; }
# the README's launch example (docs/examples/launch.c) compiles against the headers of both templates
CUDA_INC=$(dirname "$(dirname "$NVCC")")/include
for u in a d; do
	cc -std=c11 -Wall -Wextra -Werror -I"$u" -I"$K" -I"$CUDA_INC" -fsyntax-only \
		"$FATUNE_SOURCE_DIR/docs/examples/launch.c" 2>h.log || { cat h.log; fail "launch.c does not compile with $u's header"; }
done
cd - >/dev/null

# the wgmma family only on sm_90: its config for sm_89 is refused
run export --arch sm_89 --shape 1x16x1024x128 --space "$SPACES/attention_sm90.yaml" \
	--config "$(sql "$DB" "SELECT config FROM best WHERE space_name = 'attention_sm90' LIMIT 1")"
expect_bad_input "cannot run .*Hopper"
# a config the space's constraints reject for the shape: refused naming the constraint
run export --arch sm_90 --shape 1x8x512x64 --causal --config "$(echo "$cfg" | sed 's/PACK_GQA=0/PACK_GQA=1/')"
expect_bad_input "constraint 'pack_iff_gqa' is false"
# nothing tuned: the hint names the space and the database it looked in
run export --arch sm_90 --shape 2x8x512x64 --db "$DB" --space "$SPACES/attention_sm90.yaml"
expect_bad_input "fatune search --arch sm_90 --shape 2x8x512x64 --dtype fp16 --space $SPACES/attention_sm90.yaml --db $DB'"
echo "ok"
