/* test_report.c - the HTML report's writer: escaping of database text, the
 * heatmap's cells (timed, rejected with their status, empty), the best and
 * runner-up, and nothing that runs or fetches.
 *
 * The model is built here; loading it from a database (latest trial per
 * config, ranking, axes) and rendering it in Chromium is
 * tests/cli/073-report.sh's part.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/report.h"

static struct ft_report_trial trial(const char *config, enum ft_status st, const char *reason, double us,
				    int tm, int tn)
{
	struct ft_report_trial t;

	memset(&t, 0, sizeof(t));
	t.config = (char *)config;
	t.reason = (char *)reason;
	t.status = st;
	t.t_median_us = us;
	t.t_min_us = us;
	t.rel_err = isfinite(us) ? 3e-4 : NAN;
	t.vals[0] = tm;
	t.vals[1] = tn;
	return t;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/* A search of 1x8x512x64 fp16 on arch over TILE_M x TILE_N, its trials t[0..n). */
static void shape_init(struct ft_report_shape *s, const char *arch, struct ft_report_trial *t, int n)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->arch, arch);
	strcpy(s->space, "attention");
	s->shape = (struct ft_shape){ .b = 1, .h = 8, .s = 512, .d = 64, .dtype = FT_FP16, .s_kv = 512, .h_kv = 8 };
	s->t = t;
	s->nt = n;
	for (int i = 0; i < n; i++)
		s->status_count[t[i].status]++;
	s->nparams = 2;
	strcpy(s->params[0], "TILE_M");
	strcpy(s->params[1], "TILE_N");
	s->row_param = 0;
	s->col_param = 1;
}

/* The HTML of r, in memory (free it). */
static char *render(const struct ft_report *r)
{
	struct ft_err err = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(ft_report_html(f, r, &err), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_html(void **state)
{
	/* ranked as report.c leaves them: ok fastest first, then the rest */
	struct ft_report_trial t[4] = {
		trial("TILE_M=64,TILE_N=128", FT_ST_OK, "", 6.34, 64, 128),
		trial("TILE_M=32,TILE_N=64", FT_ST_OK, "", 8.5, 32, 64),
		trial("TILE_M=64,TILE_N=64", FT_ST_REJECTED_SMEM, "<script>alert(1)</script> & 'q'", NAN, 64, 64),
		trial("TILE_M=128,TILE_N=128", FT_ST_REJECTED_SMEM, "<script>alert(1)</script> & 'q'", NAN, 128, 128),
	};
	struct ft_report_shape s;
	struct ft_report r = { &s, 1, "tune<1>.db" };
	char *buf;

	(void)state;
	shape_init(&s, "sm_90", t, 4);
	strcpy(s.device, "GPU <b>&</b>");
	strcpy(s.campaign, "c\"1\"");
	s.nok = 2;
	buf = render(&r);
	/* escaped, every time */
	assert_null(strstr(buf, "<script"));
	assert_null(strstr(buf, "<b>&"));
	assert_non_null(strstr(buf, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;q&#39;"));
	assert_non_null(strstr(buf, "GPU &lt;b&gt;&amp;&lt;/b&gt;"));
	assert_non_null(strstr(buf, "tune&lt;1&gt;.db"));
	assert_non_null(strstr(buf, "c&quot;1&quot;"));
	/* self-contained: one svg, nothing fetched */
	assert_int_equal(count(buf, "<svg"), 1);
	assert_null(strstr(buf, "src="));
	assert_null(strstr(buf, "<link"));
	/* best and runner-up with their TFLOP/s: 4*1*8*512*512*64 / 6.34 us = 84.7 */
	assert_non_null(strstr(buf, "<td>best</td><td class=n>6.34</td>"));
	assert_non_null(strstr(buf, "<td>runner-up</td><td class=n>8.50</td>"));
	assert_non_null(strstr(buf, "<td class=n>84.7</td>"));
	/* 3 x 2 cells (TILE_M 32, 64, 128 x TILE_N 64, 128): two timed, two rejected (smem), two empty */
	assert_int_equal(count(buf, ">6.34</text>"), 1);
	assert_int_equal(count(buf, ">8.50</text>"), 1);
	assert_int_equal(count(buf, ">smem</text>"), 2);
	assert_int_equal(count(buf, ">none</text>"), 2);
	assert_int_equal(count(buf, "url(#hatch)\""), 2);
	/* the best's cell framed solid, the runner-up's dashed */
	assert_int_equal(count(buf, "fill=\"none\" stroke=\"#000\" stroke-width=\"3\""), 2);
	assert_int_equal(count(buf, "stroke-dasharray"), 1);
	assert_non_null(strstr(buf, "<b>smem</b> (rejected_smem): 2 configs; most often (2): &lt;script&gt;"));
	free(buf);
}

/* An untimed search: a cell where one config of three compiled shows
 * "untimed" (the feasible region), not the majority's "constraint". */
static void test_untimed_feasible_region(void **state)
{
	struct ft_report_trial t[5] = {
		trial("TILE_M=64,TILE_N=64,X=0", FT_ST_COMPILED, "", NAN, 64, 64),
		trial("TILE_M=64,TILE_N=64,X=1", FT_ST_REJECTED_CONSTRAINT, "c", NAN, 64, 64),
		trial("TILE_M=64,TILE_N=64,X=2", FT_ST_REJECTED_CONSTRAINT, "c", NAN, 64, 64),
		trial("TILE_M=32,TILE_N=64,X=0", FT_ST_REJECTED_CONSTRAINT, "c", NAN, 32, 64),
		trial("TILE_M=32,TILE_N=64,X=1", FT_ST_COMPILE_FAILED, "e", NAN, 32, 64),
	};
	struct ft_report_shape s;
	struct ft_report r = { &s, 1, "t.db" };
	char *buf;

	(void)state;
	shape_init(&s, "sm_89", t, 5);
	buf = render(&r);
	/* TILE_M 64: 1 compiled of 3 -> untimed; TILE_M 32: compile beats constraint */
	assert_int_equal(count(buf, ">untimed</text>"), 1);
	assert_int_equal(count(buf, ">compile</text>"), 1);
	assert_int_equal(count(buf, ">constraint</text>"), 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_untimed_feasible_region),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
