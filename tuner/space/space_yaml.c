/* space_yaml.c - reading a search-space file into struct ft_space.
 *
 * yaml_doc.c reads the file (at most 1 MiB), checks its syntax and nesting and
 * loads the node tree; this file walks that tree against the format of
 * search_spaces/README.md, key by key, so that every problem is reported as
 * "FILE:LINE: key 'KEY': what is wrong and what to do". The walk only looks at
 * the keys it knows, to a fixed depth, so aliases cost nothing. Expressions
 * are kept as text; only their characters and parentheses are checked here
 * (ft_expr_precheck): they are compiled by ft_enum_open, against a shape and
 * an arch.
 */
#include "space/space.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/ident.h"
#include "space/derive.h"
#include "space/expr.h"
#include "base/paths.h"
#include "base/yaml_doc.h"

/* A space file is a page of YAML; 1 MiB is a thousand times that and bounds
 * what a hostile file can make libyaml build. */
#define SPACE_FILE_MAX (1 << 20)

/* The cartesian product is bounded so candidate indices and ft_enum_total fit
 * easily in 64 bits; 2^40 candidates at a microsecond each is 13 days of
 * enumeration, far past any search worth running. */
#define SPACE_TOTAL_MAX (1LL << 40)

/* The format nests 4 levels (parameters > NAME > values > list); 32 leaves
 * room for YAML's own structures and still stops deep-nesting attacks early. */
#define DEPTH_MAX 32

/* ---- helpers ------------------------------------------------------------------ */

int ft_space_yaml_expression(struct ft_yaml *y, yaml_node_t *n, const char *key, struct ft_expr_src *e)
{
	const char *s = ft_yaml_scalar(y, n, key, "an expression");
	struct ft_err why;

	if (!s)
		return -1;
	if (!*s)
		return ft_yaml_fail(y, ft_yaml_line(n), key, "the expression is empty: write one, e.g. 128");
	if (ft_expr_precheck(s, &why))
		return ft_yaml_fail(y, ft_yaml_line(n), key, "%s", why.msg);
	snprintf(e->text, sizeof(e->text), "%s", s);
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->line = ft_yaml_line(n);
	return 0;
}

/* ---- the sections ------------------------------------------------------------------ */

static int template_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
			 void *arg)
{
	struct ft_space *sp = y->user;
	const char *name = (const char *)k->data.scalar.value, *s;

	if (!strcmp(name, "file")) {
		const char *why;
		FILE *f;

		if (!(s = ft_yaml_scalar(y, v, key, "a file path")))
			return -1;
		if (!*s)
			return ft_yaml_fail(y, ft_yaml_line(v), key, "the path is empty: name the kernel template");
		/* confined like compile.include: beside the space or fatune's own */
		if ((why = ft_space_file_confined(s, y->path, sp->template_path, sizeof(sp->template_path))))
			return ft_yaml_fail(y, ft_yaml_line(v), key,
				    "template '%.200s' cannot be read: %s: the path is relative to the space file's directory, under which the template must lie (or under %s, fatune's own)",
				    sp->template_path[0] ? sp->template_path : s, why, ft_data_dir());
		errno = 0;
		if (!(f = fopen(sp->template_path, "r")))
			return ft_yaml_fail(y, ft_yaml_line(v), key, "template '%s' cannot be read: %s",
				    sp->template_path, strerror(errno));
		fclose(f);
		{
			const char *base = strrchr(sp->template_path, '/');
			char *dot;
			base = base ? base + 1 : sp->template_path;
			if (strlen(base) >= sizeof(sp->template_name))
				return ft_yaml_fail(y, ft_yaml_line(v), key,
					    "the file name '%s' is longer than %d characters", base,
					    FT_NAME_MAX - 1);
			strcpy(sp->template_name, base);
			dot = strrchr(sp->template_name, '.');
			if (dot && dot != sp->template_name)
				*dot = '\0';
		}
		return 0;
	}
	if (!strcmp(name, "kernel"))
		return ft_yaml_name(y, v, key, 1, sp->kernel, sizeof(sp->kernel));
	if (!strcmp(name, "abi")) {
		long long abi;
		if (ft_yaml_integer(y, v, key, &abi))
			return -1;
		if (abi != 1 && abi != 2)
			return ft_yaml_fail(y, ft_yaml_line(v), key,
					    "ABI version %lld does not exist: 1 (contiguous [B,H,S,D], "
					    "self-attention) or 2 (fatune_abi.h)",
					    abi);
		sp->abi = (int)abi;
		return 0;
	}
	if (!strcmp(name, "family")) {
		char fam[FT_NAME_MAX];
		if (ft_yaml_name(y, v, key, 1, fam, sizeof(fam)))
			return -1;
		if (!(sp->family = ft_family_find(fam)))
			return ft_yaml_fail(y, ft_yaml_line(v), key,
					    "unknown template family '%s': use one of %s", fam,
					    ft_family_names());
		return 0;
	}
	if (!strcmp(name, "combine_kernel"))
		return ft_yaml_name(y, v, key, 1, sp->combine_kernel, sizeof(sp->combine_kernel));
	/* shared_memory */
	if (!(s = ft_yaml_scalar(y, v, key, "static or dynamic")))
		return -1;
	if (!strcmp(s, "static"))
		sp->smem_kind = FT_SMEM_STATIC;
	else if (!strcmp(s, "dynamic"))
		sp->smem_kind = FT_SMEM_DYNAMIC;
	else
		return ft_yaml_fail(y, ft_yaml_line(v), key,
			    "'%s' is neither static (__shared__ arrays) nor dynamic (extern "
			    "__shared__)",
			    s);
	return 0;
}

/* The values of one parameter: a list of integers or a range. */
static int values_list(struct ft_yaml *y, yaml_node_t *v, const char *key, struct ft_param *p)
{
	yaml_node_item_t *it;
	int n;

	if (v->type != YAML_SEQUENCE_NODE)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "expected a list of integers, found %s",
			    ft_yaml_type(v));
	n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n == 0)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "empty value list: give at least one value");
	if (n > FT_MAX_VALUES)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "too many values (%d): at most %d per parameter", n,
			    FT_MAX_VALUES);
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = ft_yaml_node(y, *it);
		long long x;

		if (!item || ft_yaml_integer(y, item, key, &x))
			return item ? -1 : ft_yaml_fail(y, ft_yaml_line(v), key, "broken YAML node");
		for (int j = 0; j < p->nvalues; j++)
			if (p->values[j] == x)
				return ft_yaml_fail(y, ft_yaml_line(item), key,
					    "value %lld is listed twice: list each value once", x);
		p->values[p->nvalues++] = x;
	}
	return 0;
}

static int range(struct ft_yaml *y, yaml_node_t *v, const char *key, struct ft_param *p)
{
	long long r[3] = { 0, 0, 1 };
	unsigned long long count;
	int n;

	if (v->type != YAML_SEQUENCE_NODE)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "expected [from, to] or [from, to, step], found %s",
			    ft_yaml_type(v));
	n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n != 2 && n != 3)
		return ft_yaml_fail(y, ft_yaml_line(v), key,
			    "has %d items: write [from, to] or [from, to, step] (inclusive)", n);
	for (int i = 0; i < n; i++) {
		yaml_node_t *item = ft_yaml_node(y, v->data.sequence.items.start[i]);
		if (!item || ft_yaml_integer(y, item, key, &r[i]))
			return item ? -1 : ft_yaml_fail(y, ft_yaml_line(v), key, "broken YAML node");
	}
	if (r[2] < 1)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "step %lld must be 1 or more", r[2]);
	if (r[1] < r[0])
		return ft_yaml_fail(y, ft_yaml_line(v), key, "from %lld is above to %lld: write [from, to]", r[0],
			    r[1]);
	count = ((unsigned long long)r[1] - (unsigned long long)r[0]) / (unsigned long long)r[2] + 1;
	if (count > FT_MAX_VALUES)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "too many values (%llu): at most %d per parameter",
			    count, FT_MAX_VALUES);
	for (unsigned long long i = 0; i < count; i++)
		p->values[p->nvalues++] = r[0] + (long long)i * r[2];
	return 0;
}

struct param_form {
	yaml_node_t *values, *range;
	struct ft_param *p;
};

static int param_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
		      void *arg)
{
	struct param_form *f = arg;
	const char *name = (const char *)k->data.scalar.value, *s;

	if (!strcmp(name, "values") || !strcmp(name, "range")) {
		if (f->values || f->range)
			return ft_yaml_fail(y, ft_yaml_line(k), key,
				    "both values and range: give only one of them");
		if (!strcmp(name, "values")) {
			f->values = v;
			return values_list(y, v, key, f->p);
		}
		f->range = v;
		return range(y, v, key, f->p);
	}
	/* kind */
	if (!(s = ft_yaml_scalar(y, v, key, "compile or launch")))
		return -1;
	if (!strcmp(s, "compile"))
		f->p->kind = FT_PARAM_COMPILE;
	else if (!strcmp(s, "launch"))
		f->p->kind = FT_PARAM_LAUNCH;
	else
		return ft_yaml_fail(y, ft_yaml_line(v), key,
			    "'%s' is neither compile (a -D macro) nor launch (a field of the "
			    "kernel's params)",
			    s);
	return 0;
}

static int parameters_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
			   void *arg)
{
	static const char *const form_keys[] = { "values", "range", "kind" };
	struct ft_space *sp = y->user;
	const char *name = (const char *)k->data.scalar.value, *why;
	struct ft_param *p;
	struct param_form f = { 0 };

	/* parameters is a mapping of names: mapping() left them to us */
	if ((why = ft_expr_name_problem(name)) || (why = ft_ident_problem(name)))
		return ft_yaml_fail(y, ft_yaml_line(k), key, "parameter name '%s' cannot be used: %s", name, why);
	for (int i = 0; i < sp->nparams; i++)
		if (!strcasecmp(sp->params[i].name, name))
			return ft_yaml_fail(y, ft_yaml_line(k), key,
				    "duplicate parameter: '%s' was defined at line %d (names ignore "
				    "case in expressions): give each parameter once",
				    sp->params[i].name, sp->params[i].line);
	if (sp->nparams == FT_MAX_PARAMS)
		return ft_yaml_fail(y, ft_yaml_line(k), key, "too many parameters: at most %d", FT_MAX_PARAMS);
	p = &sp->params[sp->nparams];
	memset(p, 0, sizeof(*p));
	strcpy(p->name, name);
	p->kind = FT_PARAM_COMPILE;
	p->line = ft_yaml_line(k);
	if (v->type == YAML_SEQUENCE_NODE) {
		if (values_list(y, v, key, p))
			return -1;
	} else if (v->type == YAML_MAPPING_NODE) {
		f.p = p;
		if (ft_yaml_mapping(y, v, key, form_keys, 3, param_pair, &f))
			return -1;
		if (!f.values && !f.range)
			return ft_yaml_fail(y, ft_yaml_line(k), key,
				    "missing values: give 'values: [..]' or 'range: [from, to]'");
		/* the kernel ABI (fatune_abi.h) has one launch-time field, num_splits:
		 * any other launch parameter would reach the kernel nowhere */
		if (p->kind == FT_PARAM_LAUNCH && strcmp(p->name, "NUM_SPLITS"))
			return ft_yaml_fail(y, ft_yaml_line(k), key,
				    "only NUM_SPLITS can be kind: launch (it fills num_splits of "
				    "struct fatune_attn_params): make '%s' kind: compile",
				    p->name);
	} else {
		return ft_yaml_fail(y, ft_yaml_line(v), key,
			    "expected a list of integers or a mapping with values/range and kind, "
			    "found %s",
			    ft_yaml_type(v));
	}
	sp->nparams++;
	return 0;
}

static int constraints_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
			    void *arg)
{
	struct ft_space *sp = y->user;
	struct ft_constraint *c;
	const char *name = (const char *)k->data.scalar.value;

	if (!*name || strlen(name) >= FT_NAME_MAX)
		return ft_yaml_fail(y, ft_yaml_line(k), key, "a constraint name has 1 to %d characters",
			    FT_NAME_MAX - 1);
	for (const char *p = name; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
			return ft_yaml_fail(y, ft_yaml_line(k), key,
				    "constraint name '%s' may only hold letters, digits, '_' and '-'",
				    name);
	for (int i = 0; i < sp->nconstraints; i++)
		if (!strcmp(sp->constraints[i].name, name))
			return ft_yaml_fail(y, ft_yaml_line(k), key,
				    "duplicate constraint (first at line %d): give each name once",
				    sp->constraints[i].expr.line);
	if (sp->nconstraints == FT_MAX_CONSTRAINTS)
		return ft_yaml_fail(y, ft_yaml_line(k), key, "too many constraints: at most %d",
			    FT_MAX_CONSTRAINTS);
	c = &sp->constraints[sp->nconstraints];
	strcpy(c->name, name);
	if (ft_space_yaml_expression(y, v, key, &c->expr))
		return -1;
	sp->nconstraints++;
	return 0;
}

/* Parenthesis depth change of s. */
static int paren_delta(const char *s)
{
	int d = 0;

	for (; *s; s++)
		d += (*s == '(') - (*s == ')');
	return d;
}

/* launch.grid / launch.combine_grid: exactly three expressions. In a YAML flow
 * list a comma always ends an item, so [ceil_div(S, TILE_M), H, B] arrives as
 * four items "ceil_div(S", "TILE_M)", "H", "B": items are joined back with
 * ", " while their parentheses are open, which restores the text as written. */
static int grid(struct ft_yaml *y, yaml_node_t *v, const char *key, struct ft_expr_src *g)
{
	yaml_node_item_t *it = v->data.sequence.items.start;
	int n = 0;

	if (v->type != YAML_SEQUENCE_NODE)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "expected a list of 3 expressions [x, y, z], found %s",
			    ft_yaml_type(v));
	while (it < v->data.sequence.items.top) {
		char ikey[FT_NAME_MAX], text[FT_EXPR_MAX];
		yaml_node_t *first = ft_yaml_node(y, *it), *item;
		int depth = 0;
		size_t len = 0;

		snprintf(ikey, sizeof(ikey), "%s[%d]", key, n);
		text[0] = '\0';
		do {
			const char *s;
			if (!(item = ft_yaml_node(y, *it)))
				return ft_yaml_fail(y, ft_yaml_line(v), key, "broken YAML node");
			if (!(s = ft_yaml_scalar(y, item, ikey, "an expression")))
				return -1;
			len += (size_t)snprintf(text + len, len < sizeof(text) ? sizeof(text) - len : 0,
						"%s%s", len ? ", " : "", s);
			if (len >= sizeof(text))
				return ft_yaml_fail(y, ft_yaml_line(item), ikey,
					    "the expression is longer than %d characters", FT_EXPR_MAX - 1);
			depth += paren_delta(s);
			it++;
		} while (depth > 0 && it < v->data.sequence.items.top);
		if (n == 3)
			return ft_yaml_fail(y, ft_yaml_line(v), key,
				    "has more than 3 items: a grid is exactly 3 expressions [x, y, z]");
		/* a scalar node holding the joined text, so ft_space_yaml_expression() sees one value */
		{
			yaml_node_t joined = *first;
			joined.data.scalar.value = (yaml_char_t *)text;
			joined.data.scalar.length = strlen(text);
			if (ft_space_yaml_expression(y, &joined, ikey, &g[n]))
				return -1;
		}
		n++;
	}
	if (n != 3)
		return ft_yaml_fail(y, ft_yaml_line(v), key,
			    "has %d items: a grid is exactly 3 expressions [x, y, z]", n);
	return 0;
}

static int launch_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
		       void *arg)
{
	struct ft_space *sp = y->user;
	const char *name = (const char *)k->data.scalar.value;

	if (!strcmp(name, "threads"))
		return ft_space_yaml_expression(y, v, key, &sp->threads);
	if (!strcmp(name, "grid"))
		return grid(y, v, key, sp->grid);
	if (!strcmp(name, "combine_threads"))
		return ft_space_yaml_expression(y, v, key, &sp->combine_threads);
	if (!strcmp(name, "combine_pdl"))
		return ft_space_yaml_expression(y, v, key, &sp->combine_pdl);
	return grid(y, v, key, sp->combine_grid);
}

/* workspace: {bytes: EXPR, init: zero|poison|none|zero_once} */
static int workspace_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
			  void *arg)
{
	static const char *const inits[] = { "zero", "poison", "none", "zero_once" };
	struct ft_space *sp = y->user;
	const char *s;

	if (!strcmp((const char *)k->data.scalar.value, "bytes"))
		return ft_space_yaml_expression(y, v, key, &sp->workspace);
	if (!(s = ft_yaml_scalar(y, v, key, "zero, poison, none or zero_once")))
		return -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, inits[i])) {
			sp->workspace_init = (enum ft_workspace_init)i;
			return 0;
		}
	return ft_yaml_fail(y, ft_yaml_line(v), key,
			    "'%s' is not zero (zeroed before every call), poison (0xff bytes, the "
			    "kernel writes before it reads), none or zero_once (zeroed before the "
			    "first call, the kernel leaves it zero)",
			    s);
}

/* NVRTC options a space may add: they change code generation only. Anything
 * else (an output file, a pre-include, a different arch) is refused, so a
 * space file cannot steer the compiler outside its own template. */
static const char *const allowed_options[] = {
	"-maxrregcount=", "--maxrregcount=", "-use_fast_math", "--use_fast_math",
	"-ftz=",	  "--ftz=",	     "-prec-div=",     "--prec-div=",
	"-prec-sqrt=",	  "--prec-sqrt=",    "-fmad=",	       "--fmad=",
	"-lineinfo",	  "--generate-line-info", "-extra-device-vectorization",
	"--extra-device-vectorization", "-std=c++", "--std=c++", "-Xptxas=-O", "-O",
};
#define NALLOWED ((int)(sizeof(allowed_options) / sizeof(allowed_options[0])))

static int option_allowed(const char *s)
{
	for (int i = 0; i < NALLOWED; i++) {
		size_t n = strlen(allowed_options[i]);
		if (!strncmp(s, allowed_options[i], n)) {
			/* a flag must match whole; a prefix ending in '=' or a digit
			 * family takes a plain value */
			const char *rest = s + n;
			if (allowed_options[i][n - 1] != '=' && strcmp(allowed_options[i], "-std=c++") &&
			    strcmp(allowed_options[i], "--std=c++") && strcmp(allowed_options[i], "-Xptxas=-O") &&
			    strcmp(allowed_options[i], "-O"))
				return !*rest;
			for (; *rest; rest++)
				if (!isalnum((unsigned char)*rest))
					return 0;
			return 1;
		}
	}
	return 0;
}

static int compile_list(struct ft_yaml *y, yaml_node_t *v, const char *key, int options)
{
	struct ft_space *sp = y->user;
	int max = options ? FT_MAX_COMPILE_OPTIONS : FT_MAX_INCLUDES;

	if (v->type != YAML_SEQUENCE_NODE)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "expected a list of %s, found %s",
				    options ? "NVRTC options" : "directories", ft_yaml_type(v));
	if (ft_yaml_count(v) > max)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "too many items (%d): at most %d",
				    ft_yaml_count(v), max);
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = ft_yaml_node(y, *it);
		const char *s;
		if (!item)
			return ft_yaml_fail(y, ft_yaml_line(v), key, "broken YAML node");
		if (!(s = ft_yaml_scalar(y, item, key, options ? "an option" : "a directory")))
			return -1;
		if (options) {
			if (strlen(s) >= FT_OPTION_MAX || !option_allowed(s))
				return ft_yaml_fail(y, ft_yaml_line(item), key,
						    "option '%.60s' is not allowed: a space may add "
						    "-maxrregcount=N, -use_fast_math, -ftz=, -prec-div=, "
						    "-prec-sqrt=, -fmad=, -lineinfo, "
						    "-extra-device-vectorization, -std=c++NN or -Xptxas=-ON "
						    "(use compile.defines for -D and compile.include for -I)",
						    s);
			strcpy(sp->options[sp->noptions++], s);
		} else {
			/* resolved in check_required, once template.file is known */
			if (strlen(s) >= FT_PATH_MAX)
				return ft_yaml_fail(y, ft_yaml_line(item), key, "the path is too long");
			strcpy(sp->includes[sp->nincludes], s);
			sp->include_lines[sp->nincludes] = ft_yaml_line(item);
			sp->nincludes++;
		}
	}
	return 0;
}

static int define_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
		       void *arg)
{
	struct ft_space *sp = y->user;
	const char *name = (const char *)k->data.scalar.value, *why;

	if ((why = ft_ident_problem(name)))
		return ft_yaml_fail(y, ft_yaml_line(k), key, "'%.60s' cannot be defined: %s", name, why);
	if (sp->ndefines == FT_MAX_SPACE_DEFINES)
		return ft_yaml_fail(y, ft_yaml_line(k), key, "too many defines: at most %d",
				    FT_MAX_SPACE_DEFINES);
	strcpy(sp->define_names[sp->ndefines], name);
	if (ft_space_yaml_expression(y, v, key, &sp->defines[sp->ndefines]))
		return -1;
	sp->ndefines++;
	return 0;
}

/* compile: {options: [...], defines: {NAME: EXPR}, include: [dirs]} */
static int compile_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
			void *arg)
{
	const char *name = (const char *)k->data.scalar.value;

	if (!strcmp(name, "options"))
		return compile_list(y, v, key, 1);
	if (!strcmp(name, "include"))
		return compile_list(y, v, key, 0);
	return ft_yaml_mapping(y, v, key, NULL, 0, define_pair, NULL);
}

/* `head_dims: [32, 64, 128]`: the head dims the template builds. */
static int head_dims(struct ft_yaml *y, yaml_node_t *v, const char *key, struct ft_space *sp)
{
	struct ft_param p = { .nvalues = 0 };

	if (values_list(y, v, key, &p))
		return -1;
	for (int i = 0; i < p.nvalues; i++) {
		if (p.values[i] < 1 || p.values[i] > 65536)
			return ft_yaml_fail(y, ft_yaml_line(v), key,
					    "head dim %lld is out of range: use 1 to 65536", p.values[i]);
		sp->head_dims[i] = (int)p.values[i];
	}
	sp->nhead_dims = p.nvalues;
	sp->head_dims_line = ft_yaml_line(v);
	return 0;
}

/* `spills: reject` (the default) or `spills: allow N` (bytes). */
static int spills(struct ft_yaml *y, yaml_node_t *v, const char *key, struct ft_space *sp)
{
	const char *s = ft_yaml_scalar(y, v, key, "'reject' or 'allow N'");
	char *end;
	long long n;

	if (!s)
		return -1;
	if (!strcmp(s, "reject")) {
		sp->spills_allow = 0;
		return 0;
	}
	if (strncmp(s, "allow ", 6))
		return ft_yaml_fail(y, ft_yaml_line(v), key,
				    "'%.64s' is neither 'reject' (the default) nor 'allow N' (N bytes of "
				    "spill stores and loads a kernel may have)",
				    s);
	errno = 0;
	n = strtoll(s + 6, &end, 10);
	if (errno || end == s + 6 || *end || n < 0 || n > (1LL << 30))
		return ft_yaml_fail(y, ft_yaml_line(v), key,
				    "'%.64s': write 'allow N' with N bytes from 0 to 2^30", s);
	sp->spills_allow = n;
	return 0;
}

/* `wgmma_serialized: reject` (the default) or `wgmma_serialized: allow`. */
static int wgmma_serialized(struct ft_yaml *y, yaml_node_t *v, const char *key, struct ft_space *sp)
{
	const char *s = ft_yaml_scalar(y, v, key, "'reject' or 'allow'");

	if (!s)
		return -1;
	if (strcmp(s, "reject") && strcmp(s, "allow"))
		return ft_yaml_fail(y, ft_yaml_line(v), key,
				    "'%.64s' is neither 'reject' (the default: a kernel whose wgmma "
				    "ptxas serialized is not timed) nor 'allow'",
				    s);
	sp->wgmma_serialized_allow = !strcmp(s, "allow");
	return 0;
}

/* applies_to: an expression over the shape's and the arch's names alone (a
 * space's parameters are not known before it applies) */
static int context_name(const char *name, size_t len, void *arg)
{
	static const char *const context[FT_CONTEXT_COUNT] = { FT_CONTEXT_NAMES };
	struct ft_yaml *y = arg;
	struct ft_space *sp = y->user;

	for (int i = 0; i < FT_CONTEXT_COUNT; i++)
		if (strlen(context[i]) == len && !strncasecmp(context[i], name, len))
			return 0;
	return ft_yaml_fail(y, sp->applies_to.line, "applies_to",
			    "'%.*s' is not a name of the shape (B H S D S_KV H_KV CAUSAL DTYPE DTYPE_BYTES "
			    "LAYOUT) or of the arch (SMEM_* REGS_PER_SM THREADS_PER_* CC): applies_to picks "
			    "shapes before any parameter has a value",
			    (int)len, name);
}

static int applies_to(struct ft_yaml *y, yaml_node_t *v, const char *key, struct ft_space *sp)
{
	if (ft_space_yaml_expression(y, v, key, &sp->applies_to))
		return -1;
	return ft_expr_each_name(sp->applies_to.text, context_name, y);
}

static int top_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	static const char *const template_keys[] = { "file",	      "kernel", "combine_kernel",
						      "shared_memory", "abi",	 "family" };
	static const char *const workspace_keys[] = { "bytes", "init" };
	static const char *const compile_keys[] = { "options", "defines", "include" };
	static const char *const launch_keys[] = { "threads", "grid", "combine_threads",
						   "combine_grid", "combine_pdl" };
	struct ft_space *sp = y->user;

	if (!strcmp(key, "fatune_space"))
		return ft_yaml_version(y, v, key);
	if (!strcmp(key, "name"))
		return ft_yaml_name(y, v, key, 0, sp->name, sizeof(sp->name));
	if (!strcmp(key, "description"))
		return ft_yaml_scalar(y, v, key, "text") ? 0 : -1;
	if (!strcmp(key, "template"))
		return ft_yaml_mapping(y, v, key, template_keys, 6, template_pair, NULL);
	if (!strcmp(key, "parameters")) {
		if (v->type == YAML_MAPPING_NODE &&
		    v->data.mapping.pairs.top == v->data.mapping.pairs.start)
			return ft_yaml_fail(y, ft_yaml_line(v), key, "no parameters: give at least one");
		return ft_yaml_mapping(y, v, key, NULL, 0, parameters_pair, NULL);
	}
	if (!strcmp(key, "constraints"))
		return ft_yaml_mapping(y, v, key, NULL, 0, constraints_pair, NULL);
	if (!strcmp(key, "derive"))
		return ft_yaml_mapping(y, v, key, NULL, 0, ft_derive_pair, arg);
	if (!strcmp(key, "smem_bytes"))
		return ft_space_yaml_expression(y, v, key, &sp->smem);
	if (!strcmp(key, "applies_to"))
		return applies_to(y, v, key, sp);
	if (!strcmp(key, "head_dims"))
		return head_dims(y, v, key, sp);
	if (!strcmp(key, "spills"))
		return spills(y, v, key, sp);
	if (!strcmp(key, "wgmma_serialized"))
		return wgmma_serialized(y, v, key, sp);
	if (!strcmp(key, "workspace"))
		return ft_yaml_mapping(y, v, key, workspace_keys, 2, workspace_pair, NULL);
	if (!strcmp(key, "compile"))
		return ft_yaml_mapping(y, v, key, compile_keys, 3, compile_pair, NULL);
	return ft_yaml_mapping(y, v, key, launch_keys, 5, launch_pair, NULL);
}

/* ---- the whole file ------------------------------------------------------------- */

/* Checks what no single key can: required keys and the combine pairing. */
static int check_required(struct ft_yaml *y, yaml_node_t *root)
{
	static const struct {
		const char *parent, *key, *full, *what;
	} need[] = {
		{ NULL, "fatune_space", "fatune_space", NULL },
		{ NULL, "name", "name", NULL },
		{ NULL, "template", "template", NULL },
		{ NULL, "parameters", "parameters", NULL },
		{ NULL, "smem_bytes", "smem_bytes", NULL },
		{ NULL, "launch", "launch", NULL },
		{ "template", "file", "template.file", "name the template file" },
		{ "template", "kernel", "template.kernel", "name the extern \"C\" __global__ entry point" },
		{ "template", "shared_memory", "template.shared_memory",
		  "say static (__shared__ arrays) or dynamic (extern __shared__)" },
		{ "launch", "threads", "launch.threads", "threads per block" },
		{ "launch", "grid", "launch.grid", "the grid [x, y, z]" },
	};
	struct ft_space *sp = y->user;
	const struct ft_expr_src *extra[2] = { &sp->combine_threads, &sp->combine_grid[0] };
	const char *extra_key[2] = { "launch.combine_threads", "launch.combine_grid" };
	long long total = 1;
	int lline = 1;

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		int line = ft_yaml_line(root);
		yaml_node_t *m = need[i].parent ? ft_yaml_lookup(y, root, need[i].parent, &line) : root;
		if (!ft_yaml_lookup(y, m, need[i].key, NULL))
			return ft_yaml_fail(y, line, need[i].full, "missing required key: %s",
				    need[i].what ? need[i].what
						 : "a space needs fatune_space, name, template, "
						   "parameters, smem_bytes and launch");
	}
	ft_yaml_lookup(y, root, "launch", &lline);
	for (int i = 0; i < 2; i++) {
		if (sp->combine_kernel[0] && !extra[i]->text[0])
			return ft_yaml_fail(y, lline, extra_key[i],
				    "missing: template.combine_kernel is set, so launch needs "
				    "combine_threads and combine_grid");
		if (!sp->combine_kernel[0] && extra[i]->text[0])
			return ft_yaml_fail(y, extra[i]->line, extra_key[i],
				    "there is no template.combine_kernel to launch: add one or "
				    "remove this key");
	}
	if (!sp->combine_kernel[0] && sp->combine_pdl.text[0])
		return ft_yaml_fail(y, sp->combine_pdl.line, "launch.combine_pdl",
			    "there is no template.combine_kernel to launch: add one or remove this key");
	if (sp->workspace.text[0] && sp->abi < 2) {
		int wline = 1;
		ft_yaml_lookup(y, root, "workspace", &wline);
		return ft_yaml_fail(y, wline, "workspace",
				    "a workspace needs ABI v2 (its pointer is a field of v2's params): "
				    "add 'abi: 2' under template");
	}
	for (int i = 0; i < sp->ndefines; i++) {
		const char *why = ft_expr_name_problem(sp->define_names[i]);
		if (ft_space_param(sp, sp->define_names[i]) >= 0 ||
		    (why && !strstr(why, "SQL keyword")))
			return ft_yaml_fail(y, sp->defines[i].line, sp->defines[i].key,
					    "'%s' cannot be defined here: %s", sp->define_names[i],
					    why ? why : "it is a parameter of the space (already a -D)");
	}
	for (int i = 0; i < sp->nincludes; i++) {
		char raw[FT_PATH_MAX];
		const char *why;
		strcpy(raw, sp->includes[i]);
		if ((why = ft_space_include_confined(raw, y->path, sp->template_path,
						     sp->includes[i], FT_PATH_MAX)))
			return ft_yaml_fail(y, sp->include_lines[i], "compile.include",
					    "include directory '%.200s' cannot be used: %s: name a "
					    "directory under the space file's or the template's "
					    "directory (relative to the space file), or '{cuda}/...' "
					    "under the CUDA toolkit's include directory",
					    raw, why);
	}
	for (int i = 0; i < sp->nparams; i++) {
		if (sp->params[i].derived && !sp->params[i].nchoices)
			continue;
		total *= sp->params[i].derived ? sp->params[i].nchoices : sp->params[i].nvalues;
		if (total > SPACE_TOTAL_MAX)
			return ft_yaml_fail(y, sp->params[i].line, "parameters",
				    "the space has more than 2^40 candidates: drop values or "
				    "parameters");
	}
	return 0;
}

int ft_space_load(struct ft_space *sp, const char *path, struct ft_err *err)
{
	static const char *const top_keys[] = { "fatune_space", "name",	    "description",
						"template",	"parameters", "constraints",
						"smem_bytes",	"workspace",  "compile",
						"launch",	"head_dims",  "spills",
						"derive",	"wgmma_serialized", "applies_to" };
	static const struct ft_yaml_format fmt = {
		"space file", "a space", "'fatune_space: 1' (see search_spaces/README.md)",
		SPACE_FILE_MAX, DEPTH_MAX, "a space nests 4",
	};
	struct ft_derive_pending pending = { 0 };
	struct ft_yaml y;
	int ret = -1;

	memset(sp, 0, sizeof(*sp));
	if (strlen(path) >= sizeof(sp->path))
		return ft_error(err, FT_EINPUT, "space file path is longer than %d characters",
				FT_PATH_MAX - 1);
	strcpy(sp->path, path);
	if (ft_yaml_open(&y, path, &fmt, err))
		return -1;
	y.user = sp;
	sp->hash = y.hash;
	snprintf(sp->hash_hex, sizeof(sp->hash_hex), "%016llx", (unsigned long long)sp->hash);
	sp->abi = 1;
	sp->family = &ft_family_cuda;	/* a kernel you bring, unless it says */
	sp->workspace_init = FT_WS_ZERO;
	if (ft_yaml_mapping(&y, y.root, FT_YAML_TOP, top_keys,
			    (int)(sizeof(top_keys) / sizeof(top_keys[0])), top_pair, &pending) ||
	    ft_derive_resolve(&y, sp, &pending) || check_required(&y, y.root))
		goto out;
	if (sp->family->check_space && sp->family->check_space(sp, err))
		goto out;
	ret = 0;
out:
	ft_yaml_close(&y);
	return ret;
}
