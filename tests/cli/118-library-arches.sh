# 118-library-arches: one library from a database holding two arches and both template families
# (sm_90 rows of the mma space replayed from the recorded H100 campaign, an sm_90 row of the wgmma space
# whose CUBIN is compiled for sm_90a, an sm_89 row of the mma space) holds all three tables and their
# CUBINs, and chooses by the device's compute capability: plans for cc 89 and 90 without a GPU, and
# through the counting stand-in driver (MOCK_CC) calls on an 8.9 and a 9.0 device each load and launch a
# CUBIN of their own arch; across families at one shape the faster tuned entry wins, deterministically;
# a device the library has no CUBIN for (8.0, 8.6: sm_89 CUBINs do not run on 8.6; 10.0: sm_90a ones run
# on 9.0 only) gets FATUNE_E_ARCH, as does args.cc that is not the device's; recorded untuned shapes
# name the compute capability they were called on. --arch A,B and --space select parts; an ABI v1 space
# not named is left out, with a note.
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
run search --replay "$REC" --arch sm_90 --campaign "$FATUNE_SOURCE_DIR/bench/campaigns/hopper.yaml" --quiet
expect_rc 0 "replaying the recorded campaign"
sql "$FATUNE_DB" "DELETE FROM best WHERE NOT ((b = 1 AND s = 512 AND causal = 0) OR (b = 4 AND causal = 1))"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM best")" -eq 2 ] || fail "the kept rows are not two"

# ARCH SPACE_FILE SHAPE CAUSAL TIME: a row of the first config fatune check accepts there
add_row() {
	run check --arch "$1" --space "$2" --shape "$3" $([ "$4" = 1 ] && echo --causal) --format csv
	cfg=$(python3 -c 'import csv,sys
print(next(r["config"] for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "accepted"))' "$T/out") ||
		fail "no accepted config for $3 on $1"
	name=$(basename "$2" .yaml)
	b=${3%%x*}; rest=${3#*x}; h=${rest%%x*}; rest=${rest#*x}; s=${rest%%x*}; d=${rest#*x}
	sql "$FATUNE_DB" "INSERT INTO best (arch, device, space_name, template_hash, template_name, family, b, h, s, d,
		s_kv, h_kv, layout, dtype, causal, config, fatune_version, t_median_us, updated_at, run_id)
		SELECT '$1', '$([ "$1" = sm_89 ] && echo 'NVIDIA L4' || echo "$(sql "$FATUNE_DB" "SELECT device FROM best LIMIT 1")")',
		'$name', template_hash, '$name', '$5', $b, $h, $s, $d, $s, $h, 'bhsd', 'fp16', $4, '$cfg', fatune_version, $6,
		updated_at, run_id FROM best LIMIT 1"
}
# the wgmma row at the mma row's causal shape, faster; an sm_89 row at 1x8x512x64
add_row sm_90 "$SPACES/attention_sm90.yaml" 4x16x2048x128 1 wgmma 200.0
add_row sm_89 "$SPACES/attention.yaml" 1x8x512x64 0 mma 9.0
[ "$(sql "$FATUNE_DB" "SELECT count(DISTINCT arch || space_name) FROM best")" -eq 3 ] || fail "the database does not hold three (arch, space) pairs"


# an ABI v1 space (tests/spaces/fault.yaml, its run recorded): left out of a library that did not name it
run search --arch sm_89 --shape 1x2x64x64 --space "$TESTSPACES/fault.yaml" --quiet; expect_rc 0
add_row sm_89 "$TESTSPACES/fault.yaml" 1x2x64x64 0 mma 1.0
sql "$FATUNE_DB" "UPDATE best SET run_id = (SELECT max(id) FROM runs) WHERE space_name = 'fault'"

L="$T/lib"
run export --library "$L" --allow-replayed; expect_rc 0 "export --library of every arch and space"
expect_err "left out space fault of sm_89: it speaks ABI v1"
expect_err "wrote library .* \(4 shapes: 1 of sm_89 on NVIDIA L4, space attention; 2 of sm_90 on .*, space attention; 1 of sm_90 on .*, space attention_sm90; 4 CUBINs\)"
grep -q '#define FATUNE_LIB_NPARTS 3' "$L/fatune_library.h" || fail "the library does not hold three parts"
grep -q '#define FATUNE_LIB_ARCHS "sm_89, sm_90, sm_90a"' "$L/fatune_library.h" || fail "the library's arches are not listed"
grep -q '{ "sm_90", "sm_90a", 90, 1, "attention_sm90", "wgmma"' "$L/fatune_parts.c" || fail "the wgmma part is not an exact sm_90a part"
grep -q '{ "sm_89", "sm_89", 89, 0, "attention", "mma"' "$L/fatune_parts.c" || fail "the sm_89 part is not first"
cmake -S "$L" -B "$L/build" >"$T/cmake.log" 2>&1 && cmake --build "$L/build" >>"$T/cmake.log" 2>&1 ||
	{ tail -20 "$T/cmake.log" >&2; fail "the library does not build"; }
grep -q "warning" "$T/cmake.log" && { grep -m3 warning "$T/cmake.log" >&2; fail "the library builds with warnings"; }

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -I"$(dirname "$(dirname "$NVCC")")/include" -o "$T/libcuda.so.1" \
	"$FATUNE_SOURCE_DIR/tests/data/mock_libcuda.c" || fail "the stand-in driver does not build"
cat >"$T/arches.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fatune_attention.h"
static int bad;
#define WANT(expr, want) do { long got_ = (long)(expr); if (got_ != (long)(want)) { printf("line %d: %s = %ld, want %ld\n", __LINE__, #expr, got_, (long)(want)); bad = 1; } } while (0)
#define WANT_S(got, want) do { if (strcmp((got), (want))) { printf("line %d: %s = '%s', want '%s'\n", __LINE__, #got, (got), (want)); bad = 1; } } while (0)
static struct fatune_attention_args shape(int b, int h, int s, int d, int causal, int cc)
{
	static char tensor[4][16];
	struct fatune_attention_args a;
	memset(&a, 0, sizeof(a));
	a.q = tensor[0]; a.k = tensor[1]; a.v = tensor[2]; a.o = tensor[3];
	a.b = b; a.h = a.h_kv = h; a.s_q = a.s_kv = s; a.d = d; a.causal = causal; a.cc = cc;
	for (int t = 0; t < 4; t++) {
		long long *st = t == 0 ? a.q_stride : t == 1 ? a.k_stride : t == 2 ? a.v_stride : a.o_stride;
		st[0] = (long long)h * s * d; st[1] = (long long)s * d; st[2] = d;
	}
	return a;
}
int main(int argc, char **argv)
{
	/* argv[1]: "plan" (no driver) or the compute capability of the stand-in device */
	int dev = strcmp(argv[1], "plan") ? atoi(argv[1]) : 0;
	struct fatune_attention_args small = shape(1, 8, 512, 64, 0, 0), big = shape(4, 16, 2048, 128, 1, 0);
	struct fatune_attention_plan p, p2;
	int counts[11], smem, threads;
	(void)argc;
	if (!dev) {
		/* no GPU: the library holds two compute capabilities, so a plan must name one */
		WANT(fatune_attention_plan(&small, &p), FATUNE_E_DRIVER);
		small.cc = 89; WANT(fatune_attention_plan(&small, &p), FATUNE_OK);
		WANT(p.cc, 89); WANT_S(p.arch, "sm_89"); WANT(p.tuned, 1); WANT(p.part, 0);
		small.cc = 90; WANT(fatune_attention_plan(&small, &p), FATUNE_OK);
		WANT_S(p.arch, "sm_90"); WANT_S(p.space, "attention"); WANT(p.tuned, 1);
		/* both families tuned 4x16x2048x128 causal: the faster (wgmma, 200 us against 260) */
		big.cc = 90; WANT(fatune_attention_plan(&big, &p), FATUNE_OK);
		WANT_S(p.arch, "sm_90a"); WANT_S(p.space, "attention_sm90"); WANT(p.tuned, 1);
		for (int i = 0; i < 50; i++) {
			big.s_q = big.s_kv = 2048 + (i % 2); /* alternate, so the cached choice is not what answers */
			big.q_stride[0] = big.o_stride[0] = big.k_stride[0] = big.v_stride[0] = 16LL * big.s_q * 128;
			big.q_stride[1] = big.o_stride[1] = big.k_stride[1] = big.v_stride[1] = (long long)big.s_q * 128;
			WANT(fatune_attention_plan(&big, &p2), FATUNE_OK);
			if (big.s_q == 2048 && memcmp(&p, &p2, sizeof(p))) { printf("the plan changed between calls\n"); bad = 1; break; }
		}
		/* 8.9 has no causal D=128 entry; 8.6 and 8.0 no CUBIN (sm_89 needs 8.9+); 10.0 none (sm_90a is 9.0 only) */
		big = shape(4, 16, 2048, 128, 1, 89); WANT(fatune_attention_plan(&big, &p), FATUNE_E_HEAD_DIM);
		small.cc = 86; WANT(fatune_attention_plan(&small, &p), FATUNE_E_ARCH);
		small.cc = 80; WANT(fatune_attention_plan(&small, &p), FATUNE_E_ARCH);
		small.cc = 100; WANT(fatune_attention_plan(&small, &p), FATUNE_E_ARCH);
		small.cc = -1; WANT(fatune_attention_plan(&small, &p), FATUNE_E_ARGS);
		if (!strstr(fatune_strerror(FATUNE_E_ARCH), "sm_89, sm_90, sm_90a")) { printf("strerror(E_ARCH) lists no arches\n"); bad = 1; }
	} else {
		void *h = dlopen("libcuda.so.1", RTLD_NOW);
		void (*mock_counts)(int *, int *, int *);
		if (!h || !(*(void **)&mock_counts = dlsym(h, "mock_counts")))
			return printf("the stand-in driver is not the one loaded\n"), 1;
		/* the plan follows the device; the call loads and launches that arch's CUBIN */
		WANT(fatune_attention_plan(&small, &p), dev == 89 || dev == 90 ? FATUNE_OK : FATUNE_E_ARCH);
		WANT(fatune_attention_forward(&small, NULL), dev == 89 || dev == 90 ? FATUNE_OK : FATUNE_E_ARCH);
		if (dev == 89 || dev == 90) {
			WANT(p.cc, dev); WANT_S(p.arch, dev == 89 ? "sm_89" : "sm_90");
			mock_counts(counts, &smem, &threads);
			WANT(counts[4], 1); /* one module loaded */
			WANT(threads, (int)p.threads);
			WANT(counts[3], 2); /* the compute capability: asked once for the context */
			/* args.cc other than the device's is refused, not run */
			small.cc = dev == 89 ? 90 : 89; WANT(fatune_attention_forward(&small, NULL), FATUNE_E_ARCH);
			small.cc = dev; WANT(fatune_attention_forward(&small, NULL), FATUNE_OK);
			small.cc = 0;
		}
		if (dev == 90) {
			WANT(fatune_attention_plan(&big, &p), FATUNE_OK);
			WANT(fatune_attention_forward(&big, NULL), FATUNE_OK); /* the wgmma entry: TMA descriptors, its module */
			mock_counts(counts, &smem, &threads);
			WANT(counts[4], 2); WANT(counts[9] > 0, 1); WANT(threads, (int)p.threads); WANT(smem, (int)p.smem_bytes);
		}
		/* an untuned shape, recorded with the compute capability it was called on */
		small.s_q = small.s_kv = 700;
		small.q_stride[0] = small.o_stride[0] = small.k_stride[0] = small.v_stride[0] = 8LL * 700 * 64;
		small.q_stride[1] = small.o_stride[1] = small.k_stride[1] = small.v_stride[1] = 700LL * 64;
		WANT(fatune_attention_plan(&small, &p), dev == 89 || dev == 90 ? FATUNE_OK : FATUNE_E_ARCH);
	}
	printf("%s\n", bad ? "FAILED" : "ok");
	return bad;
}
C
cc -std=c11 -Wall -Wextra -Werror -I"$L" -o "$T/arches" "$T/arches.c" "$L/build/libfatune_attention.a" -lpthread -ldl -lm ||
	fail "the test program does not build against the library"
"$T/arches" plan || fail "the library's plans without a GPU are wrong (lines above)"
for dev in 89 90 80 86 100; do
	MOCK_CC=$dev FATUNE_RECORD_UNTUNED="$T/untuned_$dev.yaml" LD_LIBRARY_PATH="$T" "$T/arches" $dev ||
		fail "on a stand-in device of compute capability $dev the library's calls are wrong (lines above)"
done
grep -q "compute capability 8.9 (sm_89)" "$T/untuned_89.yaml" && grep -q "shape: 1x8x700x64" "$T/untuned_89.yaml" ||
	fail "the untuned shape on 8.9 is not recorded with its compute capability"
[ ! -e "$T/untuned_80.yaml" ] || fail "a shape no CUBIN can run was recorded as untuned"

# selecting parts: one arch, an arch list, one space
run export --library "$T/l90" --arch sm_90 --allow-replayed; expect_rc 0
grep -q '#define FATUNE_LIB_NPARTS 2' "$T/l90/fatune_library.h" || fail "--arch sm_90 did not keep both sm_90 spaces"
run export --library "$T/lmma" --arch sm_89,sm_90 --space "$SPACES/attention.yaml" --allow-replayed; expect_rc 0
grep -q '#define FATUNE_LIB_ARCHS "sm_89, sm_90"' "$T/lmma/fatune_library.h" || fail "--arch A,B --space did not select the mma parts"
run export --library "$T/l80" --arch sm_80,sm_90 --allow-replayed; expect_bad_input "no tuned config for sm_80"
run export --library "$T/lx" --arch sm_91 --allow-replayed; expect_bad_input "unknown arch 'sm_91'"
echo "ok"
