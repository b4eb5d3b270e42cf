#!/usr/bin/env bash
# run.sh - the main job from a fresh clone: install dependencies, build build/fatune,
# and tune the mission shape 1x8x512x64 (fp16). With a GPU it searches for that GPU's
# arch and times every candidate; without one it runs and stores the no-GPU part
# (feasibility and NVRTC compile) for sm_89 and says so. Extra arguments go to search.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "built build/fatune ($(build/fatune --version))"
if build/fatune devices >/dev/null 2>&1; then
	build/fatune devices
	exec build/fatune search --shape 1x8x512x64 "$@"
else
	echo "no GPU here ($(build/fatune devices 2>&1 | head -1 | sed 's/^fatune: error: //')): running the no-GPU part for sm_89"
	exec build/fatune search --arch sm_89 --shape 1x8x512x64 "$@"
fi
