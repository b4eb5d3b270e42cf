/* cmd_db.c - `fatune db SUBCOMMAND`: maintenance of tuning database files.
 *
 * One subcommand so far, `merge` (the files of SLURM shards or of several
 * hosts into one; the work is ft_db_merge in db_merge.c). The subcommand
 * table works like main.c's command table: `fatune db` lists it, `fatune db
 * merge --help` prints merge's options.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/interrupt.h"
#include "cmd/cmd.h"
#include "db/db.h"

/* Inputs one merge takes: a SLURM array of this many shards is already rare. */
#define MERGE_MAX_INPUTS 4096

static int db_merge(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"db merge", "fatune db merge OUT.db IN.db...",
		"Merge the runs and trials of tuning databases into OUT.db and recompute its best configs.",
		"OUT.db, the first file named, is where the others go: created if missing, else the\n"
		"inputs are added to what it holds (said on stderr). A run or trial OUT.db already holds is recognised and not\n"
		"copied again, so merging the same files twice adds nothing; a run that was unfinished\n"
		"in OUT.db takes its end from an input that has it. Inputs are only read (one of an older\n"
		"schema through an upgraded copy in $TMPDIR). Every input is checked first (an intact\n"
		"fatune database of a schema this fatune knows); one that is not is refused (exit 2)\n"
		"with every file left as it was. The merge is one transaction: all or nothing.\n"
		"Merge files after the searches writing them have ended: copy each shard's file off a\n"
		"network file system first (SQLite's WAL mode needs a local one)."
	};
	int quiet = 0, npos, rc, existed;
	struct stat out_st;
	struct ft_option opts[] = {
		FT_OPT_FLAG_("quiet", 'q', &quiet, "print nothing on success"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_merge_stats st;
	struct ft_db *db = NULL;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, MERGE_MAX_INPUTS + 1, &npos)) >= 0)
		return rc;
	if (npos < 2) {
		ft_error(&err, FT_EINPUT, "fatune db merge: needs OUT.db and at least one IN.db: 'fatune db merge OUT.db IN.db...'");
		return ft_report(&err);
	}
	existed = !stat(argv[1], &out_st);
	/* inputs first: a refused input must not leave a new OUT.db behind */
	for (int i = 2; i < npos + 1; i++)
		if (ft_db_merge_check(argv[i], &err))
			return ft_report(&err);
	if (ft_db_open(&db, argv[1], 1, &err))
		return ft_report(&err);
	/* Ctrl-C: the transaction is rolled back, OUT.db keeps what it held */
	ft_interrupt_install(1);
	rc = ft_db_merge(db, (const char *const *)argv + 2, npos - 1, &st, &err);
	ft_interrupt_install(0);
	ft_db_close(db);
	if (rc)
		return ft_report(&err);
	if (!quiet)
		printf("merged %d file%s into %s: %lld run%s added (%lld already there, %lld of them finished now), "
		       "%lld trial%s added (%lld already there), %lld best row%s recomputed\n",
		       npos - 1, npos == 2 ? "" : "s", argv[1], st.runs_added, st.runs_added == 1 ? "" : "s",
		       st.runs_known, st.runs_finished, st.trials_added, st.trials_added == 1 ? "" : "s",
		       st.trials_known, st.best_rows, st.best_rows == 1 ? "" : "s");
	/* `db merge a.db b.db` meant as "merge a and b" reads the same as "add b
	 * to a": say which one happened */
	if (existed && !quiet)
		fprintf(stderr,
			"fatune: '%s' existed: the inputs were added to it, it was not read as an input "
			"(to combine it and the inputs in a new file: 'fatune db merge NEW.db %s IN.db...')\n",
			argv[1], argv[1]);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} subcommands[] = {
	{ "merge", db_merge, "merge tuning databases (SLURM shards, hosts) into one" },
};
#define NSUB ((int)(sizeof(subcommands) / sizeof(subcommands[0])))

static void db_usage(FILE *out)
{
	fprintf(out, "usage: fatune db <subcommand> [options]\n\nMaintain tuning database files.\n\nsubcommands:\n");
	for (int i = 0; i < NSUB; i++)
		fprintf(out, "  %-7s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(out, "\n'fatune db <subcommand> --help' shows its options.\n");
}

int cmd_db(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (name && (!strcmp(name, "--help") || !strcmp(name, "-h"))) {
		db_usage(stdout);
		return FT_OK;
	}
	if (!name) {
		fprintf(stderr, "fatune: error: db: needs a subcommand: 'fatune db merge OUT.db IN.db...'\n");
		return FT_EINPUT;
	}
	for (int i = 0; i < NSUB; i++)
		if (!strcmp(subcommands[i].name, name))
			return subcommands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "fatune: error: db: no subcommand '%s': run 'fatune db --help' for the list\n", name);
	return FT_EINPUT;
}
