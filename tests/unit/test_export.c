/* test_export.c - build_config.h: golden files byte for byte, determinism, refusals;
 * the dispatch table's three formats (export_dispatch.c).
 *
 * tests/golden/build_config.h (cxx style) and build_config_c.h (c style) were
 * written from golden_best() below and checked by hand once; any byte of
 * difference fails here, and the actual output is left in /tmp for a diff.
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

#include "export/export.h"
#include "export/export_dispatch.h"

static struct ft_best golden_best(void)
{
	struct ft_best b;

	memset(&b, 0, sizeof(b));
	strcpy(b.arch, "sm_90");
	strcpy(b.device, "NVIDIA H200");
	strcpy(b.template_name, "attention");
	strcpy(b.space, "attention");
	strcpy(b.family, "mma");
	strcpy(b.template_hash, "9f2c4e1a7b3d5f60");
	strcpy(b.fatune_version, "0.1.0");
	b.shape = (struct ft_shape){ .b = 1, .h = 8, .s = 512, .d = 64, .causal = 0, .dtype = FT_FP16,
				     .s_kv = 512, .h_kv = 8 };
	strcpy(b.config, "BLOCK_M=64,BLOCK_N=64,NUM_WARPS=4,KV_STAGES=2,NUM_SPLITS=2");
	strcpy(b.compile_key, "0123456789abcdef");
	b.t_median_us = 9.8765;
	b.t_min_us = 9.5;
	b.rel_err = 3.0517578125e-4;
	b.smem_model = 24576;
	b.threads = 128;
	b.grid[0] = 8;
	b.grid[1] = 8;
	b.grid[2] = 1;
	b.combine_threads = 64;
	b.combine_grid[0] = 64;
	b.combine_grid[1] = 1;
	b.combine_grid[2] = 1;
	strcpy(b.updated_at, "2026-11-20T10:00:00Z");
	b.run_id = 3;
	return b;
}

/* ft_export_header (d NULL) or ft_dispatch_write (d, style a format) into a
 * malloc'ed string; *rc receives its result. */
static char *export_to(const struct ft_best *b, const struct ft_dispatch *d, int style, int *rc,
		       struct ft_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*rc = d ? ft_dispatch_write(f, d, (enum ft_dispatch_format)style, err)
		: ft_export_header(f, b, (enum ft_export_style)style, err);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *export(const struct ft_best *b, enum ft_export_style style, int *rc, struct ft_err *err)
{
	return export_to(b, NULL, (int)style, rc, err);
}

static char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	if (!f)
		fail_msg("cannot read golden file '%s' (is FATUNE_SOURCE_DIR set?)", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return buf;
}

static void golden_path(char *buf, size_t size, const char *name)
{
	const char *src = getenv("FATUNE_SOURCE_DIR");

	snprintf(buf, size, "%s/tests/golden/%s", src ? src : ".", name);
}

static void check_golden(enum ft_export_style style, const char *name)
{
	struct ft_best b = golden_best();
	struct ft_err err = { 0 };
	char path[4096];
	size_t n;
	int rc;
	char *got = export(&b, style, &rc, &err), *want;

	assert_int_equal(rc, 0);
	golden_path(path, sizeof(path), name);
	want = read_file(path, &n);
	if (strlen(got) != n || memcmp(got, want, n)) {
		char actual[256];
		FILE *f;

		snprintf(actual, sizeof(actual), "/tmp/fatune-actual-%s", name);
		f = fopen(actual, "w");
		if (f) {
			fputs(got, f);
			fclose(f);
		}
		fail_msg("export differs from %s: diff it with %s", path, actual);
	}
	free(got);
	free(want);
}

static void test_golden_cxx(void **state)
{
	(void)state;
	check_golden(FT_EXPORT_CXX, "build_config.h");
}

static void test_golden_c(void **state)
{
	(void)state;
	check_golden(FT_EXPORT_C, "build_config_c.h");
}

/* The golden headers are real headers: a C and a C++ compiler accept them
 * and see the values. The C++ half is skipped where no c++ is installed. */
static void test_golden_compiles(void **state)
{
	char path[4096], cmd[8400];

	(void)state;
	golden_path(path, sizeof(path), "build_config_c.h");
	snprintf(cmd, sizeof(cmd),
		 "printf '#include \"%s\"\\n_Static_assert(BLOCK_M == 64 && NUM_SPLITS == 2 && HEAD_DIM == 64"
		 " && IS_CAUSAL == 0 && FATUNE_BF16 == 0, \"values\");\\n' | cc -std=c11 -Wall -Werror -fsyntax-only -x c -",
		 path);
	assert_int_equal(system(cmd), 0);
	if (system("command -v c++ >/dev/null 2>&1") != 0)
		skip();
	golden_path(path, sizeof(path), "build_config.h");
	snprintf(cmd, sizeof(cmd),
		 "printf '#include \"%s\"\\n#include \"%s\"\\nstatic_assert(NUM_WARPS == 4 && KV_STAGES == 2"
		 " && HEAD_DIM == 64, \"values\");\\n' | c++ -std=c++11 -Wall -Werror -fsyntax-only -x c++ -",
		 path, path);
	assert_int_equal(system(cmd), 0);
}

static void test_deterministic(void **state)
{
	struct ft_best b = golden_best();
	struct ft_err err = { 0 };
	int rc;
	char *one = export(&b, FT_EXPORT_CXX, &rc, &err), *two = export(&b, FT_EXPORT_CXX, &rc, &err);

	(void)state;
	assert_string_equal(one, two);
	/* and it follows its input: another date is another file */
	strcpy(b.updated_at, "2026-11-21T10:00:00Z");
	free(two);
	two = export(&b, FT_EXPORT_CXX, &rc, &err);
	assert_string_not_equal(one, two);
	free(one);
	free(two);
}

static void test_shape_flags(void **state)
{
	struct ft_best b = golden_best();
	struct ft_err err = { 0 };
	int rc;
	char *h;

	(void)state;
	b.shape.causal = 1;
	b.shape.dtype = FT_BF16;
	b.shape.d = 128;
	b.device[0] = '\0';
	b.rel_err = NAN;
	strcpy(b.config, "TILE=128,OFFSET=-3");
	h = export(&b, FT_EXPORT_C, &rc, &err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(h, "#define TILE 128\n"));
	assert_non_null(strstr(h, "#define OFFSET (-3)\n"));
	assert_non_null(strstr(h, "#define HEAD_DIM 128\n"));
	assert_non_null(strstr(h, "#define IS_CAUSAL 1\n"));
	assert_non_null(strstr(h, "#define FATUNE_BF16 1\n"));
	assert_non_null(strstr(h, "fatune export --arch sm_90 --shape 1x8x512x128 --causal --dtype bf16 --style c\n"));
	assert_non_null(strstr(h, "relative error   not measured"));
	assert_null(strstr(h, "--device"));
	free(h);
	h = export(&b, FT_EXPORT_CXX, &rc, &err);
	assert_non_null(strstr(h, "constexpr int OFFSET = -3;\n"));
	assert_non_null(strstr(h, "constexpr int IS_CAUSAL = 1;\n"));
	free(h);
}

/* noinline: inlined into a caller of open_memstream, gcc 12 -O2 takes the buffer for
 * a dangling local (-Wdangling-pointer false positive) */
__attribute__((noinline)) static int count(const char *text, const char *sub)
{
	int n = 0;

	for (const char *p = strstr(text, sub); p; p = strstr(p + 1, sub))
		n++;
	return n;
}

static void test_comment_safe(void **state)
{
	struct ft_best b = golden_best();
	struct ft_err err = { 0 };
	int rc;
	char *h;

	(void)state;
	strcpy(b.device, "Bad */ #define X 1 /* it's\nnew");
	h = export(&b, FT_EXPORT_CXX, &rc, &err);
	assert_int_equal(rc, 0);
	/* every comment that opens also closes, and nothing else closes one */
	assert_int_equal(count(h, "/*"), count(h, "*/"));
	assert_null(strstr(h, "\n#define X"));
	assert_non_null(strstr(h, "--device 'Bad * / #define X 1 / * it'\\''s_new'"));
	free(h);
}

static void test_bad_configs(void **state)
{
	static const char *const bad[] = {
		"A",	    "A=",	  "=1",	      "1A=2",	      "A=1,",	       "A=1,,B=2",
		"A=x",	    "A=1.5",	  "A=1 ",     " A=1",	      "A=99999999999", "A=1,A=2",
		"HEAD_DIM=64", "IS_CAUSAL=1", "A=1;B=2", "A-B=1",   "A=--1",
	};
	struct ft_best b = golden_best();

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ft_err err = { 0 };
		int rc;
		char *h;

		strcpy(b.config, bad[i]);
		h = export(&b, FT_EXPORT_CXX, &rc, &err);
		if (rc != -1)
			fail_msg("config '%s' was accepted", bad[i]);
		assert_int_equal(err.status, FT_EFAIL);
		assert_non_null(strstr(err.msg, "cannot export config '"));
		assert_string_equal(h, "");	/* nothing written */
		free(h);
	}
	/* no parameters at all is a valid (if unusual) template */
	{
		struct ft_err err = { 0 };
		int rc;
		char *h;

		b.config[0] = '\0';
		h = export(&b, FT_EXPORT_CXX, &rc, &err);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(h, "(no parameters)"));
		assert_non_null(strstr(h, "constexpr int HEAD_DIM = 64;"));
		free(h);
	}
}

/* The winner across templates is exported as it is: a wgmma best names its
 * space, family and template and carries its own parameters (none of the
 * mma template's), and the regenerate line has no --space (without it export
 * takes the winner across spaces again). */
static void test_wgmma_winner(void **state)
{
	static const char *const want[] = {
		" *   template         attention_sm90 (xxh64 4455667788990011)\n",
		" *   space            attention_sm90 (family wgmma)\n",
		" *   config           NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=176,KV_STAGES=2,PINGPONG=1,"
		"PERSISTENT=1,Q_IN_REGS=0,NUM_SPLITS=1\n",
		"constexpr int NUM_CONSUMER_WG = 2;\n", "constexpr int BLOCK_M = 128;\n",
		"constexpr int BLOCK_N = 176;\n", "constexpr int KV_STAGES = 2;\n",
		"constexpr int PINGPONG = 1;\n", "constexpr int PERSISTENT = 1;\n",
		"constexpr int Q_IN_REGS = 0;\n", "constexpr int NUM_SPLITS = 1;\n",
		"constexpr int HEAD_DIM = 128;\n",
		"fatune export --arch sm_90 --shape 4x16x2048x128 --dtype fp16 --device 'NVIDIA H100 80GB HBM3'\n",
	};
	struct ft_best b = golden_best();
	struct ft_err err = { 0 };
	int rc;
	char *h;

	(void)state;
	strcpy(b.device, "NVIDIA H100 80GB HBM3");
	strcpy(b.template_name, "attention_sm90");
	strcpy(b.space, "attention_sm90");
	strcpy(b.family, "wgmma");
	strcpy(b.template_hash, "4455667788990011");
	b.shape = (struct ft_shape){ .b = 4, .h = 16, .s = 2048, .d = 128, .dtype = FT_FP16,
				     .s_kv = 2048, .h_kv = 16 };
	strcpy(b.config, "NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=176,KV_STAGES=2,PINGPONG=1,PERSISTENT=1,"
			 "Q_IN_REGS=0,NUM_SPLITS=1");
	h = export(&b, FT_EXPORT_CXX, &rc, &err);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(h, want[i]))
			fail_msg("the header lacks '%s':\n%s", want[i], h);
	assert_null(strstr(h, "NUM_WARPS"));
	assert_null(strstr(h, "--space"));
	assert_null(strstr(h, "family mma"));
	free(h);
}

/* ---- the dispatch table (export_dispatch.c): rows built here; collecting them,
 * the golden files and the compiled picks are tests/cli/072-dispatch.sh's part */

static struct ft_best row(int s, int causal, const char *config, double us)
{
	struct ft_best b;

	memset(&b, 0, sizeof(b));
	strcpy(b.arch, "sm_90");
	strcpy(b.device, "Evil */ GPU \"x\"");	/* must not end the comment or the JSON string */
	strcpy(b.space, "attention");
	strcpy(b.family, "mma");
	strcpy(b.template_name, "attention");
	strcpy(b.template_hash, "00112233aabbccdd");
	strcpy(b.compile_key, "0123456789abcdef");
	strcpy(b.fatune_version, "0.1.0");
	strcpy(b.updated_at, "2026-11-20T10:00:00Z");
	b.shape = (struct ft_shape){ .b = 2, .h = 8, .s = s, .d = 64, .causal = causal, .dtype = FT_FP16,
				     .s_kv = s, .h_kv = 8 };
	snprintf(b.config, sizeof(b.config), "%s", config);
	b.t_median_us = us;
	b.t_min_us = us;
	b.rel_err = NAN;
	return b;
}

static void table(struct ft_dispatch *d, struct ft_best *rows, int n)
{
	memset(d, 0, sizeof(*d));
	d->rows = rows;
	d->n = n;
	d->nparams = 2;
	strcpy(d->params[0], "TILE_N");
	strcpy(d->params[1], "NUM_SPLITS");
}

static void test_c_and_cxx(void **state)
{
	struct ft_best rows[2] = { row(512, 0, "TILE_N=64,NUM_SPLITS=1", 6.5), row(4096, 1, "TILE_N=128,NUM_SPLITS=-2", NAN) };
	struct ft_err err = { 0 };
	struct ft_dispatch d;
	char *c, *cxx;
	int rc;

	(void)state;
	table(&d, rows, 2);
	c = export_to(NULL, &d, FT_DISPATCH_C, &rc, &err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(c, "do not edit"));
	assert_non_null(strstr(c, "#define FATUNE_DISPATCH_COUNT 2\n"));
	assert_non_null(strstr(c, "\tint tile_n;\t/* TILE_N */\n\tint num_splits;\t/* NUM_SPLITS */\n"));
	/* rows in the given order, values in field order; an untimed row says -1 */
	assert_non_null(strstr(c, "{ 64, 0, 0, 512, 512, 2, 8, 8, 0, 6.50, 64, 1 },\n"));
	assert_non_null(strstr(c, "{ 64, 0, 1, 4096, 4096, 2, 8, 8, 0, -1.00, 128, -2 },\n"));
	assert_true(strstr(c, "6.50") < strstr(c, "-1.00"));
	assert_non_null(strstr(c, "4096x64 fp16 causal: not timed, template 00112233aabbccdd"));
	/* the device name cannot close the comment early */
	assert_null(strstr(c, "Evil */"));
	assert_non_null(strstr(c, "Evil * / GPU"));
	assert_non_null(strstr(c, "--device 'Evil * / GPU \"x\"' --style c"));
	assert_non_null(strstr(c, "fatune_dispatch_pick(int head_dim, int bf16, int causal"));
	cxx = export_to(NULL, &d, FT_DISPATCH_CXX, &rc, &err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(cxx, "namespace fatune {"));
	assert_non_null(strstr(cxx, "constexpr DispatchEntry kDispatchTable[] = {"));
	assert_non_null(strstr(cxx, "constexpr int kDispatchCount = 2;"));
	assert_non_null(strstr(cxx, "dispatch_pick(int head_dim, bool bf16, bool causal"));
	assert_non_null(strstr(cxx, "int kv_len = 0)"));
	assert_null(strstr(cxx, "--style c"));
	free(c);
	free(cxx);
}

static void test_json(void **state)
{
	struct ft_best rows[1] = { row(512, 0, "TILE_N=64,NUM_SPLITS=1", 6.5) };
	struct ft_err err = { 0 };
	struct ft_dispatch d;
	char *j;
	int rc;

	(void)state;
	table(&d, rows, 1);
	j = export_to(NULL, &d, FT_DISPATCH_JSON, &rc, &err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(j, "\"device\": \"Evil */ GPU \\\"x\\\"\""));
	assert_non_null(strstr(j, "\"params\": [\"TILE_N\", \"NUM_SPLITS\"]"));
	assert_non_null(strstr(j, "\"config\": {\"TILE_N\": 64, \"NUM_SPLITS\": 1}"));
	assert_non_null(strstr(j, "\"t_median_us\": 6.500, \"t_min_us\": 6.500, \"rel_err\": null"));
	assert_non_null(strstr(j, "\"rule\": \"1. only entries"));
	free(j);
}

static void test_empty_refused(void **state)
{
	struct ft_err err = { 0 };
	struct ft_dispatch d;
	char *out;
	int rc;

	(void)state;
	table(&d, NULL, 0);
	out = export_to(NULL, &d, FT_DISPATCH_C, &rc, &err);
	assert_int_equal(rc, -1);
	assert_int_equal(err.status, FT_EFAIL);
	assert_string_equal(out, "");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_cxx),   cmocka_unit_test(test_golden_c),
		cmocka_unit_test(test_golden_compiles), cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_shape_flags),  cmocka_unit_test(test_comment_safe),
		cmocka_unit_test(test_bad_configs),  cmocka_unit_test(test_wgmma_winner),
		cmocka_unit_test(test_c_and_cxx),    cmocka_unit_test(test_json),
		cmocka_unit_test(test_empty_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
