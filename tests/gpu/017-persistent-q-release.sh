# 017-persistent-q-release: on an sm_90 GPU, persistent grids with Q in registers verified many
# times on shapes with work tiles of one KV tile (causal row block 0), where the producer issues
# the next tile's Q as soon as the consumers release the Q area. Until 2026-11-29 they released
# it right after their ldmatrix, and the TMA write of the next Q could land before those reads:
# a wrong 64-row tile now and then (docs/kernel_sm90.md). Before the fix, the first case below was
# wrong_result in 2 of 2 benches, and bench/sm90_check.py stress found 21 bad runs in 600 of the
# TILE_ORDER 0 walk at 2x32x2048x64 bf16 causal. Each bench runs 10 rounds, each verified before
# and after its timing (CUDA graphs of back-to-back calls); every bench must be ok.
. "$FT_TEST_LIB"
sm90_or_skip

C1="NUM_CONSUMER_WG=1,BLOCK_M=64,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=1,NUM_SPLITS=1,PDL=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
C2="NUM_CONSUMER_WG=2,BLOCK_M=128,PERSISTENT=1,Q_IN_REGS=1,NUM_SPLITS=1,PDL=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
cases=(
	"--shape 16x16x512x64 --causal|$C1,BLOCK_N=128,KV_STAGES=2,INTRA_WG_OVERLAP=1,TILE_ORDER=1"
	"--shape 2x32x2048x64 --dtype bf16 --causal|$C1,BLOCK_N=128,KV_STAGES=2,INTRA_WG_OVERLAP=1,TILE_ORDER=1"
	"--shape 16x16x512x64 --causal|$C1,BLOCK_N=128,KV_STAGES=3,INTRA_WG_OVERLAP=2,TILE_ORDER=1"
	"--shape 8x16x256x128 --causal --dtype bf16|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,INTRA_WG_OVERLAP=1,TILE_ORDER=1"
	"--shape 16x16x128x64|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,INTRA_WG_OVERLAP=1,TILE_ORDER=0"
)
for c in "${cases[@]}"; do
	IFS='|' read -r args cfg <<<"$c"
	for rep in 1 2; do
		bench_ok "$SPACES/attention_sm90.yaml" "$args --samples 40 --rounds 10" "$cfg"
	done
done
echo "persistent Q-in-registers configs verified"
