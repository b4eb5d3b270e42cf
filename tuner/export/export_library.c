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

/* The arch NVRTC compiled part d's CUBINs for ("sm_90a" for the wgmma family). */
static const char *target_of(const struct ft_dispatch *d)
{
	return d->sp->family->nvrtc_arch(d->arch);
}

/* fatune_library.h: the types the runtime and the generated parts share. */
static int write_library_h(const char *dir, const struct ft_dispatch *parts, int nparts, int ncubins,
			   struct ft_err *err)
{
	struct ft_outfile tmp;
	FILE *f = open_tmp(dir, "fatune_library.h", &tmp, err);
	char archs[256] = "";
	size_t len = 0;

	if (!f)
		return -1;
	for (int p = 0; p < nparts; p++) {
		int seen = 0;

		for (int q = 0; q < p; q++)
			seen |= !strcmp(target_of(&parts[q]), target_of(&parts[p]));
		if (!seen && len < sizeof(archs))
			len += (size_t)snprintf(archs + len, sizeof(archs) - len, "%s%s", len ? ", " : "",
						target_of(&parts[p]));	/* family names: identifiers */
	}
	fprintf(f,
		"/* fatune_library.h - what the runtime needs beside the tables (generated by fatune export --library: do not edit) */\n"
		"#ifndef FATUNE_LIBRARY_H\n#define FATUNE_LIBRARY_H\n\n"
		"#define FATUNE_LIB_NCUBINS %d\n"
		"#define FATUNE_LIB_NPARTS %d\t/* one per (arch, space): fatune_parts.c */\n"
		"#define FATUNE_LIB_ARCHS \"%s\"\t/* what the CUBINs were compiled for */\n\n"
		"struct fatune_lib_cubin {\n\tconst unsigned char *data;\n\tunsigned long size;\n"
		"\tint smem;\t\t/* its dynamic shared memory (compiled in) */\n\tconst char *key;\t/* fatune's CUBIN cache key */\n};\n"
		"extern const struct fatune_lib_cubin fatune_lib_cubins[FATUNE_LIB_NCUBINS];\n\n"
		"/* A part's pick for a problem: its entry, where it was tuned, its launch there. */\n"
		"struct fatune_lib_pick {\n\tint index;\t\t/* in the part's table */\n"
		"\tint batch, heads, kv_heads, seq_len, kv_len;\t/* the entry's tuned shape */\n"
		"\tdouble t_median_us;\t/* its time there, -1 if not timed */\n"
		"\tdouble ds, dbh;\t\t/* its distance to the problem by the table's rule (steps 2 and 3) */\n"
		"\tlong long g[10];\t/* its launch for the problem (the part's eval) */\n};\n\n"
		"/* The best configs of one space tuned on one arch (fatune_table_N.h) and what launching them needs. */\n"
		"struct fatune_lib_part {\n"
		"\tconst char *arch;\t/* the arch fatune tuned on: \"sm_90\" */\n"
		"\tconst char *target;\t/* the arch its CUBINs were compiled for: \"sm_90a\" */\n"
		"\tint cc;\t\t\t/* compute capability, major*10+minor */\n"
		"\tint exact;\t\t/* 1: the CUBINs run on exactly cc (an sm_XXa target), 0: on cc and later minors */\n"
		"\tconst char *space, *family;\n"
		"\tconst char *kernel, *combine_kernel;\t/* entry points; \"\": no combine kernel */\n"
		"\tint smem_dynamic;\t/* 1: extern __shared__, raised above the static limit */\n"
		"\tint smem_static_limit;\n"
		"\tint workspace_init;\t/* FATUNE_WORKSPACE_* of fatune_abi.h */\n"
		"\tint count;\t\t/* entries */\n"
		"\tconst int *cubin_of;\t/* per entry: its CUBIN in fatune_lib_cubins */\n"
		"\tconst int *num_splits;\t/* per entry: KV splits (1 when the space has none) */\n"
		"\tconst int *combine_pdl;\t/* per entry: 1 launches the combine with programmatic dependent launch */\n"
		"\tconst char *const *configs;\t/* per entry: \"NAME=V,...\" */\n"
		"\tconst int (*tma)[4][3];\t/* per entry and tensor Q, K, V, O: TMA box rows, cols, swizzle (0 rows: none) */\n"
		"\tint (*any)(int head_dim, int bf16, int causal);\t/* 1: an entry of this head dim, dtype and causal flag */\n"
		"\tint (*pick)(int head_dim, int bf16, int causal, int batch, int heads, int seq_len, int kv_len, int kv_heads,\n"
		"\t\t    int bshd, struct fatune_lib_pick *out);\t/* 1: the part's rule found a valid entry */\n"
		"};\nextern const struct fatune_lib_part fatune_lib_parts[FATUNE_LIB_NPARTS];\n\n#endif\n",
		ncubins, nparts, archs);
	return commit(&tmp, 0, err);
}

/* Part p's per-entry arrays and its any/pick adapters, in fatune_parts.c. */
static void write_part(FILE *f, const struct ft_dispatch *d, int p, const int *cubin_of)
{
	fprintf(f, "/* ---- part %d: %s, space %s ---- */\n\nstatic const int p%d_cubin_of[] = {", p, d->arch->name,
		d->sp->name, p);	/* names checked: ft_is_ident by the space loader */
	for (int r = 0; r < d->n; r++)
		fprintf(f, "%s%d", r ? ", " : " ", cubin_of[r]);
	fprintf(f, " };\nstatic const int p%d_num_splits[] = {", p);
	for (int r = 0; r < d->n; r++)
		fprintf(f, "%s%d", r ? ", " : " ", d->launch[r].num_splits);
	fprintf(f, " };\nstatic const int p%d_combine_pdl[] = {", p);
	for (int r = 0; r < d->n; r++)
		fprintf(f, "%s%d", r ? ", " : " ", d->launch[r].combine_pdl);
	fprintf(f, " };\nstatic const char *const p%d_configs[] = {\n", p);
	for (int r = 0; r < d->n; r++) {
		char lit[FT_GEN_SIZE(FT_CONFIG_MAX)];

		fprintf(f, "\t\"%s\",\n", ft_gen_c_string(d->rows[r].config, lit, sizeof(lit)));
	}
	fprintf(f, "};\nstatic const int p%d_tma[][4][3] = {\n", p);
	for (int r = 0; r < d->n; r++) {
		const struct ft_launch *l = &d->launch[r];

		fputs("\t{", f);
		for (int t = 0; t < FT_TENSOR_COUNT; t++)
			fprintf(f, " { %d, %d, %d },", l->plan.tma[t].rows, l->plan.tma[t].cols, l->plan.tma[t].swizzle);
		fputs(" },\n", f);
	}
	fprintf(f,
		"};\n\nstatic int p%d_any(int head_dim, int bf16, int causal)\n{\n"
		"\tfor (int i = 0; i < FATUNE_P%d_COUNT; i++)\n"
		"\t\tif (fatune_p%d_table[i].head_dim == head_dim && fatune_p%d_table[i].bf16 == bf16 &&\n"
		"\t\t    fatune_p%d_table[i].causal == causal)\n\t\t\treturn 1;\n\treturn 0;\n}\n\n"
		"static int p%d_pick(int head_dim, int bf16, int causal, int batch, int heads, int seq_len, int kv_len,\n"
		"\t\t   int kv_heads, int bshd, struct fatune_lib_pick *out)\n{\n"
		"\tconst struct fatune_p%d_entry *e =\n"
		"\t\tfatune_p%d_pick(head_dim, bf16, causal, batch, heads, seq_len, kv_len, kv_heads, bshd);\n\n"
		"\tif (!e || !fatune_p%d_eval(e, batch, heads, kv_heads, seq_len, kv_len, bshd, out->g))\n\t\treturn 0;\n"
		"\tout->index = (int)(e - fatune_p%d_table);\n"
		"\tout->batch = e->batch;\n\tout->heads = e->heads;\n\tout->kv_heads = e->kv_heads;\n"
		"\tout->seq_len = e->seq_len;\n\tout->kv_len = e->kv_len;\n\tout->t_median_us = e->t_median_us;\n"
		"\tif (kv_len <= 0)\n\t\tkv_len = seq_len;\n\tif (kv_heads <= 0)\n\t\tkv_heads = heads;\n"
		"\tout->ds = fatune_p%d_ratio_(seq_len, e->seq_len) * fatune_p%d_ratio_(kv_len, e->kv_len);\n"
		"\tout->dbh = fatune_p%d_ratio_((long long)batch * heads, (long long)e->batch * e->heads) *\n"
		"\t\t   fatune_p%d_ratio_(heads / kv_heads, e->heads / e->kv_heads);\n"
		"\treturn 1;\n}\n\n",
		p, p, p, p, p, p, p, p, p, p, p, p, p, p);
}

/* fatune_parts.c: every part's table (fatune_table_N.h), arrays and adapters, and fatune_lib_parts. */
static int write_parts(const char *dir, const struct ft_dispatch *parts, int nparts, int *const *cubin_of,
		       struct ft_err *err)
{
	struct ft_outfile tmp;
	FILE *f = open_tmp(dir, "fatune_parts.c", &tmp, err);

	if (!f)
		return -1;
	fputs("/* fatune_parts.c - the library's dispatch tables, one per (arch, space), as the runtime sees them\n"
	      " * (generated by fatune export --library: do not edit) */\n#include <stddef.h>\n\n#include \"fatune_library.h\"\n", f);
	for (int p = 0; p < nparts; p++)
		fprintf(f, "#include \"fatune_table_%d.h\"\n", p);
	fputc('\n', f);
	for (int p = 0; p < nparts; p++)
		write_part(f, &parts[p], p, cubin_of[p]);
	fputs("const struct fatune_lib_part fatune_lib_parts[FATUNE_LIB_NPARTS] = {\n", f);
	for (int p = 0; p < nparts; p++) {
		const struct ft_dispatch *d = &parts[p];
		const char *target = target_of(d);
		char kernel[FT_GEN_SIZE(FT_NAME_MAX)], combine[FT_GEN_SIZE(FT_NAME_MAX)], t[FT_GEN_SIZE(16)];
		char name[FT_GEN_SIZE(FT_NAME_MAX)], family[FT_GEN_SIZE(FT_NAME_MAX)], arch[FT_GEN_SIZE(16)];

		fprintf(f,
			"\t{ \"%s\", \"%s\", %d, %d, \"%s\", \"%s\", \"%s\", \"%s\", %d, %d, %d, FATUNE_P%d_COUNT,\n"
			"\t  p%d_cubin_of, p%d_num_splits, p%d_combine_pdl, p%d_configs, p%d_tma, p%d_any, p%d_pick },\n",
			ft_gen_c_string(d->arch->name, arch, sizeof(arch)), ft_gen_c_string(target, t, sizeof(t)),
			d->arch->cc, target[strlen(target) - 1] == 'a', ft_gen_c_string(d->sp->name, name, sizeof(name)),
			ft_gen_c_string(d->sp->family->name, family, sizeof(family)),
			ft_gen_c_string(d->sp->kernel, kernel, sizeof(kernel)),
			ft_gen_c_string(d->sp->combine_kernel, combine, sizeof(combine)), d->sp->smem_kind == FT_SMEM_DYNAMIC,
			d->arch->smem_static, (int)d->launch[0].workspace_init, p, p, p, p, p, p, p, p);
	}
	fputs("};\n", f);
	return commit(&tmp, 0, err);
}

int ft_library_write(const char *dir, const struct ft_dispatch *parts, int nparts, int *ncubins,
		     struct ft_err *err)
{
	struct cubin *cubins = NULL;
	int *cubin_of[FT_LIBRARY_MAX_PARTS] = { 0 };
	int total = 0, n = 0, rc = -1;

	*ncubins = 0;
	if (nparts < 1 || nparts > FT_LIBRARY_MAX_PARTS)
		return ft_error(err, FT_EINPUT, "a library holds 1 to %d (arch, space) tables, not %d: pick with --arch and --space",
				FT_LIBRARY_MAX_PARTS, nparts);
	for (int p = 0; p < nparts; p++)
		total += parts[p].n;
	if (!(cubins = calloc((size_t)total, sizeof(*cubins)))) {
		ft_error(err, FT_EFAIL, "out of memory");
		goto out;
	}
	for (int p = 0; p < nparts; p++) {
		const struct ft_dispatch *d = &parts[p];
		char tpl_hash[17], name[32];
		struct ft_outfile tmp;
		FILE *f;

		if (d->sp->abi != 2) {
			ft_error(err, FT_EINPUT, "space %s speaks ABI v%d: the library launches ABI v2 templates only (fatune_abi.h)",
				 d->sp->path, d->sp->abi);
			goto out;
		}
		if (!(cubin_of[p] = calloc((size_t)d->n, sizeof(int)))) {
			ft_error(err, FT_EFAIL, "out of memory");
			goto out;
		}
		if (ft_space_template_hash(d->sp, tpl_hash, err) || (p == 0 && prepare_dir(dir, err)))
			goto out;
		for (int r = 0; r < d->n; r++)
			if (entry_cubin(d, r, tpl_hash, cubins, &n, &cubin_of[p][r], err))
				goto out;
		snprintf(name, sizeof(name), "fatune_table_%d.h", p);
		if (!(f = open_tmp(dir, name, &tmp, err)) || commit(&tmp, ft_dispatch_write_part(f, d, p, err), err))
			goto out;
	}
	if (write_cubins(dir, cubins, n, err) || write_library_h(dir, parts, nparts, n, err) ||
	    write_parts(dir, parts, nparts, cubin_of, err))
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
	for (int p = 0; p < nparts && p < FT_LIBRARY_MAX_PARTS; p++)
		free(cubin_of[p]);
	return rc;
}
