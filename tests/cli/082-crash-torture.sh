# 082-crash-torture: kill -9 a no-GPU search at 24+ seeded random moments (while compiling, storing rejects, resuming): the file passes PRAGMA integrity_check every time, and the resumed search ends with exactly the trials of an uninterrupted run, none lost, none twice. Then 5 concurrent writers (same and different shapes) on one file: no lock errors, no lost rows.
. "$FT_TEST_LIB"
SEED=${FATUNE_TORTURE_SEED:-20261125}
KILLS=${FATUNE_TORTURE_KILLS:-24}
RANDOM=$SEED
SEARCH=(search --arch sm_89 --shape 1x8x256..4096x64 --jobs 2 -q)
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# trials DB: every trial's identity and verdict, sorted (compile time and ids left out)
trials() {
	sql "$1" "SELECT search_key, config, status, reason, coalesce(compile_key, ''), coalesce(regs, ''),
	          coalesce(spill_stores, ''), coalesce(smem_model, ''), coalesce(threads, ''),
	          coalesce(grid_x, ''), coalesce(grid_y, ''), coalesce(grid_z, '')
	          FROM trials ORDER BY search_key, config, status"
}
intact() {
	[ -e "$1" ] || return 0	# killed before it made the file
	v=$(sql "$1" "PRAGMA integrity_check")
	[ "$v" = "ok" ] || fail "$1: integrity_check after kill $kills (seed $SEED): $v"
}
# same_as_ref DB: DB holds the reference's trials, each once
same_as_ref() {
	trials "$1" >"$T/got.txt"
	dup=$(sql "$1" "SELECT count(*) - count(DISTINCT search_key || ' ' || config) FROM trials")
	[ "$dup" -eq 0 ] || fail "$1: $dup trials stored twice (seed $SEED)"
	diff "$T/ref.txt" "$T/got.txt" >"$T/diff.txt" || { head -20 "$T/diff.txt" >&2; fail "$1: the trials differ from an uninterrupted run's (seed $SEED; < lost, > extra)"; }
}

kills=0
# round DB LO HI: a search on DB killed -9 after LO..HI ms if still running. 0: killed; 1: it finished.
round() {
	local delay=$(($2 + RANDOM % ($3 - $2 + 1)))
	"$FATUNE" "${SEARCH[@]}" --db "$1" >"$T/round.out" 2>&1 &
	local pid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	if kill -9 "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null || true
		kills=$((kills + 1))
		intact "$1"
		return 0
	fi
	set +e; wait "$pid"; local st=$?; set -e
	[ "$st" -eq 0 ] || { cat "$T/round.out" >&2; fail "a resumed search failed (exit $st)"; }
	intact "$1"
	return 1
}

# 1. cold cache: kills while NVRTC compiles (each compiled CUBIN is kept, so every round gets on)
db="$T/cold.db"
for i in 1 2 3 4 5 6; do round "$db" 200 3000 || break; done
run "${SEARCH[@]}" --db "$db"; expect_rc 0 "finishing the cold-cache search"
intact "$db"

# 2. the reference: uninterrupted, warm cache; its length sets the kill window
t0=$(now_ms)
run "${SEARCH[@]}" --db "$T/ref.db"; expect_rc 0 "reference search"
span=$(($(now_ms) - t0))
trials "$T/ref.db" >"$T/ref.txt"
# every candidate of the five shapes is a trial: as many as check enumerates for them
want=0
for s in 256 512 1024 2048 4096; do
	run check --arch sm_89 --shape 1x8x${s}x64; expect_rc 0 "check 1x8x${s}x64"
	want=$((want + $(sed -n 's/.*1x8x'$s'x64: \([0-9]*\) candidates.*/\1/p' "$T/err")))
done
[ "$want" -gt 10000 ] && [ "$(wc -l <"$T/ref.txt")" -eq "$want" ] || fail "the reference stored $(wc -l <"$T/ref.txt") trials, not the $want candidates"
same_as_ref "$db"
echo "cold cache: $kills kills, reference run ${span} ms"

# 3. warm cache: kills anywhere in a run; each file is resumed until a run finishes, then compared
gen=0
while [ "$kills" -lt "$KILLS" ]; do
	gen=$((gen + 1))
	db="$T/warm$gen.db"
	while round "$db" 0 "$span"; do :; done
	same_as_ref "$db"
	[ "$gen" -lt 200 ] || fail "only $kills kills in 200 files: the search is too fast to kill"
done
echo "warm cache: $kills kills in all over $gen files, every file intact and complete (seed $SEED)"

# 4. five writers at once on one new file: two of one shape, three others
pids=()
for s in 256 256 512 1024 2048; do
	"$FATUNE" search --arch sm_89 --shape 1x8x${s}x64 --jobs 1 -q --db "$T/conc.db" >"$T/conc.$s.$RANDOM" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { cat "$T"/conc.* >&2; fail "a concurrent writer failed"; }; done
! grep -il "locked\|busy" "$T"/conc.* || fail "a concurrent writer met a lock error"
[ "$(sql "$T/conc.db" "PRAGMA integrity_check")" = "ok" ] || fail "concurrent writers: integrity"
[ "$(sql "$T/conc.db" "SELECT count(*) FROM runs WHERE outcome = 'done'")" -eq 5 ] || fail "not every writer's run is done"
# every trial of the four shapes is there (the two same-shape writers may both store one)
sql "$T/conc.db" "SELECT DISTINCT search_key FROM trials" | sort >"$T/keys.txt"
[ "$(wc -l <"$T/keys.txt")" -eq 4 ] || fail "expected 4 searches in the shared file"
trials "$T/conc.db" | sort -u >"$T/conc.txt"
grep -Ff "$T/keys.txt" "$T/ref.txt" | sort -u >"$T/ref4.txt"
diff "$T/ref4.txt" "$T/conc.txt" >"$T/diff.txt" || { head -20 "$T/diff.txt" >&2; fail "concurrent writers lost or changed trials (< lost, > extra)"; }
echo "ok"
