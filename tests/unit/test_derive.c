/* test_derive.c - the shipped spaces, which derive parameters, keep the feasible sets they had.
 *
 * The feasible-set test enumerates each shipped space and the same space as
 * it was before it derived anything (tests/spaces/enumerated/, every
 * parameter enumerated) over shapes of both families (GQA decode, bshd,
 * causal, each head dim) and compares the candidates that pass the
 * constraints and fatune's model check, with their configs and every
 * formula: the two must be the same, in the same order (a search goes
 * through them as before), while the shipped space enumerates fewer. derive itself (values, order, fixed configs, guards, errors) is
 * tested in test_enumerate.c.
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

static const struct ft_arch *arch(const char *name)
{
	const struct ft_arch *a = ft_arch_find(name, NULL);

	assert_non_null(a);
	return a;
}

/* ---- the shipped spaces: the same feasible set ----------------------------------- */

/* The feasible candidates of sp for shape on a, one line each (config and
 * formulas), in enumeration order, into *out; returns how many; *total gets
 * how many were enumerated. */
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
	*out = lines;
	return n;
}

static int by_text(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
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
	/* the same set: a derived parameter enumerated slower than another
	 * (BLOCK_M before KV_WARPGROUPS) orders the enumerated space otherwise */
	qsort(a, (size_t)na, sizeof(*a), by_text);
	qsort(b, (size_t)nb, sizeof(*b), by_text);
	for (int i = 0; i < na; i++) {
		if (strcmp(a[i], b[i]))
			fail_msg("%s %s: feasible candidates differ at %d: now '%s', before '%s'", space, shape_text, i, a[i],
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
	same_feasible("attention_sm90", "sm_90", "2x20x1536x128", 0, FT_FP16);	/* CLUSTER_M 2 in it */
	same_feasible("attention_sm90", "sm_90", "2x32x1x128,kv_len=4096,kv_heads=8", 0, FT_FP16);
	same_feasible("attention_sm90", "sm_90", "1x16x4096x256,layout=bshd", 1, FT_FP16);
	same_feasible("attention_sm90", "sm_90", "1x8x100x64", 0, FT_FP16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_mma),
		cmocka_unit_test(test_shipped_wgmma),
	};
	const char *dir = getenv("FATUNE_SOURCE_DIR");

	if (!dir) {
		fprintf(stderr, "test_derive: set FATUNE_SOURCE_DIR to the repository root\n");
		return 1;
	}
	snprintf(srcdir, sizeof(srcdir), "%s", dir);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
