/* err.h - the one error type every fatune module fills instead of printing.
 *
 * Library code never prints and never exits: a function that can fail takes a
 * `struct ft_err *` and, on failure, stores a status and a one-line message and
 * returns -1 (so `return ft_error(err, FT_EINPUT, "...")` reads naturally).
 * Only main.c and the cmd_*.c files print the message and turn the status into
 * the process exit code.
 *
 * Message style (after git): lowercase, no final period, quote the subject,
 * say what was wrong, where, and what to do next.
 */
#ifndef FT_ERR_H
#define FT_ERR_H

#include <stddef.h>

/* Exit codes, shared by the CLI and the error statuses. */
enum {
	FT_OK = 0,	/* success */
	FT_EFAIL = 1,	/* the work failed (I/O, CUDA, SQLite, ...) */
	FT_EINPUT = 2,	/* usage error or bad input (option, shape, YAML, ...) */
	FT_EINTR = 3,	/* stopped by SIGINT/SIGTERM: what finished is kept; the
			 * process exits 1 (ft_report), as for a failure */
};

struct ft_err {
	int status;	  /* FT_EFAIL, FT_EINPUT or FT_EINTR once set; FT_OK while clear */
	char msg[512];	  /* one line, no trailing newline */
};

/* Stores status and the formatted message in *err (err may be NULL) and
 * returns -1. A later call overwrites an earlier one. Control characters
 * (line breaks in quoted user text) become spaces: the message is one line. */
int ft_error(struct ft_err *err, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes the message already in err with "prefix: " (keeps the status). */
void ft_err_prefix(struct ft_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void ft_err_clear(struct ft_err *err)
{
	if (err) {
		err->status = FT_OK;
		err->msg[0] = '\0';
	}
}

#endif
