/* test_enumerate.c - candidates: order, counts, constraints, formulas, fixed configs, derived parameters,
 * the passing enumeration, speed.
 *
 * Expected values are computed here in C from the same definitions (mixed-
 * radix order with the first parameter slowest, the formulas written out), so
 * the engine is checked against an independent oracle rather than itself.
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

#include "space/candidate.h"
#include "space/space.h"

static char srcdir[FT_PATH_MAX];
static char tmpdir[64];

static const struct ft_shape shape = { 2, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };

static const struct ft_arch *arch(const char *name)
{
	const struct ft_arch *a = ft_arch_find(name, NULL);

	assert_non_null(a);
	return a;
}

/* Writes a space file into the scratch dir (with template k.cu) and loads it:
 * 0, or -1 with the loader's message in err. */
static int try_load_text(struct ft_space *sp, const char *name, const char *body, struct ft_err *err)
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

/* The same, failing the test when the space does not load. */
static void load_text(struct ft_space *sp, const char *name, const char *body)
{
	struct ft_err err = { 0 };

	if (try_load_text(sp, name, body, &err))
		fail_msg("%s", err.msg);
}

static int setup_group(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	strcpy(tmpdir, "/tmp/fatune-enum-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof(path), "%s/k.cu", tmpdir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("/* empty */\n", f);
	return fclose(f);
}

static int teardown_group(void **state)
{
	char cmd[96];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

static long long ceil_div(long long a, long long b)
{
	return (a + b - 1) / b;	/* positive operands only, here */
}

/* ---- the motivating fixture ------------------------------------------------------ */

static void test_order_and_formulas(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	struct ft_candidate c;
	struct ft_enum *e = NULL;
	char path[FT_PATH_MAX];
	long long n = 0;
	int rc, seen_h100 = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/spaces/static_smem.yaml", srcdir);
	if (ft_space_load(&sp, path, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_89"), NULL, &err), 0);
	assert_int_equal(ft_enum_total(e), 3 * 4 * 2);
	while ((rc = ft_enum_next(e, &c, &err)) == 1) {
		/* mixed radix, first parameter slowest */
		long long nw = sp.params[0].values[n / 8];
		long long tm = sp.params[1].values[n / 2 % 4];
		long long kpw = sp.params[2].values[n % 2];
		long long kv = kpw * nw;

		assert_int_equal(c.index, n);
		assert_int_equal(c.values[0], nw);
		assert_int_equal(c.values[1], tm);
		assert_int_equal(c.values[2], kpw);
		assert_int_equal(c.failed_constraint, -1);	/* D = 64, <= 1024 threads */
		assert_int_equal(c.smem_bytes, 2 * 64 * (tm + 2 * kv) + 4 * tm * kv);
		assert_int_equal(c.threads, nw * 32);
		assert_int_equal(c.grid[0], ceil_div(512, tm));
		assert_int_equal(c.grid[1], 8);
		assert_int_equal(c.grid[2], 2);
		assert_int_equal(c.combine_threads, 0);
		if (nw == 12 && tm == 128 && kpw == 16) {
			assert_int_equal(c.smem_bytes, 0x28000);	/* the H100 config: 160 KB */
			seen_h100 = 1;
		}
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 24);
	assert_true(seen_h100);
	/* the end is sticky */
	assert_int_equal(ft_enum_next(e, &c, &err), 0);
	ft_enum_close(e);

	/* D = 80 breaks the first constraint for every candidate: formulas are 0 */
	{
		struct ft_shape d80 = shape;
		d80.d = 80;
		assert_int_equal(ft_enum_open(&e, &sp, &d80, arch("sm_89"), NULL, &err), 0);
		n = 0;
		while ((rc = ft_enum_next(e, &c, &err)) == 1) {
			assert_int_equal(c.failed_constraint, 0);
			assert_int_equal(c.smem_bytes, 0);
			n++;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(n, 24);
		ft_enum_close(e);
	}
}

/* ---- constraints, context, combine --------------------------------------------- */

static void test_constraints(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	struct ft_candidate c;
	struct ft_enum *e = NULL;
	int rc, counts[4] = { 0 };

	(void)state;
	load_text(&sp, "constraints.yaml",
		  "fatune_space: 1\n"
		  "name: constraints\n"
		  "template: {file: k.cu, kernel: k, combine_kernel: kc, shared_memory: dynamic}\n"
		  "parameters:\n"
		  "  X: [0, 1, 2, 3, 4]\n"
		  "  Y: {range: [1, 4]}\n"
		  "  NUM_SPLITS: {values: [1, 2], kind: launch}\n"
		  "constraints:\n"
		  "  x_nonzero: X != 0\n"
		  "  guarded_division: S / X >= 200\n"	/* would be NULL for X = 0 */
		  "  y_divides: Y % 2 == 0 OR Y == 1\n"
		  "smem_bytes: ceil_div(S, X) * Y + SMEM_OPTIN + CC + DTYPE_BYTES + CAUSAL\n"
		  "launch:\n"
		  "  threads: iif(Y > 1, 64, 32) * B\n"
		  "  grid: [ceil_div(S, X * Y) * NUM_SPLITS, H, B]\n"
		  "  combine_threads: 128\n"
		  "  combine_grid: [ceil_div(S, 128), H * NUM_SPLITS, THREADS_PER_SM]\n");
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_90"), NULL, &err), 0);
	assert_int_equal(ft_enum_total(e), 5 * 4 * 2);
	for (long long n = 0; (rc = ft_enum_next(e, &c, &err)) == 1; n++) {
		long long x = n / 8, y = n / 2 % 4 + 1, splits = n % 2 + 1;
		int failed = x == 0 ? 0 : 512 / x < 200 ? 1 : !(y % 2 == 0 || y == 1) ? 2 : -1;

		assert_int_equal(c.index, n);
		assert_int_equal(c.values[0], x);
		assert_int_equal(c.values[1], y);
		assert_int_equal(c.values[2], splits);
		assert_int_equal(c.failed_constraint, failed);
		counts[failed + 1]++;
		if (failed >= 0) {
			assert_int_equal(c.smem_bytes, 0);
			assert_int_equal(c.grid[0], 0);
			continue;
		}
		assert_int_equal(c.smem_bytes, ceil_div(512, x) * y + 232448 + 90 + 2 + 0);
		assert_int_equal(c.threads, (y > 1 ? 64 : 32) * 2);
		assert_int_equal(c.grid[0], ceil_div(512, x * y) * splits);
		assert_int_equal(c.combine_threads, 128);
		assert_int_equal(c.combine_grid[0], 4);
		assert_int_equal(c.combine_grid[1], 8 * splits);
		assert_int_equal(c.combine_grid[2], 2048);
	}
	assert_int_equal(rc, 0);
	/* X=0: 8; X=3,4 (512/X < 200): 16; Y=3 of the rest: 4; passing: X=1,2 x Y=1,2,4 x 2 */
	assert_int_equal(counts[1], 8);
	assert_int_equal(counts[2], 16);
	assert_int_equal(counts[3], 4);
	assert_int_equal(counts[0], 12);
	ft_enum_close(e);
}

/* ---- errors while enumerating ----------------------------------------------------- */

static void test_runtime_errors(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	struct ft_candidate c;
	struct ft_enum *e = NULL;
	int rc, n = 0;
	char want[256];

	(void)state;
	/* TILE = 16 makes the grid divide by zero: the third candidate */
	load_text(&sp, "divzero.yaml",
		  "fatune_space: 1\n"
		  "name: divzero\n"
		  "template: {file: k.cu, kernel: k, shared_memory: static}\n"
		  "parameters:\n"
		  "  TILE: [64, 32, 16]\n"
		  "  W: [1]\n"
		  "constraints:\n"
		  "  fine: TILE > 0\n"
		  "smem_bytes: 0\n"
		  "launch:\n"
		  "  threads: 32\n"
		  "  grid: [S / (TILE - 16), H, ceil_div(B, TILE - 16)]\n");
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_89"), NULL, &err), 0);
	while ((rc = ft_enum_next(e, &c, &err)) == 1)
		n++;
	assert_int_equal(rc, -1);
	assert_int_equal(n, 2);
	assert_int_equal(err.status, FT_EINPUT);
	/* the first failing expression of the candidate, by key and line */
	snprintf(want, sizeof(want), "%s/divzero.yaml:12: key 'launch.grid[0]': ", tmpdir);
	if (strncmp(err.msg, want, strlen(want)) || !strstr(err.msg, "candidate 2 (TILE=16,W=1)"))
		fail_msg("message: %s", err.msg);
	/* after an error, no more candidates */
	assert_int_equal(ft_enum_next(e, &c, &err), -1);
	ft_enum_close(e);

	/* ceil_div by zero, alone: named too */
	load_text(&sp, "ceil0.yaml",
		  "fatune_space: 1\n"
		  "name: ceil0\n"
		  "template: {file: k.cu, kernel: k, shared_memory: static}\n"
		  "parameters:\n"
		  "  TILE: [16, 32]\n"
		  "smem_bytes: 0\n"
		  "launch:\n"
		  "  threads: 32\n"
		  "  grid: [1, ceil_div(H, TILE - 16), B]\n");
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_89"), NULL, &err), 0);
	assert_int_equal(ft_enum_next(e, &c, &err), -1);
	if (!strstr(err.msg, ":9: key 'launch.grid[1]': ") ||
	    !strstr(err.msg, "ceil_div(8, 0): division by zero") || !strstr(err.msg, "candidate 0"))
		fail_msg("message: %s", err.msg);
	ft_enum_close(e);

	/* a constraint that is NULL (not guarded by an earlier one) is an error */
	load_text(&sp, "nullc.yaml",
		  "fatune_space: 1\n"
		  "name: nullc\n"
		  "template: {file: k.cu, kernel: k, shared_memory: static}\n"
		  "parameters:\n"
		  "  X: [1, 0]\n"
		  "constraints:\n"
		  "  big: S % X == 0\n"
		  "smem_bytes: 0\n"
		  "launch:\n"
		  "  threads: 32\n"
		  "  grid: [1, 1, 1]\n");
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_89"), NULL, &err), 0);
	assert_int_equal(ft_enum_next(e, &c, &err), 1);
	assert_int_equal(ft_enum_next(e, &c, &err), -1);
	if (!strstr(err.msg, ":7: key 'constraints.big': ") || !strstr(err.msg, "NULL") ||
	    !strstr(err.msg, "candidate 1 (X=0)"))
		fail_msg("message: %s", err.msg);
	ft_enum_close(e);

	/* a bad expression is found by open, with its key and line */
	load_text(&sp, "badexpr.yaml",
		  "fatune_space: 1\n"
		  "name: badexpr\n"
		  "template: {file: k.cu, kernel: k, shared_memory: static}\n"
		  "parameters:\n"
		  "  X: [1]\n"
		  "smem_bytes: 0\n"
		  "launch:\n"
		  "  threads: abs(X, 2)\n"
		  "  grid: [1, 1, 1]\n");
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_89"), NULL, &err), -1);
	assert_null(e);
	if (!strstr(err.msg, ":8: key 'launch.threads': bad expression 'abs(X, 2)'"))
		fail_msg("message: %s", err.msg);
}

/* ---- fixed configs --------------------------------------------------------------- */

static void test_fixed(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	struct ft_candidate c;
	struct ft_enum *e = NULL;
	char path[FT_PATH_MAX];
	long long fixed[FT_MAX_PARAMS];

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/spaces/static_smem.yaml", srcdir);
	if (ft_space_load(&sp, path, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(ft_config_parse(&sp, "NUM_WARPS_PER_BLOCK=8,TILE_M=32,KEYS_PER_WARP=16",
					 fixed, &err),
			 0);
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_89"), fixed, &err), 0);
	assert_int_equal(ft_enum_total(e), 1);
	assert_int_equal(ft_enum_next(e, &c, &err), 1);
	/* its place in the full enumeration: 8 is value 1, 32 value 1, 16 value 1 */
	assert_int_equal(c.index, 1 * 8 + 1 * 2 + 1);
	assert_int_equal(c.values[0], 8);
	assert_int_equal(c.values[1], 32);
	assert_int_equal(c.values[2], 16);
	assert_int_equal(c.smem_bytes, 2 * 64 * (32 + 2 * 128) + 4 * 32 * 128);
	assert_int_equal(c.threads, 256);
	assert_int_equal(ft_enum_next(e, &c, &err), 0);
	ft_enum_close(e);

	/* a value outside the lists is refused */
	fixed[1] = 48;
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_89"), fixed, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "key 'parameters.TILE_M': 48 is not one of its values"));
}

/* The default space's COMBINE_IN_KERNEL: no combine launch, a workspace of
 * one counter per row block (zero_once), and never with one split. Its PDL:
 * a programmatic dependent combine launch (combine_pdl 1) only for a launched
 * combine kernel on sm_90+. */
static void test_combine_in_kernel(void **state)
{
	static struct ft_space sp;
	static const struct ft_shape decode = { 1, 32, 1, 128, 0, FT_FP16, 8192, 8, FT_LAYOUT_BHSD };
	static const char *const base =
		"NUM_WARPS_PER_BLOCK=1,TILE_M=16,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1";
	static const struct {
		int splits, in_kernel, pdl;
		const char *arch;
		long long combine_threads, workspace;
		const char *rejected;	/* the constraint that rejects it, NULL: accepted */
	} cases[] = {
		{ 16, 0, 0, "sm_90", 128, 0, NULL },
		{ 16, 1, 0, "sm_90", 0, 4 * 1 * 8 * 1, NULL },	/* 1 row block x 8 KV heads x batch 1 */
		{ 1, 1, 0, "sm_90", 0, 0, "combine_in_kernel_splits" },	/* nothing to merge */
		{ 16, 0, 1, "sm_90", 128, 0, NULL },		/* the combine launched with PDL */
		{ 16, 1, 1, "sm_90", 0, 0, "pdl_for_a_combine_launch" },	/* no combine launch */
		{ 1, 0, 1, "sm_90", 0, 0, "pdl_for_a_combine_launch" },	/* no split */
		{ 16, 0, 1, "sm_89", 0, 0, "pdl_for_a_combine_launch" },	/* griddepcontrol is sm_90+ */
	};
	struct ft_err err = { 0 };
	char path[FT_PATH_MAX], cfg[256];
	long long fixed[FT_MAX_PARAMS];

	(void)state;
	snprintf(path, sizeof(path), "%s/search_spaces/attention.yaml", srcdir);
	if (ft_space_load(&sp, path, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(sp.workspace_init, FT_WS_ZERO_ONCE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ft_enum *e = NULL;
		struct ft_candidate c;

		snprintf(cfg, sizeof(cfg), "%s,NUM_SPLITS=%d,COMBINE_IN_KERNEL=%d,PDL=%d", base,
			 cases[i].splits, cases[i].in_kernel, cases[i].pdl);
		if (ft_config_parse(&sp, cfg, fixed, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(ft_enum_open(&e, &sp, &decode, arch(cases[i].arch), fixed, &err), 0);
		assert_int_equal(ft_enum_next(e, &c, &err), 1);
		ft_enum_close(e);
		if (cases[i].rejected) {
			assert_true(c.failed_constraint >= 0);
			assert_string_equal(sp.constraints[c.failed_constraint].name, cases[i].rejected);
			continue;
		}
		assert_int_equal(c.failed_constraint, -1);
		assert_int_equal(c.combine_pdl, cases[i].pdl);
		assert_int_equal(c.combine_threads, cases[i].combine_threads);
		assert_int_equal(c.workspace_bytes, cases[i].workspace);
		assert_int_equal(c.grid[0], cases[i].splits);
	}
}

/* ---- derived parameters (derive:) ----------------------------------------------------- */

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

static void test_derive_values_and_order(void **state)
{
	struct ft_space sp;
	struct ft_shape sh = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_err err = { 0 };
	struct ft_enum *e = NULL;
	struct ft_candidate c;
	char cfg[FT_CONFIG_MAX];
	int n = 0, rc;

	(void)state;
	if (try_load_text(&sp, "small.yaml", small, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(sp.nparams, 4);
	assert_string_equal(sp.params[3].name, "ROWS_PER_WARP");	/* declared under derive: alone: last */
	assert_int_equal(sp.nderived, 2);
	assert_int_equal(sp.derived[0], 1);
	assert_int_equal(sp.derived[1], 3);
	assert_int_equal(ft_space_candidates(&sp, &sh, arch("sm_90")), 4 * 2);

	assert_int_equal(ft_enum_open(&e, &sp, &sh, arch("sm_90"), NULL, &err), 0);
	assert_int_equal(ft_enum_total(e), 8);
	while ((rc = ft_enum_next(e, &c, &err)) == 1) {
		long long warps = 1LL << (n / 2), tile_n = n % 2 ? 64 : 32;
		assert_int_equal(c.index, n);
		assert_int_equal(c.values[0], warps);
		assert_int_equal(c.values[1], 16 * warps);
		assert_int_equal(c.values[2], tile_n);
		assert_int_equal(c.values[3], 16);
		/* the derived parameters' guards first, then the constraints */
		if (16 * warps > 64) {	/* 128 is not among TILE_M's values: its guard */
			assert_int_equal(c.failed_constraint, sp.nconstraints + 0);
		} else if (16 * warps * tile_n > 4096) {
			assert_int_equal(c.failed_constraint, 0);
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
	sh.h_kv = 2;
	assert_int_equal(ft_enum_open(&e, &sp, &sh, arch("sm_90"), NULL, &err), 0);
	assert_int_equal(ft_enum_next(e, &c, &err), 1);
	assert_int_equal(c.values[3], 116);
	ft_enum_close(e);
}

static void test_derive_fixed_config(void **state)
{
	struct ft_space sp;
	struct ft_shape sh = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_err err = { 0 };
	struct ft_candidate c;
	long long values[FT_MAX_PARAMS];
	char why[FT_EXPR_MAX + 256];
	int line = 0;

	(void)state;
	if (try_load_text(&sp, "small.yaml", small, &err))
		fail_msg("%s", err.msg);
	/* what the enumeration gives, given whole: accepted, its formulas as enumerated */
	assert_int_equal(ft_config_parse(&sp, "WARPS=2,TILE_M=32,TILE_N=64,ROWS_PER_WARP=16", values, &err), 0);
	assert_int_equal(ft_candidate_eval(&sp, &sh, arch("sm_90"), values, &c, &err), 0);
	assert_int_equal(c.failed_constraint, -1);
	assert_int_equal(c.smem_bytes, 2 * 64 * (32 + 16));
	/* a derived value the shape does not give: that parameter's guard */
	assert_int_equal(ft_config_parse(&sp, "WARPS=2,TILE_M=64,TILE_N=32,ROWS_PER_WARP=16", values, &err), 0);
	assert_int_equal(ft_candidate_eval(&sp, &sh, arch("sm_90"), values, &c, &err), 0);
	assert_int_equal(c.failed_constraint, sp.nconstraints + 0);
	ft_space_guard_text(&sp, c.failed_constraint, &line, why, sizeof(why));
	assert_non_null(strstr(why, "derived parameter 'TILE_M'"));
	assert_int_equal(line, 9);
	/* a derived parameter with no values takes any integer in a config, and its guard checks it */
	assert_int_equal(ft_config_parse(&sp, "WARPS=2,TILE_M=32,TILE_N=32,ROWS_PER_WARP=7", values, &err), 0);
	assert_int_equal(ft_candidate_eval(&sp, &sh, arch("sm_90"), values, &c, &err), 0);
	assert_int_equal(c.failed_constraint, sp.nconstraints + 1);
	ft_space_guard_text(&sp, c.failed_constraint, &line, why, sizeof(why));
	assert_non_null(strstr(why, "derived parameter 'ROWS_PER_WARP'"));
	assert_int_equal(line, 10);
	/* a listed derived parameter still refuses a value outside its list */
	assert_int_equal(ft_config_parse(&sp, "WARPS=2,TILE_M=48,TILE_N=32,ROWS_PER_WARP=16", values, &err), -1);
	assert_non_null(strstr(err.msg, "TILE_M=48 is not in the space"));
}

static void test_derive_errors(void **state)
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
		assert_int_equal(try_load_text(&sp, "small.yaml", body, &err), -1);
		assert_int_equal(err.status, FT_EINPUT);
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
	}
	/* a division by zero in a derive names the derive's key at enumeration */
	snprintf(body, sizeof(body),
		 "fatune_space: 1\nname: small\ntemplate: {file: k.cu, kernel: k, shared_memory: dynamic}\n"
		 "parameters:\n  WARPS: [1, 0]\nderive:\n  PER: 64 / WARPS\n"
		 "smem_bytes: 64 * PER\nlaunch: {threads: 32, grid: [S, H, B]}\n");
	if (try_load_text(&sp, "small.yaml", body, &err))
		fail_msg("%s", err.msg);
	{
		struct ft_shape sh = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
		struct ft_enum *e = NULL;
		struct ft_candidate c;

		assert_int_equal(ft_enum_open(&e, &sp, &sh, arch("sm_90"), NULL, &err), 0);
		assert_int_equal(ft_enum_next(e, &c, &err), 1);
		assert_int_equal(c.values[1], 64);
		assert_int_equal(ft_enum_next(e, &c, &err), -1);
		assert_non_null(strstr(err.msg, "small.yaml:7: key 'derive.PER'"));
		ft_enum_close(e);
	}
}

/* A derived parameter written as a list: one of its expressions, a choice
 * enumerated in the parameter's place; a choice equal to an earlier one of
 * its list is rejected (no config twice), as is one outside its values. */
static void test_derive_choice(void **state)
{
	static const char text[] = "fatune_space: 1\n"
				   "name: choice\n"
				   "template: {file: k.cu, kernel: k, shared_memory: dynamic}\n"
				   "parameters:\n"
				   "  W: [1, 2, 4]\n"
				   "  T: [16, 32, 64, 128]\n"
				   "  N: [7]\n"
				   "derive:\n"
				   "  T: [16 * W, 32 * W, min(16 * W, 64) * iif(W == 4, 2, 1)]\n"
				   "smem_bytes: 64 * T\n"
				   "launch: {threads: 32 * W, grid: [S, H, B]}\n";
	/* W = 1: 16, 32, 16 (a repeat); 2: 32, 64, 32 (a repeat); 4: 64, 128, 128 (a repeat) */
	static const long long want_t[9] = { 16, 32, 16, 32, 64, 32, 64, 128, 128 };
	struct ft_space sp;
	struct ft_shape sh = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	struct ft_err err = { 0 };
	struct ft_enum *e = NULL;
	struct ft_candidate c;
	long long values[FT_MAX_PARAMS];
	int n = 0, rc;

	(void)state;
	load_text(&sp, "choice.yaml", text);
	assert_int_equal(sp.params[1].nchoices, 3);
	assert_int_equal(ft_space_candidates(&sp, &sh, arch("sm_90")), 3 * 3 * 1);
	assert_int_equal(ft_enum_open(&e, &sp, &sh, arch("sm_90"), NULL, &err), 0);
	while ((rc = ft_enum_next(e, &c, &err)) == 1) {
		assert_int_equal(c.values[0], 1LL << (n / 3));	/* W: 1, 2, 4 */
		assert_int_equal(c.values[1], want_t[n]);
		assert_int_equal(c.values[2], 7);
		assert_int_equal(c.failed_constraint, n % 3 == 2 ? sp.nconstraints + 0 : -1);
		if (n % 3 != 2)
			assert_int_equal(c.smem_bytes, 64 * want_t[n]);
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 9);
	ft_enum_close(e);
	/* given whole: one of the choices passes, another value of the list does not */
	assert_int_equal(ft_config_parse(&sp, "W=2,T=64,N=7", values, &err), 0);
	assert_int_equal(ft_candidate_eval(&sp, &sh, arch("sm_90"), values, &c, &err), 0);
	assert_int_equal(c.failed_constraint, -1);
	assert_int_equal(ft_config_parse(&sp, "W=2,T=16,N=7", values, &err), 0);
	assert_int_equal(ft_candidate_eval(&sp, &sh, arch("sm_90"), values, &c, &err), 0);
	assert_int_equal(c.failed_constraint, sp.nconstraints + 0);
}

/* ---- the passing enumeration ------------------------------------------------------ */

/* ft_enum_open_passing gives exactly the candidates of ft_enum_open whose
 * constraints hold, field for field and with the same indices; reached counts
 * the skipped ones too. */
static void same_as_filtered(const struct ft_space *sp, const struct ft_shape *sh, const char *an)
{
	struct ft_err err = { 0 };
	struct ft_enum *all = NULL, *pass = NULL;
	struct ft_candidate a, p;
	long long n = 0, npass = 0;
	int rc;

	assert_int_equal(ft_enum_open(&all, sp, sh, arch(an), NULL, &err), 0);
	assert_int_equal(ft_enum_open_passing(&pass, sp, sh, arch(an), &err), 0);
	assert_int_equal(ft_enum_reached(pass), 0);
	while ((rc = ft_enum_next(all, &a, &err)) == 1) {
		n++;
		if (a.failed_constraint >= 0)
			continue;
		assert_int_equal(ft_enum_next(pass, &p, &err), 1);
		if (memcmp(&a, &p, sizeof(a)))
			fail_msg("%s at %s: candidate %lld differs (passing gave index %lld)", sp->path, an,
				 a.index, p.index);
		assert_int_equal(ft_enum_reached(pass), a.index + 1);
		npass++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(ft_enum_next(pass, &p, &err), 0);
	assert_int_equal(ft_enum_reached(pass), n);
	assert_int_equal(n, ft_enum_total(pass));
	ft_enum_close(all);
	ft_enum_close(pass);
	print_message("%s at %s: %lld of %lld pass\n", sp->path, an, npass, n);
}

static void test_passing(void **state)
{
	static struct ft_space sp;
	static const char *const shipped[] = { "search_spaces/attention.yaml", "search_spaces/attention_sm90.yaml",
					       "search_spaces/attention_decode.yaml" };
	static const struct ft_shape shapes[] = {
		{ 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD },
		{ 4, 16, 2048, 128, 1, FT_BF16, 2048, 16, FT_LAYOUT_BHSD },
		{ 2, 40, 1, 128, 0, FT_FP16, 8192, 8, FT_LAYOUT_BSHD },
	};
	struct ft_err err = { 0 };
	struct ft_enum *e = NULL;
	struct ft_candidate c;
	char path[FT_PATH_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", srcdir, shipped[i]);
		if (ft_space_load(&sp, path, &err))
			fail_msg("%s", err.msg);
		for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
			same_as_filtered(&sp, &shapes[k], "sm_90");
			same_as_filtered(&sp, &shapes[k], "sm_89");
		}
	}
	/* choices (a repeat fails its guard) and the constraints fixture */
	load_text(&sp, "choice_p.yaml",
		  "fatune_space: 1\n"
		  "name: choice\n"
		  "template: {file: k.cu, kernel: k, shared_memory: dynamic}\n"
		  "parameters:\n"
		  "  W: [1, 2, 4]\n"
		  "  T: [16, 32, 64, 128]\n"
		  "derive:\n"
		  "  T: [16 * W, 32 * W, min(16 * W, 64) * iif(W == 4, 2, 1)]\n"
		  "constraints:\n"
		  "  not_32: T != 32\n"
		  "smem_bytes: 64 * T\n"
		  "launch: {threads: 32 * W, grid: [S, H, B]}\n");
	same_as_filtered(&sp, &shape, "sm_90");

	/* a failure in a candidate the passing enumeration does not produce is
	 * named as the full enumeration names it: candidate 2 (X=0), after
	 * candidate 0 passed and candidate 1 (512 % 3) was skipped */
	load_text(&sp, "nullc_p.yaml",
		  "fatune_space: 1\n"
		  "name: nullc\n"
		  "template: {file: k.cu, kernel: k, shared_memory: static}\n"
		  "parameters:\n"
		  "  X: [1, 3, 0]\n"
		  "constraints:\n"
		  "  big: S % X == 0\n"
		  "smem_bytes: 0\n"
		  "launch:\n"
		  "  threads: 32\n"
		  "  grid: [1, 1, 1]\n");
	assert_int_equal(ft_enum_open_passing(&e, &sp, &shape, arch("sm_89"), &err), 0);
	assert_int_equal(ft_enum_next(e, &c, &err), 1);
	assert_int_equal(c.index, 0);
	assert_int_equal(ft_enum_next(e, &c, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	if (!strstr(err.msg, ":7: key 'constraints.big': ") || !strstr(err.msg, "candidate 2 (X=0)"))
		fail_msg("message: %s", err.msg);
	assert_int_equal(ft_enum_next(e, &c, &err), -1);
	ft_enum_close(e);
}

/* ---- laziness and speed ---------------------------------------------------------- */

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* A space of 64^6 = 6.9e10 candidates opens and yields its first thousand
 * at once: nothing proportional to its size happens up front. */
static void test_lazy(void **state)
{
	static struct ft_space sp;
	static char body[8192];
	struct ft_err err = { 0 };
	struct ft_candidate c;
	struct ft_enum *e = NULL;
	size_t n;
	double t0;

	(void)state;
	n = (size_t)snprintf(body, sizeof(body),
			     "fatune_space: 1\nname: huge\n"
			     "template: {file: k.cu, kernel: k, shared_memory: static}\n"
			     "parameters:\n");
	for (int p = 0; p < 6; p++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "  P%d: {range: [1, 64]}\n", p);
	snprintf(body + n, sizeof(body) - n,
		 "constraints:\n  c: P0 + P5 > 2\nsmem_bytes: P0 * P5\n"
		 "launch:\n  threads: 32\n  grid: [P1, P2, P3]\n");
	load_text(&sp, "huge.yaml", body);
	t0 = now();
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_89"), NULL, &err), 0);
	assert_int_equal(ft_enum_total(e), 68719476736LL);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(ft_enum_next(e, &c, &err), 1);
		assert_int_equal(c.index, i);
		assert_int_equal(c.values[5], i % 64 + 1);
		assert_int_equal(c.values[4], i / 64 % 64 + 1);
		assert_int_equal(c.failed_constraint, i % 64 == 0 ? 0 : -1);	/* P0 = P5 = 1 */
	}
	ft_enum_close(e);
	/* a sanity bound, generous on purpose: a sort or a materialised join
	 * of 6.9e10 rows would take hours */
	assert_true(now() - t0 < 1.0);
}

/* 100 000 candidates (5 parameters of 10 values), three constraints and five
 * formulas each, enumerated and filtered in well under a second. */
static void test_speed_100k(void **state)
{
	static struct ft_space sp;
	static char body[8192];
	struct ft_err err = { 0 };
	struct ft_candidate c;
	struct ft_enum *e = NULL;
	long long count = 0, pass = 0, want_pass = 0;
	size_t n;
	double t0, dt, cpu0, cpu;
	int rc;

	(void)state;
	n = (size_t)snprintf(body, sizeof(body),
			     "fatune_space: 1\nname: big\n"
			     "template: {file: k.cu, kernel: k, shared_memory: dynamic}\n"
			     "parameters:\n");
	for (int p = 0; p < 5; p++)
		n += (size_t)snprintf(body + n, sizeof(body) - n,
				      "  P%d: {range: [16, 160, 16]}\n", p);
	snprintf(body + n, sizeof(body) - n,
		 "constraints:\n"
		 "  rows: P0 %% (P1 / 16) == 0\n"
		 "  pow2: is_pow2(P2) OR P2 == 48\n"
		 "  fits: DTYPE_BYTES * D * (P0 + 2 * P1 * ceil_div(P3, 64)) <= SMEM_OPTIN\n"
		 "smem_bytes: DTYPE_BYTES * D * (P0 + 2 * P1 * ceil_div(P3, 64))\n"
		 "launch:\n  threads: P4 * 2\n  grid: [ceil_div(S, P0), H, B]\n");
	load_text(&sp, "big.yaml", body);
	for (long long a = 16; a <= 160; a += 16)
		for (long long b = 16; b <= 160; b += 16)
			for (long long d = 16; d <= 160; d += 16)
				for (long long f = 16; f <= 160; f += 16) {
					int p2 = d == 16 || d == 32 || d == 64 || d == 128 || d == 48;
					long long smem = 2 * 64 * (a + 2 * b * ceil_div(f, 64));
					want_pass += (a % (b / 16) == 0 && p2 && smem <= 232448) * 10;
				}
	t0 = now();
	cpu0 = cpu_now();
	assert_int_equal(ft_enum_open(&e, &sp, &shape, arch("sm_90"), NULL, &err), 0);
	assert_int_equal(ft_enum_total(e), 100000);
	while ((rc = ft_enum_next(e, &c, &err)) == 1) {
		count++;
		pass += c.failed_constraint < 0;
	}
	dt = now() - t0;
	cpu = cpu_now() - cpu0;
	ft_enum_close(e);
	assert_int_equal(rc, 0);
	assert_int_equal(count, 100000);
	assert_int_equal(pass, want_pass);
	print_message("100000 candidates enumerated and filtered in %.3f s wall, %.3f s CPU "
		      "(%lld pass)\n",
		      dt, cpu, pass);
	/* a sanity bound, generous on purpose (about 0.3 s on the 2-core dev box) */
	assert_true(dt < 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_formulas),
		cmocka_unit_test(test_constraints),
		cmocka_unit_test(test_runtime_errors),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_combine_in_kernel),
		cmocka_unit_test(test_derive_values_and_order),
		cmocka_unit_test(test_derive_fixed_config),
		cmocka_unit_test(test_derive_errors),
		cmocka_unit_test(test_derive_choice),
		cmocka_unit_test(test_passing),
		cmocka_unit_test(test_lazy),
		cmocka_unit_test(test_speed_100k),
	};
	const char *dir = getenv("FATUNE_SOURCE_DIR");

	if (!dir) {
		fprintf(stderr, "test_enumerate: set FATUNE_SOURCE_DIR to the repository root\n");
		return 1;
	}
	snprintf(srcdir, sizeof(srcdir), "%s", dir);
	return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
