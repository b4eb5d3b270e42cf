/* report.h - the HTML report of a tuning database: what was tuned, how fast,
 * and where in the space the rejected and the fast configs lie.
 *
 * report.c loads the model below from the database (through db.h's
 * listings: runs and trials); report_html.c renders it as one self-contained
 * HTML file (inline SVG and CSS, no script, nothing fetched). A "shape" of the
 * report is one search key (one target x shape x space): all its runs
 * together, keeping the latest trial of each config, as the best row does.
 */
#ifndef FT_REPORT_H
#define FT_REPORT_H

#include <stdio.h>

#include "db/db.h"
#include "base/err.h"
#include "export/export.h"
#include "base/trial.h"

/* One config's latest trial. */
struct ft_report_trial {
	char *config;			/* malloc'd "NAME=V,..." */
	char *reason;			/* malloc'd, "" for ok */
	enum ft_status status;
	double t_median_us, t_min_us, rel_err;	/* NAN when not measured */
	long long id;
	int vals[FT_EXPORT_MAX_ENTRIES];	/* parallel to the shape's params; 0 if absent */
};

struct ft_report_shape {
	char search_key[40];
	char arch[16];
	char device[128];		/* "" when nothing was timed */
	char space[FT_NAME_MAX];
	char campaign[FT_NAME_MAX];	/* "" if none */
	int replayed;			/* its runs were `search --replay`: times copied, not measured */
	struct ft_shape shape;
	struct ft_report_trial *t;	/* fastest ok first, then the rest by config */
	int nt, cap;
	int nok;			/* t[0..nok-1] are ok */
	int status_count[FT_ST_COUNT];
	int nparams;			/* the first trial's parameters */
	char params[FT_EXPORT_MAX_ENTRIES][FT_NAME_MAX];
	int row_param, col_param;	/* the heatmap's axes (indexes into params), -1 none */
};

struct ft_report {
	struct ft_report_shape *s;
	int n;
	char db_path[FT_PATH_MAX];
};

struct ft_report_opts {
	const char *arch;		/* NULL: every arch */
	const char *device;		/* NULL: every device */
	const char *campaign;		/* NULL: every run */
	const char *rows, *cols;	/* heatmap axes by parameter name; NULL: chosen (see report.c) */
};

/* Loads every search matching o. Nothing matches: FT_EINPUT. A --rows or
 * --cols name that no shape has: FT_EINPUT. */
int ft_report_load(struct ft_db *db, const char *db_path, const struct ft_report_opts *o,
		   struct ft_report *out, struct ft_err *err);
void ft_report_release(struct ft_report *r);

/* Writes the HTML. Every text from the database is escaped. FT_EFAIL on a
 * write error. */
int ft_report_html(FILE *out, const struct ft_report *r, struct ft_err *err);

#endif
