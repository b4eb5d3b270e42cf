# 077-library-call-path: what one fatune_attention_forward call issues to the driver, checked without a GPU
# through a counting stand-in libcuda.so.1 (tests/data/mock_libcuda.c): a call issues what fatune's worker
# issued when it timed the config (the main kernel, the combine kernel when the config has one - with
# programmatic dependent launch, cuLaunchKernelEx laid out as cuda.h says, where PDL=1 - a memset of the
# scratch only where the space's init asks: zero_once scratch before the first call on a workspace, not
# once the caller passes FATUNE_WORKSPACE_KEPT); the CUBIN is loaded and its shared-memory attribute raised
# once per context, never per call; a too-small workspace is still refused on the reused path. Three
# libraries from a replayed database: split-KV with a plain combine launch, the same with PDL=1, and the
# combine merged in-kernel (COMBINE_IN_KERNEL=1: one launch, a zero_once counter workspace). The Python
# package keeps that contract too (a stand-in torch: one workspace, zeroed once per shape on it).
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
run search --replay "$REC" --arch sm_90 --campaign "$FATUNE_SOURCE_DIR/bench/campaigns/hopper.yaml" --quiet
expect_rc 0 "replaying the recorded campaign"
# 1x8x512x64 (one launch) and 1x8x8192x64 causal (NUM_SPLITS=2 with a combine launch in the recording)
sql "$FATUNE_DB" "DELETE FROM best WHERE NOT (b = 1 AND h = 8 AND d = 64 AND ((s = 512 AND causal = 0) OR (s = 8192 AND causal = 1)))"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM best WHERE config LIKE '%NUM_SPLITS=2,COMBINE_IN_KERNEL=0,PDL=0'")" -eq 1 ] ||
	fail "the recording's 1x8x8192x64 causal best is no longer split in two with a combine launch"

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_INC=$(dirname "$(dirname "$NVCC")")/include
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -I"$CUDA_INC" -o "$T/libcuda.so.1" "$FATUNE_SOURCE_DIR/tests/data/mock_libcuda.c" ||
	fail "the stand-in driver does not build"
cat >"$T/path.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fatune_attention.h"
enum { M_INIT, M_CTX_CURRENT, M_CTX_DEVICE, M_ATTRIBUTE, M_LOAD, M_FUNCTION, M_SET_ATTRIBUTE, M_LAUNCH, M_MEMSET,
       M_TENSOR_MAP, M_LAUNCH_EX, M_COUNT };
static void (*counts)(int *, int *, int *);
static int bad;
#define WANT(expr, want) do { long got_ = (long)(expr); if (got_ != (long)(want)) { printf("line %d: %s = %ld, want %ld\n", __LINE__, #expr, got_, (long)(want)); bad = 1; } } while (0)
static struct fatune_attention_args shape(int s, int causal)
{
	static char tensor[4][16];
	struct fatune_attention_args a;
	memset(&a, 0, sizeof(a));
	a.q = tensor[0]; a.k = tensor[1]; a.v = tensor[2]; a.o = tensor[3];
	a.b = 1; a.h = a.h_kv = 8; a.s_q = a.s_kv = s; a.d = 64; a.causal = causal;
	for (int t = 0; t < 4; t++) {
		long long *st = t == 0 ? a.q_stride : t == 1 ? a.k_stride : t == 2 ? a.v_stride : a.o_stride;
		st[0] = 8LL * s * 64; st[1] = (long long)s * 64; st[2] = 64;
	}
	return a;
}
static void now(int *c)
{
	int smem, threads;
	counts(c, &smem, &threads);
}
int main(int argc, char **argv)
{
	/* argv: cuLaunchKernel and cuLaunchKernelEx per split call, memsets per call before FATUNE_WORKSPACE_KEPT
	 * and after */
	int per_launch = atoi(argv[1]), per_ex = atoi(argv[2]), per_memset = atoi(argv[3]), per_memset_kept = atoi(argv[4]);
	struct fatune_attention_args one = shape(512, 0), split = shape(8192, 1);
	struct fatune_attention_plan p;
	int c0[M_COUNT], c1[M_COUNT];
	size_t ws = 0;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	char *workspace;
	(void)argc;
	if (!h || !(*(void **)&counts = dlsym(h, "mock_counts")))
		return printf("the stand-in driver is not the one loaded\n"), 1;
	WANT(fatune_attention_plan(&split, &p), FATUNE_OK);
	WANT(p.num_splits, 2);
	WANT(p.combine_threads > 0, per_launch + per_ex == 2);
	WANT(fatune_attention_workspace_size(&split, &ws), FATUNE_OK);
	workspace = malloc(ws);	/* never read: the stand-in launches nothing */
	split.workspace = workspace;
	split.workspace_bytes = ws;
	/* the first calls load each CUBIN once */
	WANT(fatune_attention_forward(&one, NULL), FATUNE_OK);
	WANT(fatune_attention_forward(&split, NULL), FATUNE_OK);
	now(c0);
	WANT(c0[M_LOAD], 2);
	WANT(c0[M_ATTRIBUTE], 2);	/* the compute capability, once for the context */
	WANT(c0[M_LAUNCH], 1 + per_launch);
	WANT(c0[M_LAUNCH_EX], per_ex);
	/* a hundred calls of each, alternating shapes: launches (and the scratch's memset) only */
	for (int i = 0; i < 100; i++) {
		WANT(fatune_attention_forward(&one, NULL), FATUNE_OK);
		WANT(fatune_attention_forward(&split, NULL), FATUNE_OK);
	}
	now(c1);
	WANT(c1[M_LAUNCH] - c0[M_LAUNCH], 100 * (1 + per_launch));
	WANT(c1[M_LAUNCH_EX] - c0[M_LAUNCH_EX], 100 * per_ex);
	WANT(c1[M_MEMSET] - c0[M_MEMSET], 100 * per_memset);
	WANT(c1[M_LOAD] - c0[M_LOAD], 0);
	WANT(c1[M_FUNCTION] - c0[M_FUNCTION], 0);
	WANT(c1[M_SET_ATTRIBUTE] - c0[M_SET_ATTRIBUTE], 0);
	WANT(c1[M_ATTRIBUTE] - c0[M_ATTRIBUTE], 0);
	WANT(c1[M_TENSOR_MAP], 0);	/* the mma family has no TMA */
	/* the workspace kept for the library: zero_once scratch is no longer zeroed */
	split.flags = FATUNE_WORKSPACE_KEPT;
	now(c0);
	for (int i = 0; i < 100; i++)
		WANT(fatune_attention_forward(&split, NULL), FATUNE_OK);
	now(c1);
	WANT(c1[M_LAUNCH] - c0[M_LAUNCH], 100 * per_launch);
	WANT(c1[M_LAUNCH_EX] - c0[M_LAUNCH_EX], 100 * per_ex);
	WANT(c1[M_MEMSET] - c0[M_MEMSET], 100 * per_memset_kept);
	WANT(c1[M_LOAD] - c0[M_LOAD], 0);
	/* the same call with a smaller workspace or a NULL one: refused, nothing launched */
	split.workspace_bytes = ws - 1;
	WANT(fatune_attention_forward(&split, NULL), FATUNE_E_WORKSPACE);
	split.workspace_bytes = ws;
	split.workspace = NULL;
	WANT(fatune_attention_forward(&split, NULL), FATUNE_E_WORKSPACE);
	split.workspace = workspace;
	/* new tensors: a new parameter block, the same module; strict still refuses an untuned shape */
	split.o = workspace;
	WANT(fatune_attention_forward(&split, NULL), FATUNE_OK);
	one.s_q = one.s_kv = 700;
	for (int t = 0; t < 4; t++) {
		long long *st = t == 0 ? one.q_stride : t == 1 ? one.k_stride : t == 2 ? one.v_stride : one.o_stride;
		st[0] = 8LL * 700 * 64; st[1] = 700LL * 64;
	}
	one.flags = FATUNE_STRICT;
	WANT(fatune_attention_forward(&one, NULL), FATUNE_E_UNTUNED);
	now(c1);
	WANT(c1[M_LAUNCH] - c0[M_LAUNCH], 101 * per_launch);
	WANT(c1[M_LAUNCH_EX] - c0[M_LAUNCH_EX], 101 * per_ex);
	WANT(c1[M_LOAD], 2);
	printf("%s\n", bad ? "FAILED" : "ok");
	free(workspace);
	return bad;
}
C
check_library() {	# NAME LAUNCHES LAUNCHES_EX MEMSETS MEMSETS_KEPT
	local L="$T/$1"
	run export --library "$L" --arch sm_90 --space "$SPACES/attention.yaml" --allow-replayed; expect_rc 0 "export --library ($1)"
	cmake -S "$L" -B "$L/build" >"$T/cmake.log" 2>&1 && cmake --build "$L/build" >>"$T/cmake.log" 2>&1 ||
		{ tail -20 "$T/cmake.log" >&2; fail "the $1 library does not build"; }
	cc -std=c11 -Wall -Wextra -Werror -I"$L" -o "$T/path_$1" "$T/path.c" "$L/build/libfatune_attention.a" -lpthread -ldl -lm ||
		fail "the call-path program does not build against the $1 library"
	LD_LIBRARY_PATH="$T" "$T/path_$1" "$2" "$3" "$4" "$5" || fail "the $1 library's calls issue the wrong driver calls (lines above)"
}
check_library combine 2 0 0 0
grep -q "p0_combine_pdl\[\] = { 0, 0 };" "$T/combine/fatune_parts.c" || fail "the PDL=0 library's entries are not marked plain"
# the combine with programmatic dependent launch, as the worker launches a PDL=1 candidate's
sql "$FATUNE_DB" "UPDATE best SET config = replace(config, 'PDL=0', 'PDL=1'), compile_key = NULL WHERE s = 8192"
check_library pdl 1 1 0 0
# the same split merged in-kernel: one launch, its counters zeroed before the first call on a workspace only
sql "$FATUNE_DB" "UPDATE best SET config = replace(replace(config, 'COMBINE_IN_KERNEL=0', 'COMBINE_IN_KERNEL=1'), 'PDL=1', 'PDL=0'), compile_key = NULL WHERE s = 8192"
check_library in_kernel 1 0 1 0
grep -q '"attention", "mma", "[a-z_0-9]*", "[a-z_0-9]*", [01], [0-9]*, 3, FATUNE_P0_COUNT' "$T/in_kernel/fatune_parts.c" || fail "the in-kernel library's scratch is not zero_once"

# the Python package keeps the workspace contract: one workspace per device and stream (no allocation per
# call), its zero_once scratch zeroed before the first call of a shape on it only, again after another
# shape wrote it. A stand-in torch module (tensors are numbers, nothing runs) and the counting driver.
python3 -c 'import setuptools, wheel' 2>/dev/null || { echo "ok (the Python part skipped: no setuptools/wheel)"; exit 0; }
python3 -m pip install --no-build-isolation --no-deps --target "$T/py" "$T/in_kernel" >"$T/pip.log" 2>&1 ||
	{ tail -n 20 "$T/pip.log" >&2; fail "pip install of the library failed"; }
mkdir -p "$T/fake/torch"
cat >"$T/fake/torch/__init__.py" <<'PY'
"""A stand-in for the few torch calls fatune_attention makes: tensors with shapes, strides and fake addresses."""
import contextlib
float16, bfloat16, uint8, float32 = "float16", "bfloat16", "uint8", "float32"
empties = []  # (numel, dtype) of every torch.empty
_next = [0x10000]
class Tensor:
    def __init__(self, shape, dtype, device="cuda:0"):
        self.shape, self.dtype, self.device, self.is_cuda = tuple(shape), dtype, device, True
        n = 1
        for s in self.shape:
            n *= s
        self._numel, self._ptr = n, _next[0]
        _next[0] += 2 * n + 4096
    def dim(self): return len(self.shape)
    def numel(self): return self._numel
    def data_ptr(self): return self._ptr
    def is_contiguous(self): return True
    def stride(self, i=None):
        st, acc = [], 1
        for s in reversed(self.shape):
            st.insert(0, acc)
            acc *= s
        return st if i is None else st[i]
def empty(n, dtype, device):
    empties.append((n, dtype))
    return Tensor((n,), dtype, device)
def empty_like(t): return Tensor(t.shape, t.dtype, t.device)
class _Stream:
    cuda_stream = 0
class cuda:
    @staticmethod
    def current_stream(device): return _Stream()
    @staticmethod
    def device(d): return contextlib.nullcontext()
PY
cat >"$T/ws.py" <<'PY'
import ctypes, sys
import torch, fatune_attention as fa
drv = ctypes.CDLL("libcuda.so.1")
def memsets():
    c, a, b = (ctypes.c_int * 11)(), ctypes.c_int(), ctypes.c_int()
    drv.mock_counts(c, ctypes.byref(a), ctypes.byref(b))
    return c[8]  # M_MEMSET
def qkv(s): return [torch.Tensor((1, 8, s, 64), torch.float16) for _ in range(3)]
split, one, other = qkv(8192), qkv(512), qkv(4096)
assert fa.plan(*split, causal=True)["workspace_bytes"] > 0
m0 = memsets()
for _ in range(50):
    fa.attention(*split, causal=True)
got = [memsets() - m0, len(torch.empties), fa._stats["allocations"]]
assert got == [1, 1, 1], f"50 calls of one shape: memsets, torch.empty calls, workspaces = {got}, want [1, 1, 1]"
fa.attention(*one)          # no workspace needed: the cached one is untouched
fa.attention(*split, causal=True)
assert memsets() - m0 == 1 and len(torch.empties) == 1, "a call without workspace disturbed the contract"
m1 = memsets()
fa.attention(*other, causal=True)  # another shape on the same workspace (the same split entry), then the first again
assert memsets() - m1 == 1 and fa.plan(*other, causal=True)["entry"] == fa.plan(*split, causal=True)["entry"]
m1 = memsets()
fa.attention(*split, causal=True)
assert memsets() - m1 == 1, "the scratch was not zeroed after another shape used the workspace"
print("ok")
PY
PYTHONPATH="$T/fake:$T/py" LD_LIBRARY_PATH="$T" python3 "$T/ws.py" || fail "the Python package breaks the workspace contract"
echo "ok"
