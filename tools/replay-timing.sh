#!/usr/bin/env bash
# replay-timing.sh - the CPU side of a search, without a GPU (docs/timing.md "The CPU side"):
# the recorded H100 campaign replayed for the mission shape (each space, race on, fresh
# database) and for hopper.yaml with transfer, each run REPS times; prints the median wall
# and the median time before the first candidate was sent on (the GPU's idle start).
# usage: tools/replay-timing.sh [build/fatune]   (REPS=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
F=${1:-build/fatune}
REPS=${REPS:-3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
sqlite3 "$T/rec.db" <tests/data/recorded_h100_campaign.sql
med() { python3 -c 'import statistics,sys; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.3f}")' "$@"; }
measure() {
	local name=$1; shift
	local walls=() sends=()
	for i in $(seq "$REPS"); do
		rm -f "$T/o.db"*
		local t0 t1
		t0=$(date +%s.%N)
		"$F" search --replay "$T/rec.db" --arch sm_90 --db "$T/o.db" --quiet --json "$@" >"$T/out"
		t1=$(date +%s.%N)
		walls+=("$(python3 -c "print($t1 - $t0)")")
		sends+=("$(python3 -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(sum(r["phases"].get("first_send_ms",0) for r in rows if "phases" in r)/1e3)' "$T/out")")
	done
	printf '%-44s wall %s s  before first send %s s\n' "$name" "$(med "${walls[@]}")" "$(med "${sends[@]}")"
}
measure "mission 1x8x512x64 attention" --space search_spaces/attention.yaml --shape 1x8x512x64
measure "mission 1x8x512x64 attention_sm90" --space search_spaces/attention_sm90.yaml --shape 1x8x512x64
measure "hopper.yaml attention, transfer" --space search_spaces/attention.yaml \
	--campaign bench/campaigns/hopper.yaml --strategy transfer
