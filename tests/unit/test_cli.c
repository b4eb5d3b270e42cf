/* test_cli.c - option tables (cli.c): long and short options, --opt=value,
 * missing values, unknown options, integer and number ranges, positional
 * arguments, "--", and --help printed from the same table the parser reads.
 *
 * Every case parses a fresh argv built from string literals (copied, because
 * the parser reorders argv) into a fresh set of option values.
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

#include "ui/cli.h"

/* ---- the table under test ------------------------------------------------ */

struct vals {
	int verbose;
	int dry;
	const char *arch;
	long long jobs;
	long long seed;
	double tol;
	double scale;
};

static struct vals v;

/* jobs: 1..64 and tolerance 0..1 are ranged; seed and scale take any value
 * (min == max == 0 means "any" in cli.h). */
static const struct ft_option opts[] = {
	FT_OPT_FLAG_("verbose", 'v', &v.verbose, "say what happens"),
	FT_OPT_FLAG_("dry-run", 0, &v.dry, "change nothing"),
	FT_OPT_STR_("arch", 'a', &v.arch, "ARCH", "target architecture"),
	FT_OPT_INT_("jobs", 'j', &v.jobs, "N", "compile threads", 1, 64),
	FT_OPT_INT_("seed", 0, &v.seed, "SEED", "strategy seed", 0, 0),
	FT_OPT_DBL_("tolerance", 't', &v.tol, "X", "largest relative error", 0.0, 1.0),
	FT_OPT_DBL_("scale", 0, &v.scale, "F", "any factor", 0, 0),
	FT_OPT_END_,
};

static const struct ft_command_help cmd = {
	"probe",
	"fatune probe [options] [FILE...]",
	"try the option parser",
	"Details paragraph that comes after the options.",
};

/* A writable copy of argv: the parser moves positional arguments. */
struct argv_copy {
	int argc;
	char *argv[32];
};

static void make_argv(struct argv_copy *a, const char *const *args)
{
	a->argc = 0;
	a->argv[a->argc++] = strdup(cmd.name);
	for (int i = 0; args[i]; i++) {
		assert_true(a->argc < 31);
		a->argv[a->argc++] = strdup(args[i]);
	}
	a->argv[a->argc] = NULL;
}

static void free_argv(struct argv_copy *a)
{
	for (int i = 0; i < a->argc; i++)
		free(a->argv[i]);
	a->argc = 0;
}

/* Runs the parser on args with max_pos positionals. Writes the positional
 * arguments (strdup'ed, NULL-ended) into pos when it is not NULL. */
static int parse(const char *const *args, int max_pos, int *npos, char **pos, struct ft_err *err)
{
	struct argv_copy a;
	char *orig[32];
	int rc;

	memset(&v, 0, sizeof(v));
	ft_err_clear(err);
	*npos = -7; /* a value the parser must overwrite on success */
	make_argv(&a, args);
	memcpy(orig, a.argv, sizeof(orig));
	rc = ft_parse_options(&cmd, opts, a.argc, a.argv, max_pos, npos, err);
	if (pos) {
		int n = rc == 0 ? *npos : 0;
		for (int i = 0; i < n; i++)
			pos[i] = strdup(a.argv[1 + i]);
		pos[n] = NULL;
	}
	/* values of string options point into argv: keep a copy that outlives it */
	if (v.arch)
		v.arch = strdup(v.arch);
	for (int i = 0; i < a.argc; i++)
		a.argv[i] = orig[i];
	free_argv(&a);
	return rc;
}

static void free_strs(char **s)
{
	for (int i = 0; s[i]; i++)
		free(s[i]);
}

static void reset_arch(void)
{
	free((char *)v.arch);
	v.arch = NULL;
}

/* An error message in the house style: one line, lowercase start, no final
 * period (err.h). */
static void assert_msg_style(const struct ft_err *err)
{
	size_t n = strlen(err->msg);

	assert_true(n > 0);
	assert_null(strchr(err->msg, '\n'));
	assert_false(err->msg[0] >= 'A' && err->msg[0] <= 'Z');
	assert_true(err->msg[n - 1] != '.');
}

/* Expects a usage error whose message contains every string in `needles`. */
static void expect_error(const char *const *args, int max_pos, const char *const *needles)
{
	struct ft_err err;
	int npos;
	int rc = parse(args, max_pos, &npos, NULL, &err);

	reset_arch();
	if (rc != -1 || err.status != FT_EINPUT)
		fail_msg("expected a usage error, got rc %d status %d ('%s') for args[0] '%s'", rc,
			 err.status, err.msg, args[0]);
	assert_msg_style(&err);
	for (int i = 0; needles[i]; i++)
		if (!strstr(err.msg, needles[i]))
			fail_msg("message '%s' does not contain '%s'", err.msg, needles[i]);
}

/* Captures what fn writes to stdout (file descriptor 1) while it runs. */
static char *capture_stdout(int (*fn)(void *), void *ctx, int *rc)
{
	FILE *tmp = tmpfile();
	int saved;
	long len;
	char *buf;

	assert_non_null(tmp);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
	*rc = fn(ctx);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	assert_int_equal(fseek(tmp, 0, SEEK_END), 0);
	len = ftell(tmp);
	assert_true(len >= 0);
	rewind(tmp);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, tmp), (size_t)len);
	fclose(tmp);
	return buf;
}

/* Checks that text lists every option of the table with its help, the
 * implicit -h/--help, and the command's usage, summary and details. */
static void assert_full_help(const char *text)
{
	char line[128];
	const char *prev = text;

	assert_non_null(strstr(text, cmd.usage));
	assert_non_null(strstr(text, cmd.summary));
	assert_non_null(strstr(text, cmd.details));
	for (const struct ft_option *o = opts; o->type != FT_OPT_END; o++) {
		const char *at;

		snprintf(line, sizeof(line), "--%s%s%s", o->name, o->argname ? " " : "",
			 o->argname ? o->argname : "");
		at = strstr(text, line);
		if (!at)
			fail_msg("help does not show '%s':\n%s", line, text);
		/* options are listed in table order */
		assert_true(at > prev);
		prev = at;
		if (!strstr(at, o->help))
			fail_msg("help does not show the help text of --%s", o->name);
		if (o->short_name) {
			snprintf(line, sizeof(line), "-%c, --%s", o->short_name, o->name);
			if (!strstr(text, line))
				fail_msg("help does not show '%s'", line);
		}
	}
	assert_non_null(strstr(text, "--help"));
	assert_non_null(strstr(text, "-h"));
}

/* ---- tests ------------------------------------------------------------- */

static void test_long_options(void **state)
{
	const char *args[] = { "--verbose", "--arch", "sm_89", "--jobs", "8", "--tolerance", "0.25",
			       "--seed", "-3", "--scale", "-2.5", "--dry-run", NULL };
	struct ft_err err;
	int npos;

	assert_int_equal(parse(args, 0, &npos, NULL, &err), 0);
	assert_int_equal(err.status, FT_OK);
	assert_int_equal(npos, 0);
	assert_int_equal(v.verbose, 1);
	assert_int_equal(v.dry, 1);
	assert_string_equal(v.arch, "sm_89");
	assert_true(v.jobs == 8);
	assert_true(v.seed == -3);
	assert_true(v.tol == 0.25);
	assert_true(v.scale == -2.5);
	reset_arch();
}

static void test_short_options(void **state)
{
	const char *args[] = { "-v", "-a", "sm_90", "-j", "4", "-t", "1e-3", NULL };
	struct ft_err err;
	int npos;

	assert_int_equal(parse(args, 0, &npos, NULL, &err), 0);
	assert_int_equal(npos, 0);
	assert_int_equal(v.verbose, 1);
	assert_int_equal(v.dry, 0); /* untouched */
	assert_string_equal(v.arch, "sm_90");
	assert_true(v.jobs == 4);
	assert_true(v.tol == 1e-3);
	reset_arch();
}

static void test_equals_form(void **state)
{
	const char *args[] = { "--arch=sm_80", "--jobs=16", "--tolerance=.5", "--seed=42", NULL };
	const char *eq_in_value[] = { "--arch=a=b", NULL };
	const char *empty_value[] = { "--arch=", NULL };
	struct ft_err err;
	int npos;

	assert_int_equal(parse(args, 0, &npos, NULL, &err), 0);
	assert_string_equal(v.arch, "sm_80");
	assert_true(v.jobs == 16);
	assert_true(v.tol == 0.5);
	assert_true(v.seed == 42);
	reset_arch();

	/* only the first '=' splits */
	assert_int_equal(parse(eq_in_value, 0, &npos, NULL, &err), 0);
	assert_string_equal(v.arch, "a=b");
	reset_arch();

	/* an explicitly empty string is a value */
	assert_int_equal(parse(empty_value, 0, &npos, NULL, &err), 0);
	assert_non_null(v.arch);
	assert_string_equal(v.arch, "");
	reset_arch();
}

/* a single-valued option given twice is refused, naming both values, in
 * any spelling (--jobs / -j, --arch X / --arch=X); a flag may repeat */
static void test_repeated_option_refused(void **state)
{
	struct ft_err err;
	int npos;

	expect_error((const char *[]){ "--jobs", "2", "-j", "6", NULL }, 0,
		     (const char *[]){ "--jobs given twice", "'2' and '6'", "give it once", NULL });
	expect_error((const char *[]){ "--arch", "sm_86", "--arch=sm_87", NULL }, 0,
		     (const char *[]){ "--arch given twice", "'sm_86' and 'sm_87'", NULL });
	expect_error((const char *[]){ "--tolerance", "1", "--tolerance", "1", NULL }, 0,
		     (const char *[]){ "--tolerance given twice", NULL });
	assert_int_equal(parse((const char *[]){ "--verbose", "--verbose", NULL }, 0, &npos, NULL, &err), 0);
	reset_arch();
}

static void test_missing_value(void **state)
{
	expect_error((const char *[]){ "--arch", NULL }, 0,
		     (const char *[]){ "--arch", "needs a value", "ARCH", NULL });
	expect_error((const char *[]){ "--verbose", "-j", NULL }, 0,
		     (const char *[]){ "--jobs", "needs a value", NULL });
	expect_error((const char *[]){ "--tolerance", NULL }, 0,
		     (const char *[]){ "--tolerance", "needs a value", NULL });
}

static void test_unknown_option(void **state)
{
	expect_error((const char *[]){ "--nope", NULL }, 0,
		     (const char *[]){ "'--nope'", "probe", "--help", NULL });
	expect_error((const char *[]){ "-x", NULL }, 0, (const char *[]){ "'-x'", NULL });
	/* no prefix matching: a shortened long name is not the option */
	expect_error((const char *[]){ "--verb", NULL }, 0, (const char *[]){ "'--verb'", NULL });
	expect_error((const char *[]){ "--jobs=3", "--nope=1", NULL }, 0,
		     (const char *[]){ "--nope", NULL });
	/* a long name given with one dash is not a short option */
	expect_error((const char *[]){ "-verbose", NULL }, 0, (const char *[]){ "-verbose", NULL });
}

static void test_flag_takes_no_value(void **state)
{
	expect_error((const char *[]){ "--verbose=1", NULL }, 0,
		     (const char *[]){ "--verbose", "no value", NULL });
}

static void test_int_parsing_and_range(void **state)
{
	struct ft_err err;
	int npos;

	/* the bounds themselves are inside the range */
	assert_int_equal(parse((const char *[]){ "--jobs", "1", NULL }, 0, &npos, NULL, &err), 0);
	assert_true(v.jobs == 1);
	assert_int_equal(parse((const char *[]){ "--jobs", "64", NULL }, 0, &npos, NULL, &err), 0);
	assert_true(v.jobs == 64);
	/* an unranged int takes the whole long long range */
	assert_int_equal(parse((const char *[]){ "--seed", "9223372036854775807", NULL }, 0, &npos,
			       NULL, &err),
			 0);
	assert_true(v.seed == 9223372036854775807LL);

	expect_error((const char *[]){ "--jobs", "0", NULL }, 0,
		     (const char *[]){ "--jobs", "0", "out of range", "1", "64", NULL });
	expect_error((const char *[]){ "--jobs=65", NULL }, 0,
		     (const char *[]){ "--jobs", "65", "out of range", NULL });
	expect_error((const char *[]){ "-j", "-1", NULL }, 0, (const char *[]){ "out of range", NULL });
	expect_error((const char *[]){ "--jobs", "3.5", NULL }, 0,
		     (const char *[]){ "--jobs", "whole number", "'3.5'", NULL });
	expect_error((const char *[]){ "--jobs", "12abc", NULL }, 0,
		     (const char *[]){ "'12abc'", NULL });
	expect_error((const char *[]){ "--jobs=", NULL }, 0, (const char *[]){ "--jobs", NULL });
	expect_error((const char *[]){ "--jobs", "four", NULL }, 0, (const char *[]){ "'four'", NULL });
	/* past long long: not silently clamped */
	expect_error((const char *[]){ "--seed", "99999999999999999999", NULL }, 0,
		     (const char *[]){ "--seed", NULL });
}

static void test_double_parsing_and_range(void **state)
{
	struct ft_err err;
	int npos;

	assert_int_equal(parse((const char *[]){ "--tolerance", "0", NULL }, 0, &npos, NULL, &err), 0);
	assert_true(v.tol == 0.0);
	assert_int_equal(parse((const char *[]){ "--tolerance", "1", NULL }, 0, &npos, NULL, &err), 0);
	assert_true(v.tol == 1.0);
	assert_int_equal(parse((const char *[]){ "-t", "2.5e-4", NULL }, 0, &npos, NULL, &err), 0);
	assert_true(v.tol == 2.5e-4);
	assert_int_equal(parse((const char *[]){ "--scale", "-1e6", NULL }, 0, &npos, NULL, &err), 0);
	assert_true(v.scale == -1e6);

	expect_error((const char *[]){ "--tolerance", "1.5", NULL }, 0,
		     (const char *[]){ "--tolerance", "out of range", NULL });
	expect_error((const char *[]){ "--tolerance", "-0.1", NULL }, 0,
		     (const char *[]){ "out of range", NULL });
	expect_error((const char *[]){ "--tolerance", "abc", NULL }, 0,
		     (const char *[]){ "--tolerance", "number", "'abc'", NULL });
	expect_error((const char *[]){ "--tolerance", "0.1x", NULL }, 0,
		     (const char *[]){ "'0.1x'", NULL });
	expect_error((const char *[]){ "--scale", "nan", NULL }, 0, (const char *[]){ "'nan'", NULL });
	expect_error((const char *[]){ "--scale", "inf", NULL }, 0, (const char *[]){ "'inf'", NULL });
	expect_error((const char *[]){ "--scale", "1e999", NULL }, 0,
		     (const char *[]){ "'1e999'", NULL });
	expect_error((const char *[]){ "--scale=", NULL }, 0, (const char *[]){ "--scale", NULL });
}

static void test_positional(void **state)
{
	char *pos[32];
	struct ft_err err;
	int npos;

	/* interleaved with options; order kept; moved to the front of argv */
	assert_int_equal(parse((const char *[]){ "a.yaml", "--verbose", "b.yaml", "-j", "3", NULL }, 2,
			       &npos, pos, &err),
			 0);
	assert_int_equal(npos, 2);
	assert_string_equal(pos[0], "a.yaml");
	assert_string_equal(pos[1], "b.yaml");
	assert_int_equal(v.verbose, 1);
	assert_true(v.jobs == 3);
	free_strs(pos);

	/* a lone "-" is an argument (stdin), not an option */
	assert_int_equal(parse((const char *[]){ "-", NULL }, 1, &npos, pos, &err), 0);
	assert_int_equal(npos, 1);
	assert_string_equal(pos[0], "-");
	free_strs(pos);

	/* none given: npos is 0 */
	assert_int_equal(parse((const char *[]){ "-v", NULL }, 3, &npos, pos, &err), 0);
	assert_int_equal(npos, 0);
	free_strs(pos);

	/* more than max_pos */
	expect_error((const char *[]){ "a", "b", "c", NULL }, 2,
		     (const char *[]){ "unexpected argument", "'c'", NULL });
	expect_error((const char *[]){ "--verbose", "stray", NULL }, 0,
		     (const char *[]){ "'stray'", NULL });
}

static void test_double_dash_ends_options(void **state)
{
	char *pos[32];
	struct ft_err err;
	int npos;

	assert_int_equal(parse((const char *[]){ "-j", "2", "--", "--verbose", "-j", "--", NULL }, 3,
			       &npos, pos, &err),
			 0);
	assert_int_equal(npos, 3);
	assert_string_equal(pos[0], "--verbose");
	assert_string_equal(pos[1], "-j");
	assert_string_equal(pos[2], "--");
	assert_int_equal(v.verbose, 0);
	assert_true(v.jobs == 2);
	free_strs(pos);

	/* after "--" the positional limit still holds */
	expect_error((const char *[]){ "--", "--help", NULL }, 0, (const char *[]){ "'--help'", NULL });
}

struct help_call {
	const char *const *args;
	int npos;
	struct ft_err err;
};

static int run_help(void *ctx)
{
	struct help_call *h = ctx;
	return parse(h->args, 0, &h->npos, NULL, &h->err);
}

static void test_help_returns_1_and_prints_usage(void **state)
{
	const char *long_form[] = { "--verbose", "--help", NULL };
	const char *short_form[] = { "-h", NULL };
	const char *const *forms[] = { long_form, short_form };

	for (int i = 0; i < 2; i++) {
		struct help_call h = { forms[i], 0, { 0 } };
		int rc;
		char *out = capture_stdout(run_help, &h, &rc);

		reset_arch();
		assert_int_equal(rc, 1);
		assert_int_equal(h.err.status, FT_OK);
		assert_non_null(strstr(out, "usage"));
		assert_full_help(out);
		free(out);
	}
}

static void test_print_help_lists_every_option(void **state)
{
	static const struct ft_option none[] = { FT_OPT_END_ };
	static const struct ft_command_help bare = { "bare", "fatune bare", "nothing to set", NULL };
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	ft_print_help(f, &cmd, opts);
	assert_int_equal(fclose(f), 0);
	assert_full_help(buf);
	/* a ranged option's argument name is printed, a flag has none */
	assert_non_null(strstr(buf, "--jobs N"));
	assert_null(strstr(buf, "--verbose N"));
	free(buf);

	/* a command without options still prints usage, summary and --help */
	buf = NULL;
	f = open_memstream(&buf, &size);
	assert_non_null(f);
	ft_print_help(f, &bare, none);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(buf, "fatune bare"));
	assert_non_null(strstr(buf, "nothing to set"));
	assert_non_null(strstr(buf, "--help"));
	assert_null(strstr(buf, "--verbose"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_options),
		cmocka_unit_test(test_short_options),
		cmocka_unit_test(test_equals_form),
		cmocka_unit_test(test_repeated_option_refused),
		cmocka_unit_test(test_missing_value),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_flag_takes_no_value),
		cmocka_unit_test(test_int_parsing_and_range),
		cmocka_unit_test(test_double_parsing_and_range),
		cmocka_unit_test(test_positional),
		cmocka_unit_test(test_double_dash_ends_options),
		cmocka_unit_test(test_help_returns_1_and_prints_usage),
		cmocka_unit_test(test_print_help_lists_every_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
