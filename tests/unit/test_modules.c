/* test_modules.c - the worker's reference build through the CUBIN cache
 * (run/modules.c, no GPU needed): the first start compiles and stores it, the
 * next loads the same bytes from the cache, another arch is another entry, a
 * reference that does not compile is an error and stores nothing, and
 * use_cache 0 (FATUNE_EVAL_COSTS=legacy) never touches the cache. Runs with FATUNE_CACHE_DIR set to a fresh mkdtemp directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/cache.h"
#include "run/modules.h"

static char dir[64];
static char ref[4096];

static int setup(void **state)
{
	const char *src = getenv("FATUNE_SOURCE_DIR");

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/fatune-modules-XXXXXX");
	if (!mkdtemp(dir) || setenv("FATUNE_CACHE_DIR", dir, 1))
		return -1;
	snprintf(ref, sizeof(ref), "%s/kernel_templates/reference.cu", src ? src : ".");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	unsetenv("FATUNE_CACHE_DIR");
	return system(cmd) == 0 ? 0 : -1;
}

static long long cache_entries(void)
{
	struct ft_cache_stats st;
	struct ft_err err = { 0 };

	assert_int_equal(ft_cache_stats(&st, &err), 0);
	return st.entries;
}

static void test_reference_cached(void **state)
{
	struct ft_err err = { 0 };
	void *a = NULL, *b = NULL, *c = NULL;
	size_t na = 0, nb = 0, nc = 0;
	int cached = -1;
	long long before = cache_entries();

	(void)state;
	/* first start: compiled, stored */
	assert_int_equal(ft_modules_reference(ref, "sm_90", 1, &a, &na, &cached, &err), 0);
	assert_int_equal(cached, 0);
	assert_true(na > 1000);
	assert_int_equal(cache_entries(), before + 1);
	/* next start: the same bytes from the cache, nothing compiled or added */
	assert_int_equal(ft_modules_reference(ref, "sm_90", 1, &b, &nb, &cached, &err), 0);
	assert_int_equal(cached, 1);
	assert_int_equal(nb, na);
	assert_memory_equal(a, b, na);
	assert_int_equal(cache_entries(), before + 1);
	/* another arch is another key */
	assert_int_equal(ft_modules_reference(ref, "sm_80", 1, &c, &nc, &cached, &err), 0);
	assert_int_equal(cached, 0);
	assert_int_equal(cache_entries(), before + 2);
	free(c);
	/* legacy: compiled, the cache neither read nor written */
	assert_int_equal(ft_modules_reference(ref, "sm_90", 0, &c, &nc, &cached, &err), 0);
	assert_int_equal(cached, 0);
	assert_int_equal(nc, na);
	assert_int_equal(cache_entries(), before + 2);
	free(a);
	free(b);
	free(c);
}

/* A reference that does not compile is an error naming it, and is not stored. */
static void test_reference_broken(void **state)
{
	struct ft_err err = { 0 };
	char path[128];
	void *img = NULL;
	size_t n = 0;
	int cached = -1;
	long long before = cache_entries();
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/broken.cu", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("extern \"C\" __global__ void fatune_ref_fill( { }\n", f);
	fclose(f);
	assert_int_equal(ft_modules_reference(path, "sm_90", 1, &img, &n, &cached, &err), -1);
	assert_null(img);
	assert_non_null(strstr(err.msg, "broken.cu"));
	assert_int_equal(cache_entries(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_cached),
		cmocka_unit_test(test_reference_broken),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
