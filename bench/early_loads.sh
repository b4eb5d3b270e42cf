#!/usr/bin/env bash
# early_loads.sh - issue 17, the prologue of a short call: the copies of Q and K_0 issued by the
# thread that initialises the mbarriers, before the block's barrier and setmaxnreg (EARLY_LOADS=1
# in kernel_templates/attention_sm90.cu), against after them (0), on the GPU.
#
#   bench/early_loads.sh OUTDIR        (on a GPU machine; build/fatune built)
#
# A copy of search_spaces/attention_sm90.yaml with EARLY_LOADS: [0, 1] as a parameter (the shipped
# space leaves it to the template's default) lets `fatune bench` time both forms of each config
# interleaved in one worker, every sample verified against the fp32 reference first. Per shape: the
# H200 suite's best config (tests/data/h200_suite24_best.sql), both forms, twice. Then the fixed
# cost: the mission shape's config at 1 to 16 KV tiles (S_q 512), both forms (the time at 0 tiles,
# by a least-squares line, is what a call costs beside its KV loop). Then compute-sanitizer
# memcheck and racecheck on both forms of a small config.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/early_loads.sh OUTDIR}
mkdir -p "$out"
F=build/fatune
space=search_spaces/ab-early.yaml
sed 's/^name: attention_sm90$/name: attention_sm90_early_loads/; s/^  PDL: \[0, 1\]$/  PDL: [0, 1]\n  EARLY_LOADS: [0, 1]/' \
	search_spaces/attention_sm90.yaml >"$space"
trap 'rm -f "$space"' EXIT
grep -q '^  EARLY_LOADS: \[0, 1\]$' "$space" || { echo "early_loads.sh: the space copy has no EARLY_LOADS" >&2; exit 1; }
pair() {	# shape-args... -- config: both forms, interleaved, one JSON line each
	local args=() cfg
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	cfg=$2
	$F bench "${args[@]}" --arch sm_90 --space "$space" --config "$cfg,EARLY_LOADS=0" --config "$cfg,EARLY_LOADS=1" \
		--samples 60 --rounds 10 --json
}
report() {
	python3 -c '
import json, sys
rows = {}
for l in sys.stdin:
    if l.startswith("{"):
        r = json.loads(l)
        rows[r["config"].rsplit("=", 1)[1]] = r
if len(rows) == 2:
    off, on = rows["0"]["t_median_us"], rows["1"]["t_median_us"]
    print("%-28s off %9.3f us  on %9.3f us  on/off %.4f  %s/%s"
          % (sys.argv[1], off, on, on / off, rows["0"]["status"], rows["1"]["status"]))
else:
    print(sys.argv[1], "no pair:", rows)' "$1"
}
while read -r -u 3 shape causal cfg; do
	[ -z "$shape" ] && continue
	extra=()
	[ "$causal" = 1 ] && extra=(--causal)
	for round in 1 2; do
		pair --shape "$shape" "${extra[@]}" -- "$cfg" 2>>"$out/early-loads.err" | report "$shape c$causal ($round)"
	done
done 3<<'CASES' | tee "$out/early-loads.txt"
1x8x512x64 0 NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=128,KV_STAGES=3,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
1x8x512x64 1 NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
16x16x256x64 1 NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=64,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
1x8x2048x64 0 NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=1,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
1x16x1024x128 0 NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
2x8x2048x128 1 NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2,TILE_ORDER=1,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
4x16x2048x128 0 NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
CASES
# the fixed cost: the mission config at 1, 2, 4, 8, 16 KV tiles of 128 keys
mission=NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=128,KV_STAGES=3,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0
for kv in 128 256 512 1024 2048; do
	pair --shape 1x8x512x64 --kv-len "$kv" -- "$mission" 2>>"$out/early-loads.err" | report "1x8x512x64 kv $kv"
done | tee "$out/early-loads-fixed.txt"
python3 - "$out/early-loads-fixed.txt" <<'PY' | tee -a "$out/early-loads-fixed.txt"
import re, sys
pts = [(int(m[0]) // 128, float(m[1]), float(m[2])) for m in
       re.findall(r"kv (\d+)\s+off\s+([\d.]+) us\s+on\s+([\d.]+)", open(sys.argv[1]).read())]
for k, name in ((1, "off"), (2, "on")):
    xs, ys = [p[0] for p in pts], [p[k] for p in pts]
    if len(xs) < 2:
        break
    n, mx, my = len(xs), sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"{name}: {my - b * mx:.3f} us at 0 KV tiles, {b:.3f} us per 128-key tile (least squares, {n} points)")
PY
small=(--shape 1x2x300x64 --arch sm_90 --space "$space" --samples 5 --launches 1)
for early in 0 1; do
	for tool in memcheck racecheck; do
		cfg="NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0,EARLY_LOADS=$early"
		timeout 120 compute-sanitizer --tool $tool --target-processes all $F bench "${small[@]}" --config "$cfg" \
			>"$out/sanitizer-early$early-$tool.txt" 2>&1
		echo "compute-sanitizer $tool EARLY_LOADS=$early: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' \
			"$out/sanitizer-early$early-$tool.txt" | tr '\n' ' ')" | tee -a "$out/early-loads.txt"
	done
done
