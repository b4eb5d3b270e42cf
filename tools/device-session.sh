#!/usr/bin/env bash
# device-session.sh - everything one GPU-machine call does, logs under $OUT.
#
#   tools/device-session.sh [step ...]     steps: build gpu-tests runner mission retune suite compare
#                                          hopper serving campaign24 all, and (only when
#                                          named) unseen unseen-heat ablation ablation-compare ablation-sanitizer
#                                          mechanisms-check throughput throughput-quality worker-costs
#                                          prefetch-order race-form machine-warmup stress db-busy heat-settle
#                                          close-rounds
#
# hopper, serving: a campaign (bench/campaigns/*.yaml) searched with the default spaces, then
# bench/compare_torch.py on its bests against SDPA flash/cuDNN and the autotuned Triton
# kernels, same inputs, same method; campaign24: issue 10's 24-shape campaign from a cold
# cache, its dispatch header exported and compiled. Each keeps a gzipped copy of its DB.
# unseen: the same for bench/campaigns/unseen.yaml (shapes no other campaign holds); unseen-heat:
# its bests against the peers again, each kernel heated first (compare_torch.py --heat-ms).
# CAMPAIGN_SEARCH_ARGS adds search options to these campaigns (--space FILE names the spaces, the
# default ones included when they should stay).
# ablation: issue 17's FlashAttention-3 mechanisms: bench/ablation.py searches seven shapes and
# times each mechanism on/off for each space's best (INTRA_WG_OVERLAP 1/2, TILE_ORDER 0/1 and
# MASK_PEEL 0/1 on causal shapes, Q_IN_REGS 0/1, KV_WARPGROUPS 1/2, CLUSTER_M 1/2, PDL 0/1);
# ablation-compare: compare_torch on those bests against the peers; ablation-sanitizer:
# compute-sanitizer memcheck and racecheck on one small config per new variant (through fatune
# bench, so the worker's own launches, cuLaunchKernelEx with PDL included, are what is checked);
# mechanisms-check: the causal mechanisms' configs against the fp64 reference grid (sm90_check).
# throughput (issue 16; not part of all): suite24 with racing, cold then warm cache (twice), on
# $THROUGHPUT_DEVICES (default 0: one GPU; 0,1 for two), the mission shape warm (twice), and one
# exhaustive pass for the quality comparison (THROUGHPUT_QUALITY=0 skips it; the step
# throughput-quality runs it alone, against THROUGHPUT_RACE_JSON and THROUGHPUT_RACE_DB); per-unit breakdown in
# $OUT/throughput-*.txt, the passes' JSON lines and stderr in $OUT/throughput-*.tar.gz.
# db-busy (issue 16; not part of all): suite24 warm on $THROUGHPUT_DEVICES (default 0,1) with
# fatune's wait for the database's write lock against SQLite's (FATUNE_DB_BUSY=sqlite), alternated
# (DB_BUSY_ENV=FATUNE_REJECT_WRITE DB_BUSY_RUNS="wait free ...": the rejection batches' write);
# walls and tables in $OUT/db-busy-*.txt.
# prefetch-order (issue 16; not part of all): suite24 cold with the prefetch in transfer order
# against the model's order (FATUNE_PREFETCH_ORDER=model), with THROUGHPUT_SEEDS_FROM's seeds
# when given and without; tables in $OUT/prefetch-order.txt.
# race-form (issue 16; not part of all): suite24 warm with forms of the race against each other
# (RACE_RUNS: one, the default; two, the two-job form; ms1, 1 ms samples); see the step.
# stress (issue 17; not part of all): every persistent config (PDL 0) of STRESS_DIMS (64 128), bf16,
# causal and not, from a copy of the Hopper space without persistent_causal_heaviest_first (so the
# causal TILE_ORDER 0 walk that gave a wrong result is back), checked many times at one large shape
# each (bench/sm90_check.py stress: bad runs per config and parameter, the wrong tiles; STRESS_WHERE
# narrows the configs, STRESS_ROUNDS sets the rounds of fresh inputs, STRESS_TIMEOUT each dim's limit);
# with STRESS_SANITIZER=1 also compute-sanitizer racecheck and synccheck on STRESS_CONFIG at
# 2x32x2048x64. Found the Q release of 2026-11-29 (docs/kernel_sm90.md).
# heat-settle (issue 16; not part of all): bench/campaigns/heavy6.yaml warm with one race heat against
# another (HEAT_SETTLE_RUNS, FATUNE_RACE_HEAT_MS values), how settled each final's round 1 was
# (bench/final_rounds.py, from the final rows' logs) in $OUT/heat-settle.txt; see the step.
# close-rounds (issue 16; not part of all): bench/campaigns/heavy6.yaml warm with a heated final's close
# finalists given rounds alone (FATUNE_RACE_CLOSE_ROUNDS, CLOSE_RUNS values) and without, each against one
# exhaustive pass (bench/quality.py), in $OUT/close-rounds.txt; see the step.
# worker-costs (issue 16; not part of all): the mission search, warm cache, with the worker's
# old fixed costs (FATUNE_EVAL_COSTS=legacy) and the new, phases.worker per candidate side by
# side in $OUT/worker-costs.txt.
# THROUGHPUT_PREFETCH_OFF=1 first runs suite24 cold with --prefetch off (the campaign's
# compiles ahead, docs/timing.md) for comparison. THROUGHPUT_SEEDS_FROM=DB passes DB to every
# suite24 pass as --seeds-from (another GPU's bests seed transfer); the GPU machine has no
# sqlite3 shell, so make DB here from a fixture (sqlite3 seeds.db < tests/data/h200_suite24_best.sql)
# and name it in the device call's carry (*.db is ignored).
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
export FATUNE_DB="${FATUNE_DB:-/tmp/fatune-session.db}" FATUNE_CACHE_DIR="$PWD/build/cache"
steps="${*:-all}"
has() { [[ " $steps " == *" $1 "* || " $steps " == *" all "* ]]; }
F=build/fatune

if has build; then
	nvidia-smi -L | tee "$OUT/gpu.txt"
	tools/device-build.sh 2>&1 | tee "$OUT/build.log" || exit 1
	$F devices | tee -a "$OUT/gpu.txt"
fi
if [[ " $steps " == *" machine-warmup "* ]]; then
	# a fresh machine's first campaign compiles ~2x slower than the next (docs/perf.md, 2026-11-29):
	# one cold mission search first, its CUBINs then removed, so that a cold figure measures a cold
	# cache and not a cold machine
	/usr/bin/time -f "machine warm-up (mission, cold cache): %e s wall" $F search --shape 1x8x512x64 \
		--db /tmp/fatune-warmup.db --quiet >/dev/null 2>"$OUT/machine-warmup.err"
	tail -1 "$OUT/machine-warmup.err"
	rm -rf "$FATUNE_CACHE_DIR" /tmp/fatune-warmup.db*
fi
if has gpu-tests; then
	(cd build && timeout "${GPU_TESTS_TIMEOUT:-900}" ctest -L gpu --output-on-failure --timeout 300) >"$OUT/ctest-gpu.log" 2>&1
	grep -E "tests passed|Passed|Failed|Skipped|Timeout|FAIL" "$OUT/ctest-gpu.log"
fi
if has runner; then
	# the gpu runner's worker on a real GPU: jobs name CUBINs by cache key, resolved through this
	# host's cache (test_worker's GPU part: fault injection, a missing key crashed, a path refused)
	(cd build && ctest -R 'unit.test_worker$|unit.test_runner$' --output-on-failure) >"$OUT/runner.log" 2>&1
	grep -E "tests passed|Passed|Failed|FAIL|missing CUBIN" "$OUT/runner.log"
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
# a gzipped copy of a DB under $OUT (a DB is too large to come back as it is): $1 db, $2 name
keep_db() {
	python3 - "$1" "$OUT/$2.db.gz" <<'PY'
import gzip, shutil, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()
with open(sys.argv[1], "rb") as f, gzip.open(sys.argv[2], "wb") as g:
    shutil.copyfileobj(f, g)
PY
}
# a campaign then the peers: $1 name, $2 campaign file, $3... compare_torch options
campaign_vs_peers() {
	local name=$1 file=$2 db=/tmp/fatune-$1.db
	shift 2
	# CAMPAIGN_SEARCH_ARGS: more search options (--space ... names every space to search)
	# shellcheck disable=SC2086
	/usr/bin/time -f "$name search wall %e s" $F search --campaign "$file" --db "$db" ${CAMPAIGN_SEARCH_ARGS:-} \
		--json --quiet >"$OUT/$name.json" 2>"$OUT/$name.err"
	tail -2 "$OUT/$name.err"
	keep_db "$db" "$name"
	timeout 420 python3 bench/compare_torch.py --db "$db" --all "$@" --json "$OUT/$name-compare.json" \
		2>"$OUT/$name-compare.err" | tee "$OUT/$name-compare.txt"
	tail -3 "$OUT/$name-compare.err"
}
if has hopper; then
	campaign_vs_peers hopper bench/campaigns/hopper.yaml
fi
if has serving; then
	campaign_vs_peers serving bench/campaigns/serving.yaml --ceiling
fi
if [[ " $steps " == *" unseen "* ]]; then
	# issue 17: shapes no other campaign holds (bench/campaigns/unseen.yaml), against the peers
	campaign_vs_peers unseen bench/campaigns/unseen.yaml
fi
if [[ " $steps " == *" unseen-heat "* ]]; then
	# the unseen step's bests (its DB, left in /tmp by an earlier call on this machine) against the
	# peers again, every timed kernel heated COMPARE_HEAT_MS (default 100) first: the clock the
	# power cap leaves, as the race's heated final ranks heavy configs
	timeout 420 python3 bench/compare_torch.py --db /tmp/fatune-unseen.db --all --heat-ms "${COMPARE_HEAT_MS:-100}" \
		--json "$OUT/unseen-heat-compare.json" 2>"$OUT/unseen-heat-compare.err" | tee "$OUT/unseen-heat-compare.txt"
	tail -3 "$OUT/unseen-heat-compare.err"
fi
if has campaign24; then
	# issue 10's target: tuned, exported as a dispatch header and compiled, from a cold cache
	rm -rf "$FATUNE_CACHE_DIR"
	db=/tmp/fatune-campaign24.db
	t0=$(date +%s.%N)
	timeout "${CAMPAIGN_TIMEOUT:-300}" $F search --campaign bench/campaigns/suite24.yaml --db $db \
		${CAMPAIGN_ARGS:---strategy transfer} --json --quiet >"$OUT/campaign24.json" 2>"$OUT/campaign24.err"
	echo "campaign24 search rc $?"
	for sp in attention attention_sm90; do
		$F export --dispatch --db $db --space search_spaces/$sp.yaml --style c -o "$OUT/dispatch_$sp.h" &&
			printf '#include "dispatch_%s.h"\nint main(void) { return !fatune_dispatch_pick(64, 0, 0, 1, 8, 512, 512, 8, 0); }\n' \
				$sp >/tmp/pick_$sp.c &&
			cc -std=c11 -Wall -Wextra -Werror -I"$OUT" /tmp/pick_$sp.c -o /tmp/pick_$sp && /tmp/pick_$sp &&
			echo "dispatch_$sp.h: compiled, picks 1x8x512x64"
	done
	t1=$(date +%s.%N)
	echo "campaign24: search + dispatch export + compile $(python3 -c "print(round($t1 - $t0, 1))") s wall"
	tail -2 "$OUT/campaign24.json"
	$F report --db $db -o "$OUT/campaign24-report.html" && echo "report written"
	keep_db $db campaign24
fi
# suite24's JSON lines -> one row per unit: wall, phases, evaluations, GPU ms per candidate
throughput_table() {
	python3 - "$@" <<'PY'
import json, statistics, sys
for path in sys.argv[1:]:
    rows = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
    units = [r for r in rows if "shape" in r and "phases" in r]
    tail = [r for r in rows if "campaign" in r]
    print(f"== {path}: {len(units)} units" + (f", campaign wall {tail[0]['wall_s']:.1f} s" if tail else ""))
    print(f"{'shape':<22}{'c':>2}{'wall s':>8}{'cand':>6}{'eval':>6}{'cut':>5}{'quick':>6}{'full':>5}{'stbl':>5}{'fin':>4}"
          f"{'compile s':>10}{'busy s':>8}{'wait s':>8}{'send s':>7}{'verify s':>9}{'time s':>8}{'shared s':>9}{'db s':>6}{'ms/cand':>8}  best us")
    per = []
    for r in units:
        p, rc = r["phases"], r["race"]
        n = max(1, r["evaluated"])
        per.append(p["gpu_busy_ms"] / n)
        best = r.get("best", {}).get("t_median_us", float("nan"))
        print(f"{r['shape']:<22}{r['causal']:>2}{r['wall_s']:>8.2f}{r['candidates']:>6}{r['evaluated']:>6}"
              f"{r['status'].get('cut', 0):>5}{rc['quick']:>6}{rc['full']:>5}{rc.get('stable', 0):>5}{rc['final_jobs']:>4}"
              f"{p['compile_wall_ms']/1e3:>10.2f}{p['gpu_busy_ms']/1e3:>8.2f}{p['gpu_wait_ms']/1e3:>8.2f}"
              f"{p.get('first_send_ms', float('nan'))/1e3:>7.2f}"
              f"{p['verify_ms']/1e3:>9.2f}{p['timing_ms']/1e3:>8.2f}"
              f"{p.get('worker', {}).get('shared_ms', 0)/1e3:>9.2f}{p.get('db_wait_ms', float('nan'))/1e3:>6.2f}"
              f"{per[-1]:>8.1f}  {best:.4f}")
    if per:
        print(f"median GPU ms per candidate {statistics.median(per):.1f}")
        sends = [r["phases"].get("first_send_ms", 0) for r in units]
        print(f"before the first candidate is sent, per unit: median {statistics.median(sends):.1f} ms, "
              f"{sum(sends) / 1e3:.2f} s in all")
        print(f"waited for the database's write lock: {sum(r['phases'].get('db_wait_ms', 0) for r in units) / 1e3:.2f} s in all")
    # the workers' split per evaluated candidate (phases.worker, docs/timing.md); "other" is
    # the job's host bookkeeping, "ipc" the evaluation thread's time outside the worker's jobs
    keys = ["start", "load", "inputs", "verify", "size", "graph", "warmup", "quick", "samples", "unload"]
    if units and "worker" in units[0]["phases"]:
        print(f"{'worker ms/cand':<24}" + "".join(f"{k:>8}" for k in keys + ["other", "ipc", "job"]))
        for r in units:
            w, n = r["phases"]["worker"], max(1, r["evaluated"])
            other = w["job_ms"] - sum(w[k + "_ms"] for k in keys)
            ipc = r["phases"]["gpu_busy_ms"] - w["job_ms"]
            print(f"{r['shape'] + ' c' + str(r['causal']):<24}" + "".join(f"{w[k + '_ms'] / n:>8.3f}" for k in keys)
                  + f"{other / n:>8.3f}{ipc / n:>8.3f}{w['job_ms'] / n:>8.3f}")
PY
}
if [[ " $steps " == *" throughput "* ]]; then
	dev=${THROUGHPUT_DEVICES:-0}
	tag=$(echo "$dev" | tr ',' '+')
	rm -rf "$FATUNE_CACHE_DIR" /tmp/fatune-tp-*.db*
	# warm2: the first warm pass still compiles what the cold one did not reach (its searches take
	# other paths when the measurements differ); the second finds every CUBIN it goes to
	passes="cold warm warm2"
	[ "${THROUGHPUT_PREFETCH_OFF:-0}" = 1 ] && passes="cold-noprefetch cold warm warm2"
	seeds=()
	[ -n "${THROUGHPUT_SEEDS_FROM:-}" ] && seeds=(--seeds-from "$THROUGHPUT_SEEDS_FROM")
	for pass in $passes; do
		pf=on
		[ "$pass" = cold-noprefetch ] && pf=off
		/usr/bin/time -f "suite24 $pass on GPUs $dev: %e s wall" $F search --campaign bench/campaigns/suite24.yaml \
			--devices "$dev" --strategy transfer --prefetch $pf "${seeds[@]}" --db /tmp/fatune-tp-$pass.db --json --quiet \
			>"$OUT/throughput-$pass-$tag.json" 2>"$OUT/throughput-$pass-$tag.err"
		tail -1 "$OUT/throughput-$pass-$tag.err"
		[ "$pass" = cold-noprefetch ] && rm -rf "$FATUNE_CACHE_DIR"
	done
	# the mission shape after the campaign, a fresh DB: first with what the campaign compiled (it
	# compiles the rest), then again with every CUBIN it goes to cached (issue 16's <= 1 s)
	for m in mission mission2; do
		/usr/bin/time -f "$m warm: %e s wall" $F search --shape 1x8x512x64 --devices "$dev" \
			--db /tmp/fatune-tp-$m.db --json --quiet >"$OUT/throughput-$m-$tag.json" 2>"$OUT/throughput-$m-$tag.err"
		tail -1 "$OUT/throughput-$m-$tag.err"
	done
	throughput_table "$OUT"/throughput-{cold,warm,warm2,mission,mission2}-$tag.json | tee "$OUT/throughput-breakdown-$tag.txt"
	# the database the quality check compares with the exhaustive one (its finals' rows hold what
	# each round measured: bench/final_rounds.py), so that a miss can be read from both afterwards
	keep_db /tmp/fatune-tp-warm2.db throughput-warm2-$tag
fi
if [[ " $steps " == *" throughput "* || " $steps " == *" throughput-quality "* ]] &&
	[ "${THROUGHPUT_QUALITY:-1}" = 1 ]; then
	dev=${THROUGHPUT_DEVICES:-0}
	tag=$(echo "$dev" | tr ',' '+')
	race_json=${THROUGHPUT_RACE_JSON:-$OUT/throughput-warm2-$tag.json}
	# quality: every unit's transfer best against the best of an exhaustive search (every feasible
	# candidate evaluated, racing on: cut only when its quick min is over 1.15x the best), same cache;
	# where the two bests differ, both are timed again interleaved in one worker (bench/quality.py)
	race_db=${THROUGHPUT_RACE_DB:-/tmp/fatune-tp-warm2.db}
	timeout "${EXHAUSTIVE_TIMEOUT:-400}" /usr/bin/time -f "suite24 exhaustive: %e s wall" \
		$F search --campaign bench/campaigns/suite24.yaml --devices "$dev" --strategy exhaustive \
		--db /tmp/fatune-tp-exhaustive.db --json --quiet \
		>"$OUT/throughput-exhaustive-$tag.json" 2>"$OUT/throughput-exhaustive-$tag.err"
	tail -1 "$OUT/throughput-exhaustive-$tag.err"
	# every feasible candidate's verdict and time: a recording for --replay (transfer studied offline)
	keep_db /tmp/fatune-tp-exhaustive.db throughput-exhaustive-$tag
	python3 bench/quality.py "$race_json" "$OUT/throughput-exhaustive-$tag.json" "$race_db" \
		/tmp/fatune-tp-exhaustive.db --gpu "${dev%%,*}" --fatune "$F" | tee "$OUT/throughput-quality-$tag.txt"
fi
if [[ " $steps " == *" throughput "* || " $steps " == *" throughput-quality "* ]]; then
	# the passes' JSON lines and stderr in one archive: a device call brings back only a few files
	tag=$(echo "${THROUGHPUT_DEVICES:-0}" | tr ',' '+')
	(cd "$OUT" && tar -czf "throughput-$tag.tar.gz" throughput-*-"$tag".json throughput-*-"$tag".err 2>/dev/null &&
		rm -f throughput-*-"$tag".json throughput-*-"$tag".err)
fi
if [[ " $steps " == *" db-busy "* ]]; then
	# issue 16: the wait for another connection's database lock, fatune's polls against SQLite's
	# sleeps (FATUNE_DB_BUSY=sqlite), suite24 warm on $THROUGHPUT_DEVICES, alternated (DB_BUSY_RUNS,
	# default "sqlite fatune sqlite fatune"), each a fresh DB on the cache a first pass fills;
	# DB_BUSY_ENV names another variable to alternate (FATUNE_REJECT_WRITE with DB_BUSY_RUNS="wait
	# free wait free": rejection batches that wait for the lock against those written only when free)
	dev=${THROUGHPUT_DEVICES:-0,1}
	tag=$(echo "$dev" | tr ',' '_')
	mkdir -p /tmp/dbb
	$F search --campaign bench/campaigns/suite24.yaml --devices "$dev" --strategy transfer \
		--db /tmp/dbb/fill.db --json --quiet >/dev/null 2>&1
	i=0
	for rn in ${DB_BUSY_RUNS:-sqlite fatune sqlite fatune}; do
		i=$((i + 1))
		rm -f /tmp/dbb/run.db*
		env "${DB_BUSY_ENV:-FATUNE_DB_BUSY}=$rn" /usr/bin/time -f "suite24 warm, ${DB_BUSY_ENV:-FATUNE_DB_BUSY}=$rn ($i): %e s wall" \
			$F search --campaign bench/campaigns/suite24.yaml --devices "$dev" --strategy transfer \
			--db /tmp/dbb/run.db --json --quiet >"/tmp/dbb/$i-$rn.json" 2>"/tmp/dbb/$i-$rn.err"
		tail -1 "/tmp/dbb/$i-$rn.err" | tee -a "$OUT/db-busy-$tag.txt"
	done
	throughput_table /tmp/dbb/[0-9]*.json >>"$OUT/db-busy-$tag.txt"
fi
if [[ " $steps " == *" prefetch-order "* ]]; then
	# issue 16: the prefetch in transfer order (the next search's seeds, then their neighbourhood)
	# against the model's order (FATUNE_PREFETCH_ORDER=model, the order before 2026-11-29), suite24
	# cold on one GPU, with THROUGHPUT_SEEDS_FROM's seeds (when given: model, then transfer order)
	# and without (transfer, then model order); tables in $OUT/prefetch-order.txt, the JSON lines in
	# $OUT/prefetch-order.tar.gz
	dev=${THROUGHPUT_DEVICES:-0}
	runs=()
	[ -n "${THROUGHPUT_SEEDS_FROM:-}" ] && runs+=(seeds:model seeds:transfer)
	runs+=(plain:transfer plain:model)
	# PREFETCH_RUNS="plain:model plain:transfer ...": another list (a repeat is numbered)
	[ -n "${PREFETCH_RUNS:-}" ] && read -r -a runs <<<"$PREFETCH_RUNS"
	mkdir -p /tmp/po
	declare -A seen=()
	for rn in "${runs[@]}"; do
		kind=${rn%%:*} order=${rn##*:}
		seen[$rn]=$((${seen[$rn]:-0} + 1))
		[ "${seen[$rn]}" -gt 1 ] && order=$order.${seen[$rn]}
		[ "$kind" = seeds ] && [ -z "${THROUGHPUT_SEEDS_FROM:-}" ] && continue
		rm -rf "$FATUNE_CACHE_DIR" /tmp/fatune-po.db*
		seeds=()
		[ "$kind" = seeds ] && seeds=(--seeds-from "$THROUGHPUT_SEEDS_FROM")
		env_order=()
		[ "${order%%.*}" = model ] && env_order=(FATUNE_PREFETCH_ORDER=model)
		env "${env_order[@]}" /usr/bin/time -f "suite24 cold, $kind, prefetch order $order: %e s wall" \
			$F search --campaign bench/campaigns/suite24.yaml --devices "$dev" --strategy transfer "${seeds[@]}" \
			--db /tmp/fatune-po.db --json --quiet >"/tmp/po/$kind-$order.json" 2>"/tmp/po/$kind-$order.err"
		tail -1 "/tmp/po/$kind-$order.err" | tee -a "$OUT/prefetch-order.txt"
	done
	throughput_table /tmp/po/*.json >>"$OUT/prefetch-order.txt"
	tar -czf "$OUT/prefetch-order.tar.gz" -C /tmp po
fi
if [[ " $steps " == *" race-form "* ]]; then
	# issue 16: forms of the race against each other, suite24 with a warm cache on
	# $THROUGHPUT_DEVICES, each pass a fresh DB, in the order of RACE_RUNS (default "one two two one":
	# a drift of the clocks shows); one cold pass first fills the cache (its wall is the cold figure of
	# the default form). Forms: one - the default (quick samples, the cut in the worker, then the same
	# graph until the median is stable: one job per candidate); two - the race's first form
	# (FATUNE_RACE_JOBS=2 --race-stable 0: quick pass and full measurement as two jobs, 15 full
	# samples); ms1 - the default with the quick and full samples' cap at 1 ms
	# (FATUNE_RACE_SAMPLE_US=1000, the cap before 2026-11-29); sync - each warm sample waited for
	# before the next is launched (FATUNE_EVAL_SAMPLES=one-by-one, the worker's method until
	# 2026-11-29, second session); full - every candidate enumerated before the first is sent
	# (FATUNE_ENUM=full, the first pass until 2026-11-29, fourth session); wN - a guide keeps N
	# candidates in flight (FATUNE_GUIDE_WINDOW=N; the default is the compile threads + 2 per GPU);
	# kN - N calls per sample (--launches N, 20 by default); qN - N quick samples (--race-samples N).
	# RACE_COLD=1: every pass from a cold cache (no cold pass first). Then the mission shape
	# with every CUBIN cached, MISSION_REPEAT times per form (default 1; 0 none), the forms alternating. Tables in $OUT/race-form.txt, the JSON lines in
	# $OUT/race-form.tar.gz, the last default pass's DB in $OUT/race-form-one.db.gz.
	dev=${THROUGHPUT_DEVICES:-0}
	read -r -a runs <<<"${RACE_RUNS:-one two two one}"
	seeds=()
	[ -n "${THROUGHPUT_SEEDS_FROM:-}" ] && seeds=(--seeds-from "$THROUGHPUT_SEEDS_FROM")
	rm -rf "$FATUNE_CACHE_DIR" /tmp/rf
	mkdir -p /tmp/rf
	form_env() {
		case $1 in
		two) echo FATUNE_RACE_JOBS=2 ;;
		ms1) echo FATUNE_RACE_SAMPLE_US=1000 ;;
		sync) echo FATUNE_EVAL_SAMPLES=one-by-one ;;
		full) echo FATUNE_ENUM=full ;;
		w[0-9]*) echo "FATUNE_GUIDE_WINDOW=${1#w}" ;;
		esac
	}
	form_opt() {
		case $1 in
		two) echo "--race-stable 0" ;;
		k[0-9]*) echo "--launches ${1#k}" ;;
		q[0-9]*) echo "--race-samples ${1#q}" ;;
		esac
	}
	declare -A seen=()
	first=(cold)
	[ -n "${RACE_COLD:-}" ] && first=()
	for rn in "${first[@]}" "${runs[@]}"; do
		[ -n "${RACE_COLD:-}" ] && rm -rf "$FATUNE_CACHE_DIR"
		seen[$rn]=$((${seen[$rn]:-0} + 1))
		name=$rn
		[ "${seen[$rn]}" -gt 1 ] && name=$rn.${seen[$rn]}
		# shellcheck disable=SC2046
		env $(form_env "$rn") /usr/bin/time -f "suite24 $name on GPUs $dev: %e s wall" $F search \
			--campaign bench/campaigns/suite24.yaml --devices "$dev" --strategy transfer "${seeds[@]}" \
			$(form_opt "$rn") --db "/tmp/rf/$name.db" --json --quiet >"/tmp/rf/$name.json" 2>"/tmp/rf/$name.err"
		tail -1 "/tmp/rf/$name.err" | tee -a "$OUT/race-form.txt"
		[ "$rn" = one ] && last_one=$name
	done
	# the mission shape, every CUBIN cached (a first search compiles what the campaign did not)
	[ "${MISSION_REPEAT:-1}" -gt 0 ] &&
		$F search --shape 1x8x512x64 --devices "$dev" --db /tmp/rf/mwarm.db --quiet >/dev/null 2>&1
	for ((rep = 1; rep <= ${MISSION_REPEAT:-1}; rep++)); do
		for rn in "${!seen[@]}"; do
			[ "$rn" = cold ] && continue
			# shellcheck disable=SC2046
			env $(form_env "$rn") /usr/bin/time -f "mission warm, $rn ($rep): %e s wall" $F search \
				--shape 1x8x512x64 --devices "$dev" $(form_opt "$rn") --db "/tmp/rf/m-$rn-$rep.db" --json \
				--quiet >"/tmp/rf/mission-$rn-$rep.json" 2>"/tmp/rf/mission-$rn-$rep.err"
			tail -1 "/tmp/rf/mission-$rn-$rep.err" | tee -a "$OUT/race-form.txt"
		done
	done
	throughput_table /tmp/rf/*.json >>"$OUT/race-form.txt"
	tar -czf "$OUT/race-form.tar.gz" -C /tmp/rf $(cd /tmp/rf && ls ./*.json ./*.err)
	[ -n "${last_one:-}" ] && cp "/tmp/rf/$last_one.json" "$OUT/race-form-one.json" &&
		gzip -c "/tmp/rf/$last_one.db" >"$OUT/race-form-one.db.gz"
fi
if [[ " $steps " == *" heat-settle "* ]]; then
	# issue 16: how settled a heated final's round 1 is, one heat against another: the six units of
	# bench/campaigns/heavy6.yaml on one GPU in the Hopper space, one cold pass to fill the cache, then
	# warm passes with FATUNE_RACE_HEAT_MS over HEAT_SETTLE_RUNS (default "100 300 100 300"; sN: N ms with
	# FATUNE_RACE_FINAL_ORDER=spread), a fresh DB each; bench/final_rounds.py on each into
	# $OUT/heat-settle.txt, the DBs' ok and cut rows in $OUT/heat-settle.tar.gz
	dev=${THROUGHPUT_DEVICES:-0}
	hs=(--campaign bench/campaigns/heavy6.yaml --space search_spaces/attention_sm90.yaml --devices "$dev"
		--strategy transfer --quiet)
	rm -rf /tmp/hs
	mkdir -p /tmp/hs
	/usr/bin/time -f "heavy6 cold: %e s wall" $F search "${hs[@]}" --db /tmp/hs/cold.db >/dev/null 2>/tmp/hs/cold.err
	tail -1 /tmp/hs/cold.err | tee -a "$OUT/heat-settle.txt"
	i=0
	for h in ${HEAT_SETTLE_RUNS:-100 300 100 300}; do
		i=$((i + 1))
		order=next
		[[ $h == s* ]] && order=spread
		FATUNE_RACE_FINAL_ORDER=$order FATUNE_RACE_HEAT_MS=${h#s} /usr/bin/time \
			-f "heavy6 heat ${h#s} ms, final order $order ($i): %e s wall" $F search "${hs[@]}" \
			--db "/tmp/hs/h$h-$i.db" >/dev/null 2>"/tmp/hs/h$h-$i.err"
		tail -1 "/tmp/hs/h$h-$i.err" | tee -a "$OUT/heat-settle.txt"
		python3 bench/final_rounds.py "/tmp/hs/h$h-$i.db" | tee -a "$OUT/heat-settle.txt"
		python3 -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute("DELETE FROM trials WHERE status NOT IN (?, ?)", ("ok", "cut")); d.commit(); d.execute("VACUUM")' "/tmp/hs/h$h-$i.db"
	done
	tar -czf "$OUT/heat-settle.tar.gz" -C /tmp/hs $(cd /tmp/hs && ls h*.db)
fi
if [[ " $steps " == *" close-rounds "* ]]; then
	# issue 16: a heated final's close finalists given rounds alone (FATUNE_RACE_CLOSE_ROUNDS) against
	# none: bench/campaigns/heavy6.yaml on one GPU in the Hopper space, a cold pass and a warm one to fill
	# the cache, warm passes over CLOSE_RUNS (default "4 0": the variable's values), one exhaustive pass,
	# then bench/quality.py of each warm pass against it; walls and tables in $OUT/close-rounds.txt
	dev=${THROUGHPUT_DEVICES:-0}
	cr=(--campaign bench/campaigns/heavy6.yaml --space search_spaces/attention_sm90.yaml --devices "$dev"
		--quiet --json)
	rm -rf /tmp/cr
	mkdir -p /tmp/cr
	/usr/bin/time -f "heavy6 cold: %e s wall" $F search "${cr[@]}" --strategy transfer --db /tmp/cr/cold.db \
		>/dev/null 2>/tmp/cr/cold.err
	tail -1 /tmp/cr/cold.err | tee -a "$OUT/close-rounds.txt"
	# a first warm pass still compiles what the cold one did not reach (2026-12-01: 6.1 s of compile wall
	# against 3.8 in the pass after it), so the passes compared come after one more
	/usr/bin/time -f "heavy6 warm, not compared: %e s wall" $F search "${cr[@]}" --strategy transfer \
		--db /tmp/cr/fill.db >/dev/null 2>/tmp/cr/fill.err
	tail -1 /tmp/cr/fill.err | tee -a "$OUT/close-rounds.txt"
	i=0
	for c in ${CLOSE_RUNS:-4 0}; do
		i=$((i + 1))
		FATUNE_RACE_CLOSE_ROUNDS=$c /usr/bin/time -f "heavy6 warm, FATUNE_RACE_CLOSE_ROUNDS=$c ($i): %e s wall" \
			$F search "${cr[@]}" --strategy transfer --db "/tmp/cr/c$c-$i.db" >"/tmp/cr/c$c-$i.json" 2>"/tmp/cr/c$c-$i.err"
		tail -1 "/tmp/cr/c$c-$i.err" | tee -a "$OUT/close-rounds.txt"
	done
	/usr/bin/time -f "heavy6 exhaustive: %e s wall" $F search "${cr[@]}" --strategy exhaustive --db /tmp/cr/ex.db \
		>/tmp/cr/ex.json 2>/tmp/cr/ex.err
	tail -1 /tmp/cr/ex.err | tee -a "$OUT/close-rounds.txt"
	i=0
	for c in ${CLOSE_RUNS:-4 0}; do
		i=$((i + 1))
		echo "== FATUNE_RACE_CLOSE_ROUNDS=$c ($i) against exhaustive" | tee -a "$OUT/close-rounds.txt"
		python3 bench/quality.py "/tmp/cr/c$c-$i.json" /tmp/cr/ex.json "/tmp/cr/c$c-$i.db" /tmp/cr/ex.db \
			--gpu "${dev%%,*}" --fatune "$F" | tee -a "$OUT/close-rounds.txt"
	done
	(cd /tmp/cr && tar -czf "$OUT/close-rounds.tar.gz" ./*.json ./*.err ./*.db)
fi
if [[ " $steps " == *" worker-costs "* ]]; then
	# issue 16's fixed costs per candidate, before and after, on one GPU: the mission search with a
	# warm CUBIN cache and a fresh DB, FATUNE_EVAL_COSTS=legacy (1 ms hot warm-up, modules loaded per
	# job, reference compiled per worker start) against the default, in the order old new new old so
	# that a drift of the GPU's clocks shows; phases.worker per candidate in the table below
	dev=${THROUGHPUT_DEVICES:-0}
	$F search --shape 1x8x512x64 --devices "$dev" --db /tmp/fatune-wc-warm.db --json --quiet \
		>/dev/null 2>"$OUT/worker-costs-warm.err" || tail -3 "$OUT/worker-costs-warm.err"
	for run in legacy new new2 legacy2; do
		costs=$([[ $run == legacy* ]] && echo legacy || echo default)
		rm -f /tmp/fatune-wc-$run.db*
		FATUNE_EVAL_COSTS=$costs /usr/bin/time -f "mission $run ($costs costs): %e s wall" \
			$F search --shape 1x8x512x64 --devices "$dev" --db /tmp/fatune-wc-$run.db --json --quiet \
			>"$OUT/worker-costs-$run.json" 2>"$OUT/worker-costs-$run.err"
		tail -1 "$OUT/worker-costs-$run.err"
	done
	throughput_table "$OUT"/worker-costs-{legacy,new,new2,legacy2}.json | tee "$OUT/worker-costs.txt"
fi
if has abi; then
	# the mma template before and after ABI v2, same shapes, same run: V1_SPACE is a space over
	# the ABI v1 template (e.g. commit 7cff7fc's attention.cu and attention.yaml, renamed)
	for s in 1x8x512x64 2x16x4096x64 4x16x2048x128; do
		for sp in "${V1_SPACE:?set V1_SPACE}" search_spaces/attention.yaml; do
			$F search --shape $s --space "$sp" --db /tmp/fatune-abi.db --json --quiet 2>>"$OUT/abi.err" |
				python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); b=d.get("best",{}); print(d["shape"], sys.argv[1], b.get("t_median_us"), b.get("config"))' "$sp" |
				tee -a "$OUT/abi.txt"
		done
	done
fi
# ablation, ablation-compare, ablation-sanitizer: issue 17 in three parts, each within a 10-minute
# call; ABLATION_ONLY="0 1" searches only those of bench/ablation.py's seven shapes (build/ablation.db
# keeps every part's searches between calls on the same machine)
only() { [[ " $steps " == *" $1 "* ]]; }
if only ablation; then
	# shellcheck disable=SC2086
	timeout "${ABLATION_TIMEOUT:-560}" python3 bench/ablation.py --fatune $F --db build/ablation.db \
		${ABLATION_ONLY:+--only $ABLATION_ONLY} --json "$OUT/ablation${ABLATION_ONLY:+-${ABLATION_ONLY// /}}.json" \
		2>&1 | tee "$OUT/ablation${ABLATION_ONLY:+-${ABLATION_ONLY// /}}.txt"
	keep_db build/ablation.db ablation
fi
if only ablation-compare; then
	timeout 560 python3 bench/compare_torch.py --db build/ablation.db --all --ceiling \
		--json "$OUT/ablation-compare.json" 2>"$OUT/ablation-compare.err" | tee "$OUT/ablation-compare.txt"
	tail -3 "$OUT/ablation-compare.err"
fi
if only ablation-sanitizer; then
	# one small config per new variant: space | shape | config (persistent: > 132 work tiles of
	# one row block each); SANITIZER_TOOLS="memcheck" or "racecheck" runs one tool per call
	W1="NUM_WARPS_PER_BLOCK=1,TILE_M=16" C1="NUM_CONSUMER_WG=1,BLOCK_M=64" C2="NUM_CONSUMER_WG=2,BLOCK_M=128"
	T0="TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
	san=(
		"attention|--shape 1x8x1x128 --kv-heads 2 --kv-len 777|$W1,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=4,COMBINE_IN_KERNEL=0,PDL=1"
		# issue 17's PDL 2 (the combine released as each split block starts, its blocks waiting
		# resident in griddepcontrol.wait): warps sharing the KV stream, GQA bshd, ragged KV
		"attention_decode|--shape 2x8x1x128 --kv-heads 2 --kv-len 777 --layout bshd|NUM_WARPS_PER_BLOCK=2,TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,DENSE_KV=0,KV_WARPS=1,NUM_SPLITS=4,COMBINE_IN_KERNEL=0,PDL=2"
		"attention_sm90|--shape 1x2x300x128 --kv-len 700 --causal|$C1,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,NUM_SPLITS=2,INTRA_WG_OVERLAP=2,PDL=1,$T0"
		"attention_sm90|--shape 2x4x333x128 --causal|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0,$T0"
		"attention_sm90|--shape 1x140x129x64 --causal|NUM_CONSUMER_WG=3,BLOCK_M=192,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=2,PDL=0,TILE_ORDER=1,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
		"attention_sm90|--shape 1x140x65x128|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=1,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0,$T0"
		# issue 17's causal mechanism TILE_ORDER 1 (L2-grouped heaviest-first walk), non-persistent
		# (the space's), ping-pong, rows with no key (S_q > S_kv); MASK_PEEL 1 is out of the space
		# (ptxas serializes its wgmma, C7520): mechanisms-check verifies it outside
		"attention_sm90|--shape 1x140x129x64 --causal|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0,TILE_ORDER=1,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
		"attention_sm90|--shape 2x70x300x128 --kv-len 200 --causal|$C1,BLOCK_N=64,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=2,PDL=0,TILE_ORDER=1,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
		# issue 17's small-grid mechanism KV_WARPGROUPS 2 (two consumers split one block's KV tiles,
		# merged through the freed ring): causal with splits (3 and 3 tiles: 2 and 1 per consumer) and PDL;
		# non-causal with 8 tiles, odd S
		"attention_sm90|--shape 1x2x300x64 --kv-len 700 --causal|NUM_CONSUMER_WG=2,BLOCK_M=64,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,NUM_SPLITS=2,INTRA_WG_OVERLAP=2,PDL=1,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=2,CLUSTER_M=1"
		"attention_sm90|--shape 1x3x333x128 --kv-len 900|NUM_CONSUMER_WG=2,BLOCK_M=64,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=2,CLUSTER_M=1"
		# issue 17's 2-CTA clusters CLUSTER_M 2 (K and V multicast into both blocks, stages released
		# by the consumers of both): non-persistent with a ragged S_q and S_kv; persistent (> 132 tiles)
		"attention_sm90|--shape 1x2x500x128 --kv-len 700|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=1,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=2"
		"attention_sm90|--shape 1x70x256x128 --kv-len 300|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=2,PDL=0,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=2"
	)
	for c in "${san[@]}"; do
		# SANITIZER_MATCH: a bash regex; only the entries it matches
		[[ -n "${SANITIZER_MATCH:-}" && ! "$c" =~ $SANITIZER_MATCH ]] && continue
		IFS='|' read -r sp args cfg <<<"$c"
		for tool in ${SANITIZER_TOOLS:-memcheck racecheck}; do
			# shellcheck disable=SC2086
			timeout 240 compute-sanitizer --tool $tool --target-processes all --error-exitcode 9 \
				$F bench --space search_spaces/$sp.yaml $args --config "$cfg" --samples 5 --launches 1 \
				--timeout 230 --db build/sanitizer.db --json >"$OUT/sanitizer.log.tmp" 2>&1
			rc=$?
			echo "$tool rc $rc: $sp $args $cfg" | tee -a "$OUT/sanitizer.txt"
			grep -E "ERROR SUMMARY|RACECHECK SUMMARY|\"status\"" "$OUT/sanitizer.log.tmp" | tee -a "$OUT/sanitizer.txt"
			cat "$OUT/sanitizer.log.tmp" >>"$OUT/sanitizer.log"
		done
	done
	rm -f "$OUT/sanitizer.log.tmp"
fi
if only stress; then
	B=build/stress
	mkdir -p $B
	sed -e '/persistent_causal_heaviest_first:/d' -e 's#file: ../kernel_templates/#file: ../../kernel_templates/#' \
		search_spaces/attention_sm90.yaml >$B/space.yaml
	for d in ${STRESS_DIMS:-64 128}; do
		python3 bench/sm90_check.py build --space $B/space.yaml --out $B/d$d --dims "$d" --causal 0 1 --dtype bf16 \
			--where "${STRESS_WHERE:-PERSISTENT == 1 AND PDL == 0}" --no-sass 2>&1 | tail -2
		case $d in 64) shape=2x32x2048x64 ;; 128) shape=2x16x2048x128 ;; *) shape=1x16x2048x$d ;; esac
		timeout "${STRESS_TIMEOUT:-240}" python3 bench/sm90_check.py stress --space $B/space.yaml --build $B/d$d \
			--shape "$shape" --rounds "${STRESS_ROUNDS:-3}" --watchdog 10 2>&1 | tee "$OUT/stress-d$d.txt"
	done
	if [[ ${STRESS_SANITIZER:-0} == 1 ]]; then
		cfg=${STRESS_CONFIG:-NUM_CONSUMER_WG=1,BLOCK_M=64,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=1,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1}
		for tool in racecheck synccheck; do
			timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F bench --space $B/space.yaml \
				--shape 2x32x2048x64 --dtype bf16 --causal --config "$cfg" --samples 5 --launches 1 --timeout 190 \
				--db build/stress.db --json >"$OUT/stress-san.tmp" 2>&1
			echo "$tool rc $?: $cfg" | tee -a "$OUT/stress-sanitizer.txt"
			grep -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|\"status\"" "$OUT/stress-san.tmp" | head -20 |
				tee -a "$OUT/stress-sanitizer.txt"
		done
		rm -f "$OUT/stress-san.tmp"
	fi
fi
if only mechanisms-check; then
	# issue 17's causal mechanisms against the fp64 reference: every Hopper config with TILE_ORDER=1
	# and MASK_PEEL=1 (both on: the peeled loop and the new walk in one kernel; MECH_WHERE to choose
	# others), D 64/128/256, fp16 and bf16, built with NVRTC (fails on spills, ptxas warnings, local
	# memory), then bench/sm90_check.py check: 9 odd cases (S 1/17/500/4097, GQA, S_q != S_kv both
	# ways, bshd, decode) x splits 1/2/4, outputs and partials NaN-poisoned. --resume: a second call
	# continues where a timed-out one stopped (the log is kept under build/). MECH_CAUSAL=0 checks
	# non-causal configs instead (e.g. MECH_WHERE="PERSISTENT == 0": the prologue's early loads).
	B=build/sm90-mech
	python3 bench/sm90_check.py build --out $B --dims 64 128 256 --causal "${MECH_CAUSAL:-1}" \
		--where "${MECH_WHERE:-TILE_ORDER == 1 AND MASK_PEEL == 1}" 2>&1 | tail -5 | tee "$OUT/mechanisms-build.txt"
	timeout "${MECH_TIMEOUT:-480}" python3 bench/sm90_check.py check --build $B --log build/mechanisms-check.jsonl \
		--resume --watchdog 8 2>&1 | tail -15 | tee "$OUT/mechanisms-check.txt"
	cp build/mechanisms-check.jsonl "$OUT/"
fi
