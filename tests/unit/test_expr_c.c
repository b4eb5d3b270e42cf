/* test_expr_c.c - space expressions translated into C (expr_c.c) against SQLite's own answers.
 *
 * A differential test: every expression below is evaluated by fatune's
 * engine (expr.c, SQLite) and, translated, by a C program this test writes,
 * compiles with cc and runs, for several bindings of A, B, C. Where SQLite
 * gives a value, the C must give the same one or refuse ("bad", which only
 * makes the dispatch more careful); where SQLite fails (x / 0, overflow), the
 * C must refuse. Constructs outside the language are refused at translation.
 * Skipped (not failed) where no C compiler exists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/expr_c.h"
#include "space/expr.h"

static const char *const exprs[] = {
	"1 + 2 * 3", "A - B - C", "A / B * C", "-A * B", "NOT A = B", "A & B | C", "A | B & C",
	"A % B", "A / 0", "ceil_div(A, B)", "ceil_div(-A, B)", "ceil_div(A, 0)", "min(A, B, C)", "max(A, B)",
	"abs(-A)", "iif(A > B, A, B)", "CASE WHEN A > B THEN 1 WHEN A = B THEN 2 ELSE 3 END",
	"CASE A WHEN 1 THEN 10 WHEN 2 THEN 20 ELSE 30 END", "CASE WHEN A > 100 THEN 1 END", "A IN (1, 2, 3)",
	"A NOT IN (1, B)", "A < B", "B < A", "A > C", "C <= A", "A BETWEEN B AND C", "A NOT BETWEEN B AND C", "is_pow2(A)", "~A",
	"A * 4611686018427387904", "A IS B", "A IS NOT B", "NOT A", "NOT NOT A", "A AND B OR C",
	"A OR B AND C", "A <> B", "A != B", "A == B", "A >= B AND A <= C", "iif(A = 0, 1, B / A)",
	"A != 0 AND B / A > 1", "a + b", "A < B = C < A", "1 - -A", "9223372036854775807 + A",
	"(A + B) * (C - A) % 7", "ceil_div(ceil_div(A * 1000, 7), iif(B > 0, B, 1)) >= C",
};
static const long long bind[][3] = { { 3, 2, 5 }, { 0, 7, -1 }, { 2, 2, 2 }, { -5, 3, 0 }, { 1, 0, 4 } };
#define NEXPR (int)(sizeof(exprs) / sizeof(exprs[0]))
#define NBIND (int)(sizeof(bind) / sizeof(bind[0]))

/* SQLite's answer: 1 and *v, or 0 when the engine refuses to give a value. */
static int sqlite_value(const char *text, const long long *abc, long long *v)
{
	static const char *const names[] = { "A", "B", "C" };
	struct ft_expr *x = NULL;
	struct ft_err err = { 0 };
	int ok;

	assert_int_equal(ft_expr_open(&x, &err), 0);
	assert_int_equal(ft_expr_add_table(x, names, 3, abc, 1, &err), 0);
	assert_int_equal(ft_expr_lock(x, &err), 0);
	ok = !ft_expr_eval(x, text, NULL, v, &err);
	ft_expr_close(x);
	return ok;
}

static void test_differential(void **state)
{
	static const char *const names[] = { "A", "B", "C" };
	char dir[] = "/tmp/fatune-expr-c.XXXXXX", path[128], cmd[512], c_text[8192], line[128];
	FILE *f, *p;
	int bad = 0;

	(void)state;
	if (system("cc --version >/dev/null 2>&1"))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.c", dir);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "#include <stdio.h>\n%s\nint main(void)\n{\n", ft_expr_c_helpers);
	fprintf(f, "\tstatic const long long bind[][3] = {");
	for (int b = 0; b < NBIND; b++)
		fprintf(f, " { %lld, %lld, %lld },", bind[b][0], bind[b][1], bind[b][2]);
	fprintf(f, " };\n\tfor (int i = 0; i < %d; i++) {\n\t\tconst long long v_A = bind[i][0], v_B = bind[i][1], v_C = bind[i][2];\n", NBIND);
	for (int e = 0; e < NEXPR; e++) {
		struct ft_err err = { 0 };

		if (ft_expr_to_c(exprs[e], names, 3, "v_", c_text, sizeof(c_text), &err))
			fail_msg("'%s' not translated: %s", exprs[e], err.msg);
		fprintf(f, "\t\t{\n\t\t\tint bad_ = 0, *bad = &bad_;\n\t\t\tlong long r = %s;\n\t\t\t(void)bad;\n"
			   "\t\t\tif (bad_) printf(\"bad\\n\"); else printf(\"%%lld\\n\", r);\n\t\t}\n", c_text);
	}
	fprintf(f, "\t}\n\treturn 0;\n}\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -std=c99 -Wall -Wextra -Werror -Wno-unused-function -o %s/t %s && %s/t", dir, path, dir);
	assert_non_null(p = popen(cmd, "r"));
	for (int b = 0; b < NBIND; b++)
		for (int e = 0; e < NEXPR; e++) {
			long long want, got;
			int ok = sqlite_value(exprs[e], bind[b], &want);

			if (!fgets(line, sizeof(line), p))
				fail_msg("the compiled translation printed too little (does it compile?)");
			if (!strncmp(line, "bad", 3)) {
				/* allowed: refusing where SQLite has a value only makes the caller careful;
				 * but none of these expressions should need that */
				if (ok) {
					printf("'%s' at A=%lld B=%lld C=%lld: C refused, SQLite says %lld\n", exprs[e],
					       bind[b][0], bind[b][1], bind[b][2], want);
					bad = 1;
				}
				continue;
			}
			got = strtoll(line, NULL, 10);
			if (!ok || got != want) {
				printf("'%s' at A=%lld B=%lld C=%lld: C says %lld, SQLite %s %lld\n", exprs[e], bind[b][0],
				       bind[b][1], bind[b][2], got, ok ? "says" : "refuses", ok ? want : 0);
				bad = 1;
			}
		}
	assert_int_equal(pclose(p), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(bad, 0);
}

static void test_refusals(void **state)
{
	static const char *const names[] = { "A", "B" };
	static const char *const no[] = { "A << 2", "A >> 1", "A || B", "D + 1", "random()", "A +",
					  "min(A)", "CASE WHEN A THEN 1", "0x10", "A IN ()", "(A" };
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		struct ft_err err = { 0 };

		if (!ft_expr_to_c(no[i], names, 2, "v_", out, sizeof(out), &err))
			fail_msg("'%s' was translated to '%s'", no[i], out);
		assert_int_equal(err.status, FT_EINPUT);
		assert_non_null(strstr(err.msg, "cannot translate"));
	}
	/* an output that does not fit is refused, never cut */
	{
		struct ft_err err = { 0 };

		assert_int_equal(ft_expr_to_c("A + B + A + B", names, 2, "v_", out, 16, &err), -1);
		assert_non_null(strstr(err.msg, "longer than"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
