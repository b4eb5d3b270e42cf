# 125-prefetch-seeds: in a transfer campaign the prefetch compiles the next search's seeds first
# (search/prefetch.h): the next unit's first seed - here a config the model ranks anywhere, the best of a
# random search of the other causal flag in a --seeds-from database - is found in the CUBIN cache when that
# unit starts (its trial has no compile time), with the fake runner loading real CUBINs (fake:@cubin, NVRTC needs
# no GPU) and taking 800 ms per evaluation (a tail the prefetch can start in).
. "$FT_TEST_LIB"
S="--arch sm_90 --space $SPACES/attention.yaml --race off --jobs 2 --quiet --json"
# the seeds: a random search's best of 1x8x512x64 causal (its own cache: the campaign below starts cold)
FATUNE_CACHE_DIR="$T/c_seeds" run search $S --shape 1x8x512x64 --causal --strategy random --seed 5 --budget 3 \
	--runner fake:@cubin,@ms=1 --db "$T/seeds.db"
expect_rc 0 "the seed search"
seed=$(sql "$T/seeds.db" "SELECT config FROM best WHERE causal = 1")
[ -n "$seed" ] || fail "the seed search stored no best"
# two units with no CUBIN in common
cp "$FATUNE_SOURCE_DIR/tests/data/campaign_two_causal.yaml" "$T/two.yaml"
compile_ms_of() {	# $1 db: the compile time of the seed's trial in the causal unit
	sql "$1" "SELECT coalesce(t.compile_ms, -1) FROM trials t JOIN runs r ON r.id = t.run_id
		WHERE r.causal = 1 AND t.config = '$seed' ORDER BY t.id LIMIT 1"
}
FATUNE_CACHE_DIR="$T/c_on" run search $S --campaign "$T/two.yaml" --strategy transfer --budget 4 \
	--seeds-from "$T/seeds.db" --runner fake:@cubin,@ms=800 --db "$T/on.db"
expect_rc 0 "the campaign"
python3 - "$T/out" <<'PY' || fail "the causal unit did not run second, seeded"
import json, sys
u = [json.loads(l) for l in open(sys.argv[1]) if '"shape"' in l]
assert [r["causal"] for r in u] == [0, 1], [r["causal"] for r in u]
assert u[0]["prefetch_compiles"] >= 0 and u[1]["spaces"][0]["seeds"] >= 1, u[1]
PY
ms=$(compile_ms_of "$T/on.db")
[ -n "$ms" ] || fail "the causal unit never evaluated its seed $seed"
python3 -c "import sys; sys.exit(0 if float('$ms') == 0 else 1)" ||
	fail "the causal unit compiled its seed itself ($ms ms): the prefetch did not compile it first"
echo ok
