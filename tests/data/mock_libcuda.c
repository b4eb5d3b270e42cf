/* mock_libcuda.c - a stand-in libcuda.so.1 that counts the driver calls a fatune library makes (tests/cli/077).
 *
 * Built as a shared object named libcuda.so.1 and found through
 * LD_LIBRARY_PATH, it answers the entry points fatune_attention.c opens with
 * success (one context, a device of compute capability 9.0, or MOCK_CC=89 for
 * 8.9 and so on) and counts each
 * call; mock_counts() hands the counters to the test program, which opens
 * the same object. No kernel runs: it checks what a call issues, not what
 * the kernels compute. Its entry points have cuda.h's own prototypes, so a
 * cuLaunchKernelEx whose CUlaunchConfig the library lays out differently
 * from cuda.h's is refused (the library restates the struct without CUDA).
 */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

enum { M_INIT, M_CTX_CURRENT, M_CTX_DEVICE, M_ATTRIBUTE, M_LOAD, M_FUNCTION, M_SET_ATTRIBUTE, M_LAUNCH, M_MEMSET,
       M_TENSOR_MAP, M_LAUNCH_EX, M_COUNT };

static int counts[M_COUNT];
static int last_smem, last_threads;
static int ctx_token, module_token, fn_token[2];

void mock_counts(int *out, int *smem, int *threads)
{
	memcpy(out, counts, sizeof(counts));
	*smem = last_smem;
	*threads = last_threads;
}

CUresult cuInit(unsigned flags)
{
	(void)flags;
	counts[M_INIT]++;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *ctx)
{
	counts[M_CTX_CURRENT]++;
	*ctx = (CUcontext)(void *)&ctx_token;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *dev)
{
	counts[M_CTX_DEVICE]++;
	*dev = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice dev)
{
	const char *env = getenv("MOCK_CC");	/* the device's compute capability, e.g. 89; default 90 */
	int cc = env && atoi(env) > 0 ? atoi(env) : 90;

	(void)dev;
	counts[M_ATTRIBUTE]++;
	*v = attr == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? cc / 10 : cc % 10;
	return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	(void)image;
	counts[M_LOAD]++;
	*mod = (CUmodule)(void *)&module_token;
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name)
{
	(void)mod;
	counts[M_FUNCTION]++;
	*fn = (CUfunction)(void *)(strstr(name, "combine") ? &fn_token[1] : &fn_token[0]);
	return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute attr, int value)
{
	(void)fn;
	(void)attr;
	(void)value;
	counts[M_SET_ATTRIBUTE]++;
	return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			unsigned smem, CUstream stream, void **params, void **extra)
{
	(void)fn; (void)gx; (void)gy; (void)gz; (void)by; (void)bz; (void)stream; (void)extra;
	counts[M_LAUNCH]++;
	last_smem = (int)smem;
	last_threads = (int)bx;
	return params && params[0] ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream stream)
{
	(void)p; (void)v; (void)n; (void)stream;
	counts[M_MEMSET]++;
	return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *base,
				const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
				const cuuint32_t *elem, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
				CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
	(void)map; (void)dtype; (void)rank; (void)base; (void)dims; (void)strides; (void)box; (void)elem;
	(void)interleave; (void)swizzle; (void)l2; (void)oob;
	counts[M_TENSOR_MAP]++;
	return CUDA_SUCCESS;
}

/* Only the combine's programmatic dependent launch, as fatune's worker makes it. */
CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction fn, void **params, void **extra)
{
	(void)extra;
	if (fn != (CUfunction)(void *)&fn_token[1] || !params || !params[0] || cfg->numAttrs != 1 || !cfg->attrs ||
	    cfg->attrs[0].id != CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION ||
	    cfg->attrs[0].value.programmaticStreamSerializationAllowed != 1 || !cfg->gridDimX || !cfg->gridDimY ||
	    !cfg->gridDimZ || !cfg->blockDimX || cfg->blockDimY != 1 || cfg->blockDimZ != 1 || cfg->sharedMemBytes)
		return CUDA_ERROR_INVALID_VALUE;
	counts[M_LAUNCH_EX]++;
	last_threads = (int)cfg->blockDimX;
	return CUDA_SUCCESS;
}
