/* gpu.h - the CUDA driver API, loaded at run time, behind a small C interface.
 *
 * gpu.c is the only cuda.h user. It dlopen()s libcuda.so.1 and resolves every
 * entry point with cuGetProcAddress, so the fatune binary never links the
 * driver and starts on machines without one; only the worker process (see
 * worker.h) ever calls ft_gpu_open. One struct ft_gpu holds the device, its
 * primary context, one non-blocking stream that all work goes to, and a pair of
 * events for timing.
 *
 * Errors: every driver call is checked; a failure returns -1 with FT_EFAIL and a
 * message naming the call, the object and what to do next, e.g.
 * "cuModuleLoadData failed for 'x.cubin': CUDA_ERROR_INVALID_SOURCE (device
 * kernel image is invalid): was it compiled for sm_90?". After a failed launch
 * or synchronize the context may be lost (illegal address): ft_gpu_failed()
 * then says so and the caller must stop using the device (the worker exits).
 *
 * Handles are opaque pointers; device addresses are ft_devptr (CUdeviceptr).
 * Not thread-safe: one thread drives one struct ft_gpu (ft_gpu_module_preload
 * excepted).
 */
#ifndef FT_GPU_H
#define FT_GPU_H

#include <stddef.h>

#include "base/arch.h"
#include "base/err.h"

typedef unsigned long long ft_devptr;	/* a device address; 0 is none */

struct ft_gpu;
struct ft_gpu_module;	/* a loaded CUBIN (CUmodule) */
struct ft_gpu_func;	/* a kernel in a module (CUfunction) */
struct ft_gpu_graph;	/* an instantiated CUDA graph (CUgraphExec) */

/* Loads the driver, cuInit, picks device `ordinal` (< 0: $FATUNE_DEVICE, else
 * 0), retains its primary context and creates the stream and events. Fills
 * *lim (name, cc, limits, L2 size, ordinal, device count) and *driver_version. On failure returns -1 and err says why
 * in a form fit for struct ft_device_info.why_not: "no NVIDIA driver
 * (libcuda.so.1: cannot open shared object file: ...)", "no CUDA device
 * (cuInit: CUDA_ERROR_NO_DEVICE ...)", ... */
int ft_gpu_open(struct ft_gpu **out, int ordinal, struct ft_device_limits *lim,
		int *driver_version, struct ft_err *err);

/* Releases everything ft_gpu_open took (g may be NULL). Safe after a lost
 * context: teardown errors are ignored. */
void ft_gpu_close(struct ft_gpu *g);

/* 1 when a launch or synchronize failed: the context may be unusable. */
int ft_gpu_failed(const struct ft_gpu *g);

/* "CUDA_ERROR_ILLEGAL_ADDRESS" for the last failed call, "" if none. */
const char *ft_gpu_last_error(const struct ft_gpu *g);

/* Modules. `what` names the object in messages (a path, "reference.cu"). */
int ft_gpu_module_load_file(struct ft_gpu *g, const char *path, struct ft_gpu_module **out,
			    struct ft_err *err);
int ft_gpu_module_load_data(struct ft_gpu *g, const void *image, const char *what,
			    struct ft_gpu_module **out, struct ft_err *err);
void ft_gpu_module_unload(struct ft_gpu *g, struct ft_gpu_module *m);
/* The one call another thread may make while a thread drives g: loads image
 * and looks up `kernel` in it (NULL or "": none) with g's context made
 * current on the calling thread, reading nothing of g but its driver table
 * and context and writing nothing of it. -1 when either call failed:
 * nothing is loaded and nothing recorded (ft_gpu_failed stays as it was);
 * the thread that drives g loads the image itself and reports the failure.
 * The module is then g's like any other (unloaded by its thread). */
int ft_gpu_module_preload(struct ft_gpu *g, const void *image, const char *kernel,
			  struct ft_gpu_module **out);
int ft_gpu_function(struct ft_gpu *g, struct ft_gpu_module *m, const char *name,
		    const char *what, struct ft_gpu_func **out, struct ft_err *err);

/* Raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES of f to bytes. */
int ft_gpu_func_dynamic_smem(struct ft_gpu *g, struct ft_gpu_func *f, const char *name,
			     long long bytes, struct ft_err *err);

/* Encodes a TMA descriptor (CUtensorMap, 128 bytes) into out for a rank-4
 * tensor of 16-bit elements at base: dims innermost first, byte strides of
 * dims 1..3, box in elements, swizzle in bytes (0, 32, 64, 128); interleave
 * none, L2 promotion 128B, out-of-bound elements read as zero. A refusal is
 * FT_EFAIL naming what, the dims and the box; the context stays usable. */
int ft_gpu_tensor_map(struct ft_gpu *g, void *out, ft_devptr base, int bf16,
		      const unsigned long long dims[4], const unsigned long long strides[3],
		      const unsigned box[4], int swizzle, const char *what, struct ft_err *err);

/* Memory. ft_gpu_free(g, 0) does nothing. The memsets and the download are
 * ordered on the stream; ft_gpu_download returns once the bytes are on the host. */
int ft_gpu_alloc(struct ft_gpu *g, size_t bytes, const char *what, ft_devptr *out,
		 struct ft_err *err);
void ft_gpu_free(struct ft_gpu *g, ft_devptr p);
int ft_gpu_memset8(struct ft_gpu *g, ft_devptr p, unsigned char v, size_t count,
		   const char *what, struct ft_err *err);
int ft_gpu_memset16(struct ft_gpu *g, ft_devptr p, unsigned short v, size_t count,
		    const char *what, struct ft_err *err);
int ft_gpu_memset32(struct ft_gpu *g, ft_devptr p, unsigned int v, size_t count,
		    const char *what, struct ft_err *err);
int ft_gpu_download(struct ft_gpu *g, void *dst, ft_devptr src, size_t bytes, const char *what,
		    struct ft_err *err);

/* Launches f on the stream: args is the kernelParams array (one pointer per
 * kernel parameter, e.g. { &params } for the attention ABI). Only launch-time
 * errors (bad geometry, too many resources) are seen here; faults surface at
 * the next ft_gpu_sync. */
int ft_gpu_launch(struct ft_gpu *g, struct ft_gpu_func *f, const char *name,
		  const unsigned grid[3], const unsigned block[3], unsigned smem, void **args,
		  struct ft_err *err);

/* The same with programmatic dependent launch (cuLaunchKernelEx with
 * CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION): f may start before
 * the kernel launched before it on the stream has finished, once every block of
 * that one has run griddepcontrol.launch_dependents or exited; f must run
 * griddepcontrol.wait before it reads what that kernel wrote. sm_90 and newer;
 * stream capture records it as a programmatic edge of the graph. */
int ft_gpu_launch_dependent(struct ft_gpu *g, struct ft_gpu_func *f, const char *name,
			    const unsigned grid[3], const unsigned block[3], unsigned smem, void **args,
			    struct ft_err *err);

/* Waits for the stream; a fault of any earlier launch is reported here,
 * attributed to `what`. */
int ft_gpu_sync(struct ft_gpu *g, const char *what, struct ft_err *err);

/* Stream capture: everything launched between begin and end becomes one graph,
 * instantiated by end. On error during the capture, call ft_gpu_capture_abort. */
int ft_gpu_capture_begin(struct ft_gpu *g, struct ft_err *err);
int ft_gpu_capture_end(struct ft_gpu *g, struct ft_gpu_graph **out, struct ft_err *err);
void ft_gpu_capture_abort(struct ft_gpu *g);
int ft_gpu_graph_launch(struct ft_gpu *g, struct ft_gpu_graph *graph, struct ft_err *err);
void ft_gpu_graph_destroy(struct ft_gpu *g, struct ft_gpu_graph *graph);

/* GPU-side timing with the two events: ft_gpu_timer_start records the start on
 * the stream; ft_gpu_timer_stop records the end, waits for it and stores the
 * milliseconds between the two in *ms. */
int ft_gpu_timer_start(struct ft_gpu *g, struct ft_err *err);
int ft_gpu_timer_stop(struct ft_gpu *g, double *ms, struct ft_err *err);

/* Timing marks, for samples timed back to back: a ring of FT_GPU_MARKS
 * events. ft_gpu_mark records mark i (slot i % FT_GPU_MARKS) on the stream;
 * ft_gpu_mark_ms waits for mark j and stores the milliseconds from mark i to
 * it in *ms. A slot is reused FT_GPU_MARKS marks later: at most
 * FT_GPU_MARKS - 1 marks may be waited for at once. */
#define FT_GPU_MARKS 8
int ft_gpu_mark(struct ft_gpu *g, int i, struct ft_err *err);
int ft_gpu_mark_ms(struct ft_gpu *g, int i, int j, double *ms, struct ft_err *err);

#endif
