#!/usr/bin/env bash
# pdl_trigger.sh - where the split blocks release the combine kernel (issue 17, decode): PDL 0 (a plain
# launch after the main grid), 1 (programmatic dependent launch released after each block's stores) and
# 2 (released as each block starts, so the combine's blocks wait resident for the grid's end), timed
# interleaved in one worker (`fatune bench`, every config verified) on decode steps; then the GQA step
# searched in the default spaces and its best against the peers (bench/compare_torch.py).
#
#   bench/pdl_trigger.sh OUTDIR       (on a GPU machine; build/fatune built; torch and triton for the peers)
#   PDL_SEARCH=0 bench/pdl_trigger.sh OUTDIR      (the timings only)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: bench/pdl_trigger.sh OUTDIR}
mkdir -p "$out"
F=build/fatune
db=/tmp/fatune-pdl.db
rm -f "$db"*
# case: shape options | a config without PDL
while IFS='|' read -r -u 3 shape cfg; do
	[ -z "$shape" ] && continue
	echo "== $shape"
	# shellcheck disable=SC2086
	$F bench $shape --space search_spaces/attention_decode.yaml --config "$cfg,PDL=0" --config "$cfg,PDL=1" \
		--config "$cfg,PDL=2" --samples 60 --rounds 6 --db "$db"
done 3<<'CASES' 2>&1 | tee "$out/pdl-bench.txt"
--shape 2x40x1x128 --kv-heads 8 --kv-len 8192 --layout bshd|NUM_WARPS_PER_BLOCK=2,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=0,KV_WARPS=1,NUM_SPLITS=8,COMBINE_IN_KERNEL=0
--shape 2x40x1x128 --kv-heads 8 --kv-len 8192 --layout bshd|NUM_WARPS_PER_BLOCK=2,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=0,KV_WARPS=1,NUM_SPLITS=16,COMBINE_IN_KERNEL=0
--shape 1x32x1x128 --kv-heads 8 --kv-len 1024|NUM_WARPS_PER_BLOCK=4,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,KV_WARPS=1,NUM_SPLITS=4,COMBINE_IN_KERNEL=0
--shape 1x32x1x128 --kv-heads 8 --kv-len 8192|NUM_WARPS_PER_BLOCK=4,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,KV_WARPS=1,NUM_SPLITS=16,COMBINE_IN_KERNEL=0
--shape 4x32x1x128 --kv-heads 8 --kv-len 4096|NUM_WARPS_PER_BLOCK=2,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,KV_WARPS=1,NUM_SPLITS=8,COMBINE_IN_KERNEL=0
CASES
[ "${PDL_SEARCH:-1}" = 1 ] || exit 0
echo "== search: 2x40x1x128 kv8 8192 bshd, default spaces, exhaustive" | tee -a "$out/pdl-bench.txt"
/usr/bin/time -f "search wall %e s" $F search --shape 2x40x1x128 --kv-heads 8 --kv-len 8192 --layout bshd \
	--strategy exhaustive --db "$db" --quiet 2>&1 | tail -3 | tee -a "$out/pdl-bench.txt"
$F query --db "$db" --best 2>&1 | tee -a "$out/pdl-bench.txt"
timeout 300 python3 bench/compare_torch.py --db "$db" --all 2>"$out/pdl-compare.err" | tee "$out/pdl-compare.txt"
tail -3 "$out/pdl-compare.err"
