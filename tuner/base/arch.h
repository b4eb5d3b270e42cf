/* arch.h - per-architecture resource limits, known without a GPU.
 *
 * The feasibility step needs the limits of the *target* arch, which is often not
 * the GPU in this machine (or there is no GPU at all), so they live in a built-in
 * table (arch.c, sources in ../shared/design/FACTS.md and the CUDA programming
 * guide's compute-capability tables). When a GPU is present, gpu.c reads the
 * real limits from the driver and ft_arch_check_device() cross-checks them.
 */
#ifndef FT_ARCH_H
#define FT_ARCH_H

#include "base/err.h"

struct ft_arch {
	const char *name;	   /* "sm_89": what --arch takes and NVRTC gets */
	int cc;			   /* compute capability as major*10+minor: 89 */
	const char *examples;	   /* "L4, RTX 4090": for messages only */
	int smem_static;	   /* bytes of static __shared__ per block */
	int smem_optin;		   /* max dynamic shared bytes per block after opt-in */
	int smem_per_sm;	   /* shared bytes per multiprocessor */
	int smem_reserved;	   /* bytes the system reserves per resident block */
	int regs_per_sm;	   /* 32-bit registers per multiprocessor */
	int regs_per_thread;	   /* max registers one thread may use */
	int threads_per_block;	   /* max threads per block */
	int threads_per_sm;	   /* max resident threads per multiprocessor */
	int blocks_per_sm;	   /* max resident blocks per multiprocessor */
};

/* Limits actually reported by a device (filled by gpu.c). */
struct ft_device_limits {
	int cc;
	int sm_count;
	int smem_static;	/* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK */
	int smem_optin;		/* ..._MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
	int smem_per_sm;	/* ..._MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
	int smem_reserved;	/* ..._RESERVED_SHARED_MEMORY_PER_BLOCK */
	int regs_per_sm;	/* ..._MAX_REGISTERS_PER_MULTIPROCESSOR */
	int threads_per_block;	/* ..._MAX_THREADS_PER_BLOCK */
	int threads_per_sm;	/* ..._MAX_THREADS_PER_MULTIPROCESSOR */
	int l2_bytes;		/* ..._L2_CACHE_SIZE */
	char name[128];		/* cuDeviceGetName */
	int ordinal;		/* which device of the machine (cuDeviceGet) */
	int device_count;	/* how many the driver reports */
};

/* The table entry for "sm_XX" (also accepts "XX", "sm_XXa", "compute_XX"),
 * or NULL with a message listing the known archs. */
const struct ft_arch *ft_arch_find(const char *name, struct ft_err *err);

/* The entry for a compute capability (major*10+minor), or NULL if unknown. */
const struct ft_arch *ft_arch_for_cc(int cc);

/* Number of entries and the i-th entry, for listings and tests. */
int ft_arch_count(void);
const struct ft_arch *ft_arch_at(int i);

/* Compares the table entry with what the driver reports. Returns 0 when they
 * agree, else -1 with a message naming the first field that differs (the
 * caller warns; the device's figures win for anything that runs there). */
int ft_arch_check_device(const struct ft_arch *a, const struct ft_device_limits *d,
			 struct ft_err *err);

/* The limits that govern a device: a's entry with every figure the driver
 * reported (d's non-zero fields) in its place. out->name stays a's. */
void ft_arch_from_device(const struct ft_arch *a, const struct ft_device_limits *d,
			 struct ft_arch *out);

#endif
