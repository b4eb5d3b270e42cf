/* test_gen.c - the gate for text that reaches generated code (export/gen.c):
 * comments cannot be closed, opened, spliced or given a trigraph; string
 * literals cannot be left; names must be identifiers a compiler keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "export/gen.h"

static void test_comment(void **state)
{
	char buf[FT_GEN_SIZE(64)];

	(void)state;
	assert_string_equal(ft_gen_comment("NVIDIA H200", buf, sizeof(buf)), "NVIDIA H200");
	assert_string_equal(ft_gen_comment("*/int q;/*", buf, sizeof(buf)), " * /int q;/ * ");
	assert_string_equal(ft_gen_comment("a\n#define if(x)", buf, sizeof(buf)), "a_#define if(x)");
	assert_string_equal(ft_gen_comment("2026?\?/", buf, sizeof(buf)), "2026? ?/ ");
	assert_string_equal(ft_gen_comment("?\?\?", buf, sizeof(buf)), " ? ? ? ");
	assert_string_equal(ft_gen_comment("x\\", buf, sizeof(buf)), "x\\ ");
	assert_string_equal(ft_gen_comment("caf\xc3\xa9\x7f", buf, sizeof(buf)), "caf___");
	/* truncation never leaves half a delimiter at the end */
	ft_gen_comment("abcdefgh*/", buf, 10);
	assert_null(strstr(buf, "*/"));
	assert_true(strlen(buf) < 10);
	assert_true(buf[strlen(buf) - 1] != '*');
}

static void test_shell_arg(void **state)
{
	char buf[FT_GEN_SIZE(64)];

	(void)state;
	assert_string_equal(ft_gen_shell_arg("it's */", buf, sizeof(buf)), "'it'\\''s * /'");
}

static void test_c_string(void **state)
{
	char buf[FT_GEN_SIZE(64)];

	(void)state;
	assert_string_equal(ft_gen_c_string("a\"b\\c?\?/d\n\xff", buf, sizeof(buf)),
			    "a\\\"b\\\\c\\?\\?/d\\012\\377");
	/* truncated at a whole escape */
	ft_gen_c_string("ab\n", buf, 5);
	assert_string_equal(buf, "ab");
}

static void test_ident(void **state)
{
	struct ft_err err = { 0 };

	(void)state;
	assert_int_equal(ft_gen_ident("TILE_M", "a parameter", &err), 0);
	assert_int_equal(ft_gen_ident("int", "a parameter", &err), -1);
	assert_int_equal(err.status, FT_EFAIL);
	assert_non_null(strstr(err.msg, "'int'"));
	assert_int_equal(ft_gen_ident("*/x", "a parameter", &err), -1);
	assert_null(strstr(err.msg, "*/"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comment),
		cmocka_unit_test(test_shell_arg),
		cmocka_unit_test(test_c_string),
		cmocka_unit_test(test_ident),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
