/* enumerate.c - a space's candidates, one at a time, with their constraints and formulas.
 *
 * ft_enum_open loads a fresh expression engine (expr.c) with one table per
 * parameter and a one-row context table (the shape and the arch's limits),
 * compiles every expression on its own (so a bad one is reported with its own
 * file, line and key), then prepares one statement over the cross join.
 * ft_enum_next steps it: SQLite computes a row only when asked, so opening a
 * space of 10^10 candidates costs what opening one of 10 does, and the order
 * is the cartesian product with the first parameter slowest.
 *
 * Derived parameters (derive:) get no table: each is written out, in
 * parentheses, wherever a later derive, a constraint or a formula names it
 * (derive.c), and computed for every row as an "always" column. Each has one
 * guard after the constraints: its value among the parameter's values (when
 * it lists any). A fixed enumeration (a config given whole) instead gets a
 * one-row table for every parameter, derived ones too, and the guard checks
 * that the given value is the one the shape derives.
 *
 * When a step fails (a division by zero, an integer overflow), the statement
 * cannot say which expression failed, so the candidate is re-evaluated one
 * expression at a time, in the statement's order, to name the key and line.
 */
#include "space/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space/derive.h"
#include "space/expr.h"

/* smem, threads, grid[3], combine_threads, combine_grid[3], combine_pdl,
 * workspace, the compile.defines */
#define MAX_FORMULAS (11 + FT_MAX_SPACE_DEFINES)

/* written-out texts: derived parameters, constraints, derived guards, formulas */
#define MAX_TEXTS (FT_MAX_PARAMS + FT_MAX_CONSTRAINTS + FT_MAX_PARAMS + MAX_FORMULAS)

struct ft_enum {
	struct ft_space sp;		/* a copy: the caller's may go away */
	struct ft_expr *x;
	long long total;		/* size of the cartesian product, 1 when fixed */
	long long next;			/* index of the next candidate (not fixed) */
	int fixed;			/* a one-candidate enumeration */
	long long fixed_values[FT_MAX_PARAMS];
	long long fixed_index;		/* its position in the full enumeration */
	int state;			/* 0 running, 1 done, -1 failed */
	int nformulas;
	int f_combine, f_pdl, f_workspace, f_defines;	/* where those formulas start, -1: absent */
	const struct ft_expr_src *formulas[MAX_FORMULAS];
	const char *formula_text[MAX_FORMULAS];
	int nguards;			/* constraints, then one per derived parameter */
	const char *guard_text[FT_MAX_CONSTRAINTS + FT_MAX_PARAMS];
	int nenum;			/* enumerated parameters (a table each, unless fixed) */
	int enum_idx[FT_MAX_PARAMS];	/* their indices in sp.params */
	const char *derived_text[FT_MAX_PARAMS];	/* derived, written out (not fixed) */
	/* the written-out texts: derived, constraints, derived guards, formulas */
	char (*text)[FT_EXPR_EXPANDED_MAX];
	int ntext;
};

/* Where the context and the candidate's own columns start in a row. */
#define COL_PARAMS FT_CONTEXT_COUNT

static int expr_fail(const struct ft_space *sp, const struct ft_expr_src *e, const char *why,
		     struct ft_err *err)
{
	return ft_error(err, FT_EINPUT, "%s:%d: key '%s': %s", sp->path, e->line, e->key, why);
}

/* Which value of parameter i is v, or -1. */
static int value_pos(const struct ft_param *p, long long v)
{
	for (int j = 0; j < p->nvalues; j++)
		if (p->values[j] == v)
			return j;
	return -1;
}

/* The positions of candidate index in the enumerated parameters' tables
 * (mixed radix, first parameter most significant). */
static void positions(const struct ft_enum *e, long long index, int *pos)
{
	for (int k = e->nenum - 1; k >= 0; k--) {
		const struct ft_param *p = &e->sp.params[e->enum_idx[k]];
		pos[k] = (int)(index % p->nvalues);
		index /= p->nvalues;
	}
}

/* text written out for the engine (derived names replaced, not when fixed)
 * into the next of e->text; NULL when it does not fit. */
static const char *expand(struct ft_enum *e, const char *text, int nderived)
{
	char *out = e->text[e->ntext];

	if (e->fixed) {
		size_t n = strlen(text);	/* < FT_EXPR_MAX: checked at load */
		memcpy(out, text, n + 1);
	} else if (ft_derive_expand(&e->sp, e->derived_text, nderived, text, out, FT_EXPR_EXPANDED_MAX)) {
		return NULL;
	}
	e->ntext++;
	return out;
}

/* A derived parameter's guard: (fixed) the given value is the one derived;
 * its value among the parameter's values, when it lists any; else "1". */
static const char *derived_guard(struct ft_enum *e, const struct ft_param *p, const char *value)
{
	char *out = e->text[e->ntext++];
	size_t n = 0;

	if (e->fixed)
		n = (size_t)snprintf(out, FT_EXPR_EXPANDED_MAX, "%s == (%s)%s", p->name, p->derive.text,
				     p->nvalues ? " AND " : "");
	if (!p->nvalues) {
		if (!e->fixed)
			snprintf(out, FT_EXPR_EXPANDED_MAX, "1");
		return out;
	}
	n += (size_t)snprintf(out + n, FT_EXPR_EXPANDED_MAX - n, "(%s) IN (", value);
	for (int j = 0; j < p->nvalues && n < FT_EXPR_EXPANDED_MAX; j++)
		n += (size_t)snprintf(out + n, FT_EXPR_EXPANDED_MAX - n, "%s%lld", j ? ", " : "", p->values[j]);
	if (n < FT_EXPR_EXPANDED_MAX)
		snprintf(out + n, FT_EXPR_EXPANDED_MAX - n, ")");
	return n + 1 < FT_EXPR_EXPANDED_MAX ? out : NULL;
}

static int load_tables(struct ft_enum *e, const struct ft_shape *shape,
		       const struct ft_arch *arch, struct ft_err *err)
{
	static const char *const names[FT_CONTEXT_COUNT] = { FT_CONTEXT_NAMES };
	const long long ctx[FT_CONTEXT_COUNT] = {
		shape->b,
		shape->h,
		shape->s,
		shape->d,
		shape->causal ? 1 : 0,
		ft_dtype_size(shape->dtype),
		shape->s_kv ? shape->s_kv : shape->s,
		shape->h_kv ? shape->h_kv : shape->h,
		shape->layout,
		shape->dtype,
		arch->smem_static,
		arch->smem_optin,
		arch->smem_per_sm,
		arch->smem_reserved,
		arch->regs_per_sm,
		arch->threads_per_block,
		arch->threads_per_sm,
		arch->cc,
	};
	struct ft_space *sp = &e->sp;

	if (ft_expr_add_table(e->x, names, FT_CONTEXT_COUNT, ctx, 1, err))
		return -1;
	for (int i = 0; i < sp->nparams; i++) {
		const char *name = sp->params[i].name;
		const long long *vals = e->fixed ? &e->fixed_values[i] : sp->params[i].values;
		if (sp->params[i].derived && !e->fixed)
			continue;	/* written out where it is used */
		if (ft_expr_add_table(e->x, &name, 1, vals, e->fixed ? 1 : sp->params[i].nvalues,
				      err))
			return -1;
	}
	return ft_expr_lock(e->x, err);
}

int ft_enum_open(struct ft_enum **out, const struct ft_space *sp, const struct ft_shape *shape,
		 const struct ft_arch *arch, const long long *fixed, struct ft_err *err)
{
	struct ft_enum *e;
	struct ft_err why;

	*out = NULL;
	if (sp->nparams < 1)
		return ft_error(err, FT_EINPUT, "space '%s' has no parameters", sp->path);
	e = malloc(sizeof(*e));
	if (!e)
		return ft_error(err, FT_EFAIL, "out of memory opening space '%s'", sp->path);
	memset(e, 0, sizeof(*e));
	e->text = malloc((size_t)MAX_TEXTS * sizeof(*e->text));
	if (!e->text) {
		free(e);
		return ft_error(err, FT_EFAIL, "out of memory opening space '%s'", sp->path);
	}
	memcpy(&e->sp, sp, sizeof(*sp));
	sp = &e->sp;

	e->total = 1;
	for (int i = 0; i < sp->nparams; i++) {
		if (sp->params[i].derived)
			continue;
		e->enum_idx[e->nenum++] = i;
		e->total *= sp->params[i].nvalues;	/* bounded at load: <= 2^40 */
	}
	if (fixed) {
		e->fixed = 1;
		e->fixed_index = 0;
		for (int i = 0; i < sp->nparams; i++) {
			int pos = value_pos(&sp->params[i], fixed[i]);
			e->fixed_values[i] = fixed[i];
			if (sp->params[i].derived && (pos >= 0 || !sp->params[i].nvalues))
				continue;	/* its guard checks it */
			if (pos < 0) {
				ft_error(err, FT_EINPUT,
					 "%s:%d: key 'parameters.%s': %lld is not one of its values: "
					 "pick a config from the space",
					 sp->path, sp->params[i].line, sp->params[i].name, fixed[i]);
				goto fail;
			}
			e->fixed_index = e->fixed_index * sp->params[i].nvalues + pos;
		}
		e->total = 1;
	}

	if (ft_expr_open(&e->x, err) || load_tables(e, shape, arch, err))
		goto fail;

	/* each expression on its own first: the error names its key and line;
	 * derived parameters first, each written out with those before it */
	for (int k = 0; k < sp->nderived; k++) {
		const struct ft_param *p = &sp->params[sp->derived[k]];
		if (!(e->derived_text[k] = expand(e, p->derive.text, k))) {
			expr_fail(sp, &p->derive, "written out with the derived parameters it uses, it is "
				  "too long: simplify it", err);
			goto fail;
		}
		if (ft_expr_check_as(e->x, e->derived_text[k], p->derive.text, &why)) {
			expr_fail(sp, &p->derive, why.msg, err);
			goto fail;
		}
	}
	for (int i = 0; i < sp->nconstraints; i++) {
		if (!(e->guard_text[i] = expand(e, sp->constraints[i].expr.text, sp->nderived))) {
			expr_fail(sp, &sp->constraints[i].expr, "written out with the derived parameters "
				  "it uses, it is too long: simplify it", err);
			goto fail;
		}
		if (ft_expr_check_as(e->x, e->guard_text[i], sp->constraints[i].expr.text, &why)) {
			expr_fail(sp, &sp->constraints[i].expr, why.msg, err);
			goto fail;
		}
	}
	e->nguards = sp->nconstraints;
	for (int k = 0; k < sp->nderived; k++) {
		const struct ft_param *p = &sp->params[sp->derived[k]];
		const char *g = derived_guard(e, p, e->fixed ? p->name : e->derived_text[k]);
		if (!g || ft_expr_check_as(e->x, g, p->derive.text, &why)) {
			expr_fail(sp, &p->derive, g ? why.msg : "its guard is too long: list fewer values", err);
			goto fail;
		}
		e->guard_text[e->nguards++] = g;
	}
	e->formulas[e->nformulas++] = &sp->smem;
	e->formulas[e->nformulas++] = &sp->threads;
	for (int i = 0; i < 3; i++)
		e->formulas[e->nformulas++] = &sp->grid[i];
	e->f_combine = e->f_pdl = e->f_workspace = e->f_defines = -1;
	if (sp->combine_threads.text[0]) {
		e->f_combine = e->nformulas;
		e->formulas[e->nformulas++] = &sp->combine_threads;
		for (int i = 0; i < 3; i++)
			e->formulas[e->nformulas++] = &sp->combine_grid[i];
	}
	if (sp->combine_pdl.text[0]) {
		e->f_pdl = e->nformulas;
		e->formulas[e->nformulas++] = &sp->combine_pdl;
	}
	if (sp->workspace.text[0]) {
		e->f_workspace = e->nformulas;
		e->formulas[e->nformulas++] = &sp->workspace;
	}
	if (sp->ndefines) {
		e->f_defines = e->nformulas;
		for (int i = 0; i < sp->ndefines; i++)
			e->formulas[e->nformulas++] = &sp->defines[i];
	}
	for (int i = 0; i < e->nformulas; i++) {
		if (!(e->formula_text[i] = expand(e, e->formulas[i]->text, sp->nderived))) {
			expr_fail(sp, e->formulas[i], "written out with the derived parameters it uses, it "
				  "is too long: simplify it", err);
			goto fail;
		}
		if (ft_expr_check_as(e->x, e->formula_text[i], e->formulas[i]->text, &why)) {
			expr_fail(sp, e->formulas[i], why.msg, err);
			goto fail;
		}
	}
	if (ft_expr_query_all(e->x, e->derived_text, e->fixed ? 0 : sp->nderived, e->guard_text, e->nguards,
			      e->formula_text, e->nformulas, &why)) {
		ft_error(err, why.status, "%s: %s", sp->path, why.msg);
		goto fail;
	}
	*out = e;
	return 0;
fail:
	ft_enum_close(e);
	return -1;
}

/* After a failed step: evaluates the candidate's expressions one by one, in
 * the statement's order, and reports the first that fails. */
static int diagnose(struct ft_enum *e, long long index, const struct ft_err *step,
		    struct ft_err *err)
{
	const struct ft_space *sp = &e->sp;
	int rowsel[1 + FT_MAX_PARAMS] = { 0 };
	long long values[FT_MAX_PARAMS], v;
	char config[FT_CONFIG_MAX], why[1024];
	struct ft_err eval;
	int failed = 0;

	if (e->fixed) {
		memcpy(values, e->fixed_values, sizeof(values));
	} else {
		positions(e, index, rowsel + 1);
		for (int k = 0; k < e->nenum; k++)
			values[e->enum_idx[k]] = sp->params[e->enum_idx[k]].values[rowsel[k + 1]];
		for (int k = 0; k < sp->nderived; k++) {
			const struct ft_param *p = &sp->params[sp->derived[k]];
			if (ft_expr_eval(e->x, e->derived_text[k], rowsel, &v, &eval)) {
				snprintf(why, sizeof(why), "%s, for candidate %lld", eval.msg, index);
				return expr_fail(sp, &p->derive, why, err);
			}
			values[sp->derived[k]] = v;
		}
	}
	ft_config_format(sp, values, config, sizeof(config));
	for (int i = 0; i < e->nguards && !failed; i++) {
		if (ft_expr_eval(e->x, e->guard_text[i], rowsel, &v, &eval)) {
			snprintf(why, sizeof(why), "%s, for candidate %lld (%s)", eval.msg, index,
				 config);
			return expr_fail(sp, i < sp->nconstraints ? &sp->constraints[i].expr
								   : &sp->params[sp->derived[i - sp->nconstraints]].derive,
					 why, err);
		}
		failed = v == 0;
	}
	for (int i = 0; i < e->nformulas && !failed; i++) {
		if (ft_expr_eval(e->x, e->formula_text[i], rowsel, &v, &eval)) {
			snprintf(why, sizeof(why), "%s, for candidate %lld (%s)", eval.msg, index,
				 config);
			return expr_fail(sp, e->formulas[i], why, err);
		}
	}
	return ft_error(err, FT_EINPUT, "%s: evaluating candidate %lld (%s): %s", sp->path, index,
			config, step->msg);
}

int ft_enum_next(struct ft_enum *e, struct ft_candidate *c, struct ft_err *err)
{
	long long cols[COL_PARAMS + 2 * FT_MAX_PARAMS + 1 + MAX_FORMULAS];
	int nalways = e->fixed ? 0 : e->sp.nderived;
	int ntables = e->fixed ? e->sp.nparams : e->nenum;
	int ncols = COL_PARAMS + ntables + nalways + 1 + e->nformulas, rc;
	long long index = e->fixed ? e->fixed_index : e->next;
	const long long *f;
	struct ft_err step;

	if (e->state > 0)
		return 0;
	if (e->state < 0)
		return ft_error(err, FT_EFAIL, "%s: the enumeration stopped at an earlier error",
				e->sp.path);
	rc = ft_expr_step(e->x, cols, ncols, &step);
	if (rc == 0) {
		e->state = 1;
		return 0;
	}
	if (rc < 0) {
		e->state = -1;
		if (step.status == FT_EFAIL)
			return ft_error(err, FT_EFAIL, "%s: %s", e->sp.path, step.msg);
		return diagnose(e, index, &step, err);
	}
	memset(c, 0, sizeof(*c));
	c->index = index;
	e->next++;
	if (e->fixed) {
		for (int i = 0; i < e->sp.nparams; i++)
			c->values[i] = cols[COL_PARAMS + i];
	} else {
		for (int k = 0; k < e->nenum; k++)
			c->values[e->enum_idx[k]] = cols[COL_PARAMS + k];
		for (int k = 0; k < nalways; k++)
			c->values[e->sp.derived[k]] = cols[COL_PARAMS + ntables + k];
	}
	c->failed_constraint = (int)cols[COL_PARAMS + ntables + nalways];
	f = &cols[COL_PARAMS + ntables + nalways + 1];
	c->smem_bytes = f[0];
	c->threads = f[1];
	for (int i = 0; i < 3; i++)
		c->grid[i] = f[2 + i];
	if (e->f_combine >= 0) {
		c->combine_threads = f[e->f_combine];
		for (int i = 0; i < 3; i++)
			c->combine_grid[i] = f[e->f_combine + 1 + i];
	}
	if (e->f_pdl >= 0)
		c->combine_pdl = f[e->f_pdl] != 0;
	if (e->f_workspace >= 0)
		c->workspace_bytes = f[e->f_workspace];
	for (int i = 0; e->f_defines >= 0 && i < e->sp.ndefines; i++)
		c->define_values[i] = f[e->f_defines + i];
	return 1;
}

long long ft_enum_total(const struct ft_enum *e)
{
	return e->total;
}

void ft_enum_close(struct ft_enum *e)
{
	if (!e)
		return;
	ft_expr_close(e->x);
	free(e->text);
	free(e);
}

long long ft_space_candidates(const struct ft_space *sp, const struct ft_shape *shape,
			      const struct ft_arch *arch)
{
	long long total = 1;

	(void)shape;
	(void)arch;
	for (int i = 0; i < sp->nparams; i++)
		if (!sp->params[i].derived)
			total *= sp->params[i].nvalues;	/* bounded at load: <= 2^40 */
	return total;
}
