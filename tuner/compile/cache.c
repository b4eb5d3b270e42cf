/* cache.c - the on-disk CUBIN cache (see cache.h): keys, entries written
 * atomically with their resources and content hash, lookups that hand back
 * only a CUBIN whose bytes match that hash, stats and clearing. */
#include "compile/cache.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/outfile.h"
#include "space/space.h"
#include "base/paths.h"

/* A template may include at most this many local headers (a bound on the walk). */
#define MAX_INCLUDES 64

static int mkdir_p(const char *path)
{
	char tmp[FT_PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

int ft_cache_dir(char *buf, size_t size, struct ft_err *err)
{
	const char *env = getenv("FATUNE_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (env && *env)
		snprintf(buf, size, "%s/cubin", env);
	else if (xdg && *xdg)
		snprintf(buf, size, "%s/fatune/cubin", xdg);
	else if (home && *home)
		snprintf(buf, size, "%s/.cache/fatune/cubin", home);
	else
		return ft_error(err, FT_EFAIL, "no cache directory: set FATUNE_CACHE_DIR or HOME");
	if (mkdir_p(buf))
		return ft_error(err, FT_EFAIL, "cannot create cache directory '%s': %s: set FATUNE_CACHE_DIR to a writable directory",
				buf, strerror(errno));
	return 0;
}

int ft_cache_check(struct ft_err *err)
{
	char dir[FT_PATH_MAX], probe[FT_PATH_MAX + 32];
	int fd, e = 0;

	if (ft_cache_dir(dir, sizeof(dir), err))
		return -1;
	snprintf(probe, sizeof(probe), "%s/probe.XXXXXX.tmp", dir);
	fd = mkstemps(probe, 4);
	if (fd < 0)
		e = errno;
	else if (write(fd, "x", 1) != 1 || fsync(fd))
		e = errno ? errno : EIO;
	if (fd >= 0) {
		if (close(fd) && !e)
			e = errno;
		unlink(probe);
	}
	if (e)
		return ft_error(err, FT_EFAIL,
				"CUBIN cache '%s' cannot take an entry: %s: free space there or set FATUNE_CACHE_DIR to a writable directory",
				dir, strerror(e));
	return 0;
}

int ft_cache_key_ok(const char *key)
{
	return key && strlen(key) == 16 && strspn(key, "0123456789abcdef") == 16;
}

int ft_cache_path(const char *key, char *buf, size_t size, struct ft_err *err)
{
	char dir[FT_PATH_MAX];

	if (!ft_cache_key_ok(key))
		return ft_error(err, FT_EINPUT, "'%.32s' is not a CUBIN cache key (16 hex digits)",
				key ? key : "(none)");
	if (ft_cache_dir(dir, sizeof(dir), err))
		return -1;
	snprintf(buf, size, "%s/%s.cubin", dir, key);
	return 0;
}

/* Feeds one file into the hash, then every local "..." include it names. */
struct hash_dirs {
	const char *const *dirs;	/* compile.include */
	int ndirs;
};

static int hash_file(XXH64_state_t *st, const char *path, char seen[][FT_PATH_MAX], int *nseen,
		     const struct hash_dirs *hd, struct ft_err *err)
{
	char dir[FT_PATH_MAX], line[1024];
	FILE *f;

	for (int i = 0; i < *nseen; i++)
		if (!strcmp(seen[i], path))
			return 0;
	if (*nseen >= MAX_INCLUDES)
		return ft_error(err, FT_EINPUT, "template '%s' includes more than %d local headers",
				path, MAX_INCLUDES);
	snprintf(seen[(*nseen)++], FT_PATH_MAX, "%s", path);
	f = fopen(path, "rb");
	if (!f)
		return ft_error(err, FT_EINPUT, "cannot read '%s': %s", path, strerror(errno));
	XXH64_update(st, path, 0); /* content only: a moved tree keeps its keys */
	snprintf(dir, sizeof(dir), "%s", path);
	dirname(dir);
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *q, inc[FT_PATH_MAX];
		struct stat sb;
		XXH64_update(st, line, strlen(line));
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '#')
			continue;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "include", 7))
			continue;
		p = strchr(p, '"');
		if (!p || !(q = strchr(p + 1, '"')))
			continue;
		*q = '\0';
		/* found as NVRTC finds it: next to the includer, else in
		 * kernel_templates/, else in the space's include directories */
		snprintf(inc, sizeof(inc), "%s/%s", dir, p + 1);
		if (stat(inc, &sb) || !S_ISREG(sb.st_mode))
			snprintf(inc, sizeof(inc), "%s/kernel_templates/%s", ft_data_dir(), p + 1);
		for (int i = 0; i < hd->ndirs && (stat(inc, &sb) || !S_ISREG(sb.st_mode)); i++)
			snprintf(inc, sizeof(inc), "%s/%s", hd->dirs[i], p + 1);
		if (!stat(inc, &sb) && S_ISREG(sb.st_mode)) {
			long pos = ftell(f);
			/* the line's bytes are already hashed; now the header's */
			if (hash_file(st, inc, seen, nseen, hd, err)) {
				fclose(f);
				return -1;
			}
			fseek(f, pos, SEEK_SET);
		}
	}
	fclose(f);
	return 0;
}

int ft_template_hash(const char *path, const char *const *dirs, int ndirs, char hex[17],
		     struct ft_err *err)
{
	const struct hash_dirs hd = { dirs, ndirs };
	char (*seen)[FT_PATH_MAX] = malloc(MAX_INCLUDES * sizeof(*seen));
	XXH64_state_t *st = XXH64_createState();
	int nseen = 0, ret;

	if (!st || !seen) {
		free(seen);
		XXH64_freeState(st);
		return ft_error(err, FT_EFAIL, "out of memory hashing '%s'", path);
	}
	XXH64_reset(st, 0);
	ret = hash_file(st, path, seen, &nseen, &hd, err);
	if (!ret)
		snprintf(hex, 17, "%016llx", (unsigned long long)XXH64_digest(st));
	XXH64_freeState(st);
	free(seen);
	return ret;
}

int ft_space_template_hash(const struct ft_space *sp, char hex[17], struct ft_err *err)
{
	const char *dirs[FT_MAX_INCLUDES];

	for (int i = 0; i < sp->nincludes; i++)
		dirs[i] = sp->includes[i];
	return ft_template_hash(sp->template_path, dirs, sp->nincludes, hex, err);
}

void ft_hash_hex(const void *data, size_t size, char hex[17])
{
	snprintf(hex, 17, "%016llx", (unsigned long long)XXH64(data, size, 0));
}

void ft_compile_key(const struct ft_compile_req *req, const char *template_hash, char key[17])
{
	char opts[512], buf[256];
	XXH64_state_t st;

	XXH64_reset(&st, 0);
	ft_nvrtc_options(opts, sizeof(opts));
	snprintf(buf, sizeof(buf), "tpl=%s nvrtc=%s arch=%s opts=", template_hash, ft_nvrtc_version(),
		 req->arch);
	XXH64_update(&st, buf, strlen(buf));
	XXH64_update(&st, opts, strlen(opts));
	for (int i = 0; i < req->ndefines; i++) {
		snprintf(buf, sizeof(buf), " -D%s=%lld", req->define_names[i], req->define_values[i]);
		XXH64_update(&st, buf, strlen(buf));
	}
	for (int i = 0; i < 2 && req->kernels[i]; i++)
		XXH64_update(&st, req->kernels[i], strlen(req->kernels[i]) + 1);
	/* a space's own options and include directories change the bytes too */
	for (int i = 0; i < req->noptions; i++)
		XXH64_update(&st, req->options[i], strlen(req->options[i]) + 1);
	for (int i = 0; i < req->nincludes; i++)
		XXH64_update(&st, req->includes[i], strlen(req->includes[i]) + 1);
	snprintf(buf, sizeof(buf), " params=%lld", req->param_bytes);
	XXH64_update(&st, buf, strlen(buf));
	snprintf(key, 17, "%016llx", (unsigned long long)XXH64_digest(&st));
}

/* Reads the whole file at path into a malloc'd buffer. */
static int slurp(const char *path, unsigned char **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	unsigned char *buf;

	*data = NULL;
	*size = 0;
	if (!f)
		return -1;
	if (fstat(fileno(f), &sb) || sb.st_size < 0 || !(buf = malloc((size_t)sb.st_size + 1))) {
		fclose(f);
		return -1;
	}
	if (fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size || fgetc(f) != EOF) {
		/* shorter or longer than a moment ago: being replaced; treat as unreadable */
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	*data = buf;
	*size = (size_t)sb.st_size;
	return 0;
}

/* The resource lines of an entry's .res file, as stored. */
static int res_text(const struct ft_resources res[2], char *buf, size_t size)
{
	int n = 0;

	for (int k = 0; k < 2; k++)
		n += snprintf(buf + n, size - (size_t)n, "%d %d %d %d %d %d\n", res[k].regs,
			      res[k].smem_static, res[k].stack_bytes, res[k].spill_stores,
			      res[k].spill_loads, res[k].wgmma_serialized);
	return n;
}

/* An entry's content hash: xxh64 of its resource lines and then its CUBIN,
 * so an edited resource number is caught like an altered CUBIN byte. */
static unsigned long long entry_hash(const struct ft_resources res[2], const void *cubin, size_t size)
{
	char text[256];
	XXH64_state_t st;

	XXH64_reset(&st, 0);
	XXH64_update(&st, text, (size_t)res_text(res, text, sizeof(text)));
	XXH64_update(&st, cubin, size);
	return (unsigned long long)XXH64_digest(&st);
}

/* Reads the entry whose CUBIN is cubin_path: its resources from the .res file
 * beside it and the CUBIN, checked against the size and xxh64 the .res file
 * holds. 0 with *image (malloc'd; NULL if image is NULL) and res filled, or -1
 * with err: missing, unreadable, or not the bytes that were stored. */
static int read_entry(const char *cubin_path, struct ft_resources res[2], unsigned char **image,
		      size_t *image_size, struct ft_err *err)
{
	char path[FT_PATH_MAX + 8];
	unsigned long long want_hash;
	long long want_size;
	unsigned char *data;
	size_t len = strlen(cubin_path), size;
	FILE *f;
	int n = 0;

	if (image)
		*image = NULL;
	if (len < 6 || strcmp(cubin_path + len - 6, ".cubin") || len - 6 + 5 >= sizeof(path))
		return ft_error(err, FT_EFAIL, "'%s' is not a cached CUBIN (<key>.cubin)", cubin_path);
	snprintf(path, sizeof(path), "%.*s.res", (int)(len - 6), cubin_path);
	f = fopen(path, "r");
	if (!f)
		return ft_error(err, FT_EFAIL, "cached CUBIN '%s' has no '%s' beside it: it is recompiled", cubin_path, path);
	for (int k = 0; k < 2; k++)
		n += fscanf(f, "%d %d %d %d %d %d", &res[k].regs, &res[k].smem_static,
			    &res[k].stack_bytes, &res[k].spill_stores, &res[k].spill_loads,
			    &res[k].wgmma_serialized);
	n += fscanf(f, " xxh64r %16llx %lld", &want_hash, &want_size);
	fclose(f);
	if (n != 14)
		return ft_error(err, FT_EFAIL, "'%s' is cut short or from an older fatune (no hash of its resources and CUBIN): the CUBIN is recompiled", path);
	if (slurp(cubin_path, &data, &size))
		return ft_error(err, FT_EFAIL, "cannot read cached CUBIN '%s': it is recompiled", cubin_path);
	if ((long long)size != want_size || entry_hash(res, data, size) != want_hash) {
		free(data);
		return ft_error(err, FT_EFAIL,
				"cached CUBIN '%s' or its resources are not what was stored (%zu bytes, %lld and xxh64 %016llx expected): cut short or altered; it is recompiled",
				cubin_path, size, want_size, want_hash);
	}
	if (image) {
		*image = data;
		*image_size = size;
	} else {
		free(data);
	}
	return 0;
}

int ft_cache_lookup(const char *key, struct ft_resources res[2])
{
	char path[FT_PATH_MAX];
	struct ft_err err;

	if (ft_cache_path(key, path, sizeof(path), &err))
		return 0;
	return read_entry(path, res, NULL, NULL, &err) == 0;
}

int ft_cache_read(const char *cubin_path, void **image, size_t *size, struct ft_err *err)
{
	struct ft_resources res[2];
	unsigned char *data;

	*image = NULL;
	*size = 0;
	if (read_entry(cubin_path, res, &data, size, err))
		return -1;
	*image = data;
	return 0;
}

/* A cache entry through the one output writer (base/outfile.h): a temporary
 * file made O_EXCL beside it, renamed into place. */
static int write_atomic(const char *path, const void *data, size_t size, struct ft_err *err)
{
	if (ft_outfile_write(path, data, size, err)) {
		ft_err_prefix(err, "storing a compiled kernel in the cache");
		return -1;
	}
	return 0;
}

int ft_cache_store(const char *key, const struct ft_compile_out *out, struct ft_err *err)
{
	char dir[FT_PATH_MAX], path[FT_PATH_MAX], res[256];
	int n;

	if (ft_cache_dir(dir, sizeof(dir), err))
		return -1;
	n = res_text(out->res, res, sizeof(res));
	/* the CUBIN's size and the hash of the resources and the CUBIN, checked
	 * by every lookup and load */
	n += snprintf(res + n, sizeof(res) - (size_t)n, "xxh64r %016llx %zu\n",
		      entry_hash(out->res, out->cubin, out->cubin_size), out->cubin_size);
	/* the CUBIN last: lookup needs both, and a .res without its .cubin is a miss */
	snprintf(path, sizeof(path), "%s/%s.res", dir, key);
	if (write_atomic(path, res, (size_t)n, err))
		return -1;
	snprintf(path, sizeof(path), "%s/%s.cubin", dir, key);
	return write_atomic(path, out->cubin, out->cubin_size, err);
}

static int walk(int remove, struct ft_cache_stats *st, long long *count, struct ft_err *err)
{
	char dir[FT_PATH_MAX], path[FT_PATH_MAX + 300];
	struct dirent *e;
	DIR *d;

	if (ft_cache_dir(dir, sizeof(dir), err))
		return -1;
	d = opendir(dir);
	if (!d)
		return ft_error(err, FT_EFAIL, "cannot list cache '%s': %s", dir, strerror(errno));
	if (st)
		snprintf(st->dir, sizeof(st->dir), "%s", dir);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat sb;
		int is_cubin = len > 6 && !strcmp(e->d_name + len - 6, ".cubin");
		int is_ours = is_cubin || (len > 4 && !strcmp(e->d_name + len - 4, ".res")) ||
			      (len > 4 && !strcmp(e->d_name + len - 4, ".tmp"));
		if (!is_ours)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &sb))
			continue;
		if (st) {
			st->bytes += sb.st_size;
			st->entries += is_cubin;
		}
		if (remove) {
			if (unlink(path) && errno != ENOENT) {
				closedir(d);
				return ft_error(err, FT_EFAIL, "cannot remove '%s': %s", path,
						strerror(errno));
			}
			*count += is_cubin;
		}
	}
	closedir(d);
	return 0;
}

int ft_cache_stats(struct ft_cache_stats *st, struct ft_err *err)
{
	memset(st, 0, sizeof(*st));
	return walk(0, st, NULL, err);
}

int ft_cache_clear(long long *removed, struct ft_err *err)
{
	*removed = 0;
	return walk(1, NULL, removed, err);
}
