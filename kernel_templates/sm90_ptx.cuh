/* sm90_ptx.cuh - the Hopper (sm_90a) instructions the wgmma attention template is built from.
 *
 * Inline-PTX wrappers, no toolkit header (NVRTC compile time): mbarrier
 * (init, arrive, arrive with an expected transaction count, parity wait), the
 * tensor copy engine (TMA: cp.async.bulk.tensor.4d global -> shared, completing
 * on an mbarrier), the proxy and mbarrier-init fences, named barriers,
 * setmaxnreg, the cluster's rank, barrier and remote mbarrier arrival, and
 * the wgmma shared-memory matrix descriptor with the fence /
 * commit / wait of the asynchronous warpgroup MMA. The wgmma instructions
 * themselves, one function per N, are generated into sm90_wgmma.cuh.
 *
 * Shared-memory addresses are 32-bit shared-window addresses (ft_smem_addr in
 * attention_ptx.cuh). Everything here needs sm_90a (wgmma, setmaxnreg) or
 * sm_90 (the rest).
 */
#ifndef FATUNE_SM90_PTX_CUH
#define FATUNE_SM90_PTX_CUH

typedef unsigned long long ft_u64;

/* ---- mbarrier ------------------------------------------------------------ */

static __device__ __forceinline__ void ft_mbar_init(unsigned bar, unsigned count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* Makes the initialised barriers visible to the other threads and to the
 * async proxy (the copy engine completes transactions on them). */
static __device__ __forceinline__ void ft_mbar_init_fence(void)
{
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

static __device__ __forceinline__ void ft_mbar_arrive(unsigned bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* One arrival that also says `bytes` more bytes of transactions will complete
 * on this phase (the copies issued next). */
static __device__ __forceinline__ void ft_mbar_arrive_tx(unsigned bar, unsigned bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
		     : "memory");
}

/* Waits until the phase of parity `parity` has completed. A fresh barrier is
 * in phase 0, so waiting for parity 1 returns at once (the "previous" phase
 * counts as complete): producers wait on empty barriers with the flipped
 * parity. */
static __device__ __forceinline__ void ft_mbar_wait(unsigned bar, unsigned parity)
{
	unsigned done;
#ifdef FT_MBAR_SPIN_LIMIT
	/* development builds: a wait that never completes (a lost transaction,
	 * a wrong parity) traps instead of hanging the GPU */
	unsigned spins = 0;
#endif

	do {
#ifdef FT_MBAR_SPIN_LIMIT
		if (++spins > (unsigned)(FT_MBAR_SPIN_LIMIT))
			asm volatile("trap;");
#endif
		asm volatile("{\n .reg .pred p;\n"
			     " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
			     " selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(bar), "r"(parity)
			     : "memory");
	} while (!done);
}

/* ---- clusters -------------------------------------------------------------- */

/* This CTA's rank in its cluster (0 without a cluster launch). */
static __device__ __forceinline__ unsigned ft_cluster_rank(void)
{
	unsigned r;

	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}

/* One arrival on the barrier at the same shared-memory offset in the
 * cluster's CTA of rank `rank`, with the arrival's default semantics (release
 * at CTA scope), as for a local one: it says this thread's reads of a ring
 * stage (wgmma's, waited for) are done, and what waits on it is the copy
 * engine's next write. Measured on an H200 (2026-11-30): with
 * .release.cluster instead, a CLUSTER_M 2 kernel took 1.29-1.40x as long. */
static __device__ __forceinline__ void ft_mbar_arrive_cluster(unsigned bar, unsigned rank)
{
	asm volatile("{\n .reg .b32 ra;\n"
		     " mapa.shared::cluster.u32 ra, %0, %1;\n"
		     " mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
		     "r"(rank)
		     : "memory");
}

/* Every thread of every CTA of the cluster arrives, then waits for all
 * (release / acquire at cluster scope); not .aligned, so threads of one warp
 * may reach it apart. */
static __device__ __forceinline__ void ft_cluster_sync(void)
{
	asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
	asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

/* ---- TMA ------------------------------------------------------------------- */

/* Copies one box of the 4-d tensor map at `map` (the generic address of a
 * __grid_constant__ kernel parameter) at coordinates (c0 innermost .. c3) into
 * shared memory at dst; its bytes complete on the mbarrier `bar`. */
static __device__ __forceinline__ void ft_tma_load_4d(unsigned dst, const void *map, unsigned bar, int c0,
						      int c1, int c2, int c3)
{
	asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
		     "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
		     : "memory");
}

/* The same box copied into the shared memory of every CTA of the cluster
 * whose bit is set in `mask` (cluster rank r: bit r), at the same offsets
 * (dst and bar) in each; each destination's barrier receives the bytes it
 * gets. */
template <unsigned MASK>
static __device__ __forceinline__ void ft_tma_load_4d_mc(unsigned dst, const void *map, unsigned bar, int c0,
							 int c1, int c2, int c3)
{
	asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
		     " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(dst),
		     "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "n"(MASK)
		     : "memory");
}

static __device__ __forceinline__ void ft_tma_prefetch_desc(const void *map)
{
	asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

/* Orders this thread's generic-proxy shared-memory accesses with later
 * async-proxy ones (wgmma operand reads, TMA) and vice versa. */
static __device__ __forceinline__ void ft_fence_proxy_async(void)
{
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ---- named barriers and register reallocation ------------------------------ */

static __device__ __forceinline__ void ft_bar_sync(unsigned id, unsigned nthreads)
{
	asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(nthreads) : "memory");
}

static __device__ __forceinline__ void ft_bar_arrive(unsigned id, unsigned nthreads)
{
	asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(nthreads) : "memory");
}

template <int N> static __device__ __forceinline__ void ft_setmaxnreg_inc(void)
{
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N> static __device__ __forceinline__ void ft_setmaxnreg_dec(void)
{
	asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* ---- wgmma ------------------------------------------------------------------ */

/* Shared-memory matrix descriptor: start address, leading- and stride-dimension
 * byte offsets (all >> 4, 14 bits each, at bits 0, 16, 32), base offset 0 (tiles
 * start on a 1024-byte boundary, where the 128-byte swizzle pattern repeats),
 * swizzle mode at bits 62-63 (1 = 128-byte swizzle).
 *
 * K-major operand (Q, K: rows of 64 16-bit values = 128 bytes, 8-row swizzle
 * atoms of 1024 bytes): SBO = 1024 (next 8 rows), LBO unused (1); a k16 step
 * inside the 128-byte row advances the start address by 32 bytes.
 * MN-major operand (V as B of P V, d contiguous): an atom is 8 keys x 64 d;
 * SBO = 1024 (next 8 keys), LBO = the distance to the next 64 d. */
static __device__ __forceinline__ ft_u64 ft_wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
	return (ft_u64)((addr & 0x3ffff) >> 4) | ((ft_u64)((lbo & 0x3ffff) >> 4) << 16) |
	       ((ft_u64)((sbo & 0x3ffff) >> 4) << 32) | (1ull << 62);
}

static __device__ __forceinline__ void ft_wgmma_fence(void)
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void ft_wgmma_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Waits until at most N of this warpgroup's committed wgmma groups are pending. */
template <int N> static __device__ __forceinline__ void ft_wgmma_wait(void)
{
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Keeps the compiler from moving accesses of an accumulator register across
 * this point (around wgmma issue and wait, the registers belong to the
 * asynchronous unit). */
static __device__ __forceinline__ void ft_reg_fence(float &r)
{
	asm volatile("" : "+f"(r)::"memory");
}

static __device__ __forceinline__ void ft_reg_fence(unsigned &r)
{
	asm volatile("" : "+r"(r)::"memory");
}

#endif
