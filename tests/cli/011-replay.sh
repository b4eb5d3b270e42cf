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
run $R --strategy guided --budget 5s --db "$T/secs.db"; expect_rc 0 "a budget in seconds"
run search --replay "$REC" --arch sm_89 --shape 1x8x512x64 --db "$T/none.db"
expect_bad_input "holds no timed trial for sm_89"
# transfer replayed as a campaign of the two recorded targets (non-causal, then causal): the first
# has no tuned neighbour and runs as guided, to the end; the second starts from the first's best,
# must come within 5% of its exhaustive optimum in fewer than a third of random's evaluations
# (median over 9 seeds) and stop early, with the optimum's quality
cat >"$T/fixture.yaml" <<'YAML'
fatune_campaign: 1
name: fixture
causal: [0, 1]
shapes: [1x8x512x64]
YAML
run search --replay "$REC" --arch sm_90 --campaign "$T/fixture.yaml" --strategy transfer --jobs 1 \
	--quiet --json --db "$T/transfer.db"
expect_rc 0 "transfer campaign"
python3 - "$T/out" <<'PY' || fail "transfer's JSON lacks the seeds"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert "seeds" not in lines[0]["spaces"][0] and lines[1]["spaces"][0]["seeds"] >= 1, lines
PY
for seed in 1 2 3 4 5 6 7 8 9; do
	run $R --causal --strategy random --seed $seed --jobs 1 --db "$T/random$seed.db"; expect_rc 0
done
python3 - "$T" "$REC" "$all" <<'PY' || fail "transfer is not 3x better than random on the causal target"
import sqlite3, statistics, sys
tmp, rec, evaluated_all = sys.argv[1], sys.argv[2], int(sys.argv[3])
con = sqlite3.connect(rec)
opt = con.execute("SELECT min(t.t_median_us) FROM trials t JOIN runs r ON r.id = t.run_id "
                  "WHERE t.status = 'ok' AND r.causal = 1 AND r.s = 512").fetchone()[0]
def seq(db, causal):
    c = sqlite3.connect(db)
    run = c.execute("SELECT max(id) FROM runs WHERE causal = ?", (causal,)).fetchone()[0]
    return c.execute("SELECT status, t_median_us FROM trials WHERE run_id = ? AND status NOT LIKE "
                     "'rejected%' ORDER BY id", (run,)).fetchall()
def to_within(s):
    return next(i for i, (st, m) in enumerate(s, 1) if st == "ok" and m <= 1.05 * opt)
first, second = seq(f"{tmp}/transfer.db", 0), seq(f"{tmp}/transfer.db", 1)
assert len(first) == evaluated_all, (len(first), evaluated_all)
t = to_within(second)
r = statistics.median(to_within(seq(f"{tmp}/random{k}.db", 1)) for k in range(1, 10))
found = min(m for st, m in second if st == "ok")
print(f"transfer: within 5% after {t}, stopped after {len(second)}; random median {r}; best {found} vs {opt}")
assert 3 * t <= r, (t, r)
assert len(second) < evaluated_all, len(second)
assert found <= 1.05 * opt, (found, opt)
PY
echo "ok (optimum $best us over $all evaluations)"
