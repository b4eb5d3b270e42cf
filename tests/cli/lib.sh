# lib.sh - helpers for the numbered CLI tests (sourced; $FATUNE is the binary under test).
set -u
: "${FATUNE:?FATUNE must point at build/fatune}"
: "${FATUNE_SOURCE_DIR:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/fatune-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export FATUNE_DB="$T/fatune.db"
export FATUNE_CACHE_DIR="$T/cache"
SPACES="$FATUNE_SOURCE_DIR/search_spaces"
TESTSPACES="$FATUNE_SOURCE_DIR/tests/spaces"

fail() { echo "FAIL: $*" >&2; exit 1; }

# signal_gone SIG PID LIMIT_MS WHAT: sends SIG to PID and waits for it to exit within LIMIT_MS (else kills it and
# fails); sets rc (its exit status) and ms (how long it took)
signal_gone() {
	local sig=$1 pid=$2 limit=$3 t0
	t0=$(date +%s%3N)
	kill -"$sig" "$pid"
	while kill -0 "$pid" 2>/dev/null && [ $(($(date +%s%3N) - t0)) -le "$limit" ]; do sleep 0.05; done
	ms=$(($(date +%s%3N) - t0))
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" || true
		fail "$4 still ran $limit ms after SIG$sig (killed)"
	fi
	set +e; wait "$pid"; rc=$?; set -e
}

# run CMD...: runs fatune, keeps stdout in $T/out, stderr in $T/err, status in $rc
run() {
	set +e
	"$FATUNE" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}

expect_rc() { [ "$rc" -eq "$1" ] || { cat "$T/out" "$T/err" >&2; fail "expected exit $1, got $rc: ${2:-}"; }; }
expect_out() { grep -qE -- "$1" "$T/out" || { cat "$T/out" >&2; fail "stdout lacks /$1/"; }; }
expect_err() { grep -qE -- "$1" "$T/err" || { cat "$T/err" >&2; fail "stderr lacks /$1/"; }; }
# one line on stderr, exit 2: the contract for bad input
expect_bad_input() {
	expect_rc 2 "$*"
	[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err" >&2; fail "bad input should give exactly one line on stderr"; }
	[ -z "${1:-}" ] || expect_err "$1"
}
# sql DB QUERY: the sqlite3 shell where there is one, else python3's sqlite3 (the GPU machine has no shell)
sql() {
	if command -v sqlite3 >/dev/null 2>&1; then
		sqlite3 "$1" "$2"
	else
		python3 -c 'import sqlite3, sys
con, q = sqlite3.connect(sys.argv[1]), sys.argv[2]
if ";" in q.strip().rstrip(";"):
    con.executescript(q)
else:
    for row in con.execute(q):
        print("|".join("" if v is None else str(v) for v in row))
con.commit()' "$1" "$2"
	fi
}
# sql_load DB FILE: runs an SQL script file
sql_load() {
	if command -v sqlite3 >/dev/null 2>&1; then
		sqlite3 "$1" <"$2"
	else
		python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).executescript(open(sys.argv[2]).read())' "$1" "$2"
	fi
}
# expect_bench_config CONFIG: $T/out is bench --json of a verified run of CONFIG
expect_bench_config() {
	python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); assert b["status"]=="ok" and b["config"]==sys.argv[2], b' \
		"$T/out" "$1" || fail "bench did not verify and time $1"
}
# expect_header FILE SPACE FAMILY CONFIG: an exported build_config.h of SPACE's config CONFIG, one
# macro per compile-time parameter (NUM_SPLITS, launch-time, as FATUNE_LAUNCH_NUM_SPLITS)
expect_header() {
	grep -q "space            $2 (family $3)\$" "$1" || fail "$1 does not name space $2 (family $3)"
	grep -q "config           $4\$" "$1" || fail "$1 holds another config than $4"
	for kv in $(echo "$4" | tr , ' '); do
		grep -qE "^#define (${kv%%=*}|FATUNE_LAUNCH_${kv%%=*}|FATUNE_LAUNCH_PARAM_${kv%%=*}) ${kv#*=}\$" "$1" ||
			fail "$1 has no macro for $kv"
	done
}
# wait_rows DB QUERY N: waits (up to 30 s) until the count QUERY returns in DB reaches N, e.g.
# before killing a search in the middle
wait_rows() {
	local i n
	for i in $(seq 1 600); do
		n=$(sql "$1" "$2" 2>/dev/null || echo 0)
		[ "${n:-0}" -ge "$3" ] && return 0
		sleep 0.05
	done
}
# put_best: a best row in $FATUNE_DB as a GPU search of 1x8x512x64 on sm_89 (an L4) would leave it
put_best() {
	sql "$FATUNE_DB" "INSERT INTO best (arch, device, space_name, template_name, family, b, h, s, d,
	  s_kv, h_kv, layout, dtype, causal, config,
	  compile_key, template_hash, fatune_version, t_median_us, t_min_us, t_p90_us, rel_err, smem_bytes,
	  threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x, combine_grid_y, combine_grid_z,
	  updated_at) VALUES ('sm_89', 'NVIDIA L4', 'attention', 'attention', 'mma', 1, 8, 512, 64,
	  512, 8, 'bhsd', 'fp16', 0,
	  'NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=64,KV_STAGES=2,PACK_GQA=0,DENSE_KV=1,NUM_SPLITS=2,COMBINE_IN_KERNEL=0,PDL=0', '0123456789abcdef',
	  'fedcba9876543210', '0.1.0', 5.93, 5.81, 6.02, 0.00031, 24576, 128, 16, 8, 1, 128, 4, 8, 1,
	  '2026-11-22T02:00:00Z')"
}
# gpu_or_skip: exit 77 (ctest: skipped) where no GPU is usable
gpu_or_skip() {
	if ! "$FATUNE" devices >/dev/null 2>&1; then
		echo "SKIP: no usable GPU ($("$FATUNE" devices 2>&1 | head -1))"
		exit 77
	fi
}
# sm90_or_skip: exit 77 (ctest: skipped) unless the GPU is an sm_90 (the Hopper template's tests)
sm90_or_skip() {
	local arch
	gpu_or_skip
	arch=$("$FATUNE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["arch"])')
	[ "$arch" = sm_90 ] || { echo "SKIP: needs an sm_90 GPU (this one is $arch)"; exit 77; }
}
# bench_ok SPACE ARGS CONFIG: fatune bench of CONFIG in SPACE (ARGS word-split: the shape and any
# bench options) exits 0 with a verified, timed result; prints its median time beside the config
bench_ok() {
	local space=$1 args=$2 cfg=$3
	# shellcheck disable=SC2086
	run bench --space "$space" $args --config "$cfg" --json
	expect_rc 0 "$args $cfg"
	grep -q '"status":"ok"' "$T/out" || { cat "$T/out"; fail "$args $cfg is not ok"; }
	echo "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["t_median_us"])' "$T/out") us  $args  $cfg"
}
set -e
