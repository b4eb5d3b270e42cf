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
 * When a step fails (a division by zero, an integer overflow), the statement
 * cannot say which expression failed, so the candidate is re-evaluated one
 * expression at a time, in the statement's order, to name the key and line.
 */
#include "space/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space/expr.h"

/* smem, threads, grid[3], combine_threads, combine_grid[3], combine_pdl,
 * workspace, the compile.defines */
#define MAX_FORMULAS (11 + FT_MAX_SPACE_DEFINES)

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
	const char *guard_text[FT_MAX_CONSTRAINTS];
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

/* The per-parameter positions of candidate index (mixed radix, first parameter
 * most significant). */
static void positions(const struct ft_space *sp, long long index, int *pos)
{
	for (int i = sp->nparams - 1; i >= 0; i--) {
		pos[i] = (int)(index % sp->params[i].nvalues);
		index /= sp->params[i].nvalues;
	}
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
	memcpy(&e->sp, sp, sizeof(*sp));
	sp = &e->sp;

	e->total = 1;
	for (int i = 0; i < sp->nparams; i++)
		e->total *= sp->params[i].nvalues;	/* bounded at load: <= 2^40 */
	if (fixed) {
		e->fixed = 1;
		e->fixed_index = 0;
		for (int i = 0; i < sp->nparams; i++) {
			int pos = value_pos(&sp->params[i], fixed[i]);
			if (pos < 0) {
				ft_error(err, FT_EINPUT,
					 "%s:%d: key 'parameters.%s': %lld is not one of its values: "
					 "pick a config from the space",
					 sp->path, sp->params[i].line, sp->params[i].name, fixed[i]);
				goto fail;
			}
			e->fixed_values[i] = fixed[i];
			e->fixed_index = e->fixed_index * sp->params[i].nvalues + pos;
		}
		e->total = 1;
	}

	if (ft_expr_open(&e->x, err) || load_tables(e, shape, arch, err))
		goto fail;

	/* each expression on its own first: the error names its key and line */
	for (int i = 0; i < sp->nconstraints; i++) {
		e->guard_text[i] = sp->constraints[i].expr.text;
		if (ft_expr_check(e->x, e->guard_text[i], &why)) {
			expr_fail(sp, &sp->constraints[i].expr, why.msg, err);
			goto fail;
		}
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
		e->formula_text[i] = e->formulas[i]->text;
		if (ft_expr_check(e->x, e->formula_text[i], &why)) {
			expr_fail(sp, e->formulas[i], why.msg, err);
			goto fail;
		}
	}
	if (ft_expr_query(e->x, e->guard_text, sp->nconstraints, e->formula_text, e->nformulas,
			  &why)) {
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
		positions(sp, index, rowsel + 1);
		for (int i = 0; i < sp->nparams; i++)
			values[i] = sp->params[i].values[rowsel[i + 1]];
	}
	ft_config_format(sp, values, config, sizeof(config));
	for (int i = 0; i < sp->nconstraints && !failed; i++) {
		if (ft_expr_eval(e->x, e->guard_text[i], rowsel, &v, &eval)) {
			snprintf(why, sizeof(why), "%s, for candidate %lld (%s)", eval.msg, index,
				 config);
			return expr_fail(sp, &sp->constraints[i].expr, why, err);
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
	long long cols[COL_PARAMS + FT_MAX_PARAMS + 1 + MAX_FORMULAS];
	int ncols = COL_PARAMS + e->sp.nparams + 1 + e->nformulas, rc;
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
	for (int i = 0; i < e->sp.nparams; i++)
		c->values[i] = cols[COL_PARAMS + i];
	c->failed_constraint = (int)cols[COL_PARAMS + e->sp.nparams];
	f = &cols[COL_PARAMS + e->sp.nparams + 1];
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
	free(e);
}

long long ft_space_candidates(const struct ft_space *sp, const struct ft_shape *shape,
			      const struct ft_arch *arch)
{
	long long total = 1;

	(void)shape;
	(void)arch;
	for (int i = 0; i < sp->nparams; i++)
		total *= sp->params[i].nvalues;	/* bounded at load: <= 2^40 */
	return total;
}
