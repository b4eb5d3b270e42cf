/* space.c - a loaded space's parameters and the text form of a config.
 *
 * A config (one value per parameter) travels as text "NAME=V,NAME=V,..." in
 * the database, in build_config.h and on the command line (`bench --config`).
 * ft_config_format writes the canonical form (parameter order, no blanks) so
 * equal configs give equal text; ft_config_parse accepts any order and blanks
 * around the tokens, and checks every value against the parameter's list.
 * Loading is in space_yaml.c, enumeration in enumerate.c.
 */
#include "space/space.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/paths.h"

int ft_space_param(const struct ft_space *sp, const char *name)
{
	for (int i = 0; i < sp->nparams; i++)
		if (!strcmp(sp->params[i].name, name))
			return i;
	return -1;
}

char *ft_config_format(const struct ft_space *sp, const long long *values, char *buf,
		       size_t size)
{
	size_t n = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (int i = 0; i < sp->nparams && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s=%lld", i ? "," : "",
				      sp->params[i].name, values[i]);
	return buf;
}

/* "A, B and C" of the space's parameter names, for messages. */
static void list_names(const struct ft_space *sp, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < sp->nparams && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", sp->params[i].name);
}

/* "64, 128, 256" of a parameter's values, for messages. */
static void list_values(const struct ft_param *p, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->nvalues && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", p->values[i]);
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int ft_config_parse(const struct ft_space *sp, const char *text, long long *values,
		    struct ft_err *err)
{
	char buf[FT_CONFIG_MAX], names[FT_CONFIG_MAX];
	int seen[FT_MAX_PARAMS] = { 0 };
	char *item, *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return ft_error(err, FT_EINPUT,
				"bad config '%.40s...': longer than %d characters: a config is "
				"NAME=VALUE,... with one entry per parameter",
				text, FT_CONFIG_MAX - 1);
	strcpy(buf, text);
	list_names(sp, names, sizeof(names));
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *name, *val, *end;
		long long v;
		int i, j;

		if (!eq)
			return ft_error(err, FT_EINPUT,
					"bad config '%s': '%s' is not NAME=VALUE: write e.g. %s=%lld", text,
					trim(item), sp->params[0].name, sp->params[0].values[0]);
		*eq = '\0';
		name = trim(item);
		val = trim(eq + 1);
		i = ft_space_param(sp, name);
		if (!*name)
			return ft_error(err, FT_EINPUT,
					"bad config '%s': an entry has no parameter name before '=': "
					"the parameters are %s",
					text, names);
		if (i < 0)
			return ft_error(err, FT_EINPUT,
					"bad config '%s': unknown parameter '%s': space '%s' has %s", text,
					name, sp->name, names);
		if (seen[i])
			return ft_error(err, FT_EINPUT,
					"bad config '%s': parameter '%s' is given twice: give it once",
					text, name);
		seen[i] = 1;
		errno = 0;
		v = strtoll(val, &end, 10);
		if (!*val || *end || errno) {
			char allowed[256];
			list_values(&sp->params[i], allowed, sizeof(allowed));
			return ft_error(err, FT_EINPUT,
					"bad config '%s': value '%s' of '%s' is not an integer: use one "
					"of %s",
					text, val, name, allowed);
		}
		for (j = 0; j < sp->params[i].nvalues; j++)
			if (sp->params[i].values[j] == v)
				break;
		if (j == sp->params[i].nvalues && sp->params[i].nvalues) {
			char allowed[256];
			list_values(&sp->params[i], allowed, sizeof(allowed));
			return ft_error(err, FT_EINPUT,
					"bad config '%s': %s=%lld is not in the space: '%s' takes %s",
					text, name, v, name, allowed);
		}
		values[i] = v;
	}
	for (int i = 0; i < sp->nparams; i++)
		if (!seen[i])
			return ft_error(err, FT_EINPUT,
					"bad config '%s': parameter '%s' is missing: a config gives every "
					"parameter (%s)",
					text, sp->params[i].name, names);
	return 0;
}

const char *ft_space_guard_text(const struct ft_space *sp, int failed, int *line, char *buf, size_t size)
{
	const struct ft_param *p;
	char allowed[256];

	if (failed < sp->nconstraints) {
		*line = sp->constraints[failed].expr.line;
		snprintf(buf, size, "constraint '%s' is false", sp->constraints[failed].name);
		return buf;
	}
	p = &sp->params[sp->derived[failed - sp->nconstraints]];
	*line = p->derive.line;
	list_values(p, allowed, sizeof(allowed));
	if (p->nchoices)
		snprintf(buf, size, "derived parameter '%s' (one of %s) is not one of %s%s, or repeats an earlier choice",
			 p->name, p->derive.text, p->nvalues ? allowed : "its choices", p->nvalues ? " nor a choice" : "");
	else if (p->nvalues)
		snprintf(buf, size, "derived parameter '%s' (%s) is not one of %s or not what the shape gives",
			 p->name, p->derive.text, allowed);
	else
		snprintf(buf, size, "derived parameter '%s' is not %s for this shape", p->name, p->derive.text);
	return buf;
}

const char *ft_space_unfit(const struct ft_space *sp, const struct ft_arch *a,
			   const struct ft_shape *shape, char *buf, size_t size)
{
	const char *why = sp->family->unsupported(a);

	if (why) {
		snprintf(buf, size, "family '%s' %s", sp->family->name, why);
		return buf;
	}
	if (sp->nhead_dims) {
		int i = 0;
		while (i < sp->nhead_dims && sp->head_dims[i] != shape->d)
			i++;
		if (i == sp->nhead_dims) {
			size_t n = (size_t)snprintf(buf, size, "its template builds head dim%s ",
						    sp->nhead_dims > 1 ? "s" : "");
			for (i = 0; i < sp->nhead_dims && n < size; i++)
				n += (size_t)snprintf(buf + n, size - n, "%s%d", i ? ", " : "",
						      sp->head_dims[i]);
			if (n < size)
				snprintf(buf + n, size - n, ", not %d (head_dims, line %d)", shape->d,
					 sp->head_dims_line);
			return buf;
		}
	}
	if (sp->abi == 1 && !ft_shape_is_plain(shape)) {
		snprintf(buf, size,
			 "its template speaks ABI v1 (contiguous [B,H,S,D], S queries = S keys, H query "
			 "heads = H KV heads), which cannot run %s: migrate it to ABI v2 "
			 "(kernel_templates/fatune_abi.h) and declare 'abi: 2' under template",
			 shape->s_kv != shape->s	 ? "kv_len != S"
			 : shape->h_kv != shape->h ? "kv_heads != H"
						   : "layout bshd");
		return buf;
	}
	return NULL;
}

const char *ft_space_unsearched(const struct ft_space *sp, const struct ft_arch *a, const struct ft_shape *shape,
				char *buf, size_t size)
{
	struct ft_err e = { 0 };
	int r;

	if (ft_space_unfit(sp, a, shape, buf, size))
		return buf;
	if ((r = ft_space_applies(sp, shape, a, &e)) == 1)
		return NULL;
	if (r == 0)
		snprintf(buf, size, "it is searched only for shapes where %s (applies_to, line %d)", sp->applies_to.text,
			 sp->applies_to.line);
	else
		snprintf(buf, size, "%s", e.msg);
	return buf;
}

/* The real directory of path's parent into out; -1 when it cannot be resolved. */
static int parent_real(const char *path, char *out)
{
	char dir[FT_PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	return realpath(dir, out) ? 0 : -1;
}

/* 1 when the real path real lies in (or is) the real directory root. */
static int under(const char *real, const char *root)
{
	size_t n = strlen(root);

	return !strncmp(real, root, n) && (real[n] == '\0' || real[n] == '/' || !strcmp(root, "/"));
}

const char *ft_space_include_confined(const char *entry, const char *space_path,
				     const char *template_path, char *out, size_t size)
{
	char base[PATH_MAX], tpl[PATH_MAX], joined[FT_PATH_MAX], real[PATH_MAX];
	const char *rest = entry;
	int cuda = !strncmp(entry, "{cuda}", 6);
	struct stat st;

	out[0] = '\0';
	if (!*entry)
		return "the directory is empty";
	if (entry[0] == '/')
		return "it is an absolute path";
	if (cuda) {
		char inc[FT_PATH_MAX];
		if (entry[6] && entry[6] != '/')
			return "'{cuda}' must be followed by '/' and a directory under it";
		if (!realpath(ft_cuda_include(inc, sizeof(inc)), base))
			return "the CUDA toolkit's include directory is not there (set CUDA_HOME)";
		rest = entry[6] ? entry + 7 : "";
	} else if (parent_real(space_path, base)) {
		return "the space file's directory cannot be resolved";
	}
	if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", base, rest) >= sizeof(joined))
		return "the path is too long";
	/* symbolic links and '..' are resolved first, so neither can lead out */
	if (!realpath(joined, real) || stat(real, &st) || !S_ISDIR(st.st_mode))
		return "there is no such directory";
	if (cuda ? !under(real, base)
		 : !under(real, base) &&
			   (!template_path || parent_real(template_path, tpl) || !under(real, tpl)))
		return cuda ? "it leads out of the CUDA toolkit's include directory"
			    : "it leads out of the space file's and the template's directories "
			      "(through '..' or a symbolic link)";
	if ((size_t)snprintf(out, size, "%s", real) >= size)
		return "the path is too long";
	return NULL;
}

const char *ft_space_file_confined(const char *entry, const char *owner_path, char *out, size_t size)
{
	char base[PATH_MAX], data[PATH_MAX], real[PATH_MAX];
	struct stat st;

	out[0] = '\0';
	if (!*entry)
		return "the path is empty";
	if (!strncmp(entry, "{cuda}", 6) || ft_space_include_dir(entry, owner_path, out, size))
		return "the path is too long or not a file path";
	/* symbolic links and '..' resolved first, so neither can lead out */
	if (!realpath(out, real) || stat(real, &st))
		return "there is no such file";
	if (!S_ISREG(st.st_mode))
		return "it is not a regular file";
	if (parent_real(owner_path, base))
		return "the directory of the file naming it cannot be resolved";
	if (!under(real, base) && !(realpath(ft_data_dir(), data) && under(real, data)))
		return "it lies outside the directory of the file naming it and outside fatune's data directory "
		       "(an absolute path, '..' or a symbolic link leading out)";
	return NULL;
}

int ft_space_include_dir(const char *entry, const char *space_path, char *out, size_t size)
{
	char dir[FT_PATH_MAX], *slash;
	size_t n;

	out[0] = '\0';
	if (!strncmp(entry, "{cuda}", 6)) {
		char inc[FT_PATH_MAX];
		n = (size_t)snprintf(out, size, "%s%s", ft_cuda_include(inc, sizeof(inc)), entry + 6);
	} else if (entry[0] == '/') {
		n = (size_t)snprintf(out, size, "%s", entry);
	} else {
		snprintf(dir, sizeof(dir), "%s", space_path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			strcpy(dir, ".");
		n = (size_t)snprintf(out, size, "%s/%s", dir, entry);
	}
	return n >= size || !*entry ? -1 : 0;
}

int ft_space_plan(const struct ft_space *sp, const struct ft_shape *shape, const long long *values,
		  struct ft_launch_plan *plan, struct ft_err *err)
{
	memset(plan, 0, sizeof(*plan));
	return sp->family->plan ? sp->family->plan(sp, shape, values, plan, err) : 0;
}
