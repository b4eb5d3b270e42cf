# 113-concurrent-claims: two searches of one shape into one database, started together with a cold
# cache, never evaluate one candidate twice: each candidate is claimed in the database before it is
# compiled (db/README.md, claims). Before the fix both compiled and stored everything (2,600 duplicate
# trials of 13,824 in the issue's run). Then a search killed with SIGKILL leaves claims behind; the
# next search takes them over (their owner is dead) and finishes every candidate, each once.
. "$FT_TEST_LIB"
cp "$FATUNE_SOURCE_DIR/tests/kernels/static_smem.cu" "$T/"
# 100 candidates whose compile stops at the template's #error at once (no NUM_WARPS_PER_BLOCK):
# many claims in a few seconds; 10 more are rejected by a constraint
cat >"$T/fast.yaml" <<'YAML'
fatune_space: 1
name: fast
template:
  file: static_smem.cu
  kernel: fatune_static_smem_fwd
  shared_memory: static
parameters:
  PA: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  PB: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
constraints:
  not_ten: PA != 10
smem_bytes: 0
launch:
  threads: 128
  grid: [ceil_div(S, 16), H, B]
YAML
nvrtc_runs() { sed -n 's/^  compile: \([0-9]*\) NVRTC runs.*/\1/p' "$1"; }
no_duplicates() {
	[ "$(sql "$FATUNE_DB" "SELECT count(*) - count(DISTINCT search_key || ' ' || config) FROM trials")" -eq 0 ] ||
		fail "$1: $(sql "$FATUNE_DB" "SELECT count(*) - count(DISTINCT search_key || ' ' || config) FROM trials") duplicate trials"
}
# together FILE N C RC: two searches of space FILE at once, each exiting RC (1: no candidate of the
# space can run, as every one fails to compile); N distinct trials, none twice, C compiles in all
together() {
	local S="--arch sm_89 --shape 1x8x512x64 --space $1 --jobs 1" name
	name=$(basename "$1" .yaml)
	"$FATUNE" search $S >"$T/a.out" 2>"$T/a.err" &
	local a=$! rb=0 ra=0
	"$FATUNE" search $S >"$T/b.out" 2>"$T/b.err" || rb=$?
	wait $a || ra=$?
	[ "$rb" -eq "$4" ] || { cat "$T/b.err"; fail "$1: the second search exited $rb, not $4"; }
	[ "$ra" -eq "$4" ] || { cat "$T/a.err"; fail "$1: the first search exited $ra, not $4"; }
	no_duplicates "$1"
	[ "$(sql "$FATUNE_DB" "SELECT count(DISTINCT config) FROM trials t JOIN runs r ON r.id = t.run_id WHERE r.space_name = '$name'")" -eq "$2" ] ||
		fail "$1: not all $2 candidates stored"
	local na nb
	na=$(nvrtc_runs "$T/a.out") nb=$(nvrtc_runs "$T/b.out")
	echo "$name: NVRTC runs $na + $nb"
	[ $((na + nb)) -eq "$3" ] || fail "$name: $((na + nb)) compiles for $3 candidates: some were compiled twice"
	[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM claims")" -eq 0 ] || fail "$1: claims left after both runs ended"
}
together "$T/fast.yaml" 110 100 1
together "$TESTSPACES/static_smem_two.yaml" 2 2 0
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'compiled'")" -eq 2 ] || fail "real: 2 compiled rows expected"

# a killed search's claims are taken over
export FATUNE_DB="$T/killed.db" FATUNE_CACHE_DIR="$T/cache2"
S="--arch sm_89 --shape 1x8x512x64 --space $T/fast.yaml --jobs 1 --quiet"
"$FATUNE" search $S >/dev/null 2>&1 &
pid=$!
wait_rows "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'compile_failed'" 10
kill -KILL $pid
wait $pid || true
claimed=$(sql "$FATUNE_DB" "SELECT count(*) FROM claims")
[ "$claimed" -gt 0 ] || fail "the killed search left no claim (kill it earlier)"
run search $S
expect_rc 1 "search after a killed one (every candidate fails to compile: nothing can run)"
no_duplicates "after a kill"
[ "$(sql "$FATUNE_DB" "SELECT count(DISTINCT config) FROM trials")" -eq 110 ] || fail "the claims of the killed search were not taken over"
echo "ok ($claimed claims of a killed search taken over)"
