/* test_expr.c - the expression engine: integer semantics, functions, and the locks.
 *
 * Every attack a space file could try against SQLite must fail: ATTACH,
 * PRAGMA, file and extension functions, schema reads, escaping the
 * parentheses with `;`/`--`, recursive CTEs, huge or deep expressions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "space/expr.h"
#include "space/space.h"

/* An engine over B=2 H=8 S=512 D=64, TILE_M in {64, 128}, NW in {4, 8, 0}. */
static struct ft_expr *engine(void)
{
	static const char *const ctx[] = { "B", "H", "S", "D" };
	static const long long ctxv[] = { 2, 8, 512, 64 };
	static const char *const tile[] = { "TILE_M" };
	static const long long tilev[] = { 64, 128 };
	static const char *const nw[] = { "NW" };
	static const long long nwv[] = { 4, 8, 0 };
	struct ft_err err = { 0 };
	struct ft_expr *x = NULL;

	assert_int_equal(ft_expr_open(&x, &err), 0);
	assert_int_equal(ft_expr_add_table(x, ctx, 4, ctxv, 1, &err), 0);
	assert_int_equal(ft_expr_add_table(x, tile, 1, tilev, 2, &err), 0);
	assert_int_equal(ft_expr_add_table(x, nw, 1, nwv, 3, &err), 0);
	assert_int_equal(ft_expr_lock(x, &err), 0);
	return x;
}

static int setup(void **state)
{
	*state = engine();
	return 0;
}

static int teardown(void **state)
{
	ft_expr_close(*state);
	return 0;
}

/* Evaluates text on the rows (tile, nw) and returns the value (must succeed). */
static long long eval_at(struct ft_expr *x, const char *text, int tile, int nw)
{
	const int rowsel[] = { 0, tile, nw };
	struct ft_err err = { 0 };
	long long v = -12345;

	if (ft_expr_eval(x, text, rowsel, &v, &err))
		fail_msg("'%s' failed: %s", text, err.msg);
	return v;
}

static long long eval(struct ft_expr *x, const char *text)
{
	return eval_at(x, text, 0, 0);
}

/* Asserts that text is refused with FT_EINPUT and a message holding phrase. */
static void refused(struct ft_expr *x, const char *text, const char *phrase)
{
	struct ft_err err = { 0 };
	long long v = 0;

	if (ft_expr_eval(x, text, NULL, &v, &err) == 0)
		fail_msg("'%s' was evaluated (to %lld) but must be refused", text, v);
	assert_int_equal(err.status, FT_EINPUT);
	if (!strstr(err.msg, phrase))
		fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, phrase);
	/* ft_expr_check alone refuses it too, unless the problem is the value */
	if (!strstr(phrase, "NULL") && !strstr(phrase, "division") && !strstr(phrase, "integer"))
		assert_int_equal(ft_expr_check(x, text, &err), -1);
}

static void test_arithmetic(void **state)
{
	struct ft_expr *x = *state;

	assert_int_equal(eval(x, "2 + 3 * 4"), 14);
	assert_int_equal(eval(x, "(2 + 3) * 4"), 20);
	/* integer division and remainder truncate toward zero, as in C */
	for (long long a = -9; a <= 9; a++)
		for (long long b = -4; b <= 4; b++) {
			char text[64];
			if (!b)
				continue;
			snprintf(text, sizeof(text), "(%lld) / (%lld)", a, b);
			assert_int_equal(eval(x, text), a / b);
			snprintf(text, sizeof(text), "(%lld) %% (%lld)", a, b);
			assert_int_equal(eval(x, text), a % b);
		}
	assert_int_equal(eval(x, "9223372036854775806 + 1"), INT64_MAX);
	assert_int_equal(eval(x, "S > 100 AND NOT (D == 32) OR 0"), 1);
	assert_int_equal(eval(x, "S != 512"), 0);
	assert_int_equal(eval(x, "S <> 512"), 0);
	assert_int_equal(eval(x, "S <= 512 AND S >= 512 AND S < 513 AND S > 511"), 1);
	assert_int_equal(eval(x, "CASE WHEN D == 64 THEN 7 WHEN D == 128 THEN 9 ELSE 0 END"), 7);
	assert_int_equal(eval(x, "TILE_M IN (64, 256)"), 1);
	assert_int_equal(eval(x, "64"), 64);
	/* names take the values of the selected rows */
	assert_int_equal(eval_at(x, "S / TILE_M", 0, 0), 8);
	assert_int_equal(eval_at(x, "S / TILE_M", 1, 0), 4);
	assert_int_equal(eval_at(x, "B * H * TILE_M * NW", 1, 1), 2 * 8 * 128 * 8);
}

static void test_functions(void **state)
{
	struct ft_expr *x = *state;
	char text[96];

	assert_int_equal(eval(x, "min(3, 4, 1)"), 1);
	assert_int_equal(eval(x, "max(3, 4, 1)"), 4);
	assert_int_equal(eval(x, "abs(0 - 5)"), 5);
	assert_int_equal(eval(x, "iif(S > 4, 10, 20)"), 10);
	/* iif is lazy: the division by NW = 0 is never evaluated */
	assert_int_equal(eval_at(x, "iif(NW == 0, 0, S / NW)", 0, 2), 0);
	assert_int_equal(eval_at(x, "iif(NW == 0, 0, ceil_div(S, NW))", 0, 2), 0);
	/* ceil_div against the definition: the least q with q >= a / b */
	for (long long a = -9; a <= 9; a++)
		for (long long b = -4; b <= 4; b++) {
			long long want = 0;
			if (!b)
				continue;
			for (long long q = -20; q <= 20; q++)
				if (b > 0 ? q * b >= a : q * b <= a) {
					want = q;
					break;
				}
			snprintf(text, sizeof(text), "ceil_div(%lld, %lld)", a, b);
			assert_int_equal(eval(x, text), want);
		}
	for (long long v = -3; v <= 70; v++) {
		snprintf(text, sizeof(text), "is_pow2(%lld)", v);
		assert_int_equal(eval(x, text), v > 0 && __builtin_popcountll((unsigned long long)v) == 1);
	}
	assert_int_equal(eval(x, "is_pow2(4611686018427387904)"), 1);
}

static void test_value_errors(void **state)
{
	struct ft_expr *x = *state;

	refused(x, "S / 0", "NULL");
	refused(x, "S % 0", "NULL");
	refused(x, "ceil_div(S, 0)", "ceil_div(512, 0): division by zero");
	refused(x, "ceil_div(0 - 9223372036854775807 - 1, 0 - 1)", "integer overflow");
	refused(x, "9223372036854775807 + 1", "not an integer");
	refused(x, "S || S", "not an integer");
	refused(x, "ceil_div(S || 1, 2)", "ceil_div() takes integers");
	refused(x, "max(TILE_M)", "aggregate");
	refused(x, "min(TILE_M) > 0", "aggregate");
}

static void test_names(void **state)
{
	struct ft_expr *x = *state;

	refused(x, "TILE_N * 2", "unknown name 'TILE_N'");
	refused(x, "TILE_M ==", "incomplete");
	refused(x, "", "empty");
	refused(x, "   ", "empty");
	refused(x, "foo(1)", "unknown function 'foo'");
	assert_null(ft_expr_name_problem("TILE_M"));
	assert_null(ft_expr_name_problem("_x9"));
	assert_non_null(ft_expr_name_problem("2X"));
	assert_non_null(ft_expr_name_problem("TILE-M"));
	assert_non_null(ft_expr_name_problem(""));
	assert_non_null(ft_expr_name_problem("S"));
	assert_non_null(ft_expr_name_problem("smem_optin"));	/* names ignore case */
	assert_non_null(ft_expr_name_problem("HEAD_DIM"));
	assert_non_null(ft_expr_name_problem("IS_CAUSAL"));
	assert_non_null(ft_expr_name_problem("FATUNE_BF16"));
	assert_non_null(ft_expr_name_problem("FATUNE_SMEM_BYTES"));
	assert_non_null(ft_expr_name_problem("fatune_failed"));
	assert_non_null(ft_expr_name_problem("rowid"));
	assert_non_null(ft_expr_name_problem("SELECT"));
	assert_non_null(ft_expr_name_problem("case"));
	assert_non_null(ft_expr_name_problem(
		"A123456789012345678901234567890123456789012345678901234567890123"));
}

static void test_precheck(void **state)
{
	static const char *const bad[] = {
		"1; 2",	     "1 -- 2",	  "1 /* 2 */",	 "'a'",	      "\"S\"",	  "[S]",
		"`S`",	     "S.x",	  "?1",		 ":a",	      "@a",	  "$a",
		"1)",	     "(1",	  "1) + (1",	 "S # 1",     "S\x01",	  "S \xc3\xa9",
	};
	struct ft_err err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ft_expr_precheck(bad[i], &err) == 0)
			fail_msg("precheck let '%s' through", bad[i]);
		assert_int_equal(err.status, FT_EINPUT);
	}
	assert_int_equal(ft_expr_precheck("min(a, b) * (c + d) % 2 <= 3 AND x != ~y | z & w", &err), 0);
	assert_int_equal(ft_expr_precheck("- -1", &err), 0);
}

/* ---- attacks ---------------------------------------------------------------- */

static void test_attacks(void **state)
{
	struct ft_expr *x = *state;
	char path[] = "/tmp/fatune-expr-XXXXXX";
	char text[256];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(unlink(path), 0);

	/* reading and writing files */
	refused(x, "length(readfile('/etc/passwd')) > 0", "character");
	refused(x, "readfile(S)", "readfile");
	refused(x, "writefile(S, S)", "writefile");
	refused(x, "load_extension(S)", "function 'load_extension' is not allowed");
	refused(x, "load_extension(S, S)", "function 'load_extension' is not allowed");
	/* schema and pragmas */
	refused(x, "(SELECT count(*) FROM sqlite_master) >= 0", "not allowed");
	refused(x, "(SELECT name FROM sqlite_master) IS NULL", "sqlite_master");
	refused(x, "(SELECT 1)", "subqueries are not allowed");
	refused(x, "EXISTS (SELECT 1)", "subqueries are not allowed");
	refused(x, "S IN sqlite_master", "sqlite_master");
	refused(x, "S IN t1", "subqueries are not allowed");
	refused(x, "pragma_table_info(S)", "pragma_table_info");
	refused(x, "(SELECT count(*) FROM pragma_table_list)", "not allowed");
	refused(x, "(SELECT 1 FROM pragma_table_list)", "not allowed");
	/* escaping the parentheses */
	refused(x, "1); DROP TABLE t1; --", "no matching");
	refused(x, "1) UNION SELECT * FROM (SELECT 1", "no matching");
	snprintf(text, sizeof(text), "1) ; ATTACH DATABASE '%s' AS p; --", path);
	refused(x, text, "no matching");
	refused(x, "ATTACH DATABASE S AS p", "ATTACH");
	/* recursive CTEs (would loop forever) and friends */
	refused(x, "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x, 0) FROM c) > 0",
		"bad expression");
	refused(x, "(WITH c(x) AS (SELECT 1) SELECT x FROM c)", "subqueries are not allowed");
	/* every other function */
	refused(x, "randomblob(1000000000) IS NOT NULL", "function 'randomblob' is not allowed");
	refused(x, "random()", "function 'random' is not allowed");
	refused(x, "sqlite_version() IS NULL", "function 'sqlite_version' is not allowed");
	refused(x, "typeof(S) IS NULL", "function 'typeof' is not allowed");
	refused(x, "coalesce(S, 1)", "function 'coalesce' is not allowed");
	refused(x, "char(65) IS NULL", "function 'char' is not allowed");
	refused(x, "printf(S) IS NULL", "function 'printf' is not allowed");
	refused(x, "unlikely(S)", "function 'unlikely' is not allowed");
	refused(x, "S LIKE S", "function 'like' is not allowed");
	refused(x, "S GLOB S", "function 'glob' is not allowed");
	refused(x, "fatune_int(S)", "function 'fatune_int' is not allowed");
	refused(x, "max(S) OVER ()", "bad expression");
	/* the engine is intact: the table the injection named still answers */
	assert_int_equal(eval_at(x, "TILE_M", 1, 0), 128);
	assert_int_equal(access(path, F_OK), -1);
}

static void test_huge(void **state)
{
	struct ft_expr *x = *state;
	struct timespec t0, t1;
	size_t n = 100000;
	char *big = malloc(n + 1), deep[FT_EXPR_MAX];

	assert_non_null(big);
	/* 100 KB of 1+1+1...: refused by length before SQLite sees it */
	for (size_t i = 0; i < n; i++)
		big[i] = i % 2 ? '+' : '1';
	big[n - 1] = '1';
	big[n] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	refused(x, big, "characters");
	/* 250 nested unary minus signs: within the length, over the depth limit */
	deep[0] = '\0';
	for (int i = 0; i < 250; i++)
		strcat(deep, "- ");
	strcat(deep, "1");
	refused(x, deep, "nested");
	/* 150 terms of 1+1+...: a left-deep tree 150 levels deep, over the limit of 100 */
	deep[0] = '\0';
	for (int i = 0; i < 150; i++)
		strcat(deep, "1+");
	strcat(deep, "1");
	refused(x, deep, "nested");
	/* 60 terms are fine */
	deep[0] = '\0';
	for (int i = 0; i < 59; i++)
		strcat(deep, "1+");
	strcat(deep, "1");
	assert_int_equal(eval(x, deep), 60);
	/* 40 parentheses deep evaluates; 200 overflow SQLite's parser stack, refused */
	deep[0] = '\0';
	for (int i = 0; i < 40; i++)
		strcat(deep, "(");
	strcat(deep, "7");
	for (int i = 0; i < 40; i++)
		strcat(deep, ")");
	assert_int_equal(eval(x, deep), 7);
	deep[0] = '\0';
	for (int i = 0; i < 200; i++)
		strcat(deep, "(");
	strcat(deep, "7");
	for (int i = 0; i < 200; i++)
		strcat(deep, ")");
	refused(x, deep, "nested");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* refusing is immediate: a generous bound that catches a runaway */
	assert_true((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 < 2.0);
	free(big);
}

/* ---- the enumeration query -------------------------------------------------- */

static void test_query(void **state)
{
	struct ft_expr *x = *state;
	/* the second guard divides by NW: it must not run when the first failed */
	const char *guards[] = { "NW != 0", "S / NW >= 100", "TILE_M < 128" };
	const char *values[] = { "TILE_M * NW", "ceil_div(S, NW)" };
	long long cols[4 + 2 + 1 + 2];
	struct ft_err err = { 0 };
	int rows = 0;

	assert_int_equal(ft_expr_query(x, guards, 3, values, 2, &err), 0);
	for (int t = 0; t < 2; t++)
		for (int w = 0; w < 3; w++) {
			static const long long tiles[] = { 64, 128 }, nws[] = { 4, 8, 0 };
			long long tm = tiles[t], nw = nws[w];
			int failed = nw == 0 ? 0 : 512 / nw < 100 ? 1 : tm >= 128 ? 2 : -1;

			assert_int_equal(ft_expr_step(x, cols, 9, &err), 1);
			rows++;
			assert_int_equal(cols[0], 2);	/* context first */
			assert_int_equal(cols[2], 512);
			assert_int_equal(cols[4], tm);	/* first table outermost */
			assert_int_equal(cols[5], nw);
			assert_int_equal(cols[6], failed);
			assert_int_equal(cols[7], failed < 0 ? tm * nw : 0);
			assert_int_equal(cols[8], failed < 0 ? (512 + nw - 1) / nw : 0);
		}
	assert_int_equal(ft_expr_step(x, cols, 9, &err), 0);
	assert_int_equal(rows, 6);

	/* a NULL guard after passing guards stops the query */
	{
		const char *g2[] = { "TILE_M > 0", "S / NW > 0" };
		int rc;
		assert_int_equal(ft_expr_query(x, g2, 2, NULL, 0, &err), 0);
		while ((rc = ft_expr_step(x, cols, 7, &err)) == 1)
			assert_true(cols[5] != 0);
		assert_int_equal(rc, -1);
		assert_int_equal(err.status, FT_EINPUT);
		assert_non_null(strstr(err.msg, "no integer value"));
	}
	/* ceil_div by zero in a value of a passing row is an error too */
	{
		const char *v2[] = { "ceil_div(S, NW)" };
		int rc;
		assert_int_equal(ft_expr_query(x, NULL, 0, v2, 1, &err), 0);
		while ((rc = ft_expr_step(x, cols, 8, &err)) == 1)
			;
		assert_int_equal(rc, -1);
		if (!strstr(err.msg, "division by zero"))
			fail_msg("message: %s", err.msg);
	}
}

static void test_setup_rules(void **state)
{
	static const char *const a[] = { "A" }, *const dup[] = { "a" }, *const bad[] = { "x;y" };
	static const long long v[] = { 1 };
	struct ft_err err = { 0 };
	struct ft_expr *x = NULL;

	(void)state;
	assert_int_equal(ft_expr_open(&x, &err), 0);
	assert_int_equal(ft_expr_check(x, "1", &err), -1);	/* not locked yet */
	assert_int_equal(ft_expr_add_table(x, a, 1, v, 1, &err), 0);
	assert_int_equal(ft_expr_add_table(x, dup, 1, v, 1, &err), -1);	/* names ignore case */
	assert_int_equal(ft_expr_add_table(x, bad, 1, v, 1, &err), -1);
	assert_int_equal(ft_expr_lock(x, &err), 0);
	assert_int_equal(ft_expr_add_table(x, dup, 1, v, 1, &err), -1);	/* locked */
	assert_int_equal(eval_at(x, "A + 1", 0, 0) , 2);
	ft_expr_close(x);
	ft_expr_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_arithmetic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_functions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_value_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test(test_precheck),
		cmocka_unit_test_setup_teardown(test_attacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query, setup, teardown),
		cmocka_unit_test(test_setup_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
