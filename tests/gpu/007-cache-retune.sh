# 007-cache-retune: a re-tune at a new sequence length reuses every CUBIN it can: it compiles
# only the compile-time configs that S=1024 admits and S=512 did not (both spaces' constraints
# depend on S: split-KV and a merged-in-kernel combine need enough KV tiles, a persistent grid
# needs more work tiles than SMs), at least one CUBIN per such config and at most one per such
# candidate, and nothing else. The bounds come from `fatune check` of each space at both lengths.
. "$FT_TEST_LIB"
gpu_or_skip
arch=$("$FATUNE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["arch"])')
# new_configs SPACE...: "LO HI" - the compile-time configs (and candidates) S=1024 adds over S=512
new_configs() {
	local sp s
	for sp in "$@"; do
		for s in 512 1024; do
			"$FATUNE" check --arch "$arch" --space "$SPACES/$sp" --shape 1x8x${s}x64 --format json \
				>"$T/check.$sp.$s" 2>"$T/check.$sp.$s.err" || true
		done
	done
	python3 - "$T" "$@" <<'PY'
import json, sys
def accepted(p):
    try:
        rows = json.load(open(p))
    except ValueError:          # a space check refuses on this arch (wgmma off Hopper): nothing searched
        return []
    return [r["config"] for r in rows if r["status"] == "accepted"]
def compiled(cfg):              # NUM_SPLITS is a launch value: not part of the CUBIN
    return ",".join(kv for kv in cfg.split(",") if not kv.startswith("NUM_SPLITS="))
lo = hi = 0
for sp in sys.argv[2:]:
    old = {compiled(c) for c in accepted(f"{sys.argv[1]}/check.{sp}.512")}
    new = [c for c in accepted(f"{sys.argv[1]}/check.{sp}.1024") if compiled(c) not in old]
    lo += len({compiled(c) for c in new})
    hi += len(new)
print(lo, hi)
PY
}
# within LO HI: the last search's JSON compiled between LO and HI CUBINs and hit the cache
within() {
	python3 - "$T/out" "$1" "$2" <<'PY'
import json, sys
s, lo, hi = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
n = s["compiles"] + s.get("prefetch_compiles", 0)   # compiles ahead for the next space count too
assert lo <= n <= hi and s["cache_hits"] > 0, (s["compiles"], s.get("prefetch_compiles"), s["cache_hits"], lo, hi)
PY
}
# 1. the mma space alone
set -- $(new_configs attention.yaml)
run search --shape 1x8x512x64 --space "$SPACES/attention.yaml" --quiet --json; expect_rc 0
run search --shape 1x8x1024x64 --space "$SPACES/attention.yaml" --quiet --json; expect_rc 0
cat "$T/out"
within "$1" "$2" || fail "the mma space's re-tune compiled outside [$1, $2] (its new configs)"
echo "mma space: $1 to $2 new CUBINs expected"
# 2. the default spaces, a new database and cache
export FATUNE_DB="$T/default.db" FATUNE_CACHE_DIR="$T/cache2"
set -- $(new_configs attention.yaml attention_sm90.yaml)
[ "$arch" != sm_90 ] || [ -s "$T/check.attention_sm90.yaml.512" ] ||
	fail "check refused the wgmma space on sm_90: $(cat "$T/check.attention_sm90.yaml.512.err")"
run search --shape 1x8x512x64 --quiet --json; expect_rc 0
run search --shape 1x8x1024x64 --quiet --json; expect_rc 0
cat "$T/out"
within "$1" "$2" || fail "the default re-tune compiled outside [$1, $2] (new configs of both spaces)"
echo "ok (default spaces: $1 to $2 new CUBINs expected)"
