/* progress.c - the progress line and the plain per-candidate lines (see progress.h). */
#include "base/clock.h"
#include "ui/progress.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Redraw interval on a terminal: 10 Hz is smooth and costs nothing. */
#define REDRAW_MS 100.0
#define BAR 20

/* Units searched side by side (campaign_run.h) each have a display of their
 * own: their lines go to stderr one at a time. */
static pthread_mutex_t out_m = PTHREAD_MUTEX_INITIALIZER;

void ft_progress_init(struct ft_progress *p, enum ft_progress_mode mode, long long total)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->total = total;
	p->best_us = NAN;
	p->t0_ms = ft_mono_ms();
}

void ft_progress_unit(struct ft_progress *p, const char *label, int unit, int units, int part,
		      int parts, long long total)
{
	enum ft_progress_mode mode = p->mode;
	double t0 = (unit == 0 && part == 0) || !p->campaign_t0_ms ? ft_mono_ms() : p->campaign_t0_ms;

	ft_progress_init(p, mode, total);
	snprintf(p->label, sizeof(p->label), "%s", label);
	p->unit = unit;
	p->units = units;
	p->part = part;
	p->parts = parts > 0 ? parts : 1;
	p->campaign_t0_ms = t0;
}

/* The fraction of the search done, by the candidates that cost time: a
 * rejection by the model costs nothing, and they come first (enumeration
 * outruns compiling), so the work is what is left after them. */
static double search_fraction(const struct ft_progress *p)
{
	long long rejected = p->counts[FT_ST_REJECTED_CONSTRAINT] + p->counts[FT_ST_REJECTED_SMEM];

	if (p->total <= 0)
		return 0;
	if (p->total - rejected <= 0)
		return p->done >= p->total ? 1 : 0;
	return (double)(p->done - rejected) / (double)(p->total - rejected);
}

double ft_progress_eta_s(const struct ft_progress *p, double now)
{
	double frac = search_fraction(p), done;

	if (p->units * p->parts > 1) {
		done = (p->unit + (p->part + frac) / p->parts) / p->units;
		return done > 0 && done < 1 ? (now - p->campaign_t0_ms) / 1e3 / done * (1 - done) : -1;
	}
	return frac > 0 && frac < 1 ? (now - p->t0_ms) / 1e3 / frac * (1 - frac) : -1;
}

static void draw(struct ft_progress *p, int force)
{
	double now = ft_mono_ms(), eta;
	long long rejected = p->counts[FT_ST_REJECTED_CONSTRAINT] + p->counts[FT_ST_REJECTED_SMEM];
	long long failed = p->counts[FT_ST_COMPILE_FAILED] + p->counts[FT_ST_SPILLS] +
			   p->counts[FT_ST_WRONG_RESULT] + p->counts[FT_ST_CRASHED] +
			   p->counts[FT_ST_TIMEOUT];
	int fill = p->total > 0 ? (int)(BAR * p->done / p->total) : 0;
	char bar[BAR + 1], best[FT_CONFIG_MAX + 64] = "";

	if (!force && now - p->last_draw_ms < REDRAW_MS)
		return;
	p->last_draw_ms = now;
	for (int i = 0; i < BAR; i++)
		bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
	bar[BAR] = '\0';
	if (!isnan(p->best_us))
		snprintf(best, sizeof(best), "  best %.2f us (%.60s)", p->best_us, p->best_config);
	fprintf(stderr, "\r\033[K%s%s%s[%s] %lld/%lld  ok %lld  compiled %lld  rejected %lld  failed %lld",
		p->label[0] ? "[" : "", p->label, p->label[0] ? "] " : "", bar, p->done, p->total,
		p->counts[FT_ST_OK], p->counts[FT_ST_COMPILED], rejected, failed);
	if (p->counts[FT_ST_CUT])
		fprintf(stderr, "  cut %lld", p->counts[FT_ST_CUT]);
	fprintf(stderr, "%s", best);
	if (p->phases[0])
		fprintf(stderr, "  %s", p->phases);
	else if ((eta = ft_progress_eta_s(p, now)) >= 0)
		fprintf(stderr, "  ETA %.0fs", eta);
	fflush(stderr);
	p->drawn = 1;
}

void ft_progress_add(struct ft_progress *p, const struct ft_trial *t, int skipped)
{
	p->done++;
	p->counts[t->status]++;
	if (t->status == FT_ST_OK && (isnan(p->best_us) || t->t_median_us < p->best_us)) {
		p->best_us = t->t_median_us;
		snprintf(p->best_config, sizeof(p->best_config), "%s", t->config);
	}
	pthread_mutex_lock(&out_m);
	if (p->mode == FT_PROGRESS_TTY) {
		draw(p, p->done == p->total);
	} else if (p->mode == FT_PROGRESS_LINES && !skipped &&
		   t->status != FT_ST_REJECTED_CONSTRAINT && t->status != FT_ST_REJECTED_SMEM) {
		const char *sep = p->label[0] ? " " : "";
		if (t->status == FT_ST_OK)
			fprintf(stderr, "[%s%s%lld/%lld] ok %.2f us (err %.1e)  %s\n", p->label, sep,
				p->done, p->total, t->t_median_us, t->rel_err, t->config);
		else
			fprintf(stderr, "[%s%s%lld/%lld] %s  %s%s%s\n", p->label, sep, p->done, p->total,
				ft_status_name(t->status), t->config, t->reason[0] ? ": " : "", t->reason);
	}
	pthread_mutex_unlock(&out_m);
}

void ft_progress_phases(struct ft_progress *p, double compile_wall_ms, double gpu_busy_ms,
			double gpu_wait_ms, double verify_ms, double timing_ms)
{
	snprintf(p->phases, sizeof(p->phases),
		 "compile %.1fs  GPU busy %.1fs  waiting %.1fs  verify %.1fs  timing %.1fs",
		 compile_wall_ms / 1e3, gpu_busy_ms / 1e3, gpu_wait_ms / 1e3, verify_ms / 1e3,
		 timing_ms / 1e3);
	pthread_mutex_lock(&out_m);
	if (p->mode == FT_PROGRESS_LINES)
		fprintf(stderr, "[%s%sdone] %s\n", p->label, p->label[0] ? " " : "", p->phases);
	pthread_mutex_unlock(&out_m);
}

void ft_progress_end(struct ft_progress *p)
{
	pthread_mutex_lock(&out_m);
	if (p->mode == FT_PROGRESS_TTY && p->drawn) {
		draw(p, 1);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&out_m);
}
