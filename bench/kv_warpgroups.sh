#!/usr/bin/env bash
# kv_warpgroups.sh - issue 17, small grids: the two consumer warpgroups of a block splitting its KV
# tiles (KV_WARPGROUPS=2 in kernel_templates/attention_sm90.cu) against the space without it, on the GPU.
#
#   bench/kv_warpgroups.sh OUTDIR        (on a GPU machine; build/fatune built)
#
# Per shape (grids of at most 132 blocks of 64 rows, where the parameter is in the space): two
# exhaustive searches, of a copy of search_spaces/attention_sm90.yaml with KV_WARPGROUPS [1] (the
# space before) and one with [2] (only the new form), then `fatune bench` of the two bests
# interleaved in one worker (60 samples over 10 rounds, every config verified), twice. The table
# (OUTDIR/kv-warpgroups.txt) gives both bests, new/old and the configs.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/kv_warpgroups.sh OUTDIR}
mkdir -p "$out"
F=${FATUNE:-build/fatune}
db=/tmp/fatune-kvwg.db
rm -f "$db"*
for k in 1 2; do
	sed "s/^name: attention_sm90\$/name: attention_sm90_kvwg$k/; s/^  KV_WARPGROUPS: \[1, 2\]\$/  KV_WARPGROUPS: [$k]/" \
		search_spaces/attention_sm90.yaml >"search_spaces/ab-kvwg$k.yaml"
	grep -q "^  KV_WARPGROUPS: \[$k\]\$" "search_spaces/ab-kvwg$k.yaml" ||
		{ echo "kv_warpgroups.sh: the space copy has no KV_WARPGROUPS [$k]" >&2; exit 1; }
done
trap 'rm -f search_spaces/ab-kvwg1.yaml search_spaces/ab-kvwg2.yaml' EXIT
best() {	# the best config of space $1 for the shape args that follow, from the search's JSON
	local sp=$1
	shift
	$F search --arch sm_90 "$@" --space "search_spaces/ab-kvwg$sp.yaml" --strategy exhaustive --db "$db" \
		--quiet --json 2>>"$out/kv-warpgroups.err" |
		python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); b=r.get("best") or {}; print(b.get("config", ""), b.get("t_median_us", ""))'
}
while read -r -u 3 shape causal; do
	[ -z "$shape" ] && continue
	args=(--shape "$shape")
	[ "$causal" = 1 ] && args+=(--causal)
	read -r c1 t1 <<<"$(best 1 "${args[@]}")"
	read -r c2 t2 <<<"$(best 2 "${args[@]}")"
	echo "$shape c$causal search: old $t1 us ($c1), new $t2 us ($c2)"
	[ -n "$c1" ] && [ -n "$c2" ] || continue
	for round in 1 2; do
		$F bench --arch sm_90 "${args[@]}" --space search_spaces/attention_sm90.yaml --config "$c1" --config "$c2" \
			--samples 60 --rounds 10 --json 2>>"$out/kv-warpgroups.err" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
if len(rows) == 2:
    a, b = rows
    print("  bench %s: old %.3f us (%s), new %.3f us (%s), new/old %.4f"
          % (sys.argv[1], a["t_median_us"], a["status"], b["t_median_us"], b["status"], b["t_median_us"] / a["t_median_us"]))
else:
    print("  bench %s: no pair: %s" % (sys.argv[1], rows))' "$round"
	done
done 3<<'CASES' | tee "$out/kv-warpgroups.txt"
1x8x512x64 0
1x8x512x64 1
1x8x1024x64 0
1x16x512x128 0
1x4x2048x128 0
2x8x256x128 1
1x4x512x256 0
CASES
