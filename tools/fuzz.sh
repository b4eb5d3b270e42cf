#!/usr/bin/env bash
# fuzz.sh - runs every libFuzzer target of a FATUNE_FUZZ build for a bounded time each.
# usage: tools/fuzz.sh [BUILD_DIR [SECONDS]]   (default build-fuzz, 50 s per target)
# Each target starts from its committed seeds (tests/fuzz/corpus/<name>/, read only) and
# grows a scratch corpus under BUILD_DIR/fuzz-corpus/<name>. Any crash, leak, timeout
# (an input running over 10 s), a memory blow-up or a broken property fails the run;
# the input that did it is kept as BUILD_DIR/fuzz-artifacts/<name>-crash-* (add it to the
# target's corpus directory: it then runs in ctest as a regression test).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
secs=${2:-50}
mkdir -p "$build/fuzz-artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=1:quarantine_size_mb=64"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
total=0
for bin in "$build"/fuzz_*; do
	[ -x "$bin" ] || continue
	name=${bin##*/fuzz_}
	corpus="$build/fuzz-corpus/$name"
	mkdir -p "$corpus"
	log="$build/fuzz-artifacts/$name.log"
	if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=3072 -print_final_stats=1 \
		-artifact_prefix="$build/fuzz-artifacts/$name-" "$corpus" "tests/fuzz/corpus/$name" >"$log" 2>&1; then
		tail -40 "$log" >&2
		echo "fuzz: $name failed; the input is in $build/fuzz-artifacts/ (log: $log)" >&2
		exit 1
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	edges=$(sed -n 's/^INFO: Loaded 1 modules *(\([0-9]*\) inline 8-bit counters.*/\1/p' "$log" | head -1)
	cov=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -1 | sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\).*/\1 of '"${edges:-?}"' edges (of the code linked in), \2 features/p' || true)
	echo "fuzz: $name: ${execs:-?} runs in ${secs} s, ${cov:-coverage unknown}, $(ls "$corpus" | wc -l) corpus inputs, no failure"
	total=$((total + ${execs:-0}))
done
echo "fuzz: $total runs in all"
