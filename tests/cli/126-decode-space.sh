# 126-decode-space: search_spaces/attention_decode.yaml (attention.cu with KV_WARPS=1: the block's warps share
# one m16 tile of decode rows and split its keys) compiles with NVRTC for sm_80, sm_89 and sm_90 - D 32, 64
# and 128, fp16 and bf16, causal or not, GQA, bhsd and bshd - with no compile failure and no spill, so its
# smem_bytes formula is the template's layout (the template static_asserts it: a wrong formula is a
# compile failure here); a prefill shape has no candidate in it and is not searched in it (applies_to,
# default spaces); an exported KV_WARPS config, included before the template, builds it with nvcc alone.
. "$FT_TEST_LIB"
export FATUNE_CACHE_DIR="${FATUNE_TEST_CACHE:-$T/cache}"
SP="$SPACES/attention_decode.yaml"
while read -r -u 3 arch args; do
	[ -z "$arch" ] && continue
	run check --arch "$arch" --space "$SP" $args --compile --jobs 2 --format json
	expect_rc 0 "check --compile $arch $args"
	python3 - "$T/out" "$arch $args" <<'PY' || fail "attention_decode.yaml at $arch $args"
import json, sys
rows = json.load(open(sys.argv[1]))
st = {}
for r in rows:
    st[r["status"]] = st.get(r["status"], 0) + 1
bad = [r for r in rows if r["status"] in ("compile_failed", "spills")]
assert not bad, (sys.argv[2], bad[:3])
ok = [r for r in rows if r["status"] == "compiled"]
assert len(ok) >= 20, (sys.argv[2], st)
assert all(",KV_WARPS=1," in r["config"] and ",TILE_M=16," in r["config"] for r in ok), ok[:2]
PY
done 3<<'CASES'
sm_90 --shape 16x32x1x128 --kv-heads 8 --kv-len 32768
sm_90 --shape 1x32x4x64 --kv-heads 8 --kv-len 4096 --causal --layout bshd
sm_89 --shape 1x32x1x64 --kv-heads 8 --kv-len 4096 --causal --dtype bf16
sm_80 --shape 2x8x1x32 --kv-len 2048
CASES
# prefill: 512 rows of a head are no decode step
run check --all --arch sm_90 --space "$SP" --shape 1x8x512x64 --format json
[ "$rc" -le 1 ] || { cat "$T/err"; fail "check of a prefill shape"; }
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r and all(x["status"]=="rejected_constraint" and "rows_in_one_tile" in x["reason"] for x in r), r[:2]' "$T/out" ||
	fail "a prefill shape has candidates in the decode space"
# a default space of the mma family, searched only where its applies_to holds: a decode step gets it
# beside the default ones, a prefill shape does not (and says nothing of it); named with --space at a
# prefill shape, it is skipped with the reason, and no space left is bad input
run search --arch sm_90 --shape 1x32x1x128 --kv-heads 8 --kv-len 4096 --budget 1 --jobs 2 --json --quiet --db "$T/d.db"
expect_rc 0 "default spaces at a decode shape"
python3 -c 'import json,sys; u=json.loads(open(sys.argv[1]).read()); s=[x["space"] for x in u["spaces"]]; assert s == ["attention_sm90", "attention", "attention_decode"], s' "$T/out" ||
	fail "the default spaces of a decode step are not the two prefill ones and the decode space"
run search --arch sm_90 --shape 1x8x512x64 --budget 1 --jobs 2 --json --quiet --db "$T/p.db"
expect_rc 0 "default spaces at a prefill shape"
python3 -c 'import json,sys; u=json.loads(open(sys.argv[1]).read()); s=[x["space"] for x in u["spaces"]]; assert s == ["attention_sm90", "attention"], s' "$T/out" ||
	fail "a prefill shape was searched in the decode space"
grep -q "attention_decode" "$T/err" && fail "a default space the shape is not for was reported: $(cat "$T/err")"
run search --arch sm_90 --shape 1x8x512x64 --space "$SP" --runner fake --db "$T/n.db"
expect_bad_input "no space is searched for 1x8x512x64 on sm_90 \\(space 'attention_decode': it is searched only for shapes where S \\* H / H_KV <= 16 \\(applies_to, line 2[0-9]\\)\\)"
[ ! -e "$T/n.db" ] || fail "bad input created the database"
# export a KV_WARPS config and build the template with the header alone; with PDL 2 (the combine
# released as each split block starts) the header launches the combine with programmatic dependent launch
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
for pdl in 0 2; do
	cfg=NUM_WARPS_PER_BLOCK=4,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,KV_WARPS=1,NUM_SPLITS=16,COMBINE_IN_KERNEL=0,PDL=$pdl
	run export --arch sm_90 --shape 1x32x1x128 --kv-heads 8 --kv-len 8192 --space "$SP" --config "$cfg" -o "$T/kv$pdl.h"
	expect_rc 0 "export of a KV_WARPS config with PDL=$pdl"
	grep -q "^#define KV_WARPS 1\$" "$T/kv$pdl.h" || fail "the exported header does not set KV_WARPS"
	grep -q "^#define PDL $pdl\$" "$T/kv$pdl.h" || fail "the exported header does not set PDL $pdl"
	grep -q "^#define FATUNE_LAUNCH_COMBINE_PDL $((pdl != 0))\$" "$T/kv$pdl.h" ||
		fail "the exported header's combine launch for PDL=$pdl is not $((pdl != 0))"
	if [ -x "$NVCC" ]; then
		mkdir -p "$T/b$pdl" && cp "$T/kv$pdl.h" "$T/b$pdl/build_config.h"
		printf '#include "build_config.h"\n#include "%s/kernel_templates/attention.cu"\n' "$FATUNE_SOURCE_DIR" >"$T/b$pdl/kernel.cu"
		(cd "$T/b$pdl" && "$NVCC" -arch=sm_90 -cubin -o k.cubin kernel.cu) >"$T/b$pdl/log" 2>&1 ||
			{ cat "$T/b$pdl/log"; fail "the exported KV_WARPS header (PDL=$pdl) does not build attention.cu"; }
	fi
done
echo ok
