/* test_family.c - the template families (family.c, family_mma.c,
 * family_wgmma.c): the table, which archs each can target and which NVRTC
 * target that takes, what the wgmma family requires of its space (at load
 * time, through ft_space_load, too) and the TMA boxes it plans per candidate.
 *
 * The shipped spaces are read from $FATUNE_SOURCE_DIR; the arch table is
 * arch.c's. No GPU.
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

#include "space/family.h"
#include "space/space.h"

static const char *srcdir(void)
{
	const char *dir = getenv("FATUNE_SOURCE_DIR");

	if (!dir)
		fail_msg("set FATUNE_SOURCE_DIR to the repository root");
	return dir;
}

/* A space of family f with the parameters the wgmma family reads. */
static struct ft_space *new_space(const struct ft_family *f, int abi)
{
	struct ft_space *sp = calloc(1, sizeof(*sp));

	assert_non_null(sp);
	snprintf(sp->path, sizeof(sp->path), "spaces/unit.yaml");
	snprintf(sp->name, sizeof(sp->name), "unit");
	sp->family = f;
	sp->abi = abi;
	sp->nparams = 3;
	snprintf(sp->params[0].name, FT_NAME_MAX, "NUM_CONSUMER_WG");
	sp->params[0].kind = FT_PARAM_COMPILE;
	snprintf(sp->params[1].name, FT_NAME_MAX, "BLOCK_M");
	sp->params[1].kind = FT_PARAM_COMPILE;
	snprintf(sp->params[2].name, FT_NAME_MAX, "BLOCK_N");
	sp->params[2].kind = FT_PARAM_COMPILE;
	for (int i = 0; i < sp->nparams; i++)
		sp->params[i].nvalues = 1;
	return sp;
}

static void test_table(void **state)
{
	(void)state;
	assert_int_equal(ft_family_count(), 3);
	assert_ptr_equal(ft_family_at(0), &ft_family_mma);
	assert_ptr_equal(ft_family_at(1), &ft_family_wgmma);
	assert_ptr_equal(ft_family_at(2), &ft_family_cuda);
	assert_null(ft_family_at(-1));
	assert_null(ft_family_at(3));
	assert_ptr_equal(ft_family_find("cuda"), &ft_family_cuda);
	assert_null(ft_family_cuda.default_spaces[0]);
	assert_ptr_equal(ft_family_find("mma"), &ft_family_mma);
	assert_ptr_equal(ft_family_find("wgmma"), &ft_family_wgmma);
	assert_null(ft_family_find("WGMMA"));
	assert_null(ft_family_find("tcgen05"));
	assert_null(ft_family_find(""));
	assert_string_equal(ft_family_names(), "mma, wgmma, cuda");
	assert_string_equal(ft_family_names(), "mma, wgmma, cuda"); /* built once, the same after */
	for (int i = 0; i < ft_family_count(); i++) {
		const struct ft_family *f = ft_family_at(i);
		assert_non_null(f->summary);
		assert_non_null(f->unsupported);
		assert_non_null(f->nvrtc_arch);
	}
}

/* mma runs on every arch of the table, compiled for the arch itself; wgmma on
 * sm_90 only (not sm_100 or sm_120: wgmma is an sm_90a instruction), always
 * compiled for sm_90a. */
static void test_archs(void **state)
{
	int hopper = 0;

	(void)state;
	for (int i = 0; i < ft_arch_count(); i++) {
		const struct ft_arch *a = ft_arch_at(i);
		const char *why = ft_family_wgmma.unsupported(a);

		assert_null(ft_family_mma.unsupported(a));
		assert_string_equal(ft_family_mma.nvrtc_arch(a), a->name);
		assert_null(ft_family_cuda.unsupported(a));
		assert_string_equal(ft_family_cuda.nvrtc_arch(a), a->name);
		assert_string_equal(ft_family_wgmma.nvrtc_arch(a), "sm_90a");
		if (!strcmp(a->name, "sm_90")) {
			assert_null(why);
			hopper++;
		} else {
			if (!why)
				fail_msg("wgmma accepted %s", a->name);
			assert_non_null(strstr(why, "needs Hopper (sm_90)"));
		}
	}
	assert_int_equal(hopper, 1);
}

/* The space that cannot run names the family and its reason; the arch is
 * decided before the ABI. */
static void test_space_unfit(void **state)
{
	struct ft_space *sp = new_space(&ft_family_wgmma, 2);
	struct ft_shape sh = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	char buf[256];
	const char *why;

	(void)state;
	assert_null(ft_space_unfit(sp, ft_arch_find("sm_90", NULL), &sh, buf, sizeof(buf)));
	why = ft_space_unfit(sp, ft_arch_find("sm_89", NULL), &sh, buf, sizeof(buf));
	assert_non_null(why);
	assert_non_null(strstr(why, "family 'wgmma' needs Hopper (sm_90)"));
	sp->family = &ft_family_mma;
	assert_null(ft_space_unfit(sp, ft_arch_find("sm_89", NULL), &sh, buf, sizeof(buf)));
	free(sp);
}

static void test_check_space(void **state)
{
	struct ft_space *sp = new_space(&ft_family_wgmma, 2);
	struct ft_err err = { 0 };

	(void)state;
	assert_int_equal(ft_family_wgmma.check_space(sp, &err), 0);
	/* TMA descriptors exist in ABI v2 only */
	sp->abi = 1;
	assert_int_equal(ft_family_wgmma.check_space(sp, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "spaces/unit.yaml: key 'template.abi'"));
	assert_non_null(strstr(err.msg, "add 'abi: 2'"));
	sp->abi = 2;
	/* the box sizes come from BLOCK_M and BLOCK_N, compile-time parameters */
	snprintf(sp->params[2].name, FT_NAME_MAX, "BLOCK_KV");
	memset(&err, 0, sizeof(err));
	assert_int_equal(ft_family_wgmma.check_space(sp, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "compile-time parameter BLOCK_N"));
	snprintf(sp->params[2].name, FT_NAME_MAX, "BLOCK_N");
	sp->params[1].kind = FT_PARAM_LAUNCH;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ft_family_wgmma.check_space(sp, &err), -1);
	assert_non_null(strstr(err.msg, "compile-time parameter BLOCK_M"));
	/* mma asks nothing of its space */
	assert_null(ft_family_mma.check_space);
	free(sp);
}

/* Each family's shipped space loads, names its family and declares what the
 * family needs; a wgmma space in ABI v1 is refused at load time. */
static void test_default_spaces(void **state)
{
	char path[FT_PATH_MAX], bad[64] = "/tmp/fatune-test-family.XXXXXX";
	struct ft_space *sp = calloc(1, sizeof(*sp));
	struct ft_err err = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int fd;

	(void)state;
	assert_non_null(sp);
	for (int i = 0; i < ft_family_count(); i++) {
		const struct ft_family *fam = ft_family_at(i);

		if (fam == &ft_family_cuda) {
			assert_null(fam->default_spaces[0]);	/* kernels you bring: none ships */
			continue;
		}
		assert_non_null(fam->default_spaces[0]);
		for (int k = 0; k < FT_FAMILY_DEFAULTS && fam->default_spaces[k]; k++) {
			snprintf(path, sizeof(path), "%s/%s", srcdir(), fam->default_spaces[k]);
			memset(sp, 0, sizeof(*sp));
			if (ft_space_load(sp, path, &err))
				fail_msg("%s: %s", path, err.msg);
			assert_ptr_equal(sp->family, fam);
		}
	}
	assert_string_equal(ft_family_mma.default_spaces[1], "search_spaces/attention_decode.yaml");
	assert_string_equal(ft_family_wgmma.default_spaces[0], "search_spaces/attention_sm90.yaml");
	assert_int_equal(sp->abi, 2);

	/* the same file with abi: 1 and the template path made absolute */
	snprintf(path, sizeof(path), "%s/%s", srcdir(), ft_family_wgmma.default_spaces[0]);
	f = fopen(path, "r");
	assert_non_null(f);
	{
		FILE *m = open_memstream(&text, &len);
		char line[1024];

		assert_non_null(m);
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "  abi: 2", 8))
				fputs("  abi: 1\n", m);
			else if (!strncmp(line, "  file: ../", 11))
				fprintf(m, "  file: %s/%s", srcdir(), line + 11);
			else
				fputs(line, m);
		}
		fclose(m);
	}
	fclose(f);
	assert_non_null(strstr(text, "  abi: 1\n"));
	fd = mkstemp(bad);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	free(text);
	memset(sp, 0, sizeof(*sp));
	memset(&err, 0, sizeof(err));
	assert_int_equal(ft_space_load(sp, bad, &err), -1);
	unlink(bad);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "family 'wgmma' passes TMA descriptors"));
	free(sp);
}

/* TMA boxes: Q in 64-row boxes (one consumer warpgroup's tile), K and V in
 * BLOCK_N-row boxes, 64 columns (128 bytes of 16-bit D) with the 128-byte
 * swizzle; O written without TMA. */
static void test_plan(void **state)
{
	struct ft_space *sp = new_space(&ft_family_wgmma, 2);
	struct ft_shape sh = { 1, 8, 4096, 128, 0, FT_FP16, 4096, 8, FT_LAYOUT_BHSD };
	struct ft_launch_plan plan;
	struct ft_err err = { 0 };
	long long v[3] = { 2, 128, 176 };

	(void)state;
	memset(&plan, 0x5a, sizeof(plan)); /* garbage the call must overwrite */
	assert_int_equal(ft_space_plan(sp, &sh, v, &plan, &err), 0);
	assert_int_equal(plan.tma[FT_TENSOR_Q].rows, 64);
	assert_int_equal(plan.tma[FT_TENSOR_Q].cols, 64);
	assert_int_equal(plan.tma[FT_TENSOR_Q].swizzle, 128);
	for (int t = FT_TENSOR_K; t <= FT_TENSOR_V; t++) {
		assert_int_equal(plan.tma[t].rows, 176);
		assert_int_equal(plan.tma[t].cols, 64);
		assert_int_equal(plan.tma[t].swizzle, 128);
	}
	assert_int_equal(plan.tma[FT_TENSOR_O].rows, 0);
	/* a box holds 1 to 256 rows */
	v[2] = 256;
	assert_int_equal(ft_space_plan(sp, &sh, v, &plan, &err), 0);
	assert_int_equal(plan.tma[FT_TENSOR_V].rows, 256);
	v[2] = 320;
	assert_int_equal(ft_space_plan(sp, &sh, v, &plan, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "BLOCK_N 320"));
	v[2] = 64;
	v[1] = 0;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ft_space_plan(sp, &sh, v, &plan, &err), -1);
	/* mma: no hook, nothing beyond the formulas - the plan is zeroed */
	sp->family = &ft_family_mma;
	v[1] = 128;
	memset(&plan, 0x5a, sizeof(plan));
	assert_int_equal(ft_space_plan(sp, &sh, v, &plan, &err), 0);
	for (int t = 0; t < FT_TENSOR_COUNT; t++)
		assert_int_equal(plan.tma[t].rows, 0);
	free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_archs),
		cmocka_unit_test(test_space_unfit),
		cmocka_unit_test(test_check_space),
		cmocka_unit_test(test_default_spaces),
		cmocka_unit_test(test_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
