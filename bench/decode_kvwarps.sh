#!/usr/bin/env bash
# decode_kvwarps.sh - issue 17: the KV_WARPS decode space (search_spaces/attention_decode.yaml) on a GPU.
#
#   bench/decode_kvwarps.sh OUTDIR        (on a GPU machine; build/fatune built)
#
# For each decode shape: a search of attention_decode.yaml (every candidate verified against the GPU fp32
# reference: a wrong merge of the warps is a wrong_result) and, in the same process order, `fatune bench`
# of its best beside the best config attention.yaml found for the shape (given below, from the serving
# campaign of 2026-11-29 on an H200). Then compute-sanitizer memcheck and racecheck on one small KV_WARPS
# config through fatune bench (the worker's own launches).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/decode_kvwarps.sh OUTDIR}
mkdir -p "$out"
F=build/fatune
db=/tmp/fatune-kvwarps.db
rm -f "$db"*
while read -r -u 3 shape kv extra mma; do
	[ -z "$shape" ] && continue
	[ "$extra" = - ] && extra="" || extra=${extra//_/ }
	args=(--shape "$shape" --kv-heads 8 --kv-len "$kv" $extra)
	timeout 120 $F search "${args[@]}" --space search_spaces/attention_decode.yaml --db "$db" --json --quiet \
		>>"$out/kvwarps-search.json" 2>>"$out/kvwarps-search.err"
	echo "search $shape kv $kv $extra: rc $?"
	for round in 1 2; do
		$F bench "${args[@]}" --space search_spaces/attention_decode.yaml --best --db "$db" --json 2>&1 |
			python3 -c 'import json,sys; d=json.load(sys.stdin); print("  kv_warps", d["t_median_us"], d["status"], d["config"])' 2>&1
		[ "$mma" = - ] || $F bench "${args[@]}" --space search_spaces/attention.yaml --config "$mma" --json 2>&1 |
			python3 -c 'import json,sys; d=json.load(sys.stdin); print("  mma     ", d["t_median_us"], d["status"], d["config"])' 2>&1
	done
done 3<<'CASES' | tee "$out/kvwarps.txt"
16x32x1x128 32768 - NUM_WARPS_PER_BLOCK=1,TILE_M=16,TILE_N=64,KV_STAGES=1,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=2,COMBINE_IN_KERNEL=0,PDL=0
1x32x1x128 1024 - NUM_WARPS_PER_BLOCK=1,TILE_M=16,TILE_N=64,KV_STAGES=1,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=16,COMBINE_IN_KERNEL=0,PDL=1
1x32x1x128 8192 - NUM_WARPS_PER_BLOCK=1,TILE_M=16,TILE_N=128,KV_STAGES=1,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=32,COMBINE_IN_KERNEL=0,PDL=1
1x32x4x64 4096 --causal_--dtype_bf16_--layout_bshd -
CASES
python3 - "$out/kvwarps-search.json" <<'PY' | tee -a "$out/kvwarps.txt"
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        print(r.get("shape"), "statuses", r.get("status"), "best", r.get("best", {}).get("t_median_us"))
PY
small=(--shape 1x32x1x128 --kv-heads 8 --kv-len 1024 --space search_spaces/attention_decode.yaml --samples 5 --launches 1
	--config NUM_WARPS_PER_BLOCK=4,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,KV_WARPS=1,NUM_SPLITS=2,COMBINE_IN_KERNEL=1,PDL=0)
for tool in memcheck racecheck; do
	timeout 90 compute-sanitizer --tool $tool --target-processes all $F bench "${small[@]}" >"$out/sanitizer-$tool.txt" 2>&1
	echo "compute-sanitizer $tool: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.txt" | tr '\n' ' ')" |
		tee -a "$out/kvwarps.txt"
done
