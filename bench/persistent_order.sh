#!/usr/bin/env bash
# persistent_order.sh - issue 17, causal work on a persistent grid: the heaviest row blocks of every
# head first, L2-grouped (TILE_ORDER=1 with PERSISTENT=1), against the rest of the Hopper space.
#
#   bench/persistent_order.sh OUTDIR        (on a GPU machine; build/fatune built)
#
# A persistent block walks the work tiles i, i + G, i + 2G, ... (G its grid). With TILE_ORDER 0 a
# head's row blocks are consecutive, so when G is a multiple of the row blocks per head (132 SMs,
# 4 or 8 row blocks: always at S 512) a block meets the same row block of every head it visits:
# one block does all the heaviest, another all the lightest. TILE_ORDER 1 walks the heaviest row
# blocks of every head of an L2 group first, so each round's tiles weigh alike. Per causal shape:
# an exhaustive search of the shipped space (fresh database), then the best with PERSISTENT=1 and
# TILE_ORDER=1, the best persistent with TILE_ORDER=0 and the best non-persistent, timed again
# interleaved in one worker (60 samples over 10 rounds, verified first). Since 2026-11-29 the
# shipped space has no persistent causal TILE_ORDER=0 config (slower; one once gave wrong results, the Q release fixed since): set
# SPACE=FILE to a copy without the constraint persistent_causal_heaviest_first to time all three.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/persistent_order.sh OUTDIR}
mkdir -p "$out"
F=build/fatune
db=/tmp/fatune-porder.db
rm -f "$db"*
sp=${SPACE:-search_spaces/attention_sm90.yaml}
search() {	# shape args...: exhaustive, one campaign line per shape in the JSON
	/usr/bin/time -f "search %e s wall" $F search "$@" --causal --arch sm_90 --space "$sp" --db "$db" \
		--quiet --json >>"$out/porder-search.json" 2>>"$out/porder-search.err"
	tail -1 "$out/porder-search.err"
}
search --shape 16x16x512x64 --shape 16x16x256x64 --shape 2x20x1536x128 --shape 4x16x2048x128 --shape 1x8x8192x64
search --shape 2x32x2048x64 --shape 1x16x1024x128 --dtype bf16
# the three bests of each shape, from the latest ok trial of each config
python3 - "$db" >"$out/porder-cases.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""SELECT r.b, r.h, r.s, r.d, r.dtype, t.config, t.t_median_us FROM trials t JOIN runs r ON r.id = t.run_id
    WHERE t.status = 'ok' AND t.id = (SELECT max(u.id) FROM trials u WHERE u.search_key = t.search_key AND u.config = t.config)
    ORDER BY r.b, r.h, r.s, r.d, r.dtype, t.t_median_us""").fetchall()
best = {}
for b, h, s, d, dt, cfg, t in rows:
    kind = ("persistent, TILE_ORDER 1" if "PERSISTENT=1" in cfg and "TILE_ORDER=1" in cfg else
            "persistent, TILE_ORDER 0" if "PERSISTENT=1" in cfg else "not persistent")
    best.setdefault((f"{b}x{h}x{s}x{d}", dt), {}).setdefault(kind, (cfg, t))
for (shape, dt), k in best.items():
    for kind, (cfg, t) in k.items():
        print(shape, dt, kind.replace(" ", "_"), cfg, t)
PY
cat "$out/porder-cases.txt"
# interleaved: every kind's best of a shape in one worker
python3 - "$out/porder-cases.txt" <<'PY' >"$out/porder-bench.cmds"
import collections, sys
by = collections.defaultdict(list)
for l in open(sys.argv[1]):
    shape, dt, kind, cfg, t = l.split()
    by[(shape, dt)].append(cfg)
for (shape, dt), cfgs in by.items():
    print(shape, dt, " ".join(cfgs))
PY
while read -r -u 3 shape dt cfgs; do
	args=()
	for c in $cfgs; do args+=(--config "$c"); done
	echo "== $shape $dt causal"
	$F bench --arch sm_90 --shape "$shape" --dtype "$dt" --causal --space "$sp" "${args[@]}" \
		--samples 60 --rounds 10 --json 2>>"$out/porder-bench.err" | python3 -c '
import json, sys
for l in sys.stdin:
    if l.startswith("{"):
        r = json.loads(l)
        c = r["config"]
        kind = "P1 TO1" if "PERSISTENT=1" in c and "TILE_ORDER=1" in c else "P1 TO0" if "PERSISTENT=1" in c else "P0    "
        if r["status"] != "ok":	# a verdict, not a time: wrong_result once (docs/kernel_sm90.md)
            print("  %s %s (%s)  %s" % (kind, r["status"], r["reason"], c))
        else:
            print("  %s %9.3f us  x%.4f  %s  %s" % (kind, r["t_median_us"], r["vs_fastest"], r["status"], c))'
done 3<"$out/porder-bench.cmds" | tee "$out/porder-bench.txt"
gzip -c "$db" >"$out/porder.db.gz"
