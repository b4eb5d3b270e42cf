/* cmd_export.c - `fatune export`: the best config of a shape as build_config.h,
 * or (--dispatch) every tuned shape as a dispatch table (export_dispatch.c).
 *
 * The file is written to a temporary name and renamed, so a failed export never
 * leaves half a file behind or clobbers the previous one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "db/db.h"
#include "export/export.h"
#include "export/export_dispatch.h"
#include "cmd/target.h"

/* What to write: one shape's header, or the dispatch table of every shape. */
struct job {
	const struct ft_best *best;		/* one shape */
	const struct ft_dispatch *table;	/* --dispatch */
	enum ft_export_style style;
	int json;				/* --format json (dispatch only) */
};

static int write_job(FILE *f, const struct job *j, struct ft_err *err)
{
	if (!j->table)
		return ft_export_header(f, j->best, j->style, err);
	return ft_dispatch_write(f, j->table,
				 j->json ? FT_DISPATCH_JSON : j->style == FT_EXPORT_C ? FT_DISPATCH_C : FT_DISPATCH_CXX,
				 err);
}

/* Writes j to output (NULL: stdout) through a temporary file renamed into
 * place, so a failed export never leaves half a file behind. */
static int write_output(const char *output, const struct job *j, struct ft_err *err)
{
	char tmp[4200];
	FILE *f;
	int rc;

	if (!output)
		return write_job(stdout, j, err);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", output, (int)getpid());
	if (!(f = fopen(tmp, "w")))
		return ft_error(err, FT_EFAIL, "cannot write '%s': %s", tmp, strerror(errno));
	rc = write_job(f, j, err);
	if (fclose(f) && !rc)
		rc = ft_error(err, FT_EFAIL, "cannot write '%s': %s", tmp, strerror(errno));
	if (!rc && rename(tmp, output))
		rc = ft_error(err, FT_EFAIL, "cannot rename '%s' to '%s': %s", tmp, output, strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}

/* --dispatch: every tuned shape of the arch (device, space) in one file. */
static int export_dispatch(const struct ft_target_opts *o, const struct ft_arch *arch, const char *device,
			   const struct ft_space *sp, const char *output, struct job *j, struct ft_err *err)
{
	struct ft_dispatch d;
	struct ft_db *db = NULL;
	int rc;

	if (o->shape || o->kv_len || o->kv_heads || o->layout || o->dtype || o->causal)
		return ft_error(err, FT_EINPUT,
				"fatune export: --dispatch writes every tuned shape: drop --shape, --kv-len, --kv-heads, --layout, --dtype and --causal");
	if (ft_db_open(&db, ft_db_path(o), 0, err))
		return -1;
	rc = ft_dispatch_collect(db, arch->name, device, sp ? sp->name : NULL, &d, err);
	ft_db_close(db);
	if (rc)
		return -1;
	if (o->space)
		snprintf(d.space_path, sizeof(d.space_path), "%s", o->space);
	j->table = &d;
	rc = write_output(output, j, err);
	if (!rc && output)
		fprintf(stderr, "fatune: wrote %s (%d shape%s of %s on %s, space %s)\n", output, d.n, d.n == 1 ? "" : "s",
			arch->name, d.rows[0].device, d.rows[0].space);
	ft_dispatch_release(&d);
	return rc;
}

int cmd_export(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"export", "fatune export --arch sm_XX --shape BxHxSxD [-o build_config.h] [options]",
		"Write the best stored config of a shape as a build_config.h header: an include guard,\n"
		"where the numbers came from (device, date, latency, template hash, fatune version) and\n"
		"one constant per parameter (constexpr int NAME = V; or #define with --style c).",
		"The config written is the fastest across the spaces searched for the shape (each\n"
		"space's latest result); --space FILE takes that space's instead. When results of\n"
		"several devices of the arch exist, --device picks one.\n"
		"--dispatch writes every tuned shape of the arch instead (no --shape): a constant table\n"
		"of configs and a selection function (same D, dtype and causal flag, then the nearest\n"
		"tuned S and KV length, then the nearest B*H; the rule is written in the file), as a\n"
		"C++ or C header, or as JSON with --format json.\n"
		"Nothing tuned yet: run the 'fatune search' command the error message names."
	};
	struct ft_target_opts o = { 0 };
	const char *output = NULL, *style = "cxx", *device = NULL, *format = "header";
	int npos, rc, dispatch = 0;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(&o),
		FT_OPT_STR_("space", 0, &o.space, "FILE",
			    "export that space's best (default: the fastest across spaces)"),
		FT_DB_OPTION(&o),
		FT_OPT_STR_("output", 'o', &output, "FILE", "write here (default: standard output)"),
		FT_OPT_STR_("style", 0, &style, "cxx|c", "constexpr int (default) or #define"),
		FT_OPT_STR_("device", 0, &device, "NAME", "the device whose result to export"),
		FT_OPT_FLAG_("dispatch", 0, &dispatch, "every tuned shape: a table and a selection function"),
		FT_OPT_STR_("format", 0, &format, "header|json", "with --dispatch: a header (default) or JSON"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_shape shape;
	struct ft_space *sp = NULL;
	const struct ft_arch *arch;
	struct ft_db *db = NULL;
	struct ft_best best;
	struct ft_best_key key;
	struct job j = { 0 };
	char shape_txt[FT_SHAPE_TEXT_MAX];
	int found;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (!strcmp(style, "cxx") || !strcmp(style, "c++"))
		j.style = FT_EXPORT_CXX;
	else if (!strcmp(style, "c"))
		j.style = FT_EXPORT_C;
	else {
		ft_error(&err, FT_EINPUT, "fatune export: bad --style '%s': use cxx or c", style);
		return ft_report(&err);
	}
	if (strcmp(format, "header") && strcmp(format, "json")) {
		ft_error(&err, FT_EINPUT, "fatune export: bad --format '%s': use header or json", format);
		return ft_report(&err);
	}
	j.json = !strcmp(format, "json");
	if (j.json && !dispatch) {
		ft_error(&err, FT_EINPUT, "fatune export: --format json is for the dispatch table: add --dispatch");
		return ft_report(&err);
	}
	if (!o.arch) {
		ft_error(&err, FT_EINPUT, "fatune export: --arch is required, e.g. --arch sm_90");
		return ft_report(&err);
	}
	if (dispatch) {
		rc = (arch = ft_arch_find(o.arch, &err)) && !(o.space && ft_target_space(&o, &sp, &err)) ?
			     export_dispatch(&o, arch, device, sp, output, &j, &err) : -1;
		free(sp);
		return rc ? ft_report(&err) : FT_OK;
	}
	if (!(arch = ft_arch_find(o.arch, &err)) || ft_target_shape("export", &o, &shape, &err) ||
	    (o.space && ft_target_space(&o, &sp, &err)) ||
	    ft_db_open(&db, ft_db_path(&o), 0, &err))
		goto fail;
	key = (struct ft_best_key){ arch->name, device, sp ? sp->name : NULL, shape };
	found = ft_db_best_get(db, &key, &best, &err);
	if (found < 0)
		goto fail;
	if (!found) {
		ft_error(&err, FT_EINPUT,
			 "no tuned config for %s %s %s%s%s%s in '%s': run 'fatune search --arch %s --shape %s%s --dtype %s' on such a GPU first",
			 arch->name, ft_shape_format(&shape, shape_txt, sizeof(shape_txt)),
			 ft_dtype_name(shape.dtype), shape.causal ? " causal" : "", device ? " on " : "",
			 device ? device : "", ft_db_path(&o), arch->name, shape_txt,
			 shape.causal ? " --causal" : "", ft_dtype_name(shape.dtype));
		goto fail;
	}
	j.best = &best;
	rc = write_output(output, &j, &err);
	if (!rc && output)
		fprintf(stderr, "fatune: wrote %s (%s, %.2f us on %s)\n", output, best.config, best.t_median_us,
			best.device);
	if (rc)
		goto fail;
	ft_db_close(db);
	free(sp);
	return FT_OK;
fail:
	if (db)
		ft_db_close(db);
	free(sp);
	return ft_report(&err);
}
