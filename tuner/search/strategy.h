/* strategy.h - in which order feasible candidates are compiled and timed.
 *
 * exhaustive keeps the enumeration order (and streams: nothing waits for the
 * whole space); random is a seeded shuffle; model ranks by a cheap predicted
 * time from the launch geometry and occupancy, so a small budget is spent on
 * the likely winners; guided is a local search driven by the results;
 * transfer is guided seeded with the best configs of the nearest shapes
 * already tuned (transfer.h), which stops early once it stops improving. The
 * budget (pipeline.h) then cuts the ordered list.
 */
#ifndef FT_STRATEGY_H
#define FT_STRATEGY_H

#include "base/arch.h"
#include "space/space.h"
#include "base/trial.h"

enum ft_strategy {
	FT_STRATEGY_EXHAUSTIVE,	/* every feasible candidate, in enumeration order */
	FT_STRATEGY_RANDOM,	/* a seeded random order, cut by the budget */
	FT_STRATEGY_MODEL,	/* ranked by a cheap predicted-time model, cut by the budget */
	FT_STRATEGY_GUIDED,	/* a few random picks, then always the untried candidate
				 * nearest the best measured so far (a local search) */
	FT_STRATEGY_TRANSFER,	/* guided, started from the best configs of the nearest
				 * shapes already tuned (cfg->seeds), stopping early
				 * when it stops improving (transfer.h) */
};
/* "exhaustive" | "random" | "model" | "guided" | "transfer" */
int ft_strategy_parse(const char *text, enum ft_strategy *out, struct ft_err *err);
const char *ft_strategy_name(enum ft_strategy s);

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

/* Transfer: the candidates among the guide's whose config is one of
 * configs[0..n) (or holds every NAME=V of one, see ft_config_covers) are
 * handed out first, in that order, before the local search; the random picks
 * are skipped when any matched. ts is the guide's list. Returns the number of
 * candidates matched. */
int ft_guide_seed(struct ft_guide *g, struct ft_trial *const *ts, const char *const *configs,
		  int n);

/* Early stop: once `patience` results in a row (after the seeds) have not
 * made the best more than `gain` (a fraction, 0.01 = 1%) faster than the
 * best before them, ft_guide_next returns -1. patience 0: never stop early. */
void ft_guide_patience(struct ft_guide *g, int patience, double gain);

/* 1 when every NAME=V of config `part` is in config `whole` (both canonical
 * "NAME=V,..."): a config recorded before its space grew parameters still
 * names the candidate that holds it. */
int ft_config_covers(const char *whole, const char *part);

void ft_guide_free(struct ft_guide *g);

#endif
