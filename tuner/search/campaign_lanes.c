/* campaign_lanes.c - a campaign's units side by side over one target's GPUs (see campaign_run.h).
 *
 * A lane is a thread with a database connection and a progress display of
 * its own; there is one per GPU. Under the lock, a lane takes the first unit
 * in the campaign's order that can start (transfer: its group's
 * representative is done; one whose nearest unit is running gives way to
 * one whose nearest is not, see next_unit) and its share of the free GPUs, runs the unit's
 * searches outside the lock, then, under the lock again, gives the GPUs back,
 * files the unit (ft_campaign_unit_file: outcomes, tallies, on_unit) and
 * wakes the lanes that wait. A failure or an interrupt stops every lane from
 * taking another unit; the searches running end as they do (an interrupt
 * stops them too).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/interrupt.h"
#include "search/campaign_lanes.h"
#include "search/campaign_order.h"
#include "search/campaign_unit.h"

enum { PENDING, RUNNING, DONE };

struct lanes {
	pthread_mutex_t m;
	pthread_cond_t c;
	struct ft_db *db;		/* the caller's connection: each lane opens its own */
	const struct ft_campaign_run_opts *o;
	const int *order;
	double t0_ms;
	char *state;			/* per unit: PENDING, RUNNING, DONE */
	int *rep;			/* per unit: the unit it waits for (transfer), -1 none */
	int *nearest;			/* per unit: its group's nearest unit (transfer), -1 none */
	char *ahead;			/* per unit: a lane compiles ahead for it */
	struct ft_runner *idle[FT_MAX_RUNNERS];	/* the GPUs no lane holds */
	int nidle;
	int ngpus;			/* distinct GPUs among the runners */
	int running;			/* units running */
	int ended;			/* units done */
	int stop;			/* a failure or an interrupt: take no more units */
	int rc;
	struct ft_err err;		/* the first failure */
	struct ft_campaign_result *r;
};

static int can_start(const struct lanes *l, int u)
{
	return l->state[u] == PENDING && (l->rep[u] < 0 || l->state[l->rep[u]] == DONE);
}

/* Under transfer, unit u's nearest unit (ft_campaign_nearest) is running: if
 * u started now it would miss that unit's best as a seed. */
static int shadowed(const struct lanes *l, int u)
{
	return l->nearest[u] >= 0 && l->state[l->nearest[u]] == RUNNING;
}

/* Under the lock: the next unit a lane takes (-1: none can start now) and how
 * many units can start (*ready): the first in the order whose nearest unit is
 * not running, else the first while fewer units run than there are GPUs (a
 * GPU never waits for a seed; a lane beyond them, sharing a GPU that another
 * unit keeps busy, does: --units-per-gpu). On two H200s
 * (2026-11-30) the mission shape's causal and non-causal units, each the
 * other's nearest, ran side by side from their representative's seeds alone
 * (1x8x2048x64 causal, far) and both stopped before their optimum; one after
 * the other, the second starts from the first's best (docs/timing.md). */
static int next_unit(const struct lanes *l, int *ready)
{
	int pick = -1, first = -1;

	*ready = 0;
	for (int i = 0; i < l->o->camp->nunits; i++)
		if (can_start(l, l->order[i])) {
			if (first < 0)
				first = l->order[i];
			if (pick < 0 && !shadowed(l, l->order[i]))
				pick = l->order[i];
			++*ready;
		}
	return pick >= 0 ? pick : l->running < l->ngpus ? first : -1;
}

static int pending(const struct lanes *l)
{
	for (int u = 0; u < l->o->camp->nunits; u++)
		if (l->state[u] == PENDING)
			return 1;
	return 0;
}

/* Under the lock: the unit to compile ahead for beside unit u, the first
 * pending one no lane compiles ahead for yet (NULL: none). */
static const struct ft_shape *ahead_of(struct lanes *l, int u)
{
	for (int i = 0; i < l->o->camp->nunits; i++) {
		int v = l->order[i];

		if (v != u && l->state[v] == PENDING && !l->ahead[v]) {
			l->ahead[v] = 1;
			return &l->o->camp->units[v];
		}
	}
	return NULL;
}

/* Under the lock: stops every lane with err (the first failure is kept). */
static void fail(struct lanes *l, const struct ft_err *err)
{
	if (!l->rc) {
		l->rc = -1;
		l->err = *err;
	}
	l->stop = 1;
}

static void *lane(void *arg)
{
	struct lanes *l = arg;
	const struct ft_campaign_run_opts *o = l->o;
	struct ft_campaign_unit cu = { .t0_ms = l->t0_ms };
	struct ft_runner *mine[FT_MAX_RUNNERS];
	struct ft_progress prog;
	struct ft_err err = { 0 };
	int rc;

	if (o->search.progress)
		ft_progress_init(&prog, o->search.progress->mode, 0);
	cu.progress = o->search.progress ? &prog : NULL;
	cu.out = calloc((size_t)(o->nsp ? o->nsp : 1), sizeof(*cu.out));
	rc = cu.out ? ft_db_open_again(l->db, &cu.db, &err)
		    : ft_error(&err, FT_EFAIL, "out of memory starting a campaign lane");
	pthread_mutex_lock(&l->m);
	if (rc)
		fail(l, &err);
	for (;;) {
		int u = -1, ready = 0, k;

		while (!l->stop && !ft_interrupted() && pending(l) &&
		       ((u = next_unit(l, &ready)) < 0 || !l->nidle))
			pthread_cond_wait(&l->c, &l->m);
		if (l->stop || ft_interrupted() || !pending(l))
			break;
		/* the free GPUs shared among the units that can start */
		k = l->nidle / ready > 1 ? l->nidle / ready : 1;
		for (int i = 0; i < k; i++)
			mine[i] = l->idle[--l->nidle];
		l->state[u] = RUNNING;
		l->running++;
		cu.runners = mine;
		cu.nrunners = k;
		cu.next = o->no_prefetch ? NULL : ahead_of(l, u);
		cu.position = l->ended;
		pthread_mutex_unlock(&l->m);

		rc = ft_campaign_unit_run(o, u, &cu, &err);

		pthread_mutex_lock(&l->m);
		for (int i = 0; i < k; i++)
			l->idle[l->nidle++] = mine[i];
		l->state[u] = DONE;
		l->running--;
		l->ended++;
		ft_campaign_unit_file(o, u, rc, &cu, l->r);
		if (cu.interrupted)
			l->stop = 1;
		else if (rc)
			fail(l, &err);
		pthread_cond_broadcast(&l->c);
	}
	l->r->interrupted = l->r->interrupted || ft_interrupted();
	pthread_cond_broadcast(&l->c);
	pthread_mutex_unlock(&l->m);
	ft_db_close(cu.db);
	free(cu.out);
	return NULL;
}

int ft_campaign_lanes(struct ft_db *db, const struct ft_campaign_run_opts *o, const int *order, double t0_ms,
		      struct ft_campaign_result *r, struct ft_err *err)
{
	const struct ft_campaign_target *t = &o->targets[0];
	int n = o->camp->nunits, nlanes = t->nrunners, started = 0;
	int transfer = o->search.strategy && o->search.strategy->transfer;
	struct lanes l = { .db = db, .o = o, .order = order, .t0_ms = t0_ms, .r = r };
	pthread_t th[FT_MAX_RUNNERS];

	l.state = calloc((size_t)(n ? n : 1), 1);
	l.ahead = calloc((size_t)(n ? n : 1), 1);
	l.rep = malloc((size_t)(n ? n : 1) * sizeof(*l.rep));
	l.nearest = malloc((size_t)(n ? n : 1) * sizeof(*l.nearest));
	if (!l.state || !l.ahead || !l.rep || !l.nearest) {
		free(l.state), free(l.ahead), free(l.rep), free(l.nearest);
		return ft_error(err, FT_EFAIL, "out of memory starting a campaign");
	}
	for (int u = 0; u < n; u++)
		l.nearest[u] = transfer ? ft_campaign_nearest(o->camp, u) : -1;
	/* transfer: a unit waits for the first of its group in the order (its
	 * representative, ft_campaign_order), which waits for none */
	for (int u = 0; u < n; u++) {
		int first = u;

		for (int i = 0; transfer && i < n; i++)
			if (ft_campaign_same_group(&o->camp->units[u], &o->camp->units[order[i]])) {
				first = order[i];
				break;
			}
		l.rep[u] = first == u ? -1 : first;
	}
	for (int i = 0; i < t->nrunners; i++)
		l.idle[l.nidle++] = t->runners[t->nrunners - 1 - i];
	l.ngpus = ft_runners_devices(t->runners, t->nrunners);
	pthread_mutex_init(&l.m, NULL);
	pthread_cond_init(&l.c, NULL);
	for (int i = 0; i < nlanes && i < FT_MAX_RUNNERS; i++) {
		if (pthread_create(&th[i], NULL, lane, &l))
			break;
		started++;
	}
	if (!started)
		ft_error(&l.err, FT_EFAIL, "cannot start a campaign lane (thread)"), l.rc = -1;
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_cond_destroy(&l.c);
	pthread_mutex_destroy(&l.m);
	free(l.state), free(l.ahead), free(l.rep), free(l.nearest);
	if (l.rc)
		*err = l.err;
	return l.rc;
}
