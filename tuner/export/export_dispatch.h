/* export_dispatch.h - every tuned shape of a target as one dispatch table.
 *
 * `fatune export --dispatch` writes, for one arch and device and one space
 * (the template's identity: every config of a table has the same
 * parameters), the best config of every tuned shape as a constant table plus
 * a selection function, in C, C++ or JSON. The selection rule, documented in
 * the generated file too:
 *   1. an entry matches only a problem of its head dim, dtype, causal flag
 *      and layout, of its kind (grouped-query or not, decode S = 1 or not),
 *      and that its space accepts it for: every constraint true, every
 *      derived parameter the value the shape derives (for a choice list:
 *      one of its values there), the launch within the arch's limits, the values compiled into its CUBIN unchanged
 *      (dispatch_eval.c generates that check from the space's expressions;
 *      none: no pick, the caller keeps its default config);
 *   2. among those, the nearest tuned sequence lengths: the smallest
 *      max(S,S')/min(S,S') * max(KV,KV')/min(KV,KV') (KV = the KV length,
 *      equal to S outside serving shapes), i.e. the nearest in log2 space;
 *   3. then the nearest B*H times the nearest GQA group, the same way;
 *   4. then the first in table order (sorted by D, dtype, causal, S, KV
 *      length, B*H, layout).
 * The output is a pure function of the best rows (no clock, no environment).
 */
#ifndef FT_EXPORT_DISPATCH_H
#define FT_EXPORT_DISPATCH_H

#include <stdio.h>

#include "db/db.h"
#include "base/err.h"
#include "export/export.h"
#include "space/candidate.h"
#include "space/space.h"

/* The launch formulas an entry carries and the generated check returns:
 * smem, threads, grid[3], combine_threads, combine_grid[3], workspace. */
#define FT_DISPATCH_GEOM 10
#define FT_DISPATCH_MAX_DEFINES FT_MAX_SPACE_DEFINES

/* One table: the best row of each tuned shape, sorted by the rule's order. */
struct ft_dispatch {
	struct ft_best *rows;		/* malloc'd */
	int n;
	const struct ft_space *sp;	/* the rows' space (ft_dispatch_prepare), not owned */
	const struct ft_arch *arch;
	struct ft_candidate *cand;	/* malloc'd, per row: its config at its own shape */
	struct ft_launch *launch;	/* malloc'd, per row: its launch there (candidate.h) */
	char *code;			/* malloc'd body of the generated check; NULL: exact shapes only */
	char untranslated[600];		/* why code is NULL */
	int nparams;			/* parameters of every config (the first row's) */
	char params[FT_EXPORT_MAX_ENTRIES][FT_NAME_MAX];
	char space_path[FT_PATH_MAX];	/* the --space FILE to name in "Regenerate with", "" none */
};

enum ft_dispatch_format { FT_DISPATCH_CXX, FT_DISPATCH_C, FT_DISPATCH_JSON };

/* Collects the best row of every shape tuned for arch (device NULL: the only
 * device with results, else FT_EINPUT "... pass --device NAME"; space NULL:
 * the winner across spaces per shape, and FT_EINPUT "... pass --space FILE"
 * when the winners come from several spaces). No shape tuned: FT_EINPUT.
 * Release with ft_dispatch_release. */
int ft_dispatch_collect(struct ft_db *db, const char *arch, const char *device, const char *space,
			struct ft_dispatch *out, struct ft_err *err);
void ft_dispatch_release(struct ft_dispatch *d);

/* Checks every row against sp (the space its rows come from, loaded by the
 * caller) on arch a: each config must be accepted at its own shape (else
 * FT_EINPUT: the space changed since, pass the one it was tuned with), and
 * translates the space's expressions into the generated check (exact shapes
 * only, with the reason in d->untranslated, when one cannot be). Must run
 * before ft_dispatch_write. */
int ft_dispatch_prepare(struct ft_dispatch *d, const struct ft_space *sp, const struct ft_arch *a,
			struct ft_err *err);

/* The launch of row r at its own shape in FT_DISPATCH_GEOM order. */
void ft_dispatch_geom(const struct ft_dispatch *d, int r, long long g[FT_DISPATCH_GEOM]);

/* Writes the helpers and the check function STORAGE int FNeval(const ENTRY *e,
 * batch, heads, kv_heads, seq_len, kv_len, bshd, long long *g) (see the
 * comment it carries). */
void ft_dispatch_write_eval(FILE *out, const struct ft_dispatch *d, const char *storage, const char *fn,
			    const char *entry);

/* Writes, as JSON members after a table's "params" (",\n  \"check\": {...}"),
 * what a consumer of the JSON needs to decide validity as the C eval does:
 * the space's constraints, launch formulas and compile.defines as the SQLite
 * expressions fatune evaluates, what each name is bound to (the arch's limits
 * as numbers), the functions, the shape and launch limits, and the rule that
 * smem_bytes and the defines must equal the entry's tuned ones. */
void ft_dispatch_write_check_json(FILE *out, const struct ft_dispatch *d);

/* Writes the table as a C or C++ header ("do not edit", provenance per
 * entry: template hash, latency, date, run) or as JSON. FT_EFAIL on a write
 * error or a config that cannot be exported. */
int ft_dispatch_write(FILE *out, const struct ft_dispatch *d, enum ft_dispatch_format fmt,
		      struct ft_err *err);

/* The table as part `part` of a library (export_library.h): C style, every
 * name prefixed fatune_pPART_ (struct fatune_pPART_entry, fatune_pPART_table,
 * FATUNE_PPART_COUNT, fatune_pPART_pick, fatune_pPART_eval), so the tables
 * of several arches and spaces live in one program. Errors as
 * ft_dispatch_write. */
int ft_dispatch_write_part(FILE *out, const struct ft_dispatch *d, int part, struct ft_err *err);

#endif
