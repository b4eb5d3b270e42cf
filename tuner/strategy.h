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

#endif
