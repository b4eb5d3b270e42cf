/* progress.h - what a long search shows while it runs.
 *
 * On a terminal: one line on stderr, redrawn at most 10 times a second:
 *   [=====>      ] 57/140  ok 41  rejected 12  failed 4  best 5.9 us (CONFIG)  ETA 6s
 * Not on a terminal: a plain line per candidate that reached the compiler or
 * the GPU (rejections by model are only counted), so logs stay readable.
 * Quiet: nothing.
 *
 * A campaign (several shapes) shows one display for the whole of it: each
 * shape is a unit, its line starts with "[unit/units SHAPE]", and the ETA is
 * the campaign's: the time since the campaign started over the fraction of
 * it done, times the fraction left. Units side by side (campaign_run.h) have
 * a display each; their lines take turns on stderr (one at a time), and
 * `unit` is then the number of units ended before this one started. A unit searched in several parts (spaces,
 * GPU models) counts each part as an equal share of the unit, and the part
 * in progress by its candidates done, less the rejections by the model
 * (which cost nothing and come first). A budget or an early stop ends a
 * search before its last candidate: there the ETA is an upper bound.
 */
#ifndef FT_PROGRESS_H
#define FT_PROGRESS_H

#include "base/trial.h"

enum ft_progress_mode { FT_PROGRESS_QUIET, FT_PROGRESS_TTY, FT_PROGRESS_LINES };

struct ft_progress {
	enum ft_progress_mode mode;
	long long total;		/* candidates in the space */
	long long done;			/* finished, incl. skipped */
	long long counts[FT_ST_COUNT];
	double best_us;			/* NAN until an ok trial */
	char best_config[FT_CONFIG_MAX];
	double t0_ms, last_draw_ms;
	int drawn;			/* a TTY line is on screen */
	char label[128];		/* "3/24 1x8x512x64 fp16 causal" in a campaign, else "" */
	int unit, units;		/* 0-based unit and the campaign's units (0: no campaign) */
	int part, parts;		/* 0-based search within the unit, and how many */
	double campaign_t0_ms;
	char phases[160];		/* the finished search's time per phase, "" until known */
};

void ft_progress_init(struct ft_progress *p, enum ft_progress_mode mode, long long total);

/* Starts search `part` of `parts` of unit `unit` of `units` of a campaign (a
 * shape): keeps the campaign's start time (set at part 0 of unit 0), resets
 * the counts for the search's `total` candidates. */
void ft_progress_unit(struct ft_progress *p, const char *label, int unit, int units, int part,
		      int parts, long long total);

/* Seconds left at time now (ft_mono_ms), of the search or, in a campaign, of
 * the campaign; -1 when nothing is done yet to estimate from. */
double ft_progress_eta_s(const struct ft_progress *p, double now);

/* Counts a finished trial (skipped: already done in an earlier run) and redraws. */
void ft_progress_add(struct ft_progress *p, const struct ft_trial *t, int skipped);

/* Where the finished search's time went, in ms (search.h's pipeline stats):
 * compiling (wall, first start to last end), the GPUs busy with jobs,
 * waiting for a compiled candidate, verifying and timing. The TTY line ends
 * with it; a log gets it as one line. Call before ft_progress_end. */
void ft_progress_phases(struct ft_progress *p, double compile_wall_ms, double gpu_busy_ms,
			double gpu_wait_ms, double verify_ms, double timing_ms);

/* Clears the TTY line (before printing the summary). */
void ft_progress_end(struct ft_progress *p);

#endif
