/* test_cubin.c - entry points and parameter sizes read from a real CUBIN (cubin.c),
 * and the checks ft_compile makes with them (a misspelled entry point, a kernel
 * of another ABI). The CUBIN comes from NVRTC (no GPU); damaged images must be
 * refused, never read out of bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile/cubin.h"
#include "compile/nvrtc.h"

/* tests/unit/fixtures/tiny_kernel.cu: tiny(float *, int), tiny_combine(float *, int) */
static void compile_tiny(const char *kernel, long long param_bytes, struct ft_compile_out *out)
{
	const char *src = getenv("FATUNE_SOURCE_DIR");
	struct ft_compile_req req = { 0 };
	struct ft_err err = { 0 };
	char path[4200];

	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/tests/unit/fixtures/tiny_kernel.cu", src);
	req.source_path = path;
	req.arch = "sm_89";
	req.ndefines = 1;
	req.define_names[0] = "TINY_TILE";
	req.define_values[0] = 64;
	req.kernels[0] = kernel;
	req.param_bytes = param_bytes;
	if (ft_compile(&req, out, &err))
		fail_msg("ft_compile: %s", err.msg);
}

static void test_entries_and_params(void **state)
{
	struct ft_compile_out out;
	char names[256];
	int n = -1;

	compile_tiny("tiny", 0, &out);
	assert_int_equal(out.ok, 1);
	assert_int_equal(ft_cubin_entries(out.cubin, out.cubin_size, names, sizeof(names)), 2);
	assert_true(!strcmp(names, "tiny, tiny_combine") || !strcmp(names, "tiny_combine, tiny"));
	/* float * and int: 8 + 4 bytes in two parameters */
	assert_int_equal(ft_cubin_param_bytes(out.cubin, out.cubin_size, "tiny", &n), 12);
	assert_int_equal(n, 2);
	assert_int_equal(ft_cubin_param_bytes(out.cubin, out.cubin_size, "tiny_combine", NULL), 12);
	/* names match whole: no prefix, no extension, case matters */
	assert_int_equal(ft_cubin_param_bytes(out.cubin, out.cubin_size, "tin", &n), -1);
	assert_int_equal(ft_cubin_param_bytes(out.cubin, out.cubin_size, "tinyy", &n), -1);
	assert_int_equal(ft_cubin_param_bytes(out.cubin, out.cubin_size, "Tiny", &n), -1);
	/* a buffer too small cuts the list, never overflows */
	assert_int_equal(ft_cubin_entries(out.cubin, out.cubin_size, names, 5), 2);
	assert_true(strlen(names) < 5);
	ft_compile_out_release(&out);
}

static void test_damaged_images(void **state)
{
	struct ft_compile_out out;
	char names[64];
	unsigned char *copy;

	compile_tiny("tiny", 0, &out);
	assert_int_equal(out.ok, 1);
	/* cut anywhere before the section headers: not readable */
	assert_int_equal(ft_cubin_param_bytes(out.cubin, 100, "tiny", NULL), -2);
	assert_int_equal(ft_cubin_param_bytes(out.cubin, 0, "tiny", NULL), -2);
	assert_int_equal(ft_cubin_param_bytes(NULL, 1000, "tiny", NULL), -2);
	assert_int_equal(ft_cubin_entries(out.cubin, 100, names, sizeof(names)), 0);
	assert_string_equal(names, "");
	copy = malloc(out.cubin_size);
	assert_non_null(copy);
	/* not an ELF file */
	memcpy(copy, out.cubin, out.cubin_size);
	copy[1] = 'X';
	assert_int_equal(ft_cubin_param_bytes(copy, out.cubin_size, "tiny", NULL), -2);
	/* section headers pointed past the end */
	memcpy(copy, out.cubin, out.cubin_size);
	memset(copy + 40, 0x7f, 8); /* e_shoff */
	assert_int_equal(ft_cubin_param_bytes(copy, out.cubin_size, "tiny", NULL), -2);
	free(copy);
	ft_compile_out_release(&out);
}

/* ft_compile checks what it compiled against the request */
static void test_compile_checks_entries(void **state)
{
	struct ft_compile_out out;

	compile_tiny("tiny_fwd", 0, &out);
	assert_int_equal(out.ok, 0);
	assert_null(out.cubin);
	assert_non_null(strstr(out.problem, "entry point 'tiny_fwd' is not in the compiled template; it has "));
	assert_non_null(strstr(out.problem, "tiny_combine"));
	assert_non_null(strstr(out.problem, "extern \"C\""));
	ft_compile_out_release(&out);

	compile_tiny("tiny", 72, &out);
	assert_int_equal(out.ok, 0);
	assert_string_equal(out.problem,
			    "kernel 'tiny' takes 2 parameters of 12 bytes, but its ABI passes one struct "
			    "fatune_attn_params of 72 bytes: a template built for another ABI version? "
			    "declare the version it speaks as template.abi (fatune_abi.h)");
	ft_compile_out_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries_and_params),
		cmocka_unit_test(test_damaged_images),
		cmocka_unit_test(test_compile_checks_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
