/* cmd_common.c - what every subcommand shares: reporting errors, parsing options. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/target.h"

int ft_report(const struct ft_err *err)
{
	const char *msg = err->msg[0] ? err->msg : "unknown failure";

	/* messages name their command as "fatune CMD: ..."; one prefix is enough */
	if (!strncmp(msg, "fatune ", 7))
		msg += 7;
	fprintf(stderr, "fatune: error: %s\n", msg);
	return err->status && err->status != FT_EINTR ? err->status : FT_EFAIL;
}

void ft_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fatune: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ft_cmd_parse(const struct ft_command_help *h, const struct ft_option *opts, int argc,
		 char **argv, int max_pos, int *npos)
{
	struct ft_err err = { 0 };
	int rc = ft_parse_options(h, opts, argc, argv, max_pos, npos, &err);

	if (rc == 1)
		return FT_OK;
	if (rc < 0)
		return ft_report(&err);
	return -1;
}

int ft_cmd_arch(const char *cmd, const char *arch_opt, const struct ft_device_info *dev,
		const struct ft_arch **out, struct ft_err *err)
{
	if (arch_opt) {
		*out = ft_arch_find(arch_opt, err);
		return *out ? 0 : -1;
	}
	if (dev && dev->present) {
		*out = ft_arch_for_cc(dev->lim.cc);
		if (*out)
			return 0;
		return ft_error(err, FT_EINPUT,
				"fatune %s: the GPU '%s' is sm_%d, which fatune has no limits for: pass --arch",
				cmd, dev->lim.name, dev->lim.cc);
	}
	return ft_error(err, FT_EINPUT, "fatune %s: no GPU to take the arch from (%s): pass --arch sm_XX",
			cmd, dev && dev->why_not[0] ? dev->why_not : "not probed");
}

/* Seconds to wait for a new worker: loading the driver, creating a context and
 * compiling the reference kernel with NVRTC take a few seconds on a cold machine. */
#define WORKER_START_MS 60000

static int start_one(int ordinal, struct ft_runner **w, struct ft_device_info *dev,
		     struct ft_err *err);

int ft_cmd_runner(struct ft_runner **r, struct ft_device_info *dev, struct ft_err *err)
{
	if (start_one(-1, r, dev, err))
		return -1;
	if (!dev->present) {
		ft_runner_close(*r);
		*r = NULL;
	}
	return 0;
}

int ft_ncores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)n;
}

int ft_cmd_timing(const char *cmd, const char *timing, struct ft_err *err)
{
	if (strcmp(timing, "warm") && strcmp(timing, "cold"))
		return ft_error(err, FT_EINPUT, "fatune %s: bad --timing '%s': use warm or cold", cmd,
				timing);
	return 0;
}

int ft_cmd_budget(const char *cmd, const char *text, long long *n, double *seconds,
		  struct ft_err *err)
{
	char *end;
	double v;

	*n = -1;
	*seconds = 0;
	if (!text)
		return 0;
	v = strtod(text, &end);
	if (end == text || !(v > 0) || v > 1e12 || (*end && strcmp(end, "s")) ||
	    (!*end && v != (long long)v))
		return ft_error(err, FT_EINPUT,
				"fatune %s: bad --budget '%s': use a count (40) or seconds (30s)", cmd,
				text);
	if (*end)
		*seconds = v;
	else
		*n = (long long)v;
	return 0;
}

/* "all" -> -2, "0,2" -> {0, 2}, NULL -> {-1}. */
static int parse_devices(const char *cmd, const char *text, int *list, int *n, struct ft_err *err)
{
	const char *p = text;

	*n = 0;
	if (!text) {
		list[(*n)++] = -1;
		return 0;
	}
	if (!strcmp(text, "all")) {
		list[(*n)++] = -2;
		return 0;
	}
	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > 1023 || (*end && *end != ',') || *n == FT_MAX_RUNNERS)
			return ft_error(err, FT_EINPUT,
					"fatune %s: bad --devices '%s': use all, or GPU ordinals such as 0,1 (at most %d)",
					cmd, text, FT_MAX_RUNNERS);
		for (int i = 0; i < *n; i++)
			if (list[i] == v)
				return ft_error(err, FT_EINPUT,
						"fatune %s: --devices '%s' names GPU %ld twice", cmd,
						text, v);
		list[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return ft_error(err, FT_EINPUT, "fatune %s: bad --devices '%s': a trailing comma",
					cmd, text);
	}
	return 0;
}

/* Opens the gpu runner on GPU `ordinal`; *dev is what its worker found. */
static int start_one(int ordinal, struct ft_runner **w, struct ft_device_info *dev,
		     struct ft_err *err)
{
	char ref[4096];
	struct ft_runner_cfg cfg = { .device = ordinal, .reference_path = ref,
				     .start_timeout_ms = WORKER_START_MS };

	snprintf(ref, sizeof(ref), "%s/kernel_templates/reference.cu", ft_data_dir());
	memset(dev, 0, sizeof(*dev));
	*w = NULL;
	if (ft_runner_open(w, "gpu", &cfg, err))
		return -1;
	*dev = ft_runner_info(*w)->dev;
	return 0;
}

struct starting {
	int ordinal;
	struct ft_runner *w;
	struct ft_device_info dev;
	struct ft_err err;
	int rc;
};

static void *start_thread(void *arg)
{
	struct starting *s = arg;

	s->rc = start_one(s->ordinal, &s->w, &s->dev, &s->err);
	return NULL;
}

/* Opens a gpu runner on each of ordinals[0..n) at once (a worker's start, the
 * driver's and the context's, takes a few hundred ms; n of them one after
 * another held a two-GPU campaign's start by a second), into ws[] and devs[]
 * in that order. All or nothing: -1 with the first failure's err in list order,
 * every runner that did start closed. */
static int start_many(const int *ordinals, int n, struct ft_runner **ws, struct ft_device_info *devs,
		      struct ft_err *err)
{
	struct starting s[FT_MAX_RUNNERS];
	pthread_t t[FT_MAX_RUNNERS];
	int started[FT_MAX_RUNNERS] = { 0 }, failed = -1;

	if (n > FT_MAX_RUNNERS)
		return ft_error(err, FT_EFAIL, "%d workers to start: at most %d", n, FT_MAX_RUNNERS);
	for (int i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].ordinal = ordinals[i];
		/* no thread: started here, in this thread */
		if (pthread_create(&t[i], NULL, start_thread, &s[i]))
			start_thread(&s[i]);
		else
			started[i] = 1;
	}
	for (int i = 0; i < n; i++) {
		if (started[i])
			pthread_join(t[i], NULL);
		if (s[i].rc && failed < 0)
			failed = i;
	}
	for (int i = 0; i < n; i++) {
		ws[i] = s[i].w;
		devs[i] = s[i].dev;
		if (failed >= 0) {
			ft_runner_close(s[i].w);
			ws[i] = NULL;
		}
	}
	if (failed >= 0) {
		*err = s[failed].err;
		return -1;
	}
	return 0;
}

/* Adds an opened gpu runner to the group of its model (or to unused). */
static void place(struct ft_gpus *g, struct ft_runner *w, const struct ft_device_info *dev)
{
	struct ft_gpu_group *grp = NULL;

	if (dev->lim.cc != g->arch->cc) {
		g->unused[g->nunused++] = w;
		return;
	}
	for (int i = 0; i < g->ngroups; i++)
		if (!strcmp(g->groups[i].name, dev->lim.name))
			grp = &g->groups[i];
	if (!grp) {
		struct ft_err warn = { 0 };
		grp = &g->groups[g->ngroups++];
		memset(grp, 0, sizeof(*grp));
		snprintf(grp->name, sizeof(grp->name), "%s", dev->lim.name);
		snprintf(grp->driver, sizeof(grp->driver), "%d", dev->driver_version);
		grp->sm_count = dev->lim.sm_count;
		if (ft_arch_check_device(g->arch, &dev->lim, &warn))
			ft_warn("%s; the device's own limits apply", warn.msg);
		/* what runs here is bound by what the driver reports */
		ft_arch_from_device(g->arch, &dev->lim, &grp->arch);
	}
	grp->runners[grp->nrunners++] = w;
}

/* When a worker of ws found no GPU: closes all n and returns the first such
 * one's index; else -1 (all kept). */
static int close_if_absent(struct ft_runner **ws, const struct ft_device_info *devs, int n)
{
	for (int i = 0; i < n; i++)
		if (!devs[i].present) {
			for (int k = 0; k < n; k++)
				ft_runner_close(ws[k]);
			return i;
		}
	return -1;
}

int ft_cmd_gpus(const char *cmd, const char *devices, const char *arch_opt, struct ft_gpus *g,
		struct ft_err *err)
{
	int list[FT_MAX_RUNNERS], n, count, absent;
	struct ft_device_info first, devs[FT_MAX_RUNNERS];
	struct ft_runner *w = NULL, *ws[FT_MAX_RUNNERS];

	memset(g, 0, sizeof(*g));
	if (parse_devices(cmd, devices, list, &n, err))
		return -1;
	if (start_one(list[0] == -2 ? 0 : list[0], &w, &first, err))
		return -1;
	if (ft_cmd_arch(cmd, arch_opt, &first, &g->arch, err)) {
		ft_runner_close(w);
		return -1;
	}
	if (!first.present) {
		fprintf(stderr, "fatune: no GPU here (%s): running the feasibility part (model check and NVRTC compile) for %s; timing needs an %s device\n",
			first.why_not, g->arch->name, g->arch->name);
		ft_runner_close(w);
		return 0;
	}
	place(g, w, &first);
	count = first.lim.device_count;
	if (list[0] == -2) {
		n = 0;
		for (int i = 1; i < count && n < FT_MAX_RUNNERS - 1; i++)
			list[n++] = i;
	} else {
		/* the first is started; the rest follow */
		memmove(list, list + 1, (size_t)(--n) * sizeof(*list));
	}
	if (start_many(list, n, ws, devs, err)) {
		ft_cmd_gpus_stop(g);
		return -1;
	}
	if ((absent = close_if_absent(ws, devs, n)) >= 0) {
		ft_cmd_gpus_stop(g);
		return ft_error(err, FT_EINPUT, "fatune %s: GPU %d cannot be used: %s", cmd, list[absent],
				devs[absent].why_not);
	}
	for (int i = 0; i < n; i++)
		place(g, ws[i], &devs[i]);
	if (!g->ngroups)
		fprintf(stderr, "fatune: the GPU here is '%s' (sm_%d), not %s: running the feasibility part for %s only; timing needs an %s device\n",
			first.lim.name, first.lim.cc, g->arch->name, g->arch->name, g->arch->name);
	else if (g->nunused)
		fprintf(stderr, "fatune: %d GPU(s) here are not %s and time nothing\n", g->nunused,
			g->arch->name);
	return 0;
}

int ft_cmd_gpus_share(struct ft_gpus *g, int per_gpu, struct ft_err *err)
{
	struct ft_gpu_group *grp = &g->groups[0];
	struct ft_device_info devs[FT_MAX_RUNNERS];
	struct ft_runner *ws[FT_MAX_RUNNERS];
	int ngpus = grp->nrunners, list[FT_MAX_RUNNERS] = { 0 }, n = 0, absent;

	if (g->ngroups != 1)
		return 0;
	for (int k = 1; k < per_gpu; k++)
		for (int i = 0; i < ngpus && grp->nrunners + n < FT_MAX_RUNNERS; i++)
			list[n++] = ft_runner_info(grp->runners[i])->device_index;
	if (start_many(list, n, ws, devs, err))
		return -1;
	if ((absent = close_if_absent(ws, devs, n)) >= 0)
		return ft_error(err, FT_EFAIL, "GPU %d took one worker but not a second (%s): pass --units-per-gpu 1",
				list[absent], devs[absent].why_not);
	for (int i = 0; i < n; i++)
		grp->runners[grp->nrunners++] = ws[i];
	return 0;
}

static void gpus_end(struct ft_gpus *g, void (*end)(struct ft_runner *))
{
	for (int i = 0; i < g->ngroups; i++)
		for (int k = 0; k < g->groups[i].nrunners; k++)
			end(g->groups[i].runners[k]);
	for (int i = 0; i < g->nunused; i++)
		end(g->unused[i]);
	g->ngroups = g->nunused = 0;
}

void ft_cmd_gpus_stop(struct ft_gpus *g)
{
	gpus_end(g, ft_runner_close);
}

void ft_cmd_gpus_leave(struct ft_gpus *g)
{
	gpus_end(g, ft_runner_leave);
}
