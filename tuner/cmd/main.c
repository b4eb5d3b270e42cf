/* main.c - the command table: which subcommands exist and what each is for.
 *
 * After git.c: `fatune CMD [options]` dispatches to cmd_CMD (one file each);
 * `fatune help` lists the table; `fatune CMD --help` prints the help generated
 * from CMD's option table. `fatune __worker` is the GPU worker process that
 * search and bench spawn (worker.h); it is not for people.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config.h"
#include "compile/nvrtc.h"
#include "run/worker.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "check", cmd_check, "list every candidate of a space: accepted, or rejected with the reason" },
	{ "search", cmd_search, "compile, verify and time every feasible candidate; store the best" },
	{ "bench", cmd_bench, "time one config (or the stored best) with the search's method" },
	{ "query", cmd_query, "read the tuning database: best configs, trials, runs" },
	{ "export", cmd_export, "write build_config.h for the best config of a shape" },
	{ "report", cmd_report, "write an HTML report: speed per shape, heatmaps, rejected regions" },
	{ "db", cmd_db, "maintain tuning databases: merge the files of SLURM shards or hosts" },
	{ "cache", cmd_cache, "show or clear the compiled-CUBIN cache" },
	{ "devices", cmd_devices, "show the GPU fatune would use and its limits" },
};
#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static void usage(FILE *out)
{
	fprintf(out, "usage: fatune <command> [options]\n\n"
		     "fatune tunes GPU attention kernels: it searches a template's parameters,\n"
		     "rejects what cannot fit the target arch before compiling, compiles the rest\n"
		     "with NVRTC, verifies and times them on the GPU, and keeps every result in\n"
		     "an SQLite database.\n\ncommands:\n");
	for (int i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'fatune <command> --help' shows a command's options; 'fatune --version' the versions.\n"
		     "Exit codes: 0 ok, 1 failure, 2 usage error or bad input.\n");
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name) {
		usage(stderr);
		return FT_EINPUT;
	}
	if (!strcmp(name, "__worker"))
		return ft_worker_main(argc - 1, argv + 1);
	if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
		if (argc > 2 && strcmp(argv[2], "help")) {
			char *hargv[] = { argv[2], "--help", NULL };
			for (int i = 0; i < NCOMMANDS; i++)
				if (!strcmp(commands[i].name, argv[2]))
					return commands[i].fn(2, hargv);
			fprintf(stderr, "fatune: error: no command '%s': run 'fatune help'\n", argv[2]);
			return FT_EINPUT;
		}
		usage(stdout);
		return FT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("fatune %s (NVRTC %s)\n", FATUNE_VERSION, ft_nvrtc_version());
		return FT_OK;
	}
	for (int i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "fatune: error: no command '%s': run 'fatune help' for the list\n", name);
	return FT_EINPUT;
}
