# 014-fa3-mechanisms: on an sm_90 GPU, every value of the FlashAttention-3 mechanism parameters
# (issue 17) verified against the reference and timed (the timed calls are a CUDA graph of
# back-to-back calls, verified again after): PDL=1 (the combine kernel launched with programmatic
# dependent launch, griddepcontrol in both templates) next to PDL=0 on the mma template's decode
# path and the Hopper template's split-KV, and PDL=2 (released as each split block starts) on the
# decode space's; INTRA_WG_OVERLAP 1 (today's overlapped
# loop) and 2 (V loaded one tile behind K) of the Hopper template where their paths differ: masked
# tail tiles, causal rows, rows that see no key, GQA bshd bf16, persistent, ping-pong, Q in
# registers, three consumers, D 64/128/256; TILE_ORDER 0/1 x MASK_PEEL 0/1 of the Hopper template on
# causal shapes (odd ones included); KV_WARPGROUPS 2 (two consumers splitting a small grid's KV tiles);
# CLUSTER_M 2 (clusters of two blocks multicasting K and V).
# Prints each config's time beside its twins'.
. "$FT_TEST_LIB"
sm90_or_skip

# the mma template: decode (GQA packed, bshd, bf16, empty splits), the combine with and without PDL
W1="NUM_WARPS_PER_BLOCK=1,TILE_M=16"
mma=(
	"--shape 1x32x1x128 --kv-heads 8 --kv-len 8192|$W1,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=16"
	"--shape 2x40x1x128 --kv-heads 8 --kv-len 8192 --layout bshd|$W1,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=0,NUM_SPLITS=8"
	"--shape 1x32x1x128 --kv-heads 8 --kv-len 1000|$W1,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=12"
	"--shape 1x32x4x64 --kv-heads 8 --kv-len 4096 --causal --dtype bf16|$W1,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=32"
)
for c in "${mma[@]}"; do
	for pdl in 0 1; do
		bench_ok "$SPACES/attention.yaml" "${c%%|*}" "${c#*|},COMBINE_IN_KERNEL=0,PDL=$pdl"
	done
done
# the decode space (warps sharing one KV stream): PDL 2, the combine released as each split block
# starts, beside 0 and 1 (GQA bshd, ragged KV, bf16 causal with S_q 4)
KW="TILE_M=16,TILE_N=32,KV_STAGES=2,PACK_GQA=1,KV_WARPS=1"
decode=(
	"--shape 2x40x1x128 --kv-heads 8 --kv-len 8192 --layout bshd|NUM_WARPS_PER_BLOCK=2,$KW,DENSE_KV=0,NUM_SPLITS=8"
	"--shape 1x32x1x128 --kv-heads 8 --kv-len 1000|NUM_WARPS_PER_BLOCK=4,$KW,DENSE_KV=1,NUM_SPLITS=3"
	"--shape 1x32x4x64 --kv-heads 8 --kv-len 4096 --causal --dtype bf16|NUM_WARPS_PER_BLOCK=4,$KW,DENSE_KV=1,NUM_SPLITS=16"
)
for c in "${decode[@]}"; do
	for pdl in 0 1 2; do
		bench_ok "$SPACES/attention_decode.yaml" "${c%%|*}" "${c#*|},COMBINE_IN_KERNEL=0,PDL=$pdl"
	done
done

# the Hopper template: shape | config without INTRA_WG_OVERLAP and PDL | the PDL values to run
C2="NUM_CONSUMER_WG=2,BLOCK_M=128"
C1="NUM_CONSUMER_WG=1,BLOCK_M=64"
hop=(
	"--shape 1x8x1000x128 --causal|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1|0"
	"--shape 2x16x777x64 --kv-heads 4 --kv-len 1500 --layout bshd --dtype bf16 --causal|NUM_CONSUMER_WG=3,BLOCK_M=192,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1|0"
	"--shape 4x16x1024x128|$C2,BLOCK_N=176,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1|0"
	"--shape 1x8x256x128 --kv-len 4096|$C1,BLOCK_N=128,KV_STAGES=3,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,NUM_SPLITS=4|0 1"
	"--shape 2x4x300x128 --kv-len 100 --causal|$C1,BLOCK_N=64,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=2|0 1"
	"--shape 1x4x1024x256 --dtype bf16|$C2,BLOCK_N=64,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=2|0 1"
)
for c in "${hop[@]}"; do
	IFS='|' read -r args cfg pdls <<<"$c"
	# a persistent causal grid walks the heaviest row blocks first (the space's TILE_ORDER 1)
	to=0
	[[ "$args" == *--causal* && "$cfg" == *PERSISTENT=1* ]] && to=1
	for ov in 1 2; do
		for pdl in $pdls; do
			bench_ok "$SPACES/attention_sm90.yaml" "$args" "$cfg,INTRA_WG_OVERLAP=$ov,PDL=$pdl,TILE_ORDER=$to,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1"
		done
	done
done

# the causal mechanisms: TILE_ORDER (0 head-major, 1 heaviest row blocks of every head first,
# L2-grouped; the only order of persistent causal grids) x MASK_PEEL (0 a mask test per tile, 1 the
# loop peeled at each consumer's diagonal; not persistent),
# each shape | config without them: persistent and not, ping-pong, one to three consumers, D 64/128/256,
# GQA bshd, S_q > S_kv (rows that see no key), S_q < S_kv, ragged tails, splits (every shape has more
# work tiles than 132 SMs, so TILE_ORDER=1 is in the space)
cau=(
	"--shape 2x32x2048x64 --dtype bf16 --causal|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0"
	"--shape 3x12x1000x128 --kv-heads 4 --kv-len 1500 --layout bshd --causal|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=2,PDL=0"
	"--shape 2x16x1500x128 --kv-len 700 --causal|$C1,BLOCK_N=64,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0"
	"--shape 1x16x777x256 --dtype bf16 --causal|$C2,BLOCK_N=64,KV_STAGES=2,PINGPONG=1,PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=2,INTRA_WG_OVERLAP=1,PDL=0"
	"--shape 1x8x4096x64 --causal|NUM_CONSUMER_WG=3,BLOCK_M=192,BLOCK_N=80,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0"
	"--shape 1x8x333x128 --kv-len 4000 --causal|$C1,BLOCK_N=128,KV_STAGES=3,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,NUM_SPLITS=4,INTRA_WG_OVERLAP=2,PDL=1"
	"--shape 2x32x2048x64 --dtype bf16 --causal|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0"
	"--shape 1x16x777x256 --dtype bf16 --causal|$C2,BLOCK_N=64,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=2,INTRA_WG_OVERLAP=2,PDL=1"
	"--shape 1x8x4096x64 --causal|NUM_CONSUMER_WG=3,BLOCK_M=192,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0"
)
for c in "${cau[@]}"; do
	for to in 0 1; do
		# MASK_PEEL=1 is out of the space (ptxas serializes its wgmma: C7520);
		# device-session's mechanisms-check verifies it outside the space
		for mp in 0; do
			# persistent: only TILE_ORDER 1 and no peeled loop are in the space (the
			# peeled loop spilled there; TILE_ORDER 0 was slower, the space says)
			[ "$mp$to" != 01 ] && [[ "$c" == *PERSISTENT=1* ]] && continue
			bench_ok "$SPACES/attention_sm90.yaml" "${c%%|*}" "${c#*|},TILE_ORDER=$to,MASK_PEEL=$mp,KV_WARPGROUPS=1,CLUSTER_M=1"
		done
	done
done
# small grids: KV_WARPGROUPS 2, the two consumers of a 64-row block splitting its KV tiles and merging at
# the end: one KV tile (the second consumer has none) with rows that see no key, odd tails, GQA bshd bf16
# causal, split-KV with PDL, D 64/128/256
K2="NUM_CONSUMER_WG=2,BLOCK_M=64,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=2,CLUSTER_M=1"
kvw=(
	"--shape 1x8x512x64|$K2,BLOCK_N=128,Q_IN_REGS=1,NUM_SPLITS=1,INTRA_WG_OVERLAP=2,PDL=0"
	"--shape 2x4x300x128 --kv-len 100 --causal|$K2,BLOCK_N=128,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=1,PDL=0"
	"--shape 1x8x777x64 --kv-heads 2 --layout bshd --dtype bf16 --causal|$K2,BLOCK_N=176,Q_IN_REGS=1,NUM_SPLITS=1,INTRA_WG_OVERLAP=2,PDL=0"
	"--shape 1x4x256x128 --kv-len 4096|$K2,BLOCK_N=128,Q_IN_REGS=0,NUM_SPLITS=4,INTRA_WG_OVERLAP=2,PDL=1"
	"--shape 1x4x512x256|$K2,BLOCK_N=64,Q_IN_REGS=0,NUM_SPLITS=1,INTRA_WG_OVERLAP=2,PDL=0"
)
for c in "${kvw[@]}"; do
	bench_ok "$SPACES/attention_sm90.yaml" "${c%%|*}" "${c#*|}"
done
# D >= 128 non-causal: CLUSTER_M 2 (clusters of two blocks multicasting K and V) beside its CLUSTER_M 1 twin:
# non-persistent and persistent (one and two blocks per SM), ping-pong, Q in registers, three consumers,
# D 128/256, GQA bshd bf16, ragged S_q and S_kv tails, both loop orders
CL="TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,NUM_SPLITS=1,PDL=0"
clu=(
	"--shape 4x16x1024x128|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2"
	"--shape 2x16x1000x128 --kv-len 1500|$C2,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=0,INTRA_WG_OVERLAP=2"
	"--shape 2x16x640x128 --kv-heads 4 --layout bshd --dtype bf16|$C1,BLOCK_N=128,KV_STAGES=3,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=1"
	"--shape 2x16x640x128 --kv-heads 4 --layout bshd --dtype bf16|$C1,BLOCK_N=128,KV_STAGES=3,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=1,INTRA_WG_OVERLAP=2"
	"--shape 4x16x2048x128|$C1,BLOCK_N=128,KV_STAGES=2,PINGPONG=0,PERSISTENT=1,Q_IN_REGS=1,INTRA_WG_OVERLAP=2"
	"--shape 1x8x1536x128 --kv-len 1000|NUM_CONSUMER_WG=3,BLOCK_M=192,BLOCK_N=80,KV_STAGES=2,PINGPONG=0,PERSISTENT=0,Q_IN_REGS=0,INTRA_WG_OVERLAP=1"
	"--shape 1x8x512x256 --dtype bf16|$C2,BLOCK_N=64,KV_STAGES=2,PINGPONG=1,PERSISTENT=0,Q_IN_REGS=0,INTRA_WG_OVERLAP=2"
)
for c in "${clu[@]}"; do
	for cl in 1 2; do
		bench_ok "$SPACES/attention_sm90.yaml" "${c%%|*}" "${c#*|},$CL,CLUSTER_M=$cl"
	done
done
echo "all FA3 mechanism variants verified"
