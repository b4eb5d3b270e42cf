/* strategy.h - in which order feasible candidates are compiled and timed: the strategy table.
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
#include "base/err.h"
#include "space/space.h"
#include "base/trial.h"

/* What a strategy may read to order the candidates. */
struct ft_strategy_ctx {
	unsigned long long seed;	/* the run's strategy seed (recorded with it) */
	const struct ft_space *sp;
	const struct ft_arch *arch;
	const struct ft_shape *shape;
	int sm_count;			/* SMs of the target device, 0 unknown */
};

/* How the pipeline feeds a strategy's candidates to the compile threads. */
enum ft_strategy_feed {
	FT_FEED_STREAM,		/* enumeration order, streamed: nothing is held, the
				 * budget cuts the stream */
	FT_FEED_ORDER,		/* every feasible candidate held, ordered by `order`,
				 * the first `budget` sent */
	FT_FEED_GUIDE,		/* held, ordered by `order`, then handed out one by one
				 * by a local search over the results (ft_guide) */
};

/* One search strategy: a file strategy_<name>.c defines it, and one line in
 * strategy.c's table lists it (like the family table, space/family.h). */
struct ft_strategy {
	const char *name;		/* what --strategy says */
	const char *summary;		/* one line, for --help and listings */
	enum ft_strategy_feed feed;
	int transfer;			/* 1: the guide starts from the best configs of the
					 * nearest tuned shapes and stops early (transfer.h) */
	/* Orders ts[0..n) in place; NULL keeps the enumeration order. Must be a
	 * function of (ctx, the trials): the same seed gives the same run. */
	void (*order)(const struct ft_strategy_ctx *c, struct ft_trial **ts, long long n);
};

/* The strategies, each in its own file. */
extern const struct ft_strategy ft_strategy_exhaustive;
extern const struct ft_strategy ft_strategy_random;
extern const struct ft_strategy ft_strategy_model;
extern const struct ft_strategy ft_strategy_guided;
extern const struct ft_strategy ft_strategy_transfer;

/* The strategy called name (the table, then registered ones), or NULL. */
const struct ft_strategy *ft_strategy_find(const char *name);

/* Adds s to the strategies ft_strategy_find knows, for a program that brings
 * its own (a test's toy strategy): -1 when the name is taken or the room for
 * FT_MAX_EXTRA_STRATEGIES is full. Not thread-safe: call before searching. */
#define FT_MAX_EXTRA_STRATEGIES 4
int ft_strategy_register(const struct ft_strategy *s);

/* "exhaustive, random, ...": every name, for messages. */
const char *ft_strategy_names(void);

/* --strategy NAME: FT_EINPUT "bad strategy 'x': use exhaustive, ..." when unknown. */
int ft_strategy_parse(const char *text, const struct ft_strategy **out, struct ft_err *err);
const char *ft_strategy_name(const struct ft_strategy *s);

/* splitmix64 step: the strategies' seeded PRNG (the seed is recorded with the run). */
unsigned long long ft_strategy_rand(unsigned long long *state);

/* Orders ts[0..n) in place for strategy s (its order hook; none: unchanged). */
void ft_strategy_order(const struct ft_strategy *s, unsigned long long seed, const struct ft_space *sp,
		       const struct ft_arch *a, const struct ft_shape *shape, int sm_count,
		       struct ft_trial **ts, long long n);

/* The model strategy's order (strategy_model.c), which the guided ones start from. */
void ft_strategy_model_order(const struct ft_strategy_ctx *c, struct ft_trial **ts, long long n);

/* FlashAttention-3's split-KV count (hopper/heuristics.h num_splits_heuristic,
 * FACTS.md): 1 when the grid without splits has mblocks >= 0.8 x sms blocks or
 * a row block has nblocks <= 4 KV tiles; otherwise the smallest of counts[0..n)
 * (those in 1..min(nblocks, sms)) whose wave efficiency w / ceil(w), w =
 * mblocks x count / sms, is at least 85% of the best count's. */
int ft_split_heuristic(long long mblocks, long long nblocks, int sms, const long long *counts,
		       int ncounts);

/* The model's predicted relative time of one candidate (lower is better); a
 * split count other than ft_split_heuristic's costs a little more. */
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
 * the value indices of the enumerated parameters: a derived one moves with
 * those it is computed from) to the best measured so far, ties going to the
 * model's order (before any ok result: the model's next pick). -1 when all
 * were handed out. A probe center's neighbours (ft_guide_probe) are counted
 * the same way. */
long long ft_guide_next(struct ft_guide *g);

/* Tells the guide a finished trial (any status; only ok ones move the best). */
void ft_guide_observe(struct ft_guide *g, const struct ft_trial *t);

/* Transfer: for each of configs[0..n), the candidate among the guide's whose
 * config is it (or holds every NAME=V of it, see ft_config_covers), else the
 * nearest one (L1 over the value indices of the parameters it names, ties to
 * the model's order: a neighbour's best may hold a value this shape derives
 * otherwise), is handed out first, in that order, once, before the local
 * search; the random picks are skipped when any matched. A config naming none
 * of the space's parameters matches nothing. ts is the guide's list. Returns
 * the number of seeds. */
int ft_guide_seed(struct ft_guide *g, struct ft_trial *const *ts, const char *const *configs,
		  int n);

/* Before any ok result, ft_guide_next hands out (after the seeds) the
 * untried candidates nearest the first seed instead of the model's next: the
 * order the search itself follows once that seed is its best, for a run that
 * gets no timings (a prefetch compiling a transfer search's candidates ahead,
 * prefetch.h). No seed: no change. */
void ft_guide_lean(struct ft_guide *g);

/* Probes (transfer, transfer.h): an ok result within 1.15x of the best (one
 * the race would not cut) but not the best becomes a probe center when it
 * holds a value of some parameter that no such result held before and is 2
 * or more steps (L1 over the value indices, the derived parameters' too)
 * from each of them: a structure the walk reached only by a step of several
 * parameters (a derived or constraint-coupled one). So does such a result
 * one step from a center and more than `gain` faster than it. ft_guide_next
 * then hands out the untried neighbours (1 step) of the newest center that
 * has any before the candidate nearest the best: a new structure is judged
 * by its own neighbourhood, not by its first candidate alone. */
void ft_guide_probe(struct ft_guide *g);

/* Early stop: once `patience` results in a row (after the seeds) have not
 * made the best more than `gain` (a fraction, 0.01 = 1%) faster than the
 * best before them, ft_guide_next returns -1. patience 0: never stop early. */
void ft_guide_patience(struct ft_guide *g, int patience, double gain);

/* The time to beat from elsewhere (us > 0; the unit's best in a space
 * searched before this one on the same GPU model): the early stop then counts
 * a result as a gain only when it is more than `gain` faster than the faster
 * of us and this search's own best, so a space that cannot beat the unit's
 * best stops; while its best has not beaten us by more than `gain`, after
 * `patience_behind` results without a gain (when > 0 and shorter than
 * ft_guide_patience's), once it has, after the usual patience. Without it, a
 * search's first result is its first gain. us <= 0: no change. */
void ft_guide_incumbent(struct ft_guide *g, double us, int patience_behind);

/* 1 once the early stop above has fired (not when the candidates ran out):
 * the pipeline then drops what it sent that has not reached the GPU yet. */
int ft_guide_stopped(const struct ft_guide *g);

/* 1 when every NAME=V of config `part` is in config `whole` (both canonical
 * "NAME=V,..."): a config recorded before its space grew parameters still
 * names the candidate that holds it. */
int ft_config_covers(const char *whole, const char *part);

void ft_guide_free(struct ft_guide *g);

#endif
