# 123-dispatch-derive-only: the dispatch table never hands out an entry whose derived parameters are not what
# the problem's shape derives, also in a space that keeps no equality constraint beside its derives. The
# shipped attention space is copied with its three equality constraints (warps_own_16_or_32_rows,
# pack_iff_gqa, dense_iff_rows_dense) removed, DENSE_KV derived as a choice [0, dense], and a new derived
# LONG_KV = (S_KV > 1024) that nothing else reads; rows come from `search --runner fake` (no GPU, no compile)
# at shapes on both sides of S_KV = 1024 and of H_KV = 1 in bshd. The C table is compiled with cc, 60,000
# random shapes are drawn and each of their picks (over 10,000) is checked by `fatune check --pairs`, which
# applies the derived guards to a given config; the JSON consumer (tests/data/dispatch_json_pick.py) picks
# what the C table picks, and without the JSON's derived tests it would not: the test fails on a table that
# checks the constraints only.
. "$FT_TEST_LIB"
S="$T/derive_only.yaml"
python3 - "$SPACES/attention.yaml" "$S" "$FATUNE_SOURCE_DIR/kernel_templates/attention.cu" <<'PY' || fail "cannot write the space"
import re, sys
src, dst, template = sys.argv[1:]
s = open(src).read()
s = s.replace("name: attention\n", "name: derive_only\n", 1)
s = s.replace("file: ../kernel_templates/attention.cu", "file: " + template, 1)
for c in ("warps_own_16_or_32_rows", "pack_iff_gqa", "dense_iff_rows_dense"):
    s, n = re.subn(r"\n  " + c + r":[^\n]*", "", s)
    assert n == 1, c
old = "  DENSE_KV: iif(LAYOUT == 0 OR H_KV == 1, 1, 0)\n"
assert old in s
s = s.replace(old, "  DENSE_KV: [0, iif(LAYOUT == 0 OR H_KV == 1, 1, 0)]\n  LONG_KV: iif(S_KV > 1024, 1, 0)\n", 1)
open(dst, "w").write(s)
PY
# the derived names are under derive: and in no constraint
grep -qE '^  [a-z_]+: (TILE_M|PACK_GQA|DENSE_KV|LONG_KV) ==' "$S" && fail "the space still has an equality constraint"

F="--arch sm_90 --space $S --runner fake --quiet"
run search $F --shape 1x8x512x64 --shape 1x8x4096x64 --shape 2x16x2048x128 --shape 1x8x1024x64 \
	--shape 1x1x512x64,layout=bshd --shape 2x1x2048x64,layout=bshd --shape 1x1x256x128,layout=bshd \
	--shape 1x4x1024x64,layout=bshd --shape 2x1x4096x64,layout=bshd --shape 4x1x768x64,layout=bshd \
	--shape 4x16x1x128,kv_heads=2,kv_len=512,layout=bshd --shape 8x32x1x64,kv_heads=4,kv_len=4096,layout=bshd \
	--shape 4x16x1x128,kv_heads=1,kv_len=2048,layout=bshd --shape 2x8x1x64,kv_heads=1,kv_len=256,layout=bshd \
	--shape 1x32x512x128,kv_heads=8,kv_len=4096,layout=bshd --shape 1x16x256x64,kv_heads=4,kv_len=768,layout=bshd
expect_rc 0 "fake searches"
run search $F --causal --shape 1x8x512x64 --shape 2x8x2048x64 --shape 1x4x512x64,layout=bshd --shape 1x1x3000x64,layout=bshd
expect_rc 0 "fake searches, causal"
run search $F --dtype bf16 --shape 2x8x1024x128 --shape 1x8x8192x128
expect_rc 0 "fake searches, bf16"
# the database must hold what makes the derives matter: both LONG_KV values within one kind, and DENSE_KV=1 in bshd
# (a choice only where H_KV = 1)
[ "$(sql "$FATUNE_DB" "SELECT count(DISTINCT config LIKE '%LONG_KV=1%') FROM best WHERE space_name = 'derive_only'
	AND layout = 'bhsd' AND d = 64 AND causal = 0 AND dtype = 'fp16'")" -eq 2 ] || fail "no rows on both sides of S_KV = 1024"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM best WHERE layout = 'bshd' AND h_kv = 1 AND config LIKE '%DENSE_KV=1%'")" -ge 1 ] ||
	fail "no bshd row with DENSE_KV=1: the choice is never exercised (the fake runner's times changed: add shapes)"

run export --dispatch --arch sm_90 --space "$S" --style c -o "$T/dispatch_c.h" --allow-replayed; expect_rc 0
grep -q "derived 'LONG_KV'" "$T/dispatch_c.h" || fail "the eval function does not test LONG_KV"
cat >"$T/prop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "dispatch_c.h"
#define PROP_SEED 0x2545f4914f6cdd1dULL
#include "prop_rng.h"
int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0, picked = 0, longkv = 0, dense_bshd = 0;
	FILE *drawn = argc > 2 ? fopen(argv[2], "w") : NULL;	/* every problem and its pick, for the JSON side */
	long long g[10];
	if (!drawn)
		return 1;
	for (int i = 0; i < n; i++) {
		/* near a random entry (its D, dtype, causal, layout and kind), else anywhere */
		const struct fatune_dispatch_entry *t = &fatune_dispatch_table[rnd(FATUNE_DISPATCH_COUNT)], *e;
		int any = rnd(10) == 0, d = any ? (rnd(2) ? 64 : 128) : t->head_dim, bf16 = any ? (int)rnd(2) : t->bf16;
		int causal = any ? (int)rnd(2) : t->causal, bshd = any ? (int)rnd(2) : t->bshd;
		int grp = any ? 1 << rnd(4) : t->heads / t->kv_heads, hkv = rnd(3) ? 1 << rnd(4) : 1, b = logu(1, 64);
		int s = t->seq_len == 1 && !any ? 1 : logu(1, 16384), kv = t->kv_len == t->seq_len && !any ? s : logu(1, 65536);
		if (grp == 1 && rnd(2))
			hkv = 1 + (int)rnd(12);
		int h = hkv * grp;
		e = fatune_dispatch_pick(d, bf16, causal, b, h, s, kv, hkv, bshd);
		fprintf(drawn, "%d %d %d %d %d %d %d %d %d %d\n", d, bf16, causal, b, h, s, kv, hkv, bshd,
			e ? (int)(e - fatune_dispatch_table) : -1);
		if (!e)
			continue;
		picked++;
		longkv += e->long_kv;
		dense_bshd += e->dense_kv && bshd;
		if (!fatune_dispatch_eval(e, b, h, hkv, s, kv, bshd, g)) { printf("pick not valid by its own eval\n"); return 1; }
		printf("%dx%dx%dx%d,kv_heads=%d,kv_len=%d,layout=%s %s %d NUM_WARPS_PER_BLOCK=%d,TILE_M=%d,TILE_N=%d,"
		       "KV_STAGES=%d,PACK_GQA=%d,DENSE_KV=%d,NUM_SPLITS=%d,COMBINE_IN_KERNEL=%d,PDL=%d,LONG_KV=%d\n",
		       b, h, s, d, hkv, kv, bshd ? "bshd" : "bhsd", bf16 ? "bf16" : "fp16", causal, e->num_warps_per_block,
		       e->tile_m, e->tile_n, e->kv_stages, e->pack_gqa, e->dense_kv, e->num_splits, e->combine_in_kernel, e->pdl,
		       e->long_kv);
	}
	if (fclose(drawn))
		return 1;
	fprintf(stderr, "%d of %d shapes picked, %d with LONG_KV=1, %d bshd with DENSE_KV=1\n", picked, n, longkv, dense_bshd);
	return picked < n / 8 || longkv < picked / 10 || longkv > picked - picked / 10 || dense_bshd < 1;
}
C
cc -std=c11 -Wall -Wextra -Werror -I"$T" -I"$FATUNE_SOURCE_DIR/tests/data" -o "$T/prop" "$T/prop.c" || fail "the C dispatch table does not compile"
"$T/prop" 60000 "$T/drawn" >"$T/picks" 2>"$T/prop.err" || { tail -n 3 "$T/picks" "$T/prop.err" >&2; fail "too few picks, or too few of each derived value"; }
[ "$(wc -l <"$T/picks")" -ge 10000 ] || fail "fewer than 10,000 picks to check"
run check --arch sm_90 --space "$S" --pairs "$T/picks"
expect_rc 0 "a picked config is rejected by fatune check: $(grep -m3 rejected "$T/out")"
[ "$(wc -l <"$T/out")" -eq "$(wc -l <"$T/picks")" ] || fail "check answered $(wc -l <"$T/out") of $(wc -l <"$T/picks") pairs"

# the JSON table: a consumer that reads only the JSON picks exactly what the checked C table picks
run export --dispatch --format json --arch sm_90 --space "$S" -o "$T/dispatch.json" --allow-replayed; expect_rc 0
python3 "$FATUNE_SOURCE_DIR/tests/data/dispatch_json_pick.py" "$T/dispatch.json" "$T/drawn" >"$T/json.out" ||
	{ cat "$T/json.out" >&2; fail "the JSON table's picks differ from the C table's"; }
[ "$(wc -l <"$T/drawn")" -ge 10000 ] || fail "fewer than 10,000 problems drawn"
# without the derived tests (what the table checked before: the constraints only) the picks differ, and
# those picks are configs fatune check rejects
python3 - "$T/dispatch.json" <<'PY' || fail "cannot edit the JSON"
import json, sys
t = json.load(open(sys.argv[1]))
assert [x["name"] for x in t["check"]["derived"]] == ["TILE_M", "PACK_GQA", "DENSE_KV", "LONG_KV"], t["check"]["derived"]
t["check"]["derived"] = []
json.dump(t, open(sys.argv[1] + ".loose", "w"))
PY
python3 "$FATUNE_SOURCE_DIR/tests/data/dispatch_json_pick.py" "$T/dispatch.json.loose" "$T/drawn" >"$T/loose.out" &&
	fail "a JSON consumer without the derived tests picks like the C table: the test cannot fail"
echo "ok: $(cat "$T/prop.err"); JSON: $(tail -n 1 "$T/json.out"); without the derived tests: $(tail -n 1 "$T/loose.out")"
