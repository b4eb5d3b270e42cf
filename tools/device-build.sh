#!/usr/bin/env bash
# device-build.sh - configures and builds fatune on the GPU machine against .deps/
# (see tools/fetch-deps.sh). Prints the line to source for the run-time library path.
set -euo pipefail
cd "$(dirname "$0")/.."
D="$PWD/.deps/root/usr"
[ -d "$D" ] || { echo "device-build: no .deps/: run tools/fetch-deps.sh here and carry .deps" >&2; exit 2; }
export LD_LIBRARY_PATH="$D/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cmake -S . -B build -DCMAKE_PREFIX_PATH="$D" -DCMAKE_BUILD_TYPE=Release -DFATUNE_WERROR=ON >build-config.log 2>&1 ||
	{ cat build-config.log; exit 1; }
cmake --build build -j"$(nproc)" >build.log 2>&1 || { grep -B2 -A6 -m5 "error" build.log; exit 1; }
tail -1 build.log
