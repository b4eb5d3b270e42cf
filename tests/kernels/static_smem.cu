/* static_smem.cu - an attention kernel whose tiles live in STATIC __shared__ arrays.
 *
 * The fixture for the failure that motivates fatune (see
 * ../../../shared/design/FACTS.md): a kernel tuned on an H100 with 12 warps per
 * block and 128-row tiles asks for 0x28000 = 163840 bytes of static shared
 * memory, which no GPU allows (static __shared__ is capped at 48 KB on every
 * arch; only dynamic shared memory can opt in to more). Its space
 * (../spaces/static_smem.yaml) lets fatune reject that config before compiling
 * it, while 8-warp configs and smaller tiles fit.
 *
 * The algorithm is plain and exact, not fast. A block owns TILE_M query rows of
 * one (batch, head) and walks the keys in tiles of KV_TILE, which is
 * KEYS_PER_WARP keys per warp:
 *   1. all threads stage the Q tile (once) and the K and V tiles in shared memory;
 *   2. warp w scores its own KEYS_PER_WARP keys against every query row of the
 *      tile into the score tile s_s;
 *   3. one warp per query row (rows w, w + NUM_WARPS_PER_BLOCK, ...) folds its
 *      row of scores into a running max, sum and output (online softmax), the
 *      output in registers: lane l owns dims l, l + 32, ...
 * Every sum runs in a fixed order, so results are bit-for-bit deterministic.
 *
 * Shared memory, exactly what ptxas reports (the space's smem_bytes formula):
 *   DTYPE_BYTES * HEAD_DIM * (TILE_M + 2 * KV_TILE)   Q, K and V tiles
 *   + 4 * TILE_M * KV_TILE                            fp32 scores
 * With HEAD_DIM 64, 12 warps, TILE_M 128 and 16 keys per warp that is
 * 2 * 64 * (128 + 384) + 4 * 128 * 192 = 65536 + 98304 = 163840.
 *
 * Macros (from fatune): NUM_WARPS_PER_BLOCK, TILE_M, KEYS_PER_WARP, HEAD_DIM,
 * IS_CAUSAL, FATUNE_BF16, FATUNE_SMEM_BYTES; SMEM_SELF_CHECK (default 1) from
 * a space's compile.defines. The space has no split-KV
 * parameter, so p.num_splits is always 1 and there is no combine kernel.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fatune_abi.h"	/* kernel_templates/ is on fatune's include path */

#ifndef NUM_WARPS_PER_BLOCK
#error "NUM_WARPS_PER_BLOCK is set by the search space"
#endif

#define WARP 32
#define KV_TILE (KEYS_PER_WARP * NUM_WARPS_PER_BLOCK)
/* rows each warp owns in step 3: rows w, w + NUM_WARPS_PER_BLOCK, ... < TILE_M */
#define ROWS_PER_WARP ((TILE_M + NUM_WARPS_PER_BLOCK - 1) / NUM_WARPS_PER_BLOCK)
/* output dims each lane owns */
#define DIMS_PER_LANE (HEAD_DIM / WARP)
/* -infinity without <math.h>, which NVRTC does not have */
#define NEG_INF (-__int_as_float(0x7f800000))

static_assert(HEAD_DIM % WARP == 0, "one lane per HEAD_DIM / 32 output dims");
static_assert(TILE_M >= 1 && KEYS_PER_WARP >= 1, "tiles are not empty");

#if FATUNE_BF16
typedef __nv_bfloat16 elem_t;
static __device__ __forceinline__ float to_float(elem_t x) { return __bfloat162float(x); }
static __device__ __forceinline__ elem_t from_float(float x) { return __float2bfloat16(x); }
#else
typedef __half elem_t;
static __device__ __forceinline__ float to_float(elem_t x) { return __half2float(x); }
static __device__ __forceinline__ elem_t from_float(float x) { return __float2half(x); }
#endif

#ifndef SMEM_SELF_CHECK
#define SMEM_SELF_CHECK 1
#endif
#if defined(FATUNE_SMEM_BYTES) && SMEM_SELF_CHECK
/* the space's formula and this file can never drift apart (tests that give
 * fatune a wrong formula on purpose define SMEM_SELF_CHECK 0, so that ptxas's
 * report is what catches it) */
static_assert(sizeof(elem_t) * HEAD_DIM * (TILE_M + 2 * KV_TILE) + 4 * TILE_M * KV_TILE ==
		      FATUNE_SMEM_BYTES,
	      "smem_bytes in static_smem.yaml does not match the __shared__ arrays");
#endif

extern "C" __global__ void __launch_bounds__(NUM_WARPS_PER_BLOCK * WARP)
fatune_static_smem_fwd(struct fatune_attn_params p)
{
	__shared__ elem_t q_s[TILE_M][HEAD_DIM];
	__shared__ elem_t k_s[KV_TILE][HEAD_DIM];
	__shared__ elem_t v_s[KV_TILE][HEAD_DIM];
	__shared__ float s_s[TILE_M][KV_TILE];

	const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
	const int nthreads = NUM_WARPS_PER_BLOCK * WARP;
	const int row0 = blockIdx.x * TILE_M;
	const size_t base = ((size_t)blockIdx.z * p.h + blockIdx.y) * (size_t)p.s * HEAD_DIM;
	const elem_t *q = (const elem_t *)p.q + base;
	const elem_t *k = (const elem_t *)p.k + base;
	const elem_t *v = (const elem_t *)p.v + base;
	elem_t *o = (elem_t *)p.o + base;
	const elem_t zero = from_float(0.0f);

	float m[ROWS_PER_WARP], l[ROWS_PER_WARP], acc[ROWS_PER_WARP][DIMS_PER_LANE];
	int kv_end = p.s;

	if (row0 >= p.s)
		return;
#if IS_CAUSAL
	/* top-left causal: the last row of the tile sees keys 0 .. row0 + TILE_M - 1 */
	kv_end = min(p.s, row0 + TILE_M);
#endif
	for (int i = 0; i < ROWS_PER_WARP; i++) {
		m[i] = NEG_INF;
		l[i] = 0.0f;
		for (int d = 0; d < DIMS_PER_LANE; d++)
			acc[i][d] = 0.0f;
	}
	for (int idx = threadIdx.x; idx < TILE_M * HEAD_DIM; idx += nthreads) {
		int r = idx / HEAD_DIM, d = idx % HEAD_DIM;
		q_s[r][d] = row0 + r < p.s ? q[(size_t)(row0 + r) * HEAD_DIM + d] : zero;
	}

	for (int kv0 = 0; kv0 < kv_end; kv0 += KV_TILE) {
		__syncthreads();	/* the previous tile's readers are done */
		for (int idx = threadIdx.x; idx < KV_TILE * HEAD_DIM; idx += nthreads) {
			int j = idx / HEAD_DIM, d = idx % HEAD_DIM;
			bool in = kv0 + j < p.s;
			k_s[j][d] = in ? k[(size_t)(kv0 + j) * HEAD_DIM + d] : zero;
			v_s[j][d] = in ? v[(size_t)(kv0 + j) * HEAD_DIM + d] : zero;
		}
		__syncthreads();

		/* step 2: this warp's keys against every row of the tile */
		for (int idx = lane; idx < TILE_M * KEYS_PER_WARP; idx += WARP) {
			int r = idx / KEYS_PER_WARP, j = warp * KEYS_PER_WARP + idx % KEYS_PER_WARP;
			int key = kv0 + j;
			float dot = 0.0f;
			for (int d = 0; d < HEAD_DIM; d++)
				dot += to_float(q_s[r][d]) * to_float(k_s[j][d]);
			bool masked = key >= p.s;
#if IS_CAUSAL
			masked = masked || key > row0 + r;
#endif
			s_s[r][j] = masked ? NEG_INF : dot * p.scale;
		}
		__syncthreads();

		/* step 3: one warp per query row folds in the tile */
#pragma unroll
		for (int i = 0; i < ROWS_PER_WARP; i++) {
			int r = warp + i * NUM_WARPS_PER_BLOCK;
			float tile_max = NEG_INF, m_new, corr;

			if (r >= TILE_M)
				break;
			for (int j = lane; j < KV_TILE; j += WARP)
				tile_max = fmaxf(tile_max, s_s[r][j]);
			for (int off = WARP / 2; off > 0; off /= 2)
				tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, off));
			m_new = fmaxf(m[i], tile_max);
			if (m_new == NEG_INF)
				continue;	/* every key so far is masked for this row */
			corr = m[i] == NEG_INF ? 0.0f : __expf(m[i] - m_new);
			l[i] *= corr;
#pragma unroll
			for (int d = 0; d < DIMS_PER_LANE; d++)
				acc[i][d] *= corr;
			/* every lane walks all keys in the same order: the sums agree */
			for (int j = 0; j < KV_TILE; j++) {
				float pj = __expf(s_s[r][j] - m_new);	/* __expf(-inf) = 0 */
				l[i] += pj;
#pragma unroll
				for (int d = 0; d < DIMS_PER_LANE; d++)
					acc[i][d] += pj * to_float(v_s[j][lane + d * WARP]);
			}
			m[i] = m_new;
		}
	}

#pragma unroll
	for (int i = 0; i < ROWS_PER_WARP; i++) {
		int r = warp + i * NUM_WARPS_PER_BLOCK;
		/* a row with no visible key (impossible with top-left causal) writes 0 */
		float inv = l[i] > 0.0f ? 1.0f / l[i] : 1.0f;

		if (r >= TILE_M || row0 + r >= p.s)
			break;
#pragma unroll
		for (int d = 0; d < DIMS_PER_LANE; d++)
			o[(size_t)(row0 + r) * HEAD_DIM + lane + d * WARP] = from_float(acc[i][d] * inv);
	}
}
