# 091-stage: a trial's stage is stored; a register-limit rejection found after compiling stays a compile-stage
# rejection through the migration and a replay (it is neither a model rejection nor "compiled").
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
# one recorded config turns out, after compiling, to need too many registers (as feasibility.c says it)
cfg=$(sql "$REC" "SELECT config FROM trials WHERE id = 388")
[ -n "$cfg" ] || fail "the fixture has no trial 388"
sql "$REC" "UPDATE trials SET status = 'rejected_constraint', regs = 255, t_median_us = NULL, t_min_us = NULL,
	t_p90_us = NULL, rel_err = NULL, reason = 'registers: 255 per thread leave room for 8 warps per SM of sm_90, the block has 4' WHERE id = 388"
run search --replay "$REC" --arch sm_90 --shape 1x8x512x64 --quiet --json --db "$T/rp.db"; expect_rc 0
# the recording is a version-1 file: a merge migrates a copy, where the stage is given once, by the
# migration, from what each row holds, and copies it
run db merge "$T/merged.db" "$REC"; expect_rc 0
[ "$(sql "$T/merged.db" "SELECT stage FROM trials WHERE config = '$cfg' AND run_id = 1")" = compiled ] ||
	fail "a register rejection was not given stage compiled"
[ "$(sql "$T/merged.db" "SELECT count(*) FROM trials WHERE status = 'ok' AND stage != 'timed'")" -eq 0 ] ||
	fail "an ok trial is not at stage timed"

# the candidates holding the recorded config: one replays the rejection at stage compiled, none is 'compiled'
sql "$T/rp.db" "SELECT config, status, stage FROM trials" >"$T/rows"
python3 - "$T/rows" "$cfg" <<'PY' || fail "the register rejection was not replayed as one"
import sys
want = set(sys.argv[2].split(','))
rows = [l.rstrip('\n').split('|') for l in open(sys.argv[1]) if l.strip()]
hold = [r for r in rows if want <= set(r[0].split(','))]
assert hold, 'no replayed candidate holds ' + sys.argv[2]
got = sorted((r[1], r[2]) for r in hold)
assert got[0] == ('not_in_recording', 'model') or got[0] == ('rejected_constraint', 'compiled'), got
assert ('rejected_constraint', 'compiled') in got, got
assert all(s != 'compiled' for s, _ in got), got
# every stored row has a stage that fits its status
ok = {'ok': {'timed', 'verified'}, 'not_in_recording': {'model'}, 'rejected_constraint': {'model', 'compiled'},
      'rejected_smem': {'model', 'compiled'}}
for c, s, st in rows:
    assert st in ok.get(s, {st}), (c, s, st)
PY
# model rejections are stored at stage model
[ "$(sql "$T/rp.db" "SELECT count(*) FROM trials WHERE status = 'rejected_constraint' AND stage = 'model'")" -gt 0 ] ||
	fail "no model rejection stored at stage model"
echo "ok"
