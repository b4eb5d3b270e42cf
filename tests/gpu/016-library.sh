# 016-library: a library exported from a real search (`fatune export --library`, one per space that won a
# unit) is installed with a fresh `pip install` and checked from torch: every tuned unit matches an fp32
# SDPA reference within the worker's tolerance with the tuned config, an untuned shape between the
# tuned ones (and a decode shape between KV lengths) runs the nearest valid entry correctly, strict mode
# and bad input raise with the library's message. Per unit it prints (JSON lines) the error, the GPU
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
spaces=$(sql "$FATUNE_DB" "SELECT DISTINCT space_name FROM best ORDER BY 1")
[ -n "$spaces" ] || fail "the search stored no best config"
cd "$FATUNE_SOURCE_DIR"
for sp in $spaces; do
	L="$T/lib_$sp"
	run export --library "$L" --arch "$arch" --space "search_spaces/$sp.yaml"; cat "$T/err"; expect_rc 0 "export --library ($sp)"
	cmake -S "$L" -B "$L/build" >"$T/cmake.log" 2>&1 && cmake --build "$L/build" >>"$T/cmake.log" 2>&1 ||
		{ tail -20 "$T/cmake.log"; fail "the $sp library does not build"; }
	cc -std=c11 -O2 -I"$L" -I"$CUDA_INC" -o "$T/overhead_$sp" tests/gpu/library_overhead.c \
		"$L/build/libfatune_attention.a" -lcuda -lpthread -ldl -lm || fail "library_overhead.c does not build"
	# a fresh install, offline: the build backend comes from this Python
	python3 -m pip install --no-build-isolation --no-deps --target "$T/py_$sp" "$L" >"$T/pip.log" 2>&1 ||
		{ tail -20 "$T/pip.log"; fail "pip install of the $sp library failed"; }
	echo "== $sp"
	PYTHONPATH="$T/py_$sp" python3 tests/gpu/library_check.py "$FATUNE_DB" "$sp" "$FATUNE" "$T/overhead_$sp" \
		1x8x1024x64:fp16:0 2x8x700x64:fp16:0 "8x32x1x128,kv_heads=8,kv_len=4096,layout=bshd:fp16:0" ||
		fail "the $sp library gave a wrong result or a wrong answer (lines above)"
done
echo "ok"
