# 124-seeds-from: `search --strategy transfer --seeds-from DB` starts from the best configs of another GPU's
# database. Replayed over the recorded H100 campaign (tests/data/recorded_h100_campaign.sql, the mma space, in
# campaign order) with the bests of suite24 tuned on an H200 (tests/data/h200_suite24_best.sql): the campaign
# evaluates fewer candidates than without them and ends every unit at the same best; the units say how many seeds
# came from another GPU. The seed database is input: it is never written (an older schema is read through a
# copy), and a missing file, a file that is no fatune database, one with a planted view, or --seeds-from without
# transfer is one line and exit 2 with nothing stored.
. "$FT_TEST_LIB"
sql_load "$T/rec.db" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
sql_load "$T/seeds.db" "$FATUNE_SOURCE_DIR/tests/data/h200_suite24_best.sql"
cat >"$T/camp.yaml" <<'YAML'
fatune_campaign: 1
name: rec12
shapes:
  - {shape: 1x8x512x64, dtype: fp16, causal: [0, 1]}
  - {shape: 1x8x8192x64, dtype: fp16, causal: [0, 1]}
  - {shape: 16x16x512x64, dtype: fp16, causal: [0, 1]}
  - {shape: 1x16x1024x128, dtype: bf16, causal: [0, 1]}
  - {shape: 2x20x1536x128, dtype: fp16, causal: [0, 1]}
  - {shape: 4x16x2048x128, dtype: fp16, causal: [0, 1]}
YAML
R="--replay $T/rec.db --arch sm_90 --space $FATUNE_SOURCE_DIR/search_spaces/attention.yaml --campaign $T/camp.yaml"
R="$R --strategy transfer --jobs 1 --quiet --json"
sum_before=$(sha256sum "$T/seeds.db" | cut -d' ' -f1)

run search $R --db "$T/plain.db"; expect_rc 0 "the campaign without seeds"
cp "$T/out" "$T/plain.json"
run search $R --db "$T/seeded.db" --seeds-from "$T/seeds.db"; expect_rc 0 "the campaign with --seeds-from"
cp "$T/out" "$T/seeded.json"
python3 - "$T/plain.json" "$T/seeded.json" <<'PY' || fail "--seeds-from did not pay, or changed a best"
import json, sys
def units(p):
    return {(r["shape"], r["causal"]): r for r in map(json.loads, open(p)) if "shape" in r}
ev = lambda r: sum(v for k, v in r["status"].items() if not k.startswith("rejected") and k != "not_in_recording")
plain, seeded = units(sys.argv[1]), units(sys.argv[2])
assert plain.keys() == seeded.keys() and len(plain) == 12, (plain.keys(), seeded.keys())
for k in plain:
    assert plain[k]["best"]["t_median_us"] == seeded[k]["best"]["t_median_us"], (k, plain[k]["best"], seeded[k]["best"])
e0, e1 = sum(map(ev, plain.values())), sum(map(ev, seeded.values()))
other = [s.get("seeds_other_gpu", 0) for r in seeded.values() for s in r["spaces"]]
first = seeded[("16x16x512x64", 0)]["spaces"][0]
print(f"evaluations: {e0} without seeds, {e1} with the H200's; seeds from another GPU per unit: {other}")
# the head-dim group's first unit has no neighbour of its own: all its seeds are the H200's
assert e1 < e0 * 0.9 and first.get("seeds", 0) > 0 and first["seeds_other_gpu"] == first["seeds"], (e0, e1, first)
PY
# the text summary says where the seeds came from
run search --replay "$T/rec.db" --arch sm_90 --space "$FATUNE_SOURCE_DIR/search_spaces/attention.yaml" --shape 16x16x512x64 \
	--strategy transfer --jobs 1 --db "$T/text.db" --seeds-from "$T/seeds.db"
expect_rc 0; expect_out "transfer: started from the best of [0-9]+ tuned neighbours?, on another GPU"
# never written: the same bytes, no WAL or shared-memory file beside it
[ "$(sha256sum "$T/seeds.db" | cut -d' ' -f1)" = "$sum_before" ] || fail "--seeds-from wrote to the seed database"
[ ! -e "$T/seeds.db-wal" ] && [ ! -e "$T/seeds.db-shm" ] || fail "--seeds-from left files beside the seed database"
# an older schema (the recording is schema 2) is read through a copy, never upgraded in place
old_sum=$(sha256sum "$T/rec.db" | cut -d' ' -f1)
cp "$T/rec.db" "$T/old.db"
run search $R --db "$T/old-seeded.db" --seeds-from "$T/old.db"; expect_rc 0 "seeds from a schema-2 database"
[ "$(sha256sum "$T/old.db" | cut -d' ' -f1)" = "$old_sum" ] || fail "--seeds-from upgraded an older database in place"

# bad input: one line, exit 2, no tuning database made
U="--replay $T/rec.db --arch sm_90 --space $FATUNE_SOURCE_DIR/search_spaces/attention.yaml --shape 1x8x512x64 --jobs 1"
run search $U --strategy transfer --db "$T/bad.db" --seeds-from "$T/missing.db"
expect_bad_input "missing.db"
run search $U --strategy guided --db "$T/bad.db" --seeds-from "$T/seeds.db"
expect_bad_input "--seeds-from seeds the transfer strategy: add --strategy transfer"
echo "not a database" >"$T/text.txt"
run search $U --strategy transfer --db "$T/bad.db" --seeds-from "$T/text.txt"
expect_bad_input "seed database '.*text.txt'.*leave it out of --seeds-from"
sql "$T/other.db" "CREATE TABLE t (x); INSERT INTO t VALUES (1);"
run search $U --strategy transfer --db "$T/bad.db" --seeds-from "$T/other.db"
expect_bad_input "seed database '.*other.db' is another SQLite database, not a fatune database"
cp "$T/seeds.db" "$T/view.db"
sql "$T/view.db" "CREATE VIEW v AS SELECT 1;"
run search $U --strategy transfer --db "$T/bad.db" --seeds-from "$T/view.db"
expect_bad_input "seed database '.*view.db' is not fatune's schema [0-9]+: it holds"
[ ! -e "$T/bad.db" ] || fail "a refused --seeds-from left a tuning database"
echo "ok"
