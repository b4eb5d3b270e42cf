#!/usr/bin/env bash
# cold_pairs.sh - issue 16: suite24 from a cold cache on one GPU and on two, alternated in one call,
# so that neither side gets the machine's first campaign (on a fresh machine the first campaign
# compiles slower: 1,259 against 800 ms per compile on the two-GPU H200 of 2026-11-29).
#
#   bench/cold_pairs.sh OUTDIR [DEVICE-SET ...]     default: 0 0,1 0 0,1 (after one warm-up pass;
#                                                   COLD_WARMUP=0 skips it on a machine already warm)
#
# A set may carry options after colons: :off for `--parallel-units off` (one unit at a time on every
# GPU, as before 2026-11-29), :jN for `--jobs N` (compile threads per search), :old for the binary
# $OLD_FATUNE instead of build/fatune (another commit, built beside this one): 0,1:off 0,1 0,1:off 0,1
# compares the first two on two GPUs, 0,1 0,1:old 0,1 0,1:old two builds.
#
# Each pass: an empty CUBIN cache and a fresh database, `fatune search --campaign
# bench/campaigns/suite24.yaml --strategy transfer --devices SET --json`; the summary (wall,
# compiles, ms per compile, GPU busy and waiting, evaluated) goes to OUTDIR/cold-pairs.txt, the
# JSON lines to OUTDIR/cold-N.json. Needs build/fatune and a GPU; LD_LIBRARY_PATH as
# tools/device-session.sh sets it.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: bench/cold_pairs.sh OUTDIR [DEVICE-SET ...]}
shift
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(0 0,1 0 0,1)
mkdir -p "$out"
export FATUNE_CACHE_DIR=${FATUNE_CACHE_DIR:-$PWD/build/cache}
pass() {	# $1 name, $2 device set[:off][:jN][:old]
	local units=on bin=build/fatune devs=${2%%:*} opt jobs=()
	IFS=: read -ra opts <<<"${2#"$devs"}"
	for opt in "${opts[@]}"; do
		case $opt in
		off) units=off ;;
		j[0-9]*) jobs=(--jobs "${opt#j}") ;;
		old) bin=${OLD_FATUNE:?:old needs OLD_FATUNE} ;;
		'') ;;
		*) echo "cold_pairs.sh: unknown option '$opt' in '$2'" >&2; exit 2 ;;
		esac
	done
	rm -rf "$FATUNE_CACHE_DIR" /tmp/fatune-cold-"$1".db*
	/usr/bin/time -f "%e" -o "$out/cold-$1.time" "$bin" search --campaign bench/campaigns/suite24.yaml \
		--devices "$devs" --parallel-units $units "${jobs[@]}" --strategy transfer --db /tmp/fatune-cold-"$1".db --json --quiet \
		>"$out/cold-$1.json" 2>"$out/cold-$1.err"
	python3 - "$out/cold-$1.json" "$1" "$2" "$(cat "$out/cold-$1.time")" <<'PY' | tee -a "$out/cold-pairs.txt"
import json, sys
c = pf = cms = busy = wait = ev = 0
for line in open(sys.argv[1]):
    r = json.loads(line) if line.startswith("{") else {}
    if "compiles" in r:
        c += r["compiles"]; pf += r["prefetch_compiles"]; cms += r["compile_ms_total"]
        busy += r["phases"]["gpu_busy_ms"]; wait += r["phases"]["gpu_wait_ms"]; ev += r["evaluated"]
    if "units_in_campaign" in r:
        wall = r["wall_s"]
print(f"pass {sys.argv[2]:<7} GPUs {sys.argv[3]:<4} wall {float(sys.argv[4]):6.1f} s (campaign {wall:5.1f} s)  "
      f"compiles {c} + {pf} ahead, {cms / max(c + pf, 1):5.0f} ms each  GPU busy {busy / 1e3:5.1f} s  "
      f"waiting {wait / 1e3:5.1f} s  evaluated {ev}")
PY
}
[ "${COLD_WARMUP:-1}" = 0 ] || pass warmup 0	# COLD_WARMUP=0: the machine is warm already
i=0
for s in "${sets[@]}"; do
	i=$((i + 1))
	pass "$i" "$s"
done
