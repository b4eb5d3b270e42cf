/* strategy.c - candidate orderings: exhaustive, seeded random, predicted-time model. */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>

#include "feasibility.h"

/* SMs assumed when the device is unknown (replay, no GPU): an H100/H200 has 132. */
#define DEFAULT_SMS 132

/* splitmix64: a small, well-mixed PRNG; the seed is recorded with the run. */
static unsigned long long next_rand(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double ft_strategy_predict(const struct ft_space *sp, const struct ft_arch *a,
			   const struct ft_shape *shape, int sm_count, const struct ft_trial *t)
{
	double blocks = (double)t->grid[0] * t->grid[1] * t->grid[2];
	double warps = ceil(t->threads / 32.0);
	int bps = ft_blocks_per_sm(a, t->smem_model, t->threads, t->res.regs > 0 ? &t->res : NULL);
	int sms = sm_count > 0 ? sm_count : DEFAULT_SMS;
	int split = ft_space_param(sp, "NUM_SPLITS");
	double load, conc, rounds, latency_hiding, combine = 0;

	if (bps < 1 || blocks < 1)
		return INFINITY;
	/* blocks per busy SM (the grid is spread evenly), how many of them run at
	 * once, and in how many rounds; the total work is fixed, so one block's
	 * share is 1 / blocks: a grid that leaves SMs idle predicts slower */
	load = ceil(blocks / sms);
	conc = fmin(load, bps);
	rounds = ceil(load / conc);
	/* an SM needs several warps in flight to hide latency: below 8 active
	 * warps (a rule of thumb for tensor-core loops) time grows */
	latency_hiding = fmax(1.0, 8.0 / (conc * warps));
	/* a split costs a second launch and a pass over fp32 partials */
	if (split >= 0 && t->values[split] > 1)
		combine = 0.05 * t->values[split] / (shape->s > 0 ? log2(shape->s + 1.0) : 1.0);
	return rounds * conc / blocks * latency_hiding + combine;
}

struct keyed {
	double key;
	struct ft_trial *t;
	long long index;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

void ft_strategy_order(enum ft_strategy s, unsigned long long seed, const struct ft_space *sp,
		       const struct ft_arch *a, const struct ft_shape *shape, int sm_count,
		       struct ft_trial **ts, long long n)
{
	unsigned long long state = seed;
	struct keyed *k;

	if (s == FT_STRATEGY_RANDOM) {
		for (long long i = n - 1; i > 0; i--) {
			long long j = (long long)(next_rand(&state) % (unsigned long long)(i + 1));
			struct ft_trial *tmp = ts[i];
			ts[i] = ts[j];
			ts[j] = tmp;
		}
		return;
	}
	if (s != FT_STRATEGY_MODEL || n < 2)
		return;
	k = malloc(n * sizeof(*k));
	if (!k)
		return; /* keep enumeration order: still a valid (exhaustive) order */
	for (long long i = 0; i < n; i++) {
		k[i].key = ft_strategy_predict(sp, a, shape, sm_count, ts[i]);
		k[i].t = ts[i];
		k[i].index = i;
	}
	qsort(k, n, sizeof(*k), by_key);
	for (long long i = 0; i < n; i++)
		ts[i] = k[i].t;
	free(k);
}
