/* strategy.h - in which order feasible candidates are compiled and timed.
 *
 * exhaustive keeps the enumeration order (and streams: nothing waits for the
 * whole space); random is a seeded shuffle; model ranks by a cheap predicted
 * time from the launch geometry and occupancy, so a small budget is spent on
 * the likely winners. The budget (pipeline.h) then cuts the ordered list.
 */
#ifndef FT_STRATEGY_H
#define FT_STRATEGY_H

#include "arch.h"
#include "pipeline.h"
#include "space.h"
#include "trial.h"

/* Orders ts[0..n) in place for strategy s (exhaustive: unchanged). */
void ft_strategy_order(enum ft_strategy s, unsigned long long seed, const struct ft_space *sp,
		       const struct ft_arch *a, const struct ft_shape *shape, int sm_count,
		       struct ft_trial **ts, long long n);

/* The model's predicted relative time of one candidate (lower is better). */
double ft_strategy_predict(const struct ft_space *sp, const struct ft_arch *a,
			   const struct ft_shape *shape, int sm_count, const struct ft_trial *t);

/* The guided strategy's state: candidates (in model order) as vectors of
 * value indices, which have been handed out, and the best measured so far. */
struct ft_guide;

/* ts[0..n) in model order; the guide copies what it needs (ts may be freed);
 * seed drives its random picks. */
struct ft_guide *ft_guide_new(const struct ft_space *sp, struct ft_trial *const *ts, long long n,
			      unsigned long long seed);

/* Index into the original ts of the next candidate to evaluate: first a few
 * seeded random picks, then the untried candidate nearest (L1 distance over
 * the parameters' value indices) to the best measured so far, ties going to
 * the model's order (before any ok result: the model's next pick). -1 when
 * all were handed out. */
long long ft_guide_next(struct ft_guide *g);

/* Tells the guide a finished trial (any status; only ok ones move the best). */
void ft_guide_observe(struct ft_guide *g, const struct ft_trial *t);

void ft_guide_free(struct ft_guide *g);

#endif
