#!/usr/bin/env bash
# device-session.sh - everything one GPU-machine call does, logs under $OUT.
#
#   tools/device-session.sh [step ...]     steps: build gpu-tests mission retune suite compare all
#
# Builds against the carried .deps (tools/fetch-deps.sh), runs the GPU-labelled
# ctest tests, the mission search, and bench/compare_torch.py. Meant for the
# project's lent GPU machine; works on any Linux box with a GPU and .deps.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
export FATUNE_DB="$OUT/fatune.db" FATUNE_CACHE_DIR="$PWD/build/cache"
steps="${*:-all}"
has() { [[ " $steps " == *" $1 "* || " $steps " == *" all "* ]]; }
F=build/fatune

if has build; then
	nvidia-smi -L | tee "$OUT/gpu.txt"
	tools/device-build.sh 2>&1 | tee "$OUT/build.log" || exit 1
	$F devices | tee -a "$OUT/gpu.txt"
fi
if has gpu-tests; then
	(cd build && ctest -L gpu --output-on-failure --timeout 600) 2>&1 | tee "$OUT/ctest-gpu.log"
fi
if has mission; then
	for c in "" "--causal"; do
		/usr/bin/time -v $F search --shape 1x8x512x64 $c --json 2>"$OUT/mission$c.err" |
			tee -a "$OUT/mission.json"
		tail -3 "$OUT/mission$c.err"
	done
fi
if has retune; then
	# a new sequence length with a warm cache: nothing to compile
	$F search --shape 1x8x512x64 --quiet --json >/dev/null 2>&1
	/usr/bin/time -f "retune wall %e s" $F search --shape 1x8x1024x64 --quiet --json 2>&1 | tee "$OUT/retune.txt"
fi
if has suite; then
	# the 10 shapes of docs/perf.md, smallest first, each causal and not
	for s in 1x8x512x64 16x16x256x64 1x8x2048x64 2x8x2048x128 4x16x2048x64 8x16x1024x128 \
		2x16x4096x64 1x8x8192x64 4x16x2048x128 1x32x8192x128; do
		for c in "" "--causal"; do
			$F search --shape $s $c --json --quiet 2>>"$OUT/suite.err" | tee -a "$OUT/suite.json"
		done
	done
fi
if has compare; then
	python3 bench/compare_torch.py --db "$FATUNE_DB" --all --json "$OUT/compare.json" 2>&1 | tee "$OUT/compare.txt"
fi
