/* err.c - filling struct ft_err (see err.h for the conventions). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ft_error(struct ft_err *err, int status, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->status = status;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
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
}
