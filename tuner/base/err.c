/* err.c - filling struct ft_err (see err.h for the conventions). */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message is one line whatever it quotes: user text (a shape, a config, an
 * expression) may hold line breaks or other control characters, which
 * become spaces (found by the fuzzers in tests/fuzz/). */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

int ft_error(struct ft_err *err, int status, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->status = status;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	one_line(err->msg);
	return -1;
}

void ft_err_prefix(struct ft_err *err, const char *fmt, ...)
{
	char prefix[256], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
	one_line(err->msg);
}
