# 074-dispatch-property: the dispatch table never hands out a config fatune would reject. From a
# database made by replaying the recorded H100 campaign (MHA prefill, bhsd) plus grouped-query decode
# and chunked-prefill rows in bshd, the C table is compiled with cc; 24,000 random shapes in its
# domain are picked and every pick is checked by `fatune check --pairs` (the search's own model
# check), launch geometry included. The issue's repro (an MHA prefill getting a PACK_GQA=1 decode
# config) is asked for by name. The JSON table is checked against the C table on the same problems by a
# consumer that reads only the JSON (tests/data/dispatch_json_pick.py: its "check" evaluated with sqlite3).
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
run search --replay "$REC" --arch sm_90 --campaign "$FATUNE_SOURCE_DIR/bench/campaigns/hopper.yaml" --quiet
expect_rc 0 "replaying the recorded campaign"

# serving rows (bshd, grouped-query): each gets the accepted config of its own shape with the most
# splits (ties: the first listed), so the table holds PACK_GQA=1, DENSE_KV=0, NUM_SPLITS=16-ish rows
serving() { # SHAPE DTYPE CAUSAL
	run check --arch sm_90 --shape "$1" --dtype "$2" $([ "$3" = 1 ] && echo --causal) --format csv
	cfg=$(python3 -c 'import csv,sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "accepted"]
split = lambda r: int(dict(kv.split("=") for kv in r["config"].split(","))["NUM_SPLITS"])
print(max(rows, key=split)["config"])' "$T/out") || fail "no accepted config for $1"
	python3 - "$1" "$2" "$3" "$cfg" >"$T/ins.sql" <<'PY'
import sys, re
shape, dtype, causal, cfg = sys.argv[1:]
m = re.match(r"(\d+)x(\d+)x(\d+)x(\d+),kv_heads=(\d+),kv_len=(\d+),layout=(\w+)", shape)
b, h, s, d, hkv, skv, layout = m.groups()
print(f"""INSERT INTO best (arch, device, space_name, template_hash, template_name, family, b, h, s, d, s_kv,
 h_kv, layout, dtype, causal, config, fatune_version, t_median_us, updated_at)
 SELECT arch, device, space_name, template_hash, template_name, family, {b}, {h}, {s}, {d}, {skv}, {hkv},
 '{layout}', '{dtype}', {causal}, '{cfg}', fatune_version, 10.0, updated_at FROM best
 WHERE space_name = 'attention' LIMIT 1;""")
PY
	sql_load "$FATUNE_DB" "$T/ins.sql"
}
serving 4x16x1x128,kv_heads=2,kv_len=2048,layout=bshd fp16 0
serving 16x32x1x128,kv_heads=8,kv_len=8192,layout=bshd fp16 0
serving 1x32x1x128,kv_heads=8,kv_len=32768,layout=bshd bf16 0
serving 8x32x1x64,kv_heads=4,kv_len=4096,layout=bshd fp16 0
serving 4x16x1x128,kv_heads=2,kv_len=2048,layout=bshd fp16 1
serving 1x32x512x128,kv_heads=8,kv_len=4096,layout=bshd fp16 1
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM best WHERE space_name = 'attention' AND config LIKE '%PACK_GQA=1%'")" -ge 6 ] ||
	fail "the serving rows are not grouped-query configs"

run export --dispatch --arch sm_90 --space "$SPACES/attention.yaml" --style c -o "$T/dispatch_c.h"
expect_bad_input "from a replay.*pass --allow-replayed"
run export --dispatch --arch sm_90 --space "$SPACES/attention.yaml" --style c -o "$T/dispatch_c.h" --allow-replayed; expect_rc 0
grep -q "us replayed, not measured" "$T/dispatch_c.h" || fail "replayed entries are not marked"
cat >"$T/prop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "dispatch_c.h"
#define PROP_SEED 0x9e3779b97f4a7c15ULL
#include "prop_rng.h"
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0, picked = 0, gqa = 0, untuned = 0;
	FILE *drawn = argc > 2 ? fopen(argv[2], "w") : NULL;	/* every problem and its pick, for the JSON side */
	const struct fatune_dispatch_entry *e;
	long long g[10];
	/* the issue's repro: an MHA prefill must never get a grouped-query config */
	e = fatune_dispatch_pick(128, 0, 0, 4, 16, 2048, 0, 0, 0);
	if (!e || e->pack_gqa || e->seq_len != 2048) { printf("repro: wrong pick\n"); return 1; }
	e = fatune_dispatch_pick(128, 0, 0, 4, 16, 3000, 0, 0, 0);
	if (e && e->pack_gqa) { printf("repro at S=3000: PACK_GQA=1\n"); return 1; }
	for (int i = 0; i < n; i++) {
		/* near a random entry (its D, dtype, causal, layout and kind), else anywhere */
		const struct fatune_dispatch_entry *t = &fatune_dispatch_table[rnd(FATUNE_DISPATCH_COUNT)];
		int any = rnd(10) == 0, d = any ? (rnd(2) ? 64 : 96) : t->head_dim, bf16 = any ? (int)rnd(2) : t->bf16;
		int causal = any ? (int)rnd(2) : t->causal, bshd = any ? (int)rnd(2) : t->bshd;
		int grp = any ? 1 << rnd(4) : t->heads / t->kv_heads, hkv = 1 << rnd(6), h, b = logu(1, 64);
		int s = t->seq_len == 1 && !any ? 1 : logu(1, 16384), kv = t->kv_len == t->seq_len && !any ? s : logu(1, 65536);
		if (grp == 1)
			hkv = 1 + (int)rnd(40);
		else if (rnd(4) == 0)
			grp = rnd(2) ? grp * 2 : grp / 2;
		h = hkv * grp;
		e = fatune_dispatch_pick(d, bf16, causal, b, h, s, kv, hkv, bshd);
		if (drawn)
			fprintf(drawn, "%d %d %d %d %d %d %d %d %d %d\n", d, bf16, causal, b, h, s, kv, hkv, bshd,
				e ? (int)(e - fatune_dispatch_table) : -1);
		if (!e)
			continue;
		picked++;
		gqa += e->pack_gqa;
		untuned += e->seq_len != s || e->kv_len != kv || e->batch != b || e->heads != h;
		if (!fatune_dispatch_eval(e, b, h, hkv, s, kv, bshd, g)) { printf("pick not valid by its own eval\n"); return 1; }
		printf("%dx%dx%dx%d,kv_heads=%d,kv_len=%d,layout=%s %s %d NUM_WARPS_PER_BLOCK=%d,TILE_M=%d,TILE_N=%d,"
		       "KV_STAGES=%d,PACK_GQA=%d,DENSE_KV=%d,NUM_SPLITS=%d,COMBINE_IN_KERNEL=%d,PDL=%d %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\n",
		       b, h, s, d, hkv, kv, bshd ? "bshd" : "bhsd", bf16 ? "bf16" : "fp16", causal, e->num_warps_per_block,
		       e->tile_m, e->tile_n, e->kv_stages, e->pack_gqa, e->dense_kv, e->num_splits, e->combine_in_kernel, e->pdl,
		       g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9]);
	}
	if (drawn && fclose(drawn))
		return 1;
	fprintf(stderr, "%d of %d shapes picked, %d grouped-query, %d untuned\n", picked, n, gqa, untuned);
	return picked < n / 3 || gqa < n / 50 || untuned < picked / 2;
}
C
cc -std=c11 -Wall -Wextra -Werror -I"$T" -I"$FATUNE_SOURCE_DIR/tests/data" -o "$T/prop" "$T/prop.c" || fail "the C dispatch table does not compile"
"$T/prop" 24000 "$T/drawn" >"$T/picks" 2>"$T/prop.err" || { tail -n 3 "$T/picks" "$T/prop.err" >&2; fail "too few picks, or a repro pick"; }
cut -d' ' -f1-4 "$T/picks" >"$T/pairs"
run check --arch sm_90 --space "$SPACES/attention.yaml" --pairs "$T/pairs"
expect_rc 0 "a picked config is rejected by fatune check: $(grep -m3 rejected "$T/out")"
[ "$(wc -l <"$T/out")" -eq "$(wc -l <"$T/picks")" ] || fail "check answered $(wc -l <"$T/out") of $(wc -l <"$T/picks") pairs"
# the table's launch geometry is the search's, pair by pair
cut -d' ' -f5- "$T/picks" >"$T/geom.table"
cut -d' ' -f3- "$T/out" >"$T/geom.check"
cmp -s "$T/geom.table" "$T/geom.check" || { diff "$T/geom.table" "$T/geom.check" | head -4 >&2; fail "the table's launch geometry differs from fatune's"; }
# the JSON table: a consumer that reads only the JSON (its "check": the space's expressions, evaluated with
# Python's sqlite3) picks exactly what the checked C table picks, for the same 24,000 problems
run export --dispatch --format json --arch sm_90 --space "$SPACES/attention.yaml" -o "$T/dispatch.json" --allow-replayed
expect_rc 0
python3 "$FATUNE_SOURCE_DIR/tests/data/dispatch_json_pick.py" "$T/dispatch.json" "$T/drawn" >"$T/json.out" ||
	{ cat "$T/json.out" >&2; fail "the JSON table's picks differ from the C table's"; }
[ "$(wc -l <"$T/drawn")" -ge 10000 ] || fail "fewer than 10,000 problems drawn"
# and the JSON without its check would not do: without the constraints some picks differ
python3 - "$T/dispatch.json" <<'PY' || fail "cannot edit the JSON"
import json, sys
t = json.load(open(sys.argv[1]))
t["check"]["constraints"] = []
json.dump(t, open(sys.argv[1] + ".loose", "w"))
PY
python3 "$FATUNE_SOURCE_DIR/tests/data/dispatch_json_pick.py" "$T/dispatch.json.loose" "$T/drawn" >"$T/loose.out" &&
	fail "a JSON consumer without the constraints picks like the C table: the test cannot fail"
echo "ok: $(cat "$T/prop.err"); JSON: $(tail -n 1 "$T/json.out")"
