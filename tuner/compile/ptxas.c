/* ptxas.c - ptxas's error log through a dlopen'ed nvJitLink (see ptxas.h). */
#include "compile/ptxas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nvJitLink's C API (nvJitLink.h, CUDA 12.0+), declared here so that fatune
 * builds where the header is missing: every call returns an enum whose 0 is
 * NVJITLINK_SUCCESS; the handle is opaque; NVJITLINK_INPUT_PTX is 2. */
typedef void *jl_handle;
#define JL_INPUT_PTX 2

struct jl_api {
	int (*create)(jl_handle *h, unsigned n, const char **options);
	int (*destroy)(jl_handle *h);
	int (*add_data)(jl_handle h, int type, const void *data, size_t size, const char *name);
	int (*complete)(jl_handle h);
	int (*error_log_size)(jl_handle h, size_t *size);
	int (*error_log)(jl_handle h, char *log);
};

static struct jl_api api;
static int api_ok;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t api_dir_m = PTHREAD_MUTEX_INITIALIZER;
static char api_dir[4096];	/* under api_dir_m until api_once has run */

/* The library's major versions fatune knows (CUDA 12 and 13), newest first. */
static const char *const lib_names[] = { "libnvJitLink.so.13", "libnvJitLink.so.12",
					 "libnvJitLink.so" };

static void load_api(void)
{
	void *lib = NULL;

	for (size_t i = 0; !lib && i < sizeof(lib_names) / sizeof(lib_names[0]); i++) {
		char path[4200];
		if (api_dir[0]) {
			snprintf(path, sizeof(path), "%s/%s", api_dir, lib_names[i]);
			lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
		if (!lib)
			lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
	}
	if (!lib)
		return;
	/* POSIX lets a void * from dlsym become a function pointer */
	*(void **)&api.create = dlsym(lib, "nvJitLinkCreate");
	*(void **)&api.destroy = dlsym(lib, "nvJitLinkDestroy");
	*(void **)&api.add_data = dlsym(lib, "nvJitLinkAddData");
	*(void **)&api.complete = dlsym(lib, "nvJitLinkComplete");
	*(void **)&api.error_log_size = dlsym(lib, "nvJitLinkGetErrorLogSize");
	*(void **)&api.error_log = dlsym(lib, "nvJitLinkGetErrorLog");
	api_ok = api.create && api.destroy && api.add_data && api.complete && api.error_log_size &&
		 api.error_log;
}

char *ft_ptxas_errors(const char *ptx, size_t size, const char *arch, const char *lib_dir)
{
	char arch_opt[64];
	const char *opts[1] = { arch_opt };
	jl_handle h = NULL;
	char *log = NULL;
	size_t n = 0;
	int rc;

	/* the first caller's directory is the one used (it is NVRTC's, always) */
	pthread_mutex_lock(&api_dir_m);
	if (lib_dir && !api_dir[0])
		snprintf(api_dir, sizeof(api_dir), "%s", lib_dir);
	pthread_once(&api_once, load_api);
	pthread_mutex_unlock(&api_dir_m);
	if (!api_ok)
		return NULL;
	snprintf(arch_opt, sizeof(arch_opt), "-arch=%s", arch);
	if (api.create(&h, 1, opts))
		return NULL;
	if (api.add_data(h, JL_INPUT_PTX, ptx, size, "template.ptx"))
		goto out;
	rc = api.complete(h);
	if (api.error_log_size(h, &n) || !(log = malloc(n + 1)))
		goto out;
	if (n && api.error_log(h, log)) {
		free(log);
		log = NULL;
		goto out;
	}
	log[n] = '\0';
	if (!rc)
		log[0] = '\0'; /* accepted: whatever it said is not an error */
out:
	api.destroy(&h);
	return log;
}

char *ft_ptxas_first_error(const char *log, char *out, size_t size)
{
	const char *p = log ? strstr(log, "error") : NULL, *start, *end;

	out[0] = '\0';
	if (!p)
		return out;
	start = p;
	while (start > log && start[-1] != '\n')
		start--;
	end = strchr(p, '\n');
	/* "error   : Entry function ..." -> "Entry function ..." */
	if (!strncmp(start, "error", 5)) {
		const char *colon = strchr(start, ':');
		if (colon && (!end || colon < end)) {
			start = colon + 1;
			while (*start == ' ')
				start++;
		}
	}
	snprintf(out, size, "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
	return out;
}
