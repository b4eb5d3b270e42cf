#!/usr/bin/env bash
# ncu_prefill.sh - where a Hopper prefill kernel's cycles go (issue 17: the D 64 shapes at 1.02-1.05x
# cuDNN, 4x16x2048x128 at 634 of the 640 TFLOP/s asked).
#
#   bench/ncu_prefill.sh OUTDIR       (on a GPU machine with ncu; build/fatune built)
#   NCU_CASES="d64" bench/ncu_prefill.sh OUTDIR      (only the cases named)
#
# For each case: the shape searched in the Hopper space alone (a fresh database under /tmp), then
# its best config under ncu through `fatune bench --best` (the worker is a child process:
# --target-processes all; one launch after three, clocks left alone). Written to OUTDIR:
#   ncu-NAME.txt        the search's last line, the best config, the sections (speed of light,
#                       pipes, issue, warp states) and the pipes' utilisation metrics (the tensor
#                       pipe's is the sections' "highest-utilized pipeline" line: the H200 image's
#                       ncu answered n/a for sm__pipe_tensor_op_gmma_cycles_active)
#   ncu-NAME-sass.csv.gz  per SASS instruction: executed count and the warp-stall samples by reason
#                       (PC sampling, SourceCounters), to find where the warps wait
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: bench/ncu_prefill.sh OUTDIR}
mkdir -p "$out"
F=build/fatune
metrics=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second
# case: name, shape, search options
while read -r -u 3 name shape opts; do
	[ -z "$name" ] && continue
	[ -n "${NCU_CASES:-}" ] && [[ " $NCU_CASES " != *" $name "* ]] && continue
	db=/tmp/ncu-prefill-$name.db
	# shellcheck disable=SC2086
	timeout 200 $F search --shape "$shape" $opts --space search_spaces/attention_sm90.yaml --db "$db" \
		--quiet >"$out/ncu-$name.txt" 2>&1
	echo "$name: search rc $? $(tail -1 "$out/ncu-$name.txt")"
	# shellcheck disable=SC2086
	$F query --best --shape "$shape" $opts --db "$db" --format csv 2>&1 | tail -1 | tee -a "$out/ncu-$name.txt"
	rep=/tmp/ncu-prefill-$name
	# shellcheck disable=SC2086
	timeout 300 ncu --clock-control none --target-processes all -k regex:fatune_sm90_fwd --launch-skip 3 \
		--launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats \
		--section WarpStateStats --section SchedulerStats --section Occupancy --section SourceCounters \
		--metrics "$metrics" -f -o "$rep" \
		$F bench --best --shape "$shape" $opts --db "$db" --samples 5 --launches 1 >>"$out/ncu-$name.txt" 2>&1
	echo "$name: ncu rc $?"
	ncu -i "$rep.ncu-rep" --page details >>"$out/ncu-$name.txt" 2>&1
	ncu -i "$rep.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip >"$out/ncu-$name-sass.csv.gz"
	grep -E 'highest-utilized|pipe_xu|pipe_fma|pipe_alu|inst_issued|Duration|SM Frequency|Issue Slots Busy' "$out/ncu-$name.txt" |
		tr -s ' ' | sed 's/^/  /'
done 3<<'CASES'
d64 2x32x2048x64 --dtype bf16
d128 4x16x2048x128
d64c 2x32x2048x64 --dtype bf16 --causal
CASES
