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
 * (derive.c), and computed for every row as an "always" column. One derived
 * from a list of n expressions (a choice) gets a table of its own, in its
 * place among the parameters: the choice's index 0..n-1 (column fatune_cK),
 * and it is written out as CASE fatune_cK WHEN 0 THEN (first) ... END; its
 * guard also rejects a choice equal to an earlier one (no config twice). Each has one
 * guard, before the constraints: its value among the parameter's values
 * (when it lists any). A fixed enumeration (a config given whole) instead
 * gets a one-row table for every parameter, derived ones too, and the guard,
 * after the constraints, checks that the given value is the one the shape
 * derives.
 *
 * When a step fails (a division by zero, an integer overflow), the statement
 * cannot say which expression failed, so the candidate is re-evaluated one
 * expression at a time, in the statement's order, to name the key and line.
 */
#include "space/space.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space/derive.h"
#include "space/expr.h"

/* smem, threads, grid[3], combine_threads, combine_grid[3], combine_pdl,
 * workspace, the compile.defines */
#define MAX_FORMULAS (11 + FT_MAX_SPACE_DEFINES)

/* written-out texts: derived parameters (and their choices' CASE),
 * constraints, derived guards, formulas, and one scratch */
#define MAX_TEXTS (2 * FT_MAX_PARAMS + FT_MAX_CONSTRAINTS + FT_MAX_PARAMS + MAX_FORMULAS + 1)

struct ft_enum {
	struct ft_space sp;		/* a copy: the caller's may go away */
	struct ft_expr *x;
	long long total;		/* size of the cartesian product, 1 when fixed */
	long long next;			/* index of the next candidate (not fixed) */
	int fixed;			/* a one-candidate enumeration */
	long long fixed_values[FT_MAX_PARAMS];
	long long fixed_index;		/* its position in the full enumeration */
	int state;			/* 0 running, 1 done, -1 failed */
	int passing;			/* only candidates whose constraints hold (ft_enum_open_passing) */
	int nformulas;
	int f_combine, f_pdl, f_workspace, f_defines;	/* where those formulas start, -1: absent */
	const struct ft_expr_src *formulas[MAX_FORMULAS];
	const char *formula_text[MAX_FORMULAS];
	int nguards;			/* constraints and one per derived parameter: */
	const char *guard_text[FT_MAX_CONSTRAINTS + FT_MAX_PARAMS];
	int guard_id[FT_MAX_CONSTRAINTS + FT_MAX_PARAMS];	/* as failed_constraint numbers them */
	int nenum;			/* enumerated parameters and choices (a table each,
					 * unless fixed), in parameter order */
	int enum_idx[FT_MAX_PARAMS];	/* their indices in sp.params */
	int choice_of[FT_MAX_PARAMS];	/* a choice's derived position (sp.derived), by param */
	const char *derived_text[FT_MAX_PARAMS];	/* derived, written out (not fixed) */
	const char *choices_text[FT_MAX_PARAMS];	/* a choice's list, written out */
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

/* Rows of parameter p's table: its values, or its choices. */
static int table_rows(const struct ft_param *p)
{
	return p->derived ? p->nchoices : p->nvalues;
}

/* The positions of candidate index in the enumerated parameters' tables
 * (mixed radix, first parameter most significant). */
static void positions(const struct ft_enum *e, long long index, int *pos)
{
	for (int k = e->nenum - 1; k >= 0; k--) {
		int rows = table_rows(&e->sp.params[e->enum_idx[k]]);
		pos[k] = (int)(index % rows);
		index /= rows;
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

/* printf at out + *n (FT_EXPR_EXPANDED_MAX in all), *n moved on. */
static void put(char *out, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(char *out, size_t *n, const char *fmt, ...)
{
	va_list ap;

	if (*n >= FT_EXPR_EXPANDED_MAX)
		return;
	va_start(ap, fmt);
	*n += (size_t)vsnprintf(out + *n, FT_EXPR_EXPANDED_MAX - *n, fmt, ap);
	va_end(ap);
}

/* A choice written out (choices: its list, each item already expanded):
 * CASE fatune_cK WHEN 0 THEN (first) WHEN 1 THEN (second) ... END. */
static const char *choice_case(struct ft_enum *e, int k, const char *choices, int nchoices)
{
	char *out = e->text[e->ntext++], item[FT_EXPR_EXPANDED_MAX];
	size_t n = 0;

	put(out, &n, "CASE fatune_c%d", k);
	for (int j = 0; j < nchoices; j++) {
		if (ft_derive_choice(choices, j, item, sizeof(item)))
			return NULL;
		put(out, &n, " WHEN %d THEN (%s)", j, item);
	}
	put(out, &n, " END");
	return n < FT_EXPR_EXPANDED_MAX ? out : NULL;
}

/* A derived parameter's guard. Fixed: the given value is the one derived
 * (one of the choices, for a choice). Enumerated: a choice is not one made
 * earlier in its list. Both: the value is one of the parameter's values,
 * when it lists any. "1" when there is nothing to check. value: the
 * parameter's value (its name when fixed, else its written-out text);
 * choices: its list, expanded. */
static const char *derived_guard(struct ft_enum *e, int k, const char *value, const char *choices)
{
	const struct ft_param *p = &e->sp.params[e->sp.derived[k]];
	char *out = e->text[e->ntext++], item[FT_EXPR_EXPANDED_MAX];
	size_t n = 0;

	put(out, &n, "1");
	if (e->fixed)
		put(out, &n, p->nchoices ? " AND %s IN (%s)" : " AND %s == (%s)", p->name, p->derive.text);
	if (!e->fixed && p->nchoices > 1) {
		put(out, &n, " AND CASE fatune_c%d", k);
		for (int j = 1; j < p->nchoices; j++) {
			if (ft_derive_choice(choices, j, item, sizeof(item)))
				return NULL;
			put(out, &n, " WHEN %d THEN (%s) NOT IN (", j, item);
			for (int i = 0; i < j; i++) {
				if (ft_derive_choice(choices, i, item, sizeof(item)))
					return NULL;
				put(out, &n, "%s(%s)", i ? ", " : "", item);
			}
			put(out, &n, ")");
		}
		put(out, &n, " ELSE 1 END");
	}
	if (p->nvalues) {
		put(out, &n, " AND (%s) IN (", value);
		for (int j = 0; j < p->nvalues; j++)
			put(out, &n, "%s%lld", j ? ", " : "", p->values[j]);
		put(out, &n, ")");
	}
	return n + 1 < FT_EXPR_EXPANDED_MAX ? out : NULL;
}

/* The context row (FT_CONTEXT_NAMES): the shape, then the arch's limits. */
static void context_row(const struct ft_shape *shape, const struct ft_arch *arch, long long *row)
{
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

	memcpy(row, ctx, sizeof(ctx));
}

static const char *const context_names[FT_CONTEXT_COUNT] = { FT_CONTEXT_NAMES };

static int load_tables(struct ft_enum *e, const struct ft_shape *shape,
		       const struct ft_arch *arch, struct ft_err *err)
{
	long long ctx[FT_CONTEXT_COUNT];
	struct ft_space *sp = &e->sp;

	context_row(shape, arch, ctx);
	if (ft_expr_add_table(e->x, context_names, FT_CONTEXT_COUNT, ctx, 1, err))
		return -1;
	for (int i = 0; i < sp->nparams; i++) {
		const char *name = sp->params[i].name;
		const long long *vals = e->fixed ? &e->fixed_values[i] : sp->params[i].values;
		if (sp->params[i].derived && !e->fixed) {
			/* written out where it is used; a choice's index has a table */
			char cname[FT_NAME_MAX];
			const char *cn = cname;
			long long idx[FT_MAX_VALUES];
			if (!sp->params[i].nchoices)
				continue;
			snprintf(cname, sizeof(cname), "fatune_c%d", e->choice_of[i]);
			for (int j = 0; j < sp->params[i].nchoices; j++)
				idx[j] = j;
			if (ft_expr_add_table(e->x, &cn, 1, idx, sp->params[i].nchoices, err))
				return -1;
			continue;
		}
		if (ft_expr_add_table(e->x, &name, 1, vals, e->fixed ? 1 : sp->params[i].nvalues,
				      err))
			return -1;
	}
	return ft_expr_lock(e->x, err);
}

static int open_enum(struct ft_enum **out, const struct ft_space *sp, const struct ft_shape *shape,
		     const struct ft_arch *arch, const long long *fixed, int passing, struct ft_err *err)
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
	e->passing = passing;

	e->total = 1;
	for (int k = 0; k < sp->nderived; k++)
		e->choice_of[sp->derived[k]] = k;
	for (int i = 0; i < sp->nparams; i++) {
		if (sp->params[i].derived && !sp->params[i].nchoices)
			continue;
		e->enum_idx[e->nenum++] = i;
		e->total *= table_rows(&sp->params[i]);	/* bounded at load: <= 2^40 */
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
		if (!(e->derived_text[k] = e->choices_text[k] = expand(e, p->derive.text, k)) ||
		    (p->nchoices && !e->fixed &&
		     !(e->derived_text[k] = choice_case(e, k, e->choices_text[k], p->nchoices)))) {
			expr_fail(sp, &p->derive, "written out with the derived parameters it uses, it is "
				  "too long: simplify it", err);
			goto fail;
		}
		for (int j = 0; j < (p->nchoices ? p->nchoices : 1); j++) {
			const char *one = e->derived_text[k];
			if (p->nchoices) {	/* each choice on its own */
				one = e->text[e->ntext];
				ft_derive_choice(e->choices_text[k], j, e->text[e->ntext], FT_EXPR_EXPANDED_MAX);
			}
			if (ft_expr_check_as(e->x, one, p->derive.text, &why)) {
				expr_fail(sp, &p->derive, why.msg, err);
				goto fail;
			}
		}
	}
	/* the derived parameters' guards first when enumerating (a candidate
	 * with a value its parameter does not take is rejected for that, not by
	 * a constraint reading the value), last for a fixed config (a constraint
	 * of the space says best why it cannot run there) */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == (e->fixed ? 1 : 0)) {
			for (int k = 0; k < sp->nderived; k++) {
				const struct ft_param *p = &sp->params[sp->derived[k]];
				const char *g = derived_guard(e, k, e->fixed ? p->name : e->derived_text[k],
							      e->choices_text[k]);
				if (!g || ft_expr_check_as(e->x, g, p->derive.text, &why)) {
					expr_fail(sp, &p->derive, g ? why.msg : "its guard is too long: list fewer values",
						  err);
					goto fail;
				}
				e->guard_id[e->nguards] = sp->nconstraints + k;
				e->guard_text[e->nguards++] = g;
			}
			continue;
		}
		for (int i = 0; i < sp->nconstraints; i++) {
			const char *g = expand(e, sp->constraints[i].expr.text, sp->nderived);
			if (!g) {
				expr_fail(sp, &sp->constraints[i].expr, "written out with the derived parameters "
					  "it uses, it is too long: simplify it", err);
				goto fail;
			}
			if (ft_expr_check_as(e->x, g, sp->constraints[i].expr.text, &why)) {
				expr_fail(sp, &sp->constraints[i].expr, why.msg, err);
				goto fail;
			}
			e->guard_id[e->nguards] = i;
			e->guard_text[e->nguards++] = g;
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
			      e->formula_text, e->nformulas, passing ? FT_EXPR_PASSING : 0, &why)) {
		ft_error(err, why.status, "%s: %s", sp->path, why.msg);
		goto fail;
	}
	*out = e;
	return 0;
fail:
	ft_enum_close(e);
	return -1;
}

int ft_enum_open(struct ft_enum **out, const struct ft_space *sp, const struct ft_shape *shape,
		 const struct ft_arch *arch, const long long *fixed, struct ft_err *err)
{
	return open_enum(out, sp, shape, arch, fixed, 0, err);
}

int ft_enum_open_passing(struct ft_enum **out, const struct ft_space *sp, const struct ft_shape *shape,
			 const struct ft_arch *arch, struct ft_err *err)
{
	return open_enum(out, sp, shape, arch, NULL, 1, err);
}

/* A passing row's place in the whole enumeration, from its table columns
 * (mixed radix, as positions()): a parameter's value is listed once, a
 * choice's column is its index. */
static long long row_index(const struct ft_enum *e, const long long *cols)
{
	long long index = 0;

	for (int k = 0; k < e->nenum; k++) {
		const struct ft_param *p = &e->sp.params[e->enum_idx[k]];
		long long v = cols[COL_PARAMS + k];
		index = index * table_rows(p) + (p->derived ? v : value_pos(p, v));
	}
	return index;
}

/* A passing enumeration's step failed in a row it skips, which it cannot
 * name: the whole enumeration again, up to the row that fails, gives its
 * index. -1 with err when the failure does not come back (it always should:
 * the same expressions on the same tables). */
static long long failing_index(struct ft_enum *e, struct ft_err *err)
{
	long long cols[COL_PARAMS + 2 * FT_MAX_PARAMS + 1 + MAX_FORMULAS];
	int ncols = COL_PARAMS + e->nenum + e->sp.nderived + 1 + e->nformulas, rc;
	struct ft_err step;

	if (ft_expr_query_all(e->x, e->derived_text, e->sp.nderived, e->guard_text, e->nguards,
			      e->formula_text, e->nformulas, 0, err))
		return -1;
	for (long long index = 0;; index++) {
		if ((rc = ft_expr_step(e->x, cols, ncols, &step)) < 0)
			return index;
		if (rc == 0)
			return ft_error(err, FT_EFAIL, "%s: a failed step did not fail again", e->sp.path);
	}
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
			if (!sp->params[e->enum_idx[k]].derived)
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
			int id = e->guard_id[i];
			return expr_fail(sp, id < sp->nconstraints ? &sp->constraints[id].expr
								    : &sp->params[sp->derived[id - sp->nconstraints]].derive,
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
		if (e->passing && (index = failing_index(e, err)) < 0)
			return -1;
		return diagnose(e, index, &step, err);
	}
	memset(c, 0, sizeof(*c));
	if (e->passing)
		index = row_index(e, cols);
	c->index = index;
	e->next = e->fixed ? e->next + 1 : index + 1;
	if (e->fixed) {
		for (int i = 0; i < e->sp.nparams; i++)
			c->values[i] = cols[COL_PARAMS + i];
	} else {
		for (int k = 0; k < e->nenum; k++)
			if (!e->sp.params[e->enum_idx[k]].derived)	/* not a choice's index */
				c->values[e->enum_idx[k]] = cols[COL_PARAMS + k];
		for (int k = 0; k < nalways; k++)
			c->values[e->sp.derived[k]] = cols[COL_PARAMS + ntables + k];
	}
	c->failed_constraint = (int)cols[COL_PARAMS + ntables + nalways];
	if (c->failed_constraint >= 0)
		c->failed_constraint = e->guard_id[c->failed_constraint];
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

long long ft_enum_reached(const struct ft_enum *e)
{
	return e->state > 0 ? e->total : e->next;
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
		if (!sp->params[i].derived || sp->params[i].nchoices)
			total *= table_rows(&sp->params[i]);	/* bounded at load: <= 2^40 */
	return total;
}

int ft_space_applies(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_arch *arch,
		     struct ft_err *err)
{
	struct ft_expr *x = NULL;
	long long ctx[FT_CONTEXT_COUNT], v = 0;
	struct ft_err why = { 0 };
	int rc;

	if (!sp->applies_to.text[0])
		return 1;
	context_row(shape, arch, ctx);
	rc = ft_expr_open(&x, err);
	if (!rc && (ft_expr_add_table(x, context_names, FT_CONTEXT_COUNT, ctx, 1, err) || ft_expr_lock(x, err)))
		rc = -1;
	if (!rc && ft_expr_eval(x, sp->applies_to.text, NULL, &v, &why)) {
		if (why.status == FT_EINPUT)
			expr_fail(sp, &sp->applies_to, why.msg, err);
		else if (err)
			*err = why;
		rc = -1;
	}
	ft_expr_close(x);
	return rc ? -1 : v != 0;
}
