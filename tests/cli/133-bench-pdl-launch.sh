# 133-bench-pdl-launch: the bench scripts' programmatic dependent launch (bench/launch_config.py,
# which bench/ftkernel.py launches a PDL combine kernel with) lays out CUlaunchConfig and
# CUlaunchAttribute as cuda.h does, sets the attribute's value to 1, and leaves the interpreter's
# own objects alone: it once wrote the value through `attr.value`, a copy (the shared empty bytes),
# so the attribute stayed 0 (a plain launch) and every later compile() of an empty source failed
# with "source code string cannot contain null bytes" (every Triton peer after a PDL best). No GPU.
. "$FT_TEST_LIB"

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
inc="$(dirname "$(dirname "$NVCC")")/include"
[ -f "$inc/cuda.h" ] || fail "no cuda.h next to $NVCC"
cat >"$T/layout.c" <<'C'
#include <stddef.h>
#include <stdio.h>
#include <cuda.h>
int main(void)
{
	printf("%zu %zu %zu %zu %zu %zu %zu %d\n", sizeof(CUlaunchAttribute), offsetof(CUlaunchAttribute, value),
	       sizeof(CUlaunchConfig), offsetof(CUlaunchConfig, hStream), offsetof(CUlaunchConfig, attrs),
	       offsetof(CUlaunchConfig, numAttrs), offsetof(CUlaunchConfig, sharedMemBytes),
	       (int)CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
	return 0;
}
C
cc -I"$inc" -o "$T/layout" "$T/layout.c" || fail "cannot build the layout probe against $inc/cuda.h"
"$T/layout" >"$T/layout.txt" || fail "the layout probe failed"

PYTHONPATH="$FATUNE_SOURCE_DIR/bench" python3 - "$T/layout.txt" <<'PY' || fail "bench/launch_config.py"
import ctypes, sys
import launch_config as lc

want = [int(x) for x in open(sys.argv[1]).read().split()]
A, C = lc.LaunchAttribute, lc.LaunchConfig
got = [ctypes.sizeof(A), A.value.offset, ctypes.sizeof(C), C.hStream.offset, C.attrs.offset,
       C.numAttrs.offset, C.sharedMemBytes.offset, lc.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION]
assert got == want, f"layout {got} != cuda.h's {want}"

cfg, attr = lc.pdl_config((7, 3, 2), 128, 4096, 0x1234)
raw = bytes(attr)
assert int.from_bytes(raw[:4], "little") == want[-1], raw[:4]
assert int.from_bytes(raw[A.value.offset:A.value.offset + 4], "little") == 1, "the PDL value is not 1"
assert not any(raw[A.value.offset + 4:]), "bytes past the value's int are set"
assert (cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ, cfg.blockDimX, cfg.sharedMemBytes, cfg.hStream, cfg.numAttrs) == \
    (7, 3, 2, 128, 4096, 0x1234, 1), "config fields"
assert bytes(cfg.attrs.contents) == raw, "the config points at another attribute"
# the interpreter's shared empty bytes is still empty and NUL-terminated: an empty source compiles
compile(b"", "<empty>", "exec")
exec(b"")
PY
grep -n 'memmove([a-z_]*\.value' "$FATUNE_SOURCE_DIR"/bench/*.py && fail "a memmove into a ctypes field's .value (a copy) is back"
exit 0
