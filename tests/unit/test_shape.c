/* test_shape.c - attention shapes (shape.c): "BxHxSxD" parsing and refusals,
 * the 2^31-element bound, printing, and dtype names.
 *
 * Shapes whose element count overflows 64 bits are parsed in a child process:
 * under UBSan a signed overflow aborts, and that must show up as this test
 * failing, not as the whole test program dying.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/shape.h"

static void parse_ok(const char *text, int b, int h, int s, int d)
{
	struct ft_shape sh = { 0, 0, 0, 0, 1, FT_BF16, 0, 0, FT_LAYOUT_BHSD };
	struct ft_err err;

	ft_err_clear(&err);
	if (ft_shape_parse(text, &sh, &err))
		fail_msg("'%s' refused: %s", text, err.msg);
	assert_int_equal(sh.b, b);
	assert_int_equal(sh.h, h);
	assert_int_equal(sh.s, s);
	assert_int_equal(sh.d, d);
	/* causal and dtype are left alone */
	assert_int_equal(sh.causal, 1);
	assert_int_equal(sh.dtype, FT_BF16);
}

/* Expects a refusal; needle, when not NULL, must be in the message. */
static void parse_bad(const char *text, const char *needle)
{
	struct ft_shape sh = { 0 };
	struct ft_err err;
	char quoted[128];

	ft_err_clear(&err);
	if (ft_shape_parse(text, &sh, &err) != -1)
		fail_msg("'%s' was accepted as %dx%dx%dx%d", text, sh.b, sh.h, sh.s, sh.d);
	assert_int_equal(err.status, FT_EINPUT);
	snprintf(quoted, sizeof(quoted), "'%s'", text);
	if (!strstr(err.msg, quoted))
		fail_msg("message '%s' does not quote the shape", err.msg);
	if (needle && !strstr(err.msg, needle))
		fail_msg("message '%s' does not say '%s'", err.msg, needle);
}

static void test_parse_good(void **state)
{
	parse_ok("1x8x512x64", 1, 8, 512, 64);
	parse_ok("4x16x2048x128", 4, 16, 2048, 128);
	parse_ok("1x1x1x1", 1, 1, 1, 1);
	parse_ok("2X3X5X7", 2, 3, 5, 7);
	/* leading zeros are still decimal, not octal */
	parse_ok("010x8x512x64", 10, 8, 512, 64);
}

static void test_parse_bad(void **state)
{
	static const char *const bad[] = {
		"", "x", "1x8x512", "1x8x512x", "x8x512x64", "1x8x512x64x2", "1x8x512x64 ",
		" 1x8x512x64", "1 x8x512x64", "1x 8x512x64", "1x8x512x64abc", "1*8*512*64", "1,8,512,64",
		"0x8x512x64", "1x0x512x64", "1x8x0x64", "1x8x512x0", "-1x8x512x64", "1x-8x512x64",
		"1x8x512x-64", "+1x8x512x64", "1x8x512x+64", "1.5x8x512x64", "1x8x512x64.0",
		"0x10x10x10", "1x8x5e2x64", "one x8x512x64", "1xx8x512x64",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_bad(bad[i], "BxHxSxD");
}

static void test_parse_overflow(void **state)
{
	/* one number past long and int */
	parse_bad("99999999999999999999x1x1x1", NULL);
	parse_bad("1x1x1x4294967297", NULL);
	parse_bad("1x2147483648x1x1", NULL);
}

static void test_elements_bound(void **state)
{
	/* 65535 * 32768 = 2147450880 < 2^31: the largest tensors still allowed */
	parse_ok("1x1x65535x32768", 1, 1, 65535, 32768);
	parse_ok("1x32768x65535x1", 1, 32768, 65535, 1);
	/* 65537 * 32768 > 2^31 elements */
	parse_bad("1x1x65537x32768", "2^31");
	parse_bad("4x16x65536x1024", "2^31");
	parse_bad("1024x1024x1024x1024", "2^31");
}

/* Exit codes of the child in test_elements_bound_no_overflow. */
enum { CHILD_REFUSED = 0, CHILD_ACCEPTED = 1, CHILD_WRONG_STATUS = 2 };

/* Parses text in a child; returns its wait status. */
static int parse_in_child(const char *text)
{
	pid_t pid;
	int ws;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ft_shape sh = { 0 };
		struct ft_err err;

		ft_err_clear(&err);
		if (ft_shape_parse(text, &sh, &err) == 0)
			_exit(CHILD_ACCEPTED);
		_exit(err.status == FT_EINPUT && strstr(err.msg, "2^31") ? CHILD_REFUSED
									  : CHILD_WRONG_STATUS);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	return ws;
}

/* Four dimensions each within shape.c's per-dimension bound whose product
 * overflows a 64-bit integer: the count must be refused, not wrap around
 * (1000000^3 * 65536 wraps to a negative number and would pass the bound). */
static void test_elements_bound_no_overflow(void **state)
{
	static const char *const huge[] = {
		"1000000x1000000x1000000x65536",
		"999999x999999x999999x999999",
		"1000000x1000000x1000000x1000000",
	};

	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		int ws = parse_in_child(huge[i]);

		if (WIFSIGNALED(ws))
			fail_msg("parsing '%s' died of signal %d (undefined behaviour: the element count "
				 "overflows long long, shape.c)",
				 huge[i], WTERMSIG(ws));
		assert_true(WIFEXITED(ws));
		if (WEXITSTATUS(ws) == CHILD_ACCEPTED)
			fail_msg("'%s' (> 2^63 elements) was accepted: the element count wrapped around",
				 huge[i]);
		assert_int_equal(WEXITSTATUS(ws), CHILD_REFUSED);
	}
}

static void test_format_roundtrip(void **state)
{
	static const char *const shapes[] = { "1x8x512x64", "4x16x2048x128", "1x1x1x1",
					      "1x1x65535x32768" };
	char buf[64];

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct ft_shape sh = { 0 };
		struct ft_err err;

		assert_int_equal(ft_shape_parse(shapes[i], &sh, &err), 0);
		assert_ptr_equal(ft_shape_format(&sh, buf, sizeof(buf)), buf);
		assert_string_equal(buf, shapes[i]);
	}
	{
		struct ft_shape sh = { 0 };
		struct ft_err err;

		/* the canonical form is lowercase x, no leading zeros */
		assert_int_equal(ft_shape_parse("02X8X512X064", &sh, &err), 0);
		assert_string_equal(ft_shape_format(&sh, buf, sizeof(buf)), "2x8x512x64");
	}
	{
		struct ft_shape sh = { 12, 34, 56, 78, 0, FT_FP16, 56, 34, FT_LAYOUT_BHSD };
		char small[6];

		/* a short buffer is cut, never overrun, and stays terminated */
		memset(small, '#', sizeof(small));
		ft_shape_format(&sh, small, sizeof(small));
		assert_string_equal(small, "12x34");
	}
}

static void test_dtype(void **state)
{
	static const char *const bad[] = { "", "fp32", "FP16", "Bf16", "bf16 ", "f16", "int8", "fp" };
	enum ft_dtype t = FT_BF16;
	struct ft_err err;

	assert_string_equal(ft_dtype_name(FT_FP16), "fp16");
	assert_string_equal(ft_dtype_name(FT_BF16), "bf16");
	assert_int_equal(ft_dtype_parse("fp16", &t, &err), 0);
	assert_int_equal(t, FT_FP16);
	assert_int_equal(ft_dtype_parse("bf16", &t, &err), 0);
	assert_int_equal(t, FT_BF16);
	/* name and parse agree both ways */
	for (int i = FT_FP16; i <= FT_BF16; i++) {
		assert_int_equal(ft_dtype_parse(ft_dtype_name((enum ft_dtype)i), &t, &err), 0);
		assert_int_equal(t, i);
		assert_int_equal(ft_dtype_size((enum ft_dtype)i), 2);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char quoted[32];

		ft_err_clear(&err);
		t = FT_BF16;
		if (ft_dtype_parse(bad[i], &t, &err) != -1)
			fail_msg("dtype '%s' was accepted", bad[i]);
		assert_int_equal(err.status, FT_EINPUT);
		snprintf(quoted, sizeof(quoted), "'%s'", bad[i]);
		assert_non_null(strstr(err.msg, quoted));
		assert_non_null(strstr(err.msg, "fp16"));
		assert_non_null(strstr(err.msg, "bf16"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_overflow),
		cmocka_unit_test(test_elements_bound),
		cmocka_unit_test(test_elements_bound_no_overflow),
		cmocka_unit_test(test_format_roundtrip),
		cmocka_unit_test(test_dtype),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
