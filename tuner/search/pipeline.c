/* pipeline.c - enumerate -> model check -> compile threads -> GPU thread -> emit.
 *
 * Work moves between threads as heap-allocated items on three blocking queues
 * (compile, eval, done). Ownership: an item belongs to exactly one queue or
 * thread at a time; the main thread frees it after emit. The main thread is the
 * only one that calls cfg->emit (and so the only one touching the database).
 * With racing (race.h) the GPU threads time through the race, and once every
 * candidate is back the main thread runs the race's final on the first GPU.
 * What evaluates is a runner (run/runner.h): the pipeline asks it, on the
 * main thread as each candidate is sent, whether it answers the candidate
 * itself (a recording), and whether its jobs need CUBINs compiled.
 */
#include "base/clock.h"
#include "search/pipeline.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/interrupt.h"
#include "compile/hint.h"
#include "compile/keylock.h"
#include "compile/cache.h"
#include "fatune_abi.h"
#include "compile/feasibility.h"
#include "compile/nvrtc.h"
#include "compile/ptxas.h"
#include "run/verify.h"
#include "search/strategy.h"
#include "space/candidate.h"

/* Items in flight at most (sent to compile, not yet back on the main thread):
 * enough to keep 64 compile threads and the GPUs busy, small enough that a
 * space of 10^9 feasible candidates streams in a few MB (an item is ~3 KB). */
#define QUEUE_BOUND 512

/* Candidates held by a concurrent search (cfg->claim) waiting at most, and how
 * often they are asked about again: a claim lasts one compile and timing
 * (seconds), and each question is one small write transaction. */
#define DEFER_BOUND 4096
#define DEFER_POLL_MS 100

/* Ordered strategies store the model's rejections in a second pass over the
 * space, this many candidates at a time whenever the main thread would wait
 * for a result (the GPUs are busy then), instead of before the first
 * candidate is sent: storing ~30,000 rejections per space took most of the
 * time a GPU stood idle at the start of a search (docs/timing.md). */
#define REJECT_STEP 64

struct item {
	struct ft_trial t;
	int dropped;		/* budget or stop: never compiled, not emitted */
	struct item *next;
};

struct queue {
	pthread_mutex_t m;
	pthread_cond_t c;
	struct item *head, *tail;
	int closed;
};

/* A CUBIN being compiled, and the candidates waiting for it: launch-time
 * parameters (NUM_SPLITS) give several candidates one CUBIN, and they must
 * not be compiled twice by two threads at once. */
struct inflight {
	char key[17];
	struct item *parked;
	struct inflight *next;
};

struct run {
	const struct ft_pipeline_cfg *cfg;
	pthread_mutex_t inflight_m;
	struct inflight *inflight;
	struct queue compile_q, eval_q, done_q;
	atomic_int live_compilers;
	atomic_int stop;		/* emit asked to stop, or a fatal error */
	atomic_int guide_stop;		/* the guide's early stop fired: what has not reached
					 * a compile thread or the GPU yet is dropped */
	double t0, deadline;		/* ms; deadline 0: none */
	atomic_llong compiled, cache_hits, evaluated;
	double compile_ms, gpu_ms, first_compile_ms;	/* under stat_m */
	double first_send_ms;		/* main thread only */
	double compile_t0, compile_t1;	/* first compile start, last end (under stat_m) */
	double gpu_wait_ms, verify_ms, timing_ms;	/* under stat_m */
	double phase_ms[FT_PH_COUNT];			/* under stat_m */
	long long loaded_ahead;				/* under stat_m */
	struct ft_race *race;		/* NULL: racing off */
	pthread_mutex_t stat_m;
	struct ft_guide *guide;		/* guided strategy: told every finished trial (main thread) */
	struct ft_err fatal;		/* first fatal error (under stat_m) */
	/* main thread only */
	long long sent, received;	/* items queued to compile, items back from done_q */
	struct item **held;		/* ordered strategies: feasible items until all are known */
	long long nheld, capheld;
	int rejects_due;		/* ordered strategies: the pass that emits the model's
					 * rejections is owed (rejects_step) */
	struct ft_enum *rejects;	/* ... and its enumeration, once begun */
	struct item *deferred;		/* claimed by a concurrent search (send, defer_settle) */
	long long ndeferred, elsewhere;	/* ... how many; finished by one */
	int evaluates;			/* the runners evaluate jobs (runner.h) */
	int compiles;			/* candidates are compiled (no runner, or one that loads CUBINs) */
	pthread_t compilers[64], evaluators[FT_MAX_RUNNERS];
	struct eval_arg {
		struct run *r;
		struct ft_runner *x;	/* NULL when no runner evaluates */
	} eargs[FT_MAX_RUNNERS];
	int ncompilers, nevaluators;
};

static void q_init(struct queue *q)
{
	pthread_mutex_init(&q->m, NULL);
	pthread_cond_init(&q->c, NULL);
	q->head = q->tail = NULL;
	q->closed = 0;
}

static void q_destroy(struct queue *q)
{
	pthread_mutex_destroy(&q->m);
	pthread_cond_destroy(&q->c);
}

static void q_push(struct queue *q, struct item *it)
{
	it->next = NULL;
	pthread_mutex_lock(&q->m);
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	pthread_cond_signal(&q->c);
	pthread_mutex_unlock(&q->m);
}

static void q_close(struct queue *q)
{
	pthread_mutex_lock(&q->m);
	q->closed = 1;
	pthread_cond_broadcast(&q->c);
	pthread_mutex_unlock(&q->m);
}

/* The CUBIN key of the item at the head ("" when none or not compiled). */
static void q_peek_key(struct queue *q, char key[17])
{
	pthread_mutex_lock(&q->m);
	snprintf(key, 17, "%s", q->head ? q->head->t.compile_key : "");
	pthread_mutex_unlock(&q->m);
}

/* Blocks until an item is there (NULL once closed and empty); with wait == 0
 * returns NULL at once when empty. */
static struct item *q_pop(struct queue *q, int wait)
{
	struct item *it;

	pthread_mutex_lock(&q->m);
	while (!q->head && !q->closed && wait)
		pthread_cond_wait(&q->c, &q->m);
	it = q->head;
	if (it) {
		q->head = it->next;
		if (!q->head)
			q->tail = NULL;
	}
	pthread_mutex_unlock(&q->m);
	return it;
}

static int should_drop(struct run *r)
{
	return atomic_load(&r->stop) || ft_interrupted() || (r->deadline > 0 && ft_mono_ms() > r->deadline) ||
	       (r->cfg->cancel && atomic_load(r->cfg->cancel));
}

/* should_drop, or a candidate still waiting (to compile or for the GPU)
 * after the guide stopped: a search that stopped improving does not spend
 * its window's compiles and evaluations. An answered candidate (a
 * recording) costs nothing and is kept, so a replay stays deterministic. */
static int should_skip(struct run *r, const struct item *it)
{
	return should_drop(r) || (atomic_load(&r->guide_stop) && ft_trial_pending(&it->t));
}

void ft_pipeline_compile_req(const struct ft_space *sp, const struct ft_arch *a,
			     const struct ft_shape *shape, const struct ft_trial *t,
			     struct ft_compile_req *req)
{
	struct ft_macro m[FT_MAX_MACROS];
	int n = ft_candidate_macros(sp, shape, t->values, t->define_values, t->smem_model, m);

	_Static_assert(FT_MAX_MACROS <= FT_MAX_DEFINES, "every macro of a candidate fits a compile request");
	memset(req, 0, sizeof(*req));
	req->source_path = sp->template_path;
	req->arch = sp->family->nvrtc_arch(a);
	for (int i = 0; i < n; i++) {
		req->define_names[i] = m[i].name;
		req->define_values[i] = m[i].value;
	}
	req->ndefines = n;
	req->kernels[0] = sp->kernel;
	req->kernels[1] = sp->combine_kernel[0] ? sp->combine_kernel : NULL;
	req->param_bytes = sp->abi == 2 ? (long long)sizeof(struct fatune_attn_params_v2)
					: (long long)sizeof(struct fatune_attn_params_v1);
	req->noptions = sp->noptions;
	for (int i = 0; i < sp->noptions; i++)
		req->options[i] = sp->options[i];
	req->nincludes = sp->nincludes;
	for (int i = 0; i < sp->nincludes; i++)
		req->includes[i] = sp->includes[i];
}

/* The first line of a compile log that says "error", for the trial's reason. */
static void first_error(const char *log, char *out, size_t size)
{
	if (!ft_ptxas_first_error(log, out, size)[0])
		snprintf(out, size, "NVRTC failed (see the log)");
}

/* The reason of a failed compile whose log says nothing useful: ptxas's own
 * error when nvrtc.c could recover it; else the commonest one - too much
 * static shared memory - is recognised from the resources ptxas did report. */
static void compile_problem(const struct ft_pipeline_cfg *cfg, const struct ft_compile_out *out,
			    char *reason, size_t size)
{
	if (!strncmp(out->problem, "ptxas error: ", 13)) {
		snprintf(reason, size, "%s", out->problem);
		return;
	}
	for (int k = 0; k < 2; k++)
		if (out->ok == 0 && out->res[k].smem_static > cfg->arch->smem_static) {
			snprintf(reason, size,
				 "ptxas: kernel '%s' uses %d bytes of static shared memory, over the %d-byte "
				 "static limit of %s (NVRTC's log omits ptxas's error): use dynamic "
				 "(extern __shared__) memory or a smaller config",
				 k ? cfg->sp->combine_kernel : cfg->sp->kernel, out->res[k].smem_static,
				 cfg->arch->smem_static, cfg->arch->name);
			return;
		}
	snprintf(reason, size, "%s", out->problem);
}

/* Records the run's first fatal error and stops it. */
static void set_fatal(struct run *r, const struct ft_err *err)
{
	pthread_mutex_lock(&r->stat_m);
	if (!r->fatal.status)
		r->fatal = *err;
	pthread_mutex_unlock(&r->stat_m);
	atomic_store(&r->stop, 1);
}

/* Compiles one candidate (or finds it in the cache) and sets its status.
 * Returns -1 with err when the environment failed, not the candidate: NVRTC
 * could not run, or the cache could not store the CUBIN (a full disk, a
 * read-only or vanished directory). The candidate then has no verdict; the
 * caller stops the run and stores nothing for it. */
static int compile_held(struct run *r, struct item *it, const struct ft_compile_req *req,
			struct ft_err *err);

static int compile_one(struct run *r, struct item *it, struct ft_err *err)
{
	const struct ft_pipeline_cfg *cfg = r->cfg;
	struct ft_compile_req req;
	char key[sizeof(it->t.compile_key)];
	int held, rc;

	ft_pipeline_compile_req(cfg->sp, cfg->arch, cfg->shape, &it->t, &req);
	ft_compile_key(&req, cfg->template_hash, it->t.compile_key);
	/* a prefetch beside this run may be compiling the same CUBIN: wait for
	 * it and take its CUBIN from the cache (compile/keylock.h) */
	memcpy(key, it->t.compile_key, sizeof(key));
	held = ft_keylock_take(key);
	rc = compile_held(r, it, &req, err);
	if (held)
		ft_keylock_give(key);
	return rc;
}

/* compile_one's look-up and compile, the key's lock held. */
static int compile_held(struct run *r, struct item *it, const struct ft_compile_req *req,
			struct ft_err *err)
{
	const struct ft_pipeline_cfg *cfg = r->cfg;
	struct ft_compile_out out;
	struct ft_resources res[2];

	if (ft_cache_lookup(it->t.compile_key, res)) {
		atomic_fetch_add(&r->cache_hits, 1);
		it->t.compile_ms = 0;
	} else {
		double c0 = ft_mono_ms();

		pthread_mutex_lock(&r->stat_m);
		if (r->first_compile_ms < 0) {
			r->first_compile_ms = c0 - r->t0;
			r->compile_t0 = c0;
		}
		pthread_mutex_unlock(&r->stat_m);
		it->t.stage = FT_STAGE_COMPILED;
		if (ft_compile(req, &out, err)) {
			ft_compile_out_release(&out);
			return -1;
		}
		atomic_fetch_add(&r->compiled, 1);
		if (cfg->compiled_now)
			atomic_fetch_add(cfg->compiled_now, 1);
		it->t.compile_ms = out.ms;
		pthread_mutex_lock(&r->stat_m);
		r->compile_ms += out.ms;
		if (ft_mono_ms() > r->compile_t1)
			r->compile_t1 = ft_mono_ms();
		pthread_mutex_unlock(&r->stat_m);
		if (!out.ok) {
			it->t.status = FT_ST_COMPILE_FAILED;
			if (out.problem[0])
				compile_problem(cfg, &out, it->t.reason, sizeof(it->t.reason));
			else
				first_error(out.log, it->t.reason, sizeof(it->t.reason));
			ft_compile_hint_append(out.log, cfg->sp->abi, it->t.reason,
					       sizeof(it->t.reason));
			it->t.log = out.log;	/* ownership moves to the trial */
			out.log = NULL;
			it->t.compile_key[0] = '\0';
			ft_compile_out_release(&out);
			return 0;
		}
		if (ft_cache_store(it->t.compile_key, &out, err)) {
			ft_err_prefix(err, "the CUBIN cache failed, not the candidate (fix it or set FATUNE_CACHE_DIR, then run again)");
			ft_compile_out_release(&out);
			return -1;
		}
		res[0] = out.res[0];
		res[1] = out.res[1];
		ft_compile_out_release(&out);
	}
	ft_feasible_compiled(cfg->sp, cfg->arch, res, &it->t); /* sets stage and verdict */
	return 0;
}

/* Sends an item on by its stage (trial.h): one still pending (compiled, or
 * accepted for a runner that needs no CUBIN) goes to the evaluation threads
 * when a runner evaluates; every other one is finished. */
static void route(struct run *r, struct item *it)
{
	if (ft_trial_pending(&it->t) && r->evaluates)
		q_push(&r->eval_q, it);
	else
		q_push(&r->done_q, it);
}

/* Claims the item's compile key: returns 1 when this thread must compile it, 0 when
 * another thread already is (the item is parked behind that compile). */
static int claim(struct run *r, struct item *it, struct inflight **mine)
{
	struct ft_compile_req req;
	struct inflight *f;

	ft_pipeline_compile_req(r->cfg->sp, r->cfg->arch, r->cfg->shape, &it->t, &req);
	ft_compile_key(&req, r->cfg->template_hash, it->t.compile_key);
	pthread_mutex_lock(&r->inflight_m);
	for (f = r->inflight; f; f = f->next)
		if (!strcmp(f->key, it->t.compile_key)) {
			it->next = f->parked;
			f->parked = it;
			pthread_mutex_unlock(&r->inflight_m);
			return 0;
		}
	f = calloc(1, sizeof(*f));
	if (f) {
		memcpy(f->key, it->t.compile_key, sizeof(f->key));
		f->next = r->inflight;
		r->inflight = f;
	}
	*mine = f;
	pthread_mutex_unlock(&r->inflight_m);
	return 1;
}

/* Ends a claim; returns the items parked behind it (now cache hits). */
static struct item *release(struct run *r, struct inflight *mine)
{
	struct item *parked = NULL;

	if (!mine)
		return NULL;
	pthread_mutex_lock(&r->inflight_m);
	for (struct inflight **p = &r->inflight; *p; p = &(*p)->next)
		if (*p == mine) {
			*p = mine->next;
			break;
		}
	pthread_mutex_unlock(&r->inflight_m);
	parked = mine->parked;
	free(mine);
	return parked;
}

static void *compile_thread(void *arg)
{
	struct run *r = arg;
	struct item *it, *parked, *next;
	struct inflight *mine;
	char reason[sizeof(it->t.reason)];
	struct ft_err err = { 0 };
	int failed;

	while ((it = q_pop(&r->compile_q, 1))) {
		if (should_skip(r, it)) {
			it->dropped = 1;
			q_push(&r->done_q, it);
			continue;
		}
		/* answered by the runner when it was sent (a recording), or for a
		 * runner that never loads a CUBIN: nothing to compile. The job
		 * still names the CUBIN it would have been (its content key). */
		if (!ft_trial_pending(&it->t) || !r->compiles) {
			if (ft_trial_pending(&it->t)) {
				struct ft_compile_req req;

				ft_pipeline_compile_req(r->cfg->sp, r->cfg->arch, r->cfg->shape, &it->t, &req);
				ft_compile_key(&req, r->cfg->template_hash, it->t.compile_key);
			}
			route(r, it);
			continue;
		}
		mine = NULL;
		if (!claim(r, it, &mine))
			continue;
		if (compile_one(r, it, &err)) {
			/* the environment failed: this item and those parked behind it
			 * are dropped, never stored, and the run stops */
			set_fatal(r, &err);
			it->dropped = 1;
			q_push(&r->done_q, it);
			for (parked = release(r, mine); parked; parked = next) {
				next = parked->next;
				parked->dropped = 1;
				q_push(&r->done_q, parked);
			}
			continue;
		}
		/* copied before routing: once queued, the item belongs to another thread */
		failed = it->t.status == FT_ST_COMPILE_FAILED;
		memcpy(reason, it->t.reason, sizeof(reason));
		route(r, it);
		for (parked = release(r, mine); parked; parked = next) {
			next = parked->next;
			if (failed) {
				/* the same source and options fail the same way */
				parked->t.stage = FT_STAGE_COMPILED;
				parked->t.status = FT_ST_COMPILE_FAILED;
				memcpy(parked->t.reason, reason, sizeof(reason));
				parked->t.compile_key[0] = '\0';
			} else if (compile_one(r, parked, &err)) { /* a cache hit now */
				set_fatal(r, &err);
				parked->dropped = 1;
			}
			route(r, parked);
		}
	}
	if (atomic_fetch_sub(&r->live_compilers, 1) == 1) {
		q_close(&r->eval_q);
		if (r->cfg->compiles_done && !should_drop(r))
			r->cfg->compiles_done(r->cfg->compiles_ctx);
	}
	return NULL;
}

/* The launch of a trial: its stored formulas as a candidate, through
 * ft_candidate_launch (the one place a launch is made from a candidate). */
static int trial_launch(const struct ft_pipeline_cfg *cfg, const struct ft_trial *t, struct ft_launch *out,
			struct ft_err *err)
{
	struct ft_candidate c = { 0 };

	memcpy(c.values, t->values, sizeof(c.values));
	memcpy(c.define_values, t->define_values, sizeof(c.define_values));
	c.failed_constraint = -1;
	c.smem_bytes = t->smem_model;
	c.threads = t->threads;
	c.combine_threads = t->combine_threads;
	c.combine_pdl = t->combine_pdl;
	c.workspace_bytes = t->workspace_bytes;
	for (int i = 0; i < 3; i++) {
		c.grid[i] = t->grid[i];
		c.combine_grid[i] = t->combine_grid[i];
	}
	return ft_candidate_launch(cfg->sp, cfg->shape, &c, out, err);
}

/* pipeline.h */
int ft_pipeline_job(const struct ft_pipeline_cfg *cfg, struct ft_trial *t, struct ft_job *job,
		    struct ft_err *err)
{
	struct ft_launch launch;

	*job = cfg->job;
	snprintf(job->cubin_key, sizeof(job->cubin_key), "%s", t->compile_key);
	job->next_cubin_key[0] = '\0';
	snprintf(job->config, sizeof(job->config), "%s", t->config);
	snprintf(job->kernel, sizeof(job->kernel), "%s", cfg->sp->kernel);
	snprintf(job->combine_kernel, sizeof(job->combine_kernel), "%s", cfg->sp->combine_kernel);
	job->shape = *cfg->shape;
	if (trial_launch(cfg, t, &launch, err)) {
		t->stage = FT_STAGE_VERIFIED;
		t->status = FT_ST_CRASHED;
		snprintf(t->reason, sizeof(t->reason), "launch plan: %s", err->msg);
		return 1;
	}
	job->dynamic_smem = launch.dynamic_smem;
	job->threads = launch.threads;
	job->combine_threads = launch.combine_threads;
	job->combine_pdl = launch.combine_pdl;
	for (int i = 0; i < 3; i++) {
		job->grid[i] = launch.grid[i];
		job->combine_grid[i] = launch.combine_grid[i];
	}
	job->num_splits = launch.num_splits;
	job->abi = cfg->sp->abi;
	job->workspace_bytes = launch.workspace_bytes;
	job->workspace_init = launch.workspace_init;
	job->plan = launch.plan;
	return 0;
}

/* What runs one job: a runner that evaluates (one that answered the
 * candidate when it was sent never gets here). */
struct runner {
	struct run *r;
	struct ft_runner *x;
	int final;		/* the race's final: an interrupt ends it between jobs */
};

static int run_job(void *ctx, const struct ft_job *job, struct ft_job_result *res,
		   struct ft_err *err)
{
	struct runner *x = ctx;

	if (x->final && ft_interrupted())
		return ft_interrupt_error(err, "finished trials are stored; run the same command to resume");
	return ft_runner_evaluate(x->x, job, x->r->cfg->timeout_ms, res, err);
}

/* The race's final as one sweep through the runner (race.h ft_race_final_sweep). */
static int run_sweep(void *ctx, const struct ft_sweep *g, struct ft_sweep_result *out,
		     struct ft_err *err)
{
	struct runner *x = ctx;

	if (ft_interrupted())
		return ft_interrupt_error(err, "finished trials are stored; run the same command to resume");
	return ft_runner_sweep(x->x, g, x->r->cfg->timeout_ms, out, err);
}

/* A runner's verdict into the trial, with the runner's device. */
static void take_result(struct ft_trial *t, const struct ft_job_result *res, struct ft_runner *x)
{
	if (x) {
		t->device_index = ft_runner_info(x)->device_index;
		snprintf(t->device, sizeof(t->device), "%s", ft_runner_info(x)->device);
	}
	ft_trial_take(t, res);
}

static void add_phases(struct run *r, double busy_ms, const struct ft_job_result *res)
{
	pthread_mutex_lock(&r->stat_m);
	r->gpu_ms += busy_ms;
	r->verify_ms += res->verify_ms;
	r->timing_ms += res->time_ms;
	for (int i = 0; i < FT_PH_COUNT; i++)
		r->phase_ms[i] += res->phase_ms[i];
	r->loaded_ahead += res->loaded_ahead;
	pthread_mutex_unlock(&r->stat_m);
}

static void evaluate_one(struct run *r, struct ft_runner *w, struct item *it)
{
	struct runner x = { r, w, 0 };
	struct ft_job job;
	struct ft_job_result res;
	struct ft_err err = { 0 };
	double t0 = ft_mono_ms();
	int rc;

	rc = ft_pipeline_job(r->cfg, &it->t, &job, &err);
	if (rc < 0)
		goto fatal;
	if (rc > 0) {
		atomic_fetch_add(&r->evaluated, 1);
		return;
	}
	/* the candidate queued next: its module loads while this job runs (an
	 * evaluation thread of another GPU may take it; then the load is lost) */
	q_peek_key(&r->eval_q, job.next_cubin_key);
	ft_job_result_init(&res);
	if (r->race ? ft_race_evaluate(r->race, &job, run_job, &x, &res, &err)
		    : run_job(&x, &job, &res, &err))
		goto fatal;
	atomic_fetch_add(&r->evaluated, 1);
	take_result(&it->t, &res, w);
	/* this GPU's drift by the race's latest anchor on it (race.h) */
	it->t.race_drift = ft_race_drift(r->race);
	/* busy: not while the job waited for its GPU (another unit's turn) */
	add_phases(r, ft_mono_ms() - t0 - res.phase_ms[FT_PH_SHARED], &res);
	return;
fatal:
	set_fatal(r, &err);
	it->dropped = 1;
}

static void *eval_thread(void *arg)
{
	struct eval_arg *a = arg;
	struct item *it;
	double w0 = ft_mono_ms();

	while ((it = q_pop(&a->r->eval_q, 1))) {
		/* the GPU stood idle from w0: waiting for a compiled candidate */
		pthread_mutex_lock(&a->r->stat_m);
		a->r->gpu_wait_ms += ft_mono_ms() - w0;
		pthread_mutex_unlock(&a->r->stat_m);
		if (should_skip(a->r, it))
			it->dropped = 1;
		else
			evaluate_one(a->r, a->x, it);
		q_push(&a->r->done_q, it);
		w0 = ft_mono_ms();
	}
	return NULL;
}

/* Hands one finished item to emit (or drops it) and frees it; observe 0: a
 * model rejection of the second pass, which the guide and the race never saw
 * before the strategy began either (their state depends on evaluated
 * candidates alone). */
static void finish_item(struct run *r, struct item *it, int observe)
{
	if (!it->dropped && observe) {
		/* the guide compares times in the race's units (race.h: a GPU's
		 * drift), as the race does; the row stored keeps the time measured */
		if (it->t.race_drift > 0 && it->t.race_drift != 1) {
			struct ft_trial seen = it->t;

			seen.t_median_us = ft_race_time(&it->t);
			seen.t_min_us /= it->t.race_drift;
			seen.t_p90_us /= it->t.race_drift;
			ft_guide_observe(r->guide, &seen);
		} else {
			ft_guide_observe(r->guide, &it->t);
		}
		ft_race_offer(r->race, &it->t);
	}
	if (!it->dropped && !atomic_load(&r->stop) && r->cfg->emit(r->cfg->ctx, &it->t)) {
		atomic_store(&r->stop, 1);
		pthread_mutex_lock(&r->stat_m);
		if (!r->fatal.status)
			ft_error(&r->fatal, FT_EFAIL, "stopped: storing a result failed");
		pthread_mutex_unlock(&r->stat_m);
	}
	free(it->t.log);
	free(it);
}

static void finish(struct run *r, struct item *it)
{
	finish_item(r, it, 1);
}

/* The second pass of an ordered strategy: up to n more candidates of the
 * space, each model rejection emitted (the feasible ones were held by the
 * first pass). The pass ends at the space's end, on a stop or an interrupt
 * (what it did not store is found again by the next run: a rejection is never
 * skipped by resume) or on an error (fatal). */
static void rejects_step(struct run *r, int n)
{
	const struct ft_pipeline_cfg *cfg = r->cfg;
	struct ft_candidate c;
	struct ft_err err = { 0 };
	int rc = 1;

	/* opened at its first step, once the first candidates are on their way */
	if (!r->rejects && !should_drop(r) &&
	    ft_enum_open(&r->rejects, cfg->sp, cfg->shape, cfg->arch, cfg->fixed, &err))
		rc = -1;
	for (int i = 0; r->rejects && i < n && rc == 1; i++) {
		struct item *it;

		if (should_drop(r) || (rc = ft_enum_next(r->rejects, &c, &err)) != 1)
			break;
		if (!(it = calloc(1, sizeof(*it)))) {
			rc = ft_error(&err, FT_EFAIL, "out of memory");
			break;
		}
		ft_trial_init(&it->t);
		if (ft_feasible_model(r->cfg->sp, r->cfg->arch, &c, &it->t))
			free(it);
		else
			finish_item(r, it, 0);
	}
	if (rc == 1 && !should_drop(r))
		return;
	if (rc < 0)
		set_fatal(r, &err);
	ft_enum_close(r->rejects);
	r->rejects = NULL;
	r->rejects_due = 0;
}

/* Finishes what came back: everything there (wait 0), or one item, waiting
 * for it (wait 1) - and while none is there, the main thread stores the
 * second pass's rejections instead of sleeping. */
static void drain(struct run *r, int wait)
{
	struct item *it;

	for (;;) {
		it = q_pop(&r->done_q, 0);
		if (!it && wait && r->rejects_due) {
			rejects_step(r, REJECT_STEP);
			continue;
		}
		if (!it && wait)
			it = q_pop(&r->done_q, 1);
		if (!it)
			return;
		r->received++;
		finish(r, it);
		if (wait)
			return;
	}
}

/* Queues item `it` to be compiled. Backpressure: while QUEUE_BOUND items are
 * in flight (queued, compiling, waiting for the GPU or for the main thread),
 * the main thread finishes what comes back before it sends more, so the
 * enumeration of a huge space never runs ahead of compiling. With
 * cfg->claim, the candidate is claimed first (see defer_settle). */
static void send(struct run *r, struct item *it)
{
	int c = r->cfg->claim && !should_drop(r) ? r->cfg->claim(r->cfg->ctx, &it->t) : 0;

	if (c == 2 && !should_drop(r)) {
		/* a concurrent search has it: asked again later */
		it->next = r->deferred;
		r->deferred = it;
		r->ndeferred++;
		return;
	}
	if (c) {
		if (c < 0) {
			struct ft_err e;

			ft_error(&e, FT_EFAIL, "stopped: claiming a candidate failed");
			set_fatal(r, &e);
		}
		r->elsewhere += c == 1;	/* finished by a concurrent search */
		free(it);
		return;
	}
	/* a claimed candidate waits here for no one: claim only what the
	 * threads are about to take, so concurrent searches share the work */
	while (r->sent - r->received >= (r->cfg->claim ? 2 * (r->ncompilers + r->nevaluators) : QUEUE_BOUND))
		drain(r, 1);
	/* A runner that answers (a recording) gives the candidate its verdict
	 * here, in the order the strategy sends (deterministic for a seed, unlike
	 * the threads' order; runner.h). The item is then no longer pending and
	 * comes straight back. */
	if (r->cfg->nrunners > 0 && ft_runner_answer(r->cfg->runners[0], &it->t)) {
		ft_race_recorded(r->race, &it->t);
		atomic_fetch_add(&r->evaluated, 1);
	}
	if (r->first_send_ms < 0)
		r->first_send_ms = ft_mono_ms() - r->t0;
	q_push(&r->compile_q, it);
	r->sent++;
}

/* Candidates a concurrent search holds: asked again every DEFER_POLL_MS (our
 * own results drained meanwhile) until each is stored by its owner (counted
 * by cfg->claim), or is ours because the owner died; then none is left. The
 * stop conditions (interrupt, budget, fatal) free the rest. */
static void defer_settle(struct run *r)
{
	struct item *list, *next;

	while (r->deferred && !should_drop(r)) {
		list = r->deferred;
		r->deferred = NULL;
		r->ndeferred = 0;
		for (; list; list = next) {
			next = list->next;
			send(r, list);
		}
		if (r->deferred) {
			drain(r, 0);
			nanosleep(&(struct timespec){ 0, DEFER_POLL_MS * 1000000L }, NULL);
			drain(r, 0);
		}
	}
	for (list = r->deferred; list; list = next) {
		next = list->next;
		free(list);
	}
	r->deferred = NULL;
	r->ndeferred = 0;
}

/* The guided strategies' feedback loop: keep `window` candidates in flight
 * (enough to overlap compiling with the GPU) and choose each next one from
 * the results so far. ts[i] is held item i's trial in the guide's order;
 * every held item is queued or freed. -1: out of memory. */
static int feed_guided(struct run *r, struct ft_trial **ts, long long take, long long window)
{
	struct item **by_rank = malloc((r->nheld ? r->nheld : 1) * sizeof(*by_rank));
	long long pick = 0;

	if (!by_rank) {
		for (long long i = 0; i < r->nheld; i++)
			free(r->held[i]);
		return -1;
	}
	for (long long i = 0; i < r->nheld; i++)
		by_rank[i] = (struct item *)((char *)ts[i] - offsetof(struct item, t));
	while (r->sent < take && pick >= 0 && !ft_interrupted()) {
		while (r->sent - r->received < window && r->sent < take &&
		       (pick = ft_guide_next(r->guide)) >= 0) {
			send(r, by_rank[pick]);
			by_rank[pick] = NULL;
		}
		if (pick < 0 && ft_guide_stopped(r->guide))
			atomic_store(&r->guide_stop, 1);
		if (r->sent > r->received)
			drain(r, 1);
	}
	for (long long i = 0; i < r->nheld; i++)
		free(by_rank[i]);
	free(by_rank);
	return 0;
}

/* The ordered strategies, once every feasible candidate is held: order them,
 * then queue the first `take` (budget) or let the guide choose. Every held
 * item is queued or freed. */
/* The run's strategy: NULL in a cfg is exhaustive. */
static const struct ft_strategy *cfg_strategy(const struct ft_pipeline_cfg *cfg)
{
	return cfg->strategy ? cfg->strategy : &ft_strategy_exhaustive;
}

/* Candidates a guide keeps in flight: enough to keep every compile thread and
 * GPU busy. FATUNE_GUIDE_WINDOW=N (1..1024) sets it, to time one against another. */
static long long guide_window(const struct run *r)
{
	const char *v = getenv("FATUNE_GUIDE_WINDOW");
	long long n = v ? atoll(v) : 0;

	return n >= 1 && n <= 1024 ? n : r->ncompilers + 2 * r->nevaluators;
}

static int feed_ordered(struct run *r, struct ft_err *err)
{
	const struct ft_strategy *strat = cfg_strategy(r->cfg);
	const struct ft_pipeline_cfg *cfg = r->cfg;
	struct ft_trial **ts = malloc((r->nheld ? r->nheld : 1) * sizeof(*ts));
	long long take, n = r->nheld;
	int rc = 0;

	if (!ts) {
		for (long long i = 0; i < n; i++)
			free(r->held[i]);
		return ft_error(err, FT_EFAIL, "out of memory");
	}
	for (long long i = 0; i < n; i++)
		ts[i] = &r->held[i]->t;
	/* a streamed strategy (exhaustive) reaches here only when racing: the model's order, so that the
	 * likely winners are timed (and compiled) first and the cut line is low early */
	ft_strategy_order(strat->feed == FT_FEED_STREAM ? &ft_strategy_model : strat, cfg->seed,
			  cfg->sp, cfg->arch, cfg->shape, cfg->sm_count, ts, n);
	take = cfg->budget_evals >= 0 && cfg->budget_evals < n ? cfg->budget_evals : n;
	if (strat->feed == FT_FEED_GUIDE)
		r->guide = ft_guide_new(cfg->sp, ts, n, cfg->seed);
	if (r->guide && strat->transfer) {
		/* the search stops once it stops improving: seeded, the patience
		 * follows the feasible set's size; with no seed (the first unit of
		 * a group), a longer one (transfer.h) */
		long long pat = cfg->patience_unseeded;

		if (ft_guide_seed(r->guide, ts, cfg->seeds, cfg->nseeds)) {
			pat = cfg->patience;
			if (cfg->patience_frac > 0) {
				pat = (long long)ceil(cfg->patience_frac * (double)n);
				pat = pat < cfg->patience_min ? cfg->patience_min : pat;
				pat = pat > cfg->patience ? cfg->patience : pat;
			}
		}
		ft_guide_patience(r->guide, (int)pat, cfg->gain);
		ft_guide_incumbent(r->guide, cfg->incumbent_us, cfg->patience_behind);
		ft_guide_probe(r->guide);
		if (cfg->seed_lean)
			ft_guide_lean(r->guide);
	}
	if (r->guide) {
		if (feed_guided(r, ts, take, guide_window(r)))
			rc = ft_error(err, FT_EFAIL, "out of memory");
	} else {
		/* ts[i] points into held items; map back by container */
		for (long long i = 0; i < n; i++) {
			struct item *it = (struct item *)((char *)ts[i] - offsetof(struct item, t));
			if (i < take && !ft_interrupted()) {
				send(r, it);
			} else {
				free(it);
			}
		}
	}
	free(ts);
	return rc;
}

/* Starts the compile threads (as many as start, at least one) and one
 * evaluation thread per evaluating runner (one, idle, when none evaluates). */
static int start_threads(struct run *r, int jobs, struct ft_err *err)
{
	const struct ft_pipeline_cfg *cfg = r->cfg;
	int n = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
	int nev = r->evaluates ? (cfg->nrunners < FT_MAX_RUNNERS ? cfg->nrunners : FT_MAX_RUNNERS) : 1;

	atomic_store(&r->live_compilers, n);
	for (r->ncompilers = 0; r->ncompilers < n; r->ncompilers++)
		if (pthread_create(&r->compilers[r->ncompilers], NULL, compile_thread, r)) {
			/* run with the threads we have */
			atomic_fetch_sub(&r->live_compilers, n - r->ncompilers);
			break;
		}
	for (r->nevaluators = 0; r->nevaluators < nev; r->nevaluators++) {
		struct eval_arg *a = &r->eargs[r->nevaluators];

		*a = (struct eval_arg){ r, r->evaluates ? cfg->runners[r->nevaluators] : NULL };
		if (r->ncompilers == 0 || pthread_create(&r->evaluators[r->nevaluators], NULL, eval_thread, a))
			return ft_error(err, FT_EFAIL, "cannot start the pipeline threads");
	}
	return 0;
}

/* Lets the threads run out of work and joins them. */
static void join_threads(struct run *r)
{
	q_close(&r->compile_q);
	for (int i = 0; i < r->ncompilers; i++)
		pthread_join(r->compilers[i], NULL);
	q_close(&r->eval_q);
	for (int i = 0; i < r->nevaluators; i++)
		pthread_join(r->evaluators[i], NULL);
}

/* Keeps item `it` for the ordered strategies (it is freed on failure). */
static int hold(struct run *r, struct item *it, struct ft_err *err)
{
	if (r->nheld == r->capheld) {
		struct item **n = realloc(r->held, (r->capheld = r->capheld ? 2 * r->capheld : 256) * sizeof(*n));
		if (!n) {
			free(it);
			return ft_error(err, FT_EFAIL, "out of memory");
		}
		r->held = n;
	}
	r->held[r->nheld++] = it;
	return 0;
}

/* Enumerates the space on the main thread: the model check, then each
 * feasible candidate queued (exhaustive: streamed, cut by the budget) or
 * held (ordered strategies, whose rejections are emitted by the second pass,
 * rejects_step). Returns 0 at the end, -1 with err. */
static int enumerate(struct run *r, struct ft_enum *e, int stream, struct ft_pipeline_stats *st,
		     struct ft_err *err)
{
	const struct ft_pipeline_cfg *cfg = r->cfg;
	struct ft_candidate c;
	int rc = 0;

	/* an interrupt, a fatal error and the time budget are polled before
	 * every candidate: a space whose every candidate is rejected by the
	 * model would never reach the end of the loop */
	while (!should_drop(r) && (rc = ft_enum_next(e, &c, err)) == 1) {
		struct item *it = calloc(1, sizeof(*it));
		if (!it)
			return ft_error(err, FT_EFAIL, "out of memory");
		st->enumerated = ft_enum_reached(e);
		ft_trial_init(&it->t);
		if (!ft_feasible_model(cfg->sp, cfg->arch, &c, &it->t)) {
			if (!stream && cfg->compile)
				free(it);	/* the second pass emits it */
			else
				finish(r, it);
			continue;
		}
		st->feasible++;
		if (!cfg->compile) {
			/* check without --compile: accepted by the model (its status), nothing more */
			finish(r, it);
			continue;
		}
		if (cfg->skip && cfg->skip(cfg->ctx, &it->t)) {
			st->skipped++;
			free(it);
			continue;
		}
		if (!stream) {
			if (hold(r, it, err))
				return -1;
		} else if (cfg->budget_evals >= 0 && r->sent >= cfg->budget_evals) {
			free(it);
		} else {
			send(r, it);
			if (r->ndeferred >= DEFER_BOUND)
				defer_settle(r);
		}
		drain(r, 0);
	}
	st->enumerated = ft_enum_reached(e);
	return should_drop(r) ? 0 : rc;
}

/* What a final row's reason adds when its final was one sweep. */
#define SWEPT ", one sample of each in turn"

/* A final row's log: each round's median of the finalist and its place in
 * the round ("round 1: 4 of 16, median 193.1 us"), one line a round it
 * ran; NULL when out of memory (the row is stored without it). */
static char *final_log(const struct ft_interleave_trace *tr, int i)
{
	size_t size = (size_t)(FT_RACE_ROUNDS_MAX + FT_RACE_CLOSE_ROUNDS_MAX) * 64 + 1, at = 0;
	char *log = malloc(size);

	if (!log)
		return NULL;
	log[0] = 0;
	for (int r = 0; r < FT_INTERLEAVE_MAX_ROUNDS; r++) {
		if (tr->place[i][r] < 0 || !isfinite(tr->median_us[i][r]))
			continue;
		at += (size_t)snprintf(log + at, size - at, "%sround %d: %d of %d, median %.1f us",
				       at ? "\n" : "", r + 1, tr->place[i][r] + 1, tr->ran[r],
				       tr->median_us[i][r]);
		if (at >= size)
			break;
	}
	return log;
}

/* The race's final: the finalists timed again, interleaved, on the first GPU
 * (one GPU, so that they compare); each one's pooled result is emitted as a
 * new trial of its config, its log saying what each round measured of it
 * and where in the round it ran. Not run with a runner that evaluates no job (a
 * recording: replayed times do not change when taken again). 0, or -1 with
 * err. */
static int run_final(struct run *r, struct ft_err *err)
{
	const struct ft_pipeline_cfg *cfg = r->cfg;
	const struct ft_trial *fin;
	int n = ft_race_finalists(r->race, &fin), rc = 0;
	struct runner x = { r, r->evaluates ? r->eargs[0].x : NULL, 1 };
	struct ft_job *jobs;
	struct ft_job_result *out;
	struct ft_trial *ts;
	struct ft_interleave_trace *trace;
	int rounds[FT_RACE_MAX_FINALISTS] = { 0 }, close, nr = ft_race_rounds(r->race), by_rounds;
	double t0 = ft_mono_ms(), shared = 0, held;
	char heat[48] = "";

	if (n < 2 || !x.x || atomic_load(&r->stop) || ft_interrupted())
		return 0;
	jobs = calloc((size_t)n, sizeof(*jobs));
	out = calloc((size_t)n, sizeof(*out));
	ts = calloc((size_t)n, sizeof(*ts));
	trace = calloc(1, sizeof(*trace));
	if (!jobs || !out || !ts || !trace) {
		rc = ft_error(err, FT_EFAIL, "out of memory for the race's final");
		goto done;
	}
	for (int i = 0; i < n && !rc; i++) {
		ts[i] = fin[i];
		if (ft_pipeline_job(r->cfg, &ts[i], &jobs[i], err)) {
			ft_err_prefix(err, "the race's final");
			rc = -1;
		}
	}
	if (rc)
		goto done;
	/* a heated final's rows say so (race.h FT_RACE_HEAT_MS) */
	if (ft_race_heat_ms(r->race) > 0)
		snprintf(heat, sizeof(heat), ", the GPU heated %.0f ms first", ft_race_heat_ms(r->race));
	/* the GPU is the final's through its rounds: another unit's job on it
	 * (--units-per-gpu) would land between two finalists' samples */
	held = ft_runner_hold(x.x, 1);
	rc = ft_race_final_sweep(r->race, jobs, n, run_sweep, &x, out, rounds, trace, err);
	by_rounds = rc == 1;
	if (by_rounds)
		rc = ft_race_final(r->race, jobs, n, run_job, &x, out, rounds, trace, err);
	ft_runner_hold(x.x, 0);
	if (rc)
		goto done;
	out[0].phase_ms[FT_PH_SHARED] += held;	/* the wait for the hold: the first job's */
	close = trace->ran[nr];	/* the close finalists: those of the first round alone */
	for (int i = 0; i < n && !rc; i++) {
		shared += out[i].phase_ms[FT_PH_SHARED];
		take_result(&ts[i], &out[i], x.x);
		/* a row of the final says so: queries and tests tell it from the first one */
		if (ts[i].status == FT_ST_OK && rounds[i] > nr)
			snprintf(ts[i].reason, sizeof(ts[i].reason),
				 "%s %d samples over %d interleaved rounds of %d finalists, then %d rounds of the %d within %.3gx of the fastest%s",
				 FT_RACE_FINAL_REASON, ts[i].samples, nr, n, rounds[i] - nr, close, FT_RACE_CLOSE_WITHIN,
				 heat);
		else if (ts[i].status == FT_ST_OK && rounds[i] == nr)
			snprintf(ts[i].reason, sizeof(ts[i].reason),
				 "%s %d samples over %d interleaved rounds of %d finalists%s%s",
				 FT_RACE_FINAL_REASON, ts[i].samples, nr, n, by_rounds ? "" : SWEPT, heat);
		else if (ts[i].status == FT_ST_OK) {
			/* left after round 1: its samples are that round's only, while
			 * the others' pool the later rounds too, at whatever clock the
			 * GPU drifted to (7 % slower in a heated final on an H200,
			 * docs/timing.md): its time does not compare with theirs, so
			 * it is cut from the final and cannot be the best */
			ts[i].status = FT_ST_CUT;
			snprintf(ts[i].reason, sizeof(ts[i].reason),
				 "%s %d samples over %d of %d interleaved rounds of %d finalists%s%s (left over %.3gx the fastest of round 1)",
				 FT_RACE_FINAL_REASON, ts[i].samples, rounds[i], nr, n, by_rounds ? "" : SWEPT, heat,
				 FT_RACE_FINAL_CUT);
		}
		if (ts[i].status == FT_ST_OK || ts[i].status == FT_ST_CUT)
			ts[i].log = final_log(trace, i);
		add_phases(r, 0, &out[i]);
		if ((cfg->emit_final ? cfg->emit_final : cfg->emit)(cfg->ctx, &ts[i]))
			rc = ft_error(err, FT_EFAIL, "stopped: storing a result failed");
		free(ts[i].log);
		ts[i].log = NULL;
	}
	pthread_mutex_lock(&r->stat_m);
	r->gpu_ms += ft_mono_ms() - t0 - shared;	/* busy: not while waiting for the GPU */
	pthread_mutex_unlock(&r->stat_m);
done:
	free(jobs);
	free(out);
	free(ts);
	free(trace);
	return rc;
}

/* FATUNE_ENUM=full: the first pass of an ordered strategy goes through every
 * candidate, as before 2026-11-29 (kept to time one against the other) */
static int full_first_pass(void)
{
	const char *v = getenv("FATUNE_ENUM");

	return v && !strcmp(v, "full");
}

int ft_pipeline_run(const struct ft_pipeline_cfg *cfg, struct ft_pipeline_stats *st,
		    struct ft_err *err)
{
	struct run r;
	struct ft_enum *e = NULL;
	int ret = -1, rc, stream = !cfg->strategy || cfg->strategy->feed == FT_FEED_STREAM;

	memset(st, 0, sizeof(*st));
	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.t0 = ft_mono_ms();
	r.first_compile_ms = -1;
	r.first_send_ms = -1;
	r.deadline = cfg->budget_seconds > 0 ? r.t0 + cfg->budget_seconds * 1e3 : 0;
	q_init(&r.compile_q);
	q_init(&r.eval_q);
	q_init(&r.done_q);
	pthread_mutex_init(&r.stat_m, NULL);
	pthread_mutex_init(&r.inflight_m, NULL);
	r.evaluates = 1;
	for (int i = 0; i < cfg->nrunners; i++)
		r.evaluates = r.evaluates && ft_runner_evaluates(cfg->runners[i]);
	r.evaluates = r.evaluates && cfg->nrunners > 0;
	r.compiles = cfg->nrunners == 0 || ft_runner_info(cfg->runners[0])->needs_cubin;
	if (cfg->race.on && cfg->nrunners > 0 && !cfg->fixed) {
		if (!(r.race = ft_race_new(&cfg->race))) {
			ft_error(err, FT_EFAIL, "out of memory starting the race");
			goto out_nothreads;
		}
		stream = 0; /* ordered by the model (feed_ordered) */
	}

	/* an ordered strategy that compiles holds the feasible candidates first
	 * (the constraints skip the rest in the engine) and has the rejections
	 * emitted by a second pass while it waits for results */
	if ((!stream && cfg->compile && !cfg->fixed && !full_first_pass()
		     ? ft_enum_open_passing(&e, cfg->sp, cfg->shape, cfg->arch, err)
		     : ft_enum_open(&e, cfg->sp, cfg->shape, cfg->arch, cfg->fixed, err)))
		goto out_nothreads;
	/* a cache that cannot take a CUBIN fails the run before any candidate */
	if (cfg->compile && r.compiles && ft_cache_check(err))
		goto out_nothreads;
	if (start_threads(&r, cfg->jobs, err)) {
		join_threads(&r);
		goto out_nothreads;
	}
	rc = enumerate(&r, e, stream, st, err);
	r.rejects_due = rc == 0 && !stream && cfg->compile && !ft_interrupted();
	if (rc == 0 && !stream && !ft_interrupted()) {
		rc = feed_ordered(&r, err);
	} else if (!stream) {
		/* stopped while enumerating (error or interrupt): nothing held was sent */
		for (long long i = 0; i < r.nheld; i++)
			free(r.held[i]);
	}
	r.nheld = 0;
	defer_settle(&r);
	q_close(&r.compile_q);
	while (r.received < r.sent)
		drain(&r, 1);
	while (r.rejects_due)
		rejects_step(&r, 1 << 20);
	join_threads(&r);
	drain(&r, 0);
	st->selected = r.sent;
	st->skipped += r.elsewhere;
	if (rc < 0)
		goto out;
	if (r.fatal.status) {
		*err = r.fatal;
		goto out;
	}
	if (ft_interrupted()) {
		ft_interrupt_error(err, "finished trials are stored; run the same command to resume");
		goto out;
	}
	if (r.race && run_final(&r, err))
		goto out;
	ret = 0;
out:
	st->compiled = atomic_load(&r.compiled);
	st->cache_hits = atomic_load(&r.cache_hits);
	st->evaluated = atomic_load(&r.evaluated);
	st->compile_ms_total = r.compile_ms;
	st->compile_wall_ms = r.compile_t1 > r.compile_t0 ? r.compile_t1 - r.compile_t0 : 0;
	st->gpu_busy_ms = r.gpu_ms;
	st->gpu_wait_ms = r.gpu_wait_ms;
	st->verify_ms = r.verify_ms;
	st->timing_ms = r.timing_ms;
	memcpy(st->phase_ms, r.phase_ms, sizeof(st->phase_ms));
	st->loaded_ahead = r.loaded_ahead;
	st->first_compile_ms = r.first_compile_ms;
	st->first_send_ms = r.first_send_ms;
	ft_race_stats(r.race, &st->race);
out_nothreads:
	st->wall_ms = ft_mono_ms() - r.t0;
	ft_race_free(r.race);
	free(r.held);
	ft_guide_free(r.guide);
	ft_enum_close(e);
	ft_enum_close(r.rejects);
	q_destroy(&r.compile_q);
	q_destroy(&r.eval_q);
	q_destroy(&r.done_q);
	pthread_mutex_destroy(&r.stat_m);
	pthread_mutex_destroy(&r.inflight_m);
	return ret;
}
