# 081-cache-damage: a cached CUBIN cut short or altered, or whose stored hash is gone, or whose resource numbers (.res) were
# edited, is compiled again, never handed back; the new entry is whole.
. "$FT_TEST_LIB"
summary() { grep -oE "[0-9]+ compiled, [0-9]+ cache hits" "$T/err"; }
check() { run check --arch sm_90 --shape 1x2x64x64 --space "$TESTSPACES/fault.yaml" --compile --format csv; expect_rc 0; summary; }
[ "$(check)" = "12 compiled, 0 cache hits" ] || fail "cold cache: $(summary)"
C="$FATUNE_CACHE_DIR/cubin"
set -- $(ls "$C"/*.cubin | sort | head -4)
[ $# -eq 4 ] || fail "expected cached CUBINs in $C"
size=$(stat -c %s "$1")
truncate -s $((size / 2)) "$1"                                    # cut short (a full disk)
python3 - "$2" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 3] ^= 0x01                                            # one bit flipped
open(p, "wb").write(bytes(b))
PY
head -n 2 "${3%.cubin}.res" >"$T/res" && cp "$T/res" "${3%.cubin}.res"   # no hash: an older fatune's
awk 'NR == 1 { $4 = 64; $5 = 64 } { print }' "${4%.cubin}.res" >"$T/res" && cp "$T/res" "${4%.cubin}.res"  # spills edited in
[ "$(check)" = "4 compiled, 8 cache hits" ] || fail "damaged entries were handed back: $(summary)"
[ "$(stat -c %s "$1")" -eq "$size" ] || fail "the cut-short CUBIN was not replaced"
grep -q '^xxh64r [0-9a-f]\{16\} [0-9]\+$' "${3%.cubin}.res" || fail "the recompiled entry has no hash"
grep -q '^[0-9]* [0-9]* [0-9]* 0 0 [0-9]*$' "${4%.cubin}.res" || fail "the edited spills survived the recompile"   # regs smem local spill-stores spill-loads wgmma-note
grep -q 'spills 0' "$T/err" || fail "the edited spills became a verdict: $(cat "$T/err")"
[ "$(check)" = "0 compiled, 12 cache hits" ] || fail "recompiled entries not reused: $(summary)"
echo "ok"
