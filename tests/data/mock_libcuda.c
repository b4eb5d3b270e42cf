/* mock_libcuda.c - a stand-in libcuda.so.1 that counts the driver calls a fatune library makes (tests/cli/077).
 *
 * Built as a shared object named libcuda.so.1 and found through
 * LD_LIBRARY_PATH, it answers the entry points fatune_attention.c opens with
 * success (one context, a device of compute capability 9.0) and counts each
 * call; mock_counts() hands the counters to the test program, which opens
 * the same object. No kernel runs: it checks what a call issues, not what
 * the kernels compute.
 */
#include <string.h>

enum { M_INIT, M_CTX_CURRENT, M_CTX_DEVICE, M_ATTRIBUTE, M_LOAD, M_FUNCTION, M_SET_ATTRIBUTE, M_LAUNCH, M_MEMSET,
       M_TENSOR_MAP, M_COUNT };

static int counts[M_COUNT];
static int last_smem, last_threads;
static int ctx_token, module_token, fn_token[2];

void mock_counts(int *out, int *smem, int *threads)
{
	memcpy(out, counts, sizeof(counts));
	*smem = last_smem;
	*threads = last_threads;
}

int cuInit(unsigned flags)
{
	(void)flags;
	counts[M_INIT]++;
	return 0;
}

int cuCtxGetCurrent(void **ctx)
{
	counts[M_CTX_CURRENT]++;
	*ctx = &ctx_token;
	return 0;
}

int cuCtxGetDevice(int *dev)
{
	counts[M_CTX_DEVICE]++;
	*dev = 0;
	return 0;
}

int cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	counts[M_ATTRIBUTE]++;
	*v = attr == 75 ? 9 : 0;	/* compute capability 9.0 */
	return 0;
}

int cuModuleLoadData(void **mod, const void *image)
{
	(void)image;
	counts[M_LOAD]++;
	*mod = &module_token;
	return 0;
}

int cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	(void)mod;
	counts[M_FUNCTION]++;
	*fn = strstr(name, "combine") ? &fn_token[1] : &fn_token[0];
	return 0;
}

int cuFuncSetAttribute(void *fn, int attr, int value)
{
	(void)fn;
	(void)attr;
	(void)value;
	counts[M_SET_ATTRIBUTE]++;
	return 0;
}

int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		   unsigned smem, void *stream, void **params, void **extra)
{
	(void)fn; (void)gx; (void)gy; (void)gz; (void)by; (void)bz; (void)stream; (void)extra;
	counts[M_LAUNCH]++;
	last_smem = (int)smem;
	last_threads = (int)bx;
	return params && params[0] ? 0 : 1;
}

int cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void *stream)
{
	(void)p; (void)v; (void)n; (void)stream;
	counts[M_MEMSET]++;
	return 0;
}

int cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *base, const unsigned long long *dims,
			   const unsigned long long *strides, const unsigned *box, const unsigned *elem, int interleave,
			   int swizzle, int l2, int oob)
{
	(void)map; (void)dtype; (void)rank; (void)base; (void)dims; (void)strides; (void)box; (void)elem;
	(void)interleave; (void)swizzle; (void)l2; (void)oob;
	counts[M_TENSOR_MAP]++;
	return 0;
}
