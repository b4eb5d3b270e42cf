# 114-sm90-work-order: attention_sm90.cu's work-tile walk, run on the CPU. tests/kernels/sm90_work_order.cu
# includes the template and calls its own mapping functions (tiles_per_head, work_of, tile_of are
# __host__ __device__) over 18 shapes: every work index names a distinct tile of the grid (a
# bijection: none missed, none twice), and with TILE_ORDER 1 (causal, issue 17) the tiles of each
# L2 group come heaviest first and the groups are as many as 32 MB of K and V each make. Built with
# nvcc for compute_90a (PTX only: no ptxas, no GPU), for one to three consumers and D 64/128.
. "$FT_TEST_LIB"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }
K="$FATUNE_SOURCE_DIR/kernel_templates"
# NAME D NUM_CONSUMER_WG TILE_ORDER
build() {
	local bm=$((64 * $3)) st=2 bn=128
	"$NVCC" -gencode arch=compute_90a,code=compute_90a -std=c++17 -I"$K" -o "$T/$1" -DFATUNE_ABI=2 \
		-DHEAD_DIM="$2" -DIS_CAUSAL=1 -DNUM_CONSUMER_WG="$3" -DBLOCK_M=$bm -DBLOCK_N=$bn -DKV_STAGES=$st \
		-DPINGPONG=0 -DPERSISTENT=1 -DFATUNE_BF16=0 -DTILE_ORDER="$4" \
		-DFATUNE_SMEM_BYTES=$((2 * $2 * (bm + 2 * bn * st) + 8 * (2 + 4 * st))) \
		"$FATUNE_SOURCE_DIR/tests/kernels/sm90_work_order.cu" >"$T/$1.log" 2>&1 ||
		{ cat "$T/$1.log"; fail "$1 does not build"; }
}
build o1_d128_c2 128 2 1 &
build o1_d64_c3 64 3 1 &
wait
build o0_d64_c1 64 1 0
for b in o1_d128_c2 o1_d64_c3 o0_d64_c1; do
	"$T/$b" >"$T/out" || { cat "$T/out"; fail "$b"; }
	expect_out "^ok 18 shapes \(TILE_ORDER [01], BLOCK_M (64|128|192)\)$"
done
echo ok
