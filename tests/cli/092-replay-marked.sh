# 092-replay-marked: a run made with `search --replay` is stored and shown as replayed, a config the recording
# never had gets no time, and export refuses a replayed best as a measurement unless --allow-replayed.
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
A="--arch sm_90 --shape 1x8x512x64"
run search --replay "$REC" $A --quiet --json --db "$T/rp.db"; expect_rc 0

# stored as replayed, and shown so by query
[ "$(sql "$T/rp.db" "SELECT mode FROM runs")" = replayed ] || fail "the replayed run is not stored as replayed"
run query --runs --db "$T/rp.db" --format csv; expect_rc 0; expect_out ",replayed,"
run query --trials --status ok -n 1 --db "$T/rp.db" --format json; expect_rc 0; expect_out '"run_mode": ?"replayed"'
run query --best --db "$T/rp.db" --format json; expect_rc 0; expect_out '"run_mode": ?"replayed"'

# the recording predates COMBINE_IN_KERNEL: each recorded config goes to one candidate, its twin gets no time
sql "$T/rp.db" "SELECT config, status, t_median_us FROM trials WHERE status IN ('ok', 'not_in_recording')" >"$T/rows"
python3 - "$T/rows" <<'PY' || fail "a twin the recording never had was given a time"
import sys
rows = [l.rstrip('\n').split('|') for l in open(sys.argv[1]) if l.strip()]
twins = {}
for c, s, t in rows:
    kv = dict(p.split('=') for p in c.split(','))
    kv.pop('COMBINE_IN_KERNEL', None)
    twins.setdefault(tuple(sorted(kv.items())), []).append((s, t))
pairs = [v for v in twins.values() if len(v) > 1]
assert pairs, 'no twins in the replay: the test needs a space parameter the recording lacks'
for v in pairs:
    assert sum(s == 'ok' for s, _ in v) <= 1, v
    assert all(t == '' for s, t in v if s == 'not_in_recording'), v
assert any(sorted(s for s, _ in v) == ['not_in_recording', 'ok'] for v in pairs), pairs
PY

# export: refused as a measurement, accepted when asked for, and then it says so
run export $A --db "$T/rp.db"
expect_bad_input "comes from a replay"
run export $A --db "$T/rp.db" --allow-replayed; expect_rc 0
expect_out "Replayed by fatune"; expect_out "not measured"
grep -q "^ \*   measured" "$T/out" && fail "a replayed header says measured"

# the dispatch table likewise
run export --dispatch --arch sm_90 --db "$T/rp.db"
expect_bad_input "come from a replay"
run export --dispatch --arch sm_90 --db "$T/rp.db" --allow-replayed; expect_rc 0; expect_out "replayed, not measured"

# the report says replayed
run report --db "$T/rp.db" -o "$T/r.html"; expect_rc 0
grep -q "replayed from a recording" "$T/r.html" || fail "the report does not mark the replay"

# a replayed run is no recording: replaying it finds nothing
run search --replay "$T/rp.db" $A --db "$T/again.db"
expect_bad_input "holds no timed trial"
echo "ok"
