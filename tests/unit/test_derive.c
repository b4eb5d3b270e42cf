/* test_derive.c - derived parameters: the shipped spaces keep their feasible sets, derive's semantics.
 *
 * The feasible-set test enumerates each shipped space and the same space as
 * it was before it derived anything (tests/spaces/enumerated/, every
 * parameter enumerated) over shapes of both families (GQA decode, bshd,
 * causal, each head dim) and compares the candidates that pass the
 * constraints and fatune's model check, with their configs and every
 * formula: the two must be the same sets, while the shipped space enumerates
 * fewer. The other tests check derive itself on small spaces written here:
 * values, use by constraints, formulas and later derives, config order,
 * fixed configs, the guard of a listed derived parameter, and errors.
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

#include "compile/feasibility.h"
#include "space/candidate.h"
#include "space/space.h"

static char srcdir[FT_PATH_MAX];
static char tmpdir[64];

static const struct ft_arch *arch(const char *name)
{
	const struct ft_arch *a = ft_arch_find(name, NULL);

	assert_non_null(a);
	return a;
}

/* Writes a space file into the scratch dir (with template k.cu); loads it
 * (0) or returns -1 with the message in err. */
static int load_text(struct ft_space *sp, const char *name, const char *body, struct ft_err *err)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(body, 1, strlen(body), f), strlen(body));
	assert_int_equal(fclose(f), 0);
	return ft_space_load(sp, path, err);
}

static int setup_group(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	strcpy(tmpdir, "/tmp/fatune-derive-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof(path), "%s/k.cu", tmpdir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("extern \"C\" __global__ void k() {}\n", f);
	return fclose(f);
}

static int teardown_group(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

/* ---- the shipped spaces: the same feasible set ----------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The feasible candidates of sp for shape on a, one line each (config and
 * formulas), sorted, into *out; returns how many; *total gets how many were
 * enumerated. */
static int feasible(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_arch *a,
		    char ***out, long long *total)
{
	struct ft_enum *e = NULL;
	struct ft_candidate c;
	struct ft_err err = { 0 };
	int n = 0, cap = 64, rc;
	char **lines = malloc(cap * sizeof(*lines));

	assert_non_null(lines);
	if (ft_enum_open(&e, sp, shape, a, NULL, &err))
		fail_msg("%s", err.msg);
	*total = 0;
	while ((rc = ft_enum_next(e, &c, &err)) == 1) {
		struct ft_trial *t = calloc(1, sizeof(*t));
		char cfg[FT_CONFIG_MAX], line[FT_CONFIG_MAX + 256];

		assert_non_null(t);
		(*total)++;
		if (c.failed_constraint < 0 && ft_feasible_model(sp, a, &c, t)) {
			ft_config_format(sp, c.values, cfg, sizeof(cfg));
			snprintf(line, sizeof(line), "%s smem=%lld thr=%lld grid=%lld,%lld,%lld comb=%lld:%lld,%lld,%lld pdl=%d ws=%lld",
				 cfg, c.smem_bytes, c.threads, c.grid[0], c.grid[1], c.grid[2], c.combine_threads,
				 c.combine_grid[0], c.combine_grid[1], c.combine_grid[2], c.combine_pdl,
				 c.workspace_bytes);
			if (n == cap) {
				cap *= 2;
				lines = realloc(lines, cap * sizeof(*lines));
				assert_non_null(lines);
			}
			lines[n] = strdup(line);
			assert_non_null(lines[n]);
			n++;
		}
		free(t);
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	ft_enum_close(e);
	qsort(lines, n, sizeof(*lines), cmp_str);
	*out = lines;
	return n;
}

static void same_feasible(const char *space, const char *archname, const char *shape_text, int causal,
			  enum ft_dtype dtype)
{
	struct ft_space *now = malloc(sizeof(*now)), *before = malloc(sizeof(*before));
	struct ft_shape shape = { 0 };
	struct ft_err err = { 0 };
	char path[FT_PATH_MAX];
	char **a, **b;
	long long total_now, total_before;
	int na, nb;

	assert_non_null(now);
	assert_non_null(before);
	snprintf(path, sizeof(path), "%s/search_spaces/%s.yaml", srcdir, space);
	if (ft_space_load(now, path, &err))
		fail_msg("%s", err.msg);
	snprintf(path, sizeof(path), "%s/tests/spaces/enumerated/%s.yaml", srcdir, space);
	if (ft_space_load(before, path, &err))
		fail_msg("%s", err.msg);
	if (ft_shape_parse(shape_text, &shape, &err))
		fail_msg("%s", err.msg);
	shape.causal = causal;
	shape.dtype = dtype;
	assert_true(now->nderived > 0);
	assert_int_equal(before->nderived, 0);
	/* the config's identity: the same parameters in the same order */
	assert_int_equal(now->nparams, before->nparams);
	for (int i = 0; i < now->nparams; i++)
		assert_string_equal(now->params[i].name, before->params[i].name);

	na = feasible(now, &shape, arch(archname), &a, &total_now);
	nb = feasible(before, &shape, arch(archname), &b, &total_before);
	print_message("%s %s %s causal=%d: %d feasible of %lld enumerated (before: %d of %lld)\n", space, archname,
		      shape_text, causal, na, total_now, nb, total_before);
	assert_true(total_now < total_before);
	assert_int_equal(total_now, ft_space_candidates(now, &shape, arch(archname)));
	assert_int_equal(na, nb);
	for (int i = 0; i < na; i++) {
		if (strcmp(a[i], b[i]))
			fail_msg("%s %s: feasible sets differ at %d: now '%s', before '%s'", space, shape_text, i, a[i],
				 b[i]);
		free(a[i]);
		free(b[i]);
	}
	free(a);
	free(b);
	free(now);
	free(before);
}

static void test_shipped_mma(void **state)
{
	(void)state;
	same_feasible("attention", "sm_90", "1x8x512x64", 0, FT_FP16);	/* the mission shape */
	same_feasible("attention", "sm_90", "1x8x512x64", 1, FT_BF16);
	same_feasible("attention", "sm_80", "4x16x2048x128", 1, FT_FP16);
	same_feasible("attention", "sm_89", "2x32x1x128,kv_len=4096,kv_heads=8", 0, FT_FP16);	/* GQA decode */
	same_feasible("attention", "sm_90", "1x32x1x64,kv_len=8192,kv_heads=1,layout=bshd", 0, FT_BF16);
	same_feasible("attention", "sm_90", "2x16x1024x32,kv_heads=4,layout=bshd", 1, FT_FP16);
}

static void test_shipped_wgmma(void **state)
{
	(void)state;
	same_feasible("attention_sm90", "sm_90", "1x8x512x64", 0, FT_FP16);
	same_feasible("attention_sm90", "sm_90", "4x16x2048x128", 1, FT_BF16);
	same_feasible("attention_sm90", "sm_90", "2x32x1x128,kv_len=4096,kv_heads=8", 0, FT_FP16);
	same_feasible("attention_sm90", "sm_90", "1x16x4096x256,layout=bshd", 1, FT_FP16);
	same_feasible("attention_sm90", "sm_90", "1x8x100x64", 0, FT_FP16);
}

/* ---- derive itself ------------------------------------------------------------------ */

/* WARPS enumerated, TILE_M derived from it (with values), ROWS_PER_WARP derived
 * from TILE_M (a later derive, declared only under derive:), a constraint and
 * the smem formula reading derived values. */
static const char small[] = "fatune_space: 1\n"
			    "name: small\n"
			    "template: {file: k.cu, kernel: k, shared_memory: dynamic}\n"
			    "parameters:\n"
			    "  WARPS: [1, 2, 4, 8]\n"
			    "  TILE_M: [16, 32, 64]\n"
			    "  TILE_N: [32, 64]\n"
			    "derive:\n"
			    "  TILE_M: 16 * WARPS\n"
			    "  ROWS_PER_WARP: TILE_M / WARPS + iif(H_KV < H, 100, 0)\n"
			    "constraints:\n"
			    "  narrow: TILE_M * TILE_N <= 4096\n"
			    "smem_bytes: 2 * D * (TILE_M + ROWS_PER_WARP)\n"
			    "launch: {threads: 32 * WARPS, grid: [S, H, B]}\n";

static void test_values_and_order(void **state)
{
	struct ft_space sp;
	struct ft_shape shape = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_err err = { 0 };
	struct ft_enum *e = NULL;
	struct ft_candidate c;
	char cfg[FT_CONFIG_MAX];
	int n = 0, rc;

	(void)state;
	if (load_text(&sp, "small.yaml", small, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(sp.nparams, 4);
	assert_string_equal(sp.params[3].name, "ROWS_PER_WARP");	/* declared under derive: alone: last */
	assert_int_equal(sp.nderived, 2);
	assert_int_equal(sp.derived[0], 1);
	assert_int_equal(sp.derived[1], 3);
	assert_int_equal(ft_space_candidates(&sp, &shape, arch("sm_90")), 4 * 2);

	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_90"), NULL, &err), 0);
	assert_int_equal(ft_enum_total(e), 8);
	while ((rc = ft_enum_next(e, &c, &err)) == 1) {
		long long warps = 1LL << (n / 2), tile_n = n % 2 ? 64 : 32;
		assert_int_equal(c.index, n);
		assert_int_equal(c.values[0], warps);
		assert_int_equal(c.values[1], 16 * warps);
		assert_int_equal(c.values[2], tile_n);
		assert_int_equal(c.values[3], 16);
		/* the constraints first, then the derived parameters' guards */
		if (16 * warps * tile_n > 4096) {
			assert_int_equal(c.failed_constraint, 0);
		} else if (16 * warps > 64) {	/* 128 is not among TILE_M's values: its guard */
			assert_int_equal(c.failed_constraint, sp.nconstraints + 0);
		} else {
			assert_int_equal(c.failed_constraint, -1);
			assert_int_equal(c.smem_bytes, 2 * 64 * (16 * warps + 16));
		}
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 8);
	ft_enum_close(e);
	/* the config of a rejected candidate holds its derived values too */
	ft_config_format(&sp, c.values, cfg, sizeof(cfg));
	assert_string_equal(cfg, "WARPS=8,TILE_M=128,TILE_N=64,ROWS_PER_WARP=16");

	/* grouped-query: a later derive reads the shape */
	shape.h_kv = 2;
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_90"), NULL, &err), 0);
	assert_int_equal(ft_enum_next(e, &c, &err), 1);
	assert_int_equal(c.values[3], 116);
	ft_enum_close(e);
}

static void test_fixed_config(void **state)
{
	struct ft_space sp;
	struct ft_shape shape = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_err err = { 0 };
	struct ft_candidate c;
	long long values[FT_MAX_PARAMS];
	char why[FT_EXPR_MAX + 256];
	int line = 0;

	(void)state;
	if (load_text(&sp, "small.yaml", small, &err))
		fail_msg("%s", err.msg);
	/* what the enumeration gives, given whole: accepted, its formulas as enumerated */
	assert_int_equal(ft_config_parse(&sp, "WARPS=2,TILE_M=32,TILE_N=64,ROWS_PER_WARP=16", values, &err), 0);
	assert_int_equal(ft_candidate_eval(&sp, &shape, arch("sm_90"), values, &c, &err), 0);
	assert_int_equal(c.failed_constraint, -1);
	assert_int_equal(c.smem_bytes, 2 * 64 * (32 + 16));
	/* a derived value the shape does not give: that parameter's guard */
	assert_int_equal(ft_config_parse(&sp, "WARPS=2,TILE_M=64,TILE_N=32,ROWS_PER_WARP=16", values, &err), 0);
	assert_int_equal(ft_candidate_eval(&sp, &shape, arch("sm_90"), values, &c, &err), 0);
	assert_int_equal(c.failed_constraint, sp.nconstraints + 0);
	ft_space_guard_text(&sp, c.failed_constraint, &line, why, sizeof(why));
	assert_non_null(strstr(why, "derived parameter 'TILE_M'"));
	assert_int_equal(line, 9);
	/* a derived parameter with no values takes any integer in a config, and its guard checks it */
	assert_int_equal(ft_config_parse(&sp, "WARPS=2,TILE_M=32,TILE_N=32,ROWS_PER_WARP=7", values, &err), 0);
	assert_int_equal(ft_candidate_eval(&sp, &shape, arch("sm_90"), values, &c, &err), 0);
	assert_int_equal(c.failed_constraint, sp.nconstraints + 1);
	ft_space_guard_text(&sp, c.failed_constraint, &line, why, sizeof(why));
	assert_non_null(strstr(why, "derived parameter 'ROWS_PER_WARP'"));
	assert_int_equal(line, 10);
	/* a listed derived parameter still refuses a value outside its list */
	assert_int_equal(ft_config_parse(&sp, "WARPS=2,TILE_M=48,TILE_N=32,ROWS_PER_WARP=16", values, &err), -1);
	assert_non_null(strstr(err.msg, "TILE_M=48 is not in the space"));
}

static void test_errors(void **state)
{
	static const struct {
		const char *derive, *want;
	} cases[] = {
		{ "  A_X: B_X + 1\n  B_X: 2\n", "small.yaml:9: key 'derive.A_X': 'B_X' is derived after this entry" },
		{ "  A_X: A_X + 1\n", "key 'derive.A_X': 'A_X' is derived by this very entry" },
		{ "  A_X: NOPE * 2\n", "key 'derive.A_X': unknown name 'NOPE'" },
		{ "  A_X: 1\n  a_x: 2\n", "'a_x' is derived twice" },
		{ "  warps: 2\n", "'warps' differs from parameter 'WARPS' (line 5) only in case" },
		{ "  HEAD_DIM: 2\n", "derived parameter name 'HEAD_DIM' cannot be used" },
		{ "  A_X: min(WARPS\n", "'(' not closed" },
	};
	char body[2048];
	struct ft_space sp;
	struct ft_err err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(body, sizeof(body),
			 "fatune_space: 1\nname: small\ntemplate: {file: k.cu, kernel: k, shared_memory: dynamic}\n"
			 "parameters:\n  WARPS: [1, 2]\nconstraints:\n  c: 1\nderive:\n%s"
			 "smem_bytes: 64\nlaunch: {threads: 32 * WARPS, grid: [S, H, B]}\n",
			 cases[i].derive);
		memset(&err, 0, sizeof(err));
		assert_int_equal(load_text(&sp, "small.yaml", body, &err), -1);
		assert_int_equal(err.status, FT_EINPUT);
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
	}
	/* a division by zero in a derive names the derive's key at enumeration */
	snprintf(body, sizeof(body),
		 "fatune_space: 1\nname: small\ntemplate: {file: k.cu, kernel: k, shared_memory: dynamic}\n"
		 "parameters:\n  WARPS: [1, 0]\nderive:\n  PER: 64 / WARPS\n"
		 "smem_bytes: 64 * PER\nlaunch: {threads: 32, grid: [S, H, B]}\n");
	if (load_text(&sp, "small.yaml", body, &err))
		fail_msg("%s", err.msg);
	{
		struct ft_shape shape = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
		struct ft_enum *e = NULL;
		struct ft_candidate c;

		assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_90"), NULL, &err), 0);
		assert_int_equal(ft_enum_next(e, &c, &err), 1);
		assert_int_equal(c.values[1], 64);
		assert_int_equal(ft_enum_next(e, &c, &err), -1);
		assert_non_null(strstr(err.msg, "small.yaml:7: key 'derive.PER'"));
		ft_enum_close(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_mma),
		cmocka_unit_test(test_shipped_wgmma),
		cmocka_unit_test(test_values_and_order),
		cmocka_unit_test(test_fixed_config),
		cmocka_unit_test(test_errors),
	};
	const char *dir = getenv("FATUNE_SOURCE_DIR");

	if (!dir) {
		fprintf(stderr, "test_derive: set FATUNE_SOURCE_DIR to the repository root\n");
		return 1;
	}
	snprintf(srcdir, sizeof(srcdir), "%s", dir);
	return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
