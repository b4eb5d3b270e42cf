/* modules.h - the worker's loaded modules: candidate modules kept by CUBIN
 * key, and the reference kernels' build kept in the CUBIN cache.
 *
 * Both cut a fixed cost of the GPU worker (issue 16, docs/timing.md "Where a
 * candidate's time goes"): a raced candidate's full measurement and the
 * final's rounds find their module loaded, and a worker's start loads the
 * reference kernels from the cache instead of compiling them with NVRTC.
 * Worker process only.
 */
#ifndef FT_MODULES_H
#define FT_MODULES_H

#include <pthread.h>
#include <stddef.h>

#include "base/err.h"
#include "base/limits.h"
#include "run/gpu.h"

/* Loaded candidate modules kept by CUBIN key, least recently used out: the
 * race's full measurement follows its quick pass on the same worker, and the
 * final cycles over its finalists (FT_RACE_FINALISTS, 4 by default, up to
 * 16), so neither reads, checks and loads the CUBIN again. Same key, same
 * bytes (the key is their hash), so a kept module is the one the job names. */
#define FT_MODULE_SLOTS 17

struct ft_module_slot {
	char key[17];			/* "" when free */
	struct ft_gpu_module *mod;
	char path[FT_PATH_MAX];		/* the CUBIN's path, for messages */
	unsigned long long used;	/* ft_modules.uses when last used */
};

/* A module loaded ahead, on a thread of its own, while the GPU runs the job
 * before (ft_modules_ahead). */
struct ft_module_ahead {
	pthread_t thread;
	int running;			/* a thread to join */
	struct ft_gpu *gpu;
	char key[17];			/* the CUBIN it loads */
	char kernel[FT_NAME_MAX];	/* looked up with it (lazy loading) */
	char path[FT_PATH_MAX];
	struct ft_gpu_module *mod;	/* loaded and not taken yet; NULL: none or failed */
};

struct ft_modules {
	struct ft_module_slot slot[FT_MODULE_SLOTS];
	int nslots;			/* slots in use, 0..FT_MODULE_SLOTS; 0 loads per job */
	unsigned long long uses;
	int ahead_on;			/* 1: ft_modules_ahead loads (FATUNE_LOAD_AHEAD=0: off) */
	struct ft_module_ahead ahead;
	int ahead_taken;		/* modules loaded ahead that a job took */
};

/* The module of CUBIN key: a kept one, or the cached bytes (checked against
 * their stored hash, never the file as is) loaded and kept in a free or the
 * least recently used slot (whose module is unloaded first). *own = 1 when
 * no slot took it (nslots 0): the caller unloads it after the job. path
 * gets the CUBIN's path. -1 with err when the CUBIN cannot be read or loaded. */
int ft_modules_get(struct ft_modules *m, struct ft_gpu *gpu, const char *key,
		   struct ft_gpu_module **mod, char *path, size_t size, int *own, struct ft_err *err);

/* Unloads every kept module (a load ahead is waited for and unloaded too). */
void ft_modules_clear(struct ft_modules *m, struct ft_gpu *gpu);

/* Starts loading the CUBIN of `key` (and looking up `kernel` in it) on a
 * thread of its own, so that the next job, which the parent expects to name
 * it (job->next_cubin_key), finds it loaded: a module load is ~0.3 ms of
 * driver time on an H200, which otherwise leaves the GPU idle between two
 * jobs (docs/timing.md, "Fixed costs per candidate"). Called once the
 * current job's timing graph is made, so the load runs beside its warm-up
 * and samples (a load and the graph's instantiation take turns in the
 * driver). Does nothing for "" or a key already kept or loaded ahead, or
 * when ahead_on is 0. The next ft_modules_get (or clear) joins the thread
 * first: it takes the module when the keys match and unloads it otherwise.
 * A load that fails ahead is dropped without a trace; the job then loads the
 * CUBIN itself and reports what failed. The thread reads and hash-checks the
 * CUBIN from the cache (compile/cache.h) and makes one driver call, gpu.c's
 * ft_gpu_module_preload; nothing else of the worker runs there. */
void ft_modules_ahead(struct ft_modules *m, struct ft_gpu *gpu, const char *key,
		      const char *kernel);

/* The reference kernels (reference_path) compiled for arch ("sm_90"), as a
 * CUBIN image in *image (malloc'd, the caller frees it; *size bytes): from
 * the CUBIN cache under their compile key when there (the key holds
 * reference.cu's and fatune_abi.h's hash, the NVRTC version and the arch,
 * like a candidate's), else compiled with NVRTC and stored there (a cache
 * that cannot take it only costs the next start a compile). *cached says
 * which; use_cache 0 always compiles and stores nothing. -1 with err when it
 * does not compile. */
int ft_modules_reference(const char *reference_path, const char *arch, int use_cache, void **image,
			 size_t *size, int *cached, struct ft_err *err);

#endif
