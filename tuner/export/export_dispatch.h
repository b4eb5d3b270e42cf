/* export_dispatch.h - every tuned shape of a target as one dispatch table.
 *
 * `fatune export --dispatch` writes, for one arch and device and one space
 * (the template's identity: every config of a table has the same
 * parameters), the best config of every tuned shape as a constant table plus
 * a selection function, in C, C++ or JSON. The selection rule, documented in
 * the generated file too:
 *   1. only entries of the same head dim, dtype and causal flag can match
 *      (none: no pick, the caller keeps its default config);
 *   2. among those, the nearest tuned sequence lengths: the smallest
 *      max(S,S')/min(S,S') * max(KV,KV')/min(KV,KV') (KV = the KV length,
 *      equal to S outside serving shapes), i.e. the nearest in log2 space;
 *   3. then the nearest B*H the same way;
 *   4. then the first in table order (sorted by D, dtype, causal, S, KV
 *      length, B*H, layout).
 * Layout and KV heads are recorded per entry but not matched.
 * The output is a pure function of the best rows (no clock, no environment).
 */
#ifndef FT_EXPORT_DISPATCH_H
#define FT_EXPORT_DISPATCH_H

#include <stdio.h>

#include "db/db.h"
#include "base/err.h"
#include "export/export.h"

/* One table: the best row of each tuned shape, sorted by the rule's order. */
struct ft_dispatch {
	struct ft_best *rows;		/* malloc'd */
	int n;
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

/* Writes the table as a C or C++ header ("do not edit", provenance per
 * entry: template hash, latency, date, run) or as JSON. FT_EFAIL on a write
 * error or a config that cannot be exported. */
int ft_dispatch_write(FILE *out, const struct ft_dispatch *d, enum ft_dispatch_format fmt,
		      struct ft_err *err);

#endif
