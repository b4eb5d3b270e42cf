# 130-incumbent: within a unit, each space's transfer search after the first gets the unit's best so far as
# its incumbent (search.h, strategy.h ft_guide_incumbent): a space that cannot beat it stops after its patience.
# With the fake runner (hashed times, no GPU): the mma space searched after the Hopper one evaluates fewer
# candidates than searched alone, and its best is no better than the unit's; by default on sm_90 the
# arch-specific family's space (attention_sm90) is searched first (family.h arch_specific; tests/cli/015 too).
. "$FT_TEST_LIB"
A="--arch sm_90 --shape 1x8x512x64 --strategy transfer --runner fake --json --quiet"
evals() {	# the evaluations of space $1 in the JSON line on stdout
	python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); s=[x for x in r["spaces"] if x["space"]==sys.argv[2]][0]; print(sum(v for k,v in s["status"].items() if not k.startswith("rejected")))' "$T/out" "$1"
}
run search $A --space "$SPACES/attention.yaml" --db "$T/alone.db"; expect_rc 0
alone=$(evals attention)
run search $A --space "$SPACES/attention_sm90.yaml" --space "$SPACES/attention.yaml" --db "$T/after.db"; expect_rc 0
after=$(evals attention)
[ "$after" -lt "$alone" ] || fail "the mma space evaluated $after candidates after the Hopper space, $alone alone: no incumbent"
python3 - "$T/out" <<'PY' || fail "the unit's best is not the Hopper space's"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
sp = {s["space"]: s["best"]["t_median_us"] for s in r["spaces"]}
assert r["best"]["space"] == "attention_sm90" and sp["attention"] >= sp["attention_sm90"], sp
PY
# the default spaces on sm_90 (no GPU here: the feasibility part, one candidate each)
FATUNE_CACHE_DIR="$T/c" run search --arch sm_90 --shape 1x8x512x64 --budget 1 --json --quiet --db "$T/def.db"; expect_rc 0
[ "$(python3 -c 'import json,sys; print(" ".join(s["space"] for s in json.loads(open(sys.argv[1]).readline())["spaces"]))' "$T/out")" = \
  "attention_sm90 attention" ] || fail "default spaces on sm_90 not in the order attention_sm90, attention: $(cat "$T/out")"
