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
# has no tuned neighbour and runs as guided until 64 results in a row bring no gain of over 1%
# (transfer.h); the second
# starts from the first's best, must come within 5% of its exhaustive optimum in fewer than a
# third of random's evaluations (median over 9 seeds) and stop early, with the optimum's quality.
# (This H200 recording holds 117 of the 273 candidates the space now has; the first unit's
# local search plateaus 15% off its optimum for ~130 candidates, most of them holes, which are
# no results: it runs to its end. The stop's quality is checked below on the H100 recording.)
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
opt, opt0 = (con.execute("SELECT min(t.t_median_us) FROM trials t JOIN runs r ON r.id = t.run_id "
                         "WHERE t.status = 'ok' AND r.causal = ? AND r.s = 512", (c,)).fetchone()[0]
             for c in (1, 0))
def seq(db, causal):
    c = sqlite3.connect(db)
    run = c.execute("SELECT max(id) FROM runs WHERE causal = ?", (causal,)).fetchone()[0]
    return c.execute("SELECT status, t_median_us FROM trials WHERE run_id = ? AND status NOT LIKE "
                     "'rejected%' ORDER BY id", (run,)).fetchall()
def to_within(s):
    return next(i for i, (st, m) in enumerate(s, 1) if st == "ok" and m <= 1.05 * opt)
first, second = seq(f"{tmp}/transfer.db", 0), seq(f"{tmp}/transfer.db", 1)
# the stop counts results: a candidate the recording lacks is none
real = [r for r in first if r[0] != "not_in_recording"]
ref, last = None, 0
for i, (st, m) in enumerate(real, 1):
    if st == "ok" and (ref is None or m < 0.99 * ref):
        ref, last = m, i
print(f"first (no seed): {len(first)} of {evaluated_all} sent, {len(real)} results, last gain at {last}")
# a replayed candidate is answered when sent: the window chosen before the stop (--jobs 1: 1 + 2)
# is kept, so that a replay stays deterministic
assert len(first) == evaluated_all or last + 64 <= len(real) <= last + 64 + 3, (len(real), last)
t = to_within(second)
r = statistics.median(to_within(seq(f"{tmp}/random{k}.db", 1)) for k in range(1, 10))
found = min(m for st, m in second if st == "ok")
print(f"transfer: within 5% after {t}, stopped after {len(second)}; random median {r}; best {found} vs {opt}")
assert 3 * t <= r, (t, r)
assert len(second) < evaluated_all, len(second)
assert found <= 1.05 * opt, (found, opt)
PY
# an unseeded transfer search on the recorded H100 campaign (every candidate timed): the stop after 64
# results without a gain keeps the optimum on its hardest targets (bf16 causal D 128 found its
# optimum ~80 results after a plateau; a patience of 48 ended it 1.59x off) with fewer evaluations
H100="$T/h100.db"
sql_load "$H100" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
for target in "attention_sm90 1x16x1024x128 --causal bf16" "attention_sm90 1x8x512x64 --causal fp16" \
	"attention 1x8x512x64 '' fp16" "attention_sm90 16x16x512x64 --causal fp16"; do
	eval "set -- $target"
	for strat in transfer exhaustive; do
		# a fresh database each: nothing tuned, no seed
		rm -f "$T/h100-$strat.db"*
		run search --replay "$H100" --arch sm_90 --space "$FATUNE_SOURCE_DIR/search_spaces/$1.yaml" --shape "$2" $3 \
			--dtype "$4" --strategy $strat --jobs 1 --quiet --json --db "$T/h100-$strat.db"
		expect_rc 0 "$strat on $target"
		cp "$T/out" "$T/h100-$strat.json"
	done
	python3 - "$T/h100-transfer.json" "$T/h100-exhaustive.json" "$target" "$T/h100-evals" <<'PY' || fail "unseeded transfer lost the optimum of $target"
import json, sys
t, e = (json.load(open(p)) for p in sys.argv[1:3])
ev = lambda s: sum(v for k, v in s["status"].items() if not k.startswith("rejected"))
print(f"{sys.argv[3]}: transfer {ev(t)} evaluations, best {t['best']['t_median_us']}; exhaustive {ev(e)}, {e['best']['t_median_us']}")
assert t["best"]["t_median_us"] == e["best"]["t_median_us"] and ev(t) <= ev(e), (t["best"], e["best"])
open(sys.argv[4], "a").write(f"{ev(t)} {ev(e)}\n")
PY
done
# the recording's holes are no results for the stop: a search of few recorded candidates may run to its
# end, but together the four stop early
awk '{ t += $1; e += $2 } END { exit !(t < e) }' "$T/h100-evals" || fail "unseeded transfer never stopped early on the H100 recording"
echo "ok (optimum $best us over $all evaluations)"
