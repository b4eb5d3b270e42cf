# 013-export-launch: an exported build_config.h is enough on a GPU. For a chosen config of the
# shipped mma space (fp16 with two KV splits and the combine kernel; bf16 causal with the splits
# merged in-kernel through the zero-once workspace), the header's own build line (nvcc alone)
# builds the CUBIN, and docs/examples/launch.c, driven by tests/kernels/launch_check.c, launches it
# with the FATUNE_LAUNCH_* macros and matches a CPU reference (relative L2 error < 1e-2).
. "$FT_TEST_LIB"
gpu_or_skip
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "SKIP: no nvcc"; exit 77; }
CUDA=$(dirname "$(dirname "$NVCC")")
K="$FATUNE_SOURCE_DIR/kernel_templates"
arch=$("$FATUNE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["arch"])')
i=0
while read -r config flags; do  # the config first: the flags are several words
	i=$((i + 1))
	d="$T/case$i"
	mkdir -p "$d"
	# shellcheck disable=SC2086
	run export --arch "$arch" --shape 1x4x256x64 $flags --config "$config" --style c -o "$d/build_config.h"
	expect_rc 0 "export $flags $config"
	build=$(grep -o 'nvcc -arch=[a-z0-9_]* -cubin' "$d/build_config.h") || fail "the header has no build line"
	printf '#include "build_config.h"\n#include "%s/attention.cu"\n' "$K" >"$d/kernel.cu"
	(cd "$d" && ${build/nvcc/$NVCC} -o k.cubin kernel.cu) || fail "the header's build line failed ($flags)"
	cc -std=c11 -O2 -I"$d" -I"$K" -I"$CUDA/include" -o "$d/check" "$FATUNE_SOURCE_DIR/tests/kernels/launch_check.c" \
		-L"$CUDA/lib64/stubs" -L"$CUDA/lib64" -lcuda -lm || fail "launch_check does not build"
	"$d/check" "$d/k.cubin" 1 4 256 || fail "the exported launch is wrong ($flags $config)"
done <<'CASES'
NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=64,KV_STAGES=2,PACK_GQA=0,DENSE_KV=1,NUM_SPLITS=2,COMBINE_IN_KERNEL=0,PDL=0 --dtype fp16
NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=64,KV_STAGES=2,PACK_GQA=0,DENSE_KV=1,NUM_SPLITS=2,COMBINE_IN_KERNEL=1,PDL=0 --dtype bf16 --causal
CASES
echo "ok"
