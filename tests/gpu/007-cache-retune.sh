# 007-cache-retune: a re-tune at a new sequence length reuses every CUBIN it can. The mma space's
# accepted configs do not depend on S: it compiles nothing. The wgmma space's constraints do (a
# persistent grid needs more work tiles than SMs, deeper KV rings and splits need more KV tiles), so
# on sm_90 the default search compiles the configs S=1024 admits that S=512 did not - at least one
# CUBIN per such config, at most one per such candidate - and nothing else.
. "$FT_TEST_LIB"
gpu_or_skip
arch=$("$FATUNE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["arch"])')
# 1. the mma space alone
run search --shape 1x8x512x64 --space "$SPACES/attention.yaml" --quiet --json; expect_rc 0
run search --shape 1x8x1024x64 --space "$SPACES/attention.yaml" --quiet --json; expect_rc 0
cat "$T/out"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["compiles"]==0 and s["cache_hits"]>0, s' "$T/out" ||
	fail "the mma space's re-tune compiled again"
# 2. the default spaces, a new database and cache
export FATUNE_DB="$T/default.db" FATUNE_CACHE_DIR="$T/cache2"
for s in 512 1024; do
	"$FATUNE" check --arch "$arch" --space "$SPACES/attention_sm90.yaml" --shape 1x8x${s}x64 --format json \
		>"$T/check.$s" 2>"$T/check.$s.err" || true
done
bounds=$(python3 - "$T/check.512" "$T/check.1024" <<'PY'
import json, sys
def accepted(p):
    try:
        rows = json.load(open(p))
    except ValueError:          # not Hopper: check refuses the wgmma space, nothing is searched
        return []
    return [r["config"] for r in rows if r["status"] == "accepted"]
def compiled(cfg):              # NUM_SPLITS is a launch value: not part of the CUBIN
    return ",".join(kv for kv in cfg.split(",") if not kv.startswith("NUM_SPLITS="))
old = {compiled(c) for c in accepted(sys.argv[1])}
new = [c for c in accepted(sys.argv[2]) if compiled(c) not in old]
print(len({compiled(c) for c in new}), len(new))
PY
)
set -- $bounds
lo=$1 hi=$2
[ "$arch" != sm_90 ] || [ -s "$T/check.512" ] || fail "check refused the wgmma space on sm_90: $(cat "$T/check.512.err")"
run search --shape 1x8x512x64 --quiet --json; expect_rc 0
run search --shape 1x8x1024x64 --quiet --json; expect_rc 0
cat "$T/out"
python3 - "$T/out" "$lo" "$hi" <<'PY' || fail "the default re-tune compiled outside [$lo, $hi] (new wgmma configs)"
import json, sys
s, lo, hi = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
assert lo <= s["compiles"] <= hi and s["cache_hits"] > 0, (s["compiles"], s["cache_hits"], lo, hi)
PY
echo "ok (default spaces: $lo to $hi new wgmma CUBINs expected)"
