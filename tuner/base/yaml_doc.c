/* yaml_doc.c - reading a small YAML file into a checked node tree (see yaml_doc.h).
 *
 * The file is read whole (bounded), hashed, pre-scanned event by event and
 * loaded with libyaml's document API; the readers (space_yaml.c,
 * campaign_yaml.c) then walk the node tree key by key through the helpers
 * here, so every format reports its problems the same way.
 */
#include "base/yaml_doc.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/ident.h"

/* The deepest nesting any format may allow; a format sets its own bound
 * below it. Deep flow nesting ([[[[...) makes libyaml's scanner slow, so it is
 * refused early (see prescan). */
#define DEPTH_MAX 32
/* Keys longer than this are cut in messages (names are shorter anyway). */
#define KEY_MAX 64

/* ---- errors and node access ------------------------------------------------------------------- */

int ft_yaml_fail(struct ft_yaml *y, int line, const char *key, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ft_error(y->err, FT_EINPUT, "%s:%d: key '%s': %s", y->path, line, key, what);
}

int ft_yaml_line(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

const char *ft_yaml_type(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

/* "parameters.TILE_M": the mapping keys open at depth, or FT_YAML_TOP. */
#define key_path(st, depth, out, size)                                                   \
	do {                                                                             \
		size_t n_ = 0;                                                           \
		(out)[0] = '\0';                                                         \
		for (int i_ = 0; i_ < (depth) && n_ < (size); i_++)                      \
			if ((st)[i_].map && (st)[i_].key[0])                             \
				n_ += (size_t)snprintf((out) + n_, (size) - n_, "%s%s",  \
						       n_ ? "." : "", (st)[i_].key);     \
		if (!(out)[0])                                                           \
			snprintf((out), (size), "%s", FT_YAML_TOP);                              \
	} while (0)

static int yaml_fail(struct ft_yaml *y, yaml_parser_t *p, const unsigned char *buf, size_t len,
		     const char *key)
{
	char ctx[128] = "";
	size_t line;

	if (p->error == YAML_READER_ERROR) {
		line = 1;
		for (size_t i = 0; i < p->problem_offset && i < len; i++)
			line += buf[i] == '\n';
	} else {
		line = p->problem_mark.line + 1;
	}
	if (p->context)
		snprintf(ctx, sizeof(ctx), " (%s at line %zu)", p->context,
			 p->context_mark.line + 1);
	return ft_yaml_fail(y, (int)line, key,
		    "malformed YAML: %s%s: fix the syntax (indent with spaces, 'key: value', "
		    "lists in [ ])",
		    p->problem ? p->problem : "cannot parse", ctx);
}

/* Checks the YAML before it is loaded, event by event: its syntax, and that it
 * nests at most fmt->max_depth levels. libyaml's scanner does work proportional to
 * the flow nesting ([[[[...) for every token, so a 1 MiB file of '[' would take
 * hours in yaml_parser_load; here it is refused after max_depth events. The
 * path of mapping keys is kept so a syntax error can name the key whose value
 * was being read. */
static int prescan(struct ft_yaml *y, const unsigned char *buf, size_t len,
		   const struct ft_yaml_format *fmt)
{
	struct {
		int map;
		int expect_key;
		char key[KEY_MAX];
	} st[DEPTH_MAX];
	int max_depth = fmt->max_depth < DEPTH_MAX ? fmt->max_depth : DEPTH_MAX;
	int depth = 0, ret = -1;
	yaml_parser_t p;
	yaml_event_t ev;
	char path[256];

	if (!yaml_parser_initialize(&p))
		return ft_error(y->err, FT_EFAIL, "cannot initialise libyaml: out of memory");
	yaml_parser_set_input_string(&p, buf, len);
	for (;;) {
		int value_done = 0, type;

		if (!yaml_parser_parse(&p, &ev)) {
			key_path(st, depth, path, sizeof(path));
			yaml_fail(y, &p, buf, len, path);
			break;
		}
		type = ev.type;
		switch (type) {
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (depth == max_depth) {
				key_path(st, depth, path, sizeof(path));
				ft_yaml_fail(y, (int)ev.start_mark.line + 1, path,
				     "nested more than %d levels deep: %s", max_depth,
					     fmt->depth_hint);
				yaml_event_delete(&ev);
				goto out;
			}
			st[depth].map = type == YAML_MAPPING_START_EVENT;
			st[depth].expect_key = 1;
			st[depth].key[0] = '\0';
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			depth--;
			value_done = 1;
			break;
		case YAML_SCALAR_EVENT:
			if (depth > 0 && st[depth - 1].map && st[depth - 1].expect_key) {
				snprintf(st[depth - 1].key, sizeof(st[depth - 1].key), "%s",
					 (const char *)ev.data.scalar.value);
				st[depth - 1].expect_key = 0;
			} else {
				value_done = 1;
			}
			break;
		case YAML_ALIAS_EVENT:
			value_done = 1;
			break;
		default:
			break;
		}
		if (value_done && depth > 0 && st[depth - 1].map)
			st[depth - 1].expect_key = 1;
		yaml_event_delete(&ev);
		if (type == YAML_STREAM_END_EVENT) {
			ret = 0;
			break;
		}
	}
out:
	yaml_parser_delete(&p);
	return ret;
}

/* ---- node access ------------------------------------------------------------------ */

yaml_node_t *ft_yaml_node(struct ft_yaml *y, int id)
{
	return yaml_document_get_node(&y->doc, id);
}

/* The text of a scalar node, or NULL after failing with "wrong type". */
const char *ft_yaml_scalar(struct ft_yaml *y, yaml_node_t *n, const char *key, const char *want)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE) {
		ft_yaml_fail(y, ft_yaml_line(n), key, "expected %s, found %s", want, ft_yaml_type(n));
		return NULL;
	}
	s = (const char *)n->data.scalar.value;
	if (strlen(s) != n->data.scalar.length) {
		ft_yaml_fail(y, ft_yaml_line(n), key, "the value holds a NUL character: remove it");
		return NULL;
	}
	return s;
}

/* An integer written as a plain decimal number. */
int ft_yaml_version(struct ft_yaml *y, yaml_node_t *n, const char *key)
{
	long long version;

	if (ft_yaml_integer(y, n, key, &version))
		return -1;
	if (version != 1)
		return ft_yaml_fail(y, ft_yaml_line(n), key,
				    "format version %lld is not supported: this fatune reads version 1", version);
	return 0;
}

int ft_yaml_integer(struct ft_yaml *y, yaml_node_t *n, const char *key, long long *out)
{
	const char *s = ft_yaml_scalar(y, n, key, "an integer");
	char *end;

	if (!s)
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (!*s || *end || errno || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    isspace((unsigned char)*s))
		return ft_yaml_fail(y, ft_yaml_line(n), key,
			    "non-integer value '%s': write a whole number such as 64, without quotes",
			    s);
	return 0;
}

/* A name of [A-Za-z0-9_-]+ (ident: a C identifier) copied into out. */
int ft_yaml_name(struct ft_yaml *y, yaml_node_t *n, const char *key, int ident, char *out,
		 size_t size)
{
	const char *s = ft_yaml_scalar(y, n, key, ident ? "a C identifier" : "a name");

	if (!s)
		return -1;
	if (!*s)
		return ft_yaml_fail(y, ft_yaml_line(n), key, "the value is empty: give a name");
	if (strlen(s) >= size)
		return ft_yaml_fail(y, ft_yaml_line(n), key, "'%.40s...' is longer than %d characters", s,
				    (int)size - 1);
	if (ident && !ft_is_ident(s))
		return ft_yaml_fail(y, ft_yaml_line(n), key,
			    "'%s' is not a C identifier: use letters, digits and _ (not first)", s);
	for (const char *p = s; !ident && *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
			return ft_yaml_fail(y, ft_yaml_line(n), key,
				    "'%s' may only hold letters, digits, '_' and '-'", s);
	strcpy(out, s);
	return 0;
}

/* Walks a mapping: checks that every key is a scalar in allowed[] and appears
 * once, then hands each pair to fn. */
int ft_yaml_mapping(struct ft_yaml *y, yaml_node_t *m, const char *where,
		    const char *const *allowed, int nallowed, ft_yaml_pair_fn fn, void *arg)
{
	char list[256] = "names";

	for (int i = 0, n = 0; i < nallowed; i++)
		n += snprintf(list + n, sizeof(list) - (size_t)n, "%s%s", i ? ", " : "", allowed[i]);
	if (m->type != YAML_MAPPING_NODE)
		return ft_yaml_fail(y, ft_yaml_line(m), where, "expected a mapping of %s, found %s", list,
			    ft_yaml_type(m));
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ft_yaml_node(y, p->key), *v = ft_yaml_node(y, p->value);
		const char *name;
		int known = !allowed;	/* NULL: the keys are names, fn checks them */
		char full[160];

		if (!k || !v)
			return ft_yaml_fail(y, ft_yaml_line(m), where, "broken YAML node");
		name = ft_yaml_scalar(y, k, where, "a key");
		if (!name)
			return -1;
		snprintf(full, sizeof(full), "%s%s%.*s", strcmp(where, FT_YAML_TOP) ? where : "",
			 strcmp(where, FT_YAML_TOP) ? "." : "", KEY_MAX, name);
		for (int i = 0; i < nallowed; i++)
			known |= !strcmp(name, allowed[i]);
		if (!known)
			return ft_yaml_fail(y, ft_yaml_line(k), full, "unknown key: the keys allowed here are %s",
				    list);
		for (yaml_node_pair_t *q = m->data.mapping.pairs.start; allowed && q < p; q++) {
			yaml_node_t *qk = ft_yaml_node(y, q->key);
			if (qk && qk->type == YAML_SCALAR_NODE &&
			    !strcmp((const char *)qk->data.scalar.value, name))
				return ft_yaml_fail(y, ft_yaml_line(k), full,
					    "duplicate key (first at line %d): give it once",
					    ft_yaml_line(qk));
		}
		if (fn(y, full, k, v, arg))
			return -1;
	}
	return 0;
}

/* The value node of key in mapping m, or NULL. */
yaml_node_t *ft_yaml_lookup(struct ft_yaml *y, yaml_node_t *m, const char *key, int *line)
{
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ft_yaml_node(y, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key)) {
			if (line)
				*line = ft_yaml_line(k);
			return ft_yaml_node(y, p->value);
		}
	}
	return NULL;
}

/* ---- loading -------------------------------------------------------------------- */

/* Reads at most fmt->max_bytes of path into a malloc'd buffer. */
static unsigned char *read_file(const char *path, const struct ft_yaml_format *fmt, size_t *len,
				struct ft_err *err)
{
	unsigned char *buf;
	struct stat st;
	FILE *f = fopen(path, "rb");

	if (!f) {
		ft_error(err, FT_EINPUT, "cannot open %s '%s': %s", fmt->what, path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		ft_error(err, FT_EINPUT, "%s '%s' is not a regular file", fmt->what, path);
		fclose(f);
		return NULL;
	}
	buf = malloc(fmt->max_bytes + 1);
	if (!buf) {
		fclose(f);
		ft_error(err, FT_EFAIL, "out of memory reading %s '%s'", fmt->what, path);
		return NULL;
	}
	/* read one byte past the limit to tell "exactly the limit" from "more" */
	*len = fread(buf, 1, fmt->max_bytes + 1, f);
	if (ferror(f)) {
		ft_error(err, FT_EINPUT, "cannot read %s '%s': %s", fmt->what, path, strerror(errno));
		goto fail;
	}
	if (*len > fmt->max_bytes) {
		int mib = fmt->max_bytes % (1u << 20) == 0;
		ft_error(err, FT_EINPUT, "%s '%s' is over %zu %s: %s is a page of YAML", fmt->what,
			 path, mib ? fmt->max_bytes >> 20 : fmt->max_bytes >> 10, mib ? "MiB" : "KiB",
			 fmt->thing);
		goto fail;
	}
	fclose(f);
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

int ft_yaml_open_bytes(struct ft_yaml *y, const char *path, const unsigned char *buf, size_t len,
		       const struct ft_yaml_format *fmt, struct ft_err *err)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	int ret = -1;

	memset(y, 0, sizeof(*y));
	y->path = path;
	y->err = err;
	y->hash = XXH64(buf, len, 0);
	if (prescan(y, buf, len, fmt))
		return -1;
	if (!yaml_parser_initialize(&parser))
		return ft_error(err, FT_EFAIL, "cannot initialise libyaml: out of memory");
	yaml_parser_set_input_string(&parser, buf, len);
	if (!yaml_parser_load(&parser, &y->doc)) {
		yaml_fail(y, &parser, buf, len, FT_YAML_TOP);
		goto out;
	}
	y->have_doc = 1;
	y->root = yaml_document_get_root_node(&y->doc);
	if (!y->root) {
		ft_yaml_fail(y, 1, FT_YAML_TOP, "the file is empty: %s is a mapping that starts with %s",
			     fmt->thing, fmt->starts_with);
		goto out;
	}
	if (y->root->type != YAML_MAPPING_NODE) {
		ft_yaml_fail(y, ft_yaml_line(y->root), FT_YAML_TOP,
			     "the file is %s, not a mapping: %s is a mapping that starts with %s",
			     ft_yaml_type(y->root), fmt->thing, fmt->starts_with);
		goto out;
	}
	if (!yaml_parser_load(&parser, &extra)) {
		yaml_fail(y, &parser, buf, len, FT_YAML_TOP);
		goto out;
	}
	if (yaml_document_get_root_node(&extra)) {
		int line = (int)extra.start_mark.line + 1;
		yaml_document_delete(&extra);
		ft_yaml_fail(y, line, FT_YAML_TOP, "a second YAML document ('---'): %s holds one",
			     fmt->what);
		goto out;
	}
	yaml_document_delete(&extra);
	ret = 0;
out:
	yaml_parser_delete(&parser);
	if (ret)
		ft_yaml_close(y);
	return ret;
}

int ft_yaml_open(struct ft_yaml *y, const char *path, const struct ft_yaml_format *fmt,
		 struct ft_err *err)
{
	size_t len = 0;
	unsigned char *buf;
	int ret;

	memset(y, 0, sizeof(*y));
	if (!(buf = read_file(path, fmt, &len, err)))
		return -1;
	ret = ft_yaml_open_bytes(y, path, buf, len, fmt, err);
	free(buf);
	return ret;
}

void ft_yaml_close(struct ft_yaml *y)
{
	if (y->have_doc)
		yaml_document_delete(&y->doc);
	y->have_doc = 0;
	y->root = NULL;
}

int ft_yaml_count(const yaml_node_t *list)
{
	return (int)(list->data.sequence.items.top - list->data.sequence.items.start);
}
