/* expr.c - a locked-down SQLite connection that evaluates space expressions.
 *
 * Why SQLite: it parses and evaluates exactly the integer language a space
 * needs (64-bit integers, `/` truncating as in C, lazy CASE and iif) and it
 * is already a dependency. Why the locks: SQL can also read files (ATTACH),
 * change settings (PRAGMA), loop forever (recursive CTEs) and call anything a
 * build registers (load_extension). A space file comes from whoever wrote it,
 * so the expression text is treated as hostile, in five layers:
 *
 *   1. text: before any SQL is built, an expression may only hold letters,
 *      digits, `_`, blanks and the operator characters `+-*%/()<>=!,&|~`; no
 *      quotes of any kind, no `;`, `.`, `?`, no `--` or `/ *` comments, and its
 *      parentheses must balance, so it cannot close the parenthesis it is
 *      placed in and add SQL of its own;
 *   2. authorizer: once locked, a statement may only SELECT (once: no
 *      subqueries in an expression), READ the tables this engine created and
 *      call min, max, abs, iif, ceil_div and is_pow2 (our own statements may
 *      also call fatune_int); ATTACH, PRAGMA, recursive CTEs and every other
 *      action and function are denied;
 *   3. limits: statement length, expression depth, columns, arguments,
 *      attached databases (0), string length (sqlite3_limit);
 *   4. a progress handler that aborts a statement after a fixed number of
 *      virtual-machine instructions per row;
 *   5. connection flags: defensive mode, no extension loading, untrusted
 *      schema, no triggers or views, no double-quoted string literals.
 */
#include "space/expr.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/ident.h"
#include "space/space.h"

/* SQL text we build: the largest is the enumeration statement, at most 41
 * expressions of FT_EXPR_MAX (511) characters plus ~60 characters of wrapping
 * each, and 31 column names of < 64 characters: under 30 KB, more where
 * derived parameters are written out in the expressions that use them
 * (FT_EXPR_EXPANDED_MAX each). 256 KB leaves room and still refuses anything
 * huge. */
#define SQL_MAX 262144

/* SQLite's default expression depth limit is 1000; real formulas nest < 20
 * deep, and 100 keeps SQLite's recursive parser and code generator far from
 * any stack limit. A 511-character chain like 1+1+1+... reaches ~255. */
#define DEPTH_MAX 100

/* The progress handler runs every PROGRESS_STEP virtual-machine instructions;
 * one row of the largest query needs < 50 000 instructions (41 expressions of
 * at most a few hundred instructions each), so allowing PROGRESS_BUDGET calls
 * (10 million instructions) per row is 200 times the need and still stops a
 * runaway statement in well under a second. */
#define PROGRESS_STEP 1000
#define PROGRESS_BUDGET 10000

/* Messages quote at most this much of an expression (a 511-character one would
 * push the reason out of the 512-byte ft_err). */
#define EXPR_QUOTE_MAX 120

struct ft_expr {
	sqlite3 *db;
	sqlite3_stmt *query;		/* the enumeration statement, or NULL */
	int locked;			/* setup phase over: authorizer installed */
	int internal_ok;		/* our own statement: fatune_int allowed */
	int selects;			/* SQLITE_SELECT seen while preparing */
	int max_selects;		/* allowed SQLITE_SELECT per statement */
	long progress;			/* progress-handler calls since the last reset */
	char denied[160];		/* why the authorizer last said no */
	int ntables;
	int ncols[FT_EXPR_MAX_TABLES];	/* columns per table */
	int nrows[FT_EXPR_MAX_TABLES];
	int total_cols;
	char colnames[FT_EXPR_MAX_TABLES * FT_CONTEXT_COUNT][FT_NAME_MAX];
	char sql[SQL_MAX];		/* scratch for building statements */
};

static const char *const functions[] = { "min", "max", "abs", "iif", "ceil_div", "is_pow2" };
#define NFUNCTIONS ((int)(sizeof(functions) / sizeof(functions[0])))
#define FUNCTION_LIST "min, max, abs, iif, ceil_div or is_pow2"

static const char *const context_names[FT_CONTEXT_COUNT] = { FT_CONTEXT_NAMES };

/* text as a message quotes it: on one line (a YAML block scalar keeps its
 * line breaks; found by tests/fuzz/fuzz_expr.c) and cut to fit, so the reason
 * survives the 512-byte ft_err next to a file name and key. */
static const char *shorten(const char *text, char *buf, size_t size)
{
	size_t n = strlen(text);

	if (n < size) {
		memcpy(buf, text, n + 1);
	} else {
		snprintf(buf, size, "%.*s...", (int)size - 4, text);
	}
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return buf;
}

/* ---- our SQL functions ---------------------------------------------------- */

/* Reads argument i as an integer; 0 when it is one, 1 when it is NULL (the
 * result is NULL too), -1 after setting an error for anything else. */
static int int_arg(sqlite3_context *ctx, sqlite3_value *v, const char *fn, long long *out)
{
	int t = sqlite3_value_type(v);

	if (t == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return 1;
	}
	if (t != SQLITE_INTEGER) {
		char msg[96];
		snprintf(msg, sizeof(msg), "%s() takes integers", fn);
		sqlite3_result_error(ctx, msg, -1);
		return -1;
	}
	*out = sqlite3_value_int64(v);
	return 0;
}

/* ceil_div(a, b): the smallest integer >= a / b, exact for negative operands
 * too; b == 0 and the one overflowing case (INT64_MIN, -1) are errors. */
static void fn_ceil_div(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	long long a, b, q;
	char msg[128];

	if (int_arg(ctx, argv[0], "ceil_div", &a) || int_arg(ctx, argv[1], "ceil_div", &b))
		return;
	if (b == 0) {
		snprintf(msg, sizeof(msg), "ceil_div(%lld, 0): division by zero", a);
		sqlite3_result_error(ctx, msg, -1);
		return;
	}
	if (a == INT64_MIN && b == -1) {
		snprintf(msg, sizeof(msg), "ceil_div(%lld, -1): integer overflow", a);
		sqlite3_result_error(ctx, msg, -1);
		return;
	}
	q = a / b;	/* truncates toward zero: round up when the exact quotient is positive */
	if (a % b != 0 && ((a < 0) == (b < 0)))
		q++;
	sqlite3_result_int64(ctx, q);
}

/* is_pow2(x): 1 when x is a positive power of two, else 0. */
static void fn_is_pow2(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	long long x;

	if (int_arg(ctx, argv[0], "is_pow2", &x))
		return;
	sqlite3_result_int(ctx, x > 0 && (x & (x - 1)) == 0);
}

/* fatune_int(v): v when it is an integer, else an error. Wraps every guard and
 * value of the enumeration statement so a NULL (x / 0) or a real (overflow)
 * stops the enumeration instead of passing for "unknown". */
static void fn_int(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "an expression has no integer value", -1);
		return;
	}
	sqlite3_result_value(ctx, argv[0]);
}

/* ---- the locks ---------------------------------------------------------------- */

static int authorize(void *arg, int action, const char *a3, const char *a4, const char *db,
		     const char *trigger)
{
	struct ft_expr *x = arg;

	switch (action) {
	case SQLITE_SELECT:
		if (++x->selects <= x->max_selects)
			return SQLITE_OK;
		snprintf(x->denied, sizeof(x->denied),
			 "subqueries are not allowed: an expression is arithmetic on names");
		return SQLITE_DENY;
	case SQLITE_READ:
		/* db is NULL when a table is joined but none of its columns is read */
		if ((!db || !strcmp(db, "main")) && a3 && a3[0] == 't') {
			char *end;
			long t = strtol(a3 + 1, &end, 10);
			if (end != a3 + 1 && !*end && t >= 0 && t < x->ntables)
				return SQLITE_OK;
		}
		snprintf(x->denied, sizeof(x->denied), "table '%s' cannot be read", a3 ? a3 : "?");
		return SQLITE_DENY;
	case SQLITE_FUNCTION:
		for (int i = 0; i < NFUNCTIONS; i++)
			if (a4 && !strcmp(a4, functions[i]))
				return SQLITE_OK;
		if (x->internal_ok && a4 && !strcmp(a4, "fatune_int"))
			return SQLITE_OK;
		snprintf(x->denied, sizeof(x->denied), "function '%s' is not allowed: use " FUNCTION_LIST,
			 a4 ? a4 : "?");
		return SQLITE_DENY;
	case SQLITE_RECURSIVE:
		snprintf(x->denied, sizeof(x->denied), "recursive queries are not allowed");
		return SQLITE_DENY;
	case SQLITE_PRAGMA:
		snprintf(x->denied, sizeof(x->denied), "PRAGMA is not allowed");
		return SQLITE_DENY;
	case SQLITE_ATTACH:
		snprintf(x->denied, sizeof(x->denied), "ATTACH is not allowed");
		return SQLITE_DENY;
	default:
		snprintf(x->denied, sizeof(x->denied), "SQL action %d is not allowed", action);
		return SQLITE_DENY;
	}
}

static int progress(void *arg)
{
	struct ft_expr *x = arg;

	return ++x->progress > PROGRESS_BUDGET;
}

/* ---- setup ------------------------------------------------------------------ */

static int sql_fail(struct ft_expr *x, int status, const char *what, struct ft_err *err)
{
	return ft_error(err, status, "expression engine: %s: %s (sqlite %s)", what,
			sqlite3_errmsg(x->db), sqlite3_libversion());
}

/* Runs one statement of our own, during setup. */
static int exec_setup(struct ft_expr *x, const char *sql, struct ft_err *err)
{
	char *msg = NULL;

	if (sqlite3_exec(x->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		ft_error(err, FT_EFAIL, "expression engine: setting up tables: %s",
			 msg ? msg : sqlite3_errmsg(x->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int ft_expr_open(struct ft_expr **out, struct ft_err *err)
{
	static const struct {
		int op;
		int value;
	} dbconfig[] = {
		{ SQLITE_DBCONFIG_DEFENSIVE, 1 },
		{ SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0 },
		{ SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0 },
		{ SQLITE_DBCONFIG_ENABLE_TRIGGER, 0 },
		{ SQLITE_DBCONFIG_ENABLE_VIEW, 0 },
		{ SQLITE_DBCONFIG_DQS_DML, 0 },
		{ SQLITE_DBCONFIG_DQS_DDL, 0 },
	};
	struct ft_expr *x;
	int rc;

	*out = NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return ft_error(err, FT_EFAIL, "expression engine: out of memory");
	rc = sqlite3_open_v2(":memory:", &x->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY |
				     SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE,
			     NULL);
	if (rc != SQLITE_OK) {
		ft_error(err, FT_EFAIL, "expression engine: cannot open an in-memory database: %s",
			 x->db ? sqlite3_errmsg(x->db) : sqlite3_errstr(rc));
		goto fail;
	}
	for (size_t i = 0; i < sizeof(dbconfig) / sizeof(dbconfig[0]); i++) {
		int now = -1;
		if (sqlite3_db_config(x->db, dbconfig[i].op, dbconfig[i].value, &now) != SQLITE_OK ||
		    now != dbconfig[i].value) {
			ft_error(err, FT_EFAIL,
				 "expression engine: sqlite %s refused connection option %d: "
				 "use SQLite 3.31 or newer",
				 sqlite3_libversion(), dbconfig[i].op);
			goto fail;
		}
	}
	if (sqlite3_create_function(x->db, "ceil_div", 2,
				    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
				    fn_ceil_div, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function(x->db, "is_pow2", 1,
				    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
				    fn_is_pow2, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function(x->db, "fatune_int", 1,
				    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
				    fn_int, NULL, NULL) != SQLITE_OK) {
		sql_fail(x, FT_EFAIL, "registering functions", err);
		goto fail;
	}
	*out = x;
	return 0;
fail:
	ft_expr_close(x);
	return -1;
}

int ft_expr_add_table(struct ft_expr *x, const char *const *names, int ncols,
		      const long long *rows, int nrows, struct ft_err *err)
{
	sqlite3_stmt *ins = NULL;
	size_t n;
	int t = x->ntables;

	if (x->locked)
		return ft_error(err, FT_EFAIL, "expression engine: tables are added before the lock");
	if (t >= FT_EXPR_MAX_TABLES || ncols < 1 || ncols > FT_CONTEXT_COUNT || nrows < 0 ||
	    x->total_cols + ncols > (int)(sizeof(x->colnames) / sizeof(x->colnames[0])))
		return ft_error(err, FT_EFAIL,
				"expression engine: table %d with %d columns is beyond the engine's limits",
				t, ncols);
	for (int c = 0; c < ncols; c++) {
		if (!ft_is_ident(names[c]) || strlen(names[c]) >= FT_NAME_MAX)
			return ft_error(err, FT_EFAIL, "expression engine: bad column name '%s'",
					names[c]);
		for (int k = 0; k < x->total_cols + c; k++)
			if (!strcasecmp(x->colnames[k], names[c]))
				return ft_error(err, FT_EFAIL,
						"expression engine: name '%s' is defined twice",
						names[c]);
		strcpy(x->colnames[x->total_cols + c], names[c]);
	}

	n = (size_t)snprintf(x->sql, sizeof(x->sql), "CREATE TABLE t%d(", t);
	for (int c = 0; c < ncols; c++)
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, "%s\"%s\" INTEGER NOT NULL",
				      c ? ", " : "", names[c]);
	snprintf(x->sql + n, sizeof(x->sql) - n, ")");
	if (exec_setup(x, x->sql, err))
		return -1;

	n = (size_t)snprintf(x->sql, sizeof(x->sql), "INSERT INTO t%d(rowid", t);
	for (int c = 0; c < ncols; c++)
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, ", \"%s\"", names[c]);
	n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, ") VALUES(?");
	for (int c = 0; c < ncols; c++)
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, ", ?");
	snprintf(x->sql + n, sizeof(x->sql) - n, ")");
	if (sqlite3_prepare_v2(x->db, x->sql, -1, &ins, NULL) != SQLITE_OK)
		return sql_fail(x, FT_EFAIL, "preparing an insert", err);
	for (int r = 0; r < nrows; r++) {
		/* rowid r + 1 keeps the given order: the query orders by rowid */
		if (sqlite3_bind_int64(ins, 1, r + 1) != SQLITE_OK)
			goto fail;
		for (int c = 0; c < ncols; c++)
			if (sqlite3_bind_int64(ins, c + 2, rows[(size_t)r * ncols + c]) != SQLITE_OK)
				goto fail;
		if (sqlite3_step(ins) != SQLITE_DONE || sqlite3_reset(ins) != SQLITE_OK)
			goto fail;
	}
	sqlite3_finalize(ins);
	x->ncols[t] = ncols;
	x->nrows[t] = nrows;
	x->total_cols += ncols;
	x->ntables++;
	return 0;
fail:
	sql_fail(x, FT_EFAIL, "filling a table", err);
	sqlite3_finalize(ins);
	return -1;
}

int ft_expr_lock(struct ft_expr *x, struct ft_err *err)
{
	static const struct {
		int id;
		int value;
	} limits[] = {
		{ SQLITE_LIMIT_LENGTH, SQL_MAX },	/* strings and rows: ours are a few integers */
		{ SQLITE_LIMIT_SQL_LENGTH, SQL_MAX },
		{ SQLITE_LIMIT_COLUMN, 128 },		/* >= the 18 + 16 + 16 + 1 + 19 columns we use */
		{ SQLITE_LIMIT_EXPR_DEPTH, DEPTH_MAX },
		{ SQLITE_LIMIT_COMPOUND_SELECT, 1 },	/* we never UNION */
		{ SQLITE_LIMIT_VDBE_OP, 100000 },	/* the largest statement compiles to < 20 000 */
		{ SQLITE_LIMIT_FUNCTION_ARG, 16 },	/* min/max of up to 16 terms */
		{ SQLITE_LIMIT_ATTACHED, 0 },
		{ SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1 },	/* LIKE is denied anyway */
		{ SQLITE_LIMIT_VARIABLE_NUMBER, FT_EXPR_MAX_TABLES },	/* our row selectors */
		{ SQLITE_LIMIT_TRIGGER_DEPTH, 1 },	/* triggers are disabled anyway */
		{ SQLITE_LIMIT_WORKER_THREADS, 0 },
	};

	if (x->ntables < 1)
		return ft_error(err, FT_EFAIL, "expression engine: locked with no tables");
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		sqlite3_limit(x->db, limits[i].id, limits[i].value);
		if (sqlite3_limit(x->db, limits[i].id, -1) > limits[i].value)
			return ft_error(err, FT_EFAIL, "expression engine: cannot set SQLite limit %d",
					limits[i].id);
	}
	if (sqlite3_set_authorizer(x->db, authorize, x) != SQLITE_OK)
		return sql_fail(x, FT_EFAIL, "installing the authorizer", err);
	sqlite3_progress_handler(x->db, PROGRESS_STEP, progress, x);
	x->locked = 1;
	return 0;
}

/* ---- checking expressions --------------------------------------------------- */

/* The first layer with a length limit: FT_EXPR_MAX for text as written,
 * FT_EXPR_EXPANDED_MAX for text with derived names written out. */
static int precheck(const char *full, size_t limit, struct ft_err *err)
{
	static const char allowed[] = "_ \t\r\n+-*/%()<>=!,&|~";
	size_t len = strlen(full);
	int depth = 0, blank = 1;
	char cut[EXPR_QUOTE_MAX];
	const char *text = shorten(full, cut, sizeof(cut));

	if (len >= limit)
		return ft_error(err, FT_EINPUT,
				"bad expression '%s': %zu characters, the limit is %zu: "
				"simplify it or add a parameter",
				text, len, limit - 1);
	for (const char *p = full; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (!isspace(ch))
			blank = 0;
		if (!(isalnum(ch) || strchr(allowed, ch)))
			return ft_error(err, FT_EINPUT,
					"bad expression '%s': character '%c' at offset %d is not part of "
					"the expression language (names, integers, + - * / %% "
					"comparisons, AND OR NOT, parentheses, function calls)",
					text, isprint(ch) ? ch : '?', (int)(p - full));
		if ((p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*'))
			return ft_error(err, FT_EINPUT,
					"bad expression '%s': '%c%c' at offset %d starts an SQL comment: "
					"write '- -' or '/ *' with a blank if you mean two operators",
					text, p[0], p[1], (int)(p - full));
		if (ch == '(')
			depth++;
		if (ch == ')' && --depth < 0)
			return ft_error(err, FT_EINPUT,
					"bad expression '%s': ')' at offset %d has no matching '('", text,
					(int)(p - full));
	}
	if (blank)
		return ft_error(err, FT_EINPUT, "bad expression '': the expression is empty");
	if (depth)
		return ft_error(err, FT_EINPUT, "bad expression '%s': %d '(' not closed", text, depth);
	return 0;
}

int ft_expr_precheck(const char *full, struct ft_err *err)
{
	return precheck(full, FT_EXPR_MAX, err);
}

/* Turns the message of a failed prepare or step into ours. */
static int explain(struct ft_expr *x, const char *full, struct ft_err *err)
{
	const char *msg = sqlite3_errmsg(x->db);
	char cut[EXPR_QUOTE_MAX];
	const char *text = shorten(full, cut, sizeof(cut));
	const char *p;
	int code = sqlite3_errcode(x->db);

	if (x->denied[0])	/* the authorizer said no (SQLite's wording varies) */
		return ft_error(err, FT_EINPUT, "bad expression '%s': %s", text, x->denied);
	if (!strncmp(msg, "no such column: ", 16))
		return ft_error(err, FT_EINPUT,
				"bad expression '%s': unknown name '%s': use a parameter, the shape "
				"(B H S D S_KV H_KV CAUSAL DTYPE DTYPE_BYTES LAYOUT) or an arch limit (SMEM_STATIC "
				"SMEM_OPTIN SMEM_PER_SM SMEM_RESERVED REGS_PER_SM THREADS_PER_BLOCK "
				"THREADS_PER_SM CC)",
				text, msg + 16);
	if (!strncmp(msg, "no such function: ", 18))
		return ft_error(err, FT_EINPUT,
				"bad expression '%s': unknown function '%s': use " FUNCTION_LIST, text,
				msg + 18);
	if (!strncmp(msg, "misuse of aggregate", 19) && (p = strstr(msg, "function ")))
		return ft_error(err, FT_EINPUT,
				"bad expression '%s': %s with one argument would be an aggregate over "
				"all candidates: give it two or more arguments",
				text, p + 9);
	if (!strncmp(msg, "misuse of window function", 25))
		return ft_error(err, FT_EINPUT, "bad expression '%s': window functions are not allowed",
				text);
	if (strstr(msg, "Expression tree is too large") || strstr(msg, "parser stack overflow"))
		return ft_error(err, FT_EINPUT,
				"bad expression '%s': nested more than %d levels deep: simplify it", text,
				DEPTH_MAX);
	if (code == SQLITE_INTERRUPT)
		return ft_error(err, FT_EINPUT,
				"bad expression '%s': evaluation ran over %d million instructions and "
				"was stopped",
				text, PROGRESS_STEP * PROGRESS_BUDGET / 1000000);
	if (!strcmp(msg, "incomplete input") || !strcmp(msg, "near \")\": syntax error"))
		return ft_error(err, FT_EINPUT, "bad expression '%s': the expression is incomplete",
				text);
	return ft_error(err, FT_EINPUT, "bad expression '%s': %s", text, msg);
}

/* " FROM t0 CROSS JOIN t1 ..." into x->sql at n; returns the new length. */
static size_t put_from(struct ft_expr *x, size_t n)
{
	n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, " FROM t0");
	for (int t = 1; t < x->ntables; t++)
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, " CROSS JOIN t%d", t);
	return n;
}

/* Prepares x->sql with the authorizer's budget; NULL stmt and -1 on failure,
 * with the message explained for text. */
static int prepare(struct ft_expr *x, int selects, int internal, const char *text,
		   sqlite3_stmt **st, struct ft_err *err)
{
	int rc;

	x->selects = 0;
	x->max_selects = selects;
	x->internal_ok = internal;
	x->denied[0] = '\0';
	rc = sqlite3_prepare_v2(x->db, x->sql, -1, st, NULL);
	x->internal_ok = 0;
	if (rc != SQLITE_OK) {
		sqlite3_finalize(*st);
		*st = NULL;
		return explain(x, text, err);
	}
	return 0;
}

int ft_expr_check(struct ft_expr *x, const char *text, struct ft_err *err)
{
	return ft_expr_check_as(x, text, text, err);
}

int ft_expr_check_as(struct ft_expr *x, const char *text, const char *shown, struct ft_err *err)
{
	sqlite3_stmt *st = NULL;
	size_t n;

	if (!x->locked)
		return ft_error(err, FT_EFAIL, "expression engine: checked before the lock");
	if (precheck(text, FT_EXPR_EXPANDED_MAX, err))
		return -1;
	/* WHERE, not the result list: there SQLite refuses aggregates (max(x) with
	 * one argument) and window functions while compiling */
	n = (size_t)snprintf(x->sql, sizeof(x->sql), "SELECT 1");
	n = put_from(x, n);
	snprintf(x->sql + n, sizeof(x->sql) - n, " WHERE (%s)", text);
	if (prepare(x, 1, 0, shown, &st, err))
		return -1;
	sqlite3_finalize(st);
	return 0;
}

/* ---- evaluating -------------------------------------------------------------- */

int ft_expr_query(struct ft_expr *x, const char *const *guards, int nguards,
		  const char *const *values, int nvalues, struct ft_err *err)
{
	return ft_expr_query_all(x, NULL, 0, guards, nguards, values, nvalues, 0, err);
}

int ft_expr_query_all(struct ft_expr *x, const char *const *always, int nalways,
		      const char *const *guards, int nguards, const char *const *values, int nvalues,
		      int flags, struct ft_err *err)
{
	size_t n;

	sqlite3_finalize(x->query);
	x->query = NULL;
	if (!x->locked)
		return ft_error(err, FT_EFAIL, "expression engine: query before the lock");
	if (nalways < 0 || nguards < 0 || nvalues < 0 ||
	    nalways + nguards + nvalues > FT_EXPR_MAX_COLUMNS)
		return ft_error(err, FT_EFAIL, "expression engine: %d expressions per row is too many",
				nalways + nguards + nvalues);
	for (int i = 0; i < nalways; i++)
		if (precheck(always[i], FT_EXPR_EXPANDED_MAX, err))
			return -1;
	for (int i = 0; i < nguards; i++)
		if (precheck(guards[i], FT_EXPR_EXPANDED_MAX, err))
			return -1;
	for (int i = 0; i < nvalues; i++)
		if (precheck(values[i], FT_EXPR_EXPANDED_MAX, err))
			return -1;

	/* outer: every table column, the failed-guard index, then the values,
	 * computed only for rows whose guards all held */
	n = (size_t)snprintf(x->sql, sizeof(x->sql), "SELECT *");
	for (int i = 0; i < nvalues; i++)
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n,
				      ", CASE WHEN fatune_failed < 0 THEN fatune_int((%s)) ELSE 0 END",
				      values[i]);
	/* inner: the cross join in enumeration order; CASE stops at the first
	 * guard that is 0. The OFFSET keeps SQLite from flattening it into the
	 * outer query (which would evaluate the guards again for every value):
	 * it runs as a co-routine, one row at a time, and the ORDER BY costs no
	 * sort because each table is scanned in rowid order anyway. */
	n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, " FROM (SELECT *, ");
	/* the always-computed columns (derived parameters) come before the guard
	 * index, for every row */
	for (int i = 0; i < nalways; i++)
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, "fatune_int((%s)) AS fatune_a%d, ",
				      always[i], i);
	if (nguards) {
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, "CASE");
		for (int i = 0; i < nguards; i++)
			n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n,
					      " WHEN fatune_int((%s)) = 0 THEN %d", guards[i], i);
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, " ELSE -1 END");
	} else {
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, "-1");
	}
	n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, " AS fatune_failed");
	n = put_from(x, n);
	n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, " ORDER BY t0.rowid");
	for (int t = 1; t < x->ntables; t++)
		n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, ", t%d.rowid", t);
	n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, " LIMIT -1 OFFSET 0)%s",
			      flags & FT_EXPR_PASSING ? " WHERE fatune_failed < 0" : "");
	if (n >= sizeof(x->sql))
		return ft_error(err, FT_EINPUT,
				"the expressions of this space make an SQL statement over %d bytes: "
				"shorten them",
				SQL_MAX);
	/* two SELECTs: the outer query and the cross join */
	return prepare(x, 2, 1, "(enumeration)", &x->query, err);
}

int ft_expr_step(struct ft_expr *x, long long *cols, int ncols, struct ft_err *err)
{
	int rc, have;

	if (!x->query)
		return ft_error(err, FT_EFAIL, "expression engine: no query prepared");
	x->progress = 0;
	rc = sqlite3_step(x->query);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW) {
		if (rc == SQLITE_INTERRUPT)
			ft_error(err, FT_EINPUT,
				 "evaluation ran over %d million instructions for one candidate and "
				 "was stopped",
				 PROGRESS_STEP * PROGRESS_BUDGET / 1000000);
		else
			ft_error(err, FT_EINPUT, "%s", sqlite3_errmsg(x->db));
		sqlite3_finalize(x->query);
		x->query = NULL;
		return -1;
	}
	have = sqlite3_column_count(x->query);
	if (have != ncols)
		return ft_error(err, FT_EFAIL, "expression engine: the query has %d columns, not %d",
				have, ncols);
	for (int c = 0; c < ncols; c++) {
		if (sqlite3_column_type(x->query, c) != SQLITE_INTEGER)
			return ft_error(err, FT_EINPUT, "column %d: value is not an integer", c);
		cols[c] = sqlite3_column_int64(x->query, c);
	}
	return 1;
}

int ft_expr_eval(struct ft_expr *x, const char *text, const int *rowsel, long long *out,
		 struct ft_err *err)
{
	char cut[EXPR_QUOTE_MAX];
	sqlite3_stmt *st = NULL;
	size_t n;
	int rc, ret = -1;

	if (ft_expr_check_as(x, text, text, err))
		return -1;
	n = (size_t)snprintf(x->sql, sizeof(x->sql), "SELECT (%s)", text);
	n = put_from(x, n);
	if (rowsel) {
		for (int t = 0; t < x->ntables; t++)
			n += (size_t)snprintf(x->sql + n, sizeof(x->sql) - n, "%s t%d.rowid = ?%d",
					      t ? " AND" : " WHERE", t, t + 1);
	}
	snprintf(x->sql + n, sizeof(x->sql) - n, " LIMIT 1");
	if (prepare(x, 1, 0, text, &st, err))
		return -1;
	for (int t = 0; rowsel && t < x->ntables; t++)
		if (sqlite3_bind_int64(st, t + 1, (long long)rowsel[t] + 1) != SQLITE_OK) {
			sql_fail(x, FT_EFAIL, "binding a row", err);
			goto out;
		}
	x->progress = 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		ft_error(err, FT_EFAIL, "expression engine: no row to evaluate '%s' on",
			 shorten(text, cut, sizeof(cut)));
	} else if (rc != SQLITE_ROW) {
		explain(x, text, err);
	} else if (sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
		*out = sqlite3_column_int64(st, 0);
		ret = 0;
	} else if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
		ft_error(err, FT_EINPUT,
			 "bad expression '%s': no value (NULL): a division or remainder by zero?",
			 shorten(text, cut, sizeof(cut)));
	} else {
		ft_error(err, FT_EINPUT,
			 "bad expression '%s': the value '%s' is not an integer (an overflow past "
			 "64 bits, or text?)",
			 shorten(text, cut, sizeof(cut)), (const char *)sqlite3_column_text(st, 0));
	}
out:
	sqlite3_finalize(st);
	return ret;
}

void ft_expr_close(struct ft_expr *x)
{
	if (!x)
		return;
	sqlite3_finalize(x->query);
	/* close_v2: never fails for a busy statement, frees when the last one goes */
	sqlite3_close_v2(x->db);
	free(x);
}

/* ---- names -------------------------------------------------------------------- */

const char *ft_expr_name_problem(const char *name)
{
	static const char *const rowid[] = { "rowid", "oid", "_rowid_" };
	size_t len = strlen(name);

	if (!len)
		return "the name is empty";
	if (!ft_is_ident(name))
		return "it is not a C identifier (letters, digits and _, not starting with a digit)";
	if (len >= FT_NAME_MAX)
		return "it is longer than 63 characters";
	for (int i = 0; i < FT_CONTEXT_COUNT; i++)
		if (!strcasecmp(name, context_names[i]))
			return "it is a reserved name (the shape and arch limits B H S D S_KV H_KV "
			       "CAUSAL DTYPE DTYPE_BYTES LAYOUT SMEM_* REGS_PER_SM THREADS_PER_* CC; "
			       "names ignore case)";
	/* macros fatune passes to every template: a parameter of the same name would clash */
	for (int i = 0; i < FT_FATUNE_MACRO_COUNT; i++)
		if (!strcasecmp(name, ft_fatune_macro_names[i]))
			return "it is reserved: a macro fatune passes to every template (HEAD_DIM IS_CAUSAL "
			       "FATUNE_*)";
	if (!strncasecmp(name, "FATUNE_", 7) || !strcasecmp(name, "fatune_failed"))
		return "names starting with FATUNE_ are reserved for fatune's own macros and columns";
	for (size_t i = 0; i < sizeof(rowid) / sizeof(rowid[0]); i++)
		if (!strcasecmp(name, rowid[i]))
			return "it is a reserved word of the expression engine (rowid, oid, _rowid_)";
	if (sqlite3_keyword_check(name, (int)len))
		return "it is an SQL keyword of the expression engine (like AND, CASE, IN, KEY): "
		       "pick another name";
	return NULL;
}

int ft_expr_each_name(const char *text, int (*fn)(const char *name, size_t len, void *arg), void *arg)
{
	const char *p = text;

	while (*p) {
		const char *start = p, *q;
		size_t len;
		int rc;

		if (isdigit((unsigned char)*p)) {	/* a number, hex digits and all */
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			continue;
		}
		if (!(isalpha((unsigned char)*p) || *p == '_')) {
			p++;
			continue;
		}
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		len = (size_t)(p - start);
		for (q = p; isspace((unsigned char)*q); q++)
			;
		if (*q == '(' && !sqlite3_keyword_check(start, (int)len))
			continue;	/* a function call: min(, iif(, ... */
		if (sqlite3_keyword_check(start, (int)len))
			continue;	/* AND, CASE, IN, NOT, ... */
		if ((rc = fn(start, len, arg)))
			return rc;
	}
	return 0;
}
