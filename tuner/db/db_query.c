/* db_query.c - reading the tuning database: best configs (refresh and get)
 * and the listings behind `fatune query` (see db.h). Shares the connection and
 * statement helpers with db.c through db_internal.h.
 */
#include "db/db.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "db/db_internal.h"

/* The most columns a query returns (the trials listing, the widest, has 27). */
#define MAX_COLS 48

/* ---- best rows --------------------------------------------------------- */

/* The fastest of the latest trial of each config of a search, if it is ok. A
 * config measured again and now failing (wrong_result after a template
 * change) no longer counts, even if an older trial of it was fast. Of a run
 * whose race final rows (FT_FINAL_REASON) are among those latest trials, only
 * the final's rows count: the finalists were timed there together,
 * interleaved, while that run's other rows were timed one by one at the GPU's
 * clocks of their moment - under load a config timed early in a search can
 * look faster than the final's winner (suite24 on two H200s, 2026-11-29:
 * 1,729.8 us early against the final's 1,779.5 us; docs/timing.md). Rows of
 * runs without one count as before. search.c's summary applies the same rule
 * (best_rule_skips). */
static const char sql_best_trial[] =
	"WITH latest AS (SELECT t.id, t.run_id, t.status, t.reason, t.t_median_us FROM trials t"
	" WHERE t.search_key = ?1 AND t.id = (SELECT max(u.id) FROM trials u"
	" WHERE u.search_key = t.search_key AND u.config = t.config)),"
	" finals AS (SELECT DISTINCT run_id FROM latest WHERE status = 'ok'"
	" AND reason LIKE '" FT_FINAL_REASON "%')"
	" SELECT id FROM latest WHERE status = 'ok' AND t_median_us IS NOT NULL"
	" AND (reason LIKE '" FT_FINAL_REASON "%' OR run_id NOT IN (SELECT run_id FROM finals))"
	" ORDER BY t_median_us, id LIMIT 1";

/* The identity (space, template hash, file name, family) comes from the run
 * that measured the trial. */
static const char sql_best_upsert[] =
	"INSERT INTO best (arch, device, b, h, s, d, dtype, causal, s_kv, h_kv, layout,"
	" space_name, template_hash, template_name, family, config,"
	" compile_key, fatune_version, t_median_us, t_min_us, t_p90_us, rel_err,"
	" smem_bytes, threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x,"
	" combine_grid_y, combine_grid_z, workspace_bytes, run_id, trial_id, updated_at)"
	" SELECT ?1, ?2, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, coalesce(r.space_name,"
	" r.template_name), coalesce(r.template_hash, ''), r.template_name, coalesce(r.family, 'mma'),"
	" t.config, t.compile_key,"
	" r.fatune_version, t.t_median_us, t.t_min_us, t.t_p90_us, t.rel_err, t.smem_model,"
	" t.threads, t.grid_x, t.grid_y, t.grid_z, t.combine_threads, t.combine_grid_x,"
	" t.combine_grid_y, t.combine_grid_z, t.workspace_bytes, t.run_id, t.id, " NOW_SQL
	" FROM trials t JOIN runs r ON r.id = t.run_id WHERE t.id = ?13"
	" ON CONFLICT (arch, device, space_name, template_hash, b, h, s, d, s_kv, h_kv, layout,"
	" dtype, causal) DO UPDATE SET"
	" config = excluded.config, compile_key = excluded.compile_key,"
	" template_name = excluded.template_name, family = excluded.family,"
	" workspace_bytes = excluded.workspace_bytes, fatune_version = excluded.fatune_version,"
	" t_median_us = excluded.t_median_us, t_min_us = excluded.t_min_us,"
	" t_p90_us = excluded.t_p90_us, rel_err = excluded.rel_err, smem_bytes = excluded.smem_bytes,"
	" threads = excluded.threads, grid_x = excluded.grid_x, grid_y = excluded.grid_y,"
	" grid_z = excluded.grid_z, combine_threads = excluded.combine_threads,"
	" combine_grid_x = excluded.combine_grid_x, combine_grid_y = excluded.combine_grid_y,"
	" combine_grid_z = excluded.combine_grid_z, run_id = excluded.run_id,"
	" trial_id = excluded.trial_id, updated_at = excluded.updated_at";

/* The best-row key's shape columns, ?4..?12 */
#define SHAPE_KEY                                                                       \
	" b = ?4 AND h = ?5 AND s = ?6 AND d = ?7 AND dtype = ?8 AND causal = ?9"       \
	" AND s_kv = ?10 AND h_kv = ?11 AND layout = ?12"

static const char sql_best_exists[] =
	"SELECT count(*) FROM best WHERE arch = ?1 AND device = ?2 AND space_name = ?3 AND" SHAPE_KEY;

/* Binds ?1..?12 of the best-row key (device and space may be NULL). */
static void bind_best_key(struct binder *b, const struct ft_best_key *k, const char *space)
{
	ft_dbi_b_text(b, k->arch);
	ft_dbi_b_text(b, k->device);
	ft_dbi_b_text(b, space);
	ft_dbi_b_int(b, k->shape.b);
	ft_dbi_b_int(b, k->shape.h);
	ft_dbi_b_int(b, k->shape.s);
	ft_dbi_b_int(b, k->shape.d);
	ft_dbi_b_text(b, ft_dtype_name(k->shape.dtype));
	ft_dbi_b_int(b, k->shape.causal != 0);
	ft_dbi_b_int(b, k->shape.s_kv ? k->shape.s_kv : k->shape.s);
	ft_dbi_b_int(b, k->shape.h_kv ? k->shape.h_kv : k->shape.h);
	ft_dbi_b_text(b, ft_layout_name(k->shape.layout));
}

/* Steps st (bound by the caller) to its single-integer row; *out = -1 for none. */
static int step_int(struct ft_db *db, sqlite3_stmt *st, struct binder *b, long long *out,
		    const char *what, struct ft_err *err)
{
	int rc;

	if (ft_dbi_b_done(db, b, what, err))
		return -1;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return ft_dbi_fail(db, rc, err, what);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	return 0;
}

int ft_dbi_best_refresh(struct ft_db *db, const struct ft_best_key *key, const char *search_key,
			struct ft_err *err)
{
	sqlite3_stmt *sel = NULL, *up = NULL, *ex = NULL;
	struct binder b;
	long long trial_id = -1, n = 0;
	int rc, ret = -1;

	if (!key->arch || !key->device || !key->space || !search_key)
		return ft_error(err, FT_EFAIL,
				"best-config refresh needs arch, device, space and search key: this is a fatune bug");
	if (ft_dbi_prep(db, sql_best_trial, 0, &sel, "preparing the best-trial selection", err) ||
	    ft_dbi_prep(db, sql_best_upsert, 0, &up, "preparing the best-row update", err) ||
	    ft_dbi_prep(db, sql_best_exists, 0, &ex, "preparing the best-row check", err))
		goto out;
	b = (struct binder){ sel, 0, SQLITE_OK };
	ft_dbi_b_text(&b, search_key);
	if (step_int(db, sel, &b, &trial_id, "selecting the best trial", err))
		goto out;
	if (trial_id >= 0) {
		b = (struct binder){ up, 0, SQLITE_OK };
		bind_best_key(&b, key, NULL); /* ?3 unused: the run names the space */
		ft_dbi_b_int(&b, trial_id);
		if (ft_dbi_b_done(db, &b, "updating the best config", err))
			goto out;
		rc = sqlite3_step(up);
		if (rc != SQLITE_DONE) {
			ft_dbi_fail(db, rc, err, "updating the best config");
			goto out;
		}
	}
	b = (struct binder){ ex, 0, SQLITE_OK };
	bind_best_key(&b, key, key->space);
	if (step_int(db, ex, &b, &n, "checking the best config", err))
		goto out;
	ret = n > 0;
out:
	/* finalize repeats a failed step's error, already in err */
	sqlite3_finalize(sel);
	sqlite3_finalize(up);
	sqlite3_finalize(ex);
	return ret;
}

int ft_db_best_refresh(struct ft_db *db, const struct ft_best_key *key, const char *search_key,
		       struct ft_err *err)
{
	int ret;

	if (ft_dbi_begin(db, err))
		return -1;
	ret = ft_dbi_best_refresh(db, key, search_key, err);
	if (ret < 0 || ft_dbi_commit(db, err)) {
		ft_dbi_rollback(db);
		return -1;
	}
	return ret;
}

/* The current row of each space (updated last: the template it runs now),
 * fastest first per device; with ?3 one space only. */
static const char sql_best_get[] =
	"SELECT arch, device, template_name, template_hash, fatune_version, b, h, s, d, dtype,"
	" causal, config, compile_key, t_median_us, t_min_us, rel_err, smem_bytes, threads,"
	" grid_x, grid_y, grid_z, combine_threads, combine_grid_x, combine_grid_y,"
	" combine_grid_z, updated_at, run_id, space_name, family, s_kv, h_kv, layout,"
	" workspace_bytes, (SELECT r.space_path FROM runs r WHERE r.id = x.run_id),"
	" (SELECT r.mode FROM runs r WHERE r.id = x.run_id) FROM best x"
	" WHERE arch = ?1 AND (?2 IS NULL OR device = ?2) AND (?3 IS NULL OR space_name = ?3) AND"
	SHAPE_KEY
	" AND x.id = (SELECT y.id FROM best y WHERE y.arch = x.arch AND y.device = x.device"
	" AND y.space_name = x.space_name AND y.b = x.b AND y.h = x.h AND y.s = x.s AND y.d = x.d"
	" AND y.dtype = x.dtype AND y.causal = x.causal AND y.s_kv = x.s_kv AND y.h_kv = x.h_kv"
	" AND y.layout = x.layout ORDER BY y.updated_at DESC, y.id DESC LIMIT 1)"
	" ORDER BY device, t_median_us IS NULL, t_median_us, space_name";

static int read_best(struct ft_db *db, sqlite3_stmt *st, struct ft_best *o, struct ft_err *err)
{
	struct ft_err ignored;
	int c = 13;

	memset(o, 0, sizeof(*o));
	if (ft_dbi_c_text(st, 0, o->arch, sizeof(o->arch), err) ||
	    ft_dbi_c_text(st, 1, o->device, sizeof(o->device), err) ||
	    ft_dbi_c_text(st, 2, o->template_name, sizeof(o->template_name), err) ||
	    ft_dbi_c_text(st, 3, o->template_hash, sizeof(o->template_hash), err) ||
	    ft_dbi_c_text(st, 4, o->fatune_version, sizeof(o->fatune_version), err) ||
	    ft_dbi_c_text(st, 11, o->config, sizeof(o->config), err) ||
	    ft_dbi_c_text(st, 12, o->compile_key, sizeof(o->compile_key), err) ||
	    ft_dbi_c_text(st, 25, o->updated_at, sizeof(o->updated_at), err))
		return -1;
	o->shape.b = sqlite3_column_int(st, 5);
	o->shape.h = sqlite3_column_int(st, 6);
	o->shape.s = sqlite3_column_int(st, 7);
	o->shape.d = sqlite3_column_int(st, 8);
	/* the schema's CHECK admits only the two names ft_dtype_parse knows */
	if (ft_dtype_parse((const char *)sqlite3_column_text(st, 9), &o->shape.dtype, &ignored))
		return ft_error(err, FT_EFAIL, "best row in '%s' has an unknown dtype: the file was edited by hand",
				db->path);
	o->shape.causal = sqlite3_column_int(st, 10) != 0;
	o->t_median_us = ft_dbi_c_real(st, c++);
	o->t_min_us = ft_dbi_c_real(st, c++);
	o->rel_err = ft_dbi_c_real(st, c++);
	o->smem_model = ft_dbi_c_count(st, c++);
	o->threads = ft_dbi_c_count(st, c++);
	for (int i = 0; i < 3; i++)
		o->grid[i] = ft_dbi_c_count(st, c++);
	o->combine_threads = ft_dbi_c_count(st, c++);
	for (int i = 0; i < 3; i++)
		o->combine_grid[i] = ft_dbi_c_count(st, c++);
	o->run_id = ft_dbi_c_count(st, 26);
	if (ft_dbi_c_text(st, 27, o->space, sizeof(o->space), err) ||
	    ft_dbi_c_text(st, 28, o->family, sizeof(o->family), err))
		return -1;
	o->shape.s_kv = sqlite3_column_int(st, 29);
	o->shape.h_kv = sqlite3_column_int(st, 30);
	if (ft_layout_parse((const char *)sqlite3_column_text(st, 31), &o->shape.layout, &ignored))
		return ft_error(err, FT_EFAIL, "best row in '%s' has an unknown layout: the file was edited by hand",
				db->path);
	o->workspace_bytes = ft_dbi_c_count(st, 32);
	if (o->workspace_bytes < 0)
		o->workspace_bytes = 0;
	/* a path too long for the struct is left out: the caller asks for --space */
	if (sqlite3_column_text(st, 33) && (size_t)sqlite3_column_bytes(st, 33) < sizeof(o->space_path))
		snprintf(o->space_path, sizeof(o->space_path), "%s", (const char *)sqlite3_column_text(st, 33));
	o->replayed = sqlite3_column_text(st, 34) &&
		      !strcmp((const char *)sqlite3_column_text(st, 34), "replayed");
	return 0;
}

int ft_db_best_get(struct ft_db *db, const struct ft_best_key *key, struct ft_best *out,
		   struct ft_err *err)
{
	sqlite3_stmt *st;
	struct binder b;
	struct ft_best other;
	char shape[FT_SHAPE_TEXT_MAX], names[256], last[sizeof(out->device)] = "";
	int rc, n = 0, ret = -1;
	size_t len = 0;

	if (ft_dbi_prep(db, sql_best_get, 0, &st, "preparing the best-config lookup", err))
		return -1;
	b = (struct binder){ st, 0, SQLITE_OK };
	bind_best_key(&b, key, key->space);
	if (ft_dbi_b_done(db, &b, "looking up the best config", err))
		goto out;
	/* the first row goes to out (the fastest of its device); a row of another
	 * device is an ambiguity, listed */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ft_best *r = n ? &other : out;

		if (read_best(db, st, r, err))
			goto out;
		if (n && !strcmp(r->device, last))
			continue; /* a slower space of a device already listed */
		snprintf(last, sizeof(last), "%s", r->device);
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s'%s'", n ? ", " : "",
						r->device);
		n++;
	}
	if (rc != SQLITE_DONE) {
		ft_dbi_fail(db, rc, err, "looking up the best config");
		goto out;
	}
	if (n > 1) {
		ft_error(err, FT_EINPUT, "best configs for %s %s %s%s on %d devices: %s: pass --device NAME",
			 key->arch, ft_shape_format(&key->shape, shape, sizeof(shape)),
			 ft_dtype_name(key->shape.dtype), key->shape.causal ? " causal" : "", n, names);
		goto out;
	}
	ret = n;
out:
	sqlite3_finalize(st);	/* repeats a failed step's error, already in err */
	return ret;
}

/* ---- queries ----------------------------------------------------------- */

/* The filters every listing shares: ?1 arch, ?2 device, ?3..?6 shape, ?7 dtype,
 * ?8 causal, ?12..?14 KV length, KV heads, layout (all NULL for "any"); P is
 * the table holding them. */
#define FILTERS(P)                                                                      \
	" WHERE (?1 IS NULL OR " P "arch = ?1) AND (?2 IS NULL OR " P "device = ?2)"    \
	" AND (?3 IS NULL OR (" P "b = ?3 AND " P "h = ?4 AND " P "s = ?5 AND " P "d = ?6" \
	" AND coalesce(" P "s_kv, " P "s) = ?12 AND coalesce(" P "h_kv, " P "h) = ?13"     \
	" AND coalesce(" P "layout, 'bhsd') = ?14))"                                        \
	" AND (?7 IS NULL OR " P "dtype = ?7) AND (?8 IS NULL OR " P "causal = ?8)"
/* the canonical shape text of shape.h */
#define SHAPE(P)                                                                        \
	P "b || 'x' || " P "h || 'x' || " P "s || 'x' || " P "d"                         \
	" || CASE WHEN coalesce(" P "h_kv, " P "h) != " P "h THEN ',kv_heads=' || " P "h_kv ELSE '' END" \
	" || CASE WHEN coalesce(" P "s_kv, " P "s) != " P "s THEN ',kv_len=' || " P "s_kv ELSE '' END" \
	" || CASE WHEN coalesce(" P "layout, 'bhsd') != 'bhsd' THEN ',layout=' || " P "layout ELSE '' END" \
	" AS shape"

/* Column names are public (db/README.md): add columns, never rename them. */
static const char sql_q_best[] =
	"SELECT arch, device, template_name AS template, " SHAPE("") ", dtype, causal, config,"
	" t_median_us, t_min_us, t_p90_us, rel_err, threads, grid_x, grid_y, grid_z,"
	" combine_threads, combine_grid_x, combine_grid_y, combine_grid_z, smem_bytes,"
	" compile_key, template_hash, fatune_version, run_id, trial_id, updated_at, space_name AS space,"
	" family, b, h, s, d, s_kv, h_kv, layout, workspace_bytes,"
	" (SELECT r.mode FROM runs r WHERE r.id = best.run_id) AS run_mode FROM best"
	FILTERS("") " ORDER BY arch, b, h, s, d, s_kv, h_kv, layout, dtype, causal, device,"
	" t_median_us IS NULL, t_median_us, space_name LIMIT ?11";

static const char sql_q_trials[] =
	"SELECT t.id, t.run_id, r.arch, r.device, r.template_name AS template, " SHAPE("r.") ","
	" r.dtype, r.causal, t.config, t.status, t.reason, t.regs, t.smem_static, t.smem_model,"
	" t.stack_bytes, t.spill_stores, t.spill_loads, t.threads, t.compile_ms, t.rel_err,"
	" t.t_median_us, t.t_min_us, t.t_p90_us, t.t_spread, t.samples, t.compile_key,"
	" t.created_at, r.space_name AS space, r.family, t.device_index, t.device AS trial_device,"
	" t.workspace_bytes, t.stage, r.mode AS run_mode, t.log FROM trials t JOIN runs r ON r.id = t.run_id"
	FILTERS("r.")
	" AND (?9 IS NULL OR t.status = ?9) AND (?10 IS NULL OR t.run_id = ?10)"
	" ORDER BY t.run_id, t.t_median_us IS NULL, t.t_median_us, t.id LIMIT ?11";

static const char sql_q_runs[] =
	"SELECT r.id, r.started_at, r.finished_at, r.outcome, r.wall_s, r.arch, r.device,"
	" r.template_name AS template, " SHAPE("r.") ", r.dtype, r.causal, r.mode, r.strategy,"
	" r.seed, r.budget, r.timing,"
	" (SELECT count(*) FROM trials t WHERE t.run_id = r.id) AS trials,"
	" (SELECT count(*) FROM trials t WHERE t.run_id = r.id AND t.status = 'ok') AS ok,"
	" (SELECT min(t.t_median_us) FROM trials t WHERE t.run_id = r.id AND t.status = 'ok')"
	" AS best_us, r.fatune_version, r.nvrtc_version, r.driver_version, r.template_hash,"
	" r.space_path, r.space_hash, r.search_key, r.space_name AS space, r.family, r.abi,"
	" r.campaign FROM runs r" FILTERS("r.")
	" AND ?9 IS NULL AND ?10 IS NULL ORDER BY r.id LIMIT ?11";

int ft_row_col(int ncols, const char *const *names, const char *name)
{
	for (int i = 0; i < ncols; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

int ft_db_query(struct ft_db *db, enum ft_query_what what, const struct ft_query_filter *f,
		ft_row_fn fn, void *ctx, struct ft_err *err)
{
	static const struct ft_query_filter any = { NULL, NULL, NULL, -1, -1, NULL, -1, -1 };
	const char *sql = what == FT_Q_BEST ? sql_q_best : what == FT_Q_TRIALS ? sql_q_trials : sql_q_runs;
	const char *names[MAX_COLS], *values[MAX_COLS];
	int types[MAX_COLS], ncols, rc, ret = -1;
	sqlite3_stmt *st;
	struct binder b;

	if (!f)
		f = &any;
	if (ft_dbi_prep(db, sql, 0, &st, "preparing the query", err))
		return -1;
	ncols = sqlite3_column_count(st);
	if (ncols > MAX_COLS) {
		ft_error(err, FT_EFAIL, "query has %d columns, more than %d: this is a fatune bug", ncols, MAX_COLS);
		goto out;
	}
	b = (struct binder){ st, 0, SQLITE_OK };
	ft_dbi_b_text(&b, f->arch);
	ft_dbi_b_text(&b, f->device);
	if (f->shape) {
		ft_dbi_b_int(&b, f->shape->b);
		ft_dbi_b_int(&b, f->shape->h);
		ft_dbi_b_int(&b, f->shape->s);
		ft_dbi_b_int(&b, f->shape->d);
	} else {
		for (int i = 0; i < 4; i++)
			ft_dbi_b_text(&b, NULL);
	}
	ft_dbi_b_text(&b, f->dtype < 0 ? NULL : ft_dtype_name((enum ft_dtype)f->dtype));
	if (f->causal < 0)
		ft_dbi_b_text(&b, NULL);
	else
		ft_dbi_b_int(&b, f->causal != 0);
	/* the runs listing ignores the trial filters (?9, ?10 are bound NULL) */
	ft_dbi_b_text(&b, what == FT_Q_RUNS ? NULL : f->status);
	if (what == FT_Q_RUNS || f->run_id < 0)
		ft_dbi_b_text(&b, NULL);
	else
		ft_dbi_b_int(&b, f->run_id);
	ft_dbi_b_int(&b, f->limit < 0 ? -1 : f->limit);	/* LIMIT -1: no limit */
	if (f->shape) {
		ft_dbi_b_int(&b, f->shape->s_kv ? f->shape->s_kv : f->shape->s);
		ft_dbi_b_int(&b, f->shape->h_kv ? f->shape->h_kv : f->shape->h);
		ft_dbi_b_text(&b, ft_layout_name(f->shape->layout));
	} else {
		for (int i = 0; i < 3; i++)
			ft_dbi_b_text(&b, NULL);
	}
	if (ft_dbi_b_done(db, &b, "binding the query", err))
		goto out;
	for (int i = 0; i < ncols; i++)
		names[i] = sqlite3_column_name(st, i);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* types first: sqlite3_column_text converts the value in place */
		for (int i = 0; i < ncols; i++) {
			int t = sqlite3_column_type(st, i);

			types[i] = t == SQLITE_NULL ? 0 : t == SQLITE_INTEGER ? 1 : t == SQLITE_FLOAT ? 2 : 3;
		}
		for (int i = 0; i < ncols; i++)
			values[i] = types[i] ? (const char *)sqlite3_column_text(st, i) : NULL;
		rc = fn(ctx, ncols, names, values, types);
		if (rc == FT_ROW_STOP) {
			ret = 0;
			goto out;
		}
		if (rc != FT_ROW_NEXT) {
			ft_error(err, FT_EFAIL, "reading the rows of '%s': out of memory", db->path);
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		ft_dbi_fail(db, rc, err, "running the query");
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);	/* repeats a failed step's error, already in err */
	return ret;
}
