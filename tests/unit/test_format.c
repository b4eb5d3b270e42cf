/* test_format.c - the table, JSON and CSV printers and ft_format_parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/format.h"

/* A printer writing into memory; out() returns what it wrote after finish. */
struct cap {
	char *buf;
	size_t len;
	FILE *f;
	struct ft_printer *p;
};

static void cap_open(struct cap *c, enum ft_format fmt)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	c->p = ft_printer_new(c->f, fmt);
	assert_non_null(c->p);
}

static void row(struct cap *c, int n, const char *const *names, const char *const *values,
		const int *types)
{
	assert_int_equal(ft_printer_row(c->p, n, names, values, types), 0);
}

static long long cap_close(struct cap *c)
{
	long long n = ft_printer_finish(c->p);

	assert_int_equal(fclose(c->f), 0);
	return n;
}

static void test_parse(void **state)
{
	struct ft_err err = { 0 };
	enum ft_format f = FT_FMT_TABLE;

	(void)state;
	assert_int_equal(ft_format_parse("json", &f, &err), 0);
	assert_int_equal(f, FT_FMT_JSON);
	assert_int_equal(ft_format_parse("csv", &f, &err), 0);
	assert_int_equal(f, FT_FMT_CSV);
	assert_int_equal(ft_format_parse("table", &f, &err), 0);
	assert_int_equal(f, FT_FMT_TABLE);
	assert_int_equal(ft_format_parse("xml", &f, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_string_equal(err.msg, "bad format 'xml': use table, json or csv");
	assert_int_equal(ft_format_parse("JSON", &f, &err), -1);
	assert_int_equal(ft_format_parse("", &f, &err), -1);
	assert_string_equal(err.msg, "bad format '': use table, json or csv");
	assert_int_equal(f, FT_FMT_TABLE);	/* untouched by failures */
}

static const char *const names[] = { "config", "t_median_us", "rel_err", "regs", "device" };
static const int types[] = { 3, 2, 2, 1, 3 };

static void test_table(void **state)
{
	struct cap c;
	const char *r1[] = { "TILE_M=64", "10.254999", "0.000305175", "96", "NVIDIA H200" };
	const char *r2[] = { "TILE_M=128,X=1", "9", NULL, "128", "GeForce\xc3\xa9 X" };
	const char *r3[] = { "T=1", NULL, "1e-9", "-1", "line\nbreak" };
	/* hand-derived: widths 14, 11, 9, 4, 11; the last line spelled out by column */
	const char *want = "config          t_median_us    rel_err  regs  device\n"
			   "--------------  -----------  ---------  ----  -----------\n"
			   "TILE_M=64             10.25  0.0003052    96  NVIDIA H200\n"
			   "TILE_M=128,X=1         9.00          -   128  GeForce\xc3\xa9 X\n"
			   "T=1" "           " "  " "          -" "  " "    1e-09" "  " "  -1" "  " "line break\n";

	(void)state;
	cap_open(&c, FT_FMT_TABLE);
	row(&c, 5, names, r1, types);
	row(&c, 5, names, r2, (const int[]){ 3, 2, 0, 1, 3 });
	row(&c, 5, names, r3, (const int[]){ 3, 0, 2, 1, 3 });
	assert_int_equal(cap_close(&c), 3);
	assert_string_equal(c.buf, want);
	free(c.buf);
}

static void test_table_layout(void **state)
{
	struct cap c;
	const char *n2[] = { "wall_s", "compile_ms", "t_spread", "ratio", "status", "reason" };
	const int t2[] = { 2, 2, 2, 2, 3, 3 };
	char *line, *save = NULL;
	int lines = 0;

	(void)state;
	cap_open(&c, FT_FMT_TABLE);
	for (int i = 0; i < 5; i++) {
		char a[32], b[32];
		const char *v[] = { a, b, "0.123456789", "3.14159265358979", i % 2 ? "ok" : "timeout",
				    i == 4 ? "" : "x" };

		snprintf(a, sizeof(a), "%d.5", i * 1000);
		snprintf(b, sizeof(b), "%d", i * 7);
		row(&c, 6, n2, v, t2);
	}
	assert_int_equal(cap_close(&c), 5);
	/* durations with 2 decimals, ratios with 4 digits, other reals 6 */
	assert_non_null(strstr(c.buf, "4000.50"));
	assert_non_null(strstr(c.buf, "28.00"));
	assert_non_null(strstr(c.buf, " 0.1235 "));
	assert_non_null(strstr(c.buf, " 3.14159 "));
	for (line = strtok_r(c.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++) {
		size_t n = strlen(line);

		assert_true(n > 0);
		assert_true(line[n - 1] != ' ');	/* no trailing blanks */
		/* right-aligned numbers: the first column ends where its widest
		 * value, "4000.50", ends */
		if (lines >= 2)
			assert_int_equal(strcspn(line + strspn(line, " "), " ") + strspn(line, " "),
					 strlen("4000.50"));
	}
	assert_int_equal(lines, 7);
	free(c.buf);
}

static void test_table_empty(void **state)
{
	struct cap c;

	(void)state;
	cap_open(&c, FT_FMT_TABLE);
	assert_int_equal(cap_close(&c), 0);
	assert_int_equal(c.len, 0);
	free(c.buf);
}

/* A long table streams: rows are written before the printer is finished (its
 * memory does not grow with the row count), sized by the first rows; a later
 * wider cell pushes its line right instead of breaking it. */
static void test_table_streams(void **state)
{
	const char *cols[] = { "config", "n" };
	const int kinds[] = { 3, 1 };
	char cfg[64], num[32];
	const char *values[] = { cfg, num };
	struct cap c;
	long long rows = 200000;
	size_t before;

	(void)state;
	cap_open(&c, FT_FMT_TABLE);
	for (long long i = 0; i < rows; i++) {
		snprintf(cfg, sizeof(cfg), i == rows - 1 ? "A_MUCH_LONGER_CONFIG=%lld" : "X=%lld", i % 10);
		snprintf(num, sizeof(num), "%lld", i);
		row(&c, 2, cols, values, kinds);
	}
	assert_int_equal(fflush(c.f), 0);
	before = c.len;
	/* all but the rows of one window are out before finish */
	assert_true(before > (size_t)(rows - 8192) * 10);
	assert_int_equal(cap_close(&c), rows);
	assert_non_null(strstr(c.buf, "config  "));
	assert_non_null(strstr(c.buf, "\nX=0        0\n"));
	assert_non_null(strstr(c.buf, "\nA_MUCH_LONGER_CONFIG=9  199999\n"));
	free(c.buf);
}

static void test_json(void **state)
{
	struct cap c;
	const char *n[] = { "id", "t", "nan", "inf", "null", "s", "big", "notnum", "we\"ird" };
	const char *v[] = { "42",	 "1.0e-05", "NaN", "-Inf", NULL, "q\"b\\s\n\t\x01\x1f\x7f caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xff\xc3(",
			    "12.5", "x1", "v" };
	const int t[] = { 1, 2, 2, 2, 0, 3, 2, 1, 3 };
	const char *want =
		"[\n"
		"  {\"id\": 42, \"t\": 1e-05, \"nan\": null, \"inf\": null, \"null\": null, "
		"\"s\": \"q\\\"b\\\\s\\n\\t\\u0001\\u001f\x7f caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \\ufffd\\ufffd(\", "
		"\"big\": 12.5, \"notnum\": \"x1\", \"we\\\"ird\": \"v\"},\n"
		"  {\"id\": 43, \"t\": 1e-05, \"nan\": null, \"inf\": null, \"null\": null, "
		"\"s\": \"\", \"big\": 0.1, \"notnum\": \"x1\", \"we\\\"ird\": \"v\"}\n"
		"]\n";
	const char *v2[] = { "43", "1e-5", "nan", "inf", NULL, "", "0.1", "x1", "v" };

	(void)state;
	cap_open(&c, FT_FMT_JSON);
	row(&c, 9, n, v, t);
	row(&c, 9, n, v2, t);
	assert_int_equal(cap_close(&c), 2);
	assert_string_equal(c.buf, want);
	free(c.buf);

	cap_open(&c, FT_FMT_JSON);
	assert_int_equal(cap_close(&c), 0);
	assert_string_equal(c.buf, "[]\n");
	free(c.buf);
}

static void test_csv(void **state)
{
	struct cap c;
	const char *n[] = { "config", "reason", "t_median_us", "regs", "note" };
	const char *v1[] = { "A=1,B=2", "said \"no\"", "10.25", "96", " padded" };
	const char *v2[] = { "A=2", "two\nlines", NULL, NULL, "plain" };
	const int t[] = { 3, 3, 2, 1, 3 };
	const char *want = "config,reason,t_median_us,regs,note\r\n"
			   "\"A=1,B=2\",\"said \"\"no\"\"\",10.25,96,\" padded\"\r\n"
			   "A=2,\"two\nlines\",,,plain\r\n";

	(void)state;
	cap_open(&c, FT_FMT_CSV);
	row(&c, 5, n, v1, t);
	row(&c, 5, n, v2, (const int[]){ 3, 3, 0, 0, 3 });
	assert_int_equal(cap_close(&c), 2);
	assert_string_equal(c.buf, want);
	free(c.buf);
}

static void test_write_error(void **state)
{
	FILE *f = fopen("/dev/null", "r");	/* every write to it fails */
	const char *v[] = { "A=1", "1.5", "1e-4", "1", "d" };
	struct ft_printer *p;

	(void)state;
	assert_non_null(f);
	for (int fmt = 0; fmt < 3; fmt++) {
		p = ft_printer_new(f, (enum ft_format)fmt);
		assert_non_null(p);
		ft_printer_row(p, 5, names, v, types);
		assert_int_equal(ft_printer_finish(p), -1);
		clearerr(f);
	}
	fclose(f);
}

/* The widest line of text (characters; all ASCII here). */
static size_t widest_line(const char *text)
{
	size_t w = 0;

	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n");
		if (n > w)
			w = n;
		l += n + (l[n] == '\n');
	}
	return w;
}

/* A narrowed table: hidden columns, configs as values, wide cells cut to fit. */
static void test_table_narrow(void **state)
{
	static const char *const cols[] = { "config", "status", "reason", NULL };
	const char *n3[] = { "config", "status", "reason", "extra" };
	const int t3[] = { 3, 3, 3, 3 };
	char reason[200], *note = NULL;
	size_t note_len = 0;
	FILE *nf = open_memstream(&note, &note_len);
	struct cap c;

	(void)state;
	memset(reason, 'r', sizeof(reason) - 1);
	reason[sizeof(reason) - 1] = '\0';
	cap_open(&c, FT_FMT_TABLE);
	ft_printer_narrow(c.p, cols, 80, nf);
	row(&c, 4, n3, (const char *[]){ "A=1,BB=22,C=333", "ok", reason, "hidden-value" }, t3);
	row(&c, 4, n3, (const char *[]){ "A=4,BB=5,C=6", "spills", "short", "x" }, t3);
	assert_int_equal(cap_close(&c), 2);
	assert_int_equal(fclose(nf), 0);
	assert_true(widest_line(c.buf) <= 80);
	assert_null(strstr(c.buf, "hidden-value"));	/* a column not kept */
	assert_null(strstr(c.buf, "extra"));
	assert_non_null(strstr(c.buf, "1,22,333"));	/* values only */
	assert_non_null(strstr(c.buf, "4,5,6"));
	assert_null(strstr(c.buf, "BB="));
	assert_non_null(strstr(c.buf, "rr.."));		/* the long reason cut */
	assert_non_null(strstr(note, "config lists the values of A,BB,C"));
	assert_non_null(strstr(note, "1 column hidden and the widest cut to fit 80 characters"));
	free(c.buf);
	free(note);

	/* configs of different parameters stay whole; no width limit cuts nothing */
	cap_open(&c, FT_FMT_TABLE);
	ft_printer_narrow(c.p, NULL, 0, NULL);
	row(&c, 4, n3, (const char *[]){ "A=1", "ok", reason, "x" }, t3);
	row(&c, 4, n3, (const char *[]){ "B=1", "ok", "-", "x" }, t3);
	assert_int_equal(cap_close(&c), 2);
	assert_non_null(strstr(c.buf, "A=1"));
	assert_non_null(strstr(c.buf, reason));
	free(c.buf);

	/* other formats ignore narrowing */
	cap_open(&c, FT_FMT_CSV);
	ft_printer_narrow(c.p, cols, 20, NULL);
	row(&c, 4, n3, (const char *[]){ "A=1,BB=22", "ok", reason, "hidden-value" }, t3);
	assert_int_equal(cap_close(&c), 1);
	assert_non_null(strstr(c.buf, "hidden-value"));
	assert_non_null(strstr(c.buf, "A=1,BB=22"));
	free(c.buf);
}

/* A narrowed table streams too: the first window decides the columns, the
 * values-only configs and the cuts, and the rows after it follow them. */
static void test_table_narrow_streams(void **state)
{
	static const char *const keep[] = { "config", "reason", NULL };
	const char *cols[] = { "config", "reason", "extra" };
	const int kinds[] = { 3, 3, 3 };
	char cfg[64], reason[300];
	const char *values[] = { cfg, reason, "hidden-value" };
	struct cap c;
	long long rows = 10000;

	(void)state;
	cap_open(&c, FT_FMT_TABLE);
	ft_printer_narrow(c.p, keep, 60, NULL);
	for (long long i = 0; i < rows; i++) {
		snprintf(cfg, sizeof(cfg), "A=%lld,B=%lld", i, i % 7);
		/* the last row's reason is far wider than any of the first window */
		size_t n = i == rows - 1 ? 250 : 40;
		memset(reason, i == rows - 1 ? 'z' : 'r', n);
		reason[n] = '\0';
		row(&c, 3, cols, values, kinds);
	}
	assert_int_equal(cap_close(&c), rows);
	assert_true(widest_line(c.buf) <= 60);		/* the late, longer reason cut too */
	assert_null(strstr(c.buf, "hidden-value"));
	assert_null(strstr(c.buf, "A="));			/* late rows values only as well */
	assert_non_null(strstr(c.buf, "\n9999,3 "));
	assert_non_null(strstr(c.buf, "zz..\n"));
	free(c.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_layout),
		cmocka_unit_test(test_table_empty),
		cmocka_unit_test(test_table_narrow),
		cmocka_unit_test(test_table_streams),
		cmocka_unit_test(test_table_narrow_streams),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
