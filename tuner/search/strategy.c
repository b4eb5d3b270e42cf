/* strategy.c - the strategy table, the predicted-time model and the guide (local search) that strategies share. */
#include "search/strategy.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/feasibility.h"
#include "search/race.h"

/* SMs assumed when the device is unknown (replay, no GPU): an H100/H200 has 132. */
#define DEFAULT_SMS 132

/* splitmix64: a small, well-mixed PRNG; the seed is recorded with the run. */
unsigned long long ft_strategy_rand(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int ft_split_heuristic(long long mblocks, long long nblocks, int sms, const long long *counts,
		       int ncounts)
{
	double eff[FT_MAX_VALUES], best = 0;
	long long pick = 0;

	if (sms < 1 || mblocks < 1 || 10 * mblocks >= 8LL * sms || nblocks <= 4)
		return 1;
	for (int i = 0; i < ncounts && i < FT_MAX_VALUES; i++) {
		double waves = (double)mblocks * counts[i] / sms;

		eff[i] = counts[i] >= 1 && counts[i] <= nblocks && counts[i] <= sms ? waves / ceil(waves) : 0;
		best = fmax(best, eff[i]);
	}
	for (int i = 0; i < ncounts && i < FT_MAX_VALUES; i++)
		if (eff[i] > 0 && eff[i] >= 0.85 * best && (!pick || counts[i] < pick))
			pick = counts[i];
	return pick ? (int)pick : 1;
}

/* The split count ft_split_heuristic gives candidate t: its grid without
 * splits, the KV tiles of a row (keys over the BLOCK_N or TILE_N parameter,
 * else 128), the space's NUM_SPLITS values. */
static int split_rule(const struct ft_space *sp, const struct ft_shape *shape, int sms,
		      const struct ft_trial *t, int split)
{
	long long splits = t->values[split] > 0 ? t->values[split] : 1;
	long long blocks = t->grid[0] * t->grid[1] * t->grid[2];
	int bn = ft_space_param(sp, "BLOCK_N");
	long long keys_per_tile;

	if (bn < 0)
		bn = ft_space_param(sp, "TILE_N");
	keys_per_tile = bn >= 0 && t->values[bn] > 0 ? t->values[bn] : 128;
	return ft_split_heuristic(blocks / splits, (shape->s_kv + keys_per_tile - 1) / keys_per_tile, sms,
				  sp->params[split].values, sp->params[split].nvalues);
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
	/* a split costs a second launch and a pass over fp32 partials; the split
	 * count FlashAttention-3's rule picks (ft_split_heuristic) is charged
	 * nothing, so that the model (and the guided search after it) starts there */
	if (split >= 0 && t->values[split] != split_rule(sp, shape, sms, t, split))
		combine = 0.02 + (t->values[split] > 1 ? 0.05 * t->values[split] /
							  (shape->s > 0 ? log2(shape->s + 1.0) : 1.0)
						       : 0);
	return rounds * conc / blocks * latency_hiding + combine;
}

/* One line per strategy; each lives in its own strategy_<name>.c. */
static const struct ft_strategy *const strategies[] = {
	&ft_strategy_exhaustive,
	&ft_strategy_random,
	&ft_strategy_model,
	&ft_strategy_guided,
	&ft_strategy_transfer,
};
#define NSTRATEGIES ((int)(sizeof(strategies) / sizeof(strategies[0])))

/* Strategies a program registered (tests), after the table's. */
static const struct ft_strategy *extra[FT_MAX_EXTRA_STRATEGIES];
static int nextra;

const struct ft_strategy *ft_strategy_find(const char *name)
{
	for (int i = 0; i < NSTRATEGIES; i++)
		if (!strcmp(strategies[i]->name, name))
			return strategies[i];
	for (int i = 0; i < nextra; i++)
		if (!strcmp(extra[i]->name, name))
			return extra[i];
	return NULL;
}

int ft_strategy_register(const struct ft_strategy *s)
{
	if (!s || !s->name || ft_strategy_find(s->name) || nextra == FT_MAX_EXTRA_STRATEGIES)
		return -1;
	extra[nextra++] = s;
	return 0;
}

const char *ft_strategy_names(void)
{
	static char buf[256];
	int n = 0;

	/* rebuilt each time: a strategy may have been registered since */
	buf[0] = '\0';
	for (int i = 0; i < NSTRATEGIES + nextra; i++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%s", i ? ", " : "",
			      (i < NSTRATEGIES ? strategies[i] : extra[i - NSTRATEGIES])->name);
	return buf;
}

int ft_strategy_parse(const char *text, const struct ft_strategy **out, struct ft_err *err)
{
	const struct ft_strategy *s = ft_strategy_find(text);

	if (!s)
		return ft_error(err, FT_EINPUT, "bad strategy '%s': use %s", text, ft_strategy_names());
	*out = s;
	return 0;
}

const char *ft_strategy_name(const struct ft_strategy *s)
{
	return s ? s->name : "exhaustive";
}

void ft_strategy_order(const struct ft_strategy *s, unsigned long long seed, const struct ft_space *sp,
		       const struct ft_arch *a, const struct ft_shape *shape, int sm_count,
		       struct ft_trial **ts, long long n)
{
	struct ft_strategy_ctx c = { seed, sp, a, shape, sm_count };

	if (s && s->order && n > 1)
		s->order(&c, ts, n);
}

/* Random picks before the local search starts. Measured by replay on H200
 * recordings of 1x8x512x64 (30 seeds, bench/strategies.py): 0 (start at the
 * model's pick) needed 73 and 53 evaluations to come within 5%; 4, 8, 12 and
 * 16 random picks all needed 17-24 (median), 8 being as good as any; mixing
 * a random pick into every 2nd-4th step later made no measurable difference. */
#define GUIDE_EXPLORE 8

/* Probes (ft_guide_probe, transfer.h): centers kept at most. A result is
 * competitive within the race's cut margin of the best (race.h
 * FT_RACE_MARGIN: a result it would not cut). */
#define GUIDE_PROBES 64

struct ft_guide {
	const struct ft_space *sp;
	long long n;
	int nparams;
	unsigned char *idx;	/* n x nparams value indices, model order */
	unsigned char *taken;	/* n flags */
	unsigned char counted[FT_MAX_PARAMS];	/* 1: a step counts this parameter (l1) */
	unsigned char best[FT_MAX_PARAMS];
	double best_us;		/* NAN until an ok trial */
	long long *explore;	/* a seeded random order for the first picks */
	long long nexplore;	/* how many of them (GUIDE_EXPLORE, 0 with seeds) */
	long long handed;	/* picks so far */
	long long *seeds;	/* transfer: candidates handed out first */
	int nseeds, seeded;	/* how many, how many handed out */
	int lean;		/* before any ok result: nearest the first seed (ft_guide_lean) */
	int patience;		/* early stop (0: never) */
	double gain;
	long long observed;	/* results told so far */
	long long last_gain;	/* `observed` when the best last improved by > gain */
	double gain_ref_us;	/* the best then */
	double incumbent_us;	/* ft_guide_incumbent (NAN: none) */
	int patience_behind;	/* the early stop while behind it (0: `patience`) */
	int probe;		/* ft_guide_probe */
	unsigned char seen_ok[FT_MAX_PARAMS][FT_MAX_VALUES];	/* a competitive result held it */
	unsigned char *okidx;	/* the competitive results' value indices, nok of them */
	long long nok;
	unsigned char centers[GUIDE_PROBES][FT_MAX_PARAMS];	/* probe centers, oldest first */
	double center_us[GUIDE_PROBES];
	int ncenters;
};

static int value_index(const struct ft_param *p, long long v)
{
	for (int k = 0; k < p->nvalues; k++)
		if (p->values[k] == v)
			return k;
	return 0;
}

struct ft_guide *ft_guide_new(const struct ft_space *sp, struct ft_trial *const *ts, long long n,
			      unsigned long long seed)
{
	struct ft_guide *g = calloc(1, sizeof(*g));
	unsigned long long state = seed;

	if (!g)
		return NULL;
	g->sp = sp;
	g->n = n;
	g->nparams = sp->nparams;
	g->best_us = NAN;
	g->gain_ref_us = NAN;
	g->incumbent_us = NAN;
	g->nexplore = GUIDE_EXPLORE;
	g->idx = malloc((n ? n : 1) * sp->nparams);
	g->taken = calloc(n ? n : 1, 1);
	g->explore = malloc((n ? n : 1) * sizeof(*g->explore));
	g->okidx = malloc((n ? n : 1) * sp->nparams);
	if (!g->idx || !g->taken || !g->explore || !g->okidx) {
		ft_guide_free(g);
		return NULL;
	}
	/* a derived parameter moves with the parameters it is computed from: a
	 * step is counted over the others (a choice, nchoices > 0, is one) */
	for (int k = 0; k < sp->nparams; k++)
		g->counted[k] = !sp->params[k].derived || sp->params[k].nchoices > 0;
	for (long long i = 0; i < n; i++)
		for (int k = 0; k < sp->nparams; k++)
			g->idx[i * sp->nparams + k] = (unsigned char)value_index(&sp->params[k], ts[i]->values[k]);
	for (long long i = 0; i < n; i++)
		g->explore[i] = i;
	for (long long i = n - 1; i > 0; i--) {
		long long j = (long long)(ft_strategy_rand(&state) % (unsigned long long)(i + 1));
		long long tmp = g->explore[i];
		g->explore[i] = g->explore[j];
		g->explore[j] = tmp;
	}
	return g;
}

/* Steps between two candidates: L1 over the value indices of the
 * parameters a step counts (ft_guide counted). Counting a derived one too
 * made a step that changes its source two or more (from one consumer
 * warpgroup to two moves BLOCK_M 64 -> 128 with it), and one that also
 * frees a parameter a constraint held (PINGPONG, 0 with one consumer) three:
 * replayed over four exhaustive H200 recordings of suite24 (both spaces),
 * transfer kept 23, 21, 23 and 22 of 24 units within 1 % of the optimum
 * counting it, 24, 23, 24 and 24 not (probe centers still judged by
 * structure_steps), with 2 % fewer evaluations; over the recorded H100
 * campaign (bench/strategies.py) nothing changed (docs/perf.md, twentieth
 * session). Letting a parameter the constraints force at the best move for
 * free as well (PINGPONG from one consumer) did worse on suite24 (24, 22,
 * 23 of the first three) and needed 8.2 evaluations to within 5 % in
 * campaign order on the H100 recording instead of 5.1, one unit ending
 * 2.2 % off. */
static int l1(const struct ft_guide *g, const unsigned char *a, const unsigned char *b)
{
	int d = 0;

	for (int k = 0; k < g->nparams; k++)
		d += g->counted[k] ? abs((int)a[k] - (int)b[k]) : 0;
	return d;
}

/* Steps between two structures: L1 over every parameter's value index, the
 * derived ones included. A probe center is a new structure (probe_observe):
 * two consumer warpgroups (BLOCK_M 128) are one step of the walk from one
 * (BLOCK_M 64) but two structure steps away, so such a result becomes a
 * center and its own neighbours (PINGPONG 1) are tried. Counted like the
 * walk, the H200 recording of 2026-12-01's call 4 lost 1x8x2048x64's optimum
 * (1.037x): the two-consumer result was never a center. */
static int structure_steps(const struct ft_guide *g, const unsigned char *a, const unsigned char *b)
{
	int d = 0;

	for (int k = 0; k < g->nparams; k++)
		d += abs((int)a[k] - (int)b[k]);
	return d;
}

/* An untried neighbour (L1 distance 1) of the newest probe center that has
 * one, -1 when none has. */
static long long probe_pick(const struct ft_guide *g)
{
	for (int j = g->ncenters - 1; j >= 0; j--)
		for (long long i = 0; i < g->n; i++)
			if (!g->taken[i] && l1(g, &g->idx[i * g->nparams], g->centers[j]) <= 1)
				return i;
	return -1;
}

long long ft_guide_next(struct ft_guide *g)
{
	long long pick = -1, best_d = -1;

	if (ft_guide_stopped(g))
		return -1;
	while (g->seeded < g->nseeds) {
		pick = g->seeds[g->seeded++];
		if (!g->taken[pick]) {
			g->taken[pick] = 1;
			return pick;
		}
	}
	pick = -1;
	if (g->handed < g->nexplore && g->handed < g->n) {
		pick = g->explore[g->handed++];
		g->taken[pick] = 1;
		return pick;
	}
	g->handed++;
	if (g->probe && (pick = probe_pick(g)) >= 0) {
		g->taken[pick] = 1;
		return pick;
	}
	/* the point the next pick is nearest to: the best so far; before any
	 * ok result, the first seed when leaning on it, else none (the model's
	 * next) */
	const unsigned char *ref = !isnan(g->best_us) ? g->best
				   : g->lean && g->nseeds ? &g->idx[g->seeds[0] * g->nparams]
							  : NULL;
	for (long long i = 0; i < g->n; i++) {
		long long d;
		if (g->taken[i])
			continue;
		if (!ref) {
			pick = i;	/* the model's next */
			break;
		}
		d = l1(g, &g->idx[i * g->nparams], ref);
		if (pick < 0 || d < best_d) {
			pick = i;
			best_d = d;
		}
	}
	if (pick >= 0)
		g->taken[pick] = 1;
	return pick;
}

/* An ok result: a new probe center when it is competitive but not the best,
 * and either holds a value no competitive result held before and is 2 or
 * more steps from each of them (a new structure, reached by a step of
 * several parameters), or is a neighbour more than `gain` faster than a
 * center (the probe descends); then it is one of the competitive results. */
static void probe_observe(struct ft_guide *g, const struct ft_trial *t)
{
	unsigned char c[FT_MAX_PARAMS];
	int fresh = 0, away = INT_MAX, below = 0;

	if (!isnan(g->best_us) && !(t->t_median_us < g->best_us * FT_RACE_MARGIN))
		return;
	for (int k = 0; k < g->nparams; k++) {
		c[k] = (unsigned char)value_index(&g->sp->params[k], t->values[k]);
		fresh |= !g->seen_ok[k][c[k]];
	}
	if (!isnan(g->best_us) && t->t_median_us >= g->best_us && g->ncenters < GUIDE_PROBES) {
		for (long long j = 0; j < g->nok; j++) {
			int d = structure_steps(g, &g->okidx[j * g->nparams], c);
			away = d < away ? d : away;
		}
		for (int j = 0; j < g->ncenters; j++)
			below |= l1(g, g->centers[j], c) == 1 &&
				 t->t_median_us < g->center_us[j] * (1 - g->gain);
		if ((fresh && away >= 2) || below) {
			memcpy(g->centers[g->ncenters], c, sizeof(c));
			g->center_us[g->ncenters++] = t->t_median_us;
		}
	}
	for (int k = 0; k < g->nparams; k++)
		g->seen_ok[k][c[k]] = 1;
	if (g->nok < g->n)
		memcpy(&g->okidx[g->nok++ * g->nparams], c, (size_t)g->nparams);
}

void ft_guide_observe(struct ft_guide *g, const struct ft_trial *t)
{
	if (!g)
		return;
	/* a candidate a recording lacks was not evaluated: no result for the stop */
	if (t->status == FT_ST_NOT_IN_RECORDING)
		return;
	g->observed++;
	if (t->status != FT_ST_OK || isnan(t->t_median_us))
		return;
	if (g->probe)
		probe_observe(g, t);
	if (isnan(g->gain_ref_us) || t->t_median_us < g->gain_ref_us * (1 - g->gain)) {
		g->gain_ref_us = t->t_median_us;
		g->last_gain = g->observed;
	}
	if (!isnan(g->best_us) && t->t_median_us >= g->best_us)
		return;
	g->best_us = t->t_median_us;
	for (int k = 0; k < g->nparams; k++)
		g->best[k] = (unsigned char)value_index(&g->sp->params[k], t->values[k]);
}

int ft_config_covers(const char *whole, const char *part)
{
	char item[FT_CONFIG_MAX + 2], padded[FT_CONFIG_MAX + 2];
	const char *p = part;

	snprintf(padded, sizeof(padded), ",%s,", whole);
	while (*p) {
		size_t n = strcspn(p, ",");
		snprintf(item, sizeof(item), ",%.*s,", (int)n, p);
		if (!strstr(padded, item))
			return 0;
		p += n + (p[n] == ',');
	}
	return 1;
}

/* The candidate nearest to config: the L1 distance over the value indices of
 * the parameters config names (each value taken as the nearest listed one),
 * ties to the model's order; -1 when config names none of the space's
 * parameters. A neighbour's best may hold a value this shape derives
 * otherwise (a causal shape's TILE_ORDER=1 for a non-causal one): its nearest
 * candidate is still the best place to start. */
static long long nearest_config(const struct ft_guide *g, const char *config)
{
	int ks[FT_MAX_PARAMS], want[FT_MAX_PARAMS], m = 0;
	long long pick = -1, best_d = -1;
	const char *p = config;

	while (*p && m < FT_MAX_PARAMS) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		char name[FT_NAME_MAX];
		int k;

		if (eq && (size_t)(eq - p) < sizeof(name)) {
			memcpy(name, p, (size_t)(eq - p));
			name[eq - p] = '\0';
			k = ft_space_param(g->sp, name);
			if (k >= 0 && g->sp->params[k].nvalues > 0) {
				const struct ft_param *par = &g->sp->params[k];
				long long v = strtoll(eq + 1, NULL, 10);
				int near = 0;

				for (int j = 1; j < par->nvalues; j++)
					if (llabs(par->values[j] - v) < llabs(par->values[near] - v))
						near = j;
				ks[m] = k;
				want[m++] = near;
			}
		}
		p += n + (p[n] == ',');
	}
	for (long long i = 0; m && i < g->n; i++) {
		long long d = 0;

		for (int j = 0; j < m; j++)
			d += abs((int)g->idx[i * g->nparams + ks[j]] - want[j]);
		if (pick < 0 || d < best_d) {
			pick = i;
			best_d = d;
		}
	}
	return pick;
}

int ft_guide_seed(struct ft_guide *g, struct ft_trial *const *ts, const char *const *configs,
		  int n)
{
	free(g->seeds);
	g->seeds = malloc((size_t)(n ? n : 1) * sizeof(*g->seeds));
	g->nseeds = g->seeded = 0;
	if (!g->seeds)
		return 0;	/* no seeds: still a valid (guided) search */
	for (int k = 0; k < n; k++) {
		long long at = -1;
		int dup = 0;

		for (long long i = 0; i < g->n && at < 0; i++)
			if (!strcmp(ts[i]->config, configs[k]) || ft_config_covers(ts[i]->config, configs[k]))
				at = i;
		if (at < 0)
			at = nearest_config(g, configs[k]);
		for (int j = 0; j < g->nseeds; j++)
			dup |= g->seeds[j] == at;
		if (at >= 0 && !dup)
			g->seeds[g->nseeds++] = at;
	}
	if (g->nseeds)
		g->nexplore = 0;
	return g->nseeds;
}

/* Behind the incumbent: one was given and this search's best has not beaten
 * it by more than the gain (its gains so far, if any, were its own). */
static int behind(const struct ft_guide *g)
{
	return !isnan(g->incumbent_us) &&
	       !(g->best_us < g->incumbent_us * (1 - g->gain));
}

int ft_guide_stopped(const struct ft_guide *g)
{
	int patience;

	if (!g || g->patience <= 0)
		return 0;
	patience = g->patience_behind > 0 && behind(g) && g->patience_behind < g->patience
			   ? g->patience_behind
			   : g->patience;
	return g->seeded == g->nseeds && g->observed >= g->nseeds &&
	       g->observed - g->last_gain >= patience;
}

void ft_guide_probe(struct ft_guide *g)
{
	g->probe = 1;
}

void ft_guide_lean(struct ft_guide *g)
{
	g->lean = 1;
}

void ft_guide_patience(struct ft_guide *g, int patience, double gain)
{
	g->patience = patience;
	g->gain = gain;
}

void ft_guide_incumbent(struct ft_guide *g, double us, int patience_behind)
{
	if (us > 0) {
		g->gain_ref_us = us;
		g->incumbent_us = us;
		g->patience_behind = patience_behind;
	}
}

void ft_guide_free(struct ft_guide *g)
{
	if (!g)
		return;
	free(g->seeds);
	free(g->idx);
	free(g->taken);
	free(g->explore);
	free(g->okidx);
	free(g);
}
