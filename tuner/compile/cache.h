/* cache.h - compiled CUBINs on disk, keyed by everything that decides their bytes.
 *
 * Key = xxh64 of: the template's hash (the file and every local header it
 * includes, recursively), the NVRTC version, the shared compile options, the
 * arch and every -D define (compile-time parameters, HEAD_DIM, IS_CAUSAL,
 * FATUNE_BF16, FATUNE_SMEM_BYTES). Launch-time parameters and B, H, S are not
 * part of it, so a re-tune at another sequence length compiles nothing, and a
 * changed template (or header) gives new keys: its old entries are never
 * handed back.
 *
 * Layout: <dir>/cubin/<key>.cubin and <key>.res (text: the ptxas resources
 * of both kernels, one line each of six numbers (struct ft_resources: regs,
 * smem, stack, spill stores, spill loads, wgmma serialization note), then "xxh64r <16 hex> <size>": the xxh64 of
 * those resource lines followed by the CUBIN, and the CUBIN's size). An entry
 * whose size or hash does not match (a CUBIN cut short by a full disk, a
 * CUBIN byte or a resource number altered by hand), or whose .res lacks the
 * hash or the sixth number (an older fatune's), is a miss: it is compiled again and replaced,
 * never loaded, and no verdict is drawn from its numbers.
 * <dir> = $FATUNE_CACHE_DIR, else $XDG_CACHE_HOME/fatune, else ~/.cache/fatune.
 * Entries are written to a temporary name and renamed, so concurrent searches
 * never read half a file.
 */
#ifndef FT_CACHE_H
#define FT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "compile/nvrtc.h"
#include "space/space.h"

/* The cache's cubin directory (created if missing) into buf. */
int ft_cache_dir(char *buf, size_t size, struct ft_err *err);

/* Hash of a template file and the local headers it includes ("..." includes
 * found as NVRTC finds them: next to the includer, in kernel_templates/, then
 * in dirs[0..ndirs-1], a space's compile.include), as 16 hex digits into
 * hex[17]. Toolkit headers and <...> includes are not followed: the NVRTC
 * version is part of every cache key instead. */
int ft_template_hash(const char *path, const char *const *dirs, int ndirs, char hex[17],
		     struct ft_err *err);

/* ft_template_hash of a space's template with its compile.include. */
int ft_space_template_hash(const struct ft_space *sp, char hex[17], struct ft_err *err);

/* xxh64 of bytes as 16 hex digits (for search keys and the like). */
void ft_hash_hex(const void *data, size_t size, char hex[17]);

/* The cache key of a compile request, given its template's hash. */
void ft_compile_key(const struct ft_compile_req *req, const char *template_hash, char key[17]);

/* Checks that the cache can take an entry: its directory exists or is
 * created, and a file can be created, written and removed in it. -1 with a
 * one-line err naming the directory, the system's reason and FATUNE_CACHE_DIR
 * when it cannot (a path through a regular file or /proc, a read-only
 * directory or mount, a full disk): an environment failure, which ends a run
 * before any candidate is judged. */
int ft_cache_check(struct ft_err *err);

/* 1 when key is a cache key (16 lowercase hex digits, ft_compile_key's form):
 * the content key a job names its CUBIN by (run/job.h), checked before it
 * becomes a path. */
int ft_cache_key_ok(const char *key);

/* Path of the CUBIN for key (whether or not it exists); FT_EINPUT when key is
 * not a cache key (ft_cache_key_ok: a path smuggled in as a key is never
 * opened). */
int ft_cache_path(const char *key, char *buf, size_t size, struct ft_err *err);

/* 1 on a hit (res[] filled from the .res file, the CUBIN's size and hash
 * checked), 0 on a miss (missing, unreadable, or not the bytes stored). */
int ft_cache_lookup(const char *key, struct ft_resources res[2]);

/* Reads the cached CUBIN at cubin_path (an ft_cache_path) for loading, checked
 * as ft_cache_lookup checks it: *image is malloc'd (the caller frees it) and
 * *size its length; -1 (*image NULL) with FT_EFAIL in err when it is missing,
 * unreadable or not the bytes stored. */
int ft_cache_read(const char *cubin_path, void **image, size_t *size, struct ft_err *err);

/* Stores a compiled CUBIN and its resources under key. -1 with err when the
 * cache cannot take it (an environment failure, not the candidate's). */
int ft_cache_store(const char *key, const struct ft_compile_out *out, struct ft_err *err);

struct ft_cache_stats {
	long long entries;
	long long bytes;
	char dir[4096];
};

int ft_cache_stats(struct ft_cache_stats *st, struct ft_err *err);

/* Removes every entry; *removed receives the count. */
int ft_cache_clear(long long *removed, struct ft_err *err);

#endif
