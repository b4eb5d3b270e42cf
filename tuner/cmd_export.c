/* cmd_export.c - `fatune export`: the best config of a shape as build_config.h.
 *
 * The file is written to a temporary name and renamed, so a failed export never
 * leaves half a header behind or clobbers the previous one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "db.h"
#include "export.h"
#include "target.h"

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
		"Nothing tuned yet: run the 'fatune search' command the error message names."
	};
	struct ft_target_opts o = { 0 };
	const char *output = NULL, *style = "cxx", *device = NULL;
	int npos, rc;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(&o),
		FT_OPT_STR_("space", 0, &o.space, "FILE",
			    "export that space's best (default: the fastest across spaces)"),
		FT_DB_OPTION(&o),
		FT_OPT_STR_("output", 'o', &output, "FILE", "write here (default: standard output)"),
		FT_OPT_STR_("style", 0, &style, "cxx|c", "constexpr int (default) or #define"),
		FT_OPT_STR_("device", 0, &device, "NAME", "the device whose result to export"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_shape shape;
	struct ft_space *sp = NULL;
	const struct ft_arch *arch;
	struct ft_db *db = NULL;
	struct ft_best best;
	struct ft_best_key key;
	enum ft_export_style es;
	char tmp[4200], shape_txt[FT_SHAPE_TEXT_MAX];
	FILE *f = stdout;
	int found;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (!strcmp(style, "cxx") || !strcmp(style, "c++"))
		es = FT_EXPORT_CXX;
	else if (!strcmp(style, "c"))
		es = FT_EXPORT_C;
	else {
		ft_error(&err, FT_EINPUT, "fatune export: bad --style '%s': use cxx or c", style);
		return ft_report(&err);
	}
	if (!o.arch) {
		ft_error(&err, FT_EINPUT, "fatune export: --arch is required, e.g. --arch sm_90");
		return ft_report(&err);
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
	if (output) {
		snprintf(tmp, sizeof(tmp), "%s.%d.tmp", output, (int)getpid());
		if (!(f = fopen(tmp, "w"))) {
			ft_error(&err, FT_EFAIL, "cannot write '%s': %s", tmp, strerror(errno));
			goto fail;
		}
	}
	rc = ft_export_header(f, &best, es, &err);
	if (output) {
		if (fclose(f) && !rc)
			rc = ft_error(&err, FT_EFAIL, "cannot write '%s': %s", tmp, strerror(errno));
		if (!rc && rename(tmp, output))
			rc = ft_error(&err, FT_EFAIL, "cannot rename '%s' to '%s': %s", tmp, output,
				      strerror(errno));
		if (rc)
			unlink(tmp);
		else
			fprintf(stderr, "fatune: wrote %s (%s, %.2f us on %s)\n", output, best.config,
				best.t_median_us, best.device);
	}
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
