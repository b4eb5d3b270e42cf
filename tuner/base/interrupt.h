/* interrupt.h - SIGINT/SIGTERM as a flag every long loop polls.
 *
 * A command that runs long (search, check, db merge, a campaign) installs the
 * handlers with ft_interrupt_install(1); the handler only sets a flag, and
 * every loop that can run for more than a moment - enumeration (rejected
 * candidates included), the pipeline's waits, a campaign's units, a merge's
 * statements - polls ft_interrupted() and stops with ft_interrupt_error().
 * The flag stays set until the handlers are installed again, so a signal
 * that lands between two steps (two units of a campaign) is not lost.
 */
#ifndef FT_INTERRUPT_H
#define FT_INTERRUPT_H

#include "base/err.h"

/* on 1: SIGINT and SIGTERM set the flag (which is cleared); on 0: the default
 * actions are restored (the flag keeps its value). */
void ft_interrupt_install(int on);

/* 1 once SIGINT or SIGTERM arrived since ft_interrupt_install(1). */
int ft_interrupted(void);

/* Async-signal-safe: sets the flag as the handler does (for tests and for
 * code that stops a run on purpose). */
void ft_interrupt_raise(void);

/* Fills err with the interrupt's one line ("interrupted: " and the formatted
 * rest: what happened to the work) and status; returns -1. */
int ft_interrupt_error(struct ft_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
