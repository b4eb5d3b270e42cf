/* cmd_export.c - `fatune export`: the best config of a shape as build_config.h,
 * or (--dispatch) every tuned shape as a dispatch table (export_dispatch.c).
 *
 * The file is written through base/outfile.h (a temporary file beside it,
 * renamed), so a failed export never leaves half a file behind or clobbers
 * the previous one, and never writes through a link, a device or the database.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/outfile.h"
#include "cmd/cmd.h"
#include "db/db.h"
#include "export/export.h"
#include "export/export_dispatch.h"
#include "base/paths.h"
#include "cmd/target.h"
#include "compile/feasibility.h"
#include "space/candidate.h"
#include "export/export_library.h"

/* What to write: one shape's header, or the dispatch table of every shape. */
struct job {
	const struct ft_export_src *header;	/* one shape */
	const struct ft_dispatch *table;	/* --dispatch */
	enum ft_export_style style;
	int json;				/* --format json (dispatch only) */
};

static int write_job(FILE *f, const struct job *j, struct ft_err *err)
{
	if (!j->table)
		return ft_export_header(f, j->header, err);
	return ft_dispatch_write(f, j->table,
				 j->json ? FT_DISPATCH_JSON : j->style == FT_EXPORT_C ? FT_DISPATCH_C : FT_DISPATCH_CXX,
				 err);
}

/* Writes j to output (NULL or "-": stdout) through the one output writer
 * (base/outfile.h), never onto the database db_path. */
static int write_output(const char *output, const char *db_path, const struct job *j, struct ft_err *err)
{
	struct ft_outfile f;

	if (ft_outfile_open(&f, output ? output : "-", db_path, err))
		return -1;
	if (write_job(f.f, j, err)) {
		ft_outfile_abort(&f);
		return -1;
	}
	return ft_outfile_commit(&f, err);
}

/* The space a stored row was tuned with: --space when given, else the file
 * its run recorded (when it still holds that space), else the shipped space
 * of that name. The recorded path comes from the database, which is not
 * trusted: a file there that is not that space is passed over silently. */
static int row_space(const struct ft_best *b, struct ft_space *given, struct ft_space **out, struct ft_err *err)
{
	struct ft_space *sp;
	struct ft_err ignored = { 0 };
	char shipped[FT_PATH_MAX];

	if (given) {
		*out = given;
		return 0;
	}
	if (!(sp = malloc(sizeof(*sp))))
		return ft_error(err, FT_EFAIL, "out of memory loading a space");
	if (b->space_path[0] && !ft_space_load(sp, b->space_path, &ignored) && !strcmp(sp->name, b->space)) {
		*out = sp;
		return 0;
	}
	snprintf(shipped, sizeof(shipped), "%s/search_spaces/%s.yaml", ft_data_dir(), b->space);
	if (ft_is_ident(b->space) && !ft_space_load(sp, shipped, &ignored) && !strcmp(sp->name, b->space)) {
		*out = sp;
		return 0;
	}
	free(sp);
	return ft_error(err, FT_EINPUT,
			"cannot find space '%.64s' that the stored config was tuned with (its file '%.200s' is gone or changed): pass --space FILE",
			b->space, b->space_path[0] ? b->space_path : "unrecorded");
}

/* The table of every tuned shape of the arch (device, space), checked
 * against its space (*own: malloc'd when not sp). A replayed best is
 * refused unless allow_replayed. */
static int load_table(const struct ft_target_opts *o, const struct ft_arch *arch, const char *device,
		      struct ft_space *sp, const char *space_name, const char *what, int allow_replayed,
		      struct ft_dispatch *d, struct ft_space **own, struct ft_err *err)
{
	struct ft_db *db = NULL;
	struct ft_space *got = NULL;
	int rc, replayed = 0;

	*own = NULL;
	if (o->shape || o->kv_len || o->kv_heads || o->layout || o->dtype || o->causal)
		return ft_error(err, FT_EINPUT,
				"fatune export: %s writes every tuned shape: drop --shape, --kv-len, --kv-heads, --layout, --dtype and --causal",
				what);
	if (ft_db_open(&db, ft_db_path(o), 0, err))
		return -1;
	rc = ft_dispatch_collect(db, arch->name, device, sp ? sp->name : space_name, d, err);
	ft_db_close(db);
	if (rc)
		return -1;
	for (int i = 0; i < d->n; i++)
		replayed += d->rows[i].replayed;
	if (replayed && !allow_replayed) {
		ft_error(err, FT_EINPUT,
			 "%d of the %d tuned shapes of %s in '%s' come from a replay ('search --replay'): their times were copied from a recording, not measured: search on a GPU, or pass --allow-replayed",
			 replayed, d->n, arch->name, ft_db_path(o));
		ft_dispatch_release(d);
		return -1;
	}
	if (row_space(&d->rows[0], sp, &got, err)) {
		ft_dispatch_release(d);
		return -1;
	}
	*own = got != sp ? got : NULL;
	if (ft_dispatch_prepare(d, got, arch, err)) {
		free(*own);
		*own = NULL;
		ft_dispatch_release(d);
		return -1;
	}
	if (o->space)
		snprintf(d->space_path, sizeof(d->space_path), "%s", o->space);
	return 0;
}

/* --dispatch: every tuned shape of the arch (device, space) in one file. */
static int export_dispatch(const struct ft_target_opts *o, const struct ft_arch *arch, const char *device,
			   struct ft_space *sp, const char *output, int allow_replayed, struct job *j,
			   struct ft_err *err)
{
	struct ft_dispatch d;
	struct ft_space *own;
	int rc;

	if (load_table(o, arch, device, sp, NULL, "--dispatch", allow_replayed, &d, &own, err))
		return -1;
	j->table = &d;
	rc = write_output(output, ft_db_path(o), j, err);
	if (!rc && output && strcmp(output, "-"))
		fprintf(stderr, "fatune: wrote %s (%d shape%s of %s on %s, space %s)\n", output, d.n, d.n == 1 ? "" : "s",
			arch->name, d.rows[0].device, d.rows[0].space);
	ft_dispatch_release(&d);
	free(own);
	return rc;
}

/* The one candidate of values for the shape, checked like a search would: the
 * space's constraints, the launch limits and shared memory on the arch. */
static int candidate(const struct ft_space *sp, const struct ft_arch *arch, const struct ft_shape *shape,
		     const long long *values, const char *config, int chosen, struct ft_build *build,
		     struct ft_err *err)
{
	struct ft_candidate c;
	struct ft_trial t;
	char unfit[256], shape_txt[FT_SHAPE_TEXT_MAX];

	ft_shape_format(shape, shape_txt, sizeof(shape_txt));
	if (ft_space_unfit(sp, arch, shape, unfit, sizeof(unfit)))
		return ft_error(err, FT_EINPUT, "space '%s' cannot run %s on %s: %s", sp->name, shape_txt, arch->name,
				unfit);
	if (ft_candidate_eval(sp, shape, arch, values, &c, err))
		return -1;
	ft_trial_init(&t);
	if (!ft_feasible_model(sp, arch, &c, &t))
		return ft_error(err, chosen ? FT_EINPUT : FT_EFAIL, "config %s cannot run %s on %s: %s%s", config,
				shape_txt, arch->name, t.reason,
				chosen ? ": pick another config (fatune check lists the valid ones)"
				       : ": the space changed since the search; search again or pass --space with the space it was tuned with");
	return ft_candidate_build(sp, shape, &c, build, err);
}

/* The (arch, space) pairs with tuned rows, for --library. */
struct pairs {
	char arch[FT_LIBRARY_MAX_PARTS][16];
	char space[FT_LIBRARY_MAX_PARTS][FT_NAME_MAX];
	int n;
	int bad;		/* a row could not be read, or too many pairs */
};

/* ft_db_query callback: notes each distinct (arch, space) of the best listing. */
static int add_pair(void *ctx, int ncols, const char *const *names, const char *const *values, const int *types)
{
	struct pairs *p = ctx;
	int a = ft_row_col(ncols, names, "arch"), sp = ft_row_col(ncols, names, "space");

	(void)types;
	if (a < 0 || sp < 0 || !values[a] || !values[sp])
		return p->bad = 1;
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->arch[i], values[a]) && !strcmp(p->space[i], values[sp]))
			return 0;
	if (p->n == FT_LIBRARY_MAX_PARTS)
		return p->bad = 2;
	snprintf(p->arch[p->n], sizeof(p->arch[0]), "%s", values[a]);
	snprintf(p->space[p->n], sizeof(p->space[0]), "%s", values[sp]);
	p->n++;
	return 0;
}

/* The parts of a library: every (arch, space) tuned in the database, or
 * those of the arches in list ("sm_80,sm_90", NULL: all) and of space sp
 * (NULL: all), ordered by compute capability then space name. */
static int library_pairs(const struct ft_target_opts *o, const char *list, const char *device,
			 const struct ft_space *sp, struct pairs *out, struct ft_err *err)
{
	struct ft_query_filter f = { NULL, device, NULL, -1, -1, NULL, -1, -1 };
	struct pairs all = { 0 };
	struct ft_db *db = NULL;
	const struct ft_arch *a;
	int rc;

	memset(out, 0, sizeof(*out));
	if (ft_db_open(&db, ft_db_path(o), 0, err))
		return -1;
	rc = ft_db_query(db, FT_Q_BEST, &f, add_pair, &all, err);
	ft_db_close(db);
	if (rc)
		return -1;
	if (all.bad)
		return ft_error(err, all.bad == 2 ? FT_EINPUT : FT_EFAIL, all.bad == 2 ?
				"more than %d (arch, space) pairs are tuned in '%s': pick some with --arch A,B and --space FILE" :
				"cannot read the best configs (%d pairs so far) of '%s': out of memory or a hand-edited database",
				FT_LIBRARY_MAX_PARTS, ft_db_path(o));
	for (int i = 0; i < all.n; i++) {
		int want = !sp || !strcmp(sp->name, all.space[i]);

		if (list) {
			const char *p = list;
			int in = 0;

			while (*p) {
				size_t len = strcspn(p, ",");

				in |= len == strlen(all.arch[i]) && !strncmp(p, all.arch[i], len);
				p += len + (p[len] == ',');
			}
			want &= in;
		}
		if (!want)
			continue;
		snprintf(out->arch[out->n], sizeof(out->arch[0]), "%s", all.arch[i]);
		snprintf(out->space[out->n], sizeof(out->space[0]), "%s", all.space[i]);
		out->n++;
	}
	if (list) {	/* every arch asked for has rows, and is one fatune knows */
		char one[16];
		const char *p = list;

		while (*p) {
			size_t len = strcspn(p, ",");
			int found = 0;

			snprintf(one, sizeof(one), "%.*s", (int)(len < 15 ? len : 15), p);
			if (!(a = ft_arch_find(one, err)))
				return -1;
			for (int i = 0; i < out->n; i++)
				found |= !strcmp(out->arch[i], one);
			if (!found)
				return ft_error(err, FT_EINPUT, "no tuned config for %s%s%s in '%s': run 'fatune search --arch %s%s%s' on such a GPU first",
						one, sp ? " in space " : "", sp ? sp->name : "", ft_db_path(o), one,
						sp ? " --space " : "", sp ? o->space : "");
			p += len + (p[len] == ',');
		}
	}
	if (!out->n)
		return ft_error(err, FT_EINPUT, "no tuned config%s%s%s in '%s': run 'fatune search' on a GPU first",
				sp ? " in space " : "", sp ? sp->name : "", device ? " on that device" : "", ft_db_path(o));
	/* the runtime's last tie-break is this order: make it independent of the database's */
	for (int i = 1; i < out->n; i++)
		for (int j = i; j > 0; j--) {
			const struct ft_arch *x = ft_arch_find(out->arch[j - 1], err), *y = ft_arch_find(out->arch[j], err);
			char ta[sizeof(out->arch[0])], ts[sizeof(out->space[0])];

			if (!x || !y)
				return -1;
			if (x->cc < y->cc || (x->cc == y->cc && strcmp(out->space[j - 1], out->space[j]) <= 0))
				break;
			/* whole fixed-size arrays: a swap, never an overlapping copy */
			memcpy(ta, out->arch[j], sizeof(ta));
			memcpy(out->arch[j], out->arch[j - 1], sizeof(ta));
			memcpy(out->arch[j - 1], ta, sizeof(ta));
			memcpy(ts, out->space[j], sizeof(ts));
			memcpy(out->space[j], out->space[j - 1], sizeof(ts));
			memcpy(out->space[j - 1], ts, sizeof(ts));
		}
	return 0;
}

/* --library DIR: every selected (arch, space) table, its CUBINs and the launch API as one C library. */
static int export_library(const struct ft_target_opts *o, const char *device, struct ft_space *sp,
			  const char *dir, int allow_replayed, struct ft_err *err)
{
	struct ft_dispatch parts[FT_LIBRARY_MAX_PARTS];
	struct ft_space *own[FT_LIBRARY_MAX_PARTS] = { 0 };
	struct pairs pairs;
	int rc = -1, ncubins, n = 0, shapes = 0;

	if (library_pairs(o, o->arch, device, sp, &pairs, err))
		return -1;
	for (int i = 0; i < pairs.n; i++) {
		const struct ft_arch *arch = ft_arch_find(pairs.arch[i], err);

		if (!arch || load_table(o, arch, device, sp, pairs.space[i], "--library", allow_replayed, &parts[n],
					&own[n], err))
			goto out;
		if (!sp && parts[n].sp->abi != 2) {	/* not asked for by name: left out, said so */
			fprintf(stderr, "fatune: left out space %s of %s: it speaks ABI v%d, the library launches ABI v2 templates only\n",
				parts[n].sp->name, arch->name, parts[n].sp->abi);
			ft_dispatch_release(&parts[n]);
			free(own[n]);
			own[n] = NULL;
			continue;
		}
		shapes += parts[n++].n;
	}
	if (!n) {
		ft_error(err, FT_EINPUT, "no tuned config of an ABI v2 space in '%s': the library launches ABI v2 templates only",
			 ft_db_path(o));
		goto out;
	}
	rc = ft_library_write(dir, parts, n, &ncubins, err);
	if (!rc) {
		fprintf(stderr, "fatune: wrote library %s (%d shape%s: ", dir, shapes, shapes == 1 ? "" : "s");
		for (int i = 0; i < n; i++)
			fprintf(stderr, "%s%d of %s on %s, space %s", i ? "; " : "", parts[i].n, parts[i].rows[0].arch,
				parts[i].rows[0].device, parts[i].rows[0].space);
		fprintf(stderr, "; %d CUBIN%s): build it with cmake -S %s -B %s/build, or pip install %s\n", ncubins,
			ncubins == 1 ? "" : "s", dir, dir, dir);
	}
out:
	for (int i = 0; i < n; i++) {
		ft_dispatch_release(&parts[i]);
		free(own[i]);
	}
	return rc;
}

int cmd_export(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"export", "fatune export --arch sm_XX --shape BxHxSxD [-o build_config.h] [options]",
		"Write the best stored config of a shape as a build_config.h header: where the numbers\n"
		"came from, every macro the template is compiled with (each one accepting a -D flag of\n"
		"the same value and stopping the build at another), and the launch: threads, grid,\n"
		"shared memory, splits, the combine kernel, the workspace and TMA boxes. Include it\n"
		"before the template and build with nvcc -arch alone.",
		"The config written is the fastest across the spaces searched for the shape (each\n"
		"space's latest result); --space FILE takes that space's instead. When results of\n"
		"several devices of the arch exist, --device picks one.\n"
		"--config NAME=V,... writes that config of the space (default: the shipped one) for\n"
		"the shape instead, with no database and no GPU; a config the space's constraints\n"
		"refuse for the shape is refused naming the constraint.\n"
		"--dispatch writes every tuned shape of the arch instead (no --shape): a constant table\n"
		"of configs and a selection function (only entries the space accepts for the shape, as\n"
		"`fatune check` would; then the nearest tuned S and KV length, then the nearest B*H; the\n"
		"rule is written in the file), as a C++ or C header, or as JSON with --format json.\n"
		"--library DIR writes one such table per tuned (arch, space) of the database, or of the\n"
		"arches of --arch (sm_89,sm_90; optional here) and the space of --space, with the CUBIN\n"
		"of every entry (compiled now with NVRTC, or taken from the CUBIN cache; no GPU needed),\n"
		"the launch API fatune_attention_forward, which chooses by the device's compute\n"
		"capability, and a Python package: build it with cmake, or pip install DIR.\n"
		"Nothing tuned yet: run the 'fatune search' command the error message names."
	};
	struct ft_target_opts o = { 0 };
	const char *output = NULL, *style = "cxx", *device = NULL, *format = "header", *config = NULL, *library = NULL;
	int npos, rc, dispatch = 0, allow_replayed = 0;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(&o),
		FT_OPT_STR_("space", 0, &o.space, "FILE",
			    "export that space's best (default: the fastest across spaces)"),
		FT_DB_OPTION(&o),
		FT_OPT_STR_("output", 'o', &output, "FILE", "write here (default: standard output)"),
		FT_OPT_STR_("style", 0, &style, "cxx|c", "macros and C++ constants (default) or macros only"),
		FT_OPT_STR_("device", 0, &device, "NAME", "the device whose result to export"),
		FT_OPT_STR_("config", 0, &config, "NAME=V,...", "export this config of the space (no database, no GPU)"),
		FT_OPT_FLAG_("dispatch", 0, &dispatch, "every tuned shape: a table and a selection function"),
		FT_OPT_FLAG_("allow-replayed", 0, &allow_replayed,
			     "export a best config from 'search --replay' (copied, not measured); the header says so"),
		FT_OPT_STR_("format", 0, &format, "header|json", "with --dispatch: a header (default) or JSON"),
		FT_OPT_STR_("library", 0, &library, "DIR",
			    "every tuned arch and space as one C library with its CUBINs, a launch API and a Python package"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_shape shape;
	struct ft_space *given = NULL, *sp = NULL;
	const struct ft_arch *arch;
	struct ft_db *db = NULL;
	struct ft_best best;
	struct ft_best_key key;
	struct ft_build build;
	struct ft_export_src src = { 0 };
	long long values[FT_MAX_PARAMS];
	struct job j = { 0 };
	char shape_txt[FT_SHAPE_TEXT_MAX], hint[1024];
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

	if (library) {
		if (dispatch || output || j.json || config) {
			ft_error(&err, FT_EINPUT, "fatune export: --library writes a directory: drop --dispatch, --output, --format and --config");
			return ft_report(&err);
		}
		rc = !(o.space && ft_target_space(&o, &given, &err)) ?
			     export_library(&o, device, given, library, allow_replayed, &err) : -1;
		free(given);
		return rc ? ft_report(&err) : FT_OK;
	}
	if (!o.arch) {
		ft_error(&err, FT_EINPUT, "fatune export: --arch is required, e.g. --arch sm_90");
		return ft_report(&err);
	}
	if (config && (dispatch || device || o.db)) {
		ft_error(&err, FT_EINPUT, "fatune export: --config writes the config given: drop %s",
			 dispatch ? "--dispatch" : device ? "--device" : "--db");
		return ft_report(&err);
	}

	if (dispatch) {
		rc = (arch = ft_arch_find(o.arch, &err)) && !(o.space && ft_target_space(&o, &given, &err)) ?
			     export_dispatch(&o, arch, device, given, output, allow_replayed, &j, &err) : -1;
		free(given);
		return rc ? ft_report(&err) : FT_OK;
	}
	if (!(arch = ft_arch_find(o.arch, &err)) || ft_target_shape("export", &o, &shape, &err) ||
	    ((o.space || config) && ft_target_space(&o, &given, &err)))
		goto fail;
	ft_shape_format(&shape, shape_txt, sizeof(shape_txt));
	if (config) {
		/* a chosen config: a row of its own, nothing measured */
		sp = given;
		if (ft_config_parse(sp, config, values, &err))
			goto fail;
		memset(&best, 0, sizeof(best));
		snprintf(best.arch, sizeof(best.arch), "%s", arch->name);
		snprintf(best.space, sizeof(best.space), "%s", sp->name);
		snprintf(best.family, sizeof(best.family), "%s", sp->family->name);
		snprintf(best.template_name, sizeof(best.template_name), "%s", sp->template_name);
		best.shape = shape;
		ft_config_format(sp, values, best.config, sizeof(best.config));
		if (candidate(sp, arch, &shape, values, best.config, 1, &build, &err))
			goto fail;
	} else {
		if (ft_db_open(&db, ft_db_path(&o), 0, &err))
			goto fail;
		key = (struct ft_best_key){ arch->name, device, given ? given->name : NULL, shape };
		found = ft_db_best_get(db, &key, &best, &err);
		if (found < 0)
			goto fail;
		if (!found) {
			snprintf(hint, sizeof(hint), "%s%s%s%s", o.space ? " --space " : "", o.space ? o.space : "",
				 o.db ? " --db " : "", o.db ? o.db : "");
			ft_error(&err, FT_EINPUT,
				 "no tuned config for %s %s %s%s%s%s in '%s': run 'fatune search --arch %s --shape %s%s --dtype %s%s' on such a GPU first, or export a config of your choice with --config NAME=V,...",
				 arch->name, shape_txt, ft_dtype_name(shape.dtype), shape.causal ? " causal" : "",
				 device ? " on " : "", device ? device : "", ft_db_path(&o), arch->name, shape_txt,
				 shape.causal ? " --causal" : "", ft_dtype_name(shape.dtype), hint);
			goto fail;
		}
		if (best.replayed && !allow_replayed) {
			ft_error(&err, FT_EINPUT,
				 "the best config for %s %s in '%s' comes from a replay (run %lld, 'search --replay'): its times were copied from a recording, not measured: search on a GPU, or pass --allow-replayed",
				 arch->name, shape_txt, ft_db_path(&o), best.run_id);
			goto fail;
		}
		if (row_space(&best, given, &sp, &err))
			goto fail;
		if (ft_config_parse(sp, best.config, values, &err)) {
			err.status = FT_EFAIL;
			goto fail;
		}
		if (candidate(sp, arch, &best.shape, values, best.config, 0, &build, &err))
			goto fail;
	}
	src = (struct ft_export_src){ .best = &best, .sp = sp, .values = values, .build = &build,
				      .nvrtc_arch = sp->family->nvrtc_arch(arch), .style = j.style,
				      .from_config = config != NULL, .db_arg = o.db };
	/* name the space when it is not the default one */
	if (o.space)
		src.space_arg = o.space;
	else if (!config && sp != given && strcmp(sp->name, "attention"))
		src.space_arg = sp->path;
	j.header = &src;
	rc = write_output(output, ft_db_path(&o), &j, &err);
	if (rc)
		goto fail;
	if (output && !strcmp(output, "-"))
		;	/* standard output: nothing to announce */
	else if (output && config)
		fprintf(stderr, "fatune: wrote %s (%s, chosen, not measured)\n", output, best.config);
	else if (output)
		fprintf(stderr, "fatune: wrote %s (%s, %.2f us on %s)\n", output, best.config, best.t_median_us,
			best.device);
	if (db)
		ft_db_close(db);
	if (sp != given)
		free(sp);
	free(given);
	return FT_OK;
fail:
	if (db)
		ft_db_close(db);
	if (sp != given)
		free(sp);
	free(given);
	return ft_report(&err);
}
