/* yaml_doc.h - a small YAML file read into a checked node tree, with one error style.
 *
 * The libyaml layer shared by the file formats fatune reads (search spaces in
 * space_yaml.c, campaigns in campaign_yaml.c): yaml_doc.c and those two
 * readers are the only libyaml users. A file is read whole (bounded), hashed,
 * pre-scanned event by event (syntax, nesting depth: a hostile file cannot
 * make libyaml work for hours) and loaded as one document whose root must be
 * a mapping; readers then walk it with ft_yaml_mapping, which refuses unknown
 * and duplicate keys. Every problem is one line:
 *
 *     FILE:LINE: key 'KEY': what is wrong and what to do
 *
 * stored in the ft_err given to ft_yaml_open with FT_EINPUT (FT_EFAIL only for
 * out of memory), and every function that fails returns -1.
 */
#ifndef FT_YAML_DOC_H
#define FT_YAML_DOC_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "base/err.h"

#define FT_YAML_TOP "(top level)"	/* the key named for the root mapping */

struct ft_yaml {
	const char *path;		/* for messages */
	yaml_document_t doc;
	int have_doc;
	yaml_node_t *root;		/* the root mapping, after ft_yaml_open */
	uint64_t hash;			/* xxh64 of the file's bytes */
	struct ft_err *err;
	void *user;			/* the reader's own state */
};

/* What a format says about itself in messages. */
struct ft_yaml_format {
	const char *what;		/* "space file", "campaign file" */
	const char *thing;		/* "a space", "a campaign" */
	const char *starts_with;	/* "'fatune_space: 1' (see search_spaces/README.md)" */
	size_t max_bytes;		/* a larger file is refused */
	int max_depth;			/* nesting levels allowed (at most 32) */
	const char *depth_hint;		/* "a space nests 4": said when that is exceeded */
};

/* Reads path and loads its one document. Fails (FT_EINPUT) for an unreadable,
 * oversized, malformed, empty or multi-document file, or a root that is not a
 * mapping. On success call ft_yaml_close when done. */
int ft_yaml_open(struct ft_yaml *y, const char *path, const struct ft_yaml_format *fmt,
		 struct ft_err *err);

/* The same from bytes in memory (path only names them in messages). */
int ft_yaml_open_bytes(struct ft_yaml *y, const char *path, const unsigned char *buf, size_t len,
		       const struct ft_yaml_format *fmt, struct ft_err *err);

void ft_yaml_close(struct ft_yaml *y);

/* "FILE:LINE: key 'KEY': ..." into y->err; returns -1. */
int ft_yaml_fail(struct ft_yaml *y, int line, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

int ft_yaml_line(const yaml_node_t *n);
const char *ft_yaml_type(const yaml_node_t *n);	/* "a scalar", "a list", ... */
yaml_node_t *ft_yaml_node(struct ft_yaml *y, int id);

/* The text of a scalar node, or NULL after failing with "expected WANT". */
const char *ft_yaml_scalar(struct ft_yaml *y, yaml_node_t *n, const char *key, const char *want);

/* An integer written as a plain (unquoted) decimal number. */
int ft_yaml_integer(struct ft_yaml *y, yaml_node_t *n, const char *key, long long *out);

/* The file's format version (`fatune_space: 1`, `fatune_campaign: 1`): 0 when n is the integer 1,
 * else -1 with the failure recorded ("format version N is not supported"). */
int ft_yaml_version(struct ft_yaml *y, yaml_node_t *n, const char *key);

/* A name of [A-Za-z0-9_-]+ (ident != 0: a C identifier) of fewer than size
 * characters, copied into out. */
int ft_yaml_name(struct ft_yaml *y, yaml_node_t *n, const char *key, int ident, char *out,
		 size_t size);

/* Walks a mapping: every key must be a scalar in allowed[] (allowed == NULL:
 * any name, fn checks it) given once; fn gets each pair with the key's full
 * dotted path ("template.file"). */
typedef int (*ft_yaml_pair_fn)(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v,
			       void *arg);
int ft_yaml_mapping(struct ft_yaml *y, yaml_node_t *m, const char *where,
		    const char *const *allowed, int nallowed, ft_yaml_pair_fn fn, void *arg);

/* The value node of key in mapping m (and the key's line), or NULL. */
yaml_node_t *ft_yaml_lookup(struct ft_yaml *y, yaml_node_t *m, const char *key, int *line);

/* The number of items of a list node. */
int ft_yaml_count(const yaml_node_t *list);

#endif
