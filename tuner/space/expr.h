/* expr.h - the locked-down SQLite engine that evaluates a space's expressions.
 *
 * A space file's constraints and formulas are small integer expressions. They
 * are evaluated by SQLite (an in-memory database, one connection per
 * enumeration): every parameter is a one-column table holding its values, the
 * shape and the arch limits are a one-row table, and the candidates are the
 * rows of one cross join whose result columns are the expressions. SQLite
 * gives us a tested parser, exact 64-bit integers and lazy CASE/iif for free;
 * the price is that SQL can do far more than arithmetic, so the engine is
 * locked down in layers (see expr.c): a character whitelist applied to the
 * text before it is placed in any SQL, an authorizer that allows only reading
 * our own tables and calling the whitelisted functions, tight sqlite3_limit()s,
 * a progress handler that aborts runaway statements, and the defensive
 * connection flags (no extensions, no trusted schema, no ATTACH).
 *
 * Life cycle: ft_expr_open, then the setup calls (ft_expr_add_table), then
 * ft_expr_lock; after the lock only ft_expr_check, ft_expr_query/_step and
 * ft_expr_eval run, and nothing can change the database any more.
 *
 * Error messages filled in here have no "FILE:LINE: key" prefix: the caller
 * (enumerate.c) knows which key an expression came from and prefixes it.
 */
#ifndef FT_EXPR_H
#define FT_EXPR_H

#include "base/err.h"

/* The names of the context row, in the order enumerate.c fills it: the shape,
 * then the target arch's limits (see space.h). */
#define FT_CONTEXT_NAMES                                                              \
	"B", "H", "S", "D", "CAUSAL", "DTYPE_BYTES", "S_KV", "H_KV", "LAYOUT", "DTYPE",  \
		"SMEM_STATIC", "SMEM_OPTIN", "SMEM_PER_SM", "SMEM_RESERVED", "REGS_PER_SM", \
		"THREADS_PER_BLOCK", "THREADS_PER_SM", "CC"
#define FT_CONTEXT_COUNT 18

/* Most tables one engine holds: 16 parameters (FT_MAX_PARAMS) plus the context
 * row, with room to spare. */
#define FT_EXPR_MAX_TABLES 24

/* Most expressions one ft_expr_query_all evaluates per row: 16 derived
 * parameters, 32 constraints (FT_MAX_CONSTRAINTS) and one guard per derived
 * parameter, and 19 formulas (smem, threads, grid[3], combine_threads,
 * combine_grid[3], combine_pdl, workspace, 8 compile.defines) come to 99,
 * 100 with the failed-guard column. */
#define FT_EXPR_MAX_COLUMNS 120

/* Longest text the engine evaluates: an expression as written is shorter
 * than FT_EXPR_MAX (ft_expr_precheck), but enumerate.c writes each derived
 * parameter's expression out, in parentheses, where a later one uses it. */
#define FT_EXPR_EXPANDED_MAX 8192

struct ft_expr;

/* Opens an engine (an in-memory database, hardened but not yet locked).
 * FT_EFAIL when SQLite cannot open or configure it. */
int ft_expr_open(struct ft_expr **out, struct ft_err *err);

/* Setup phase only: creates a table with one integer column per name
 * (ncols >= 1) and nrows rows; rows[r * ncols + c] is row r's value of column
 * c. Rows keep the given order (the enumeration order). Names must already be
 * valid (see ft_expr_name_problem). The first table added becomes the outermost
 * loop of ft_expr_query. */
int ft_expr_add_table(struct ft_expr *x, const char *const *names, int ncols,
		      const long long *rows, int nrows, struct ft_err *err);

/* Ends the setup phase: installs the authorizer, the limits and the progress
 * handler. From here on the database can only be read. */
int ft_expr_lock(struct ft_expr *x, struct ft_err *err);

/* Checks one expression: the character whitelist and balanced parentheses
 * (before the text is placed in any SQL), then compiles it on its own against
 * the tables. FT_EINPUT "bad expression 'TEXT': why" on any problem, with
 * SQLite's wording translated ("unknown name 'FOO'", "function 'random' is not
 * allowed: ..."). Needs the engine locked. */
int ft_expr_check(struct ft_expr *x, const char *text, struct ft_err *err);

/* ft_expr_check for a text written out from another (derived names replaced
 * by their expressions, up to FT_EXPR_EXPANDED_MAX characters): messages
 * quote shown, the text as its author wrote it. */
int ft_expr_check_as(struct ft_expr *x, const char *text, const char *shown, struct ft_err *err);

/* The text-only first layer of ft_expr_check (exposed for tests): 0 when text
 * only holds allowed characters, its parentheses balance and it is shorter
 * than FT_EXPR_MAX (as a space file may write it). */
int ft_expr_precheck(const char *text, struct ft_err *err);

/* Calls fn(name, len, arg) for each name text reads, left to right: each
 * identifier that is neither an SQL keyword (AND, CASE, IN, ...) nor a
 * function called (followed by '('); numbers are skipped. Stops at and
 * returns the first non-zero fn returns; 0 after the last. No engine needed. */
int ft_expr_each_name(const char *text, int (*fn)(const char *name, size_t len, void *arg), void *arg);

/* Prepares the enumeration statement: one row per element of the cross join of
 * every table (first table outermost, each in insertion order) with these
 * result columns: every table column in table order, then the index of the
 * first "guard" expression that is 0 (-1 when all are non-zero), then each of
 * the nvalue "value" expressions, evaluated only when no guard failed (0
 * otherwise). Guards are evaluated in order and stop at the first 0, so a
 * later guard may rely on an earlier one (e.g. a division after a non-zero
 * check). Each text must have passed ft_expr_check. Replaces any earlier query. */
int ft_expr_query(struct ft_expr *x, const char *const *guards, int nguards,
		  const char *const *values, int nvalues, struct ft_err *err);

/* ft_expr_query_all's flags: FT_EXPR_PASSING steps only the rows whose guards
 * all hold (their failed-guard index is -1); the others are skipped inside
 * SQLite, which is several times faster than handing each one back when most
 * fail. An error in a skipped row's guard still ends the query. */
#define FT_EXPR_PASSING 1

/* ft_expr_query with nalways "always" expressions first: their columns come
 * right after the table columns, before the failed-guard index, and are
 * computed for every row, whether its guards hold or not (a derived
 * parameter's value is part of every candidate's config). Guards and values
 * may be up to FT_EXPR_EXPANDED_MAX characters. flags: 0 or FT_EXPR_PASSING. */
int ft_expr_query_all(struct ft_expr *x, const char *const *always, int nalways,
		      const char *const *guards, int nguards, const char *const *values, int nvalues,
		      int flags, struct ft_err *err);

/* Steps the query: 1 and the row in cols[] (ncols as laid out above), 0 at
 * the end, -1 on error. A guard or value that is NULL or not an integer
 * (x / 0, integer overflow, a string) is an error, as is ceil_div(x, 0); the
 * message is SQLite's, e.g. "ceil_div(512, 0): division by zero", or
 * "column N: ..." naming the result column. After an error the query is over. */
int ft_expr_step(struct ft_expr *x, long long *cols, int ncols, struct ft_err *err);

/* Evaluates one expression once, against the first row of the cross join
 * optionally restricted to the given row of each table (rowsel[t], 0-based,
 * or NULL for the first row of each). Used to find which expression of a
 * failed ft_expr_step is to blame, and by tests. The value must be a non-NULL
 * integer. */
int ft_expr_eval(struct ft_expr *x, const char *text, const int *rowsel, long long *out,
		 struct ft_err *err);

/* Frees the engine; x may be NULL. */
void ft_expr_close(struct ft_expr *x);

/* Why name cannot be a parameter of a space, or NULL when it can: it must be
 * a C identifier of fewer than 64 characters that is not an SQL keyword, not
 * one of SQLite's rowid aliases, not a context name nor a macro fatune
 * defines (HEAD_DIM, IS_CAUSAL, FATUNE_*), compared without case because SQL
 * names ignore case. The answer is a static string. */
const char *ft_expr_name_problem(const char *name);

#endif
