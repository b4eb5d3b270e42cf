/* cmd.h - the subcommands (one file each, cmd_<name>.c) and their shared helpers.
 *
 * Each cmd_<name> takes argv with argv[0] = the command name and returns the
 * process exit code: 0 ok, 1 failure, 2 usage or bad input. Only these files
 * and main.c print errors.
 */
#ifndef FT_CMD_H
#define FT_CMD_H

#include "ui/cli.h"
#include "base/err.h"

int cmd_search(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Prints "fatune: error: MSG" to stderr (a leading "fatune " of MSG dropped, so
 * "fatune check: x" reads "fatune: error: check: x": one prefix) and returns
 * err->status (1 if unset). */
int ft_report(const struct ft_err *err);

/* "warning: ..." to stderr. */
void ft_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses options; returns -1 to continue, else the exit code to return now
 * (0 after --help, 2 after a bad option, already reported). */
int ft_cmd_parse(const struct ft_command_help *h, const struct ft_option *opts, int argc,
		 char **argv, int max_pos, int *npos);



#include "base/arch.h"
#include "run/runner.h"

/* The arch a command targets: --arch if given (and known), else the arch of
 * the device in dev (when dev->present), else FT_EINPUT asking for --arch. */
int ft_cmd_arch(const char *cmd, const char *arch_opt, const struct ft_device_info *dev,
		const struct ft_arch **out, struct ft_err *err);

/* Online CPU cores (at least 1): the default for --jobs. */
int ft_ncores(void);

/* Opens the gpu runner on $FATUNE_DEVICE or 0 (or learns there is no GPU:
 * dev->present == 0, *r NULL). */
int ft_cmd_runner(struct ft_runner **r, struct ft_device_info *dev, struct ft_err *err);

/* GPUs of one model, timing together (their runners share a search). */
struct ft_gpu_group {
	char name[128];			/* the device model, e.g. "NVIDIA H200" */
	char driver[32];		/* driver version, "13000" */
	struct ft_arch arch;		/* the target arch with this device's limits */
	int sm_count;
	struct ft_runner *runners[FT_MAX_RUNNERS];	/* one gpu runner each */
	int nrunners;
};

/* The GPUs a command times on, grouped by model. */
struct ft_gpus {
	const struct ft_arch *arch;	/* the target: --arch, else the first GPU's */
	struct ft_gpu_group groups[FT_MAX_RUNNERS];
	int ngroups;			/* 0: nothing here can time arch (feasibility only) */
	struct ft_runner *unused[FT_MAX_RUNNERS];	/* runners of other archs, closed later */
	int nunused;
};

/* Opens a gpu runner per GPU of `devices` (NULL: $FATUNE_DEVICE or 0; "all";
 * "0,2,..."), picks the target arch (arch_opt, else the first GPU's) and groups
 * the GPUs of that arch by model. Says on stderr why nothing or some GPUs
 * cannot time the arch. FT_EINPUT for a bad --devices or no arch to take. */
int ft_cmd_gpus(const char *cmd, const char *devices, const char *arch_opt, struct ft_gpus *g,
		struct ft_err *err);
void ft_cmd_gpus_stop(struct ft_gpus *g);
/* ft_cmd_gpus_stop for a command about to exit: its GPU workers are told to
 * exit and not waited for (run/runner.h, leave). */
void ft_cmd_gpus_leave(struct ft_gpus *g);

/* For a campaign's units side by side (--units-per-gpu): opens per_gpu - 1
 * more gpu runners on each GPU of the one group (none with several groups),
 * appended in rounds (GPU 0, GPU 1, ..., GPU 0, ...) so that the first
 * runners handed out are on different GPUs; never more than FT_MAX_RUNNERS
 * in all. Runners of one GPU take turns (run/runner_gpu.c). -1 with err (the
 * runners stay with g, for ft_cmd_gpus_stop). */
int ft_cmd_gpus_share(struct ft_gpus *g, int per_gpu, struct ft_err *err);

/* --timing warm|cold and --budget N|Ns, checked. */
int ft_cmd_timing(const char *cmd, const char *timing, struct ft_err *err);
int ft_cmd_budget(const char *cmd, const char *text, long long *n, double *seconds,
		  struct ft_err *err);
#endif
