# 131-replay-spaces: a replay answers each space from its own template's trials, so a campaign replays
# both default spaces of sm_90 (the recorded H100 campaign, no GPU). The later (mma) space searches behind
# the unit's best from the Hopper space (the incumbent): while behind it, it stops after
# FT_TRANSFER_PATIENCE_BEHIND (12) results without beating it (transfer.h), and every unit still ends at the
# recording's optimum over both spaces; a recording without the second template is refused naming it.
. "$FT_TEST_LIB"
REC="$T/rec.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
run search --replay "$REC" --arch sm_90 --campaign "$FATUNE_SOURCE_DIR/bench/campaigns/hopper.yaml" \
	--strategy transfer --space "$SPACES/attention_sm90.yaml" --space "$SPACES/attention.yaml" \
	--db "$T/o.db" --quiet --json
expect_rc 0
python3 - "$T/out" "$REC" <<'PY' || fail "the replay of both spaces: see above"
import json, sqlite3, sys
rec = sqlite3.connect(sys.argv[2])
units = [json.loads(l) for l in open(sys.argv[1]) if '"spaces"' in l]
assert len(units) == 12, len(units)
for u in units:
    sp = {s["space"]: s for s in u["spaces"]}
    assert set(sp) == {"attention_sm90", "attention"}, list(sp)
    b, h, s, d = (int(x) for x in u["shape"].split("x"))
    opt = rec.execute("""SELECT min(t.t_median_us) FROM trials t JOIN runs r ON r.id = t.run_id
                         WHERE t.status = 'ok' AND r.b = ? AND r.h = ? AND r.s = ? AND r.d = ? AND r.causal = ?""",
                      (b, h, s, d, u["causal"])).fetchone()[0]
    assert abs(u["best"]["t_median_us"] - opt) < 1e-6 * opt, (u["shape"], u["causal"], u["best"], opt)
    mma = sp["attention"]
    # results: a candidate the recording lacks is none (the guide does not count it)
    n = sum(v for k, v in mma["status"].items() if not k.startswith("rejected") and k != "not_in_recording")
    # behind the Hopper space's best all along here: the seeds (at most 4) then 12 results, or the
    # 8 random picks of an unseeded search then 4 more
    assert mma["best"]["t_median_us"] > u["best"]["t_median_us"], (u["shape"], mma["best"])
    assert n <= 16, (u["shape"], u["causal"], n, mma["status"])
PY
# a recording of one template only: the second space is refused naming its template (exit 2), and what the
# first space's search stored stays
sql_load "$T/h200.db" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
run search --replay "$T/h200.db" --arch sm_90 --shape 1x8x512x64 --space "$SPACES/attention.yaml" \
	--space "$SPACES/attention_sm90.yaml" --db "$T/one.db" --quiet
expect_bad_input "holds no timed trial for sm_90 1x8x512x64 fp16 of template 'attention_sm90'"
[ "$(sql "$T/one.db" "SELECT count(*) FROM trials t JOIN runs r ON r.id = t.run_id WHERE r.space_name = 'attention' AND t.status = 'ok'")" -gt 0 ] ||
	fail "the first space's trials were not kept"
