/* search.c - one search of a space for a shape, stored as it goes (see search.h). */
#include "search/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/interrupt.h"
#include "compile/cache.h"
#include "config.h"
#include "run/evaluate.h"
#include "compile/nvrtc.h"
#include "search/transfer.h"
#include "run/verify.h"

/* Rejections by model are cheap and can number 100k: commit them in batches of
 * this many (one transaction each) instead of one fsync per row. A batch is
 * written only while no other connection holds the write lock (a campaign's
 * units side by side each write through their own): when one does, the
 * rows wait for the next batch's turn, or the search's next trial, up to
 * REJECT_HOLD rows, after which the batch waits for the lock like any write. */
#define REJECT_BATCH 256
#define REJECT_HOLD 4096

struct ctx {
	struct ft_db *db;
	long long run_id;
	const char *search_key;
	int fresh;
	struct ft_trial *batch;	/* REJECT_HOLD rows */
	int nbatch;
	int reject_wait;	/* FATUNE_REJECT_WRITE=wait */
	struct ft_progress *prog;
	struct ft_search_result *res;
	struct ft_err err;
	/* the latest ok trial of each config (resumed ones too): after the race's
	 * final the best and runner-up are chosen again from these, by the rule
	 * of the best row (db_query.c: the latest trial of each config; of a run
	 * whose final rows are among them, only those) */
	struct ft_trial *oks;	/* run_id set: this run's, or as read back */
	long long noks, capoks;
};

/* Keeps t as its config's latest ok trial (drops the config when t is not ok).
 * The array stays in the order its trials were stored (a config's newer trial
 * moves it to the end), so that a tie in time goes, as in the best row
 * (db_query.c: ORDER BY t_median_us, id), to the trial stored first. */
static void latest_ok(struct ctx *s, const struct ft_trial *t)
{
	long long i;

	for (i = 0; i < s->noks && strcmp(s->oks[i].config, t->config); i++)
		;
	if (i < s->noks) {
		memmove(&s->oks[i], &s->oks[i + 1], (size_t)(s->noks - i - 1) * sizeof(*s->oks));
		s->noks--;
	}
	if (t->status != FT_ST_OK || isnan(t->t_median_us))
		return;
	if (s->noks == s->capoks) {
		long long cap = s->capoks ? 2 * s->capoks : 64;
		struct ft_trial *n = realloc(s->oks, (size_t)cap * sizeof(*n));
		if (!n)
			return; /* out of memory: the summary goes without this config */
		s->oks = n;
		s->capoks = cap;
	}
	s->oks[s->noks] = *t;
	s->oks[s->noks].log = NULL;
	if (!s->oks[s->noks].run_id)
		s->oks[s->noks].run_id = s->run_id;	/* stored by this run */
	s->noks++;
}

static int is_final(const struct ft_trial *t)
{
	return t->status == FT_ST_OK && !strncmp(t->reason, FT_FINAL_REASON, strlen(FT_FINAL_REASON));
}

/* The best row's rule (db_query.c): oks[i] does not count when it is not a
 * final row and a final row of its run is among the latest trials. */
static int best_rule_skips(const struct ctx *s, long long i)
{
	if (is_final(&s->oks[i]))
		return 0;
	for (long long j = 0; j < s->noks; j++)
		if (s->oks[j].run_id == s->oks[i].run_id && is_final(&s->oks[j]))
			return 1;
	return 0;
}

/* Keeps t in the best and runner-up when it is an ok trial fast enough. */
static void top_insert(struct ft_search_result *r, const struct ft_trial *t)
{
	if (t->status != FT_ST_OK || isnan(t->t_median_us))
		return;
	if (isnan(r->top[0].t_median_us) || t->t_median_us < r->top[0].t_median_us) {
		r->top[1] = r->top[0];
		r->top[0] = *t;
	} else if (isnan(r->top[1].t_median_us) || t->t_median_us < r->top[1].t_median_us) {
		r->top[1] = *t;
	}
	r->top[0].log = r->top[1].log = NULL;
}

static void count(struct ctx *s, const struct ft_trial *t, int skipped)
{
	struct ft_search_result *r = s->res;

	r->counts[t->status]++;
	r->done++;
	if (s->prog)
		ft_progress_add(s->prog, t, skipped);
	if (t->status == FT_ST_OK)
		latest_ok(s, t);
}

/* The summary's best and runner-up, chosen as the best row is, once the
 * search's trials (and the final's) are all in. */
static void choose_top(struct ctx *s)
{
	struct ft_search_result *r = s->res;

	ft_trial_init(&r->top[0]);
	ft_trial_init(&r->top[1]);
	for (long long i = 0; i < s->noks; i++)
		if (!best_rule_skips(s, i))
			top_insert(r, &s->oks[i]);
}

/* Stores the batched rejections, waiting for the write lock (wait 1) or only
 * if it is free now (wait 0: when it is not, they stay batched). */
static int flush(struct ctx *s, int wait)
{
	int rc = 0;

	if (!s->nbatch)
		return 0;
	/* FATUNE_REJECT_WRITE=wait: every batch waits for the lock, as before
	 * 2026-11-30 (A/B timing only) */
	if (s->reject_wait)
		wait = 1;
	/* a concurrent search of this key may have stored the same rejections */
	if (!wait)
		rc = ft_db_trials_put_if_free(s->db, s->run_id, s->search_key, s->batch, s->nbatch, !s->fresh,
					      &s->err);
	else
		rc = (s->fresh ? ft_db_trials_put : ft_db_trials_put_new)(s->db, s->run_id, s->search_key,
									   s->batch, s->nbatch, &s->err);
	if (rc == 1)
		return 0;	/* the lock is held elsewhere: kept for later */
	s->nbatch = 0;
	return rc;
}

static int on_trial(void *arg, struct ft_trial *t)
{
	struct ctx *s = arg;
	/* a model rejection is batched and kept once per search; one found after
	 * compiling (registers, compiled smem) is a row of its own, like any other */
	int model_reject = t->stage == FT_STAGE_MODEL && (t->status == FT_ST_REJECTED_CONSTRAINT ||
							  t->status == FT_ST_REJECTED_SMEM);

	count(s, t, 0);
	if (model_reject) {
		/* one already stored by an earlier run of this search keeps its one
		 * row: flush's ft_db_trials_put_new skips it (in its transaction) */
		s->batch[s->nbatch] = *t;
		s->batch[s->nbatch++].log = NULL;
		return s->nbatch % REJECT_BATCH ? 0 : flush(s, s->nbatch == REJECT_HOLD);
	}
	if (flush(s, 0))
		return -1;
	return ft_db_trials_put(s->db, s->run_id, s->search_key, t, 1, &s->err);
}

/* The race's final re-measurement of a finalist: a new trial of its config
 * (the latest, which the best row is chosen from; this run's final decides
 * among its rows, choose_top). */
static int on_final(void *arg, struct ft_trial *t)
{
	struct ctx *s = arg;

	latest_ok(s, t);
	s->res->finals++;
	if (flush(s, 0))
		return -1;
	return ft_db_trials_put(s->db, s->run_id, s->search_key, t, 1, &s->err);
}

static int on_skip(void *arg, const struct ft_trial *t)
{
	struct ctx *s = arg;
	struct ft_trial prev;
	struct ft_err err;

	if (s->fresh || ft_db_trial_latest(s->db, s->search_key, t->config, &prev, &err) != 1)
		return 0;
	count(s, &prev, 1);
	return 1;
}

/* Before compiling: claims the candidate in the database, so that a
 * concurrent search of this key never compiles or times it too. */
static int on_claim(void *arg, const struct ft_trial *t)
{
	struct ctx *s = arg;
	struct ft_trial prev;
	int c = ft_db_claim(s->db, s->run_id, s->search_key, t->config, s->fresh, &prev, &s->err);

	if (c == 1)
		count(s, &prev, 1);
	return c;
}

/* The search key: a hash of everything a trial's verdict depends on. */
static void search_key(const struct ft_space *sp, const struct ft_shape *shape,
		       const struct ft_search_opts *o, int timed, const char *tpl_hash, char key[17])
{
	char text[1024], shape_txt[FT_SHAPE_TEXT_MAX];

	snprintf(text, sizeof(text),
		 "v1 space=%s tpl=%s arch=%s device=%s shape=%s dtype=%s causal=%d mode=%s timing=%s nvrtc=%s seed=%lld replay=%s",
		 sp->hash_hex, tpl_hash, o->arch->name, o->device ? o->device : "",
		 ft_shape_format(shape, shape_txt, sizeof(shape_txt)), ft_dtype_name(shape->dtype),
		 shape->causal, timed ? "timed" : "feasibility", o->timing, ft_nvrtc_version(),
		 o->seed, o->nrunners > 0 ? ft_runner_info(o->runners[0])->search_tag : "no");
	ft_hash_hex(text, strlen(text), key);
}

int ft_search_run(struct ft_db *db, const struct ft_space *sp, const struct ft_shape *shape,
		  const struct ft_search_opts *o, struct ft_search_result *res, struct ft_err *err)
{
	struct ctx *s = calloc(1, sizeof(*s));
	struct ft_pipeline_cfg cfg = { 0 };
	struct ft_run run;
	struct ft_best_key bk;
	struct ft_transfer_seeds seeds = { 0 };
	int rc = -1;
	double waited = ft_db_wait_ms(db);

	memset(res, 0, sizeof(*res));
	ft_trial_init(&res->top[0]);
	ft_trial_init(&res->top[1]);
	if (!s || !(s->batch = malloc(REJECT_HOLD * sizeof(*s->batch)))) {
		free(s);
		return ft_error(err, FT_EFAIL, "out of memory starting a search");
	}
	s->reject_wait = getenv("FATUNE_REJECT_WRITE") && !strcmp(getenv("FATUNE_REJECT_WRITE"), "wait");
	res->timed = o->nrunners > 0;
	if (ft_space_template_hash(sp, res->template_hash, err))
		goto out;
	search_key(sp, shape, o, res->timed, res->template_hash, res->search_key);
	/* transfer: the best configs of the nearest shapes tuned so far */
	if (o->strategy && o->strategy->transfer && res->timed &&
	    ft_transfer_seeds(db, o->seed_pool, o->arch->name, o->device ? o->device : "",
			      sp->name, shape, &seeds, err))
		goto out;
	res->nseeds = seeds.n;
	res->nseeds_other = seeds.other_device;
	run = (struct ft_run){
		.fatune_version = FATUNE_VERSION,
		.arch = o->arch->name,
		.device = o->device ? o->device : "",
		.nvrtc_version = ft_nvrtc_version(),
		.driver_version = o->driver_version ? o->driver_version : "",
		.template_name = sp->template_name,
		.template_hash = res->template_hash,
		.space_path = sp->path,
		.space_hash = sp->hash_hex,
		.search_key = res->search_key,
		.shape = *shape,
		/* a replay's results are copied, not measured: marked as such */
		.mode = !res->timed ? "feasibility" : ft_runner_info(o->runners[0])->measured ? "timed" : "replayed",
		.strategy = ft_strategy_name(o->strategy),
		.seed = o->seed,
		.budget = o->budget_n,
		.timing = o->timing,
		.space_name = sp->name,
		.family = sp->family->name,
		.abi = sp->abi,
		.campaign = o->campaign,
	};
	if (ft_db_run_begin(db, &run, &res->run_id, err))
		goto out;
	s->db = db;
	s->run_id = res->run_id;
	s->search_key = res->search_key;
	s->fresh = o->fresh;
	s->prog = o->progress;
	s->res = res;

	cfg.sp = sp;
	cfg.arch = o->arch;
	cfg.shape = shape;
	cfg.template_hash = res->template_hash;
	cfg.jobs = o->jobs;
	cfg.compile = 1;
	cfg.runners = o->runners;
	cfg.nrunners = o->nrunners;
	cfg.sm_count = o->sm_count;
	cfg.timeout_ms = o->timeout_ms;
	ft_job_timing_defaults(&cfg.job);
	cfg.job.seed = (unsigned long long)o->seed;
	cfg.job.tolerance = ft_tolerance(shape->dtype);
	cfg.job.samples = o->samples;
	cfg.job.launches_per_sample = o->launches;
	cfg.job.cold = !strcmp(o->timing, "cold");
	cfg.strategy = o->strategy;
	cfg.seed = (unsigned long long)o->seed;
	cfg.budget_evals = o->budget_n;
	cfg.budget_seconds = o->budget_s;
	cfg.seeds = seeds.ptr;
	cfg.nseeds = seeds.n;
	cfg.patience = FT_TRANSFER_PATIENCE;
	cfg.patience_frac = FT_TRANSFER_PATIENCE_FRAC;
	cfg.patience_min = FT_TRANSFER_PATIENCE_MIN;
	cfg.patience_unseeded = FT_TRANSFER_PATIENCE_UNSEEDED;
	cfg.gain = FT_TRANSFER_GAIN;
	cfg.incumbent_us = o->incumbent_us;
	cfg.patience_behind = FT_TRANSFER_PATIENCE_BEHIND;
	if (seeds.n && seeds.distance[0] >= FT_TRANSFER_FAR) {
		/* every seed is far (transfer.h): a weak start, searched as long as
		 * one with no seed */
		cfg.patience = FT_TRANSFER_PATIENCE_UNSEEDED;
		cfg.patience_frac = 0;
	}
	cfg.race = o->race;
	cfg.race.rival_us = o->incumbent_us;	/* a space that cannot hold the unit's best: no heated final */
	cfg.skip = on_skip;
	cfg.claim = on_claim;
	cfg.emit = on_trial;
	cfg.emit_final = on_final;
	cfg.ctx = s;
	cfg.compiles_done = o->compiles_done;
	cfg.compiles_ctx = o->compiles_ctx;
	rc = ft_pipeline_run(&cfg, &res->st, err);
	if (flush(s, 1) && !rc) {
		*err = s->err;
		rc = -1;
	}
	if (rc && s->err.status)
		*err = s->err;
	res->interrupted = rc && err->status == FT_EINTR;
	/* the best and runner-up by the best row's rule, also over the rows of
	 * earlier runs (a run whose final decides) */
	choose_top(s);
	bk = (struct ft_best_key){ o->arch->name, o->device ? o->device : "", sp->name, *shape };
	if (res->timed && ft_db_best_refresh(db, &bk, res->search_key, rc ? NULL : err) < 0 && !rc)
		rc = -1;
	/* however the run ended, what it claimed and did not store is free */
	if (ft_db_claims_release(db, res->run_id, rc ? NULL : err) && !rc)
		rc = -1;
	ft_db_run_finish(db, res->run_id,
			 rc ? (res->interrupted ? "interrupted" : "failed") : "done",
			 res->st.wall_ms / 1e3, NULL);
out:
	res->db_wait_ms = ft_db_wait_ms(db) - waited;
	free(s->oks);
	free(s->batch);
	free(s);
	return rc;
}
