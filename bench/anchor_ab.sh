#!/usr/bin/env bash
# anchor_ab.sh - issue 16: the race's anchor (search/race.h, FT_RACE_ANCHOR_MS) on and off, suite24
# warm, each against one exhaustive pass in the same call. The anchor is off by default for now: the
# passes set FATUNE_RACE_ANCHOR_MS to 0 (off) or ANCHOR_MS (on; default 250). Its first run
# (2026-11-29) set it empty for the passes meant to be on, which then read as 0: both sides were off.
#
#   bench/anchor_ab.sh OUTDIR [DEVICES]        DEVICES: 0,1 (default) or 0
#
# A cold pass fills the CUBIN cache and a warm one compiles what it left; then suite24 warm with
# FATUNE_RACE_ANCHOR_MS=0 (no anchor) and =ANCHOR_MS, alternated (off on off on when
# ANCHOR_PASSES=4, else off on), `--strategy transfer`, a fresh database each; then
# `--strategy exhaustive` once. Quality per pass: bench/quality.py (every unit's best against the
# exhaustive best, timed interleaved in one worker where they differ), as throughput-quality does.
# Summary in OUTDIR/anchor-ab.txt. Needs build/fatune, GPUs, LD_LIBRARY_PATH as device-session sets.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: bench/anchor_ab.sh OUTDIR [DEVICES]}
dev=${2:-0,1}
mkdir -p "$out"
export FATUNE_CACHE_DIR=${FATUNE_CACHE_DIR:-$PWD/build/cache}
rm -rf "$FATUNE_CACHE_DIR" /tmp/fatune-ab-*.db*
pass() {	# $1 name, $2 anchor period in ms (0: off), $3... search options
	local name=$1 ms=$2
	shift 2
	FATUNE_RACE_ANCHOR_MS=$ms /usr/bin/time -f "%e" -o "$out/ab-$name.time" build/fatune search \
		--campaign bench/campaigns/suite24.yaml --devices "$dev" "$@" --db /tmp/fatune-ab-"$name".db \
		--json --quiet >"$out/ab-$name.json" 2>"$out/ab-$name.err"
	echo "pass $name (anchor ms $ms): $(cat "$out/ab-$name.time") s wall" | tee -a "$out/anchor-ab.txt"
}
pass cold 0 --strategy transfer
pass warm 0 --strategy transfer
passes=(off on)
[ "${ANCHOR_PASSES:-2}" = 4 ] && passes=(off on off2 on2)
for p in "${passes[@]}"; do
	ms=${ANCHOR_MS:-250}
	[[ $p == off* ]] && ms=0
	pass "$p" "$ms" --strategy transfer
done
pass exhaustive 0 --strategy exhaustive
for p in "${passes[@]}"; do
	echo "== $p: anchors $(python3 -c 'import json,sys; print(sum(json.loads(l)["race"]["anchors"] for l in open(sys.argv[1]) if l.startswith("{") and "race" in l))' "$out/ab-$p.json")" |
		tee -a "$out/anchor-ab.txt"
	python3 bench/quality.py "$out/ab-$p.json" "$out/ab-exhaustive.json" /tmp/fatune-ab-"$p".db \
		/tmp/fatune-ab-exhaustive.db --gpu "${dev%%,*}" | tee -a "$out/anchor-ab.txt"
done
