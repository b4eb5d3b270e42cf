/* gpu.c - the CUDA driver API loaded with dlopen, every call checked (see gpu.h).
 *
 * The only cuda.h user. libcuda.so.1 is opened at run time and each entry point
 * is resolved with cuGetProcAddress for the CUDA version whose signature matches
 * the PFN_*_vNNNN typedef we call it through (cudaTypedefs.h), so an older or
 * newer driver hands us the variant we expect. Nothing here links libcuda.
 */
#include "run/gpu.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entry points: field, PFN typedef, the CUDA version of that signature. */
#define CU_ENTRY_POINTS(X)                                                         \
	X(cuInit, PFN_cuInit_v2000, 2000)                                          \
	X(cuDriverGetVersion, PFN_cuDriverGetVersion_v2020, 2020)                  \
	X(cuGetErrorName, PFN_cuGetErrorName_v6000, 6000)                          \
	X(cuGetErrorString, PFN_cuGetErrorString_v6000, 6000)                      \
	X(cuDeviceGetCount, PFN_cuDeviceGetCount_v2000, 2000)                      \
	X(cuDeviceGet, PFN_cuDeviceGet_v2000, 2000)                                \
	X(cuDeviceGetName, PFN_cuDeviceGetName_v2000, 2000)                        \
	X(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000, 2000)              \
	X(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000, 7000)      \
	X(cuDevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v11000, 11000)  \
	X(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000, 4000)                        \
	X(cuModuleLoadData, PFN_cuModuleLoadData_v2000, 2000)                      \
	X(cuModuleUnload, PFN_cuModuleUnload_v2000, 2000)                          \
	X(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000, 2000)                \
	X(cuFuncSetAttribute, PFN_cuFuncSetAttribute_v9000, 9000)                  \
	X(cuTensorMapEncodeTiled, PFN_cuTensorMapEncodeTiled_v12000, 12000)        \
	X(cuMemAlloc, PFN_cuMemAlloc_v3020, 3020)                                  \
	X(cuMemFree, PFN_cuMemFree_v3020, 3020)                                    \
	X(cuMemsetD8Async, PFN_cuMemsetD8Async_v3020, 3020)                        \
	X(cuMemsetD16Async, PFN_cuMemsetD16Async_v3020, 3020)                      \
	X(cuMemsetD32Async, PFN_cuMemsetD32Async_v3020, 3020)                      \
	X(cuMemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v3020, 3020)                    \
	X(cuLaunchKernel, PFN_cuLaunchKernel_v4000, 4000)                          \
	X(cuLaunchKernelEx, PFN_cuLaunchKernelEx_v11060, 11060)                    \
	X(cuStreamCreate, PFN_cuStreamCreate_v2000, 2000)                          \
	X(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000, 2000)                \
	X(cuStreamDestroy, PFN_cuStreamDestroy_v4000, 4000)                        \
	X(cuStreamBeginCapture, PFN_cuStreamBeginCapture_v10010, 10010)            \
	X(cuStreamEndCapture, PFN_cuStreamEndCapture_v10000, 10000)                \
	X(cuGraphInstantiateWithFlags, PFN_cuGraphInstantiateWithFlags_v11040, 11040) \
	X(cuGraphLaunch, PFN_cuGraphLaunch_v10000, 10000)                          \
	X(cuGraphExecDestroy, PFN_cuGraphExecDestroy_v10000, 10000)                \
	X(cuGraphDestroy, PFN_cuGraphDestroy_v10000, 10000)                        \
	X(cuEventCreate, PFN_cuEventCreate_v2000, 2000)                            \
	X(cuEventRecord, PFN_cuEventRecord_v2000, 2000)                            \
	X(cuEventSynchronize, PFN_cuEventSynchronize_v2000, 2000)                  \
	X(cuEventElapsedTime, PFN_cuEventElapsedTime_v12080, 12080)                \
	X(cuEventDestroy, PFN_cuEventDestroy_v4000, 4000)

/* cuGetProcAddress with the symbolStatus argument exists from CUDA 12.0 on;
 * the driver exports it under this versioned name. */
#define GET_PROC_ADDRESS_SYMBOL "cuGetProcAddress_v2"
#define MIN_DRIVER_TEXT "a CUDA 12.0 or newer driver (R525+)"

/* Room for the object named in a message; the whole message is 512 bytes. */
#define OBJ_MAX 320

struct cu_api {
#define X(name, type, ver) type name;
	CU_ENTRY_POINTS(X)
#undef X
};

struct ft_gpu {
	void *lib;		/* dlopen handle of libcuda.so.1 (never closed, see ft_gpu_close) */
	struct cu_api cu;
	CUdevice dev;
	int ordinal;
	CUcontext ctx;		/* the primary context, retained */
	CUstream stream;	/* non-blocking: all work, capturable */
	CUevent ev_start, ev_stop;
	CUevent marks[FT_GPU_MARKS];
	int capturing;
	int failed;		/* a call failed: the context may be lost */
	char last_error[64];
	char name[128];		/* device name, for messages */
	int cc;			/* compute capability, major*10+minor */
};

/* Formats "CALL failed for 'OBJECT': NAME (STRING): HINT" into err. */
static int cu_fail(struct ft_gpu *g, struct ft_err *err, CUresult r, const char *call,
		   const char *object, const char *hint)
{
	const char *name = NULL, *str = NULL;

	if (!g->cu.cuGetErrorName || g->cu.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = NULL;
	if (!g->cu.cuGetErrorString || g->cu.cuGetErrorString(r, &str) != CUDA_SUCCESS || !str)
		str = "no description";
	g->failed = 1;
	if (name)
		snprintf(g->last_error, sizeof(g->last_error), "%s", name);
	else
		snprintf(g->last_error, sizeof(g->last_error), "CUresult %d", (int)r);
	return ft_error(err, FT_EFAIL, "%s failed for '%s': %s (%s)%s%s", call, object,
			g->last_error, str, hint && *hint ? ": " : "", hint ? hint : "");
}

#define CU_CHECK(g, err, expr, call, object, hint)                           \
	do {                                                                 \
		CUresult r_ = (expr);                                        \
		if (r_ != CUDA_SUCCESS)                                      \
			return cu_fail((g), (err), r_, (call), (object), (hint)); \
	} while (0)

static int resolve(struct ft_gpu *g, struct ft_err *err)
{
	PFN_cuGetProcAddress_v12000 get;
	CUdriverProcAddressQueryResult found;
	CUresult r;

	*(void **)&get = dlsym(g->lib, GET_PROC_ADDRESS_SYMBOL);
	if (!get)
		return ft_error(err, FT_EFAIL,
				"NVIDIA driver too old (libcuda.so.1 has no %s): install %s",
				GET_PROC_ADDRESS_SYMBOL, MIN_DRIVER_TEXT);
#define X(fname, type, ver)                                                                 \
	r = get(#fname, (void **)&g->cu.fname, (ver), CU_GET_PROC_ADDRESS_DEFAULT, &found);   \
	if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || !g->cu.fname)        \
		return ft_error(err, FT_EFAIL,                                                \
				"NVIDIA driver lacks %s (version %d; cuGetProcAddress gave %d/%d): " \
				"install %s",                                                 \
				#fname, (ver), (int)r, (int)found, MIN_DRIVER_TEXT);
	CU_ENTRY_POINTS(X)
#undef X
	return 0;
}

/* The device ordinal: want when >= 0, else $FATUNE_DEVICE (default 0). */
static int pick_device(int count, int want, int *ordinal, struct ft_err *err)
{
	const char *env = getenv("FATUNE_DEVICE");
	char *end;
	long v;

	*ordinal = 0;
	if (want >= 0) {
		if (want >= count)
			return ft_error(err, FT_EINPUT,
					"no GPU %d here: the driver reports %d (ordinals 0 to %d)", want,
					count, count - 1);
		*ordinal = want;
		return 0;
	}
	if (env && *env) {
		errno = 0;
		v = strtol(env, &end, 10);
		if (errno || *end || v < 0 || v >= count)
			return ft_error(err, FT_EINPUT,
					"bad FATUNE_DEVICE '%s': use a device ordinal from 0 to %d",
					env, count - 1);
		*ordinal = (int)v;
	}
	return 0;
}

static int read_limits(struct ft_gpu *g, struct ft_device_limits *lim, struct ft_err *err)
{
	static const struct {
		CUdevice_attribute attr;
		const char *name;
		size_t offset;
	} attrs[] = {
		{ CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT",
		  offsetof(struct ft_device_limits, sm_count) },
		{ CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "MAX_SHARED_MEMORY_PER_BLOCK",
		  offsetof(struct ft_device_limits, smem_static) },
		{ CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
		  "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", offsetof(struct ft_device_limits, smem_optin) },
		{ CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
		  "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
		  offsetof(struct ft_device_limits, smem_per_sm) },
		{ CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
		  "RESERVED_SHARED_MEMORY_PER_BLOCK", offsetof(struct ft_device_limits, smem_reserved) },
		{ CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
		  "MAX_REGISTERS_PER_MULTIPROCESSOR", offsetof(struct ft_device_limits, regs_per_sm) },
		{ CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK",
		  offsetof(struct ft_device_limits, threads_per_block) },
		{ CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
		  "MAX_THREADS_PER_MULTIPROCESSOR", offsetof(struct ft_device_limits, threads_per_sm) },
		{ CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE",
		  offsetof(struct ft_device_limits, l2_bytes) },
	};
	int major, minor;
	char what[160];

	snprintf(what, sizeof(what), "device %d", g->ordinal);
	CU_CHECK(g, err, g->cu.cuDeviceGetName(lim->name, (int)sizeof(lim->name), g->dev),
		 "cuDeviceGetName", what, "");
	snprintf(g->name, sizeof(g->name), "%s", lim->name);
	snprintf(what, sizeof(what), "%s", lim->name);
	CU_CHECK(g, err,
		 g->cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
					    g->dev),
		 "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", what, "");
	CU_CHECK(g, err,
		 g->cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
					    g->dev),
		 "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", what, "");
	lim->cc = major * 10 + minor;
	g->cc = lim->cc;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		char call[96];
		int *field = (int *)((char *)lim + attrs[i].offset);
		CUresult r = g->cu.cuDeviceGetAttribute(field, attrs[i].attr, g->dev);
		if (r != CUDA_SUCCESS) {
			snprintf(call, sizeof(call), "cuDeviceGetAttribute(%s)", attrs[i].name);
			return cu_fail(g, err, r, call, what, "is the driver older than the device?");
		}
	}
	return 0;
}

int ft_gpu_open(struct ft_gpu **out, int ordinal, struct ft_device_limits *lim,
		int *driver_version, struct ft_err *err)
{
	struct ft_gpu *g;
	const char *why;
	CUresult r;
	int count = 0;

	*out = NULL;
	memset(lim, 0, sizeof(*lim));
	*driver_version = 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return ft_error(err, FT_EFAIL, "out of memory opening the GPU");
	g->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!g->lib) {
		why = dlerror();
		ft_error(err, FT_EFAIL, "no NVIDIA driver: %s", why ? why : "libcuda.so.1: not found");
		free(g);
		return -1;
	}
	if (resolve(g, err))
		goto fail;
	r = g->cu.cuInit(0);
	if (r != CUDA_SUCCESS) {
		const char *name = "?", *str = "?";
		g->cu.cuGetErrorName(r, &name);
		g->cu.cuGetErrorString(r, &str);
		ft_error(err, FT_EFAIL, "no usable CUDA device (cuInit: %s: %s)", name ? name : "?",
			 str ? str : "?");
		goto fail;
	}
	if (g->cu.cuDriverGetVersion(driver_version) != CUDA_SUCCESS)
		*driver_version = 0;
	r = g->cu.cuDeviceGetCount(&count);
	if (r != CUDA_SUCCESS) {
		cu_fail(g, err, r, "cuDeviceGetCount", "the driver", "check nvidia-smi");
		goto fail;
	}
	if (count < 1) {
		ft_error(err, FT_EFAIL, "no CUDA device (the driver reports 0 devices)");
		goto fail;
	}
	if (pick_device(count, ordinal, &g->ordinal, err))
		goto fail;
	lim->ordinal = g->ordinal;
	lim->device_count = count;
	r = g->cu.cuDeviceGet(&g->dev, g->ordinal);
	if (r != CUDA_SUCCESS) {
		cu_fail(g, err, r, "cuDeviceGet", "FATUNE_DEVICE", "check FATUNE_DEVICE");
		goto fail;
	}
	if (read_limits(g, lim, err))
		goto fail;
	r = g->cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev);
	if (r != CUDA_SUCCESS) {
		g->ctx = NULL;
		cu_fail(g, err, r, "cuDevicePrimaryCtxRetain", g->name,
			"is the GPU in exclusive mode and used by another process?");
		goto fail;
	}
	if ((r = g->cu.cuCtxSetCurrent(g->ctx)) != CUDA_SUCCESS ||
	    (r = g->cu.cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS ||
	    (r = g->cu.cuEventCreate(&g->ev_start, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
	    (r = g->cu.cuEventCreate(&g->ev_stop, CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
		cu_fail(g, err, r, "creating the context, stream and events", g->name,
			"check nvidia-smi for a GPU in a bad state");
		goto fail;
	}
	for (int i = 0; i < FT_GPU_MARKS; i++)
		if ((r = g->cu.cuEventCreate(&g->marks[i], CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
			g->marks[i] = NULL;
			cu_fail(g, err, r, "cuEventCreate", "the timing marks",
				"check nvidia-smi for a GPU in a bad state");
			goto fail;
		}
	g->failed = 0;
	*out = g;
	return 0;
fail:
	ft_gpu_close(g);
	return -1;
}

void ft_gpu_close(struct ft_gpu *g)
{
	if (!g)
		return;
	/* teardown results are ignored: after a fault they all fail, and the
	 * process is about to exit anyway */
	if (g->ev_start)
		g->cu.cuEventDestroy(g->ev_start);
	if (g->ev_stop)
		g->cu.cuEventDestroy(g->ev_stop);
	for (int i = 0; i < FT_GPU_MARKS; i++)
		if (g->marks[i])
			g->cu.cuEventDestroy(g->marks[i]);
	if (g->stream)
		g->cu.cuStreamDestroy(g->stream);
	if (g->ctx)
		g->cu.cuDevicePrimaryCtxRelease(g->dev);
	/* libcuda stays loaded: unloading the driver while its threads may still
	 * run is unsafe, and a process opens it at most once */
	free(g);
}

int ft_gpu_failed(const struct ft_gpu *g)
{
	return g->failed;
}

const char *ft_gpu_last_error(const struct ft_gpu *g)
{
	return g->last_error;
}

int ft_gpu_module_load_data(struct ft_gpu *g, const void *image, const char *what,
			    struct ft_gpu_module **out, struct ft_err *err)
{
	CUmodule m;
	char hint[96];

	snprintf(hint, sizeof(hint), "was it compiled for sm_%d (this device, %s)?", g->cc,
		 g->name);
	CU_CHECK(g, err, g->cu.cuModuleLoadData(&m, image), "cuModuleLoadData", what, hint);
	*out = (struct ft_gpu_module *)m;
	return 0;
}

int ft_gpu_module_preload(struct ft_gpu *g, const void *image, const char *kernel,
			  struct ft_gpu_module **out)
{
	CUmodule m;
	CUfunction f;

	*out = NULL;
	if (g->cu.cuCtxSetCurrent(g->ctx) != CUDA_SUCCESS ||
	    g->cu.cuModuleLoadData(&m, image) != CUDA_SUCCESS)
		return -1;
	/* lazy loading (CUDA_MODULE_LOADING=LAZY, the default) loads a kernel
	 * when it is first looked up: here, not on the job's thread */
	if (kernel && *kernel && g->cu.cuModuleGetFunction(&f, m, kernel) != CUDA_SUCCESS) {
		g->cu.cuModuleUnload(m);
		return -1;
	}
	*out = (struct ft_gpu_module *)m;
	return 0;
}

int ft_gpu_module_load_file(struct ft_gpu *g, const char *path, struct ft_gpu_module **out,
			    struct ft_err *err)
{
	/* a CUBIN of a few MB is large; anything past this is not one */
	const long max_bytes = 256L << 20;
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;
	int ret;

	if (!f)
		return ft_error(err, FT_EFAIL, "cannot open CUBIN '%s': %s (was the cache cleared?)",
				path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		ft_error(err, FT_EFAIL, "cannot size CUBIN '%s': %s", path, strerror(errno));
		fclose(f);
		return -1;
	}
	if (n == 0 || n > max_bytes) {
		fclose(f);
		return ft_error(err, FT_EFAIL, "CUBIN '%s' has %ld bytes: recompile it", path, n);
	}
	buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		ft_error(err, FT_EFAIL, "cannot read CUBIN '%s': %s", path,
			 buf ? "short read" : "out of memory");
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	ret = ft_gpu_module_load_data(g, buf, path, out, err);
	free(buf);
	return ret;
}

void ft_gpu_module_unload(struct ft_gpu *g, struct ft_gpu_module *m)
{
	if (m)
		g->cu.cuModuleUnload((CUmodule)m);
}

int ft_gpu_function(struct ft_gpu *g, struct ft_gpu_module *m, const char *name,
		    const char *what, struct ft_gpu_func **out, struct ft_err *err)
{
	CUfunction f;
	char obj[OBJ_MAX];

	snprintf(obj, sizeof(obj), "%s' in '%s", name, what);
	CU_CHECK(g, err, g->cu.cuModuleGetFunction(&f, (CUmodule)m, name), "cuModuleGetFunction",
		 obj, "is the kernel declared extern \"C\" __global__ with that name?");
	*out = (struct ft_gpu_func *)f;
	return 0;
}

int ft_gpu_func_dynamic_smem(struct ft_gpu *g, struct ft_gpu_func *f, const char *name,
			     long long bytes, struct ft_err *err)
{
	char obj[OBJ_MAX];

	snprintf(obj, sizeof(obj), "%s' to %lld bytes of dynamic shared memory on '%s", name,
		 bytes, g->name);
	if (bytes < 0 || bytes > INT32_MAX)
		return ft_error(err, FT_EFAIL, "dynamic shared memory of %lld bytes for '%s' is out of range",
				bytes, name);
	CU_CHECK(g, err,
		 g->cu.cuFuncSetAttribute((CUfunction)f,
					  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes),
		 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", obj,
		 "is smem_bytes over the device's opt-in limit?");
	return 0;
}

int ft_gpu_tensor_map(struct ft_gpu *g, void *out, ft_devptr base, int bf16,
		      const unsigned long long dims[4], const unsigned long long strides[3],
		      const unsigned box[4], int swizzle, const char *what, struct ft_err *err)
{
	CUtensorMapSwizzle sw = swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
				: swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
				: swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
						: CU_TENSOR_MAP_SWIZZLE_NONE;
	const cuuint32_t elem_strides[4] = { 1, 1, 1, 1 };
	cuuint64_t d[4], s[3];
	cuuint32_t b[4];
	CUresult r;
	const char *name = NULL, *str = NULL;

	_Static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes (fatune_abi.h)");
	for (int i = 0; i < 4; i++) {
		d[i] = dims[i];
		b[i] = box[i];
	}
	for (int i = 0; i < 3; i++)
		s[i] = strides[i];
	/* not a launch: a refusal leaves the context intact, so g->failed stays */
	r = g->cu.cuTensorMapEncodeTiled((CUtensorMap *)out,
					 bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
					      : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
					 4, (void *)(uintptr_t)base, d, s, b, elem_strides,
					 CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
					 CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
					 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r == CUDA_SUCCESS)
		return 0;
	g->cu.cuGetErrorName(r, &name);
	g->cu.cuGetErrorString(r, &str);
	return ft_error(err, FT_EFAIL,
			"cuTensorMapEncodeTiled failed for '%s' (dims %llu x %llu x %llu x %llu, box %u x %u, swizzle %d): %s (%s): is the box over 256 or its row over the swizzle width?",
			what, dims[0], dims[1], dims[2], dims[3], box[0], box[1], swizzle,
			name ? name : "?", str ? str : "no description");
}

int ft_gpu_alloc(struct ft_gpu *g, size_t bytes, const char *what, ft_devptr *out,
		 struct ft_err *err)
{
	CUdeviceptr p;
	char obj[OBJ_MAX];

	snprintf(obj, sizeof(obj), "%s' (%zu bytes) on '%s", what, bytes, g->name);
	*out = 0;
	CU_CHECK(g, err, g->cu.cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc", obj,
		 "free GPU memory (nvidia-smi) or use a smaller shape");
	*out = (ft_devptr)p;
	return 0;
}

void ft_gpu_free(struct ft_gpu *g, ft_devptr p)
{
	if (p)
		g->cu.cuMemFree((CUdeviceptr)p);
}

int ft_gpu_memset8(struct ft_gpu *g, ft_devptr p, unsigned char v, size_t count,
		   const char *what, struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuMemsetD8Async((CUdeviceptr)p, v, count, g->stream),
		 "cuMemsetD8Async", what, "");
	return 0;
}

int ft_gpu_memset16(struct ft_gpu *g, ft_devptr p, unsigned short v, size_t count,
		    const char *what, struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuMemsetD16Async((CUdeviceptr)p, v, count, g->stream),
		 "cuMemsetD16Async", what, "");
	return 0;
}

int ft_gpu_memset32(struct ft_gpu *g, ft_devptr p, unsigned int v, size_t count,
		    const char *what, struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuMemsetD32Async((CUdeviceptr)p, v, count, g->stream),
		 "cuMemsetD32Async", what, "");
	return 0;
}

int ft_gpu_download(struct ft_gpu *g, void *dst, ft_devptr src, size_t bytes, const char *what,
		    struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, bytes, g->stream),
		 "cuMemcpyDtoHAsync", what, "");
	CU_CHECK(g, err, g->cu.cuStreamSynchronize(g->stream), "cuStreamSynchronize", what,
		 "a kernel before the copy faulted: the context is lost");
	return 0;
}

int ft_gpu_launch(struct ft_gpu *g, struct ft_gpu_func *f, const char *name,
		  const unsigned grid[3], const unsigned block[3], unsigned smem, void **args,
		  struct ft_err *err)
{
	char obj[OBJ_MAX];
	CUresult r;

	r = g->cu.cuLaunchKernel((CUfunction)f, grid[0], grid[1], grid[2], block[0], block[1],
				 block[2], smem, g->stream, args, NULL);
	if (r == CUDA_SUCCESS)
		return 0;
	snprintf(obj, sizeof(obj), "%s' with grid [%u, %u, %u], block [%u, %u, %u], %u bytes of dynamic shared memory on '%s",
		 name, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, g->name);
	return cu_fail(g, err, r, "cuLaunchKernel", obj,
		       "check launch.threads, launch.grid and smem_bytes against the device limits");
}

int ft_gpu_launch_dependent(struct ft_gpu *g, struct ft_gpu_func *f, const char *name,
			    const unsigned grid[3], const unsigned block[3], unsigned smem, void **args,
			    struct ft_err *err)
{
	CUlaunchAttribute attr;
	CUlaunchConfig cfg;
	char obj[OBJ_MAX];
	CUresult r;

	memset(&attr, 0, sizeof(attr));
	attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	attr.value.programmaticStreamSerializationAllowed = 1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = grid[0];
	cfg.gridDimY = grid[1];
	cfg.gridDimZ = grid[2];
	cfg.blockDimX = block[0];
	cfg.blockDimY = block[1];
	cfg.blockDimZ = block[2];
	cfg.sharedMemBytes = smem;
	cfg.hStream = g->stream;
	cfg.attrs = &attr;
	cfg.numAttrs = 1;
	r = g->cu.cuLaunchKernelEx(&cfg, (CUfunction)f, args, NULL);
	if (r == CUDA_SUCCESS)
		return 0;
	snprintf(obj, sizeof(obj), "%s' (programmatic dependent launch) with grid [%u, %u, %u], block [%u, %u, %u] on '%s",
		 name, grid[0], grid[1], grid[2], block[0], block[1], block[2], g->name);
	return cu_fail(g, err, r, "cuLaunchKernelEx", obj,
		       "programmatic dependent launch needs an sm_90 or newer GPU: guard launch.combine_pdl with CC >= 90");
}

int ft_gpu_sync(struct ft_gpu *g, const char *what, struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuStreamSynchronize(g->stream), "cuStreamSynchronize", what,
		 "the kernel faulted and its context is lost");
	return 0;
}

int ft_gpu_capture_begin(struct ft_gpu *g, struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuStreamBeginCapture(g->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
		 "cuStreamBeginCapture", "the timing stream", "");
	g->capturing = 1;
	return 0;
}

int ft_gpu_capture_end(struct ft_gpu *g, struct ft_gpu_graph **out, struct ft_err *err)
{
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	CUresult r;

	g->capturing = 0;
	CU_CHECK(g, err, g->cu.cuStreamEndCapture(g->stream, &graph), "cuStreamEndCapture",
		 "the timing stream", "");
	r = g->cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
	g->cu.cuGraphDestroy(graph);
	if (r != CUDA_SUCCESS)
		return cu_fail(g, err, r, "cuGraphInstantiateWithFlags", "the timing graph", "");
	*out = (struct ft_gpu_graph *)exec;
	return 0;
}

void ft_gpu_capture_abort(struct ft_gpu *g)
{
	CUgraph graph = NULL;

	if (!g->capturing)
		return;
	g->capturing = 0;
	if (g->cu.cuStreamEndCapture(g->stream, &graph) == CUDA_SUCCESS && graph)
		g->cu.cuGraphDestroy(graph);
}

int ft_gpu_graph_launch(struct ft_gpu *g, struct ft_gpu_graph *graph, struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuGraphLaunch((CUgraphExec)graph, g->stream), "cuGraphLaunch",
		 "the timing graph", "");
	return 0;
}

void ft_gpu_graph_destroy(struct ft_gpu *g, struct ft_gpu_graph *graph)
{
	if (graph)
		g->cu.cuGraphExecDestroy((CUgraphExec)graph);
}

int ft_gpu_timer_start(struct ft_gpu *g, struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuEventRecord(g->ev_start, g->stream), "cuEventRecord",
		 "the start event", "");
	return 0;
}

int ft_gpu_timer_stop(struct ft_gpu *g, double *ms, struct ft_err *err)
{
	float f = 0;

	CU_CHECK(g, err, g->cu.cuEventRecord(g->ev_stop, g->stream), "cuEventRecord",
		 "the stop event", "");
	CU_CHECK(g, err, g->cu.cuEventSynchronize(g->ev_stop), "cuEventSynchronize",
		 "the stop event", "a timed kernel faulted: the context is lost");
	CU_CHECK(g, err, g->cu.cuEventElapsedTime(&f, g->ev_start, g->ev_stop),
		 "cuEventElapsedTime", "the timing events", "");
	*ms = f;
	return 0;
}

int ft_gpu_mark(struct ft_gpu *g, int i, struct ft_err *err)
{
	CU_CHECK(g, err, g->cu.cuEventRecord(g->marks[i % FT_GPU_MARKS], g->stream), "cuEventRecord",
		 "a timing mark", "");
	return 0;
}

int ft_gpu_mark_ms(struct ft_gpu *g, int i, int j, double *ms, struct ft_err *err)
{
	float f = 0;

	CU_CHECK(g, err, g->cu.cuEventSynchronize(g->marks[j % FT_GPU_MARKS]), "cuEventSynchronize",
		 "a timing mark", "a timed kernel faulted: the context is lost");
	CU_CHECK(g, err,
		 g->cu.cuEventElapsedTime(&f, g->marks[i % FT_GPU_MARKS], g->marks[j % FT_GPU_MARKS]),
		 "cuEventElapsedTime", "the timing marks", "");
	*ms = f;
	return 0;
}
