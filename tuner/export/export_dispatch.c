/* export_dispatch.c - the dispatch-table writer (see export_dispatch.h).
 *
 * Reads the database through db.h only: the tuned shapes come from the best
 * listing (ft_db_query), and each shape's row from ft_db_best_get, so a
 * table entry is exactly what `fatune export --shape` would write for that
 * shape. Every config is parsed and checked before the first byte is written.
 * The generated C/C++ needs no library (no libm: distances are ratios, not
 * logarithms) and compiles warning-free with -Wall -Wextra.
 */
#include "export/export_dispatch.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/gen.h"
#include "ui/format.h"

/* Fields of a table entry besides the parameters: a parameter whose
 * lower-case name is one of these cannot be a field. */
static const char *const fixed_fields[] = { "head_dim", "bf16", "causal", "seq_len", "kv_len",
					    "batch", "heads", "kv_heads", "bshd", "t_median_us",
					    "geom", "defines" };

/* The rule, as the generated files state it. */
static const char rule_text[] =
	"1. an entry matches only a problem of its head dim, dtype, causal flag and\n"
	"   layout, of its kind (grouped-query or not, decode S = 1 or not), that its\n"
	"   space accepts it for: every constraint true, every derived parameter the\n"
	"   value the shape derives, the launch within the arch's limits, the values\n"
	"   compiled into its CUBIN unchanged (the eval function, generated from the\n"
	"   space's own expressions); none: no pick, keep the default config;\n"
	"2. among those, the nearest tuned sequence lengths: the smallest\n"
	"   max(S,S')/min(S,S') * max(KV,KV')/min(KV,KV'), KV being the KV length (S when\n"
	"   not given): the nearest in log2 space, so 3000 picks 2048 over 8192;\n"
	"3. then the nearest B*H times the nearest GQA group (H/KV heads), measured the\n"
	"   same way;\n"
	"4. then the first in table order (D, dtype, causal, S, KV length, B*H, layout).";

struct shapes {
	struct ft_shape *v;
	int n, cap;
	int bad;			/* a row could not be read */
};

/* ft_db_query callback: notes each distinct shape of the best listing. */
static int add_shape(void *ctx, int ncols, const char *const *names, const char *const *values,
		     const int *types)
{
	struct shapes *s = ctx;
	struct ft_shape sh = { 0 };
	struct ft_err ignored;
	const char *need[] = { "b", "h", "s", "d", "s_kv", "h_kv", "layout", "dtype", "causal" };
	int c[9];

	(void)types;
	for (int i = 0; i < 9; i++)
		if ((c[i] = ft_row_col(ncols, names, need[i])) < 0 || !values[c[i]])
			return s->bad = 1;
	sh.b = atoi(values[c[0]]);
	sh.h = atoi(values[c[1]]);
	sh.s = atoi(values[c[2]]);
	sh.d = atoi(values[c[3]]);
	sh.s_kv = atoi(values[c[4]]);
	sh.h_kv = atoi(values[c[5]]);
	sh.causal = atoi(values[c[8]]) != 0;
	if (ft_layout_parse(values[c[6]], &sh.layout, &ignored) || ft_dtype_parse(values[c[7]], &sh.dtype, &ignored))
		return s->bad = 1;
	for (int i = 0; i < s->n; i++)
		if (!memcmp(&s->v[i], &sh, sizeof(sh)))
			return 0;
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 64;
		struct ft_shape *v = realloc(s->v, (size_t)cap * sizeof(*v));

		if (!v)
			return s->bad = 1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = sh;
	return 0;
}

static long long bh(const struct ft_best *b)
{
	return (long long)b->shape.b * b->shape.h;
}

/* The rule's table order. */
static int cmp_rows(const void *pa, const void *pb)
{
	const struct ft_best *a = pa, *b = pb;
	long long k[][2] = { { a->shape.d, b->shape.d },
			     { a->shape.dtype, b->shape.dtype },
			     { a->shape.causal, b->shape.causal },
			     { a->shape.s, b->shape.s },
			     { a->shape.s_kv, b->shape.s_kv },
			     { bh(a), bh(b) },
			     { a->shape.layout, b->shape.layout },
			     { a->shape.b, b->shape.b },
			     { a->shape.h_kv, b->shape.h_kv } };

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i][0] != k[i][1])
			return k[i][0] < k[i][1] ? -1 : 1;
	return 0;
}

/* Every config has the first one's parameters, in its order, and each
 * parameter makes a field name of its own. */
static int check_params(struct ft_dispatch *d, struct ft_err *err)
{
	struct ft_export_entry e[FT_EXPORT_MAX_ENTRIES];
	char shape[FT_SHAPE_TEXT_MAX];
	int n;

	for (int r = 0; r < d->n; r++) {
		if (ft_export_parse_config(d->rows[r].config, e, &n, err))
			return -1;
		if (r == 0) {
			d->nparams = n;
			for (int i = 0; i < n; i++)
				snprintf(d->params[i], sizeof(d->params[i]), "%s", e[i].name);
			continue;
		}
		for (int i = 0; i < n && n == d->nparams; i++)
			if (strcmp(e[i].name, d->params[i]))
				n = -1;
		if (n != d->nparams)
			return ft_error(err, FT_EINPUT,
					"the config of %s (%s) has other parameters than that of the first shape (%s): re-tune it with the current space or pass --space FILE",
					ft_shape_format(&d->rows[r].shape, shape, sizeof(shape)), d->rows[r].config,
					d->rows[0].config);
	}
	for (int i = 0; i < d->nparams; i++) {
		char lo[FT_NAME_MAX], other[FT_NAME_MAX];

		for (size_t k = 0; k <= strlen(d->params[i]); k++)
			lo[k] = (char)tolower((unsigned char)d->params[i][k]);
		if (ft_gen_ident(lo, "the table field named after a parameter", err))
			return -1;
		for (size_t k = 0; k < sizeof(fixed_fields) / sizeof(fixed_fields[0]); k++)
			if (!strcmp(lo, fixed_fields[k]))
				return ft_error(err, FT_EFAIL, "parameter '%s' would be the table's field '%s': rename it in the space",
						d->params[i], lo);
		for (int j = 0; j < i; j++) {
			for (size_t k = 0; k <= strlen(d->params[j]); k++)
				other[k] = (char)tolower((unsigned char)d->params[j][k]);
			if (!strcmp(lo, other))
				return ft_error(err, FT_EFAIL, "parameters '%s' and '%s' differ only in case: rename one in the space",
						d->params[j], d->params[i]);
		}
	}
	return 0;
}

/* All rows from one space, else FT_EINPUT listing the spaces. */
static int one_space(const struct ft_dispatch *d, struct ft_err *err)
{
	char names[256];
	size_t len = 0;
	int many = 0;

	for (int r = 1; r < d->n; r++)
		if (strcmp(d->rows[r].space, d->rows[0].space))
			many = 1;
	if (!many)
		return 0;
	names[0] = '\0';
	for (int r = 0; r < d->n && len < sizeof(names); r++) {
		int seen = 0;

		for (int q = 0; q < r; q++)
			seen |= !strcmp(d->rows[q].space, d->rows[r].space);
		if (!seen)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s'%s'", len ? ", " : "",
						d->rows[r].space);
	}
	return ft_error(err, FT_EINPUT,
			"the best configs of %s come from several spaces (%s), whose parameters differ: pass --space FILE to export one",
			d->rows[0].arch, names);
}

int ft_dispatch_collect(struct ft_db *db, const char *arch, const char *device, const char *space,
			struct ft_dispatch *out, struct ft_err *err)
{
	struct ft_query_filter f = { arch, device, NULL, -1, -1, NULL, -1, -1 };
	struct shapes s = { 0 };
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (ft_db_query(db, FT_Q_BEST, &f, add_shape, &s, err))
		goto out;
	if (s.bad) {
		ft_error(err, FT_EFAIL, "cannot read the best configs of %s: out of memory or a hand-edited database", arch);
		goto out;
	}
	out->rows = calloc((size_t)(s.n ? s.n : 1), sizeof(*out->rows));
	if (!out->rows) {
		ft_error(err, FT_EFAIL, "out of memory collecting %d best configs", s.n);
		goto out;
	}
	for (int i = 0; i < s.n; i++) {
		struct ft_best_key key = { arch, device, space, s.v[i] };
		int found = ft_db_best_get(db, &key, &out->rows[out->n], err);

		if (found < 0)
			goto out;
		out->n += found;	/* 0: the shape was tuned in other spaces only */
	}
	if (!out->n) {
		ft_error(err, FT_EINPUT, "no tuned config for %s%s%s%s%s: run 'fatune search --arch %s' on such a GPU first",
			 arch, device ? " on " : "", device ? device : "", space ? " in space " : "",
			 space ? space : "", arch);
		goto out;
	}
	qsort(out->rows, (size_t)out->n, sizeof(*out->rows), cmp_rows);
	if (one_space(out, err) || check_params(out, err))
		goto out;
	ret = 0;
out:
	free(s.v);
	if (ret)
		ft_dispatch_release(out);
	return ret;
}

void ft_dispatch_release(struct ft_dispatch *d)
{
	free(d->rows);
	free(d->cand);
	free(d->launch);
	free(d->code);
	d->rows = NULL;
	d->cand = NULL;
	d->launch = NULL;
	d->code = NULL;
	d->n = 0;
}

/* ---- writing ------------------------------------------------------------ */

static void lower(const char *s, char *buf, size_t size)
{
	size_t i = 0;

	for (; s[i] && i + 1 < size; i++)
		buf[i] = (char)tolower((unsigned char)s[i]);
	buf[i] = '\0';
}

/* The rule as comment lines with prefix. */
static void rule_comment(FILE *out, const char *prefix)
{
	const char *p = rule_text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		fprintf(out, "%s%.*s\n", prefix, len, p);
		p += len + (nl != NULL);
	}
}

static void header_top(FILE *out, const struct ft_dispatch *d, int c_style, const char *guard, const char *fn)
{
	const struct ft_best *b = &d->rows[0];
	char s1[256], s2[256], s3[600];

	fputs("/* generated by fatune \xe2\x80\x94 do not edit */\n", out);
	fprintf(out, "#ifndef %s\n#define %s\n\n", guard, guard);
	fprintf(out, "/*\n * Dispatch table: the best config of %d tuned shape%s for %s on %s,\n", d->n,
		d->n == 1 ? "" : "s", ft_gen_comment(b->arch, s1, sizeof(s1)),
		b->device[0] ? ft_gen_comment(b->device, s2, sizeof(s2)) : "no named device");
	fprintf(out, " * space %s (family %s, template %s).\n", ft_gen_comment(b->space, s1, sizeof(s1)),
		b->family[0] ? ft_gen_comment(b->family, s3, sizeof(s3)) : "mma", ft_gen_comment(b->template_name, s2, sizeof(s2)));
	fputs(" * Each entry's comment says where it came from: the template's xxh64, the CUBIN\n"
	      " * cache key, the latency, the date and the fatune that measured it.\n *\n", out);
	fprintf(out, " * Selection rule (%s%spick):\n", c_style ? "" : "fatune::", fn);
	rule_comment(out, " *   ");
	fprintf(out, " *\n * Regenerate with:\n *   fatune export --dispatch --arch %s", ft_gen_comment(b->arch, s1, sizeof(s1)));
	if (b->device[0])
		fprintf(out, " --device %s", ft_gen_shell_arg(b->device, s3, sizeof(s3)));
	if (d->space_path[0])
		fprintf(out, " --space %s", ft_gen_shell_arg(d->space_path, s3, sizeof(s3)));
	fprintf(out, "%s\n */\n\n", c_style ? " --style c" : "");
}

static void entry_comment(FILE *out, const struct ft_best *b)
{
	char shape[FT_SHAPE_TEXT_MAX], s1[64], s2[64], s3[64], s4[FT_GEN_SIZE(32)];

	fprintf(out, "\t/* %s %s%s: ", ft_shape_format(&b->shape, shape, sizeof(shape)), ft_dtype_name(b->shape.dtype),
		b->shape.causal ? " causal" : "");
	if (isfinite(b->t_median_us))
		fprintf(out, "%.2f us%s", b->t_median_us, b->replayed ? " replayed, not measured" : "");
	else
		fputs("not timed", out);
	fprintf(out, ", template %s, cubin %s, %s, fatune %s */\n",
		b->template_hash[0] ? ft_gen_comment(b->template_hash, s1, sizeof(s1)) : "unknown",
		b->compile_key[0] ? ft_gen_comment(b->compile_key, s2, sizeof(s2)) : "none",
		b->updated_at[0] ? ft_gen_comment(b->updated_at, s4, sizeof(s4)) : "undated", ft_gen_comment(b->fatune_version, s3, sizeof(s3)));
}

static void entry_values(FILE *out, const struct ft_dispatch *d, int r)
{
	const struct ft_best *b = &d->rows[r];
	long long g[FT_DISPATCH_GEOM];
	struct ft_export_entry e[FT_EXPORT_MAX_ENTRIES];
	struct ft_err ignored;
	int n = 0;

	(void)ft_export_parse_config(b->config, e, &n, &ignored);	/* checked by collect */
	fprintf(out, "\t{ %d, %d, %d, %d, %d, %d, %d, %d, %d, %.2f", b->shape.d, b->shape.dtype == FT_BF16,
		b->shape.causal != 0, b->shape.s, b->shape.s_kv ? b->shape.s_kv : b->shape.s, b->shape.b, b->shape.h,
		b->shape.h_kv ? b->shape.h_kv : b->shape.h, b->shape.layout == FT_LAYOUT_BSHD,
		isfinite(b->t_median_us) ? b->t_median_us : -1.0);
	for (int i = 0; i < n; i++)
		fprintf(out, ", %d", e[i].value);
	ft_dispatch_geom(d, r, g);
	for (int i = 0; i < FT_DISPATCH_GEOM; i++)
		fprintf(out, "%s%lld", i ? ", " : ",\n\t  { ", g[i]);
	fputs(" }, {", out);
	for (int i = 0; i < d->sp->ndefines; i++)
		fprintf(out, "%s%lld", i ? ", " : " ", d->cand[r].define_values[i]);
	fputs(d->sp->ndefines ? " } },\n" : " 0 } },\n", out);
}

static void struct_fields(FILE *out, const struct ft_dispatch *d)
{
	char lo[FT_NAME_MAX];

	fputs("\tint head_dim;\t\t/* D */\n"
	      "\tint bf16;\t\t/* 1: bf16, 0: fp16 */\n"
	      "\tint causal;\t\t/* 1: causal */\n"
	      "\tint seq_len;\t\t/* S it was tuned for */\n"
	      "\tint kv_len;\t\t/* KV length it was tuned for (S outside serving shapes) */\n"
	      "\tint batch;\t\t/* B it was tuned for */\n"
	      "\tint heads;\t\t/* H (query heads) it was tuned for */\n"
	      "\tint kv_heads;\t\t/* KV heads (H outside grouped-query attention) */\n"
	      "\tint bshd;\t\t/* 1: [B,S,H,D] layout, 0: [B,H,S,D] */\n"
	      "\tdouble t_median_us;\t/* its median latency there, -1 if not timed */\n", out);
	for (int i = 0; i < d->nparams; i++) {
		lower(d->params[i], lo, sizeof(lo));
		fprintf(out, "\tint %s;\t/* %s */\n", lo, d->params[i]);
	}
	fprintf(out, "\tlong long geom[%d];\t/* at the tuned shape: smem, threads, grid x/y/z, combine\n"
		     "\t\t\t\t * threads, combine grid x/y/z, workspace bytes */\n"
		     "\tlong long defines[%d];\t/* the space's compile.defines at the tuned shape */\n",
		FT_DISPATCH_GEOM, d->sp->ndefines ? d->sp->ndefines : 1);
}

/* The names one language gives the table's parts. */
struct lang {
	int c;			/* 1: C, 0: C++ */
	const char *entry;	/* the entry type */
	const char *tag;	/* its struct tag */
	const char *table, *count;
	const char *fn;		/* storage and name prefix of the functions */
	const char *null;
	const char *flag;	/* the type of the bf16 and causal arguments */
	const char *kv_default;	/* C++ gives kv_len a default */
	const char *guard;	/* the include guard */
};

/* The ratio helper and the pick function: one text for both languages. */
static void pick_function(FILE *out, const struct lang *l)
{
	fprintf(out,
		"/* max(a,b)/min(a,b) for sizes (values below 1 count as 1): 1 when equal */\n"
		"%sdouble %sratio_(long long a, long long b)\n{\n"
		"\tif (a < 1)\n\t\ta = 1;\n\tif (b < 1)\n\t\tb = 1;\n"
		"\treturn a > b ? (double)a / (double)b : (double)b / (double)a;\n}\n\n"
		"/* The entry for a problem by the rule above; %s when none matches.\n"
		" * kv_len <= 0 means kv_len = seq_len, kv_heads <= 0 means kv_heads = heads,\n"
		" * bshd 1 means [B,S,H,D] tensors, 0 [B,H,S,D]. */\n"
		"%sconst %s *\n%spick(int head_dim, %s bf16, %s causal, int batch, int heads, int seq_len,\n"
		"\t\tint kv_len%s, int kv_heads%s, %s bshd%s)\n{\n"
		"\tconst %s *best = %s;\n"
		"\tdouble best_s = 0, best_bh = 0;\n"
		"\tlong long g[%d];\n\n"
		"\tif (kv_len <= 0)\n\t\tkv_len = seq_len;\n"
		"\tif (kv_heads <= 0)\n\t\tkv_heads = heads;\n"
		"\tfor (int i = 0; i < %s; i++) {\n"
		"\t\tconst %s *e = &%s[i];\n"
		"\t\tdouble ds, dbh;\n\n"
		"\t\tif (e->head_dim != head_dim || e->bf16 != (bf16 != 0) || e->causal != (causal != 0) ||\n"
		"\t\t    e->bshd != (bshd != 0) || (e->kv_heads < e->heads) != (kv_heads < heads) ||\n"
		"\t\t    (e->seq_len == 1) != (seq_len == 1))\n"
		"\t\t\tcontinue;\n"
		"\t\tif (!%seval(e, batch, heads, kv_heads, seq_len, kv_len, bshd != 0, g))\n"
		"\t\t\tcontinue;\n"
		"\t\tds = %sratio_(seq_len, e->seq_len) * %sratio_(kv_len, e->kv_len);\n"
		"\t\tdbh = %sratio_((long long)batch * heads, (long long)e->batch * e->heads) *\n"
		"\t\t      %sratio_(heads / kv_heads, e->heads / e->kv_heads);\n"
		"\t\tif (!best || ds < best_s || (ds == best_s && dbh < best_bh)) {\n"
		"\t\t\tbest = e;\n\t\t\tbest_s = ds;\n\t\t\tbest_bh = dbh;\n\t\t}\n\t}\n"
		"\treturn best;\n}\n",
		l->c ? "static inline " : "inline ", l->fn, l->null, l->c ? "static inline " : "inline ", l->entry,
		l->fn, l->flag, l->flag, l->kv_default, l->kv_default, l->flag, l->c ? "" : " = false", l->entry,
		l->c ? "0" : "nullptr", FT_DISPATCH_GEOM, l->count, l->entry, l->table, l->fn, l->fn, l->fn, l->fn, l->fn);
}

static void write_code(FILE *out, const struct ft_dispatch *d, const struct lang *l)
{
	header_top(out, d, l->c, l->guard, l->fn);
	if (!l->c)
		fputs("namespace fatune {\n\n", out);
	fprintf(out, "/* One tuned shape and its config (the parameters in lower case). */\nstruct %s {\n", l->tag);
	struct_fields(out, d);
	fprintf(out, "};\n\n%s %s %s[] = {\n", l->c ? "static const" : "constexpr", l->entry, l->table);
	for (int i = 0; i < d->n; i++) {
		entry_comment(out, &d->rows[i]);
		entry_values(out, d, i);
	}
	fprintf(out, l->c ? "};\n#define %s %d\n\n" : "};\nconstexpr int %s = %d;\n\n", l->count, d->n);
	ft_dispatch_write_eval(out, d, l->c ? "static inline " : "inline ", l->fn, l->entry);
	fputc('\n', out);
	pick_function(out, l);
	fprintf(out, "%s\n#endif /* %s */\n", l->c ? "" : "\n} /* namespace fatune */\n", l->guard);
}

static void json_num(FILE *out, const char *fmt, double v)
{
	if (isfinite(v))
		fprintf(out, fmt, v);
	else
		fputs("null", out);
}

/* PREFIX"KEY": "VALUE" with VALUE escaped */
static void json_text(FILE *out, const char *prefix, const char *key, const char *value)
{
	fprintf(out, "%s\"%s\": ", prefix, key);
	ft_json_string(out, value);
}

static void write_json(FILE *out, const struct ft_dispatch *d)
{
	const struct ft_best *b0 = &d->rows[0];
	char shape[FT_SHAPE_TEXT_MAX];

	json_text(out, "{\n  ", "generated_by", "fatune export --dispatch (do not edit)");
	json_text(out, ",\n  ", "arch", b0->arch);
	json_text(out, ",\n  ", "device", b0->device);
	json_text(out, ",\n  ", "space", b0->space);
	json_text(out, ",\n  ", "family", b0->family[0] ? b0->family : "mma");
	json_text(out, ",\n  ", "rule", rule_text);
	fputs(",\n  \"params\": [", out);
	for (int i = 0; i < d->nparams; i++) {
		fputs(i ? ", " : "", out);
		ft_json_string(out, d->params[i]);
	}
	fputc(']', out);
	ft_dispatch_write_check_json(out, d);
	fputs(",\n  \"entries\": [\n", out);
	for (int r = 0; r < d->n; r++) {
		const struct ft_best *b = &d->rows[r];
		struct ft_export_entry e[FT_EXPORT_MAX_ENTRIES];
		struct ft_err ignored;
		int n = 0;

		(void)ft_export_parse_config(b->config, e, &n, &ignored);	/* checked by collect */
		fputs("    {\"shape\": ", out);
		ft_json_string(out, ft_shape_format(&b->shape, shape, sizeof(shape)));
		fprintf(out, ", \"b\": %d, \"h\": %d, \"s\": %d, \"d\": %d, \"s_kv\": %d, \"h_kv\": %d, \"layout\": \"%s\","
			" \"dtype\": \"%s\", \"causal\": %d,\n     \"config\": {",
			b->shape.b, b->shape.h, b->shape.s, b->shape.d, b->shape.s_kv ? b->shape.s_kv : b->shape.s,
			b->shape.h_kv ? b->shape.h_kv : b->shape.h, ft_layout_name(b->shape.layout),
			ft_dtype_name(b->shape.dtype), b->shape.causal != 0);
		for (int i = 0; i < n; i++) {
			fputs(i ? ", " : "", out);
			ft_json_string(out, e[i].name);
			fprintf(out, ": %d", e[i].value);
		}
		fputs("},\n     \"t_median_us\": ", out);
		json_num(out, "%.3f", b->t_median_us);
		fputs(", \"t_min_us\": ", out);
		json_num(out, "%.3f", b->t_min_us);
		fputs(", \"rel_err\": ", out);
		json_num(out, "%.3e", b->rel_err);
		{
			long long g[FT_DISPATCH_GEOM];

			ft_dispatch_geom(d, r, g);
			fputs(", \"geom\": [", out);
			for (int i = 0; i < FT_DISPATCH_GEOM; i++)
				fprintf(out, "%s%lld", i ? ", " : "", g[i]);
			fputs("], \"defines\": [", out);
			for (int i = 0; i < d->sp->ndefines; i++)
				fprintf(out, "%s%lld", i ? ", " : "", d->cand[r].define_values[i]);
			fputs("]", out);
		}
		json_text(out, ", ", "template_hash", b->template_hash);
		json_text(out, ", ", "compile_key", b->compile_key);
		json_text(out, ", ", "fatune_version", b->fatune_version);
		json_text(out, ", ", "updated_at", b->updated_at);
		fprintf(out, "}%s\n", r + 1 < d->n ? "," : "");
	}
	fputs("  ]\n}\n", out);
}

/* The gate again, on what is about to be written (export/gen.h): every
 * parameter name, as itself and as the lower-case field it becomes, and every
 * row's config with the table's parameters. */
static int gate(const struct ft_dispatch *d, struct ft_err *err)
{
	struct ft_export_entry e[FT_EXPORT_MAX_ENTRIES];
	char lo[FT_NAME_MAX];
	int n;

	for (int i = 0; i < d->nparams; i++) {
		lower(d->params[i], lo, sizeof(lo));
		if (ft_gen_ident(d->params[i], "a parameter of the table", err) ||
		    ft_gen_ident(lo, "the table field named after a parameter", err))
			return -1;
	}
	for (int r = 0; r < d->n; r++) {
		if (ft_export_parse_config(d->rows[r].config, e, &n, err))
			return -1;
		for (int i = 0; i < n && n == d->nparams; i++)
			if (strcmp(e[i].name, d->params[i]))
				n = -1;
		if (n != d->nparams)
			return ft_error(err, FT_EFAIL, "cannot export: a row's config has other parameters than the table's");
	}
	return 0;
}

int ft_dispatch_write(FILE *out, const struct ft_dispatch *d, enum ft_dispatch_format fmt,
		      struct ft_err *err)
{
	if (!d->n || !d->cand)
		return ft_error(err, FT_EFAIL, "empty or unchecked dispatch table: this is a fatune bug");
	static const struct lang c = { 1, "struct fatune_dispatch_entry", "fatune_dispatch_entry", "fatune_dispatch_table",
				       "FATUNE_DISPATCH_COUNT", "fatune_dispatch_", "NULL", "int", "", "FATUNE_DISPATCH_H" };
	static const struct lang cxx = { 0, "DispatchEntry", "DispatchEntry", "kDispatchTable", "kDispatchCount", "dispatch_",
					 "nullptr", "bool", " = 0", "FATUNE_DISPATCH_H" };

	if (gate(d, err))
		return -1;
	if (fmt == FT_DISPATCH_C)
		write_code(out, d, &c);
	else if (fmt == FT_DISPATCH_CXX)
		write_code(out, d, &cxx);
	else
		write_json(out, d);
	if (fflush(out) || ferror(out))
		return ft_error(err, FT_EFAIL, "cannot write the dispatch table: %s: check the disk and the output path",
				strerror(errno));
	return 0;
}

int ft_dispatch_write_part(FILE *out, const struct ft_dispatch *d, int part, struct ft_err *err)
{
	char entry[64], tag[64], table[64], count[64], fn[64], guard[64];
	struct lang l = { 1, entry, tag, table, count, fn, "NULL", "int", "", guard };

	if (!d->n || !d->cand)
		return ft_error(err, FT_EFAIL, "empty or unchecked dispatch table: this is a fatune bug");
	snprintf(entry, sizeof(entry), "struct fatune_p%d_entry", part);
	snprintf(tag, sizeof(tag), "fatune_p%d_entry", part);
	snprintf(table, sizeof(table), "fatune_p%d_table", part);
	snprintf(count, sizeof(count), "FATUNE_P%d_COUNT", part);
	snprintf(fn, sizeof(fn), "fatune_p%d_", part);
	snprintf(guard, sizeof(guard), "FATUNE_P%d_TABLE_H", part);
	if (gate(d, err))
		return -1;
	write_code(out, d, &l);
	if (fflush(out) || ferror(out))
		return ft_error(err, FT_EFAIL, "cannot write the dispatch table: %s: check the disk and the output path",
				strerror(errno));
	return 0;
}
