/* cmd.h - the subcommands (one file each, cmd_<name>.c) and their shared helpers.
 *
 * Each cmd_<name> takes argv with argv[0] = the command name and returns the
 * process exit code: 0 ok, 1 failure, 2 usage or bad input. Only these files
 * and main.c print errors.
 */
#ifndef FT_CMD_H
#define FT_CMD_H

#include "cli.h"
#include "err.h"

int cmd_search(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_devices(int argc, char **argv);

/* Prints "fatune: error: MSG" to stderr and returns err->status (1 if unset). */
int ft_report(const struct ft_err *err);

/* "warning: ..." to stderr. */
void ft_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses options; returns -1 to continue, else the exit code to return now
 * (0 after --help, 2 after a bad option, already reported). */
int ft_cmd_parse(const struct ft_command_help *h, const struct ft_option *opts, int argc,
		 char **argv, int max_pos, int *npos);

#endif
