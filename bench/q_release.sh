#!/usr/bin/env bash
# q_release.sh - issue 17, the wrong result of 2026-11-29 (docs/kernel_sm90.md): a persistent grid
# with Q in registers released the Q area right after its ldmatrix, and the producer's TMA of the
# next tile's Q could land before those reads. Before and after the fix, on a GPU machine with
# build/fatune built:
#
#   OLD=DIR bench/q_release.sh OUTDIR      DIR holds kernel_templates/ and search_spaces/ of the
#                                          tree before the fix (git archive of its commit)
#
# 1. correctness: the config that failed and its TILE_ORDER 1 twin, 2x32x2048x64 bf16 causal,
#    ROUNDS x REPS checked runs each (bench/sm90_check.py stress; fresh inputs per round, every
#    second run after a burst of launches), before and after;
# 2. time: fatune bench of persistent Q-in-registers configs with the template before and after,
#    alternated (old, new, old, new), 60 samples over 10 rounds each.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: OLD=DIR bench/q_release.sh OUTDIR}
old=${OLD:?set OLD to the tree before the fix}
mkdir -p "$out"
F=build/fatune
B=build/qrel
mkdir -p $B/new/search_spaces
ln -sfn "$PWD/kernel_templates" $B/new/kernel_templates
cp search_spaces/attention_sm90.yaml $B/new/search_spaces/
stress_space() {	# tree -> a copy of its Hopper space with causal TILE_ORDER 0 persistent walks
	sed '/persistent_causal_heaviest_first:/d' "$1/search_spaces/attention_sm90.yaml" >"$1/search_spaces/stress.yaml"
	echo "$1/search_spaces/stress.yaml"
}
where="PERSISTENT == 1 AND Q_IN_REGS == 1 AND NUM_CONSUMER_WG == 1 AND BLOCK_N == 128 AND KV_STAGES == 2"
where+=" AND INTRA_WG_OVERLAP == 1 AND PDL == 0"
for v in old new; do
	tree=$([[ $v == old ]] && echo "$old" || echo $B/new)
	sp=$(stress_space "$tree")
	python3 bench/sm90_check.py build --space "$sp" --out $B/$v --dims 64 --causal 1 --dtype bf16 --where "$where" \
		--no-sass 2>&1 | tail -1
	python3 bench/sm90_check.py stress --space "$sp" --build $B/$v --shape 2x32x2048x64 --causal 1 \
		--rounds "${ROUNDS:-10}" --reps "${REPS:-60}" --verbose 2>&1 | tee "$out/q_release-stress-$v.txt"
done
# time: the shipped space's configs (the template is the space's: old or new tree)
C1="NUM_CONSUMER_WG=1,BLOCK_M=64,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=1,NUM_SPLITS=1,PDL=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
C2="NUM_CONSUMER_WG=2,BLOCK_M=128,KV_STAGES=2,PERSISTENT=1,Q_IN_REGS=1,NUM_SPLITS=1,PDL=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
cases=(
	"--shape 2x32x2048x64 --dtype bf16 --causal|$C1,BLOCK_N=128,INTRA_WG_OVERLAP=1,TILE_ORDER=1"
	"--shape 16x16x512x64 --causal|$C1,BLOCK_N=128,INTRA_WG_OVERLAP=1,TILE_ORDER=1"
	"--shape 16x16x512x64|$C2,BLOCK_N=128,PINGPONG=1,INTRA_WG_OVERLAP=1,TILE_ORDER=0"
	"--shape 1x8x8192x64|$C2,BLOCK_N=176,PINGPONG=1,INTRA_WG_OVERLAP=2,TILE_ORDER=0"
)
for c in "${cases[@]}"; do
	IFS='|' read -r args cfg <<<"$c"
	for v in old new old new; do
		tree=$([[ $v == old ]] && echo "$old" || echo .)
		# shellcheck disable=SC2086
		$F bench --arch sm_90 $args --space "$tree/search_spaces/attention_sm90.yaml" --config "$cfg" \
			--samples 60 --rounds 10 --db /tmp/fatune-qrel.db --json 2>>"$out/q_release-bench.err" |
			python3 -c '
import json, sys
for l in sys.stdin:
    if l.startswith("{"):
        r = json.loads(l)
        print("%-3s %-40s %10s us  %s  %s" % (sys.argv[1], sys.argv[2], r.get("t_median_us"), r["status"], r["config"]))' "$v" "$args"
	done
done | tee "$out/q_release-bench.txt"
