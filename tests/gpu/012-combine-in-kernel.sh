# 012-combine-in-kernel: the default space's COMBINE_IN_KERNEL=1 (split-KV in one launch: the last
# split block to arrive on its workspace counter merges the partials and zeroes the counter) verified
# on the GPU where its paths differ: decode with every split busy, with empty splits (more splits than
# a row block's tiles), causal decode rows, causal rows that see no key (S_q > S_kv), bshd, bf16,
# D=64. Each is verified and timed (so hundreds of back-to-back calls in a CUDA graph reuse the
# counters, then verified again and the workspace checked zero); the combine-kernel twin of each is
# timed beside it and both times are printed.
. "$FT_TEST_LIB"
gpu_or_skip
W1="NUM_WARPS_PER_BLOCK=1,TILE_M=16"
cases=(
  "--shape 1x32x1x128 --kv-heads 8 --kv-len 8192|$W1,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=16"
  "--shape 1x32x1x128 --kv-heads 8 --kv-len 1000|$W1,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=12"
  "--shape 1x32x4x128 --kv-heads 8 --kv-len 8192 --causal|$W1,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=32"
  "--shape 2x6x100x64 --kv-heads 2 --kv-len 37 --causal|$W1,TILE_N=32,KV_STAGES=1,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=2"
  "--shape 1x32x1x128 --kv-heads 8 --kv-len 32768 --layout bshd --dtype bf16|$W1,TILE_N=128,KV_STAGES=2,PACK_GQA=1,DENSE_KV=0,NUM_SPLITS=64"
  "--shape 4x32x1x64 --kv-heads 8 --kv-len 4096|$W1,TILE_N=64,KV_STAGES=3,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=8"
)
for c in "${cases[@]}"; do
  args=${c%%|*}
  cfg=${c#*|}
  for ik in 1 0; do
    # shellcheck disable=SC2086
    run bench $args --config "$cfg,COMBINE_IN_KERNEL=$ik,PDL=0" --json
    cat "$T/out"
    expect_rc 0 "$args COMBINE_IN_KERNEL=$ik"
    grep -q '"status":"ok"' "$T/out" || fail "$args $cfg COMBINE_IN_KERNEL=$ik is not ok"
  done
done
