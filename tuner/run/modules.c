/* modules.c - candidate modules kept by key and the cached reference build (see modules.h). */
#include "run/modules.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/cache.h"
#include "compile/nvrtc.h"

/* ---- loading ahead (the thread's side touches only struct ft_module_ahead) ---- */

static void *ahead_main(void *arg)
{
	struct ft_module_ahead *a = arg;
	struct ft_err err = { 0 };
	void *image = NULL;
	size_t size = 0;

	a->mod = NULL;
	if (!ft_cache_path(a->key, a->path, sizeof(a->path), &err) &&
	    !ft_cache_read(a->path, &image, &size, &err))
		(void)ft_gpu_module_preload(a->gpu, image, a->kernel, &a->mod);
	free(image);
	return NULL;
}

static void ahead_join(struct ft_modules *m)
{
	if (m->ahead.running) {
		pthread_join(m->ahead.thread, NULL);
		m->ahead.running = 0;
	}
}

/* Joins the load ahead; unloads its module unless it is key's (then left
 * for the caller to take). */
static void ahead_settle(struct ft_modules *m, struct ft_gpu *gpu, const char *key)
{
	ahead_join(m);
	if (m->ahead.mod && (!key || strcmp(m->ahead.key, key))) {
		ft_gpu_module_unload(gpu, m->ahead.mod);
		m->ahead.mod = NULL;
	}
}

void ft_modules_ahead(struct ft_modules *m, struct ft_gpu *gpu, const char *key, const char *kernel)
{
	struct ft_module_ahead *a = &m->ahead;

	if (!m->ahead_on || !key || !*key)
		return;
	ahead_join(m);
	if (a->mod && !strcmp(a->key, key))
		return;
	for (int i = 0; i < m->nslots; i++)
		if (m->slot[i].mod && !strcmp(m->slot[i].key, key))
			return;
	ahead_settle(m, gpu, NULL);
	a->gpu = gpu;
	snprintf(a->key, sizeof(a->key), "%s", key);
	snprintf(a->kernel, sizeof(a->kernel), "%s", kernel ? kernel : "");
	a->running = !pthread_create(&a->thread, NULL, ahead_main, a);
}

int ft_modules_get(struct ft_modules *m, struct ft_gpu *gpu, const char *key,
		   struct ft_gpu_module **mod, char *path, size_t size, int *own, struct ft_err *err)
{
	struct ft_module_slot *slot = NULL;
	void *image = NULL;
	size_t image_size = 0;
	int rc;

	*own = 0;
	*mod = NULL;
	ahead_settle(m, gpu, key);
	for (int i = 0; i < m->nslots; i++) {
		struct ft_module_slot *s = &m->slot[i];

		if (s->mod && !strcmp(s->key, key)) {
			s->used = ++m->uses;
			*mod = s->mod;
			snprintf(path, size, "%s", s->path);
			return 0;
		}
		if (!slot || (slot->mod && (!s->mod || s->used < slot->used)))
			slot = s; /* a free slot, else the least recently used */
	}
	if (slot && slot->mod) {
		ft_gpu_module_unload(gpu, slot->mod);
		memset(slot, 0, sizeof(*slot));
	}
	if (m->ahead.mod) { /* loaded ahead: it is key's (ahead_settle) */
		*mod = m->ahead.mod;
		m->ahead.mod = NULL;
		m->ahead_taken++;
		snprintf(path, size, "%s", m->ahead.path);
	} else {
		if (ft_cache_path(key, path, size, err) || ft_cache_read(path, &image, &image_size, err))
			return -1;
		rc = ft_gpu_module_load_data(gpu, image, path, mod, err);
		free(image);
		if (rc)
			return -1;
	}
	if (!slot) {
		*own = 1;
		return 0;
	}
	snprintf(slot->key, sizeof(slot->key), "%s", key);
	snprintf(slot->path, sizeof(slot->path), "%s", path);
	slot->mod = *mod;
	slot->used = ++m->uses;
	return 0;
}

void ft_modules_clear(struct ft_modules *m, struct ft_gpu *gpu)
{
	ahead_settle(m, gpu, NULL);
	for (int i = 0; i < FT_MODULE_SLOTS; i++)
		if (m->slot[i].mod)
			ft_gpu_module_unload(gpu, m->slot[i].mod);
	memset(m->slot, 0, sizeof(m->slot));
}

int ft_modules_reference(const char *reference_path, const char *arch, int use_cache, void **image,
			 size_t *size, int *cached, struct ft_err *err)
{
	struct ft_compile_req req;
	struct ft_compile_out co;
	struct ft_err miss = { 0 };
	char hash[17], key[17] = "", path[FT_PATH_MAX];

	*cached = 0;
	*image = NULL;
	*size = 0;
	memset(&req, 0, sizeof(req));
	req.source_path = reference_path;
	req.arch = arch;
	/* a hit: the bytes stored by an earlier start, checked against their hash */
	if (use_cache && !ft_template_hash(reference_path, NULL, 0, hash, &miss)) {
		ft_compile_key(&req, hash, key);
		if (!ft_cache_path(key, path, sizeof(path), &miss) &&
		    !ft_cache_read(path, image, size, &miss)) {
			*cached = 1;
			return 0;
		}
	}
	if (ft_compile(&req, &co, err)) {
		ft_err_prefix(err, "cannot build the reference kernels");
		return -1;
	}
	if (!co.ok) {
		const char *log = co.log && *co.log ? co.log : "(no log)";
		ft_error(err, FT_EFAIL, "reference kernels '%s' do not compile for %s: %.300s",
			 reference_path, arch, log);
		ft_compile_out_release(&co);
		return -1;
	}
	if (key[0])
		(void)ft_cache_store(key, &co, &miss); /* best effort: a miss costs a compile */
	*image = co.cubin; /* handed over: the rest released */
	*size = co.cubin_size;
	co.cubin = NULL;
	ft_compile_out_release(&co);
	return 0;
}
