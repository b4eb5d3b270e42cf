#!/usr/bin/env bash
# load_ahead_ab.sh - the mission search (1x8x512x64, both default spaces, every CUBIN cached) with
# modules loaded ahead off and on (FATUNE_LOAD_AHEAD=0 / 1, docs/timing.md "Fixed costs per
# candidate"), alternated, each run through bench/timeline.py: per run the unit's wall, when the JSON
# line and the process's exit came, when the worker's exit closed the pipes, and the worker's phases
# per candidate. On a GPU machine, from the repository root with .deps carried:
#
#     bench/load_ahead_ab.sh [ROUNDS]          (default 3; logs in $OUT/load_ahead_ab.tar.gz)
set -u
rounds=${1:-3}
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FATUNE_CACHE_DIR=$PWD/build/cache
X=${OUT:-/tmp}/load_ahead_ab; mkdir -p "$X"
tools/device-build.sh >"$X/build.log" 2>&1 || { tail -30 "$X/build.log"; exit 1; }
F=build/fatune
rm -f /tmp/laab-*.db
# the cache filled first: every CUBIN of both spaces compiled
/usr/bin/time -f "the mission search, cache filled: %e s" $F search --shape 1x8x512x64 --db /tmp/laab-fill.db \
	--json -q >"$X/fill.json" 2>"$X/fill.err"
tail -1 "$X/fill.err"
summ() {
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
js = [l for l in lines if " out {" in l]
if not js:
    print(sys.argv[2], "no JSON:", lines[-3:]); sys.exit()
t = lambda l: float(l.split()[0])
j = json.loads(js[0].split(" out ", 1)[1])
w, n = j["phases"]["worker"], j["evaluated"]
ex = [t(l) for l in lines if " exit " in l][0]
eof = max(t(l) for l in lines if l.endswith(" EOF"))
per = lambda k: w[k] / n
print(f'{sys.argv[2]:9s} wall {j["wall_s"]:.3f} s; JSON {t(js[0]):.0f} ms, exit {ex:.0f} ms, pipes closed {eof:.0f} ms; '
      f'{n} evaluated, {j["phases"]["loaded_ahead"]} loaded ahead; per candidate: load {per("load_ms"):.3f}, '
      f'graph {per("graph_ms"):.3f}, verify {per("verify_ms"):.3f}, warmup {per("warmup_ms"):.3f}, '
      f'quick {per("quick_ms"):.3f}, job {per("job_ms"):.3f}, busy {j["phases"]["gpu_busy_ms"] / n:.3f} ms; '
      f'best {j["best"]["t_median_us"]:.3f} us ({j["best"]["family"]})')
PY
}
for rep in $(seq "$rounds"); do
	for mode in 0 1; do
		FATUNE_LOAD_AHEAD=$mode python3 bench/timeline.py $F search --shape 1x8x512x64 \
			--db /tmp/laab-$mode-$rep.db --json -q >"$X/run-$mode-$rep.txt" 2>&1
		summ "$X/run-$mode-$rep.txt" "ahead=$mode#$rep"
	done
done
[ -n "${OUT:-}" ] && tar -czf "$OUT/load_ahead_ab.tar.gz" -C "$OUT" load_ahead_ab && rm -rf "$X"
