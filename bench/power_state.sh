#!/usr/bin/env bash
# power_state.sh - issue 16's quality: the GPU's clocks and power while fatune times a heavy shape,
# sustained (`fatune bench`, back to back) and within a search (gaps between candidates), so that a
# ranking that differs between the two can be put down to the clocks they ran at.
#
#   bench/power_state.sh OUTDIR [BEST_DB] [SHAPE]     (on a GPU machine; build/fatune built)
#
# nvidia-smi samples GPU 0 every 50 ms (SM clock, power draw and limit, temperature, the clock
# event reasons: 0x4 is the software power cap) into OUTDIR/smi.csv, with the start and end of each
# part in OUTDIR/marks.txt (Unix seconds). Parts: 2 s idle; `fatune bench` of BEST_DB's best for
# SHAPE (200 samples over 20 rounds; default: the best a search of SHAPE stores first); 2 s idle;
# a `--strategy transfer` search of SHAPE in the Hopper space (a new database under OUTDIR). The
# table (OUTDIR/clocks.txt) shows every third sample with its part. SHAPE defaults to
# 1x32x8192x128, the suite's heaviest unit.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${1:?usage: bench/power_state.sh OUTDIR [BEST_DB] [SHAPE]}
mkdir -p "$out"
F=build/fatune
shape=${3:-1x32x8192x128}
db=${2:-}
if [ -z "$db" ]; then
	db=$out/power-best.db
	$F search --shape "$shape" --devices 0 --space search_spaces/attention_sm90.yaml --strategy transfer \
		--db "$db" --quiet >/dev/null 2>&1 || { echo "power_state.sh: the first search failed" >&2; exit 1; }
	sleep 5
fi
nvidia-smi -i 0 -lms 50 --format=csv --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
	>"$out/smi.csv" 2>&1 &
smi=$!
trap 'kill $smi 2>/dev/null' EXIT
mark() { echo "$1 $(date +%s.%N)" >>"$out/marks.txt"; }
: >"$out/marks.txt"
sleep 2
mark bench_start
CUDA_VISIBLE_DEVICES=0 $F bench --shape "$shape" --best-from "$db" --samples 200 --rounds 20 --json >"$out/bench.json"
mark bench_end
sleep 2
mark search_start
rm -f "$out/power-search.db"*
$F search --shape "$shape" --devices 0 --space search_spaces/attention_sm90.yaml --strategy transfer \
	--db "$out/power-search.db" --json --quiet >"$out/search.json"
mark search_end
sleep 1
kill $smi
python3 - "$out" <<'PY' | tee "$out/clocks.txt"
import csv, datetime, sys
out = sys.argv[1]
marks = dict((p[0], float(p[1])) for p in (l.split() for l in open(f"{out}/marks.txt")) if len(p) == 2)
t0 = marks["bench_start"]
for i, r in enumerate(r for r in csv.reader(open(f"{out}/smi.csv")) if len(r) >= 7 and not r[0].startswith("timestamp")):
    if i % 3:
        continue
    ts = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
    part = next((p for p in ("bench", "search") if marks[p + "_start"] <= ts <= marks[p + "_end"]), "-")
    print(f"{ts - t0:7.2f} s {part:6} SM {r[1].strip():>9} {r[3].strip():>9} {r[5].strip():>3} C reasons {r[6].strip()}")
PY
