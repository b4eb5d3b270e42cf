/* test_candidate.c - a candidate's macro list and launch (space/candidate.c),
 * on the shipped spaces: the macros come in NVRTC's order with fatune's own
 * last, launch-time parameters are not macros, and the launch follows the
 * space's formulas, the shape and the family's TMA plan. Also the identifier
 * gate of base/ident.c that every macro name passes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ident.h"
#include "space/candidate.h"

static char srcdir[FT_PATH_MAX];

static struct ft_space *load(const char *rel)
{
	struct ft_space *sp = calloc(1, sizeof(*sp));
	struct ft_err err = { 0 };
	char path[FT_PATH_MAX + 64];

	assert_non_null(sp);
	snprintf(path, sizeof(path), "%s/%s", srcdir, rel);
	if (ft_space_load(sp, path, &err))
		fail_msg("%s", err.msg);
	return sp;
}

static const struct ft_macro *find(const struct ft_build *b, const char *name)
{
	for (int i = 0; i < b->nmacros; i++)
		if (!strcmp(b->macros[i].name, name))
			return &b->macros[i];
	return NULL;
}

static void build_for(const struct ft_space *sp, const char *shape_text, int dtype, const char *arch,
		      const char *config, struct ft_candidate *c, struct ft_build *b)
{
	struct ft_shape shape;
	struct ft_err err = { 0 };
	long long values[FT_MAX_PARAMS];

	assert_int_equal(ft_shape_parse(shape_text, &shape, &err), 0);
	shape.dtype = dtype;
	if (ft_config_parse(sp, config, values, &err) ||
	    ft_candidate_eval(sp, &shape, ft_arch_find(arch, NULL), values, c, &err) ||
	    ft_candidate_build(sp, &shape, c, b, &err))
		fail_msg("%s", err.msg);
}

static void test_mma_decode(void **state)
{
	struct ft_space *sp = load("search_spaces/attention.yaml");
	struct ft_candidate c;
	struct ft_build b;
	int n = 0;

	(void)state;
	/* decode, GQA 32/8: packed, 8 splits, the combine kernel launched with
	 * programmatic dependent launch (sm_90) */
	build_for(sp, "2x32x1x128,kv_heads=8,kv_len=4096,layout=bshd", FT_BF16, "sm_90",
		  "NUM_WARPS_PER_BLOCK=1,TILE_M=16,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=0,NUM_SPLITS=8,"
		  "COMBINE_IN_KERNEL=0,PDL=1",
		  &c, &b);
	assert_int_equal(c.failed_constraint, -1);
	/* every compile-time parameter in space order, then fatune's own */
	for (int i = 0; i < sp->nparams; i++)
		if (sp->params[i].kind == FT_PARAM_COMPILE) {
			assert_string_equal(b.macros[n].name, sp->params[i].name);
			assert_int_equal(b.macros[n++].origin, FT_MACRO_PARAM);
		}
	assert_int_equal(b.nmacros, n + FT_FATUNE_MACRO_COUNT);
	for (int i = 0; i < FT_FATUNE_MACRO_COUNT; i++)
		assert_string_equal(b.macros[n + i].name, ft_fatune_macro_names[i]);
	assert_null(find(&b, "NUM_SPLITS")); /* a launch-time parameter */
	assert_int_equal(find(&b, "HEAD_DIM")->value, 128);
	assert_int_equal(find(&b, "FATUNE_BF16")->value, 1);
	assert_int_equal(find(&b, "FATUNE_ABI")->value, 2);
	assert_int_equal(find(&b, "PACK_GQA")->value, 1);
	/* bf16: 2 bytes * 128 * (16 + 2 * 64 * 2) */
	assert_int_equal(find(&b, "FATUNE_SMEM_BYTES")->value, 2 * 128 * (16 + 2 * 64 * 2));
	assert_int_equal(b.launch.dynamic_smem, 2 * 128 * (16 + 2 * 64 * 2));
	assert_int_equal(b.launch.threads, 32);
	/* one row block of 4 packed heads, times 8 splits; KV heads; batch */
	assert_int_equal(b.launch.grid[0], 8);
	assert_int_equal(b.launch.grid[1], 8);
	assert_int_equal(b.launch.grid[2], 2);
	assert_int_equal(b.launch.num_splits, 8);
	assert_int_equal(b.launch.combine_threads, 128);
	assert_int_equal(b.launch.combine_pdl, 1);
	assert_int_equal(b.launch.combine_grid[1], 32);
	assert_int_equal(b.launch.workspace_bytes, 0);
	assert_int_equal(b.launch.plan.tma[FT_TENSOR_Q].rows, 0); /* mma: no TMA */
	free(sp);
}

static void test_mma_in_kernel_combine(void **state)
{
	struct ft_space *sp = load("search_spaces/attention.yaml");
	struct ft_candidate c;
	struct ft_build b;

	(void)state;
	build_for(sp, "1x8x512x64", FT_FP16, "sm_89",
		  "NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=64,KV_STAGES=2,PACK_GQA=0,DENSE_KV=1,NUM_SPLITS=2,"
		  "COMBINE_IN_KERNEL=1,PDL=0",
		  &c, &b);
	assert_int_equal(c.failed_constraint, -1);
	assert_int_equal(b.launch.combine_threads, 0);
	assert_int_equal(b.launch.combine_pdl, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(b.launch.combine_grid[i], 0);
	/* one arrival counter per row block: 8 row blocks x 8 heads x 1 batch */
	assert_int_equal(b.launch.workspace_bytes, 4 * 8 * 8);
	assert_int_equal(b.launch.workspace_init, FT_WS_ZERO_ONCE);
	assert_int_equal(find(&b, "FATUNE_BF16")->value, 0);
	/* a constraint that fails is reported, not hidden */
	build_for(sp, "1x8x512x64", FT_FP16, "sm_89",
		  "NUM_WARPS_PER_BLOCK=4,TILE_M=64,TILE_N=64,KV_STAGES=2,PACK_GQA=1,DENSE_KV=1,NUM_SPLITS=2,"
		  "COMBINE_IN_KERNEL=1,PDL=0",
		  &c, &b);
	assert_string_equal(sp->constraints[c.failed_constraint].name, "pack_iff_gqa");
	free(sp);
}

static void test_wgmma_boxes(void **state)
{
	struct ft_space *sp = load("search_spaces/attention_sm90.yaml");
	char config[FT_CONFIG_MAX];
	long long values[FT_MAX_PARAMS];
	struct ft_candidate c;
	struct ft_build b;

	(void)state;
	for (int i = 0; i < sp->nparams; i++)
		values[i] = sp->params[i].values[0];
	ft_config_format(sp, values, config, sizeof(config));
	build_for(sp, "1x8x2048x128", FT_FP16, "sm_90", config, &c, &b);
	assert_true(b.launch.plan.tma[FT_TENSOR_Q].rows > 0);
	assert_int_equal(b.launch.plan.tma[FT_TENSOR_K].rows, values[ft_space_param(sp, "BLOCK_N")]);
	assert_true(b.launch.plan.tma[FT_TENSOR_K].swizzle == 128);
	free(sp);
}

static void test_ident(void **state)
{
	(void)state;
	assert_null(ft_ident_problem("TILE_M"));
	assert_null(ft_ident_problem("_tile"));
	assert_null(ft_ident_problem("integer"));
	assert_non_null(ft_ident_problem(""));
	assert_non_null(ft_ident_problem("2X"));
	assert_non_null(ft_ident_problem("A-B"));
	assert_non_null(ft_ident_problem("int"));
	assert_non_null(ft_ident_problem("auto"));
	assert_non_null(ft_ident_problem("class"));
	assert_non_null(ft_ident_problem("and_eq"));
	assert_non_null(ft_ident_problem("defined"));
	assert_non_null(ft_ident_problem("_Pragma"));
	assert_non_null(ft_ident_problem("A__B"));
	assert_non_null(ft_ident_problem("__VA_ARGS__"));
	assert_non_null(ft_ident_problem("X1234567890123456789012345678901234567890123456789012345678901234"));
	assert_true(ft_is_fatune_macro("FATUNE_ABI"));
	assert_false(ft_is_fatune_macro("fatune_abi"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mma_decode),
		cmocka_unit_test(test_mma_in_kernel_combine),
		cmocka_unit_test(test_wgmma_boxes),
		cmocka_unit_test(test_ident),
	};
	const char *dir = getenv("FATUNE_SOURCE_DIR");

	if (!dir) {
		fprintf(stderr, "test_candidate: set FATUNE_SOURCE_DIR to the repository root\n");
		return 1;
	}
	snprintf(srcdir, sizeof(srcdir), "%s", dir);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
