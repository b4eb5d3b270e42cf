/* attention_ptx.cuh - the few PTX instructions the attention template is built from.
 *
 * The template may not include any toolkit header (<cuda_fp16.h> alone adds
 * seconds to every NVRTC compile), so each instruction it needs is wrapped here
 * in inline PTX: shared-memory addresses, cp.async with zero-fill, ldmatrix,
 * mma.sync m16n8k16 (fp16 or bf16 in, fp32 accumulate), fp32 -> 16-bit packing,
 * and the approximate exp2/log2 the softmax uses. 16-bit values are handled as
 * raw bits (unsigned short, or two of them packed in an unsigned int); which
 * 16-bit format they are in is chosen by FATUNE_BF16 (0: fp16, 1: bf16).
 *
 * Everything here is sm_80 or newer.
 */
#ifndef FATUNE_ATTENTION_PTX_CUH
#define FATUNE_ATTENTION_PTX_CUH

#ifndef FATUNE_BF16
#error "FATUNE_BF16 must be defined (0: fp16, 1: bf16)"
#endif

/* 16 bytes moved as one vector: the width of cp.async.cg, ldmatrix rows and the
 * widest global store. */
struct alignas(16) ft_v4u {
	unsigned x, y, z, w;
};

struct alignas(8) ft_v2u {
	unsigned x, y;
};

struct alignas(8) ft_v2f {
	float x, y;
};

struct alignas(16) ft_v4f {
	float x, y, z, w;
};

/* Generic pointer to a shared-memory address (what ldmatrix and cp.async take). */
static __device__ __forceinline__ unsigned ft_smem_addr(const void *p)
{
	unsigned r;

	asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
	return r;
}

/* 16-byte global -> shared copy that bypasses L1 (.cg). src_bytes is 16 or 0:
 * with 0 nothing is read and the 16 shared bytes are zero-filled, which is how
 * rows past the sequence end are loaded (src must still be a valid address). */
static __device__ __forceinline__ void ft_cp_async16(unsigned dst, const void *src, int src_bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
		     "r"(src_bytes));
}

static __device__ __forceinline__ void ft_cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::);
}

/* Waits until at most N of this thread's committed groups are still in flight. */
template <int N> static __device__ __forceinline__ void ft_cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Four 8x8 16-bit matrices; lanes 8i..8i+7 give the row addresses of matrix i,
 * and each lane receives (row lane/4, columns 2*(lane%4), +1) of matrix i in r[i]. */
static __device__ __forceinline__ void ft_ldmatrix_x4(unsigned r[4], unsigned addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

/* The same, transposed: each lane receives (rows 2*(lane%4), +1, column lane/4). */
static __device__ __forceinline__ void ft_ldmatrix_x4_trans(unsigned r[4], unsigned addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

/* d += a * b for one m16n8k16 tile: a is the 16x16 row-major A fragment (4 regs),
 * b the 16x8 column-major B fragment (2 regs), d the 16x8 fp32 accumulator. */
static __device__ __forceinline__ void ft_mma16816(float d[4], const unsigned a[4], unsigned b0,
						   unsigned b1)
{
#if FATUNE_BF16
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/* Two fp32 values -> one register of two 16-bit values, lo in bits 0-15.
 * (cvt's first source goes to the upper half.) Round to nearest even. */
static __device__ __forceinline__ unsigned ft_pack2(float lo, float hi)
{
	unsigned r;

#if FATUNE_BF16
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
	asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
	return r;
}

/* 2^x; ex2.approx(-inf) = +0, which is what masked scores need. */
static __device__ __forceinline__ float ft_exp2(float x)
{
	float r;

	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
	return r;
}

static __device__ __forceinline__ float ft_log2(float x)
{
	float r;

	asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
	return r;
}

/* 1/x to about 1 ulp, without the IEEE division's out-of-line slow path (a
 * call that costs a stack frame and spills around it). */
static __device__ __forceinline__ float ft_rcp(float x)
{
	float r;

	asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
	return r;
}

static __device__ __forceinline__ float ft_neg_inf(void)
{
	return __int_as_float(0xff800000);
}

/* Programmatic dependent launch (PTX griddepcontrol, sm_90 and newer; both are
 * no-ops when the launch did not ask for it). launch_dependents: this block is
 * done with what the next kernel on the stream needs to start (that kernel may
 * be scheduled once every block has run it or exited). wait: blocks until the
 * kernels this one depends on have completed and their writes are visible. A
 * template that uses them must be compiled for sm_90+ (the spaces say CC >= 90). */
static __device__ __forceinline__ void ft_griddep_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

static __device__ __forceinline__ void ft_griddep_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

#endif
