/* space_yaml.c - reading a search-space file (the only libyaml user).
 *
 * The file is read whole (at most 1 MiB), hashed, and parsed with libyaml's
 * document API; then the node tree is walked against the format of
 * search_spaces/README.md, key by key, so that every problem is reported as
 * "FILE:LINE: key 'KEY': what is wrong and what to do". An event pass first
 * checks the syntax and bounds the nesting (see prescan); the walk then only
 * looks at the keys it knows, to a fixed depth, so aliases cost nothing.
 * Expressions are kept as text; only their characters and parentheses are
 * checked here (ft_expr_precheck): they are compiled by ft_enum_open, against
 * a shape and an arch.
 */
#include "space.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "expr.h"

/* A space file is a page of YAML; 1 MiB is a thousand times that and bounds
 * what a hostile file can make libyaml build. */
#define SPACE_FILE_MAX (1 << 20)

/* The cartesian product is bounded so candidate indices and ft_enum_total fit
 * easily in 64 bits; 2^40 candidates at a microsecond each is 13 days of
 * enumeration, far past any search worth running. */
#define SPACE_TOTAL_MAX (1LL << 40)

#define TOP "(top level)"

/* The format nests 4 levels (parameters > NAME > values > list); 32 leaves
 * room for YAML's own structures and still stops deep-nesting attacks early. */
#define DEPTH_MAX 32

struct loader {
	const char *path;
	struct ft_space *sp;
	yaml_document_t doc;
	struct ft_err *err;
};

/* ---- errors ------------------------------------------------------------------- */

static int fail(struct loader *L, int line, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct loader *L, int line, const char *key, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ft_error(L->err, FT_EINPUT, "%s:%d: key '%s': %s", L->path, line, key, what);
}

static int line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static const char *type_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

/* "parameters.TILE_M": the mapping keys open at depth, or TOP. */
#define key_path(st, depth, out, size)                                                   \
	do {                                                                             \
		size_t n_ = 0;                                                           \
		(out)[0] = '\0';                                                         \
		for (int i_ = 0; i_ < (depth) && n_ < (size); i_++)                      \
			if ((st)[i_].map && (st)[i_].key[0])                             \
				n_ += (size_t)snprintf((out) + n_, (size) - n_, "%s%s",  \
						       n_ ? "." : "", (st)[i_].key);     \
		if (!(out)[0])                                                           \
			snprintf((out), (size), "%s", TOP);                              \
	} while (0)

static int yaml_fail(struct loader *L, yaml_parser_t *p, const unsigned char *buf, size_t len,
		     const char *key)
{
	char ctx[128] = "";
	size_t line;

	if (p->error == YAML_READER_ERROR) {
		line = 1;
		for (size_t i = 0; i < p->problem_offset && i < len; i++)
			line += buf[i] == '\n';
	} else {
		line = p->problem_mark.line + 1;
	}
	if (p->context)
		snprintf(ctx, sizeof(ctx), " (%s at line %zu)", p->context,
			 p->context_mark.line + 1);
	return fail(L, (int)line, key,
		    "malformed YAML: %s%s: fix the syntax (indent with spaces, 'key: value', "
		    "lists in [ ])",
		    p->problem ? p->problem : "cannot parse", ctx);
}

/* Checks the YAML before it is loaded, event by event: its syntax, and that it
 * nests at most DEPTH_MAX levels. libyaml's scanner does work proportional to
 * the flow nesting ([[[[...) for every token, so a 1 MiB file of '[' would take
 * hours in yaml_parser_load; here it is refused after DEPTH_MAX events. The
 * path of mapping keys is kept so a syntax error can name the key whose value
 * was being read. */
static int prescan(struct loader *L, const unsigned char *buf, size_t len)
{
	struct {
		int map;
		int expect_key;
		char key[FT_NAME_MAX];
	} st[DEPTH_MAX];
	int depth = 0, ret = -1;
	yaml_parser_t p;
	yaml_event_t ev;
	char path[256];

	if (!yaml_parser_initialize(&p))
		return ft_error(L->err, FT_EFAIL, "cannot initialise libyaml: out of memory");
	yaml_parser_set_input_string(&p, buf, len);
	for (;;) {
		int value_done = 0, type;

		if (!yaml_parser_parse(&p, &ev)) {
			key_path(st, depth, path, sizeof(path));
			yaml_fail(L, &p, buf, len, path);
			break;
		}
		type = ev.type;
		switch (type) {
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (depth == DEPTH_MAX) {
				key_path(st, depth, path, sizeof(path));
				fail(L, (int)ev.start_mark.line + 1, path,
				     "nested more than %d levels deep: a space nests 4", DEPTH_MAX);
				yaml_event_delete(&ev);
				goto out;
			}
			st[depth].map = type == YAML_MAPPING_START_EVENT;
			st[depth].expect_key = 1;
			st[depth].key[0] = '\0';
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			depth--;
			value_done = 1;
			break;
		case YAML_SCALAR_EVENT:
			if (depth > 0 && st[depth - 1].map && st[depth - 1].expect_key) {
				snprintf(st[depth - 1].key, sizeof(st[depth - 1].key), "%s",
					 (const char *)ev.data.scalar.value);
				st[depth - 1].expect_key = 0;
			} else {
				value_done = 1;
			}
			break;
		case YAML_ALIAS_EVENT:
			value_done = 1;
			break;
		default:
			break;
		}
		if (value_done && depth > 0 && st[depth - 1].map)
			st[depth - 1].expect_key = 1;
		yaml_event_delete(&ev);
		if (type == YAML_STREAM_END_EVENT) {
			ret = 0;
			break;
		}
	}
out:
	yaml_parser_delete(&p);
	return ret;
}

/* ---- node access ------------------------------------------------------------------ */

static yaml_node_t *node(struct loader *L, int id)
{
	return yaml_document_get_node(&L->doc, id);
}

/* The text of a scalar node, or NULL after failing with "wrong type". */
static const char *scalar(struct loader *L, yaml_node_t *n, const char *key, const char *want)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE) {
		fail(L, line_of(n), key, "expected %s, found %s", want, type_name(n));
		return NULL;
	}
	s = (const char *)n->data.scalar.value;
	if (strlen(s) != n->data.scalar.length) {
		fail(L, line_of(n), key, "the value holds a NUL character: remove it");
		return NULL;
	}
	return s;
}

/* An integer written as a plain decimal number. */
static int integer(struct loader *L, yaml_node_t *n, const char *key, long long *out)
{
	const char *s = scalar(L, n, key, "an integer");
	char *end;

	if (!s)
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (!*s || *end || errno || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    isspace((unsigned char)*s))
		return fail(L, line_of(n), key,
			    "non-integer value '%s': write a whole number such as 64, without quotes",
			    s);
	return 0;
}

/* A name of [A-Za-z0-9_-]+ (ident: a C identifier) copied into out. */
static int name_value(struct loader *L, yaml_node_t *n, const char *key, int ident, char *out)
{
	const char *s = scalar(L, n, key, ident ? "a C identifier" : "a name");

	if (!s)
		return -1;
	if (!*s)
		return fail(L, line_of(n), key, "the value is empty: give a name");
	if (strlen(s) >= FT_NAME_MAX)
		return fail(L, line_of(n), key, "'%.40s...' is longer than %d characters", s,
			    FT_NAME_MAX - 1);
	if (ident && !ft_is_ident(s))
		return fail(L, line_of(n), key,
			    "'%s' is not a C identifier: use letters, digits and _ (not first)", s);
	for (const char *p = s; !ident && *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
			return fail(L, line_of(n), key,
				    "'%s' may only hold letters, digits, '_' and '-'", s);
	strcpy(out, s);
	return 0;
}

static int expression(struct loader *L, yaml_node_t *n, const char *key, struct ft_expr_src *e)
{
	const char *s = scalar(L, n, key, "an expression");
	struct ft_err why;

	if (!s)
		return -1;
	if (!*s)
		return fail(L, line_of(n), key, "the expression is empty: write one, e.g. 128");
	if (ft_expr_precheck(s, &why))
		return fail(L, line_of(n), key, "%s", why.msg);
	snprintf(e->text, sizeof(e->text), "%s", s);
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->line = line_of(n);
	return 0;
}

/* Walks a mapping: checks that every key is a scalar in allowed[] and appears
 * once, then hands each pair to fn. */
typedef int (*pair_fn)(struct loader *L, const char *key, yaml_node_t *k, yaml_node_t *v,
		       void *arg);

static int mapping(struct loader *L, yaml_node_t *m, const char *where,
		   const char *const *allowed, int nallowed, pair_fn fn, void *arg)
{
	char list[256] = "names";

	for (int i = 0, n = 0; i < nallowed; i++)
		n += snprintf(list + n, sizeof(list) - (size_t)n, "%s%s", i ? ", " : "", allowed[i]);
	if (m->type != YAML_MAPPING_NODE)
		return fail(L, line_of(m), where, "expected a mapping of %s, found %s", list,
			    type_name(m));
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(L, p->key), *v = node(L, p->value);
		const char *name;
		int known = !allowed;	/* NULL: the keys are names, fn checks them */
		char full[160];

		if (!k || !v)
			return fail(L, line_of(m), where, "broken YAML node");
		name = scalar(L, k, where, "a key");
		if (!name)
			return -1;
		snprintf(full, sizeof(full), "%s%s%.*s", strcmp(where, TOP) ? where : "",
			 strcmp(where, TOP) ? "." : "", FT_NAME_MAX, name);
		for (int i = 0; i < nallowed; i++)
			known |= !strcmp(name, allowed[i]);
		if (!known)
			return fail(L, line_of(k), full, "unknown key: the keys allowed here are %s",
				    list);
		for (yaml_node_pair_t *q = m->data.mapping.pairs.start; allowed && q < p; q++) {
			yaml_node_t *qk = node(L, q->key);
			if (qk && qk->type == YAML_SCALAR_NODE &&
			    !strcmp((const char *)qk->data.scalar.value, name))
				return fail(L, line_of(k), full,
					    "duplicate key (first at line %d): give it once",
					    line_of(qk));
		}
		if (fn(L, full, k, v, arg))
			return -1;
	}
	return 0;
}

/* The value node of key in mapping m, or NULL. */
static yaml_node_t *lookup(struct loader *L, yaml_node_t *m, const char *key, int *line)
{
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(L, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key)) {
			if (line)
				*line = line_of(k);
			return node(L, p->value);
		}
	}
	return NULL;
}

/* ---- the sections ------------------------------------------------------------------ */

static int template_pair(struct loader *L, const char *key, yaml_node_t *k, yaml_node_t *v,
			 void *arg)
{
	struct ft_space *sp = L->sp;
	const char *name = (const char *)k->data.scalar.value, *s;

	if (!strcmp(name, "file")) {
		char dir[FT_PATH_MAX], *slash;
		struct stat st;
		FILE *f;

		if (!(s = scalar(L, v, key, "a file path")))
			return -1;
		if (!*s)
			return fail(L, line_of(v), key, "the path is empty: name the kernel template");
		snprintf(dir, sizeof(dir), "%s", L->path);
		slash = strrchr(dir, '/');
		if (s[0] == '/' || !slash)
			snprintf(dir, sizeof(dir), "%s", s[0] == '/' ? "" : ".");
		else
			*slash = '\0';
		if ((size_t)snprintf(sp->template_path, sizeof(sp->template_path), "%s%s%s", dir,
				     s[0] == '/' ? "" : "/", s) >= sizeof(sp->template_path))
			return fail(L, line_of(v), key, "the path is longer than %d characters",
				    FT_PATH_MAX - 1);
		errno = 0;
		if (stat(sp->template_path, &st) || !S_ISREG(st.st_mode) ||
		    !(f = fopen(sp->template_path, "r")))
			return fail(L, line_of(v), key,
				    "template '%s' cannot be read: %s: the path is relative to the "
				    "space file's directory",
				    sp->template_path,
				    errno ? strerror(errno) : "not a regular file");
		fclose(f);
		{
			const char *base = strrchr(sp->template_path, '/');
			char *dot;
			base = base ? base + 1 : sp->template_path;
			if (strlen(base) >= sizeof(sp->template_name))
				return fail(L, line_of(v), key,
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
		return name_value(L, v, key, 1, sp->kernel);
	if (!strcmp(name, "combine_kernel"))
		return name_value(L, v, key, 1, sp->combine_kernel);
	/* shared_memory */
	if (!(s = scalar(L, v, key, "static or dynamic")))
		return -1;
	if (!strcmp(s, "static"))
		sp->smem_kind = FT_SMEM_STATIC;
	else if (!strcmp(s, "dynamic"))
		sp->smem_kind = FT_SMEM_DYNAMIC;
	else
		return fail(L, line_of(v), key,
			    "'%s' is neither static (__shared__ arrays) nor dynamic (extern "
			    "__shared__)",
			    s);
	return 0;
}

/* The values of one parameter: a list of integers or a range. */
static int values_list(struct loader *L, yaml_node_t *v, const char *key, struct ft_param *p)
{
	yaml_node_item_t *it;
	int n;

	if (v->type != YAML_SEQUENCE_NODE)
		return fail(L, line_of(v), key, "expected a list of integers, found %s",
			    type_name(v));
	n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n == 0)
		return fail(L, line_of(v), key, "empty value list: give at least one value");
	if (n > FT_MAX_VALUES)
		return fail(L, line_of(v), key, "too many values (%d): at most %d per parameter", n,
			    FT_MAX_VALUES);
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = node(L, *it);
		long long x;

		if (!item || integer(L, item, key, &x))
			return item ? -1 : fail(L, line_of(v), key, "broken YAML node");
		for (int j = 0; j < p->nvalues; j++)
			if (p->values[j] == x)
				return fail(L, line_of(item), key,
					    "value %lld is listed twice: list each value once", x);
		p->values[p->nvalues++] = x;
	}
	return 0;
}

static int range(struct loader *L, yaml_node_t *v, const char *key, struct ft_param *p)
{
	long long r[3] = { 0, 0, 1 };
	unsigned long long count;
	int n;

	if (v->type != YAML_SEQUENCE_NODE)
		return fail(L, line_of(v), key, "expected [from, to] or [from, to, step], found %s",
			    type_name(v));
	n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n != 2 && n != 3)
		return fail(L, line_of(v), key,
			    "has %d items: write [from, to] or [from, to, step] (inclusive)", n);
	for (int i = 0; i < n; i++) {
		yaml_node_t *item = node(L, v->data.sequence.items.start[i]);
		if (!item || integer(L, item, key, &r[i]))
			return item ? -1 : fail(L, line_of(v), key, "broken YAML node");
	}
	if (r[2] < 1)
		return fail(L, line_of(v), key, "step %lld must be 1 or more", r[2]);
	if (r[1] < r[0])
		return fail(L, line_of(v), key, "from %lld is above to %lld: write [from, to]", r[0],
			    r[1]);
	count = ((unsigned long long)r[1] - (unsigned long long)r[0]) / (unsigned long long)r[2] + 1;
	if (count > FT_MAX_VALUES)
		return fail(L, line_of(v), key, "too many values (%llu): at most %d per parameter",
			    count, FT_MAX_VALUES);
	for (unsigned long long i = 0; i < count; i++)
		p->values[p->nvalues++] = r[0] + (long long)i * r[2];
	return 0;
}

struct param_form {
	yaml_node_t *values, *range;
	struct ft_param *p;
};

static int param_pair(struct loader *L, const char *key, yaml_node_t *k, yaml_node_t *v,
		      void *arg)
{
	struct param_form *f = arg;
	const char *name = (const char *)k->data.scalar.value, *s;

	if (!strcmp(name, "values") || !strcmp(name, "range")) {
		if (f->values || f->range)
			return fail(L, line_of(k), key,
				    "both values and range: give only one of them");
		if (!strcmp(name, "values")) {
			f->values = v;
			return values_list(L, v, key, f->p);
		}
		f->range = v;
		return range(L, v, key, f->p);
	}
	/* kind */
	if (!(s = scalar(L, v, key, "compile or launch")))
		return -1;
	if (!strcmp(s, "compile"))
		f->p->kind = FT_PARAM_COMPILE;
	else if (!strcmp(s, "launch"))
		f->p->kind = FT_PARAM_LAUNCH;
	else
		return fail(L, line_of(v), key,
			    "'%s' is neither compile (a -D macro) nor launch (a field of the "
			    "kernel's params)",
			    s);
	return 0;
}

static int parameters_pair(struct loader *L, const char *key, yaml_node_t *k, yaml_node_t *v,
			   void *arg)
{
	static const char *const form_keys[] = { "values", "range", "kind" };
	struct ft_space *sp = L->sp;
	const char *name = (const char *)k->data.scalar.value, *why;
	struct ft_param *p;
	struct param_form f = { 0 };

	/* parameters is a mapping of names: mapping() left them to us */
	if ((why = ft_expr_name_problem(name)))
		return fail(L, line_of(k), key, "parameter name '%s' cannot be used: %s", name, why);
	for (int i = 0; i < sp->nparams; i++)
		if (!strcasecmp(sp->params[i].name, name))
			return fail(L, line_of(k), key,
				    "duplicate parameter: '%s' was defined at line %d (names ignore "
				    "case in expressions): give each parameter once",
				    sp->params[i].name, sp->params[i].line);
	if (sp->nparams == FT_MAX_PARAMS)
		return fail(L, line_of(k), key, "too many parameters: at most %d", FT_MAX_PARAMS);
	p = &sp->params[sp->nparams];
	memset(p, 0, sizeof(*p));
	strcpy(p->name, name);
	p->kind = FT_PARAM_COMPILE;
	p->line = line_of(k);
	if (v->type == YAML_SEQUENCE_NODE) {
		if (values_list(L, v, key, p))
			return -1;
	} else if (v->type == YAML_MAPPING_NODE) {
		f.p = p;
		if (mapping(L, v, key, form_keys, 3, param_pair, &f))
			return -1;
		if (!f.values && !f.range)
			return fail(L, line_of(k), key,
				    "missing values: give 'values: [..]' or 'range: [from, to]'");
		/* the kernel ABI (fatune_abi.h) has one launch-time field, num_splits:
		 * any other launch parameter would reach the kernel nowhere */
		if (p->kind == FT_PARAM_LAUNCH && strcmp(p->name, "NUM_SPLITS"))
			return fail(L, line_of(k), key,
				    "only NUM_SPLITS can be kind: launch (it fills num_splits of "
				    "struct fatune_attn_params): make '%s' kind: compile",
				    p->name);
	} else {
		return fail(L, line_of(v), key,
			    "expected a list of integers or a mapping with values/range and kind, "
			    "found %s",
			    type_name(v));
	}
	sp->nparams++;
	return 0;
}

static int constraints_pair(struct loader *L, const char *key, yaml_node_t *k, yaml_node_t *v,
			    void *arg)
{
	struct ft_space *sp = L->sp;
	struct ft_constraint *c;
	const char *name = (const char *)k->data.scalar.value;

	if (!*name || strlen(name) >= FT_NAME_MAX)
		return fail(L, line_of(k), key, "a constraint name has 1 to %d characters",
			    FT_NAME_MAX - 1);
	for (const char *p = name; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
			return fail(L, line_of(k), key,
				    "constraint name '%s' may only hold letters, digits, '_' and '-'",
				    name);
	for (int i = 0; i < sp->nconstraints; i++)
		if (!strcmp(sp->constraints[i].name, name))
			return fail(L, line_of(k), key,
				    "duplicate constraint (first at line %d): give each name once",
				    sp->constraints[i].expr.line);
	if (sp->nconstraints == FT_MAX_CONSTRAINTS)
		return fail(L, line_of(k), key, "too many constraints: at most %d",
			    FT_MAX_CONSTRAINTS);
	c = &sp->constraints[sp->nconstraints];
	strcpy(c->name, name);
	if (expression(L, v, key, &c->expr))
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
static int grid(struct loader *L, yaml_node_t *v, const char *key, struct ft_expr_src *g)
{
	yaml_node_item_t *it = v->data.sequence.items.start;
	int n = 0;

	if (v->type != YAML_SEQUENCE_NODE)
		return fail(L, line_of(v), key, "expected a list of 3 expressions [x, y, z], found %s",
			    type_name(v));
	while (it < v->data.sequence.items.top) {
		char ikey[FT_NAME_MAX], text[FT_EXPR_MAX];
		yaml_node_t *first = node(L, *it), *item;
		int depth = 0;
		size_t len = 0;

		snprintf(ikey, sizeof(ikey), "%s[%d]", key, n);
		text[0] = '\0';
		do {
			const char *s;
			if (!(item = node(L, *it)))
				return fail(L, line_of(v), key, "broken YAML node");
			if (!(s = scalar(L, item, ikey, "an expression")))
				return -1;
			len += (size_t)snprintf(text + len, len < sizeof(text) ? sizeof(text) - len : 0,
						"%s%s", len ? ", " : "", s);
			if (len >= sizeof(text))
				return fail(L, line_of(item), ikey,
					    "the expression is longer than %d characters", FT_EXPR_MAX - 1);
			depth += paren_delta(s);
			it++;
		} while (depth > 0 && it < v->data.sequence.items.top);
		if (n == 3)
			return fail(L, line_of(v), key,
				    "has more than 3 items: a grid is exactly 3 expressions [x, y, z]");
		/* a scalar node holding the joined text, so expression() sees one value */
		{
			yaml_node_t joined = *first;
			joined.data.scalar.value = (yaml_char_t *)text;
			joined.data.scalar.length = strlen(text);
			if (expression(L, &joined, ikey, &g[n]))
				return -1;
		}
		n++;
	}
	if (n != 3)
		return fail(L, line_of(v), key,
			    "has %d items: a grid is exactly 3 expressions [x, y, z]", n);
	return 0;
}

static int launch_pair(struct loader *L, const char *key, yaml_node_t *k, yaml_node_t *v,
		       void *arg)
{
	struct ft_space *sp = L->sp;
	const char *name = (const char *)k->data.scalar.value;

	if (!strcmp(name, "threads"))
		return expression(L, v, key, &sp->threads);
	if (!strcmp(name, "grid"))
		return grid(L, v, key, sp->grid);
	if (!strcmp(name, "combine_threads"))
		return expression(L, v, key, &sp->combine_threads);
	return grid(L, v, key, sp->combine_grid);
}

static int top_pair(struct loader *L, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	static const char *const template_keys[] = { "file", "kernel", "combine_kernel",
						      "shared_memory" };
	static const char *const launch_keys[] = { "threads", "grid", "combine_threads",
						   "combine_grid" };
	struct ft_space *sp = L->sp;
	long long version;

	if (!strcmp(key, "fatune_space")) {
		if (integer(L, v, key, &version))
			return -1;
		if (version != 1)
			return fail(L, line_of(v), key,
				    "format version %lld is not supported: this fatune reads version 1",
				    version);
		return 0;
	}
	if (!strcmp(key, "name"))
		return name_value(L, v, key, 0, sp->name);
	if (!strcmp(key, "description"))
		return scalar(L, v, key, "text") ? 0 : -1;
	if (!strcmp(key, "template"))
		return mapping(L, v, key, template_keys, 4, template_pair, NULL);
	if (!strcmp(key, "parameters")) {
		if (v->type == YAML_MAPPING_NODE &&
		    v->data.mapping.pairs.top == v->data.mapping.pairs.start)
			return fail(L, line_of(v), key, "no parameters: give at least one");
		return mapping(L, v, key, NULL, 0, parameters_pair, NULL);
	}
	if (!strcmp(key, "constraints"))
		return mapping(L, v, key, NULL, 0, constraints_pair, NULL);
	if (!strcmp(key, "smem_bytes"))
		return expression(L, v, key, &sp->smem);
	return mapping(L, v, key, launch_keys, 4, launch_pair, NULL);
}

/* ---- the whole file ------------------------------------------------------------- */

/* Checks what no single key can: required keys and the combine pairing. */
static int check_required(struct loader *L, yaml_node_t *root)
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
	struct ft_space *sp = L->sp;
	const struct ft_expr_src *extra[2] = { &sp->combine_threads, &sp->combine_grid[0] };
	const char *extra_key[2] = { "launch.combine_threads", "launch.combine_grid" };
	long long total = 1;
	int lline = 1;

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		int line = line_of(root);
		yaml_node_t *m = need[i].parent ? lookup(L, root, need[i].parent, &line) : root;
		if (!lookup(L, m, need[i].key, NULL))
			return fail(L, line, need[i].full, "missing required key: %s",
				    need[i].what ? need[i].what
						 : "a space needs fatune_space, name, template, "
						   "parameters, smem_bytes and launch");
	}
	lookup(L, root, "launch", &lline);
	for (int i = 0; i < 2; i++) {
		if (sp->combine_kernel[0] && !extra[i]->text[0])
			return fail(L, lline, extra_key[i],
				    "missing: template.combine_kernel is set, so launch needs "
				    "combine_threads and combine_grid");
		if (!sp->combine_kernel[0] && extra[i]->text[0])
			return fail(L, extra[i]->line, extra_key[i],
				    "there is no template.combine_kernel to launch: add one or "
				    "remove this key");
	}
	for (int i = 0; i < sp->nparams; i++) {
		total *= sp->params[i].nvalues;
		if (total > SPACE_TOTAL_MAX)
			return fail(L, sp->params[i].line, "parameters",
				    "the space has more than 2^40 candidates: drop values or "
				    "parameters");
	}
	return 0;
}

/* Reads at most SPACE_FILE_MAX bytes of path into a malloc'd buffer. */
static unsigned char *read_file(const char *path, size_t *len, struct ft_err *err)
{
	unsigned char *buf;
	struct stat st;
	FILE *f = fopen(path, "rb");

	if (!f) {
		ft_error(err, FT_EINPUT, "cannot open space file '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		ft_error(err, FT_EINPUT, "space file '%s' is not a regular file", path);
		fclose(f);
		return NULL;
	}
	buf = malloc(SPACE_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		ft_error(err, FT_EFAIL, "out of memory reading space file '%s'", path);
		return NULL;
	}
	/* read one byte past the limit to tell "exactly 1 MiB" from "more" */
	*len = fread(buf, 1, SPACE_FILE_MAX + 1, f);
	if (ferror(f)) {
		ft_error(err, FT_EINPUT, "cannot read space file '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (*len > SPACE_FILE_MAX) {
		ft_error(err, FT_EINPUT,
			 "space file '%s' is over 1 MiB: a space file is a page of YAML", path);
		goto fail;
	}
	fclose(f);
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

int ft_space_load(struct ft_space *sp, const char *path, struct ft_err *err)
{
	static const char *const top_keys[] = { "fatune_space", "name",	     "description",
						"template",	"parameters", "constraints",
						"smem_bytes",	"launch" };
	struct loader L = { .path = path, .sp = sp, .err = err };
	yaml_parser_t parser;
	yaml_document_t extra;
	yaml_node_t *root;
	unsigned char *buf;
	size_t len = 0;
	int ret = -1, have_doc = 0;

	memset(sp, 0, sizeof(*sp));
	if (strlen(path) >= sizeof(sp->path))
		return ft_error(err, FT_EINPUT, "space file path is longer than %d characters",
				FT_PATH_MAX - 1);
	strcpy(sp->path, path);
	if (!(buf = read_file(path, &len, err)))
		return -1;
	sp->hash = XXH64(buf, len, 0);
	snprintf(sp->hash_hex, sizeof(sp->hash_hex), "%016llx", (unsigned long long)sp->hash);

	if (prescan(&L, buf, len)) {
		free(buf);
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		free(buf);
		return ft_error(err, FT_EFAIL, "cannot initialise libyaml: out of memory");
	}
	yaml_parser_set_input_string(&parser, buf, len);
	if (!yaml_parser_load(&parser, &L.doc)) {
		yaml_fail(&L, &parser, buf, len, TOP);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&L.doc);
	if (!root) {
		fail(&L, 1, TOP, "the file is empty: a space is a mapping that starts with "
				 "'fatune_space: 1' (see search_spaces/README.md)");
		goto out;
	}
	if (root->type != YAML_MAPPING_NODE) {
		fail(&L, line_of(root), TOP,
		     "the file is %s, not a mapping: a space is a mapping that starts with "
		     "'fatune_space: 1'",
		     type_name(root));
		goto out;
	}
	if (!yaml_parser_load(&parser, &extra)) {
		yaml_fail(&L, &parser, buf, len, TOP);
		goto out;
	}
	if (yaml_document_get_root_node(&extra)) {
		int line = (int)extra.start_mark.line + 1;
		yaml_document_delete(&extra);
		fail(&L, line, TOP, "a second YAML document ('---'): a space file holds one");
		goto out;
	}
	yaml_document_delete(&extra);
	if (mapping(&L, root, TOP, top_keys, 8, top_pair, NULL) || check_required(&L, root))
		goto out;
	ret = 0;
out:
	if (have_doc)
		yaml_document_delete(&L.doc);
	yaml_parser_delete(&parser);
	free(buf);
	return ret;
}
