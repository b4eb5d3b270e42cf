#!/usr/bin/env bash
# test.sh - the whole test suite from a fresh clone: install dependencies, build with
# warnings as errors, run every test through ctest, then build again with
# AddressSanitizer + UndefinedBehaviorSanitizer and run the suite there (less the
# tests labelled slow, which only repeat NVRTC work). GPU tests (label gpu) skip
# where no GPU is present. Extra arguments go to both ctest runs (e.g. -L unit).
# Last, the libFuzzer targets (clang) run FATUNE_FUZZ_SECONDS each (default 50, 0: skip).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
jobs=$(nproc)
cmake -S . -B build -DFATUNE_WERROR=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
ctest --test-dir build --output-on-failure -j"$jobs" "$@"
cmake -S . -B build-asan -DFATUNE_WERROR=ON -DFATUNE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
# NVRTC is not built with ASan: its own one-time allocations are not ours to fix
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE slow "$@"
# libFuzzer: the parsers and DB open on arbitrary bytes (tests/fuzz, docs/testing.md)
if [ "${FATUNE_FUZZ_SECONDS:-50}" != 0 ]; then
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DFATUNE_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build build-fuzz -j"$jobs" --target fuzzers >/dev/null
	tools/fuzz.sh build-fuzz "${FATUNE_FUZZ_SECONDS:-50}"
fi
