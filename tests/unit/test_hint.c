/* test_hint.c - hints for the compile errors kernel authors meet first (compile/hint.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "compile/hint.h"

static void abi_mismatch_names_the_field(void **state)
{
	const char *log = "k.cu(4): error: identifier \"INFINITY\" is undefined\n"
			  "k.cu(5): error: class \"fatune_attn_params_v1\" has no member \"s_q\"\n";
	char buf[400];

	(void)state;
	assert_non_null(ft_compile_hint(log, 1, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "'s_q'"));
	assert_non_null(strstr(buf, "abi: 2"));
	/* a v2 space never gets the ABI hint: the INFINITY one instead */
	assert_non_null(ft_compile_hint(log, 2, buf, sizeof(buf)));
	assert_null(strstr(buf, "abi"));
	assert_non_null(strstr(buf, "__int_as_float(0xff800000)"));
}

static void earliest_error_wins(void **state)
{
	const char *log = "k.cu(3): error: identifier \"uint32_t\" is undefined\n"
			  "k.cu(9): error: identifier \"INFINITY\" is undefined\n";
	char buf[400];

	(void)state;
	assert_non_null(ft_compile_hint(log, 2, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "<cstdint>"));
	assert_non_null(ft_compile_hint("x.cu(1): catastrophic error: cannot open source file \"cstdint\"",
					2, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "standard headers"));
}

static void no_hint_leaves_the_reason(void **state)
{
	char buf[400], reason[64] = "k.cu(1): error: expected a \";\"";

	(void)state;
	assert_null(ft_compile_hint("k.cu(1): error: expected a \";\"", 1, buf, sizeof(buf)));
	assert_null(ft_compile_hint(NULL, 1, buf, sizeof(buf)));
	ft_compile_hint_append("k.cu(1): error: expected a \";\"", 1, reason, sizeof(reason));
	assert_string_equal(reason, "k.cu(1): error: expected a \";\"");
	/* appending stays within the buffer */
	ft_compile_hint_append("error: identifier \"INFINITY\" is undefined", 2, reason, sizeof(reason));
	assert_true(strlen(reason) == sizeof(reason) - 1);
	assert_non_null(strstr(reason, "; hint: "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abi_mismatch_names_the_field),
		cmocka_unit_test(earliest_error_wins),
		cmocka_unit_test(no_hint_leaves_the_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
