# 011-replay: every strategy runs against trials recorded on an H200 (no GPU): exhaustive finds the
# recorded optimum, budgets cut exactly, a seed reproduces its run, and a target without records is refused.
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
best=$(sql "$REC" "SELECT min(t.t_median_us) FROM trials t JOIN runs r ON r.id = t.run_id WHERE t.status='ok' AND r.causal=0 AND r.s=512")
[ -n "$best" ] || fail "the fixture holds no ok trial"
summary() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s[sys.argv[2]] if sys.argv[2] in s else s["status"][sys.argv[2]])' "$T/out" "$1"; }
evaluated() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["status"]; print(sum(v for k, v in s.items() if not k.startswith("rejected")))' "$T/out"; }

R="search --replay $REC --arch sm_90 --shape 1x8x512x64 --quiet --json"
run $R --strategy exhaustive --db "$T/ex.db"; expect_rc 0
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert abs(s["best"]["t_median_us"] - float(sys.argv[2])) < 1e-6, (s["best"], sys.argv[2])' "$T/out" "$best" ||
	fail "exhaustive replay missed the recorded optimum $best"
all=$(evaluated)
for s in random model guided; do
	run $R --strategy $s --budget 10 --seed 7 --db "$T/$s.db"; expect_rc 0 "$s"
	[ "$(evaluated)" -eq 10 ] || fail "$s --budget 10 evaluated $(evaluated)"
	cp "$T/out" "$T/$s.first"
	run $R --strategy $s --budget 10 --seed 7 --db "$T/$s-again.db"; expect_rc 0
	python3 -c 'import json,sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); assert a["best"] == b["best"], (a["best"], b["best"])' "$T/$s.first" "$T/out" ||
		fail "$s is not reproducible from its seed"
	run $R --strategy $s --db "$T/$s-all.db"; expect_rc 0
	[ "$(evaluated)" -eq "$all" ] || fail "$s without a budget evaluated $(evaluated) of $all"
done
# the strategy and its seed and budget are recorded with the run
[ "$(sql "$T/guided.db" "SELECT strategy || ' ' || seed || ' ' || budget FROM runs")" = "guided 7 10" ] || fail "run row lacks the strategy"
run $R --strategy guided --budget 1s --db "$T/secs.db"; expect_rc 0
run search --replay "$REC" --arch sm_89 --shape 1x8x512x64 --db "$T/none.db"
expect_bad_input "holds no timed trial for sm_89"
echo "ok (optimum $best us over $all evaluations)"
