/* campaign_run.c - the campaign driver: its units one at a time or side by side (see campaign_run.h). */
#include "base/clock.h"
#include "search/campaign_run.h"

#include <stdlib.h>
#include <string.h>

#include "search/campaign_lanes.h"
#include "search/campaign_unit.h"
#include "search/prefetch.h"

/* One unit at a time, in order, each on every GPU of its target. */
static int one_at_a_time(struct ft_db *db, const struct ft_campaign_run_opts *o, const int *order,
			 double t0, struct ft_campaign_result *r, struct ft_err *err)
{
	struct ft_campaign_unit cu = { .db = db, .progress = o->search.progress, .t0_ms = t0 };
	int rc = 0;

	cu.out = calloc((size_t)(o->nsp ? o->nsp : 1) * (size_t)o->ntargets, sizeof(*cu.out));
	if (!cu.out)
		return ft_error(err, FT_EFAIL, "out of memory starting a campaign");
	for (int i = 0; i < o->camp->nunits && !r->interrupted && !rc; i++) {
		cu.next = i + 1 < o->camp->nunits ? &o->camp->units[order[i + 1]] : NULL;
		cu.position = i;
		rc = ft_campaign_unit_run(o, order[i], &cu, err);
		ft_campaign_unit_file(o, order[i], rc, &cu, r);
	}
	free(cu.out);
	return rc;
}

int ft_campaign_run(struct ft_db *db, const struct ft_campaign_run_opts *o,
		    struct ft_campaign_result *r, struct ft_err *err)
{
	size_t units = (size_t)(o->camp->nunits ? o->camp->nunits : 1);
	double t0 = ft_mono_ms();
	int rc = 0;

	int *order = malloc(units * sizeof(*order));

	memset(r, 0, sizeof(*r));
	r->out = calloc(units * (size_t)(o->nsp ? o->nsp : 1) * (size_t)o->ntargets, sizeof(*r->out));
	r->first = calloc(units, sizeof(*r->first));
	r->count = calloc(units, sizeof(*r->count));
	if (!r->out || !r->first || !r->count || !order) {
		free(order);
		return ft_error(err, FT_EFAIL, "out of memory starting a campaign");
	}
	ft_campaign_order(o->camp, o->search.strategy && o->search.strategy->transfer, order);
	if (!o->one_at_a_time && o->ntargets == 1 && !o->unit_runner && o->targets[0].nrunners > 1)
		rc = ft_campaign_lanes(db, o, order, t0, r, err);
	else
		rc = one_at_a_time(db, o, order, t0, r, err);
	free(order);
	/* the last compiles ahead, before the caller frees their spaces */
	ft_prefetch_drain();
	r->wall_ms = ft_mono_ms() - t0;
	return rc || r->interrupted ? -1 : 0;
}
