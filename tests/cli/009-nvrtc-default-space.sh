# 009-nvrtc-default-space (slow): NVRTC compiles every candidate of the default space for sm_80,
# sm_89 and sm_90 - each head dim, dtype and causal flag - with no failure and no spill.
. "$FT_TEST_LIB"
export FATUNE_CACHE_DIR="${FATUNE_TEST_CACHE:-$T/cache}"
total=0
for arch in sm_80 sm_89 sm_90; do
	for d in 32 64 128; do
		for flags in "--dtype fp16" "--dtype bf16 --causal"; do
			run check --all --arch $arch --shape 1x8x512x$d $flags --compile --format json
			cat "$T/err"
			expect_rc 0 "$arch d$d $flags"
			n=$(python3 - "$T/out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
bad = [r for r in rows if r["status"] in ("compile_failed", "spills")]
assert not bad, bad[:3]
print(sum(1 for r in rows if r["status"] == "compiled"))
PY
) || fail "$arch d$d $flags: compile failures or spills"
			[ "$n" -gt 0 ] || fail "$arch d$d $flags: nothing compiled"
			total=$((total + n))
		done
	done
done
echo "ok ($total candidates compiled)"
