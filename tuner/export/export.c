/* export.c - the build_config.h writer (see export.h).
 *
 * Every name is checked before the first byte is written, so a bad row never
 * leaves half a header behind. The output is a pure function of its inputs:
 * no clock, no environment, no locale (numbers go through %lld / %.2f /
 * %.2e, which print the same in the C locale every fatune runs in). Every
 * string from the database or the space passes export/gen.h's gate.
 */
#include "export/export.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/ident.h"
#include "export/gen.h"
#include "run/runner.h"

/* A config comes from a space, which has at most FT_MAX_PARAMS parameters. */
#define MAX_ENTRIES FT_EXPORT_MAX_ENTRIES

static int bad_config(const char *config, const char *why, const char *where, struct ft_err *err)
{
	return ft_error(err, FT_EFAIL,
			"cannot export config '%s': %s at '%s': the stored best row is damaged; run the search again",
			config, why, where);
}

int ft_export_parse_config(const char *config, struct ft_export_entry *e, int *n, struct ft_err *err)
{
	const char *p = config;

	*n = 0;
	if (!*p)
		return 0;	/* a template without parameters */
	for (;;) {
		const char *start = p;
		size_t len = 0;
		long long v;
		char *end;

		if (*n == MAX_ENTRIES)
			return bad_config(config, "too many parameters", start, err);
		if (!isalpha((unsigned char)*p) && *p != '_')
			return bad_config(config, "expected a C identifier", start, err);
		while (isalnum((unsigned char)p[len]) || p[len] == '_')
			len++;
		if (len >= FT_NAME_MAX)
			return bad_config(config, "name too long", start, err);
		if (p[len] != '=')
			return bad_config(config, "expected NAME=VALUE", start, err);
		memcpy(e[*n].name, p, len);
		e[*n].name[len] = '\0';
		if (ft_gen_ident(e[*n].name, "a parameter of the stored config", err))
			return -1;
		p += len + 1;
		if (!(*p == '-' || isdigit((unsigned char)*p)))
			return bad_config(config, "expected an integer value", start, err);
		errno = 0;
		v = strtoll(p, &end, 10);
		if (errno || v < INT_MIN || v > INT_MAX || end == p || (*end && *end != ','))
			return bad_config(config, "expected an int value", start, err);
		e[*n].value = (int)v;
		if (ft_is_fatune_macro(e[*n].name))
			return bad_config(config, "fatune defines this name itself", start, err);
		for (int i = 0; i < *n; i++)
			if (!strcmp(e[i].name, e[*n].name))
				return bad_config(config, "parameter given twice", start, err);
		(*n)++;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* A formula of the space as a comment shows it: on one line, gated. */
static const char *formula(const struct ft_expr_src *e, char *buf, size_t size)
{
	char one[FT_EXPR_MAX];
	size_t o = 0;

	for (const char *p = e->text; *p && o + 1 < sizeof(one); p++) {
		char c = *p == '\n' || *p == '\t' || *p == '\r' ? ' ' : *p;
		if (c == ' ' && (!o || one[o - 1] == ' '))
			continue;
		one[o++] = c;
	}
	while (o && one[o - 1] == ' ')
		o--;
	one[o] = '\0';
	return ft_gen_comment(one, buf, size);
}

/* One macro in the form that lives with -D flags: defined here unless the
 * build defines it, and then only with the same value. */
static void macro(FILE *out, const char *name, long long v)
{
	char text[32];

	snprintf(text, sizeof(text), v < 0 ? "(%lld)" : "%lld", v);
	fprintf(out,
		"#ifndef %s\n#define %s %s\n#elif %s != %s\n"
		"#error \"%s: build_config.h says %lld, the build defines another value (a -D%s flag?): drop "
		"the flag or export again\"\n#endif\n",
		name, name, text, name, text, name, v, name);
}

static void launch_macro(FILE *out, const char *name, long long v)
{
	fprintf(out, v < 0 ? "#define FATUNE_LAUNCH_%s (%lld)\n" : "#define FATUNE_LAUNCH_%s %lld\n", name, v);
}

static const char *const init_names[] = {
	[FT_WS_ZERO] = "FATUNE_WORKSPACE_ZERO: zero it (cuMemsetD8Async) before every call",
	[FT_WS_POISON] = "FATUNE_WORKSPACE_POISON: anything; the kernel writes before it reads",
	[FT_WS_NONE] = "FATUNE_WORKSPACE_NONE: left as it is",
	[FT_WS_ZERO_ONCE] = "FATUNE_WORKSPACE_ZERO_ONCE: zero it once before the first call; each call leaves it zero",
};

static const char *const tensor_names[FT_TENSOR_COUNT] = { "Q", "K", "V", "O" };


/* The runner that made up a replayed row's times (a runner of the table
 * other than gpu and replay stores its own name as the device), or NULL for
 * times copied from a recording. */
static const char *made_up_by(const struct ft_best *b)
{
	const struct ft_runner_ops *r;
	struct ft_err ignored;

	if (!b->device[0] || !(r = ft_runner_find(b->device, &ignored)) || !strcmp(r->name, "gpu") ||
	    !strcmp(r->name, "replay"))
		return NULL;
	return r->name;
}
static void provenance(FILE *out, const struct ft_export_src *src, char *shape, const char *dtype)
{
	const struct ft_best *b = src->best;
	char s1[FT_GEN_SIZE(FT_CONFIG_MAX)], s2[FT_GEN_SIZE(128)], s3[FT_GEN_SIZE(128)];

	if (src->from_config)
		fprintf(out, "/*\n * Chosen with --config for %s (not measured by fatune).\n",
			ft_gen_comment(b->arch, s2, sizeof(s2)));
	else if (made_up_by(b) && b->replayed)
		fprintf(out, "/*\n * Made up by fatune %s for %s by the '%s' runner, a stand-in for a GPU (not measured).\n",
			ft_gen_comment(b->fatune_version, s1, sizeof(s1)), ft_gen_comment(b->arch, s2, sizeof(s2)),
			made_up_by(b));
	else
		fprintf(out,
			b->replayed ? "/*\n * Replayed by fatune %s for %s from results recorded on %s (not measured).\n"
				    : "/*\n * Tuned by fatune %s for %s on %s.\n",
			ft_gen_comment(b->fatune_version, s1, sizeof(s1)), ft_gen_comment(b->arch, s2, sizeof(s2)),
			b->device[0] ? ft_gen_comment(b->device, s3, sizeof(s3)) : "no named device");
	fprintf(out, " *   shape            %s\n", shape);
	fprintf(out, " *   dtype            %s\n", dtype);
	fprintf(out, " *   causal           %s\n", b->shape.causal ? "yes" : "no");
	fprintf(out, " *   template         %s (xxh64 %s)\n", ft_gen_comment(b->template_name, s1, sizeof(s1)),
		b->template_hash[0] ? ft_gen_comment(b->template_hash, s2, sizeof(s2)) : "unknown");
	fprintf(out, " *   space            %s (family %s)\n", b->space[0] ? ft_gen_comment(b->space, s1, sizeof(s1)) : "unknown",
		b->family[0] ? ft_gen_comment(b->family, s2, sizeof(s2)) : "mma");
	if (!src->from_config) {
		if (isfinite(b->t_median_us) && isfinite(b->t_min_us))
			fprintf(out, " *   median latency   %.2f us (min %.2f us)\n", b->t_median_us, b->t_min_us);
		else
			fputs(" *   median latency   not measured\n", out);
		if (isfinite(b->rel_err))
			fprintf(out, " *   relative error   %.2e\n", b->rel_err);
		else
			fputs(" *   relative error   not measured\n", out);
		if (b->replayed && made_up_by(b)) /* export --allow-replayed */
			fprintf(out, " *   replayed         %s: times made up by the '%s' runner ('search --runner %s'),\n"
				     " *                    not measured\n",
				b->updated_at[0] ? ft_gen_comment(b->updated_at, s1, sizeof(s1)) : "unknown",
				made_up_by(b), made_up_by(b));
		else if (b->replayed)
			fprintf(out, " *   replayed         %s: times copied from a recording by 'search --replay',\n"
				     " *                    not measured\n",
				b->updated_at[0] ? ft_gen_comment(b->updated_at, s1, sizeof(s1)) : "unknown");
		else
			fprintf(out, " *   measured         %s\n",
				b->updated_at[0] ? ft_gen_comment(b->updated_at, s1, sizeof(s1)) : "unknown");
	}
	fprintf(out, " *   config           %s\n", b->config[0] ? ft_gen_comment(b->config, s1, sizeof(s1)) : "(no parameters)");
}

static void build_howto(FILE *out, const struct ft_export_src *src)
{
	const struct ft_space *sp = src->sp;
	char s1[FT_GEN_SIZE(FT_NAME_MAX)], s2[FT_GEN_SIZE(FT_OPTION_MAX)], s3[FT_GEN_SIZE(FT_PATH_MAX)];

	fprintf(out,
		" *\n * Build: this header, then the template, in one translation unit (kernel.cu):\n"
		" *   #include \"build_config.h\"\n *   #include \"%s\"\n * and nvcc alone:\n *   nvcc -arch=%s",
		ft_gen_comment(strrchr(sp->template_path, '/') ? strrchr(sp->template_path, '/') + 1 : sp->template_path,
			       s3, sizeof(s3)),
		ft_gen_comment(src->nvrtc_arch, s1, sizeof(s1)));
	for (int i = 0; i < sp->noptions; i++)
		fprintf(out, " %s", ft_gen_comment(sp->options[i], s2, sizeof(s2)));
	for (int i = 0; i < sp->nincludes; i++)
		fprintf(out, " -I %s", ft_gen_shell_arg(sp->includes[i], s3, sizeof(s3)));
	fprintf(out, " -cubin -o %s.cubin kernel.cu\n", ft_gen_comment(sp->template_name, s1, sizeof(s1)));
	fputs(" * (the template's #include \"fatune_abi.h\" finds it beside a shipped template; a kernel\n"
	      " * of your own needs -I to fatune's kernel_templates/ unless it sits there too)\n", out);
}

static void regenerate(FILE *out, const struct ft_export_src *src, const char *shape, const char *dtype)
{
	const struct ft_best *b = src->best;
	char s1[FT_GEN_SIZE(FT_CONFIG_MAX)], s2[FT_GEN_SIZE(FT_PATH_MAX)];

	fprintf(out, " *\n * Regenerate with:\n *   fatune export --arch %s --shape %s%s --dtype %s",
		ft_gen_comment(b->arch, s1, sizeof(s1)), shape, b->shape.causal ? " --causal" : "", dtype);
	if (src->from_config)
		fprintf(out, " --config %s", ft_gen_shell_arg(b->config, s1, sizeof(s1)));
	else if (b->device[0])
		fprintf(out, " --device %s", ft_gen_shell_arg(b->device, s1, sizeof(s1)));
	if (src->space_arg)
		fprintf(out, " --space %s", ft_gen_shell_arg(src->space_arg, s2, sizeof(s2)));
	if (src->db_arg && !src->from_config)
		fprintf(out, " --db %s", ft_gen_shell_arg(src->db_arg, s2, sizeof(s2)));
	fputs(src->style == FT_EXPORT_C ? " --style c\n */\n\n" : "\n */\n\n", out);
}

static void launch(FILE *out, const struct ft_export_src *src)
{
	const struct ft_space *sp = src->sp;
	const struct ft_launch *l = &src->build->launch;
	char s1[FT_GEN_SIZE(FT_EXPR_MAX)], s2[FT_GEN_SIZE(FT_EXPR_MAX)], s3[FT_GEN_SIZE(FT_EXPR_MAX)];
	char k[FT_GEN_SIZE(FT_NAME_MAX)];
	const struct ft_shape *shape = &src->best->shape;
	long long rows = (long long)shape->b * shape->h * shape->s;	/* query rows of all heads */
	int tma = 0;

	fprintf(out, "\n/* ---- the launch (driver API; the parameters are struct fatune_attn_params of\n"
		     " * fatune_abi.h, ABI v%d) ---- */\n",
		sp->abi);
	fprintf(out, "/* the entry point (cuModuleGetFunction) */\n#define FATUNE_LAUNCH_KERNEL \"%s\"\n",
		ft_gen_c_string(sp->kernel, k, sizeof(k)));
	fprintf(out, "/* threads per block (blockDimX; Y and Z are 1): %s */\n", formula(&sp->threads, s1, sizeof(s1)));
	launch_macro(out, "THREADS", l->threads);
	fprintf(out, "/* the grid of the tuned shape; for another: x = %s, y = %s, z = %s */\n",
		formula(&sp->grid[0], s1, sizeof(s1)), formula(&sp->grid[1], s2, sizeof(s2)),
		formula(&sp->grid[2], s3, sizeof(s3)));
	launch_macro(out, "GRID_X", l->grid[0]);
	launch_macro(out, "GRID_Y", l->grid[1]);
	launch_macro(out, "GRID_Z", l->grid[2]);
	fprintf(out, "/* dynamic shared memory (sharedMemBytes); when SMEM_OPTIN is 1 (over the %s limit of\n"
		     " * 48 KB) raise the function's limit once before the first launch:\n"
		     " *   cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, FATUNE_LAUNCH_SMEM_BYTES)\n"
		     " * the template's layout uses %lld bytes (FATUNE_SMEM_BYTES)%s */\n",
		sp->smem_kind == FT_SMEM_DYNAMIC ? "default" : "static", l->smem_bytes,
		sp->smem_kind == FT_SMEM_DYNAMIC ? "" : ", as static __shared__ arrays: none is dynamic");
	launch_macro(out, "SMEM_BYTES", l->dynamic_smem);
	launch_macro(out, "SMEM_OPTIN", l->dynamic_smem > 48 * 1024);
	fputs("/* KV splits (p.num_splits); with more than one, p.o_partial and p.lse_partial point at\n"
	      " * these many bytes of fp32 scratch for the tuned shape (splits x B x H x S_q x D, and\n"
	      " * splits x B x H x S_q), else they are NULL */\n",
	      out);
	launch_macro(out, "NUM_SPLITS", l->num_splits);
	launch_macro(out, "O_PARTIAL_BYTES", l->num_splits > 1 ? 4LL * l->num_splits * rows * shape->d : 0);
	launch_macro(out, "LSE_PARTIAL_BYTES", l->num_splits > 1 ? 4LL * l->num_splits * rows : 0);
	for (int i = 0; i < sp->nparams; i++)
		if (sp->params[i].kind == FT_PARAM_LAUNCH && strcmp(sp->params[i].name, "NUM_SPLITS")) {
			fprintf(out, "/* launch-time parameter %s */\n", sp->params[i].name);
			fprintf(out, "#define FATUNE_LAUNCH_PARAM_%s %lld\n", sp->params[i].name, src->values[i]);
		}
	if (l->combine_threads > 0) {
		fprintf(out, "/* the combine kernel, launched after the main one on the same stream when\n"
			     " * num_splits > 1; grid for another shape: x = %s, y = %s, z = %s */\n",
			formula(&sp->combine_grid[0], s1, sizeof(s1)), formula(&sp->combine_grid[1], s2, sizeof(s2)),
			formula(&sp->combine_grid[2], s3, sizeof(s3)));
		fprintf(out, "#define FATUNE_LAUNCH_COMBINE_KERNEL \"%s\"\n", ft_gen_c_string(sp->combine_kernel, k, sizeof(k)));
	} else {
		fprintf(out, "/* no combine launch: %s */\n",
			sp->combine_kernel[0] ? "this config merges its splits in the main kernel" : "the template has none");
	}
	launch_macro(out, "COMBINE_THREADS", l->combine_threads);
	launch_macro(out, "COMBINE_GRID_X", l->combine_grid[0]);
	launch_macro(out, "COMBINE_GRID_Y", l->combine_grid[1]);
	launch_macro(out, "COMBINE_GRID_Z", l->combine_grid[2]);
	fputs("/* 1: the combine kernel was tuned launched with programmatic dependent launch (cuLaunchKernelEx,\n"
	      " * CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, sm_90+); a plain launch is also correct */\n",
	      out);
	launch_macro(out, "COMBINE_PDL", l->combine_pdl);
	fprintf(out, "/* the workspace (p.workspace, p.workspace_bytes): bytes for the tuned shape%s%s;\n * init %s */\n",
		sp->workspace.text[0] ? "; for another: " : "", sp->workspace.text[0] ? formula(&sp->workspace, s1, sizeof(s1)) : "",
		init_names[l->workspace_init]);
	launch_macro(out, "WORKSPACE_BYTES", l->workspace_bytes);
	launch_macro(out, "WORKSPACE_INIT", l->workspace_init);
	for (int t = 0; t < FT_TENSOR_COUNT; t++)
		tma |= l->plan.tma[t].rows > 0;
	if (tma) {
		fputs("/* TMA descriptors (p.tma_q, tma_k, tma_v, tma_o; rows 0: none): cuTensorMapEncodeTiled, rank 4\n"
		      " * over (D, S, H, B), 16-bit elements, box (COLS, ROWS, 1, 1), interleave none, OOB zero fill,\n"
		      " * swizzle in bytes (128: CU_TENSOR_MAP_SWIZZLE_128B) */\n",
		      out);
		for (int t = 0; t < FT_TENSOR_COUNT; t++) {
			fprintf(out, "#define FATUNE_LAUNCH_TMA_%s_ROWS %d\n", tensor_names[t], l->plan.tma[t].rows);
			fprintf(out, "#define FATUNE_LAUNCH_TMA_%s_COLS %d\n", tensor_names[t], l->plan.tma[t].cols);
			fprintf(out, "#define FATUNE_LAUNCH_TMA_%s_SWIZZLE %d\n", tensor_names[t], l->plan.tma[t].swizzle);
		}
	}
}

static void cxx_mirror(FILE *out)
{
	fputs("\n#ifdef __cplusplus\n/* the launch as constants, for C++ code that prefers them to macros */\n"
	      "namespace fatune {\nnamespace build_config {\n"
	      "constexpr unsigned threads = FATUNE_LAUNCH_THREADS;\n"
	      "constexpr unsigned grid[3] = { FATUNE_LAUNCH_GRID_X, FATUNE_LAUNCH_GRID_Y, FATUNE_LAUNCH_GRID_Z };\n"
	      "constexpr unsigned smem_bytes = FATUNE_LAUNCH_SMEM_BYTES;\n"
	      "constexpr int num_splits = FATUNE_LAUNCH_NUM_SPLITS;\n"
	      "constexpr unsigned combine_threads = FATUNE_LAUNCH_COMBINE_THREADS;\n"
	      "constexpr unsigned combine_grid[3] = { FATUNE_LAUNCH_COMBINE_GRID_X, FATUNE_LAUNCH_COMBINE_GRID_Y,\n"
	      "\t\t\t\t      FATUNE_LAUNCH_COMBINE_GRID_Z };\n"
	      "constexpr int combine_pdl = FATUNE_LAUNCH_COMBINE_PDL;\n"
	      "constexpr unsigned long long workspace_bytes = FATUNE_LAUNCH_WORKSPACE_BYTES;\n"
	      "} /* namespace build_config */\n} /* namespace fatune */\n#endif\n",
	      out);
}

int ft_export_header(FILE *out, const struct ft_export_src *src, struct ft_err *err)
{
	const struct ft_best *b = src->best;
	const struct ft_build *bd = src->build;
	char shape[FT_SHAPE_TEXT_MAX];
	const char *dtype = ft_dtype_name(b->shape.dtype);

	if (src->style != FT_EXPORT_CXX && src->style != FT_EXPORT_C)
		return ft_error(err, FT_EFAIL, "unknown export style %d: this is a fatune bug", (int)src->style);
	/* the gate, again: every name that becomes a token */
	for (int i = 0; i < bd->nmacros; i++)
		if (!ft_is_fatune_macro(bd->macros[i].name) &&
		    ft_gen_ident(bd->macros[i].name, "a macro of the space", err))
			return -1;
	for (int i = 0; i < src->sp->nparams; i++)
		if (ft_gen_ident(src->sp->params[i].name, "a parameter of the space", err))
			return -1;
	ft_shape_format(&b->shape, shape, sizeof(shape));

	fputs("/* generated by fatune \xe2\x80\x94 do not edit */\n", out);
	fputs("#ifndef FATUNE_BUILD_CONFIG_H\n#define FATUNE_BUILD_CONFIG_H\n\n", out);
	provenance(out, src, shape, dtype);
	build_howto(out, src);
	regenerate(out, src, shape, dtype);

	fputs("/* ---- the macros the template is compiled with: the config, the shape (HEAD_DIM,\n"
	      " * IS_CAUSAL, FATUNE_BF16: 0 fp16, 1 bf16) and the ABI. A -D flag of the same value may\n"
	      " * stay; another value stops the build here. ---- */\n",
	      out);
	for (int i = 0; i < bd->nmacros; i++)
		macro(out, bd->macros[i].name, bd->macros[i].value);
	launch(out, src);
	if (src->style == FT_EXPORT_CXX)
		cxx_mirror(out);
	fputs("\n#endif /* FATUNE_BUILD_CONFIG_H */\n", out);
	if (fflush(out) || ferror(out))
		return ft_error(err, FT_EFAIL, "cannot write build_config.h: %s: check the disk and the output path",
				strerror(errno));
	return 0;
}
