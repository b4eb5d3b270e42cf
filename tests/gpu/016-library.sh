# 016-library: one library exported from a real search (`fatune export --library`: every arch and space of
# the database in one library; the database also holds sm_89 rows replayed from the recorded H100 campaign
# relabelled as sm_89, so the library carries a second arch that must never run here) is installed with a
# fresh `pip install` and checked from torch: every unit tuned on this GPU matches an fp32 SDPA reference
# within the worker's tolerance with fatune's winner across spaces (a part of this GPU's arch: sm_90 or the
# wgmma family's sm_90a CUBINs on an H100), an untuned shape between the tuned ones (and a decode shape
# between KV lengths) runs the nearest valid entry correctly, the sm_89 rows are planned (cc=89) as their own
# tuned entries and never chosen here, strict mode and bad input raise with the library's message. Per unit
# it prints (JSON lines) the error, the GPU
# time of the library's calls timed as fatune's worker times a config (a CUDA graph of 20 calls, median of
# 30) against fatune's own timing of that config (bench --best; "time_ok": within 2 % or 0.5 us), the same
# for bare cuLaunchKernel of the same launches (bare_gpu_us) and on the stream (gpu_stream_us), and the host
# cost of a call against bare cuLaunchKernel of the same launches - main and combine kernel, TMA
# descriptors, the workspace kept (FATUNE_WORKSPACE_KEPT) - ("overhead_us", "overhead_ok": <= 1 us;
# tests/gpu/library_overhead.c). Timing is reported, not asserted; correctness is asserted.
. "$FT_TEST_LIB"
gpu_or_skip
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "SKIP: needs torch with CUDA"; exit 77; }
python3 -c 'import setuptools' 2>/dev/null || { echo "SKIP: needs setuptools for pip install --no-build-isolation"; exit 77; }
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
arch=$("$FATUNE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["arch"])')
cat >"$T/units.yaml" <<'YAML'
fatune_campaign: 1
name: library
shapes:
  - 1x8x512x64
  - 1x8x2048x64
  - shape: 8x32x1x128
    kv_heads: 8
    kv_len: 2048
    layout: bshd
  - shape: 8x32x1x128
    kv_heads: 8
    kv_len: 8192
    layout: bshd
YAML
# LIBRARY_CAMPAIGN=FILE: the units of that campaign instead (e.g. bench/campaigns/suite24.yaml; transfer)
if [ -n "${LIBRARY_CAMPAIGN:-}" ]; then
	run search --campaign "$LIBRARY_CAMPAIGN" --strategy transfer --quiet --json
else
	run search --campaign "$T/units.yaml" --strategy guided --budget 24 --quiet --json
fi
tail -n 3 "$T/out"
expect_rc 0 "the campaign"
spaces=$(sql "$FATUNE_DB" "SELECT group_concat(DISTINCT space_name) FROM best WHERE arch = '$arch'")
[ -n "$spaces" ] || fail "the search stored no best config"
echo "spaces tuned on $arch: $spaces"
# a second arch: the recorded H100 campaign relabelled sm_89 and replayed (stored as replayed, never measured)
sql_load "$T/rec89.db" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
sql "$T/rec89.db" "UPDATE runs SET arch = 'sm_89', device = 'recorded H100 relabelled sm_89'"
run search --replay "$T/rec89.db" --arch sm_89 --shape 1x8x512x64 --quiet; expect_rc 0 "replaying 1x8x512x64 as sm_89"
run search --replay "$T/rec89.db" --arch sm_89 --shape 1x16x1024x128 --dtype bf16 --quiet
expect_rc 0 "replaying 1x16x1024x128 bf16 as sm_89"
cd "$FATUNE_SOURCE_DIR"
L="$T/lib"
run export --library "$L" --allow-replayed; cat "$T/err"; expect_rc 0 "export --library"
grep -q "sm_89" "$L/fatune_library.h" || fail "the library does not hold the sm_89 part"
grep "FATUNE_LIB_NPARTS\|FATUNE_LIB_ARCHS" "$L/fatune_library.h"
cmake -S "$L" -B "$L/build" >"$T/cmake.log" 2>&1 && cmake --build "$L/build" >>"$T/cmake.log" 2>&1 ||
	{ tail -20 "$T/cmake.log"; fail "the library does not build"; }
cc -std=c11 -O2 -I"$L" -I"$CUDA_INC" -o "$T/overhead" tests/gpu/library_overhead.c \
	"$L/build/libfatune_attention.a" -lcuda -lpthread -ldl -lm || fail "library_overhead.c does not build"
# a fresh install, offline: the build backend comes from this Python
python3 -m pip install --no-build-isolation --no-deps --target "$T/py" "$L" >"$T/pip.log" 2>&1 ||
	{ tail -20 "$T/pip.log"; fail "pip install of the library failed"; }
PYTHONPATH="$T/py" python3 tests/gpu/library_check.py "$FATUNE_DB" "$arch" "$FATUNE" "$T/overhead" \
	1x8x1024x64:fp16:0 2x8x700x64:fp16:0 "8x32x1x128,kv_heads=8,kv_len=4096,layout=bshd:fp16:0" ||
	fail "the library gave a wrong result or a wrong answer (lines above)"
echo "ok"
