# 014-nvrtc-sm90-space (slow): NVRTC compiles the whole Hopper space (attention_sm90.yaml, family wgmma,
# sm_90a) - every compile-time config any shape admits, for D 64/128/256, fp16/bf16, causal or not - with
# no compile failure and no spill; every config the model accepts compiles (the model rejects before
# NVRTC, never after), all its shared memory is the dynamic smem_bytes formula (ptxas: 0 B static) and
# the template's static_assert holds the formula to the kernel's layout (a formula off by 8 B fails).
. "$FT_TEST_LIB"
export FATUNE_CACHE_DIR="${FATUNE_TEST_CACHE:-$T/cache}"
SP="$SPACES/attention_sm90.yaml"

# configs: JSON rows -> the compile-time configs (NUM_SPLITS is a launch value) with a given status
configs() {
	python3 - "$1" "$2" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    if r["status"] == sys.argv[2]:
        print(",".join(kv for kv in r["config"].split(",") if not kv.startswith("NUM_SPLITS=")))
PY
}

# The shapes whose accepted configs are compiled below: 1x1x8192xD, and without causal also 4x8x1536xD,
# whose row blocks are an even count for 64, 128 and 192 rows and more than 132 work tiles without a
# split (CLUSTER_M 2 pairs row blocks and has no split; 8192 / 192 rounds up to 43)
long_shapes() {
	echo "1x1x8192x$1"
	if [ -z "${2:-}" ]; then echo "4x8x1536x$1"; fi
}

# 1. Which configs can any shape reach? Model check only (no compile, milliseconds each): the union
# over short and long sequences, small and large grids, decode (S=1 over a long KV cache) and
# chunked prefill must equal what the long shapes compiled below admit, so that compiling
# them opens every constraint (PERSISTENT needs > 132 work tiles, KV_STAGES=3 and the
# BLOCK_N variants need S_KV long enough, splits need S_KV and a small grid).
# Causal and not apart: TILE_ORDER and MASK_PEEL (issue 17) are causal-only, so each flag has its set.
for d in 64 128 256; do
	for c in "" --causal; do
		r="$T/reach.$d$c" l="$T/long.$d$c"
		: >"$r"
		for b in 1 4; do for h in 1 8 32; do for s in 1 17 64 200 512 2048 8192; do
			run check --all --arch sm_90 --space "$SP" --shape ${b}x${h}x${s}x$d $c --format json
			[ "$rc" -le 1 ] || { cat "$T/err"; fail "check ${b}x${h}x${s}x$d $c"; }
			configs "$T/out" accepted >>"$r"
		done; done; done
		for kv in "--shape 1x8x1x$d --kv-len 32768 --kv-heads 1" "--shape 2x16x512x$d --kv-len 8192 --kv-heads 4"; do
			run check --all --arch sm_90 --space "$SP" $kv $c --format json
			[ "$rc" -le 1 ] || { cat "$T/err"; fail "check $kv $c"; }
			configs "$T/out" accepted >>"$r"
		done
		sort -u -o "$r" "$r"
		: >"$l"
		for long in $(long_shapes $d $c); do
			run check --all --arch sm_90 --space "$SP" --shape $long $c --format json; expect_rc 0 "check $long $c"
			configs "$T/out" accepted >>"$l"
		done
		sort -u -o "$l" "$l"
		[ -s "$l" ] || fail "d$d $c: the long shapes admit nothing"
		missing=$(comm -23 "$r" "$l")
		[ -z "$missing" ] || fail "d$d $c: configs some shape reaches but no long shape admits: $missing"
	done
done

# 2. Compile them all, per dtype and causal flag (each a distinct CUBIN; a config both long shapes
# admit is compiled once, the second a cache hit).
total=0
for d in 64 128 256; do
	for flags in "--dtype fp16" "--dtype fp16 --causal" "--dtype bf16" "--dtype bf16 --causal"; do
		c=""; [[ "$flags" == *--causal* ]] && c=--causal
		echo "[]" >"$T/rows"
		for long in $(long_shapes $d $c); do
			run check --all --arch sm_90 --space "$SP" --shape $long $flags --compile --format json
			cat "$T/err"
			expect_rc 0 "$long $flags"
			python3 -c 'import json, sys; r = json.load(open(sys.argv[1])) + json.load(open(sys.argv[2])); json.dump(r, open(sys.argv[1], "w"))' "$T/rows" "$T/out"
		done
		cp "$T/rows" "$T/out"
		n=$(python3 - "$T/out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
bad = [r for r in rows if r["status"] in ("compile_failed", "spills")]
assert not bad, bad[:3]
# the model rejects before compiling: nothing it accepted is rejected by what ptxas reports
# (registers, or its note that it serialized the wgmma: C7520, 'wgmma serialized' reasons)
late = [r for r in rows if r["status"].startswith("rejected") and r.get("regs") is not None]
assert not late, late[:3]
comp = [r for r in rows if r["status"] == "compiled"]
for r in comp:
    # all shared memory is the launch's dynamic bytes, i.e. the space's formula
    assert r["smem_static"] == 0, ("static smem beside the dynamic formula", r)
    assert r["spill_bytes"] == 0, r
    assert 0 < r["smem_model"] <= 232448, r          # sm_90 opt-in: 227 KB
    # one block's registers (entry count, before setmaxnreg) fit the SM's 64K
    assert 0 < r["regs"] and r["regs"] * r["threads"] <= 65536, r
print(len({r["config"] for r in comp}))
PY
) || fail "d$d $flags: compile failures, spills or late rejections"
		configs "$T/out" compiled | sort -u >"$T/comp"
		cmp -s "$T/comp" "$T/long.$d$c" || fail "d$d $flags: compiled configs != the model's accepted configs"
		total=$((total + n))
	done
done

# 3. The static_assert is live: the same template with a smem_bytes formula 8 B off does not compile.
sed -e "s|file: ../kernel_templates/|file: $FATUNE_SOURCE_DIR/kernel_templates/|" \
	-e 's|^smem_bytes: |smem_bytes: 8 + |' \
	-e 's|^  NUM_CONSUMER_WG: .*|  NUM_CONSUMER_WG: [1]|' -e 's|^  BLOCK_M: .*|  BLOCK_M: [64]|' \
	-e 's|^  BLOCK_N: .*|  BLOCK_N: [64]|' -e 's|^  KV_STAGES: .*|  KV_STAGES: [2]|' \
	-e 's|^  PERSISTENT: .*|  PERSISTENT: [0]|' -e 's|^  Q_IN_REGS: .*|  Q_IN_REGS: [0]|' \
	-e 's|^  PINGPONG: .*|  PINGPONG: [0]|' "$SP" >"$T/off.yaml"
grep -q "^smem_bytes: 8 + " "$T/off.yaml" || fail "could not perturb smem_bytes"
run check --all --arch sm_90 --space "$T/off.yaml" --shape 1x8x512x64 --compile --format json
python3 - "$T/out" <<'PY' || fail "a wrong smem_bytes formula compiled"
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["status"] != "rejected_constraint"]
assert rows and all(r["status"] == "compile_failed" for r in rows), rows
assert all("smem_bytes formula disagrees" in r["reason"] for r in rows), rows[0]["reason"]
PY
echo "ok ($total candidates compiled)"
