# 015-family-arch: a space whose template family needs another arch is skipped with the reason, never
# searched or stored: on sm_89 the Hopper space (family wgmma, sm_90a only) given with --space is skipped
# beside a space that runs, refused alone, and refused by check; the default search of sm_89 does not
# consider it at all, and the default search of sm_90 includes it.
. "$FT_TEST_LIB"
HOPPER="$SPACES/attention_sm90.yaml"
why="family 'wgmma' needs Hopper \(sm_90\)"
# beside a space that runs: skipped with the reason, the other searched as alone
run search --arch sm_89 --space "$HOPPER" --space "$TESTSPACES/fault.yaml" --shape 1x2x64x64 --quiet --json
expect_rc 0 "search with a skipped space"
expect_err "skipping space 'attention_sm90' .*: $why"
python3 - "$T/out" <<'PY' || fail "the skipped space was searched"
import json, sys
s = json.load(open(sys.argv[1]))
assert [x["space"] for x in s["spaces"]] == ["fault"], s["spaces"]
assert s["spaces"][0]["family"] == "cuda" and s["status"]["compiled"] > 0, s
PY
[ "$(sql "$FATUNE_DB" "SELECT group_concat(DISTINCT template_name) FROM runs")" = fault ] ||
	fail "a run of the skipped space was stored"
# alone: nothing can run, one error line with the reason, exit 2, nothing stored
n=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials")
run search --arch sm_89 --space "$HOPPER" --shape 1x8x512x64 --quiet
expect_bad_input "no space is searched for 1x8x512x64 on sm_89 \\(space 'attention_sm90': $why: "
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials")" -eq "$n" ] || fail "the refused search stored trials"
# check: one line naming the space and the reason, for every arch but sm_90
for a in sm_80 sm_89 sm_100 sm_120; do
	run check --arch $a --space "$HOPPER" --shape 1x8x512x64
	expect_bad_input "space 'attention_sm90' .*cannot run here: $why"
done
run check --arch sm_90 --space "$HOPPER" --shape 1x8x512x64 --format json; expect_rc 0 "check sm_90"
# the default spaces: sm_89 never mentions the Hopper space; sm_90 checks both, the Hopper space (its family is
# made for the arch) first (no compile: --budget 1)
run search --arch sm_89 --shape 1x8x512x64 --budget 1 --quiet --json --db "$T/d89.db"; expect_rc 0
! grep -q attention_sm90 "$T/out" "$T/err" || { cat "$T/err"; fail "sm_89's default search considered the Hopper space"; }
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert [x["space"] for x in s["spaces"]]==["attention"], s["spaces"]' "$T/out" ||
	fail "sm_89's default spaces"
run search --arch sm_90 --shape 1x8x512x64 --budget 1 --quiet --json --db "$T/d90.db"; expect_rc 0
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert [(x["space"], x["family"]) for x in s["spaces"]]==[("attention_sm90","wgmma"),("attention","mma")], s["spaces"]' "$T/out" ||
	fail "sm_90's default spaces are not attention_sm90 and attention, in that order"
echo "ok"
