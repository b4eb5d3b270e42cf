/* test_export.c - build_config.h: golden files byte for byte, determinism, the
 * macros in the form that lives with -D flags, the launch, the gate; the
 * dispatch table's three formats (export_dispatch.c).
 *
 * tests/golden/build_config.h (cxx style) and build_config_c.h (c style) were
 * written from golden_best() below over the shipped attention space and
 * checked by hand; any byte of difference fails here, and the actual output is
 * left in /tmp for a diff.
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
#include "space/candidate.h"
#include "test_files.h"

static const char *const golden_config =
	"NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=64,KV_STAGES=2,PACK_GQA=0,DENSE_KV=1,NUM_SPLITS=2,COMBINE_IN_KERNEL=0,PDL=0";

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
	strcpy(b.config, golden_config);
	strcpy(b.compile_key, "0123456789abcdef");
	b.t_median_us = 9.8765;
	b.t_min_us = 9.5;
	b.rel_err = 3.0517578125e-4;
	strcpy(b.updated_at, "2026-11-20T10:00:00Z");
	b.run_id = 3;
	return b;
}

/* A shipped space, loaded once per name. */
static const struct ft_space *space(const char *name)
{
	static struct ft_space spaces[2];
	int i = !strcmp(name, "attention_sm90");
	struct ft_err err = { 0 };
	char path[4096];

	if (!spaces[i].name[0]) {
		snprintf(path, sizeof(path), "%s/search_spaces/%s.yaml", getenv("FATUNE_SOURCE_DIR"), name);
		if (ft_space_load(&spaces[i], path, &err))
			fail_msg("%s", err.msg);
	}
	return &spaces[i];
}

/* ft_export_header of b (its space by b->space, its config parsed there) or
 * ft_dispatch_write (d, style a format) into a malloc'ed string; *rc
 * receives its result. */
static char *export_src(const struct ft_best *b, const struct ft_dispatch *d, int style, int from_config,
			const char *space_arg, const char *db_arg, int *rc, struct ft_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	static struct ft_build build;
	static long long values[FT_MAX_PARAMS];
	struct ft_export_src src = { 0 };

	if (!d) {
		const struct ft_space *sp = space(b->space);
		struct ft_candidate c;

		if (ft_config_parse(sp, b->config, values, err) ||
		    ft_candidate_eval(sp, &b->shape, ft_arch_find(b->arch, NULL), values, &c, err) ||
		    ft_candidate_build(sp, &b->shape, &c, &build, err))
			fail_msg("%s", err->msg);
		src = (struct ft_export_src){ .best = b, .sp = sp, .values = values, .build = &build,
					      .nvrtc_arch = sp->family->nvrtc_arch(ft_arch_find(b->arch, NULL)),
					      .space_arg = space_arg, .db_arg = db_arg, .from_config = from_config,
					      .style = (enum ft_export_style)style };
	}
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	*rc = d ? ft_dispatch_write(f, d, (enum ft_dispatch_format)style, err) : ft_export_header(f, &src, err);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *export_to(const struct ft_best *b, const struct ft_dispatch *d, int style, int *rc,
		       struct ft_err *err)
{
	return export_src(b, d, style, 0, NULL, NULL, rc, err);
}

static char *export(const struct ft_best *b, enum ft_export_style style, int *rc, struct ft_err *err)
{
	return export_to(b, NULL, (int)style, rc, err);
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
	want = test_read_file(path, &n);
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

/* The golden headers are real headers: a C and a C++ compiler accept them and
 * see the values, as macros (#if sees them) and, in C++, as constants too; a
 * -D flag of the same value is fine, another one is the header's #error. The
 * C++ half is skipped where no c++ is installed. */
static void test_golden_compiles(void **state)
{
	char path[4096], cmd[8400];

	(void)state;
	golden_path(path, sizeof(path), "build_config_c.h");
	snprintf(cmd, sizeof(cmd),
		 "printf '#include \"%s\"\\n#if FATUNE_BF16 || !TILE_M\\n#error macros\\n#endif\\n"
		 "_Static_assert(TILE_M == 64 && FATUNE_LAUNCH_NUM_SPLITS == 2 && HEAD_DIM == 64"
		 " && IS_CAUSAL == 0 && FATUNE_ABI == 2 && FATUNE_LAUNCH_THREADS == 128, \"values\");\\n' |"
		 " cc -std=c11 -Wall -Werror -DHEAD_DIM=64 -DTILE_M=64 -fsyntax-only -x c -",
		 path);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "printf '#include \"%s\"\\n' | cc -std=c11 -DHEAD_DIM=128 -fsyntax-only -x c - 2>&1 |"
		 " grep -q 'HEAD_DIM: build_config.h says 64'",
		 path);
	assert_int_equal(system(cmd), 0);
	if (system("command -v c++ >/dev/null 2>&1") != 0)
		skip();
	golden_path(path, sizeof(path), "build_config.h");
	snprintf(cmd, sizeof(cmd),
		 "printf '#include \"%s\"\\n#include \"%s\"\\nstatic_assert(NUM_WARPS_PER_BLOCK == 4 && KV_STAGES == 2"
		 " && HEAD_DIM == 64 && fatune::build_config::threads == 128, \"values\");\\n' |"
		 " c++ -std=c++11 -Wall -Werror -DHEAD_DIM=64 -fsyntax-only -x c++ -",
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
	strcpy(b.config, "NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=32,KV_STAGES=2,PACK_GQA=0,DENSE_KV=1,"
			 "NUM_SPLITS=1,COMBINE_IN_KERNEL=0,PDL=0");
	h = export(&b, FT_EXPORT_C, &rc, &err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(h, "#define TILE_N 32\n"));
	assert_non_null(strstr(h, "#ifndef HEAD_DIM\n#define HEAD_DIM 128\n#elif HEAD_DIM != 128\n#error \"HEAD_DIM: "));
	assert_non_null(strstr(h, "#define IS_CAUSAL 1\n"));
	assert_non_null(strstr(h, "#define FATUNE_BF16 1\n"));
	/* 2 bytes * 128 * (64 + 2 * 32 * 2) */
	assert_non_null(strstr(h, "#define FATUNE_SMEM_BYTES 49152\n"));
	assert_non_null(strstr(h, "#define FATUNE_LAUNCH_SMEM_BYTES 49152\n#define FATUNE_LAUNCH_SMEM_OPTIN 0\n"));
	assert_non_null(strstr(h, "fatune export --arch sm_90 --shape 1x8x512x128 --causal --dtype bf16 --style c\n"));
	assert_non_null(strstr(h, "relative error   not measured"));
	assert_null(strstr(h, "--device"));
	assert_null(strstr(h, "constexpr"));
	free(h);
	h = export(&b, FT_EXPORT_CXX, &rc, &err);
	assert_non_null(strstr(h, "#define IS_CAUSAL 1\n"));
	assert_non_null(strstr(h, "constexpr unsigned threads = FATUNE_LAUNCH_THREADS;\n"));
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
	strcpy(b.updated_at, "2026?\?/");
	h = export(&b, FT_EXPORT_CXX, &rc, &err);
	assert_int_equal(rc, 0);
	/* every comment that opens also closes, and nothing else closes one */
	assert_int_equal(count(h, "/*"), count(h, "*/"));
	assert_null(strstr(h, "\n#define X"));
	assert_null(strstr(h, "??"));
	assert_non_null(strstr(h, "--device 'Bad * / #define X 1 / * it'\\''s_new'"));
	free(h);
}

/* The stored-config parser the dispatch table uses: anything but NAME=int,...
 * with names the gate allows is refused. */
static void test_bad_configs(void **state)
{
	static const char *const bad[] = {
		"A",	    "A=",	  "=1",	      "1A=2",	      "A=1,",	       "A=1,,B=2",
		"A=x",	    "A=1.5",	  "A=1 ",     " A=1",	      "A=99999999999", "A=1,A=2",
		"HEAD_DIM=64", "IS_CAUSAL=1", "A=1;B=2", "A-B=1",   "A=--1",       "int=3",
		"class=1", "FATUNE_ABI=2", "_Bool=1", "A__B=1", "*/int q;/*=1",
	};
	struct ft_export_entry e[FT_EXPORT_MAX_ENTRIES];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ft_err err = { 0 };
		int n;

		if (ft_export_parse_config(bad[i], e, &n, &err) != -1)
			fail_msg("config '%s' was accepted", bad[i]);
		assert_int_equal(err.status, FT_EFAIL);
	}
	{
		struct ft_err err = { 0 };
		int n = -1;

		assert_int_equal(ft_export_parse_config("", e, &n, &err), 0);
		assert_int_equal(n, 0);
		assert_int_equal(ft_export_parse_config("TILE=128,OFFSET=-3", e, &n, &err), 0);
		assert_int_equal(n, 2);
		assert_int_equal(e[1].value, -3);
	}
}

/* A wgmma config: its own parameters, the sm_90a build, its TMA boxes; a
 * space and a database that are not the defaults are named in the
 * regenerate line. */
static void test_wgmma_winner(void **state)
{
	static const char *const want[] = {
		" *   template         attention_sm90 (xxh64 4455667788990011)\n",
		" *   space            attention_sm90 (family wgmma)\n",
		" *   config           NUM_CONSUMER_WG=2,BLOCK_M=128,BLOCK_N=176,KV_STAGES=2,PINGPONG=1,"
		"PERSISTENT=1,Q_IN_REGS=0,INTRA_WG_OVERLAP=1,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0\n",
		"#define NUM_CONSUMER_WG 2\n", "#define BLOCK_M 128\n", "#define BLOCK_N 176\n",
		"#define PERSISTENT 1\n", "#define FATUNE_LAUNCH_NUM_SPLITS 1\n", "#define HEAD_DIM 128\n",
		"#define FATUNE_LAUNCH_KERNEL \"fatune_sm90_fwd\"\n", "#define FATUNE_LAUNCH_TMA_K_ROWS 176\n",
		"#define FATUNE_LAUNCH_TMA_K_SWIZZLE 128\n", "#define FATUNE_LAUNCH_SMEM_OPTIN 1\n",
		" *   nvcc -arch=sm_90a -cubin -o attention_sm90.cubin kernel.cu\n",
		"fatune export --arch sm_90 --shape 4x16x2048x128 --dtype fp16 --device 'NVIDIA H100 80GB HBM3'"
		" --space 'spaces/sm90.yaml' --db 'my.db'\n",
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
			 "Q_IN_REGS=0,INTRA_WG_OVERLAP=1,TILE_ORDER=0,MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0");
	h = export_src(&b, NULL, FT_EXPORT_CXX, 0, "spaces/sm90.yaml", "my.db", &rc, &err);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(h, want[i]))
			fail_msg("the header lacks '%s':\n%s", want[i], h);
	assert_null(strstr(h, "NUM_WARPS"));
	assert_null(strstr(h, "family mma"));
	assert_null(strstr(h, "#define NUM_SPLITS"));	/* a launch-time parameter: no macro */
	free(h);
}

/* --config: nothing measured is claimed, and the regenerate line repeats the config. */
static void test_chosen_config(void **state)
{
	struct ft_best b = golden_best();
	struct ft_err err = { 0 };
	int rc;
	char *h;

	(void)state;
	h = export_src(&b, NULL, FT_EXPORT_C, 1, NULL, NULL, &rc, &err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(h, " * Chosen with --config for sm_90 (not measured by fatune).\n"));
	assert_null(strstr(h, "latency"));
	assert_null(strstr(h, "NVIDIA"));
	assert_non_null(strstr(h, "--dtype fp16 --config 'NUM_WARPS_PER_BLOCK=4,"));
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

/* a space of the two parameters the rows use, with no expression the
 * generated check could translate: exact shapes only */
static struct ft_space two_params;
static struct ft_candidate cands[2];
static struct ft_launch launches[2];

static void table(struct ft_dispatch *d, struct ft_best *rows, int n)
{
	struct ft_err err = { 0 };

	memset(d, 0, sizeof(*d));
	memset(&two_params, 0, sizeof(two_params));
	two_params.nparams = 2;
	strcpy(two_params.params[0].name, "TILE_N");
	strcpy(two_params.params[1].name, "NUM_SPLITS");
	two_params.abi = 2;
	for (int i = 0; i < 2; i++)
		launches[i] = (struct ft_launch){ .smem_bytes = 1000 + i, .threads = 128, .grid = { 4, 8, 2 } };
	d->sp = &two_params;
	d->arch = ft_arch_find("sm_90", &err);
	d->cand = n ? cands : NULL;
	d->launch = n ? launches : NULL;
	strcpy(d->untranslated, "a test table");
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
	assert_non_null(strstr(c, "{ 64, 0, 0, 512, 512, 2, 8, 8, 0, 6.50, 64, 1,\n\t  { 1000, 128, 4, 8, 2, 0, 0, 0, 0, 0 }, { 0 } },\n"));
	assert_non_null(strstr(c, "{ 64, 0, 1, 4096, 4096, 2, 8, 8, 0, -1.00, 128, -2,\n\t  { 1001, 128, 4, 8, 2, 0, 0, 0, 0, 0 }, { 0 } },\n"));
	/* no translated space: each entry only for its own shape, with the reason */
	assert_non_null(strstr(c, "/* exact shapes only: a test table */"));
	assert_non_null(strstr(c, "static inline int\nfatune_dispatch_eval(const struct fatune_dispatch_entry *e"));
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
	assert_non_null(strstr(cxx, "int kv_len = 0, int kv_heads = 0, bool bshd = false)"));
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
	assert_non_null(strstr(j, "\"rule\": \"1. an entry matches only"));
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
		cmocka_unit_test(test_empty_refused), cmocka_unit_test(test_chosen_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
