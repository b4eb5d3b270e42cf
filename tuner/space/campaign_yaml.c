/* campaign_yaml.c - reading a campaign file into struct ft_campaign (format in campaign.h).
 *
 * Walks the node tree yaml_doc.c loads, key by key, with the space reader's
 * error style ("FILE:LINE: key 'KEY': what is wrong and what to do"). Each
 * shapes entry becomes one shape-set text (the shape, then kv_heads, kv_len
 * and layout appended as the shape syntax writes them) expanded by
 * ft_shape_expand for every dtype and causal flag the entry (or the file)
 * asks for.
 */
#include "space/campaign.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/yaml_doc.h"

/* A campaign file lists shapes: 256 KiB is thousands of lines. */
#define CAMPAIGN_FILE_MAX (256 << 10)
/* shapes > entry > key > list: 4 levels, with room for YAML's own. */
#define DEPTH_MAX 16

struct flags {
	int dtype[2];			/* fp16, bf16 asked for */
	int causal[2];			/* 0, 1 asked for */
};

struct reader {
	struct ft_campaign *c;
	struct flags defaults;
	int have_shapes;
	yaml_node_t *shapes;		/* walked after the defaults are known */
	int shapes_line;
};

/* A scalar or a list of scalars, each handed to fn. */
static int each_item(struct ft_yaml *y, yaml_node_t *v, const char *key, const char *want,
		     int (*fn)(struct ft_yaml *y, yaml_node_t *n, const char *key, void *arg),
		     void *arg)
{
	if (v->type == YAML_SCALAR_NODE)
		return fn(y, v, key, arg);
	if (v->type != YAML_SEQUENCE_NODE || ft_yaml_count(v) == 0)
		return ft_yaml_fail(y, ft_yaml_line(v), key, "expected %s or a non-empty list of them, found %s",
				    want, ft_yaml_type(v));
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *n = ft_yaml_node(y, *it);
		if (!n)
			return ft_yaml_fail(y, ft_yaml_line(v), key, "broken YAML node");
		if (fn(y, n, key, arg))
			return -1;
	}
	return 0;
}

static int dtype_item(struct ft_yaml *y, yaml_node_t *n, const char *key, void *arg)
{
	struct flags *f = arg;
	const char *s = ft_yaml_scalar(y, n, key, "fp16 or bf16");
	enum ft_dtype t;
	struct ft_err why;

	if (!s)
		return -1;
	if (ft_dtype_parse(s, &t, &why))
		return ft_yaml_fail(y, ft_yaml_line(n), key, "%s", why.msg);
	f->dtype[t] = 1;
	return 0;
}

static int causal_item(struct ft_yaml *y, yaml_node_t *n, const char *key, void *arg)
{
	struct flags *f = arg;
	const char *s = ft_yaml_scalar(y, n, key, "0 or 1");

	if (!s)
		return -1;
	if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no"))
		f->causal[0] = 1;
	else if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes"))
		f->causal[1] = 1;
	else
		return ft_yaml_fail(y, ft_yaml_line(n), key, "'%s' is not 0 or 1 (causal or not)", s);
	return 0;
}

static int space_item(struct ft_yaml *y, yaml_node_t *n, const char *key, void *arg)
{
	struct ft_campaign *c = arg;
	const char *s = ft_yaml_scalar(y, n, key, "a space file");
	const char *why;
	char *dst;

	if (!s)
		return -1;
	if (c->nspaces == FT_CAMPAIGN_MAX_SPACES)
		return ft_yaml_fail(y, ft_yaml_line(n), key, "more than %d spaces", FT_CAMPAIGN_MAX_SPACES);
	dst = c->spaces[c->nspaces];
	/* confined like a space's template: beside the campaign or fatune's own */
	if ((why = ft_space_file_confined(s, y->path, dst, FT_PATH_MAX)))
		return ft_yaml_fail(y, ft_yaml_line(n), key,
				    "space file '%.200s' is not a readable file: %s (a relative path is relative to the campaign file, under whose directory the space must lie, or under fatune's own)",
				    s, why);
	c->nspaces++;
	return 0;
}

/* Appends ",NAME=VALUE" of an entry's scalar to text. */
static int append(struct ft_yaml *y, yaml_node_t *v, const char *key, const char *name, char *text,
		  size_t size)
{
	const char *s = ft_yaml_scalar(y, v, key, "a number, a list A:B or a range A..B");
	size_t n = strlen(text);

	if (!s)
		return -1;
	if (!*s || strchr(s, ',') || (size_t)snprintf(text + n, size - n, ",%s=%s", name, s) >= size - n)
		return ft_yaml_fail(y, ft_yaml_line(v), key,
				    "'%.60s' is not one value, list (A:B) or range (A..B)", s);
	return 0;
}

static int add_units(struct ft_yaml *y, struct reader *r, const char *text, const struct flags *f,
		     int line, const char *key)
{
	struct ft_err why;

	for (int t = 0; t < 2; t++)
		for (int k = 0; k < 2; k++) {
			struct ft_shape proto = { 0 };
			if (!f->dtype[t] || !f->causal[k])
				continue;
			proto.dtype = (enum ft_dtype)t;
			proto.causal = k;
			if (ft_campaign_add(r->c, text, &proto, &why))
				return ft_yaml_fail(y, line, key, "%s", why.msg);
		}
	return 0;
}

struct entry {
	struct reader *r;
	char text[256];
	struct flags f;
	yaml_node_t *kv_heads, *kv_len, *layout;
	int have_shape;
};

static int entry_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	struct entry *e = arg;
	const char *name = (const char *)k->data.scalar.value, *s;

	if (!strcmp(name, "shape")) {
		if (!(s = ft_yaml_scalar(y, v, key, "a shape such as 1x8x512x64")))
			return -1;
		if (strlen(s) >= sizeof(e->text) - 96)
			return ft_yaml_fail(y, ft_yaml_line(v), key, "the shape text is too long");
		strcpy(e->text, s);
		e->have_shape = 1;
		return 0;
	}
	if (!strcmp(name, "dtype")) {
		memset(e->f.dtype, 0, sizeof(e->f.dtype));
		return each_item(y, v, key, "fp16 or bf16", dtype_item, &e->f);
	}
	if (!strcmp(name, "causal")) {
		memset(e->f.causal, 0, sizeof(e->f.causal));
		return each_item(y, v, key, "0 or 1", causal_item, &e->f);
	}
	if (!strcmp(name, "kv_heads"))
		e->kv_heads = v;
	else if (!strcmp(name, "kv_len"))
		e->kv_len = v;
	else
		e->layout = v;
	return 0;
}

static int shapes_entries(struct ft_yaml *y, struct reader *r)
{
	static const char *const entry_keys[] = { "shape", "dtype", "causal", "kv_heads", "kv_len", "layout" };
	yaml_node_t *v = r->shapes;
	int i = 0;

	if (v->type != YAML_SEQUENCE_NODE || ft_yaml_count(v) == 0)
		return ft_yaml_fail(y, ft_yaml_line(v), "shapes",
				    "expected a non-empty list of shapes (text, or {shape: ..., dtype: ..., causal: ...}), found %s",
				    ft_yaml_type(v));
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++, i++) {
		yaml_node_t *n = ft_yaml_node(y, *it);
		char key[48];
		struct entry e = { .r = r, .f = r->defaults };

		snprintf(key, sizeof(key), "shapes[%d]", i);
		if (!n)
			return ft_yaml_fail(y, ft_yaml_line(v), key, "broken YAML node");
		if (n->type == YAML_SCALAR_NODE) {
			const char *s = ft_yaml_scalar(y, n, key, "a shape");
			if (!s || add_units(y, r, s, &r->defaults, ft_yaml_line(n), key))
				return -1;
			continue;
		}
		if (ft_yaml_mapping(y, n, key, entry_keys, 6, entry_pair, &e))
			return -1;
		if (!e.have_shape)
			return ft_yaml_fail(y, ft_yaml_line(n), key, "missing 'shape': e.g. {shape: 1x8x512x64}");
		if ((e.kv_heads && append(y, e.kv_heads, key, "kv_heads", e.text, sizeof(e.text))) ||
		    (e.kv_len && append(y, e.kv_len, key, "kv_len", e.text, sizeof(e.text))) ||
		    (e.layout && append(y, e.layout, key, "layout", e.text, sizeof(e.text))))
			return -1;
		if (add_units(y, r, e.text, &e.f, ft_yaml_line(n), key))
			return -1;
	}
	return 0;
}

static int top_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	struct reader *r = arg;

	if (!strcmp(key, "fatune_campaign"))
		return ft_yaml_version(y, v, key);
	if (!strcmp(key, "name"))
		return ft_yaml_name(y, v, key, 0, r->c->name, sizeof(r->c->name));
	if (!strcmp(key, "description"))
		return ft_yaml_scalar(y, v, key, "text") ? 0 : -1;
	if (!strcmp(key, "dtype")) {
		memset(r->defaults.dtype, 0, sizeof(r->defaults.dtype));
		return each_item(y, v, key, "fp16 or bf16", dtype_item, &r->defaults);
	}
	if (!strcmp(key, "causal")) {
		memset(r->defaults.causal, 0, sizeof(r->defaults.causal));
		return each_item(y, v, key, "0 or 1", causal_item, &r->defaults);
	}
	if (!strcmp(key, "spaces"))
		return each_item(y, v, key, "a space file", space_item, r->c);
	r->shapes = v;
	r->shapes_line = ft_yaml_line(k);
	return 0;
}

int ft_campaign_load(struct ft_campaign *c, const char *path, struct ft_err *err)
{
	static const char *const top_keys[] = { "fatune_campaign", "name", "description", "dtype",
						"causal",	   "spaces", "shapes" };
	static const struct ft_yaml_format fmt = {
		"campaign file", "a campaign", "'fatune_campaign: 1' (see README.md, Campaigns)",
		CAMPAIGN_FILE_MAX, DEPTH_MAX, "a campaign nests 4",
	};
	struct reader r = { .c = c, .defaults = { { 1, 0 }, { 1, 0 } } };
	struct ft_yaml y;
	int ret = -1;

	if (ft_yaml_open(&y, path, &fmt, err))
		return -1;
	snprintf(c->path, sizeof(c->path), "%s", path);
	if (ft_yaml_mapping(&y, y.root, FT_YAML_TOP, top_keys, 7, top_pair, &r))
		goto out;
	if (!ft_yaml_lookup(&y, y.root, "fatune_campaign", NULL)) {
		ft_yaml_fail(&y, 1, "fatune_campaign", "missing required key: a campaign starts with 'fatune_campaign: 1'");
		goto out;
	}
	if (!r.shapes) {
		ft_yaml_fail(&y, ft_yaml_line(y.root), "shapes", "missing required key: list the shapes to tune");
		goto out;
	}
	ret = shapes_entries(&y, &r);
out:
	ft_yaml_close(&y);
	return ret;
}
