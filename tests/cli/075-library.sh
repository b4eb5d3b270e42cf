# 075-library: `fatune export --library DIR` from a database made by replaying the recorded H100
# campaign (three of its shapes kept, so three CUBINs are compiled): the directory builds with cmake
# (static and shared) with no GPU and no CUDA link, and a C program linked against it gets clear
# status codes for bad input, a workspace size, the tuned config for a tuned shape, the nearest valid
# one for an untuned shape (deterministically) or a refusal in strict mode, a refusal for shapes
# no entry is valid for, FATUNE_E_DRIVER (not a crash) where no driver exists, and records the
# untuned shapes as a campaign file that fatune reads back. The generated files' structure is checked.
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
run search --replay "$REC" --arch sm_90 --campaign "$FATUNE_SOURCE_DIR/bench/campaigns/hopper.yaml" --quiet
expect_rc 0 "replaying the recorded campaign"
sql "$FATUNE_DB" "DELETE FROM best WHERE NOT ((b = 1 AND s = 512 AND causal = 0) OR (b = 16 AND s = 512 AND causal = 0) OR (b = 4 AND causal = 1))"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM best")" -eq 3 ] || fail "the kept rows are not three"

L="$T/lib"
run export --library "$L" --arch sm_90 --space "$SPACES/attention.yaml"
expect_bad_input "from a replay.*pass --allow-replayed"
[ ! -e "$L" ] || fail "a refused library export left a directory"
run export --library "$L" --arch sm_90 --space "$SPACES/attention.yaml" --allow-replayed; expect_rc 0
expect_err "wrote library .* \(3 shapes: 3 of sm_90 on .*, space attention; 3 CUBINs\)"
for f in .fatune-library CMakeLists.txt fatune_abi.h fatune_attention.c fatune_attention.h fatune_cubins.c \
	fatune_library.h fatune_parts.c fatune_table_0.h pyproject.toml setup.py fatune_attention/__init__.py; do
	[ -s "$L/$f" ] || fail "the library lacks $f"
done
# structure: each CUBIN an ELF image of its cache key, each entry's config and CUBIN named
python3 - "$L" <<'PY' || fail "the generated files are not what they should be"
import re, sys
d = sys.argv[1]
cubins = open(f"{d}/fatune_cubins.c").read()
arrays = re.findall(r"static const unsigned char cubin_(\d+)\[\] __attribute__\(\(aligned\(64\)\)\) = \{\s*(\d+),(\d+),(\d+),(\d+),", cubins)
assert len(arrays) == 3 and all(a[1:] == ("127", "69", "76", "70") for a in arrays), arrays  # \x7fELF
keys = re.findall(r'\{ cubin_\d+, \d+, (\d+), "([0-9a-f]{16})" \}', cubins)
assert len(set(k for _, k in keys)) == 3, keys
lib = open(f"{d}/fatune_library.h").read()
assert '#define FATUNE_LIB_ARCHS "sm_90"' in lib and "#define FATUNE_LIB_NPARTS 1" in lib
parts = open(f"{d}/fatune_parts.c").read()
assert "static const int p0_cubin_of[] = { 0, 1, 2 };" in parts, parts
assert parts.count('"NUM_WARPS_PER_BLOCK=') == 3
assert '{ "sm_90", "sm_90", 90, 0, "attention", "mma", ' in parts
table = open(f"{d}/fatune_table_0.h").read()
assert "#define FATUNE_P0_COUNT 3" in table and "fatune_p0_eval(" in table
# the eval function tests every derived parameter at the caller's shape, as the dispatch table's does
assert all(f"/* derived '{n}'" in table for n in ("TILE_M", "PACK_GQA", "DENSE_KV")), "a derive is not tested"
PY
# a second export into the same directory overwrites it; a directory of other files is refused
run export --library "$L" --arch sm_90 --space "$SPACES/attention.yaml" --allow-replayed; expect_rc 0
mkdir "$T/other" && echo x >"$T/other/notes.txt"
run export --library "$T/other" --arch sm_90 --allow-replayed; expect_bad_input "is not a library fatune wrote"
run export --library "$L" --arch sm_90 --dispatch --allow-replayed; expect_bad_input "drop --dispatch"

cmake -S "$L" -B "$L/build" >"$T/cmake.log" 2>&1 && cmake --build "$L/build" >>"$T/cmake.log" 2>&1 ||
	{ tail -20 "$T/cmake.log" >&2; fail "the library does not build with cmake"; }
[ -f "$L/build/libfatune_attention.a" ] && [ -f "$L/build/libfatune_attention.so" ] || fail "no static and shared library"
grep -q "warning" "$T/cmake.log" && { grep -m3 warning "$T/cmake.log" >&2; fail "the library builds with warnings"; }

cat >"$T/use.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fatune_attention.h"
static int bad;
#define WANT(expr, want) do { int got_ = (expr); if (got_ != (want)) { printf("%s:%d: %s = %d (%s), want %d\n", __FILE__, __LINE__, #expr, got_, fatune_strerror(got_), (want)); bad = 1; } } while (0)
/* contiguous [B,H,S,D] tensors of the shape */
static struct fatune_attention_args shape(int b, int h, int hkv, int s, int skv, int d, int causal)
{
	static char dummy[16];
	struct fatune_attention_args a;
	memset(&a, 0, sizeof(a));
	a.q = a.k = a.v = a.o = dummy;
	a.b = b; a.h = h; a.h_kv = hkv; a.s_q = s; a.s_kv = skv; a.d = d; a.causal = causal;
	a.q_stride[0] = a.o_stride[0] = (long long)h * s * d; a.q_stride[1] = a.o_stride[1] = (long long)s * d;
	a.q_stride[2] = a.o_stride[2] = d;
	a.k_stride[0] = a.v_stride[0] = (long long)hkv * skv * d; a.k_stride[1] = a.v_stride[1] = (long long)skv * d;
	a.k_stride[2] = a.v_stride[2] = d;
	return a;
}
int main(int argc, char **argv)
{
	struct fatune_attention_args a = shape(1, 8, 8, 512, 512, 64, 0);
	struct fatune_attention_plan p, p2;
	size_t ws = 1;
	(void)argc;
	/* argument checks */
	WANT(fatune_attention_plan(NULL, &p), FATUNE_E_ARGS);
	a.dtype = 7; WANT(fatune_attention_plan(&a, &p), FATUNE_E_DTYPE); a.dtype = FATUNE_FP16;
	a.d = 96; WANT(fatune_attention_plan(&a, &p), FATUNE_E_HEAD_DIM); a.d = 64;
	a.b = 0; WANT(fatune_attention_plan(&a, &p), FATUNE_E_ARGS); a.b = 1;
	a.h_kv = 3; WANT(fatune_attention_plan(&a, &p), FATUNE_E_ARGS); a.h_kv = 8;
	a.dtype = FATUNE_BF16; WANT(fatune_attention_plan(&a, &p), FATUNE_E_HEAD_DIM); a.dtype = FATUNE_FP16;
	a.k_stride[2] = 128; WANT(fatune_attention_plan(&a, &p), FATUNE_E_LAYOUT); a.k_stride[2] = 64;
	a.q = NULL; WANT(fatune_attention_forward(&a, NULL), FATUNE_E_ARGS);
	a = shape(1, 8, 8, 512, 512, 64, 0);
	/* a tuned shape: its own entry, no workspace */
	WANT(fatune_attention_plan(&a, &p), FATUNE_OK);
	if (!p.tuned || p.num_splits != 1 || p.threads != 128 || p.grid[1] != 8 || p.grid[2] != 1 || !strstr(p.config, "TILE_M=64,"))
		{ printf("tuned plan: tuned %d %s threads %u grid %ux%ux%u\n", p.tuned, p.config, p.threads, p.grid[0], p.grid[1], p.grid[2]); bad = 1; }
	WANT(fatune_attention_workspace_size(&a, &ws), FATUNE_OK);
	if (ws != 0) { printf("workspace %zu for an unsplit config\n", ws); bad = 1; }
	WANT(fatune_attention_workspace_size(&a, NULL), FATUNE_E_ARGS);
	a.flags = FATUNE_STRICT; WANT(fatune_attention_plan(&a, &p), FATUNE_OK);
	/* an untuned shape between the two tuned B*H: strict refuses, else the nearest, the same every time */
	a = shape(4, 16, 16, 700, 700, 64, 0);
	a.flags = FATUNE_STRICT; WANT(fatune_attention_plan(&a, &p), FATUNE_E_UNTUNED);
	a.flags = 0; WANT(fatune_attention_plan(&a, &p), FATUNE_OK);
	if (p.tuned || p.grid[2] != 4 || p.grid[1] != 16) { printf("untuned plan: tuned %d grid %ux%ux%u\n", p.tuned, p.grid[0], p.grid[1], p.grid[2]); bad = 1; }
	for (int i = 0; i < 100; i++) {
		WANT(fatune_attention_plan(&a, &p2), FATUNE_OK);
		if (memcmp(&p, &p2, sizeof(p))) { printf("the plan changed between calls\n"); bad = 1; break; }
	}
	/* bshd of the same shape: no bshd entry is valid; grouped-query: none of that kind */
	a = shape(1, 8, 8, 512, 512, 64, 0);
	a.q_stride[1] = a.o_stride[1] = a.k_stride[1] = a.v_stride[1] = 64;
	a.q_stride[2] = a.o_stride[2] = a.k_stride[2] = a.v_stride[2] = 8 * 64;
	WANT(fatune_attention_plan(&a, &p), FATUNE_E_NO_CONFIG);
	a = shape(1, 8, 2, 512, 512, 64, 0);
	WANT(fatune_attention_plan(&a, &p), FATUNE_E_NO_CONFIG);
	/* causal D=128: the tuned one */
	a = shape(4, 16, 16, 2048, 2048, 128, 1);
	WANT(fatune_attention_plan(&a, &p), FATUNE_OK);
	/* a workspace too small, then a launch where no driver is: a status, never a crash */
	a = shape(1, 8, 8, 512, 512, 64, 0);
	WANT(fatune_attention_forward(&a, NULL), atoi(argv[1]));
	if (strlen(fatune_strerror(FATUNE_E_UNTUNED)) < 20 || strcmp(fatune_strerror(12345), "unknown fatune status"))
		{ printf("strerror\n"); bad = 1; }
	printf("%s\n", bad ? "FAILED" : "ok");
	return bad;
}
C
# the expected status of a launch here: no driver -> FATUNE_E_DRIVER (8); a driver without a GPU or
# context -> FATUNE_E_DRIVER too (cuInit fails or no current context)
cc -std=c11 -Wall -Wextra -Werror -I"$L" -o "$T/use" "$T/use.c" "$L/build/libfatune_attention.a" -lpthread -ldl -lm ||
	fail "a program does not link against the static library"
FATUNE_RECORD_UNTUNED="$T/untuned.yaml" "$T/use" 8 || fail "the library's answers are wrong"
cc -std=c11 -Wall -Wextra -Werror -I"$L" -o "$T/use-so" "$T/use.c" -L"$L/build" -lfatune_attention ||
	fail "a program does not link against the shared library"
LD_LIBRARY_PATH="$L/build" "$T/use-so" 8 >/dev/null || fail "the shared library answers differently"

# the Python package builds with pip and loads the C API (the torch part runs on the GPU: tests/gpu/016)
if python3 -c 'import setuptools, wheel' 2>/dev/null; then
	python3 -m pip install --no-build-isolation --no-deps --target "$T/py" "$L" >"$T/pip.log" 2>&1 ||
		{ tail -n 20 "$T/pip.log" >&2; fail "pip install of the library failed"; }
	PYTHONPATH="$T/py" python3 -c 'import fatune_attention as fa; assert "not tuned" in fa._lib.fatune_strerror(5).decode()' ||
		fail "the Python package does not load the library"
fi
# the recorded untuned shapes: a campaign fatune reads (exactly the three untuned ones, once each)
[ -s "$T/untuned.yaml" ] || fail "FATUNE_RECORD_UNTUNED wrote nothing"
[ "$(grep -c '  - shape:' "$T/untuned.yaml")" -eq 3 ] || { cat "$T/untuned.yaml" >&2; fail "the campaign file does not hold the 3 untuned shapes"; }
grep -q "shape: 4x16x700x64" "$T/untuned.yaml" || fail "the untuned shape is not recorded"
run search --campaign "$T/untuned.yaml" --replay "$REC" --arch sm_90 --quiet --db "$T/replayed.db"
expect_err "holds no timed trial" # read as a campaign (its units named), then refused for lack of records
echo "ok"
