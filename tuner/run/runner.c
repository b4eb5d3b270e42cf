/* runner.c - the runner table and the calls through it (see runner.h). */
#include "run/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line per runner; each lives in its own file and defines ft_runner_<name>
 * (every line ends in a backslash: adding a runner adds one line). */
#define FT_RUNNERS(X) \
	X(gpu)		/* run/runner_gpu.c: a worker process on one GPU */ \
	X(replay)	/* search/replay.c: verdicts recorded in a database */ \
	X(fake)		/* run/runner_fake.c: tests' made-up times, one config fast but wrong */ \
	/* end of the table */

#define FT_RUNNER_DECLARE(n) extern const struct ft_runner_ops ft_runner_##n;
#define FT_RUNNER_ENTRY(n) &ft_runner_##n,
FT_RUNNERS(FT_RUNNER_DECLARE)
static const struct ft_runner_ops *const runners[] = { FT_RUNNERS(FT_RUNNER_ENTRY) };
#define NRUNNERS ((int)(sizeof(runners) / sizeof(runners[0])))

struct ft_runner {
	const struct ft_runner_ops *ops;
	void *ctx;
	struct ft_runner_info info;
};

const struct ft_runner_ops *ft_runner_find(const char *name, struct ft_err *err)
{
	char names[256];
	int n = 0;

	for (int i = 0; i < NRUNNERS; i++)
		if (!strcmp(runners[i]->name, name))
			return runners[i];
	names[0] = '\0';
	for (int i = 0; i < NRUNNERS; i++)
		n += snprintf(names + n, sizeof(names) - (size_t)n, "%s%s", i ? ", " : "",
			      runners[i]->name);
	ft_error(err, FT_EINPUT, "unknown runner '%.64s': use one of %s", name, names);
	return NULL;
}

int ft_runner_open(struct ft_runner **out, const char *name, const struct ft_runner_cfg *cfg,
		   struct ft_err *err)
{
	const char *colon = strchr(name, ':');
	char base[64];
	struct ft_runner_cfg c = *cfg;
	struct ft_runner *r;

	*out = NULL;
	snprintf(base, sizeof(base), "%.*s", colon ? (int)(colon - name) : (int)strlen(name), name);
	if (colon && !c.spec)
		c.spec = colon + 1;
	r = calloc(1, sizeof(*r));
	if (!r)
		return ft_error(err, FT_EFAIL, "out of memory opening a runner");
	if (!(r->ops = ft_runner_find(base, err))) {
		free(r);
		return -1;
	}
	r->info.name = r->ops->name;
	r->info.device_index = -1;
	r->info.search_tag = r->ops->name;
	if (r->ops->open(&r->ctx, &c, &r->info, err)) {
		free(r);
		return -1;
	}
	*out = r;
	return 0;
}

const struct ft_runner_info *ft_runner_info(const struct ft_runner *r)
{
	return &r->info;
}

int ft_runner_answer(struct ft_runner *r, struct ft_trial *t)
{
	return r && r->ops->answer ? r->ops->answer(r->ctx, t) : 0;
}

int ft_runner_evaluates(const struct ft_runner *r)
{
	return r && r->ops->evaluate;
}

int ft_runner_evaluate(struct ft_runner *r, const struct ft_job *job, int timeout_ms,
		       struct ft_job_result *res, struct ft_err *err)
{
	ft_job_result_init(res);
	if (!ft_runner_evaluates(r))
		return ft_error(err, FT_EFAIL, "the %s runner evaluates no jobs", r ? r->info.name : "(none)");
	return r->ops->evaluate(r->ctx, job, timeout_ms, res, err);
}

/* ft_sweep_by_jobs's job: the runner's evaluate under the sweep's watchdog */
struct by_jobs {
	struct ft_runner *r;
	int timeout_ms;
};

static int by_jobs_run(void *ctx, const struct ft_job *job, struct ft_job_result *res,
		       struct ft_err *err)
{
	struct by_jobs *b = ctx;

	return ft_runner_evaluate(b->r, job, b->timeout_ms, res, err);
}

int ft_runner_sweep(struct ft_runner *r, const struct ft_sweep *g, int timeout_ms,
		    struct ft_sweep_result *out, struct ft_err *err)
{
	struct by_jobs b = { r, timeout_ms };

	if (!ft_runner_evaluates(r))
		return ft_error(err, FT_EFAIL, "the %s runner evaluates no jobs", r ? r->info.name : "(none)");
	if (r->ops->sweep)
		return r->ops->sweep(r->ctx, g, timeout_ms, out, err);
	return ft_sweep_by_jobs(g, by_jobs_run, &b, out, err);
}

double ft_runner_hold(struct ft_runner *r, int on)
{
	return r && r->ops->hold ? r->ops->hold(r->ctx, on) : 0;
}

void ft_runner_close(struct ft_runner *r)
{
	if (!r)
		return;
	if (r->ops->close)
		r->ops->close(r->ctx);
	free(r);
}

void ft_runner_leave(struct ft_runner *r)
{
	if (!r)
		return;
	if (r->ops->leave)
		r->ops->leave(r->ctx);
	else if (r->ops->close)
		r->ops->close(r->ctx);
	free(r);
}

int ft_runners_devices(struct ft_runner *const *rs, int n)
{
	int count = 0;

	for (int i = 0; i < n; i++) {
		int d = rs[i]->info.device_index, seen = 0;

		for (int j = 0; j < i && d >= 0 && !seen; j++)
			seen = rs[j]->info.device_index == d;
		count += !seen;
	}
	return count;
}
