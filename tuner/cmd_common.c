/* cmd_common.c - what every subcommand shares: reporting errors, parsing options. */
#include <stdarg.h>
#include <stdio.h>

#include "cmd.h"

int ft_report(const struct ft_err *err)
{
	fprintf(stderr, "fatune: error: %s\n", err->msg[0] ? err->msg : "unknown failure");
	return err->status ? err->status : FT_EFAIL;
}

void ft_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fatune: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ft_cmd_parse(const struct ft_command_help *h, const struct ft_option *opts, int argc,
		 char **argv, int max_pos, int *npos)
{
	struct ft_err err = { 0 };
	int rc = ft_parse_options(h, opts, argc, argv, max_pos, npos, &err);

	if (rc == 1)
		return FT_OK;
	if (rc < 0)
		return ft_report(&err);
	return -1;
}
