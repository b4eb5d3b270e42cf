/* dispatch_eval.c - the dispatch table's validity check: the space's verdict, generated as C.
 *
 * A table entry may be handed out for a problem only where fatune itself
 * would accept the entry's config: every constraint of the space true, every
 * derived parameter the value the shape derives (one of a choice list's), the
 * launch within the arch's limits (feasibility.c's model check), and the
 * CUBIN unchanged (the compile-time values the space computes from the shape,
 * FATUNE_SMEM_BYTES and compile.defines, equal to the tuned ones). The
 * exporter first re-evaluates each entry at its own shape with fatune's
 * engine (an entry its space no longer accepts is an error), then translates
 * every constraint and formula into C (expr_c.h) and writes one function,
 * PREFIXeval, that decides and also returns the launch formulas (the library
 * launches with them). When an expression cannot be translated, the function
 * accepts an entry only for the exact shape it was tuned for, with its tuned
 * geometry: no pick is better than a wrong one.
 */
#include "export/export_dispatch.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile/feasibility.h"
#include "space/candidate.h"
#include "export/expr_c.h"
#include "export/gen.h"
#include "space/expr.h"
#include "ui/format.h"

/* feasibility.c's limits, restated for the generated code */
#define GRID_X_MAX 2147483647LL
#define GRID_YZ_MAX 65535LL
#define WORKSPACE_MAX (4LL << 30)

/* ft_shape_check's bounds */
#define DIM_MAX 1000000LL
#define ELEMS_MAX 2147483647LL

static const char *const formula_names[FT_DISPATCH_GEOM] = {
	"smem_bytes", "threads", "grid x", "grid y", "grid z", "combine_threads",
	"combine_grid x", "combine_grid y", "combine_grid z", "workspace.bytes"
};

/* The candidate of row r's config at its own shape, checked as fatune checks it. */
static int eval_row(struct ft_dispatch *d, int r, struct ft_err *err)
{
	const struct ft_best *b = &d->rows[r];
	struct ft_candidate *c = &d->cand[r];
	long long values[FT_MAX_PARAMS];
	struct ft_trial t;
	char shape[FT_SHAPE_TEXT_MAX], why[512];

	ft_shape_format(&b->shape, shape, sizeof(shape));
	if (ft_space_unfit(d->sp, d->arch, &b->shape, why, sizeof(why)))
		return ft_error(err, FT_EINPUT, "space '%s' (%s) cannot run the tuned shape %s: %s", d->sp->name,
				d->sp->path, shape, why);
	if (ft_config_parse(d->sp, b->config, values, err) ||
	    ft_candidate_eval(d->sp, &b->shape, d->arch, values, c, err))
		return ft_error(err, FT_EINPUT, "the best config of %s (%s) does not fit space %s: %s: pass the --space FILE it was tuned with",
				shape, b->config, d->sp->path, err->msg);
	memset(&t, 0, sizeof(t));
	if (!ft_feasible_model(d->sp, d->arch, c, &t))
		return ft_error(err, FT_EINPUT,
				"the best config of %s (%s) is rejected by space %s at that very shape (%s): the space changed since; re-tune, or pass the --space FILE it was tuned with",
				shape, b->config, d->sp->path, t.reason);
	return ft_candidate_launch(d->sp, &b->shape, c, &d->launch[r], err);
}

/* printf at the end of the malloc'd *code (length *len); -1 when out of memory. */
static int append(char **code, size_t *len, const char *f, ...) __attribute__((format(printf, 3, 4)));

static int append(char **code, size_t *len, const char *f, ...)
{
	va_list ap;
	int n;
	char *grown;

	va_start(ap, f);
	n = vsnprintf(NULL, 0, f, ap);
	va_end(ap);
	if (n < 0 || !(grown = realloc(*code, *len + (size_t)n + 1)))
		return -1;
	*code = grown;
	va_start(ap, f);
	vsnprintf(*code + *len, (size_t)n + 1, f, ap);
	va_end(ap);
	*len += (size_t)n;
	return 0;
}

/* The test a derived parameter's stored value must pass at a problem's
 * shape, as an expression: NAME == (derive), or NAME IN (derive) for a
 * choice list (the guard fatune's check applies to a given config,
 * enumerate.c). Earlier derived names read the entry's stored values, which
 * their own tests have found equal to what the shape gives. */
static void derived_test(const struct ft_param *p, char *out, size_t size)
{
	snprintf(out, size, p->nchoices ? "%s IN (%s)" : "%s == (%s)", p->name, p->derive.text);
}

/* Translates every expression of the space into the body of the eval
 * function; on the first that cannot be, records why and returns 0 with
 * d->code NULL (exact shapes only). */
static int translate(struct ft_dispatch *d, struct ft_err *err)
{
	static const char *const ctx_names[FT_CONTEXT_COUNT] = { FT_CONTEXT_NAMES };
	const struct ft_space *sp = d->sp;
	const char *names[FT_CONTEXT_COUNT + FT_MAX_PARAMS];
	const struct ft_expr_src *f[FT_DISPATCH_GEOM];
	char *code = NULL, c_text[16384];
	size_t len = 0;
	struct ft_err why = { 0 };
	int n = 0;

	for (int i = 0; i < FT_CONTEXT_COUNT; i++)
		names[n++] = ctx_names[i];
	for (int i = 0; i < sp->nparams; i++)
		names[n++] = sp->params[i].name;
	f[0] = &sp->smem;
	f[1] = &sp->threads;
	for (int i = 0; i < 3; i++) {
		f[2 + i] = &sp->grid[i];
		f[6 + i] = &sp->combine_grid[i];
	}
	f[5] = &sp->combine_threads;
	f[9] = &sp->workspace;
	for (int i = 0; i < sp->nconstraints; i++) {
		if (ft_expr_to_c(sp->constraints[i].expr.text, names, n, "fd_", c_text, sizeof(c_text), &why))
			goto untranslated;
		char name[FT_GEN_SIZE(FT_NAME_MAX)];

		if (append(&code, &len, "\t/* constraint '%s' */\n\tif (!(%s) || bad_)\n\t\treturn 0;\n",
			   ft_gen_comment(sp->constraints[i].name, name, sizeof(name)), c_text))
			goto oom;
	}
	for (int k = 0; k < sp->nderived; k++) {
		const struct ft_param *p = &sp->params[sp->derived[k]];
		char test[FT_NAME_MAX + FT_EXPR_MAX + 16], name[FT_GEN_SIZE(FT_NAME_MAX)];

		derived_test(p, test, sizeof(test));
		if (ft_expr_to_c(test, names, n, "fd_", c_text, sizeof(c_text), &why))
			goto untranslated;
		if (append(&code, &len, "\t/* derived '%s': the entry's value is %s at this shape */\n\tif (!(%s) || bad_)\n\t\treturn 0;\n",
			   ft_gen_comment(p->name, name, sizeof(name)), p->nchoices ? "one of the choices" : "the one derived",
			   c_text))
			goto oom;
	}
	for (int i = 0; i < FT_DISPATCH_GEOM; i++) {
		if (!f[i]->text[0])
			snprintf(c_text, sizeof(c_text), "0");
		else if (ft_expr_to_c(f[i]->text, names, n, "fd_", c_text, sizeof(c_text), &why))
			goto untranslated;
		if (append(&code, &len, "\t/* %s */\n\tg[%d] = %s;\n", formula_names[i], i, c_text))
			goto oom;
	}
	for (int i = 0; i < sp->ndefines; i++) {
		if (ft_expr_to_c(sp->defines[i].text, names, n, "fd_", c_text, sizeof(c_text), &why))
			goto untranslated;
		if (ft_gen_ident(sp->define_names[i], "compile.defines name", err))
			goto fail;
		if (append(&code, &len,
			   "\t/* compile.defines %s: compiled into the CUBIN */\n\tif ((%s) != e->defines[%d] || bad_)\n\t\treturn 0;\n",
			   sp->define_names[i], c_text, i))
			goto oom;
	}
	d->code = code;
	return 0;
untranslated:
	free(code);
	snprintf(d->untranslated, sizeof(d->untranslated), "%s", why.msg);
	return 0;
oom:
	ft_error(err, FT_EFAIL, "out of memory generating the dispatch check");
fail:
	free(code);
	return -1;
}

int ft_dispatch_prepare(struct ft_dispatch *d, const struct ft_space *sp, const struct ft_arch *a,
			struct ft_err *err)
{
	d->sp = sp;
	d->arch = a;
	free(d->cand);
	free(d->launch);
	d->launch = calloc((size_t)d->n, sizeof(*d->launch));
	if (!(d->cand = calloc((size_t)d->n, sizeof(*d->cand))) || !d->launch)
		return ft_error(err, FT_EFAIL, "out of memory checking %d dispatch entries", d->n);
	if (strcmp(sp->name, d->rows[0].space))
		return ft_error(err, FT_EINPUT, "space file %s is space '%s', the table's configs come from space '%s': pass its --space FILE",
				sp->path, sp->name, d->rows[0].space);
	if (sp->ndefines > FT_DISPATCH_MAX_DEFINES)
		return ft_error(err, FT_EFAIL, "space %s has %d compile.defines, the dispatch table holds %d",
				sp->path, sp->ndefines, FT_DISPATCH_MAX_DEFINES);
	for (int r = 0; r < d->n; r++)
		if (eval_row(d, r, err))
			return -1;
	return translate(d, err);
}

void ft_dispatch_geom(const struct ft_dispatch *d, int r, long long g[FT_DISPATCH_GEOM])
{
	const struct ft_launch *l = &d->launch[r];

	g[0] = l->smem_bytes;
	g[1] = l->threads;
	for (int i = 0; i < 3; i++) {
		g[2 + i] = l->grid[i];
		g[6 + i] = l->combine_grid[i];
	}
	g[5] = l->combine_threads;
	g[9] = l->workspace_bytes;
}

void ft_dispatch_write_eval(FILE *out, const struct ft_dispatch *d, const char *storage, const char *fn,
			    const char *entry)
{
	static const char *const ctx_names[FT_CONTEXT_COUNT] = { FT_CONTEXT_NAMES };
	const struct ft_arch *a = d->arch;
	const char *ctx_values[FT_CONTEXT_COUNT] = { "batch", "heads", "seq_len", "e->head_dim", "e->causal", "2",
						     "kv_len", "kv_heads", "bshd", "e->bf16" };
	long long limits[] = { a->smem_static, a->smem_optin, a->smem_per_sm, a->smem_reserved, a->regs_per_sm,
			       a->threads_per_block, a->threads_per_sm, a->cc };
	char lo[FT_NAME_MAX];

	/* guarded: a library includes the tables of several arches and spaces in one file */
	fputs("#ifndef FATUNE_EXPR_HELPERS\n#define FATUNE_EXPR_HELPERS\n", out);
	fputs(ft_expr_c_helpers, out);
	fputs("#endif\n", out);
	fprintf(out,
		"\n/* Whether fatune's space accepts entry e for a problem (sizes >= 1, heads a\n"
		" * multiple of kv_heads, bshd 1 for [B,S,H,D]), decided as `fatune check` decides:\n"
		" * every constraint true; every derived parameter what the shape derives;\n"
		" * threads, grid, shared memory and workspace within\n"
		" * the limits of %s; the values compiled into the entry's CUBIN unchanged.\n"
		" * 1 with g[] = smem bytes, threads, grid x/y/z, combine threads (0: no\n"
		" * combine launch), combine grid x/y/z, workspace bytes; 0 otherwise. */\n"
		"%sint\n%seval(const %s *e, int batch, int heads, int kv_heads, int seq_len, int kv_len,\n"
		"\t\tint bshd, long long *g)\n{\n"
		"\tint bad_ = 0, *bad = &bad_;\n",
		a->name, storage, fn, entry);
	fprintf(out,
		"\tconst long long dims[6] = { batch, heads, kv_heads, seq_len, kv_len, e->head_dim };\n\n"
		"\t(void)bad;\n"
		"\tfor (int i = 0; i < 6; i++)\n\t\tif (dims[i] < 1 || dims[i] > %lldLL)\n\t\t\treturn 0;\n"
		"\tif (heads %% kv_heads || (bshd != 0 && bshd != 1) ||\n"
		"\t    (long long)batch * heads * seq_len * e->head_dim > %lldLL ||\n"
		"\t    (long long)batch * kv_heads * kv_len * e->head_dim > %lldLL)\n\t\treturn 0;\n",
		DIM_MAX, ELEMS_MAX, ELEMS_MAX);
	if (d->sp->abi == 1)
		fputs("\t/* an ABI v1 template runs self-attention in [B,H,S,D] only */\n"
		      "\tif (kv_heads != heads || kv_len != seq_len || bshd)\n\t\treturn 0;\n", out);
	if (!d->code) {
		char why[FT_GEN_SIZE(sizeof(d->untranslated))];

		fprintf(out,
			"\t/* exact shapes only: %s */\n"
			"\tif (batch != e->batch || heads != e->heads || kv_heads != e->kv_heads || seq_len != e->seq_len ||\n"
			"\t    kv_len != e->kv_len || bshd != e->bshd)\n\t\treturn 0;\n"
			"\tfor (int i = 0; i < %d; i++)\n\t\tg[i] = e->geom[i];\n\treturn 1;\n}\n",
			ft_gen_comment(d->untranslated, why, sizeof(why)), FT_DISPATCH_GEOM);
		return;
	}
	for (int i = 0; i < FT_CONTEXT_COUNT; i++) {
		if (i < 10)
			fprintf(out, "\tconst long long fd_%s = %s;\n", ctx_names[i], ctx_values[i]);
		else
			fprintf(out, "\tconst long long fd_%s = %lldLL;\n", ctx_names[i], limits[i - 10]);
	}
	for (int i = 0; i < d->sp->nparams; i++) {
		size_t k = 0;

		for (; d->sp->params[i].name[k]; k++)
			lo[k] = (char)(d->sp->params[i].name[k] | ((d->sp->params[i].name[k] >= 'A' && d->sp->params[i].name[k] <= 'Z') ? 0x20 : 0));
		lo[k] = '\0';
		fprintf(out, "\tconst long long fd_%s = e->%s;\n", d->sp->params[i].name, lo);
	}
	for (int i = 0; i < FT_CONTEXT_COUNT; i++)
		fprintf(out, "\t(void)fd_%s;\n", ctx_names[i]);
	for (int i = 0; i < d->sp->nparams; i++)
		fprintf(out, "\t(void)fd_%s;\n", d->sp->params[i].name);
	fputc('\n', out);
	fputs(d->code, out);
	fprintf(out,
		"\tif (bad_)\n\t\treturn 0;\n"
		"\t/* the model check of fatune's feasibility step */\n"
		"\tif (g[1] < 1 || g[1] > %d || g[5] < 0 || g[5] > %d)\n\t\treturn 0;\n"
		"\tif (g[2] < 1 || g[2] > %lldLL || g[3] < 1 || g[3] > %lldLL || g[4] < 1 || g[4] > %lldLL)\n\t\treturn 0;\n"
		"\tif (g[0] < 0 || g[0] > %d || g[9] < 0 || g[9] > %lldLL)\n\t\treturn 0;\n"
		"\tif (g[5] == 0)\n\t\tg[6] = g[7] = g[8] = 0;\n"
		"\t/* FATUNE_SMEM_BYTES is compiled into the CUBIN */\n"
		"\treturn g[0] == e->geom[0];\n}\n",
		a->threads_per_block, a->threads_per_block, GRID_X_MAX, GRID_YZ_MAX, GRID_YZ_MAX,
		d->sp->smem_kind == FT_SMEM_STATIC ? a->smem_static : a->smem_optin, WORKSPACE_MAX);
}

/* PREFIX"KEY": "VALUE" with VALUE escaped */
static void json_pair(FILE *out, const char *prefix, const char *key, const char *value)
{
	fprintf(out, "%s\"%s\": ", prefix, key);
	ft_json_string(out, value);
}

void ft_dispatch_write_check_json(FILE *out, const struct ft_dispatch *d)
{
	static const char *const ctx_names[FT_CONTEXT_COUNT] = { FT_CONTEXT_NAMES };
	static const char *const ctx_meaning[10] = {
		"the problem's batch", "the problem's query heads", "the problem's query rows (S_q)",
		"the entry's head dim (= the problem's)", "the entry's causal flag, 0 or 1 (= the problem's)",
		"2 (fp16 and bf16)", "the problem's KV length", "the problem's KV heads",
		"the problem's layout: 1 [B,S,H,D], 0 [B,H,S,D]", "the entry's dtype: 1 bf16, 0 fp16 (= the problem's)"
	};
	const struct ft_arch *a = d->arch;
	const struct ft_space *sp = d->sp;
	const long long limits[] = { a->smem_static, a->smem_optin, a->smem_per_sm, a->smem_reserved, a->regs_per_sm,
				     a->threads_per_block, a->threads_per_sm, a->cc };
	const struct ft_expr_src *f[FT_DISPATCH_GEOM] = { &sp->smem, &sp->threads, &sp->grid[0], &sp->grid[1], &sp->grid[2],
							  &sp->combine_threads, &sp->combine_grid[0], &sp->combine_grid[1],
							  &sp->combine_grid[2], &sp->workspace };

	fputs(",\n  \"check\": {\n", out);
	json_pair(out, "    ", "how",
		  "An entry may serve a problem of its kind (rule 1) only where fatune's space accepts it there, as "
		  "`fatune check` decides and the C table's eval function does: (1) 1 <= B, H, H_KV, S, S_KV, D <= "
		  "shape_limits.dim_max, H % H_KV = 0, B*H*S*D and B*H_KV*S_KV*D <= shape_limits.elems_max; (2) every "
		  "constraint is true (non-zero), and so is each derived parameter's 'test' (its value, the entry's, is the one "
		  "its expr gives at the problem's shape, or for a choice list one of the list's values there); (3) the launch values (in geom order) are integers within launch_limits; "
		  "(4) smem_bytes equals the entry's geom[0] and each define equals the entry's defines[i] (they are "
		  "compiled into its CUBIN). Expressions are SQLite expressions over 64-bit integers (`/` truncates, "
		  "names are case-insensitive): evaluate each as SELECT (expr) with names bound to the values in "
		  "'names' (a parameter: the entry's config value) and the functions in 'functions' registered; a NULL "
		  "or non-integer result (division by zero, overflow) means the entry is not valid there.");
	fprintf(out, ",\n    \"abi\": %d, \"abi_note\": \"%s\"", sp->abi,
		sp->abi == 1 ? "ABI v1: only H_KV = H, S_KV = S and layout bhsd" : "");
	fputs(",\n    \"names\": {", out);
	for (int i = 0; i < FT_CONTEXT_COUNT; i++) {
		fprintf(out, "%s\"%s\": ", i ? ", " : "", ctx_names[i]);
		if (i < 10)
			ft_json_string(out, ctx_meaning[i]);
		else
			fprintf(out, "%lld", limits[i - 10]);
	}
	for (int i = 0; i < sp->nparams; i++) {
		fputs(", ", out);
		ft_json_string(out, sp->params[i].name);
		fputs(": \"the entry's config value\"", out);
	}
	fputs("},\n", out);
	json_pair(out, "    \"functions\": {", "ceil_div", "ceil_div(a, b): the smallest integer >= a / b (NULL when b = 0)");
	json_pair(out, ", ", "is_pow2", "is_pow2(x): 1 when x is a positive power of two, else 0");
	json_pair(out, ", ", "iif", "iif(c, x, y): x when c is non-zero, else y (SQLite's own)");
	fprintf(out, "},\n    \"shape_limits\": {\"dim_max\": %lld, \"elems_max\": %lld},\n    \"constraints\": [", DIM_MAX,
		ELEMS_MAX);
	for (int i = 0; i < sp->nconstraints; i++) {
		json_pair(out, i ? ", {" : "{", "name", sp->constraints[i].name);
		json_pair(out, ", ", "expr", sp->constraints[i].expr.text);
		fputc('}', out);
	}
	fputs("],\n    \"derived\": [", out);
	for (int k = 0; k < sp->nderived; k++) {
		const struct ft_param *p = &sp->params[sp->derived[k]];
		char test[FT_NAME_MAX + FT_EXPR_MAX + 16];

		derived_test(p, test, sizeof(test));
		json_pair(out, k ? ", {" : "{", "name", p->name);
		json_pair(out, ", ", "expr", p->derive.text);
		fprintf(out, ", \"choices\": %d", p->nchoices);
		json_pair(out, ", ", "test", test);
		fputc('}', out);
	}
	fputs("],\n    \"launch\": [", out);
	for (int i = 0; i < FT_DISPATCH_GEOM; i++) {
		json_pair(out, i ? ", {" : "{", "name", formula_names[i]);
		json_pair(out, ", ", "expr", f[i]->text[0] ? f[i]->text : "0");
		fputc('}', out);
	}
	fprintf(out,
		"],\n    \"launch_limits\": {\"threads\": [1, %d], \"grid x\": [1, %lld], \"grid y\": [1, %lld], "
		"\"grid z\": [1, %lld], \"combine_threads\": [0, %d], \"smem_bytes\": [0, %d], \"workspace.bytes\": [0, %lld], "
		"\"note\": \"the combine grid has no limit here; it reads 0 where combine_threads is 0\"},\n    \"defines\": [",
		a->threads_per_block, GRID_X_MAX, GRID_YZ_MAX, GRID_YZ_MAX, a->threads_per_block,
		sp->smem_kind == FT_SMEM_STATIC ? a->smem_static : a->smem_optin, WORKSPACE_MAX);
	for (int i = 0; i < sp->ndefines; i++) {
		json_pair(out, i ? ", {" : "{", "name", sp->define_names[i]);
		json_pair(out, ", ", "expr", sp->defines[i].text);
		fputc('}', out);
	}
	fputs("]\n  }", out);
}
