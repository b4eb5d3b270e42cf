/* cli.c - parsing options from a table and printing the help from the same table. */
#include "ui/cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ft_stdout_is_tty(void)
{
	return isatty(STDOUT_FILENO);
}

int ft_stderr_is_tty(void)
{
	return isatty(STDERR_FILENO);
}

static const struct ft_option *find_long(const struct ft_option *opts, const char *name, size_t len)
{
	for (const struct ft_option *o = opts; o->type != FT_OPT_END; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

static const struct ft_option *find_short(const struct ft_option *opts, char c)
{
	for (const struct ft_option *o = opts; o->type != FT_OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

static int set_value(const struct ft_command_help *cmd, const struct ft_option *o, const char *arg,
		     struct ft_err *err)
{
	char *end;

	switch (o->type) {
	case FT_OPT_STRING:
		*(const char **)o->value = arg;
		return 0;
	case FT_OPT_LIST: {
		struct ft_strlist *l = o->value;
		if (l->n == FT_LIST_MAX)
			return ft_error(err, FT_EINPUT, "fatune %s: --%s given more than %d times",
					cmd->name, o->name, FT_LIST_MAX);
		l->v[l->n++] = arg;
		return 0;
	}
	case FT_OPT_INT: {
		long long v;
		errno = 0;
		v = strtoll(arg, &end, 10);
		if (errno || end == arg || *end)
			return ft_error(err, FT_EINPUT, "fatune %s: --%s needs a whole number, not '%s'",
					cmd->name, o->name, arg);
		if ((o->min || o->max) && (v < o->min || v > o->max))
			return ft_error(err, FT_EINPUT, "fatune %s: --%s %lld is out of range: use %.0f to %.0f",
					cmd->name, o->name, v, o->min, o->max);
		*(long long *)o->value = v;
		return 0;
	}
	case FT_OPT_DOUBLE: {
		double v;
		errno = 0;
		v = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(v))
			return ft_error(err, FT_EINPUT, "fatune %s: --%s needs a number, not '%s'",
					cmd->name, o->name, arg);
		if ((o->min || o->max) && (v < o->min || v > o->max))
			return ft_error(err, FT_EINPUT, "fatune %s: --%s %g is out of range: use %g to %g",
					cmd->name, o->name, v, o->min, o->max);
		*(double *)o->value = v;
		return 0;
	}
	default:
		*(int *)o->value = 1;
		return 0;
	}
}

/* The most options one table may hold: the widest command has about 40. */
#define MAX_OPTS 128

int ft_parse_options(const struct ft_command_help *cmd, const struct ft_option *opts, int argc,
		     char **argv, int max_pos, int *npos, struct ft_err *err)
{
	int pos = 0, only_pos = 0;
	const char *given[MAX_OPTS] = { 0 }; /* the argument each single-valued option got */
	int nopts = 0;

	while (opts[nopts].type != FT_OPT_END)
		nopts++;
	if (nopts > MAX_OPTS)
		return ft_error(err, FT_EFAIL, "fatune %s: %d options in its table, more than %d",
				cmd->name, nopts, MAX_OPTS);

	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		const struct ft_option *o;
		const char *arg = NULL;

		if (only_pos || a[0] != '-' || a[1] == '\0') {
			if (pos >= max_pos)
				return ft_error(err, FT_EINPUT,
						"fatune %s: unexpected argument '%s': see 'fatune %s --help'",
						cmd->name, a, cmd->name);
			argv[1 + pos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			ft_print_help(stdout, cmd, opts);
			return 1;
		}
		if (a[1] == '-') {
			char *eq = strchr(a + 2, '=');
			o = find_long(opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
			if (!o)
				return ft_error(err, FT_EINPUT,
						"fatune %s: unknown option '%s': see 'fatune %s --help'",
						cmd->name, a, cmd->name);
			if (eq) {
				if (o->type == FT_OPT_FLAG)
					return ft_error(err, FT_EINPUT,
							"fatune %s: --%s takes no value", cmd->name, o->name);
				arg = eq + 1;
			}
		} else {
			o = find_short(opts, a[1]);
			if (!o || a[2])
				return ft_error(err, FT_EINPUT,
						"fatune %s: unknown option '%s': see 'fatune %s --help'",
						cmd->name, a, cmd->name);
		}
		if (o->type != FT_OPT_FLAG && !arg) {
			if (i + 1 >= argc)
				return ft_error(err, FT_EINPUT, "fatune %s: --%s needs a value (%s)",
						cmd->name, o->name, o->argname ? o->argname : "VALUE");
			arg = argv[++i];
		}
		/* A single-valued option given twice is a mistake (which one was
		 * meant?), never "the last one wins"; a repeated flag is harmless. */
		if (o->type != FT_OPT_FLAG && o->type != FT_OPT_LIST) {
			const char **prev = &given[o - opts];
			if (*prev)
				return ft_error(err, FT_EINPUT,
						"fatune %s: --%s given twice ('%s' and '%s'): give it once",
						cmd->name, o->name, *prev, arg);
			*prev = arg;
		}
		if (set_value(cmd, o, arg, err))
			return -1;
	}
	*npos = pos;
	return 0;
}

void ft_print_help(FILE *out, const struct ft_command_help *cmd, const struct ft_option *opts)
{
	fprintf(out, "usage: %s\n\n%s\n", cmd->usage, cmd->summary);
	if (opts && opts->type != FT_OPT_END)
		fprintf(out, "\noptions:\n");
	for (const struct ft_option *o = opts; o && o->type != FT_OPT_END; o++) {
		char left[96];
		int n = 0;
		if (o->short_name)
			n = snprintf(left, sizeof(left), "-%c, ", o->short_name);
		snprintf(left + n, sizeof(left) - n, "--%s%s%s", o->name, o->argname ? " " : "",
			 o->argname ? o->argname : "");
		fprintf(out, "  %-26s %s%s\n", left, o->help,
			o->type == FT_OPT_LIST ? " (repeatable)" : "");
	}
	fprintf(out, "  %-26s %s\n", "-h, --help", "show this help and exit");
	if (cmd->details)
		fprintf(out, "\n%s\n", cmd->details);
}
