/* derive.c - derived parameters: resolving a space's `derive:` entries, writing them out.
 *
 * The names an expression reads come from ft_expr_each_name (identifiers that
 * are neither SQL keywords nor function calls), so the check at load and the
 * rewrite at enumeration agree on what a name is. Names compare without case,
 * as SQL compares them.
 */
#include "space/derive.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/ident.h"
#include "space/expr.h"

/* The derived position (index into sp->derived) of parameter name[0..len), or -1. */
static int derived_pos(const struct ft_space *sp, const char *name, size_t len)
{
	for (int k = 0; k < sp->nderived; k++) {
		const char *p = sp->params[sp->derived[k]].name;
		if (strlen(p) == len && !strncasecmp(p, name, len))
			return k;
	}
	return -1;
}

struct name_check {
	struct ft_yaml *y;
	const struct ft_space *sp;
	int self;		/* derived position of the entry being checked */
	int line;
	const char *key;
};

static int check_name(const char *name, size_t len, void *arg)
{
	static const char *const context[FT_CONTEXT_COUNT] = { FT_CONTEXT_NAMES };
	struct name_check *c = arg;
	int k = derived_pos(c->sp, name, len);

	if (k >= c->self)
		return ft_yaml_fail(c->y, c->line, c->key,
				    "'%.*s' is derived %s: a derived parameter may use only the shape, "
				    "enumerated parameters and parameters derived before it (a cycle "
				    "otherwise): reorder derive or compute it from other names",
				    (int)len, name, k == c->self ? "by this very entry" : "after this entry");
	for (int i = 0; i < c->sp->nparams; i++)
		if (strlen(c->sp->params[i].name) == len && !strncasecmp(c->sp->params[i].name, name, len))
			return 0;
	for (int i = 0; i < FT_CONTEXT_COUNT; i++)
		if (strlen(context[i]) == len && !strncasecmp(context[i], name, len))
			return 0;
	return ft_yaml_fail(c->y, c->line, c->key,
			    "unknown name '%.*s': use a parameter, a derived parameter defined above, the "
			    "shape (B H S D S_KV H_KV CAUSAL DTYPE DTYPE_BYTES LAYOUT) or an arch limit "
			    "(SMEM_* REGS_PER_SM THREADS_PER_* CC)",
			    (int)len, name);
}

int ft_derive_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	struct ft_derive_pending *pd = arg;
	const char *name = (const char *)k->data.scalar.value, *why;

	if ((why = ft_expr_name_problem(name)) || (why = ft_ident_problem(name)))
		return ft_yaml_fail(y, ft_yaml_line(k), key, "derived parameter name '%s' cannot be used: %s",
				    name, why);
	for (int i = 0; i < pd->n; i++)
		if (!strcasecmp(pd->names[i], name))
			return ft_yaml_fail(y, ft_yaml_line(k), key,
					    "'%s' is derived twice (names ignore case in expressions): derive "
					    "each parameter once",
					    name);
	if (pd->n == FT_MAX_PARAMS)
		return ft_yaml_fail(y, ft_yaml_line(k), key, "too many derived parameters: at most %d",
				    FT_MAX_PARAMS);
	if (v->type == YAML_SEQUENCE_NODE) {
		/* a choice: the list's items joined back by ", " (a comma inside an
		 * item's parentheses split it; joining restores it, see grid()) */
		char text[FT_EXPR_MAX];
		size_t len = 0;
		yaml_node_t joined;

		if (v->data.sequence.items.top == v->data.sequence.items.start)
			return ft_yaml_fail(y, ft_yaml_line(v), key, "an empty list: give the expressions to choose from");
		for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
			yaml_node_t *item = ft_yaml_node(y, *it);
			const char *t;
			if (!item)
				return ft_yaml_fail(y, ft_yaml_line(v), key, "broken YAML node");
			if (!(t = ft_yaml_scalar(y, item, key, "an expression")))
				return -1;
			len += (size_t)snprintf(text + len, len < sizeof(text) ? sizeof(text) - len : 0, "%s%s",
						len ? ", " : "", t);
			if (len >= sizeof(text))
				return ft_yaml_fail(y, ft_yaml_line(item), key, "the list is longer than %d characters",
						    FT_EXPR_MAX - 1);
		}
		joined = *ft_yaml_node(y, *v->data.sequence.items.start);
		joined.data.scalar.value = (yaml_char_t *)text;
		joined.data.scalar.length = strlen(text);
		if (ft_space_yaml_expression(y, &joined, key, &pd->expr[pd->n]))
			return -1;
		pd->expr[pd->n].line = ft_yaml_line(k);
		pd->nchoices[pd->n] = ft_derive_nchoices(text);
		if (pd->nchoices[pd->n] > FT_MAX_VALUES)
			return ft_yaml_fail(y, ft_yaml_line(v), key, "%d expressions: at most %d", pd->nchoices[pd->n],
					    FT_MAX_VALUES);
	} else if (ft_space_yaml_expression(y, v, key, &pd->expr[pd->n])) {
		return -1;
	}
	snprintf(pd->names[pd->n], sizeof(pd->names[pd->n]), "%s", name);
	pd->n++;
	return 0;
}

int ft_derive_resolve(struct ft_yaml *y, struct ft_space *sp, const struct ft_derive_pending *pd)
{
	for (int d = 0; d < pd->n; d++) {
		const char *name = pd->names[d];
		const struct ft_expr_src *e = &pd->expr[d];
		int i = ft_space_param(sp, name);

		if (i < 0) {
			for (int j = 0; j < sp->nparams; j++)
				if (!strcasecmp(sp->params[j].name, name))
					return ft_yaml_fail(y, e->line, e->key,
							    "'%s' differs from parameter '%s' (line %d) only in "
							    "case: write it as the parameter is written",
							    name, sp->params[j].name, sp->params[j].line);
			if (sp->nparams == FT_MAX_PARAMS)
				return ft_yaml_fail(y, e->line, e->key,
						    "too many parameters with the derived ones: at most %d",
						    FT_MAX_PARAMS);
			i = sp->nparams++;
			memset(&sp->params[i], 0, sizeof(sp->params[i]));
			snprintf(sp->params[i].name, sizeof(sp->params[i].name), "%s", name);
			sp->params[i].kind = FT_PARAM_COMPILE;
			sp->params[i].line = e->line;
		}
		sp->params[i].derived = 1;
		sp->params[i].derive = *e;
		sp->params[i].nchoices = pd->nchoices[d];
		sp->derived[sp->nderived++] = i;
	}
	for (int k = 0; k < sp->nderived; k++) {
		const struct ft_param *p = &sp->params[sp->derived[k]];
		struct name_check c = { y, sp, k, p->derive.line, p->derive.key };

		if (ft_expr_each_name(p->derive.text, check_name, &c))
			return -1;
	}
	return 0;
}

int ft_derive_expand(const struct ft_space *sp, const char *const *expanded, int nexpanded, const char *text,
		     char *out, size_t size)
{
	size_t n = 0;
	const char *p = text;

	/* the same token rules as ft_expr_each_name: numbers (0x1F) are copied whole */
	while (*p) {
		const char *start = p;
		int k = -1;

		if (isalnum((unsigned char)*p) || *p == '_') {
			int digit = isdigit((unsigned char)*p);
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			if (!digit)
				k = derived_pos(sp, start, (size_t)(p - start));
		} else {
			p++;
		}
		if (k >= 0 && k < nexpanded) {
			const char *q = p;
			while (isspace((unsigned char)*q))
				q++;
			if (*q != '(') {	/* a name, not a call of a function so named */
				size_t m = strlen(expanded[k]);
				if (n + m + 3 > size)
					return -1;
				out[n++] = '(';
				memcpy(out + n, expanded[k], m);
				n += m;
				out[n++] = ')';
				continue;
			}
		}
		if (n + (size_t)(p - start) + 1 > size)
			return -1;
		memcpy(out + n, start, (size_t)(p - start));
		n += (size_t)(p - start);
	}
	out[n] = '\0';
	return 0;
}

int ft_derive_choice(const char *text, int i, char *out, size_t size)
{
	const char *start = text, *p;
	int depth = 0, item = 0;

	for (p = text;; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if (*p == '\0' || (*p == ',' && depth == 0)) {
			if (item == i) {
				while (isspace((unsigned char)*start))
					start++;
				if ((size_t)(p - start) + 1 > size)
					return -1;
				memcpy(out, start, (size_t)(p - start));
				out[p - start] = '\0';
				return 0;
			}
			if (!*p)
				return -1;
			item++;
			start = p + 1;
		}
	}
}

int ft_derive_nchoices(const char *text)
{
	int depth = 0, n = 1;

	for (const char *p = text; *p; p++) {
		depth += (*p == '(') - (*p == ')');
		n += *p == ',' && depth == 0;
	}
	return n;
}
