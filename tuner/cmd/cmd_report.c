/* cmd_report.c - `fatune report`: the tuning database as one self-contained
 * HTML file (report.c loads it, report_html.c writes it). Written through
 * base/outfile.h, like export: a failed report leaves nothing, and the output
 * is never a link, a device or the database.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/outfile.h"
#include "cmd/cmd.h"
#include "db/db.h"
#include "export/report.h"
#include "cmd/target.h"

int cmd_report(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"report", "fatune report -o report.html [--arch sm_XX] [--device NAME] [--campaign NAME]",
		"Write an HTML report of the tuning database: every search with its speed, and per\n"
		"search the best and runner-up configs and a heatmap of the latency over two parameters.",
		"One file, readable offline: inline SVG and CSS, no script, nothing fetched. A search\n"
		"is one shape on one target with one space (its runs together, the latest trial of each\n"
		"config). The heatmap's rows and columns default to the two parameters with the most\n"
		"distinct values; --rows and --cols name others. A cell holds the fastest verified\n"
		"config with its two values; hatched cells had none, and name the status most of their\n"
		"configs ended with (the list under the map gives each status's most common reason)."
	};
	struct ft_target_opts o = { 0 };
	struct ft_report_opts ro = { 0 };
	const char *output = NULL;
	int npos, rc;
	struct ft_option opts[] = {
		FT_ARCH_OPTION(&o), FT_DB_OPTION(&o),
		FT_OPT_STR_("output", 'o', &output, "FILE", "write here (required; - for standard output)"),
		FT_OPT_STR_("device", 0, &ro.device, "NAME", "only searches timed on this device"),
		FT_OPT_STR_("campaign", 0, &ro.campaign, "NAME", "only the searches of this campaign"),
		FT_OPT_STR_("rows", 0, &ro.rows, "PARAM", "the heatmap's row parameter"),
		FT_OPT_STR_("cols", 0, &ro.cols, "PARAM", "the heatmap's column parameter"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_report r = { 0 };
	struct ft_db *db = NULL;
	struct ft_outfile f;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (!output) {
		ft_error(&err, FT_EINPUT, "fatune report: -o FILE is required, e.g. -o report.html");
		return ft_report(&err);
	}
	if (o.arch && !ft_arch_find(o.arch, &err))
		return ft_report(&err);
	ro.arch = o.arch ? ft_arch_find(o.arch, &err)->name : NULL;
	if (ft_db_open(&db, ft_db_path(&o), 0, &err))
		return ft_report(&err);
	rc = ft_report_load(db, ft_db_path(&o), &ro, &r, &err);
	ft_db_close(db);
	if (rc)
		return ft_report(&err);
	if (ft_outfile_open(&f, output, ft_db_path(&o), &err))
		goto out;
	rc = ft_report_html(f.f, &r, &err);
	if (rc)
		ft_outfile_abort(&f);
	else
		rc = ft_outfile_commit(&f, &err);
	if (!rc && strcmp(output, "-"))
		fprintf(stderr, "fatune: wrote %s (%d search%s)\n", output, r.n, r.n == 1 ? "" : "es");
out:
	ft_report_release(&r);
	return rc || err.status ? ft_report(&err) : FT_OK;
}
