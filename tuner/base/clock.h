/* clock.h - the one monotonic clock every step times itself with.
 *
 * Compile walls, a job's phases, the race's rounds, the progress line's ETA
 * and a merge's deadline all subtract two readings of this clock, so they are
 * comparable with one another within a process (CLOCK_MONOTONIC: never steps
 * back when the wall clock is set; its zero is arbitrary, so only differences
 * mean anything). Timestamps that are stored (a trial's date) use the wall
 * clock, not this.
 */
#ifndef FT_CLOCK_H
#define FT_CLOCK_H

/* Milliseconds on the monotonic clock (fractions kept: nanosecond resolution). */
double ft_mono_ms(void);

#endif
