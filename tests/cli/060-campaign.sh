# 060-campaign: several shapes tuned as one campaign: repeated --shape and shape sets, a campaign
# file, one JSON line per shape and a closing line, shards that partition the units, SLURM's array
# variables as the default shard, and a campaign resumed after kill -9 with nothing lost or repeated.
. "$FT_TEST_LIB"
F="--arch sm_89 --space $TESTSPACES/fault.yaml --quiet"
# two --shape, one of them a set: 1 + 3 units
run search $F --shape 1x2x64x64 --shape 1x2x32..128x64 --json
expect_rc 0 "campaign from --shape"
python3 - "$T/out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
units, last = lines[:-1], lines[-1]
assert [u["shape"] for u in units] == ["1x2x64x64", "1x2x32x64", "1x2x128x64"], units
assert last["units"] == 3 and last["units_in_campaign"] == 3 and last["tuned"] == 0, last
assert all(u["status"]["compiled"] == 12 for u in units), units
PY
[ "$(sql "$FATUNE_DB" "SELECT count(DISTINCT search_key) FROM runs")" -eq 3 ] || fail "3 units must be 3 searches"
# the campaign file: 1 + 2 + 2*2 = 7 units, its spaces, its name on every run; the fault
# kernel speaks ABI v1, so the four grouped-query units are skipped, each with the reason
rm -f "$FATUNE_DB"*
run search --arch sm_89 --campaign "$FATUNE_SOURCE_DIR/tests/campaigns/small.yaml" --quiet --json
expect_rc 0 "campaign file"
expect_err "skipping space 'fault' .*ABI v1.*kv_len != S"
python3 - "$T/out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
units, last = lines[:-1], lines[-1]
got = [(u["shape"], u["dtype"], u["causal"], "not_run" in u) for u in units]
want = [("1x2x64x64", "fp16", 0, False), ("1x2x32x64", "fp16", 1, False), ("1x2x96x64", "fp16", 1, False),
        ("2x4x16x32,kv_heads=2,kv_len=64", "fp16", 0, True), ("2x4x16x32,kv_heads=2,kv_len=128", "fp16", 0, True),
        ("2x4x16x32,kv_heads=2,kv_len=64", "bf16", 0, True), ("2x4x16x32,kv_heads=2,kv_len=128", "bf16", 0, True)]
assert got == want, got
assert all("ABI v1" in u["not_run"] for u in units[3:]), units[3:]
assert last["campaign"] == "small" and last["units"] == 7, last
PY
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM runs WHERE campaign = 'small'")" -eq 3 ] || fail "runs lack the campaign's name"
all=$(sql "$FATUNE_DB" "SELECT search_key FROM runs ORDER BY search_key")
# shards 0/3, 1/3, 2/3 partition the units; SLURM's variables give the same shard as --shard
for i in 0 1 2; do
	export FATUNE_DB="$T/shard$i.db"
	run search --arch sm_89 --campaign "$FATUNE_SOURCE_DIR/tests/campaigns/small.yaml" --quiet --shard $i/3
	expect_rc 0 "shard $i/3"
done
export FATUNE_DB="$T/slurm.db"
set +e
SLURM_ARRAY_TASK_ID=11 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_COUNT=3 "$FATUNE" search --arch sm_89 \
	--campaign "$FATUNE_SOURCE_DIR/tests/campaigns/small.yaml" --quiet >"$T/out" 2>"$T/err"
rc=$?
set -e
expect_rc 0 "shard from SLURM's variables"
union=$(for i in 0 1 2; do sql "$T/shard$i.db" "SELECT search_key FROM runs"; done | sort)
[ "$union" = "$all" ] || fail "the shards do not partition the campaign"
# units 0, 3, 6 / 1, 4 / 2, 5: one unit each runs (the grouped-query ones are skipped)
for i in 0 1 2; do
	[ "$(sql "$T/shard$i.db" "SELECT count(*) FROM runs")" -eq 1 ] || fail "shard $i/3 must run 1 unit"
done
[ "$(sql "$T/slurm.db" "SELECT search_key FROM runs ORDER BY search_key")" = \
  "$(sql "$T/shard1.db" "SELECT search_key FROM runs ORDER BY search_key")" ] || fail "SLURM task 11 (min 10) is not shard 1/3"
# bad shards and units: one line, exit 2
run search --arch sm_89 --shape 1x2x64x64 --shard 3/3; expect_bad_input "bad --shard '3/3'"
run search --arch sm_89 --shape 1x2x64x64 --shard x; expect_bad_input "bad --shard"
run search --arch sm_89 --shape 1x2x64..32x64; expect_bad_input "bad shape set"
run search --arch sm_89 --shape 1x2x64x64 --campaign "$FATUNE_SOURCE_DIR/tests/campaigns/small.yaml"
expect_bad_input "not both"
export SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_COUNT=2
run search --arch sm_89 --shape 1x2x64x64; expect_bad_input "SLURM_ARRAY_TASK"
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
# kill -9 in the middle of a campaign, then resume: every unit ends with each config once
export FATUNE_DB="$T/kill.db"
"$FATUNE" search --arch sm_89 --campaign "$FATUNE_SOURCE_DIR/tests/campaigns/small.yaml" --quiet --jobs 1 >/dev/null 2>&1 &
pid=$!
wait_rows "$FATUNE_DB" "SELECT count(*) FROM runs" 2
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
[ "$(sql "$FATUNE_DB" "PRAGMA integrity_check")" = "ok" ] || fail "the database is damaged after kill -9"
run search --arch sm_89 --campaign "$FATUNE_SOURCE_DIR/tests/campaigns/small.yaml" --quiet --json
expect_rc 0 "resumed campaign"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM (SELECT search_key, config FROM trials GROUP BY 1, 2 HAVING count(*) > 1)")" -eq 0 ] ||
	fail "a config was stored twice after the resume"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials")" -eq $((3 * 12)) ] || fail "the resumed campaign lost or repeated trials"
echo "ok"
