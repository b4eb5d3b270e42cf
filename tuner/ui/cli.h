/* cli.h - option tables: one table per command both parses argv and prints --help.
 *
 * After git's parse-options: a command declares its options once, with their help
 * text, so `fatune CMD --help` can never drift from what CMD accepts. Parsing
 * errors are FT_EINPUT with one line naming the option and the fix.
 */
#ifndef FT_CLI_H
#define FT_CLI_H

#include <stdio.h>

#include "base/err.h"

enum ft_opt_type {
	FT_OPT_END = 0,
	FT_OPT_FLAG,	/* int *: set to 1 */
	FT_OPT_STRING,	/* const char **: the argument */
	FT_OPT_INT,	/* long long *: a decimal integer within [min, max] */
	FT_OPT_DOUBLE,	/* double *: a number within [min, max] */
	FT_OPT_LIST,	/* struct ft_strlist *: the argument of each repetition */
};

/* What a repeatable option collects, in order. */
#define FT_LIST_MAX 64
struct ft_strlist {
	int n;
	const char *v[FT_LIST_MAX];
};

struct ft_option {
	enum ft_opt_type type;
	const char *name;	/* long name without "--" */
	char short_name;	/* 0 for none */
	void *value;
	const char *argname;	/* "ARCH" in "--arch ARCH"; NULL for flags */
	const char *help;	/* one line */
	double min, max;	/* for INT and DOUBLE; both 0 means any */
};

#define FT_OPT_FLAG_(n, s, v, h) { FT_OPT_FLAG, n, s, v, NULL, h, 0, 0 }
#define FT_OPT_STR_(n, s, v, a, h) { FT_OPT_STRING, n, s, v, a, h, 0, 0 }
#define FT_OPT_INT_(n, s, v, a, h, lo, hi) { FT_OPT_INT, n, s, v, a, h, lo, hi }
#define FT_OPT_DBL_(n, s, v, a, h, lo, hi) { FT_OPT_DOUBLE, n, s, v, a, h, lo, hi }
#define FT_OPT_LIST_(n, s, v, a, h) { FT_OPT_LIST, n, s, v, a, h, 0, 0 }
#define FT_OPT_END_ { FT_OPT_END, NULL, 0, NULL, NULL, NULL, 0, 0 }

struct ft_command_help {
	const char *name;	/* "search" */
	const char *usage;	/* "fatune search --shape BxHxSxD [options]" */
	const char *summary;	/* one line, shown in `fatune help` too */
	const char *details;	/* paragraph(s) after the options, may be NULL */
};

/* Parses argv[1..] (argv[0] is the command name) against opts. Positional
 * arguments are moved to the front of argv; *npos receives their count and at
 * most max_pos are accepted. --help / -h prints help to stdout and returns 1.
 * Returns 0 on success, -1 with FT_EINPUT on a bad option. */
int ft_parse_options(const struct ft_command_help *cmd, const struct ft_option *opts, int argc,
		     char **argv, int max_pos, int *npos, struct ft_err *err);

void ft_print_help(FILE *out, const struct ft_command_help *cmd, const struct ft_option *opts);

/* True when stdout is a terminal (progress bars, table widths). */
int ft_stdout_is_tty(void);
int ft_stderr_is_tty(void);

#endif
