/* export_library.c - the library writer (see export_library.h).
 *
 * The CUBINs come from the search's own compile request
 * (ft_pipeline_compile_req) and the CUBIN cache, so the bytes embedded are
 * those fatune timed (same template hash, NVRTC, options and defines: same
 * cache key); a miss is compiled with NVRTC and stored. The runtime sources
 * are templates under kernel_templates/library/, copied as they are.
 */
#include "export/export_library.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/cache.h"
#include "compile/feasibility.h"
#include "export/gen.h"
#include "search/pipeline.h"
#include "space/candidate.h"
#include "base/outfile.h"
#include "base/paths.h"

#define MARKER ".fatune-library"
#define MARKER_TEXT "written by fatune export --library: may be overwritten by it\n"

/* The runtime's files: template path (under the data dir) -> name in DIR. */
static const char *const copied[][2] = {
	{ "kernel_templates/library/fatune_attention.h", "fatune_attention.h" },
	{ "kernel_templates/library/fatune_attention.c", "fatune_attention.c" },
	{ "kernel_templates/library/CMakeLists.txt", "CMakeLists.txt" },
	{ "kernel_templates/library/pyproject.toml", "pyproject.toml" },
	{ "kernel_templates/library/setup.py", "setup.py" },
	{ "kernel_templates/library/fatune_attention/__init__.py", "fatune_attention/__init__.py" },
	{ "kernel_templates/fatune_abi.h", "fatune_abi.h" },
};

struct cubin {
	char key[17];
	void *image;
	size_t size;
	long long smem;
};

/* ---- files --------------------------------------------------------------- */

/* Opens DIR/name for writing through the one writer of output files
 * (base/outfile.h: a new temporary file beside it, never through a link). */
static FILE *open_tmp(const char *dir, const char *name, struct ft_outfile *o, struct ft_err *err)
{
	char path[FT_PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return ft_outfile_open(o, path, NULL, err) ? NULL : o->f;
}

/* Commits o when rc is 0 (renamed over the target), else drops it. */
static int commit(struct ft_outfile *o, int rc, struct ft_err *err)
{
	if (rc) {
		ft_outfile_abort(o);
		return rc;
	}
	return ft_outfile_commit(o, err);
}

static int copy_file(const char *dir, const char *from_rel, const char *to, struct ft_err *err)
{
	char from[FT_PATH_MAX + 64], buf[8192];
	struct ft_outfile tmp;
	FILE *in, *out;
	size_t n;

	snprintf(from, sizeof(from), "%s/%s", ft_data_dir(), from_rel);
	if (!(in = fopen(from, "r")))
		return ft_error(err, FT_EFAIL, "cannot read the library template '%s': %s: reinstall fatune", from,
				strerror(errno));
	if (!(out = open_tmp(dir, to, &tmp, err))) {
		fclose(in);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	n = (size_t)ferror(in);
	fclose(in);
	return commit(&tmp, n ? ft_error(err, FT_EFAIL, "cannot read '%s'", from) : 0, err);
}

/* dir usable: missing (created), empty, or one of ours. */
static int prepare_dir(const char *dir, struct ft_err *err)
{
	char path[FT_PATH_MAX + 64];
	struct stat st;

	if (stat(dir, &st)) {
		if (mkdir(dir, 0777))
			return ft_error(err, FT_EINPUT, "cannot create --library directory '%s': %s", dir, strerror(errno));
	} else if (!S_ISDIR(st.st_mode)) {
		return ft_error(err, FT_EINPUT, "--library '%s' is not a directory: name a new or empty directory", dir);
	} else {
		snprintf(path, sizeof(path), "%s/%s", dir, MARKER);
		if (access(path, F_OK) && rmdir(dir) && errno != ENOENT)	/* rmdir succeeds only when empty */
			return ft_error(err, FT_EINPUT,
					"--library '%s' exists and is not a library fatune wrote (no %s): name a new or empty directory",
					dir, MARKER);
		if (access(path, F_OK) && mkdir(dir, 0777))
			return ft_error(err, FT_EINPUT, "cannot create '%s': %s", dir, strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/fatune_attention", dir);
	if (mkdir(path, 0777) && errno != EEXIST)
		return ft_error(err, FT_EFAIL, "cannot create '%s': %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", dir, MARKER);
	return ft_outfile_write(path, MARKER_TEXT, sizeof(MARKER_TEXT) - 1, err);
}

/* ---- CUBINs ---------------------------------------------------------------- */

/* Entry r's CUBIN (from the cache, else compiled and stored) into cubins[]
 * unless already there; *index receives its position. */
static int entry_cubin(const struct ft_dispatch *d, int r, const char *tpl_hash, struct cubin *cubins, int *n,
		       int *index, struct ft_err *err)
{
	struct ft_trial *t = calloc(1, sizeof(*t));
	struct ft_compile_req req;
	struct ft_compile_out out = { 0 };
	struct ft_resources res[2];
	char key[17], path[FT_PATH_MAX], shape[FT_SHAPE_TEXT_MAX];
	int rc = -1;

	if (!t)
		return ft_error(err, FT_EFAIL, "out of memory");
	(void)ft_feasible_model(d->sp, d->arch, &d->cand[r], t);	/* accepted: ft_dispatch_prepare checked */
	ft_pipeline_compile_req(d->sp, d->arch, &d->rows[r].shape, t, &req);
	ft_compile_key(&req, tpl_hash, key);
	for (*index = 0; *index < *n; (*index)++)
		if (!strcmp(cubins[*index].key, key)) {
			free(t);
			return 0;
		}
	struct cubin *c = &cubins[*n];

	snprintf(c->key, sizeof(c->key), "%s", key);
	c->smem = d->cand[r].smem_bytes;
	if (ft_cache_lookup(key, res)) {
		if (ft_cache_path(key, path, sizeof(path), err) || ft_cache_read(path, &c->image, &c->size, err))
			goto out;
	} else {
		if (ft_compile(&req, &out, err))
			goto out;
		if (!out.ok) {
			ft_error(err, FT_EFAIL, "the best config of %s (%s) does not compile for %s: %s: re-tune it",
				 ft_shape_format(&d->rows[r].shape, shape, sizeof(shape)), d->rows[r].config,
				 d->arch->name, out.problem[0] ? out.problem : "see 'fatune check --compile'");
			goto out;
		}
		(void)ft_cache_store(key, &out, err);	/* a cache that cannot be written only costs time */
		c->image = out.cubin;
		c->size = out.cubin_size;
		out.cubin = NULL;
	}
	(*n)++;
	rc = 0;
out:
	ft_compile_out_release(&out);
	free(t);
	return rc;
}

static int write_cubins(const char *dir, const struct cubin *cubins, int n, struct ft_err *err)
{
	struct ft_outfile tmp;
	FILE *f = open_tmp(dir, "fatune_cubins.c", &tmp, err);

	if (!f)
		return -1;
	fputs("/* fatune_cubins.c - the library's CUBINs (generated by fatune export --library: do not edit) */\n"
	      "#include \"fatune_library.h\"\n\n", f);
	for (int c = 0; c < n; c++) {
		const unsigned char *p = cubins[c].image;

		fprintf(f, "/* CUBIN cache key %s, %zu bytes */\nstatic const unsigned char cubin_%d[] "
			   "__attribute__((aligned(64))) = {", cubins[c].key, cubins[c].size, c);
		for (size_t i = 0; i < cubins[c].size; i++)
			fprintf(f, "%s%u,", i % 24 ? "" : "\n\t", p[i]);
		fputs("\n};\n\n", f);
	}
	fputs("const struct fatune_lib_cubin fatune_lib_cubins[FATUNE_LIB_NCUBINS] = {\n", f);
	for (int c = 0; c < n; c++)
		fprintf(f, "\t{ cubin_%d, %zu, %lld, \"%s\" },\n", c, cubins[c].size, cubins[c].smem, cubins[c].key);
	fputs("};\n", f);
	return commit(&tmp, 0, err);
}

static int write_config(const char *dir, const struct ft_dispatch *d, const int *cubin_of, int ncubins,
			struct ft_err *err)
{
	const struct ft_space *sp = d->sp;
	struct ft_outfile tmp;
	FILE *f = open_tmp(dir, "fatune_library.h", &tmp, err);
	int rc = 0;

	if (!f)
		return -1;
	char arch[FT_GEN_SIZE(16)], kernel[FT_GEN_SIZE(FT_NAME_MAX)], combine[FT_GEN_SIZE(FT_NAME_MAX)];

	fprintf(f, "/* fatune_library.h - what the runtime needs beside the table (generated by fatune export --library: do not edit) */\n"
		   "#ifndef FATUNE_LIBRARY_H\n#define FATUNE_LIBRARY_H\n\n"
		   "#define FATUNE_LIB_ARCH \"%s\"\n#define FATUNE_LIB_CC %d\n"
		   "#define FATUNE_LIB_KERNEL \"%s\"\n#define FATUNE_LIB_COMBINE_KERNEL \"%s\"\n"
		   "#define FATUNE_LIB_SMEM_DYNAMIC %d\t/* 1: extern __shared__, raised above the static limit */\n"
		   "#define FATUNE_LIB_SMEM_STATIC_LIMIT %d\n"
		   "#define FATUNE_LIB_WORKSPACE_INIT %d\t/* FATUNE_WORKSPACE_* of fatune_abi.h */\n"
		   "#define FATUNE_LIB_NCUBINS %d\n\n"
		   "struct fatune_lib_cubin {\n\tconst unsigned char *data;\n\tunsigned long size;\n"
		   "\tint smem;\t\t/* its dynamic shared memory (compiled in) */\n\tconst char *key;\t/* fatune's CUBIN cache key */\n};\n"
		   "extern const struct fatune_lib_cubin fatune_lib_cubins[FATUNE_LIB_NCUBINS];\n\n",
		ft_gen_c_string(d->arch->name, arch, sizeof(arch)), d->arch->cc, ft_gen_c_string(sp->kernel, kernel, sizeof(kernel)),
		ft_gen_c_string(sp->combine_kernel, combine, sizeof(combine)), sp->smem_kind == FT_SMEM_DYNAMIC,
		d->arch->smem_static, (int)d->launch[0].workspace_init, ncubins);
	fputs("/* per dispatch entry: its CUBIN */\nstatic const int fatune_lib_cubin_of[] = {", f);
	for (int r = 0; r < d->n; r++)
		fprintf(f, "%s%d", r ? ", " : " ", cubin_of[r]);
	fputs(" };\n\n/* per entry: its KV splits (NUM_SPLITS, 1 when the space has none) */\n"
	      "static const int fatune_lib_num_splits[] = {", f);
	for (int r = 0; r < d->n; r++)
		fprintf(f, "%s%d", r ? ", " : " ", d->launch[r].num_splits);
	fputs(" };\n\n/* per entry: 1 launches its combine kernel with programmatic dependent launch (launch.combine_pdl) */\n"
	      "static const int fatune_lib_combine_pdl[] = {", f);
	for (int r = 0; r < d->n; r++)
		fprintf(f, "%s%d", r ? ", " : " ", d->launch[r].combine_pdl);
	fputs(" };\n\n/* per entry: its config */\nstatic const char *const fatune_lib_configs[] = {\n", f);
	for (int r = 0; r < d->n; r++) {
		char lit[FT_GEN_SIZE(FT_CONFIG_MAX)];

		fprintf(f, "\t\"%s\",\n", ft_gen_c_string(d->rows[r].config, lit, sizeof(lit)));
	}
	fputs("};\n\n/* per entry and tensor Q, K, V, O: TMA box rows, cols, swizzle bytes (0 rows: none) */\n"
	      "static const int fatune_lib_tma[][4][3] = {\n", f);
	for (int r = 0; r < d->n && !rc; r++) {
		const struct ft_launch *l = &d->launch[r];

		fputs("\t{", f);
		for (int t = 0; t < FT_TENSOR_COUNT; t++)
			fprintf(f, " { %d, %d, %d },", l->plan.tma[t].rows, l->plan.tma[t].cols, l->plan.tma[t].swizzle);
		fputs(" },\n", f);
	}
	fputs("};\n\n#endif\n", f);
	return commit(&tmp, rc, err);
}

int ft_library_write(const char *dir, const struct ft_dispatch *d, int *ncubins, struct ft_err *err)
{
	struct cubin *cubins = calloc((size_t)d->n, sizeof(*cubins));
	int *cubin_of = calloc((size_t)d->n, sizeof(*cubin_of));
	char tpl_hash[17];
	struct ft_outfile tmp;
	int n = 0, rc = -1;
	FILE *f;

	*ncubins = 0;
	if (!cubins || !cubin_of) {
		ft_error(err, FT_EFAIL, "out of memory");
		goto out;
	}
	if (d->sp->abi != 2) {
		ft_error(err, FT_EINPUT, "space %s speaks ABI v%d: the library launches ABI v2 templates only (fatune_abi.h)",
			 d->sp->path, d->sp->abi);
		goto out;
	}
	if (ft_space_template_hash(d->sp, tpl_hash, err) || prepare_dir(dir, err))
		goto out;
	for (int r = 0; r < d->n; r++)
		if (entry_cubin(d, r, tpl_hash, cubins, &n, &cubin_of[r], err))
			goto out;
	if (write_cubins(dir, cubins, n, err) || write_config(dir, d, cubin_of, n, err))
		goto out;
	if (!(f = open_tmp(dir, "fatune_table.h", &tmp, err)) ||
	    commit(&tmp, ft_dispatch_write(f, d, FT_DISPATCH_C, err), err))
		goto out;
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
		if (copy_file(dir, copied[i][0], copied[i][1], err))
			goto out;
	*ncubins = n;
	rc = 0;
out:
	for (int c = 0; c < n; c++)
		free(cubins[c].image);
	free(cubins);
	free(cubin_of);
	return rc;
}
