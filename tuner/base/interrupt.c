/* interrupt.c - the SIGINT/SIGTERM flag (see interrupt.h). */
#include "base/interrupt.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t flag;

static void on_signal(int sig)
{
	(void)sig;
	flag = 1;
}

void ft_interrupt_install(int on)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* SA_RESTART: a read or write in progress completes; the loops poll */
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on ? on_signal : SIG_DFL;
	if (on)
		flag = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int ft_interrupted(void)
{
	return flag != 0;
}

void ft_interrupt_raise(void)
{
	flag = 1;
}

int ft_interrupt_error(struct ft_err *err, const char *fmt, ...)
{
	char what[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ft_error(err, FT_EINTR, "interrupted: %s", what);
}
