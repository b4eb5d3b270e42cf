# 129-parallel-units: --parallel-units on|off and --units-per-gpu N (campaign_run.h: units side by side on several GPUs of one model,
# tests/unit/test_campaign_run.c checks that schedule with fake GPUs). Here, without a GPU: a bad value is bad
# input (one line, exit 2, nothing stored), and a campaign through a unit runner (one evaluator per unit, so one
# unit at a time whatever the option) reports each search's GPUs, start and end in its JSON, the second unit
# starting after the first ended.
. "$FT_TEST_LIB"
cp "$FATUNE_SOURCE_DIR/tests/data/campaign_two_causal.yaml" "$T/two.yaml"
A="--arch sm_90 --campaign $T/two.yaml --space $SPACES/attention.yaml --strategy model --race off --budget 2 --jobs 2 --quiet --json --runner fake:@ms=1"

run search $A --parallel-units maybe --db "$T/bad.db"
expect_bad_input "bad --parallel-units 'maybe': use on or off"
[ ! -e "$T/bad.db" ] || fail "bad input created the database"
run search $A --units-per-gpu 9 --db "$T/bad.db"
expect_bad_input "--units-per-gpu 9 is out of range: use 1 to 4"
[ ! -e "$T/bad.db" ] || fail "bad input created the database"

for v in on off; do
	run search $A --parallel-units $v --db "$T/$v.db"; expect_rc 0
	python3 - "$T/out" <<'PY' || fail "--parallel-units $v: the JSON's schedule"
import json, sys
units = [json.loads(l) for l in open(sys.argv[1]) if '"shape"' in l]
assert len(units) == 2, units
s = [u["spaces"][0] for u in units]
for x in s:
    assert x["gpus"] == 1 and 0 <= x["started_s"] <= x["ended_s"], x
assert s[1]["started_s"] >= s[0]["ended_s"], s
PY
done
