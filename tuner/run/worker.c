/* worker.c - the worker process: spawning, the pipe protocol, watchdog and restart.
 *
 * Parent side (ft_worker_start/run/stop): posix_spawn of `/proc/self/exe
 * __worker` with pipes on its stdin and stdout; every read and write waits in
 * poll() against a deadline, so no worker, however broken, can hang the search.
 * Worker side (ft_worker_serve, ft_worker_main): reads messages on its stdin,
 * answers on its stdout, and lets evaluate.c do the GPU work.
 *
 * Messages are a header { magic, type, length } and a fixed struct of that
 * length (the same binary on both ends, so no serialisation):
 *   parent -> worker  INIT  { reference path }      once, right after the spawn
 *   worker -> parent  HELLO { ft_device_info, fatal error }
 *   parent -> worker  JOB   { ft_job }
 *   worker -> parent  READY {}                       inputs and reference ready:
 *                                                    the watchdog starts here
 *   worker -> parent  EXPECT { ms }                  optional, after the first
 *                                                    timed call: the watchdog
 *                                                    becomes ft_watchdog_ms
 *   worker -> parent  RESULT { ft_job_result, exiting }
 *   parent -> worker  SWEEP { ft_sweep }             instead of a JOB: several
 *                                                    candidates in one job
 *                                                    (run/sweep.h); READY and
 *                                                    EXPECT as for a job, then
 *   worker -> parent  SWEPT { ft_sweep_result, exiting }
 * EOF on the worker's stdin ends it. A worker answers `crashed` with exiting
 * set after a CUDA error (its context may be lost) and exits; the parent then
 * reaps it, and the next job spawns a fresh one.
 *
 * Signals: the parent ignores SIGPIPE (when it was at its default) so that a
 * write to a dead worker fails with EPIPE instead of killing fatune; the
 * worker gets SIGPIPE back at its default through posix_spawn.
 */
#include "base/clock.h"
#include "run/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

extern char **environ;

#define MSG_MAGIC 0x31575446u /* "FTW1" in little-endian bytes */

enum msg_type {
	MSG_INIT = 1, MSG_HELLO, MSG_JOB, MSG_READY, MSG_RESULT, MSG_EXPECT, MSG_SWEEP, MSG_SWEPT
};

struct msg_hdr {
	uint32_t magic;
	uint32_t type;
	uint32_t length;	/* bytes of the body that follows */
	uint32_t reserved;	/* 0 */
};

struct msg_init {
	char reference_path[FT_PATH_MAX];
	int device;		/* GPU ordinal; -1: $FATUNE_DEVICE or 0 */
};

struct msg_hello {
	struct ft_device_info info;
	int fatal;		/* 1: the worker cannot serve (msg says why) and exits */
	char msg[512];
};

struct msg_result {
	struct ft_job_result res;
	int exiting;		/* 1: the worker exits after this answer */
};

struct msg_expect {
	double ms;		/* what the rest of the job should take */
};

struct msg_swept {
	struct ft_sweep_result out;
	int exiting;		/* 1: the worker exits after this answer */
};

/* Worker side: where ft_worker_expect writes while ft_worker_serve runs a
 * job (-1 otherwise). A worker process serves one parent on one thread. */
static int expect_fd = -1;

/* Small writes to a worker that reads only wait when it stopped reading, i.e.
 * is broken: 10 s is far past any healthy wait. */
#define IO_TIMEOUT_MS 10000
/* Inputs and reference of a new (shape, seed) are made before the watchdog
 * starts; the fp32 reference is O(B*H*S^2*D) and takes seconds for the largest
 * shapes, so 10 minutes only catches a stuck GPU. */
#define PREPARE_TIMEOUT_MS 600000
/* A worker asked to exit (EOF) releases its context and modules; the driver
 * needs well under a second, so after 2 s it is killed. */
#define EXIT_GRACE_MS 2000

static char *const default_command[] = { "/proc/self/exe", "__worker", NULL };
static char *const *worker_command = default_command;

struct ft_worker {
	pid_t pid;			/* 0: no live worker */
	int to_child, from_child;	/* pipe ends, -1 when closed */
	char reference_path[FT_PATH_MAX];
	int device;			/* GPU ordinal asked for, -1: default */
	int start_timeout_ms;
	int proto_errors;		/* protocol breaks in a row */
	struct ft_device_info info;	/* from the last hello */
};

enum io { IO_OK = 0, IO_EOF, IO_TIMEOUT, IO_PROTO, IO_ERR };

/* Waits for fd to be ready until deadline (ms; < 0: forever). IO_OK or IO_TIMEOUT/IO_ERR. */
static enum io wait_fd(int fd, short events, double deadline)
{
	for (;;) {
		struct pollfd p = { fd, events, 0 };
		int wait = -1, r;
		if (deadline >= 0) {
			double left = deadline - ft_mono_ms();
			if (left <= 0)
				return IO_TIMEOUT;
			wait = (int)left + 1;
		}
		r = poll(&p, 1, wait);
		if (r > 0)
			return IO_OK; /* readable, writable, or hung up: read/write tells */
		if (r < 0 && errno != EINTR)
			return IO_ERR;
	}
}

static enum io read_all(int fd, void *buf, size_t n, double deadline)
{
	char *p = buf;

	while (n) {
		ssize_t r;
		enum io w = wait_fd(fd, POLLIN, deadline);
		if (w != IO_OK)
			return w;
		r = read(fd, p, n);
		if (r == 0)
			return IO_EOF;
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return IO_ERR;
		}
		p += r;
		n -= (size_t)r;
	}
	return IO_OK;
}

static enum io write_all(int fd, const void *buf, size_t n, double deadline)
{
	const char *p = buf;

	while (n) {
		ssize_t r;
		enum io w = wait_fd(fd, POLLOUT, deadline);
		if (w != IO_OK)
			return w;
		r = write(fd, p, n);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno == EPIPE ? IO_EOF : IO_ERR;
		}
		p += r;
		n -= (size_t)r;
	}
	return IO_OK;
}

static enum io send_msg(int fd, enum msg_type type, const void *body, size_t len, double deadline)
{
	struct msg_hdr h = { MSG_MAGIC, (uint32_t)type, (uint32_t)len, 0 };
	enum io r = write_all(fd, &h, sizeof(h), deadline);

	return r == IO_OK && len ? write_all(fd, body, len, deadline) : r;
}

/* Reads one message; *type gets its type. The body must be exactly the size
 * its type has (want[type]); anything else is IO_PROTO with why filled. */
static enum io recv_msg(int fd, enum msg_type *type, void *body, size_t cap, double deadline,
			char *why, size_t why_size)
{
	static const size_t sizes[] = {
		[MSG_INIT] = sizeof(struct msg_init),	  [MSG_HELLO] = sizeof(struct msg_hello),
		[MSG_JOB] = sizeof(struct ft_job),	  [MSG_READY] = 0,
		[MSG_RESULT] = sizeof(struct msg_result), [MSG_EXPECT] = sizeof(struct msg_expect),
		[MSG_SWEEP] = sizeof(struct ft_sweep),	  [MSG_SWEPT] = sizeof(struct msg_swept),
	};
	struct msg_hdr h;
	enum io r = read_all(fd, &h, sizeof(h), deadline);

	if (r != IO_OK)
		return r;
	if (h.magic != MSG_MAGIC) {
		snprintf(why, why_size, "bad magic 0x%08x (expected 0x%08x)", h.magic, MSG_MAGIC);
		return IO_PROTO;
	}
	if (h.type < MSG_INIT || h.type > MSG_SWEPT || h.length != sizes[h.type] ||
	    h.length > cap) {
		snprintf(why, why_size, "message type %u of %u bytes is not one this binary sends",
			 h.type, h.length);
		return IO_PROTO;
	}
	*type = (enum msg_type)h.type;
	return h.length ? read_all(fd, body, h.length, deadline) : IO_OK;
}

/* ---- parent side -------------------------------------------------------------- */

static const char *signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGSEGV, "SIGSEGV" }, { SIGABRT, "SIGABRT" }, { SIGKILL, "SIGKILL" },
		{ SIGBUS, "SIGBUS" },	{ SIGFPE, "SIGFPE" },	{ SIGILL, "SIGILL" },
		{ SIGTERM, "SIGTERM" }, { SIGPIPE, "SIGPIPE" }, { SIGINT, "SIGINT" },
		{ SIGHUP, "SIGHUP" },	{ SIGQUIT, "SIGQUIT" }, { SIGTRAP, "SIGTRAP" },
		{ SIGXCPU, "SIGXCPU" }, { SIGSYS, "SIGSYS" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return "an unnamed signal";
}

static void close_fds(struct ft_worker *w)
{
	if (w->to_child >= 0)
		close(w->to_child);
	if (w->from_child >= 0)
		close(w->from_child);
	w->to_child = w->from_child = -1;
}

/* Closes the pipes and waits for the worker to exit (up to grace_ms; then
 * SIGKILL), so no zombie is left. Describes how it ended into how. */
static void reap(struct ft_worker *w, int grace_ms, char *how, size_t how_size)
{
	double deadline = ft_mono_ms() + grace_ms;
	int st = 0, killed = 0;
	pid_t r;

	close_fds(w);
	if (w->pid <= 0) {
		snprintf(how, how_size, "was not running");
		return;
	}
	for (;;) {
		r = waitpid(w->pid, &st, killed ? 0 : WNOHANG);
		if (r == w->pid)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) { /* ECHILD: reaped elsewhere (SIGCHLD ignored) */
			snprintf(how, how_size, "ended (its exit status is unknown: %s)",
				 strerror(errno));
			w->pid = 0;
			return;
		}
		if (!killed && ft_mono_ms() >= deadline) {
			kill(w->pid, SIGKILL);
			killed = 1;
			continue;
		}
		if (!killed) {
			struct timespec ts = { 0, 5 * 1000000 }; /* poll the exit every 5 ms */
			nanosleep(&ts, NULL);
		}
	}
	w->pid = 0;
	if (WIFEXITED(st))
		snprintf(how, how_size, "exited with code %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(how, how_size, "was killed by %s (signal %d)%s", signal_name(WTERMSIG(st)),
			 WTERMSIG(st), killed ? " after it did not exit" : "");
	else
		snprintf(how, how_size, "ended with wait status 0x%x", st);
}

static void kill_reap(struct ft_worker *w)
{
	char how[128];

	if (w->pid > 0)
		kill(w->pid, SIGKILL);
	reap(w, 0, how, sizeof(how));
}

static void ignore_sigpipe(void)
{
	struct sigaction sa;

	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_IGN;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGPIPE, &sa, NULL);
	}
}

static int spawn(struct ft_worker *w, struct ft_err *err)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, rc;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t def, none;

	ignore_sigpipe();
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		rc = errno;
		if (in[0] >= 0) {
			close(in[0]);
			close(in[1]);
		}
		return ft_error(err, FT_EFAIL, "cannot create the worker's pipes: %s", strerror(rc));
	}
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigemptyset(&none);
	if ((rc = posix_spawn_file_actions_init(&fa)) == 0) {
		if ((rc = posix_spawnattr_init(&attr)) == 0) {
			if (!(rc = posix_spawn_file_actions_adddup2(&fa, in[0], 0)) &&
			    !(rc = posix_spawn_file_actions_adddup2(&fa, out[1], 1)) &&
			    !(rc = posix_spawnattr_setsigdefault(&attr, &def)) &&
			    !(rc = posix_spawnattr_setsigmask(&attr, &none)) &&
			    !(rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF |
								   POSIX_SPAWN_SETSIGMASK)))
				rc = posix_spawn(&w->pid, worker_command[0], &fa, &attr,
						 worker_command, environ);
			posix_spawnattr_destroy(&attr);
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	close(in[0]);
	close(out[1]);
	if (rc) {
		close(in[1]);
		close(out[0]);
		w->pid = 0;
		return ft_error(err, FT_EFAIL, "cannot start the worker '%s': %s", worker_command[0],
				strerror(rc));
	}
	w->to_child = in[1];
	w->from_child = out[0];
	if (fcntl(w->to_child, F_SETFL, O_NONBLOCK) || fcntl(w->from_child, F_SETFL, O_NONBLOCK)) {
		rc = errno;
		kill_reap(w);
		return ft_error(err, FT_EFAIL, "cannot set up the worker's pipes: %s", strerror(rc));
	}
	return 0;
}

/* Spawns a worker and reads its hello into w->info. */
static int start(struct ft_worker *w, struct ft_err *err)
{
	struct msg_init init;
	struct msg_hello hello;
	enum msg_type type;
	char why[160], how[128];
	double deadline;
	enum io r;

	if (spawn(w, err))
		return -1;
	deadline = ft_mono_ms() + w->start_timeout_ms;
	memset(&init, 0, sizeof(init));
	snprintf(init.reference_path, sizeof(init.reference_path), "%s", w->reference_path);
	init.device = w->device;
	r = send_msg(w->to_child, MSG_INIT, &init, sizeof(init), deadline);
	if (r == IO_OK)
		r = recv_msg(w->from_child, &type, &hello, sizeof(hello), deadline, why, sizeof(why));
	if (r == IO_OK && type != MSG_HELLO) {
		snprintf(why, sizeof(why), "message type %d instead of its hello", (int)type);
		r = IO_PROTO;
	}
	switch (r) {
	case IO_OK:
		break;
	case IO_TIMEOUT:
		kill_reap(w);
		return ft_error(err, FT_EFAIL,
				"the worker '%s' did not say hello within %d ms: is the GPU or NVRTC stuck?",
				worker_command[0], w->start_timeout_ms);
	case IO_EOF:
		reap(w, EXIT_GRACE_MS, how, sizeof(how));
		return ft_error(err, FT_EFAIL, "the worker '%s' %s before its hello (see its stderr)",
				worker_command[0], how);
	case IO_PROTO:
		kill_reap(w);
		return ft_error(err, FT_EFAIL,
				"the worker '%s' broke the protocol at its hello: %s (is it the same fatune binary?)",
				worker_command[0], why);
	default:
		kill_reap(w);
		return ft_error(err, FT_EFAIL, "cannot talk to the worker '%s': %s",
				worker_command[0], strerror(errno));
	}
	hello.info.why_not[sizeof(hello.info.why_not) - 1] = '\0';
	hello.info.lim.name[sizeof(hello.info.lim.name) - 1] = '\0';
	hello.msg[sizeof(hello.msg) - 1] = '\0';
	if (hello.fatal) {
		reap(w, EXIT_GRACE_MS, how, sizeof(how));
		return ft_error(err, FT_EFAIL, "the worker cannot evaluate: %s", hello.msg);
	}
	w->info = hello.info;
	if (!hello.info.present) /* it exits by itself */
		reap(w, EXIT_GRACE_MS, how, sizeof(how));
	return 0;
}

int ft_worker_start(struct ft_worker **out, const char *reference_path, int device,
		    int start_timeout_ms, struct ft_device_info *info, struct ft_err *err)
{
	struct ft_worker *w;

	*out = NULL;
	if (strlen(reference_path) >= FT_PATH_MAX)
		return ft_error(err, FT_EINPUT, "reference path '%.64s...' is too long",
				reference_path);
	if (start_timeout_ms < 1)
		return ft_error(err, FT_EINPUT, "worker start timeout of %d ms: use >= 1",
				start_timeout_ms);
	w = calloc(1, sizeof(*w));
	if (!w)
		return ft_error(err, FT_EFAIL, "out of memory starting the worker");
	w->to_child = w->from_child = -1;
	w->start_timeout_ms = start_timeout_ms;
	w->device = device;
	snprintf(w->reference_path, sizeof(w->reference_path), "%s", reference_path);
	if (start(w, err)) {
		free(w);
		return -1;
	}
	*info = w->info;
	*out = w;
	return 0;
}

const struct ft_device_info *ft_worker_info(const struct ft_worker *w)
{
	return &w->info;
}

/* The worker ended mid-job: a crashed verdict saying how. */
static void died(struct ft_worker *w, struct ft_job_result *res, const char *when)
{
	char how[128];

	reap(w, EXIT_GRACE_MS, how, sizeof(how));
	res->status = FT_ST_CRASHED;
	snprintf(res->reason, sizeof(res->reason), "the worker %s %s", how, when);
}

static void timed_out(struct ft_worker *w, struct ft_job_result *res, const char *what, int ms)
{
	kill_reap(w);
	res->status = FT_ST_TIMEOUT;
	snprintf(res->reason, sizeof(res->reason), "%s ran past the %d ms watchdog (worker killed)",
		 what, ms);
}

static int broken(struct ft_worker *w, struct ft_job_result *res, const char *why,
		  struct ft_err *err)
{
	kill_reap(w);
	if (++w->proto_errors >= 2)
		return ft_error(err, FT_EFAIL,
				"the worker broke the protocol twice in a row (%s): is '%s' the same fatune binary?",
				why, worker_command[0]);
	res->status = FT_ST_CRASHED;
	snprintf(res->reason, sizeof(res->reason), "the worker broke the protocol: %s", why);
	return 0;
}

int ft_watchdog_ms(int base_ms, double expected_ms)
{
	double ms = 3 * expected_ms + 1000;

	if (!(ms < FT_WATCHDOG_CAP_MS)) /* also NaN */
		ms = FT_WATCHDOG_CAP_MS;
	return ms > base_ms ? (int)ms : base_ms;
}

/* Whether a verdict came from a worker (ok, wrong_result, crashed). */
static int worker_verdict(enum ft_status st)
{
	return st == FT_ST_OK || st == FT_ST_WRONG_RESULT || st == FT_ST_CRASHED;
}

/* Sends one request (a job or a sweep) and waits for its answer of type
 * `answer` (len bytes into reply), READY starting the watchdog and EXPECT
 * moving it. Returns 0 with *got 1 and the answer in reply; 0 with *got 0
 * and a verdict in *res when the worker died, ran past the watchdog or broke
 * the protocol (its first time); -1 with err when fatune itself failed. */
static int exchange(struct ft_worker *w, enum msg_type type, const void *body, size_t len,
		    int timeout_ms, enum msg_type answer, void *reply, size_t reply_len, int *got,
		    struct ft_job_result *res, struct ft_err *err)
{
	const int base_ms = timeout_ms;
	enum msg_type t;
	char why[160];
	enum io r;

	*got = 0;
	if (!w->info.present)
		return ft_error(err, FT_EFAIL, "no GPU to evaluate on: %s", w->info.why_not);
	if (timeout_ms < 1)
		return ft_error(err, FT_EINPUT, "watchdog of %d ms: use >= 1", timeout_ms);
	if (w->pid <= 0) {
		if (start(w, err)) {
			ft_err_prefix(err, "cannot restart the worker");
			return -1;
		}
		if (!w->info.present)
			return ft_error(err, FT_EFAIL, "the restarted worker found no GPU: %s",
					w->info.why_not);
	}
	r = send_msg(w->to_child, type, body, len, ft_mono_ms() + IO_TIMEOUT_MS);
	if (r == IO_EOF) {
		died(w, res, "before it read the job");
		return 0;
	}
	if (r != IO_OK)
		return broken(w, res, r == IO_TIMEOUT ? "it stopped reading jobs" : strerror(errno),
			      err);
	/* inputs and reference first, under their own bound, then the watchdog */
	r = recv_msg(w->from_child, &t, reply, reply_len, ft_mono_ms() + PREPARE_TIMEOUT_MS, why,
		     sizeof(why));
	if (r == IO_OK && t == MSG_READY) {
		const double ready = ft_mono_ms();
		double deadline = ready + timeout_ms;
		/* EXPECT messages move the deadline, never past the cap counted from
		 * READY (so no worker can keep a job alive by repeating them); the
		 * answer ends the wait */
		while ((r = recv_msg(w->from_child, &t, reply, reply_len, deadline, why,
				     sizeof(why))) == IO_OK &&
		       t == MSG_EXPECT) {
			struct msg_expect e;
			double hard = ready + ft_watchdog_ms(base_ms, INFINITY);
			memcpy(&e, reply, sizeof(e));
			deadline = ft_mono_ms() + ft_watchdog_ms(base_ms, e.ms);
			if (deadline > hard)
				deadline = hard;
			timeout_ms = (int)(deadline - ready);
		}
	} else if (r == IO_TIMEOUT) {
		timed_out(w, res, "making the inputs and the reference", PREPARE_TIMEOUT_MS);
		return 0;
	}
	switch (r) {
	case IO_OK:
		break;
	case IO_TIMEOUT:
		timed_out(w, res, type == MSG_SWEEP ? "the sweep" : "the candidate", timeout_ms);
		return 0;
	case IO_EOF:
		died(w, res, "during the job");
		return 0;
	case IO_PROTO:
		return broken(w, res, why, err);
	default:
		return broken(w, res, strerror(errno), err);
	}
	if (t != answer)
		return broken(w, res, "a message other than the job's result", err);
	*got = 1;
	return 0;
}

/* The worker said it exits after its answer: wait for it. */
static void after_answer(struct ft_worker *w, int exiting)
{
	char how[128];

	w->proto_errors = 0;
	if (exiting)
		reap(w, EXIT_GRACE_MS, how, sizeof(how));
}

int ft_worker_run(struct ft_worker *w, const struct ft_job *job, int timeout_ms,
		  struct ft_job_result *res, struct ft_err *err)
{
	struct msg_result msg;
	char why[160];
	int got;

	ft_job_result_init(res);
	if (exchange(w, MSG_JOB, job, sizeof(*job), timeout_ms, MSG_RESULT, &msg, sizeof(msg), &got,
		     res, err))
		return -1;
	if (!got)
		return 0;
	if (!worker_verdict(msg.res.status)) {
		snprintf(why, sizeof(why), "result status %d is not a worker's verdict",
			 (int)msg.res.status);
		return broken(w, res, why, err);
	}
	*res = msg.res;
	res->reason[sizeof(res->reason) - 1] = '\0';
	after_answer(w, msg.exiting);
	return 0;
}

int ft_worker_sweep(struct ft_worker *w, const struct ft_sweep *g, int timeout_ms,
		    struct ft_sweep_result *out, struct ft_err *err)
{
	struct msg_swept *msg = malloc(sizeof(*msg));
	struct ft_job_result fail;
	char why[160];
	int got, rc = 0;

	memset(out, 0, sizeof(*out));
	if (!msg)
		return ft_error(err, FT_EFAIL, "out of memory for a sweep's answer");
	ft_job_result_init(&fail);
	if (exchange(w, MSG_SWEEP, g, sizeof(*g), timeout_ms, MSG_SWEPT, msg, sizeof(*msg), &got,
		     &fail, err)) {
		free(msg);
		return -1;
	}
	for (int i = 0; got && i < FT_SWEEP_MAX; i++)
		if (!worker_verdict(msg->out.res[i].status)) {
			snprintf(why, sizeof(why), "sweep result %d: status %d is not a worker's verdict",
				 i, (int)msg->out.res[i].status);
			rc = broken(w, &fail, why, err);
			got = 0;
			break;
		}
	if (got) {
		*out = msg->out;
		out->why[sizeof(out->why) - 1] = '\0';
		for (int i = 0; i < FT_SWEEP_MAX; i++)
			out->res[i].reason[sizeof(out->res[i].reason) - 1] = '\0';
		after_answer(w, msg->exiting);
	} else if (!rc) {
		/* the worker's end is not one candidate's verdict: the sweep failed */
		ft_sweep_fail(out, fail.reason);
	}
	free(msg);
	return rc;
}

void ft_worker_stop(struct ft_worker *w)
{
	char how[128];

	if (!w)
		return;
	if (w->pid > 0)
		reap(w, EXIT_GRACE_MS, how, sizeof(how)); /* EOF asks it to exit */
	close_fds(w);
	free(w);
}

void ft_worker_leave(struct ft_worker *w)
{
	if (!w)
		return;
	close_fds(w); /* EOF asks it to exit */
	/* reaped now when it is already gone; else its new parent (init or a
	 * subreaper) reaps it once this process exits */
	if (w->pid > 0)
		(void)waitpid(w->pid, NULL, WNOHANG);
	free(w);
}

void ft_worker_set_command(char *const *argv)
{
	worker_command = argv ? argv : default_command;
}

/* ---- worker side ---------------------------------------------------------------- */

/* The strings of a job read from the pipe, ended within their arrays. */
static void job_terminate(struct ft_job *job)
{
	job->cubin_key[sizeof(job->cubin_key) - 1] = '\0';
	job->next_cubin_key[sizeof(job->next_cubin_key) - 1] = '\0';
	job->config[sizeof(job->config) - 1] = '\0';
	job->kernel[sizeof(job->kernel) - 1] = '\0';
	job->combine_kernel[sizeof(job->combine_kernel) - 1] = '\0';
}

/* One job: prepared, READY, run, RESULT. 0 to go on, 1 to end (code 1). */
static int serve_job(int out_fd, const struct ft_worker_backend *be, struct ft_job *job)
{
	struct msg_result result;
	int rc;

	job_terminate(job);
	memset(&result, 0, sizeof(result));
	ft_job_result_init(&result.res);
	rc = be->prepare ? be->prepare(be->ctx, job, &result.res) : 0;
	if (rc == 0) {
		if (send_msg(out_fd, MSG_READY, NULL, 0, -1) != IO_OK)
			return 1;
		expect_fd = out_fd;
		rc = be->run(be->ctx, job, &result.res);
		expect_fd = -1;
	}
	result.exiting = rc == 1;
	return send_msg(out_fd, MSG_RESULT, &result, sizeof(result), -1) != IO_OK || result.exiting;
}

/* One sweep: prepared (its first job's inputs), READY, swept, SWEPT. A
 * backend with no sweep answers failed. 0 to go on, 1 to end (code 1). */
static int serve_sweep(int out_fd, const struct ft_worker_backend *be, struct ft_sweep *g,
		       struct msg_swept *msg)
{
	struct ft_job_result res;
	int rc = 0;

	for (int i = 0; i < FT_SWEEP_MAX; i++)
		job_terminate(&g->jobs[i]);
	memset(msg, 0, sizeof(*msg));
	for (int i = 0; i < FT_SWEEP_MAX; i++)
		ft_job_result_init(&msg->out.res[i]);
	ft_job_result_init(&res);
	if (!be->sweep) {
		ft_sweep_fail(&msg->out, "this worker takes no sweep");
	} else if (g->n >= 1 && g->n <= FT_SWEEP_MAX && be->prepare &&
		   (rc = be->prepare(be->ctx, &g->jobs[0], &res)) != 0) {
		ft_sweep_fail(&msg->out, res.reason);
	} else {
		if (send_msg(out_fd, MSG_READY, NULL, 0, -1) != IO_OK)
			return 1;
		expect_fd = out_fd;
		rc = be->sweep(be->ctx, g, &msg->out);
		expect_fd = -1;
	}
	msg->exiting = rc == 1;
	return send_msg(out_fd, MSG_SWEPT, msg, sizeof(*msg), -1) != IO_OK || msg->exiting;
}

int ft_worker_serve(int in_fd, int out_fd, const struct ft_worker_backend *be)
{
	struct msg_init init;
	struct msg_hello hello;
	/* a request and a sweep's answer: tens of KB, not on the stack */
	union {
		struct ft_job job;
		struct ft_sweep sweep;
	} *req = malloc(sizeof(*req));
	struct msg_swept *swept = malloc(sizeof(*swept));
	struct ft_err err = { 0 };
	enum msg_type type;
	char why[160];
	int code = 0, rc;

	if (!req || !swept ||
	    recv_msg(in_fd, &type, &init, sizeof(init), -1, why, sizeof(why)) != IO_OK ||
	    type != MSG_INIT) {
		free(req);
		free(swept);
		return 1;
	}
	init.reference_path[sizeof(init.reference_path) - 1] = '\0';
	memset(&hello, 0, sizeof(hello));
	rc = be->open(be->ctx, init.reference_path, init.device, &hello.info, &err);
	if (rc) {
		hello.fatal = 1;
		snprintf(hello.msg, sizeof(hello.msg), "%s", err.msg);
	}
	if (send_msg(out_fd, MSG_HELLO, &hello, sizeof(hello), -1) != IO_OK || hello.fatal) {
		code = 1;
		goto out;
	}
	if (!hello.info.present) /* said why; nothing to serve */
		goto out;
	for (;;) {
		enum io r = recv_msg(in_fd, &type, req, sizeof(*req), -1, why, sizeof(why));
		if (r == IO_EOF)
			break;
		if (r != IO_OK || (type != MSG_JOB && type != MSG_SWEEP) ||
		    (type == MSG_JOB ? serve_job(out_fd, be, &req->job)
				     : serve_sweep(out_fd, be, &req->sweep, swept))) {
			code = 1;
			break;
		}
	}
out:
	if (be->close)
		be->close(be->ctx);
	free(req);
	free(swept);
	return code;
}

int ft_worker_expect(double ms)
{
	struct msg_expect e = { ms };

	if (expect_fd < 0)
		return 0;
	return send_msg(expect_fd, MSG_EXPECT, &e, sizeof(e), -1) == IO_OK ? 0 : -1;
}
