/* outfile.h - the one writer of output files: every file fatune writes other
 * than a database (export's headers and JSON, the HTML report, CUBIN cache
 * entries) goes through here.
 *
 * Like git's lockfile.c: the content goes to a new temporary file in the
 * target's own directory, created with O_CREAT|O_EXCL|O_NOFOLLOW (so nothing
 * planted at that name, a symbolic link least of all, is ever opened), then
 * flushed, fsync'ed and renamed over the target. A failed write leaves the
 * target as it was and no temporary file behind.
 *
 * The target must be absent or a regular file that is writable; "-" means
 * standard output. Refused before anything is created (FT_EINPUT, one line
 * naming the path and what to do):
 *   - a symbolic link at the target: rename would replace the link, not what
 *     it points to, so neither happens; write to the link's target instead;
 *   - a device node, fifo, socket or directory: rename would swap a device
 *     node for a regular file (as root, `-o /dev/full` did);
 *   - a read-only file (no write permission bit, or not writable by us):
 *     fatune never replaces what the user protected, even as root;
 *   - the database the command reads (guard: the --db path) or its -wal,
 *     -shm and -journal files, by path or by device and inode (a hard link).
 * A replaced file keeps its permission bits; a new one gets 0666 less the umask.
 * The checks and the rename are not one atomic step: a directory writable by
 * someone else can still swap the target between them, but the rename only
 * ever replaces a directory entry, never writes through a link or a device.
 */
#ifndef FT_OUTFILE_H
#define FT_OUTFILE_H

#include <stdio.h>

#include "base/err.h"

/* Longest target path taken. */
#define FT_OUTFILE_PATH_MAX 4096

struct ft_outfile {
	FILE *f;				/* write the content here */
	char path[FT_OUTFILE_PATH_MAX];		/* the target; "-" for standard output */
	char tmp[FT_OUTFILE_PATH_MAX + 32];	/* the temporary file; "" when none */
};

/* Checks target (see above; guard: a database path the output must not be,
 * NULL for none) and opens a temporary file beside it (or standard output for
 * "-"). -1 with err set: FT_EINPUT for a refused target, FT_EFAIL when the
 * temporary file cannot be made (its directory missing or not writable). */
int ft_outfile_open(struct ft_outfile *o, const char *target, const char *guard, struct ft_err *err);

/* Flushes, fsyncs and closes the temporary file and renames it over the
 * target (standard output: flushes it). On failure the temporary file is
 * removed and the target left as it was; -1, FT_EFAIL. */
int ft_outfile_commit(struct ft_outfile *o, struct ft_err *err);

/* Closes and removes the temporary file (after a failed write); no-op after
 * commit or for standard output. */
void ft_outfile_abort(struct ft_outfile *o);

/* What a file of mode m is when it is not a regular file, for messages:
 * "a symbolic link", "a character device", "a fifo", "a directory", ... */
const char *ft_file_kind(unsigned mode);

/* Writes size bytes of data to path through the above (no guard). */
int ft_outfile_write(const char *path, const void *data, size_t size, struct ft_err *err);

#endif
