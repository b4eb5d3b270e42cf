# 072-dispatch: `fatune export --dispatch` writes every tuned shape of a target as one table with a
# selection function: C++, C and JSON match their golden files, and a program that includes the
# header (compiled with cc, and c++ where there is one) gets the picks the documented rule gives
# (tests/cli/074 checks every pick of random shapes against fatune check).
. "$FT_TEST_LIB"
G="$FATUNE_SOURCE_DIR/tests/golden"
run search --arch sm_89 --shape 1x2x64x64 --space "$TESTSPACES/fault.yaml" --quiet; expect_rc 0
# best rows as GPU searches would leave them (configs of the shipped space, each accepted at its
# shape): D 64 fp16 at S 512/2048/8192 (B*H 8) and 2048 (B*H 64), D 64 fp16 causal at 512, D 128
# bf16 at 1024, and a decode shape (S 1, KV 4096, 2 KV heads: one warp, packed)
add() { # B H S D S_KV H_KV DTYPE CAUSAL TILE_N SPLITS US [WARPS PACK]
	sql "$FATUNE_DB" "INSERT INTO best (arch, device, space_name, template_name, family, b, h, s, d,
	  s_kv, h_kv, layout, dtype, causal, config, compile_key, template_hash, fatune_version, t_median_us,
	  t_min_us, t_p90_us, rel_err, updated_at) VALUES ('sm_90', 'NVIDIA H200', 'attention', 'attention',
	  'mma', $1, $2, $3, $4, $5, $6, 'bhsd', '$7', $8,
	  'NUM_WARPS_PER_BLOCK=${12:-4},TILE_M=$((16 * ${12:-4})),TILE_N=$9,KV_STAGES=2,PACK_GQA=${13:-0},DENSE_KV=1,NUM_SPLITS=${10},COMBINE_IN_KERNEL=0,PDL=0', '0123456789abcdef',
	  'fedcba9876543210', '0.1.0', ${11}, ${11}, ${11}, 0.0003, '2026-11-22T02:00:00Z')"
}
add 1 8 512 64 512 8 fp16 0 64 1 6.34
add 1 8 2048 64 2048 8 fp16 0 128 2 20.5
add 1 8 8192 64 8192 8 fp16 0 128 1 180.25
add 4 16 2048 64 2048 16 fp16 0 64 1 95.0
add 1 8 512 64 512 8 fp16 1 32 1 6.67
add 2 8 1024 128 1024 8 bf16 0 64 2 30.0
add 4 8 1 64 4096 2 fp16 0 64 16 12.0 1 1
run export --dispatch --arch sm_90 -o "$T/dispatch.h"; expect_rc 0
expect_err "wrote .*dispatch.h \(7 shapes of sm_90 on NVIDIA H200, space attention\)"
diff -u "$G/dispatch.h" "$T/dispatch.h" || fail "the C++ dispatch header differs from the golden file"
run export --dispatch --arch sm_90 --style c; expect_rc 0
diff -u "$G/dispatch_c.h" "$T/out" || fail "the C dispatch header differs from the golden file"
cp "$T/out" "$T/dispatch_c.h"
run export --dispatch --arch sm_90 --format json; expect_rc 0
diff -u "$G/dispatch.json" "$T/out" || fail "the JSON dispatch table differs from the golden file"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); assert len(t["entries"]) == 7 and t["params"][2] == "TILE_N", t' "$T/out" ||
	fail "the JSON table does not parse"

# a program that includes the header and checks its picks: (query) -> (tuned S, B*H, TILE_N) or none
cat >"$T/pick.c" <<'C'
#include <stdio.h>
#include "dispatch_c.h"
static int bad;
static void want(int d, int bf16, int causal, int b, int h, int s, int kv, int hkv, int ws, int wbh, int wtile)
{
	const struct fatune_dispatch_entry *e = fatune_dispatch_pick(d, bf16, causal, b, h, s, kv, hkv, 0);
	int gs = e ? e->seq_len : -1, gbh = e ? e->batch * e->heads : -1, gt = e ? e->tile_n : -1;
	if (gs != ws || gbh != wbh || gt != wtile) {
		printf("pick(D=%d bf16=%d causal=%d %dx%d S=%d KV=%d KV heads=%d): got S=%d BH=%d TILE_N=%d, want S=%d BH=%d TILE_N=%d\n",
		       d, bf16, causal, b, h, s, kv, hkv, gs, gbh, gt, ws, wbh, wtile);
		bad = 1;
	}
}
int main(void)
{
	want(64, 0, 0, 1, 8, 512, 0, 0, 512, 8, 64);	/* exact */
	want(64, 0, 0, 1, 8, 600, 0, 0, 512, 8, 64);	/* nearest S */
	want(64, 0, 0, 1, 8, 1500, 0, 0, 2048, 8, 128);	/* 1500: 2048 is nearer than 512 in log2 */
	want(64, 0, 0, 1, 8, 3000, 0, 0, 2048, 8, 128);	/* the rule's own example */
	want(64, 0, 0, 8, 8, 2048, 0, 0, 2048, 64, 64);	/* same S: the nearest B*H (64) */
	want(64, 0, 0, 1, 4, 2048, 0, 0, 2048, 8, 128);	/* same S: the nearest B*H (8) */
	want(64, 0, 0, 1, 8, 100000, 0, 0, 8192, 8, 128);	/* beyond the largest */
	want(64, 0, 0, 2, 8, 2048, 0, 0, 2048, 8, 128);	/* B*H 16: the B*H 8 entry, its two splits fit */
	want(64, 0, 0, 2, 8, 2304, 0, 0, 2048, 64, 64);	/* ... not at S 2304 (576 blocks): the next */
	want(64, 0, 1, 1, 8, 8192, 0, 0, 512, 8, 32);	/* causal: the only causal entry */
	want(64, 0, 0, 4, 8, 1, 4096, 2, 1, 32, 64);	/* decode: S 1, KV 4096, 2 KV heads */
	want(64, 0, 0, 4, 8, 1, 8192, 2, 1, 32, 64);	/* decode, longer cache */
	want(64, 0, 0, 4, 8, 1, 4096, 0, -1, -1, -1);	/* decode without GQA: none (the entry packs) */
	want(64, 0, 0, 4, 8, 512, 4096, 2, -1, -1, -1);	/* GQA prefill: none (only MHA prefill entries) */
	want(128, 1, 0, 1, 1, 512, 0, 0, 1024, 16, 64);	/* D 128 bf16 */
	want(128, 0, 0, 2, 8, 1024, 0, 0, -1, -1, -1);	/* D 128 fp16: none */
	want(96, 0, 0, 1, 8, 512, 0, 0, -1, -1, -1);	/* D 96: none */
	if (FATUNE_DISPATCH_COUNT != 7)
		bad = 1;
	return bad;
}
C
cc -std=c11 -Wall -Wextra -Werror -I"$T" -o "$T/pick" "$T/pick.c" || fail "the C dispatch header does not compile"
"$T/pick" || fail "the C dispatch header picks wrongly"
if command -v c++ >/dev/null 2>&1; then
	cat >"$T/pick.cc" <<'CXX'
#include "dispatch.h"
int main()
{
	static_assert(fatune::kDispatchCount == 7, "seven shapes");
	const fatune::DispatchEntry *e = fatune::dispatch_pick(64, false, false, 1, 8, 3000);
	const fatune::DispatchEntry *none = fatune::dispatch_pick(96, false, false, 1, 8, 512);
	return !(e && e->seq_len == 2048 && e->tile_n == 128 && !none);
}
CXX
	c++ -std=c++11 -Wall -Wextra -Werror -I"$T" -o "$T/pickxx" "$T/pick.cc" || fail "the C++ dispatch header does not compile"
	"$T/pickxx" || fail "the C++ dispatch header picks wrongly"
fi

# refusals: --shape with --dispatch, --format json without it, several devices, nothing tuned
run export --dispatch --arch sm_90 --shape 1x8x512x64; expect_bad_input "--dispatch writes every tuned shape"
run export --arch sm_90 --shape 1x8x512x64 --format json; expect_bad_input "add --dispatch"
run export --dispatch --arch sm_90 --format yaml; expect_bad_input "bad --format 'yaml'"
run export --dispatch --arch sm_80; expect_bad_input "no tuned config for sm_80"
sql "$FATUNE_DB" "INSERT INTO best (arch, device, space_name, template_hash, template_name, b, h, s, d,
  s_kv, h_kv, layout, dtype, causal, config, fatune_version, updated_at) SELECT arch, 'NVIDIA H100',
  space_name, template_hash, template_name, b, h, s, d, s_kv, h_kv, layout, dtype, causal, config,
  fatune_version, updated_at FROM best WHERE arch = 'sm_90' AND s = 512"
run export --dispatch --arch sm_90 -o "$T/two.h"; expect_bad_input "pass --device"
[ ! -e "$T/two.h" ] || fail "an ambiguous dispatch export wrote a file"
run export --dispatch --arch sm_90 --device "NVIDIA H200"; expect_rc 0
diff -q "$G/dispatch.h" "$T/out" >/dev/null || fail "--device picked the wrong rows"
run export --dispatch --arch sm_90 --device "NVIDIA H100" --style c; expect_rc 0
expect_out "FATUNE_DISPATCH_COUNT 2$"
# a second space's faster row for one shape: the winners span two spaces, so --space is asked for
sql "$FATUNE_DB" "INSERT INTO best (arch, device, space_name, template_hash, template_name, b, h, s, d,
  s_kv, h_kv, layout, dtype, causal, config, fatune_version, t_median_us, updated_at) VALUES ('sm_90',
  'NVIDIA H200', 'fault', '1111222233334444', 'fault', 1, 8, 512, 64, 512, 8, 'bhsd', 'fp16', 0,
  'FAULT=0', '0.1.0', 1.0, '2026-11-22T03:00:00Z')"
run export --dispatch --arch sm_90 --device "NVIDIA H200"; expect_bad_input "several spaces \('attention', 'fault'\).*pass --space FILE"
run export --dispatch --arch sm_90 --device "NVIDIA H200" --space "$SPACES/attention.yaml"; expect_rc 0
expect_out "constexpr int kDispatchCount = 7;"
echo "ok"
