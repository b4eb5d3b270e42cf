/* prefetch.h - compiling the next search's candidates while this one's last
 * candidates are on the GPU (the campaign's overlap, issue 16).
 *
 * A prefetch is one compile-only pipeline (pipeline.h with no runner) over
 * the next search's space and shape, cut at a bound, stopped (not waited for)
 * when the search it overlaps ends. Its order: for a transfer search, the
 * next search's seeds as known when the prefetch is armed (the search it
 * overlaps may still add the nearest), then the candidates nearest the first
 * seed - where that search's guide goes once the seed is its best - else the
 * model's promise order (also with FATUNE_PREFETCH_ORDER=model, for
 * comparing the two). Its compiles land in the CUBIN cache (cache.h): the next search
 * finds them as cache hits. Nothing else of it is kept: its trials are
 * dropped, it never touches the database, so a unit's results are stored only
 * when that unit runs. A prefetched compile that fails is not cached and the
 * search compiles it again (and stores its failure then).
 */
#ifndef FT_PREFETCH_H
#define FT_PREFETCH_H

#include "base/arch.h"
#include "search/transfer.h"
#include "space/space.h"

/* Candidates compiled at most per prefetch: per compile thread, so that a
 * prefetch covers the next search's start (the GPU's first candidates) and
 * is over soon after the next search begins. */
#define FT_PREFETCH_PER_JOB 4
#define FT_PREFETCH_MAX 64

struct ft_prefetch;

struct ft_prefetch_cfg {
	const struct ft_space *sp;
	const struct ft_arch *arch;
	struct ft_shape shape;	/* copied */
	int sm_count;		/* for the model's order, 0 unknown */
	int jobs;		/* compile threads, as the search's */
	struct ft_transfer_seeds seeds;	/* transfer: the next search's seeds (n 0: none;
					 * ptr is set again from config in the copy) */
};

/* A stopped prefetch, ready to be started; NULL on out of memory (the
 * campaign then runs without one). */
struct ft_prefetch *ft_prefetch_new(void);

/* Starts compiling cfg's candidates on a thread of its own; does nothing when
 * this prefetch has been started before or stopped. Safe to call from any
 * thread (a pipeline's compiles_done), never blocks on compiles. */
void ft_prefetch_start(struct ft_prefetch *p, const struct ft_prefetch_cfg *cfg);

/* The pipeline callback form of ft_prefetch_start: ctx is a struct
 * ft_prefetch whose cfg was set by ft_prefetch_arm. */
void ft_prefetch_arm(struct ft_prefetch *p, const struct ft_prefetch_cfg *cfg);
void ft_prefetch_fire(void *ctx);

/* Stops the prefetch without waiting: its queued compiles are dropped, and
 * the compiles already running finish on its thread while the next search
 * starts (their CUBINs land in the cache; a compile of the same key by the
 * next search meanwhile is only a duplicate, the cache's stores being
 * atomic). Returns the CUBINs it compiled by now (0 when never started). p
 * stays readable (ft_prefetch_done) until ft_prefetch_drain joins and frees
 * it. NULL: 0. */
long long ft_prefetch_retire(struct ft_prefetch *p);

/* The CUBINs p has compiled so far, also those finished after it was
 * retired (the next search waited for them as cache hits). NULL: 0. */
long long ft_prefetch_done(const struct ft_prefetch *p);

/* Joins every retired prefetch (each at most one compile's time from done)
 * and frees it. Call before the spaces they compile are freed: a campaign's
 * end, whatever its outcome. */
void ft_prefetch_drain(void);

#endif
