#!/usr/bin/env bash
# ncu_decode.sh - hardware counters of fatune's split-KV decode kernels beside the Triton
# split-KV peer's, same shape (issue 17: decode at 1.08-1.20x the best peer on an H200, then
# 0.98x for GQA bshd).
#
#   bench/ncu_decode.sh OUTDIR        (on a GPU machine with ncu; build/fatune built)
#   NCU_CASES="gqa-bshd" bench/ncu_decode.sh OUTDIR     (only the cases named)
#
# For each case: `fatune bench` of a config under ncu (the worker is a child process:
# --target-processes all), then the Triton decode kernels with bench/peers.py's plan. Two
# launches of each program (the main kernel and, when split, its combine kernel) after two
# warm-up launches, clocks left alone (--clock-control none).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: bench/ncu_decode.sh OUTDIR}
mkdir -p "$out"
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy
	--section WarpStateStats --section SchedulerStats --section LaunchStats)
ncu_run() {	# $1 name, $2 kernel regex, rest: the command
	local name=$1 k=$2
	shift 2
	timeout 240 ncu --clock-control none --target-processes all -k "regex:$k" --launch-skip 2 --launch-count 2 \
		"${sections[@]}" "$@" >"$out/ncu-$name.txt" 2>&1
	echo "$name: rc $? $(grep -E 'DRAM Throughput|Achieved Occupancy|Duration' "$out/ncu-$name.txt" | tr -s ' ' | tr '\n' ';')"
}
# case: name, shape, kv-len, layout, space, fatune config, triton splits (0: the peer's own rule)
while read -r -u 3 name shape kv layout space cfg splits; do
	[ -z "$name" ] && continue
	[ -n "${NCU_CASES:-}" ] && [[ " $NCU_CASES " != *" $name "* ]] && continue
	ncu_run "fatune-$name" 'fatune_attention_(fwd|combine)' build/fatune bench --shape "$shape" --kv-heads 8 \
		--kv-len "$kv" --layout "$layout" --space "search_spaces/$space.yaml" --config "$cfg" --samples 5 --launches 1
	IFS=x read -r b h s d <<<"$shape"
	ncu_run "triton-$name" '_decode_(split|combine)_kernel' python3 - <<PY
import sys, torch
sys.path.insert(0, "bench")
import peers
q, k, v = peers.make_inputs($b, $h, $s, $d, h_kv=8, s_kv=$kv, seed=1, layout="$layout")
plan = peers.DecodePlan(q, k, v, False, dict(block_n=64, num_warps=4, num_stages=4), num_splits=$splits or None)
for _ in range(4):
    plan()
torch.cuda.synchronize()
PY
done 3<<'CASES'
b16kv32k 16x32x1x128 32768 bhsd attention NUM_WARPS_PER_BLOCK=1,TILE_M=16,TILE_N=64,KV_STAGES=1,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=2,COMBINE_IN_KERNEL=0,PDL=0 1
b16kv32k-s8 16x32x1x128 32768 bhsd attention NUM_WARPS_PER_BLOCK=1,TILE_M=16,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=8,COMBINE_IN_KERNEL=0,PDL=0 1
b1kv1k 1x32x1x128 1024 bhsd attention NUM_WARPS_PER_BLOCK=1,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=16,COMBINE_IN_KERNEL=0,PDL=1 8
gqa-bshd 2x40x1x128 8192 bshd attention_decode NUM_WARPS_PER_BLOCK=2,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=0,KV_WARPS=1,NUM_SPLITS=8,COMBINE_IN_KERNEL=0,PDL=0 0
CASES
