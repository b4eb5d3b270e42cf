/* outfile.c - the one writer of output files: checked target, temporary file
 * made with O_EXCL|O_NOFOLLOW beside it, fsync, rename (contract in outfile.h).
 */
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Temporary names tried before giving up: each collision means a file of
 * that exact random name already exists, so a handful is plenty. */
#define TMP_TRIES 64

const char *ft_file_kind(unsigned m)
{
	return S_ISLNK(m)    ? "a symbolic link"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISFIFO(m) ? "a fifo"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISDIR(m)  ? "a directory"
			     : "not a regular file";
}

/* path's directory (".") and base name. */
static void split(const char *path, char *dir, size_t dsize, const char **base)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		snprintf(dir, dsize, ".");
		*base = path;
	} else {
		snprintf(dir, dsize, "%.*s", slash == path ? 1 : (int)(slash - path), path);
		*base = slash + 1;
	}
}

/* path with its directory resolved (links, '..'), the base name kept as is:
 * two names of one directory entry compare equal. */
static void canon(const char *path, char *out, size_t size)
{
	char dir[FT_OUTFILE_PATH_MAX], real[PATH_MAX];
	const char *base;

	split(path, dir, sizeof(dir), &base);
	if (realpath(dir, real))
		snprintf(out, size, "%s/%s", real, base);
	else
		snprintf(out, size, "%s", path);
}

/* Refuses a target that is the guard database or one of its side files. */
static int not_database(const char *target, const struct stat *ts, const char *guard, struct ft_err *err)
{
	static const char *const sides[] = { "", "-wal", "-shm", "-journal" };
	char t[FT_OUTFILE_PATH_MAX + 8], g[FT_OUTFILE_PATH_MAX + 16], side[FT_OUTFILE_PATH_MAX + 16];

	if (!guard || !*guard)
		return 0;
	canon(target, t, sizeof(t));
	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		struct stat gs;

		snprintf(side, sizeof(side), "%s%s", guard, sides[i]);
		canon(side, g, sizeof(g));
		if (!strcmp(t, g) ||
		    (ts && stat(side, &gs) == 0 && gs.st_dev == ts->st_dev && gs.st_ino == ts->st_ino))
			return ft_error(err, FT_EINPUT,
					"output '%s' is the tuning database '%s'%s%s: writing there would destroy it; write to another file",
					target, guard, *sides[i] ? " or its " : "", sides[i]);
	}
	return 0;
}

/* The target checks of outfile.h; 0 when it may be replaced (or made). */
static int check_target(const char *target, const char *guard, struct ft_err *err)
{
	struct stat st;

	if (lstat(target, &st) != 0) {
		if (errno != ENOENT)
			return ft_error(err, FT_EINPUT, "output '%s': %s: check the path", target, strerror(errno));
		return not_database(target, NULL, guard, err);
	}
	if (S_ISLNK(st.st_mode))
		return ft_error(err, FT_EINPUT,
				"output '%s' is a symbolic link: fatune replaces files, never what a link points to; write to the link's target path or remove the link",
				target);
	if (!S_ISREG(st.st_mode))
		return ft_error(err, FT_EINPUT, "output '%s' is %s, not a regular file: write to a regular file (or '-' for standard output)",
				target, ft_file_kind(st.st_mode));
	if (!(st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) || access(target, W_OK) != 0)
		return ft_error(err, FT_EINPUT,
				"output '%s' is read-only (mode %04o): fatune does not replace a protected file; make it writable (chmod u+w) or write elsewhere",
				target, (unsigned)(st.st_mode & 07777));
	return not_database(target, &st, guard, err);
}

/* A new file named target.XXXXXXXX.tmp beside target, opened O_EXCL|O_NOFOLLOW
 * with the mode given (the umask applies). */
static int make_tmp(struct ft_outfile *o, mode_t mode, struct ft_err *err)
{
	static unsigned counter;
	char dir[FT_OUTFILE_PATH_MAX];
	const char *base;
	int fd = -1;

	for (int i = 0; i < TMP_TRIES && fd < 0; i++) {
		unsigned n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
		unsigned long v = (unsigned long)getpid() * 2654435761UL ^ (unsigned long)time(NULL) * 40503UL ^
				  (unsigned long)clock() ^ (unsigned long)n * 97UL ^ (unsigned long)(size_t)o;

		if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s.%08lx.tmp", o->path, v & 0xffffffffUL) >=
		    sizeof(o->tmp))
			return ft_error(err, FT_EINPUT, "output path '%.64s...' is too long: use a shorter one", o->path);
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = errno;

		o->tmp[0] = '\0';
		split(o->path, dir, sizeof(dir), &base);
		return ft_error(err, FT_EFAIL, "cannot write '%s': cannot create a file in '%s': %s: check that the directory exists and is writable",
				o->path, dir, strerror(e));
	}
	if (!(o->f = fdopen(fd, "w"))) {
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = '\0';
		return ft_error(err, FT_EFAIL, "cannot write '%s': %s", o->path, strerror(errno));
	}
	return 0;
}

int ft_outfile_open(struct ft_outfile *o, const char *target, const char *guard, struct ft_err *err)
{
	struct stat st;
	mode_t mode = 0666;
	int existing = 0;

	memset(o, 0, sizeof(*o));
	if (!target || !*target)
		return ft_error(err, FT_EINPUT, "the output path is empty: name a file (or '-' for standard output)");
	if ((size_t)snprintf(o->path, sizeof(o->path), "%s", target) >= sizeof(o->path))
		return ft_error(err, FT_EINPUT, "output path '%.64s...' is too long: use a shorter one", target);
	if (!strcmp(target, "-")) {
		o->f = stdout;
		return 0;
	}
	if (check_target(target, guard, err))
		return -1;
	if (stat(target, &st) == 0) {
		mode = st.st_mode & 07777;	/* a replaced file keeps its permissions */
		existing = 1;
	}
	if (make_tmp(o, mode, err))
		return -1;
	/* O_CREAT applied the umask to a new file; an existing one's bits are set exactly */
	if (existing && fchmod(fileno(o->f), mode) != 0) {
		int e = errno;

		ft_outfile_abort(o);
		return ft_error(err, FT_EFAIL, "cannot write '%s': %s", target, strerror(e));
	}
	return 0;
}

/* fsyncs target's directory so that the rename survives a power cut. Best
 * effort: some file systems refuse fsync on a directory. */
static void sync_dir(const char *path)
{
	char dir[FT_OUTFILE_PATH_MAX];
	const char *base;
	int fd;

	split(path, dir, sizeof(dir), &base);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

int ft_outfile_commit(struct ft_outfile *o, struct ft_err *err)
{
	int e = 0;

	if (o->f == stdout) {
		o->f = NULL;
		if (fflush(stdout) || ferror(stdout))
			return ft_error(err, FT_EFAIL, "cannot write to standard output: %s", strerror(errno));
		return 0;
	}
	if (!o->f)
		return ft_error(err, FT_EFAIL, "cannot write '%s': the file is not open (a fatune bug)", o->path);
	if (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f)))
		e = errno ? errno : EIO;
	if (fclose(o->f) && !e)
		e = errno;
	o->f = NULL;
	if (!e && rename(o->tmp, o->path))
		e = errno;
	if (e) {
		unlink(o->tmp);
		o->tmp[0] = '\0';
		return ft_error(err, FT_EFAIL, "cannot write '%s': %s: check the space and permissions there",
				o->path, strerror(e));
	}
	o->tmp[0] = '\0';
	sync_dir(o->path);
	return 0;
}

void ft_outfile_abort(struct ft_outfile *o)
{
	if (o->f == stdout) {
		o->f = NULL;
		return;
	}
	if (o->f)
		fclose(o->f);	/* being thrown away: its error does not matter */
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = '\0';
}

int ft_outfile_write(const char *path, const void *data, size_t size, struct ft_err *err)
{
	struct ft_outfile o;

	if (ft_outfile_open(&o, path, NULL, err))
		return -1;
	if (size && fwrite(data, 1, size, o.f) != size) {
		int e = errno;

		ft_outfile_abort(&o);
		return ft_error(err, FT_EFAIL, "cannot write '%s': %s", path, strerror(e));
	}
	return ft_outfile_commit(&o, err);
}
