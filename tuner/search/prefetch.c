/* prefetch.c - a compile-only pipeline over the next search (see prefetch.h). */
#include "search/prefetch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "compile/cache.h"
#include "search/pipeline.h"
#include "search/strategy.h"

struct ft_prefetch {
	pthread_mutex_t m;
	struct ft_prefetch_cfg cfg;
	int armed, started, stopped;	/* under m */
	pthread_t th;
	atomic_int cancel;
	atomic_llong done;		/* compiles finished so far (not cache hits) */
	struct ft_prefetch *next;	/* in the retired list */
};

/* Retired prefetches whose threads may still finish a compile: joined by
 * ft_prefetch_drain. */
static pthread_mutex_t retired_m = PTHREAD_MUTEX_INITIALIZER;
static struct ft_prefetch *retired;

struct ft_prefetch *ft_prefetch_new(void)
{
	struct ft_prefetch *p = calloc(1, sizeof(*p));

	if (p)
		pthread_mutex_init(&p->m, NULL);
	return p;
}

/* Every trial of a prefetch is dropped; a stop ends the pipeline. */
static int discard(void *ctx, struct ft_trial *t)
{
	struct ft_prefetch *p = ctx;

	(void)t;
	return atomic_load(&p->cancel);
}

/* FATUNE_PREFETCH_ORDER=model: the model's order also for transfer (the
 * order before 2026-11-29, to measure one against the other) */
static int model_order_forced(void)
{
	const char *v = getenv("FATUNE_PREFETCH_ORDER");

	return v && !strcmp(v, "model");
}

static void *prefetch_thread(void *arg)
{
	struct ft_prefetch *p = arg;
	struct ft_pipeline_cfg cfg = { 0 };
	struct ft_pipeline_stats st;
	struct ft_err err = { 0 };
	char hash[17];
	long long bound = (long long)p->cfg.jobs * FT_PREFETCH_PER_JOB;

	if (ft_space_template_hash(p->cfg.sp, hash, &err))
		return NULL;
	cfg.sp = p->cfg.sp;
	cfg.arch = p->cfg.arch;
	cfg.shape = &p->cfg.shape;
	cfg.template_hash = hash;
	cfg.jobs = p->cfg.jobs;
	cfg.compile = 1;
	cfg.nrunners = 0;		/* compile only: nothing evaluates */
	cfg.sm_count = p->cfg.sm_count;
	cfg.strategy = &ft_strategy_model;	/* the promise order */
	if (p->cfg.seeds.n > 0 && !model_order_forced()) {
		/* the seeds, then their neighbourhood; no stop (nothing is timed) */
		for (int i = 0; i < p->cfg.seeds.n; i++)
			p->cfg.seeds.ptr[i] = p->cfg.seeds.config[i];
		cfg.strategy = &ft_strategy_transfer;
		cfg.seeds = p->cfg.seeds.ptr;
		cfg.nseeds = p->cfg.seeds.n;
		cfg.seed_lean = 1;
	}
	cfg.budget_evals = bound < 1 ? 1 : bound > FT_PREFETCH_MAX ? FT_PREFETCH_MAX : bound;
	cfg.emit = discard;
	cfg.emit_final = discard;
	cfg.ctx = p;
	cfg.cancel = &p->cancel;
	cfg.compiled_now = &p->done;
	/* errors are the search's to find and report when it runs */
	ft_pipeline_run(&cfg, &st, &err);
	return NULL;
}

void ft_prefetch_start(struct ft_prefetch *p, const struct ft_prefetch_cfg *cfg)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->m);
	if (!p->started && !p->stopped) {
		p->cfg = *cfg;
		p->started = !pthread_create(&p->th, NULL, prefetch_thread, p);
	}
	pthread_mutex_unlock(&p->m);
}

void ft_prefetch_arm(struct ft_prefetch *p, const struct ft_prefetch_cfg *cfg)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->m);
	p->cfg = *cfg;
	p->armed = 1;
	pthread_mutex_unlock(&p->m);
}

void ft_prefetch_fire(void *ctx)
{
	struct ft_prefetch *p = ctx;
	struct ft_prefetch_cfg cfg;
	int armed;

	if (!p)
		return;
	pthread_mutex_lock(&p->m);
	armed = p->armed;
	cfg = p->cfg;
	pthread_mutex_unlock(&p->m);
	if (armed)
		ft_prefetch_start(p, &cfg);
}

static void release(struct ft_prefetch *p, int started)
{
	if (started)
		pthread_join(p->th, NULL);
	pthread_mutex_destroy(&p->m);
	free(p);
}

long long ft_prefetch_done(const struct ft_prefetch *p)
{
	return p ? atomic_load(&((struct ft_prefetch *)p)->done) : 0;
}

long long ft_prefetch_retire(struct ft_prefetch *p)
{
	if (!p)
		return 0;
	atomic_store(&p->cancel, 1);
	pthread_mutex_lock(&p->m);
	p->stopped = 1;
	pthread_mutex_unlock(&p->m);
	pthread_mutex_lock(&retired_m);
	p->next = retired;
	retired = p;
	pthread_mutex_unlock(&retired_m);
	return ft_prefetch_done(p);
}

void ft_prefetch_drain(void)
{
	struct ft_prefetch *p;

	pthread_mutex_lock(&retired_m);
	p = retired;
	retired = NULL;
	pthread_mutex_unlock(&retired_m);
	while (p) {
		struct ft_prefetch *next = p->next;
		int started;

		pthread_mutex_lock(&p->m);
		started = p->started;
		pthread_mutex_unlock(&p->m);
		release(p, started);
		p = next;
	}
}
