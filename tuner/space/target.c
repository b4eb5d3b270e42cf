/* target.c - resolving the shared target options (see target.h). */
#include "space/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"

const char *ft_data_dir(void)
{
	const char *d = getenv("FATUNE_SOURCE_DIR");
	struct stat st;

	if (d && *d)
		return d;
	/* the build tree's sources while they exist, else the installed copy */
	if (!stat(FATUNE_SOURCE_DIR "/search_spaces", &st) && S_ISDIR(st.st_mode))
		return FATUNE_SOURCE_DIR;
	return FATUNE_INSTALL_DATADIR;
}

const char *ft_cuda_include(char *buf, size_t size)
{
	const char *home = getenv("CUDA_HOME");
	struct stat st;

	if (home && *home) {
		snprintf(buf, size, "%s/include", home);
		if (!stat(buf, &st) && S_ISDIR(st.st_mode))
			return buf;
	}
	snprintf(buf, size, "%s", FATUNE_CUDA_INCLUDE);
	return buf;
}

void ft_default_space(char *path, size_t size)
{
	snprintf(path, size, "%s/search_spaces/attention.yaml", ft_data_dir());
}

const char *ft_db_path(const struct ft_target_opts *o)
{
	const char *env = getenv("FATUNE_DB");

	if (o->db)
		return o->db;
	return env && *env ? env : "fatune.db";
}

int ft_target_shape(const char *cmd, const struct ft_target_opts *o, struct ft_shape *shape,
		    struct ft_err *err)
{
	if (!o->shape)
		return ft_error(err, FT_EINPUT,
				"fatune %s: --shape is required, e.g. --shape 1x8x512x64 (BxHxSxD)", cmd);
	memset(shape, 0, sizeof(*shape));
	if (ft_shape_parse(o->shape, shape, err) ||
	    ft_shape_set_kv(shape, o->kv_len, o->kv_heads, o->layout, err))
		return -1;
	shape->causal = o->causal;
	shape->dtype = FT_FP16;
	if (o->dtype && ft_dtype_parse(o->dtype, &shape->dtype, err))
		return -1;
	return 0;
}

int ft_target_space(const struct ft_target_opts *o, struct ft_space **out, struct ft_err *err)
{
	char def[FT_PATH_MAX];
	struct ft_space *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return ft_error(err, FT_EFAIL, "out of memory loading the search space");
	if (!o->space)
		ft_default_space(def, sizeof(def));
	if (ft_space_load(sp, o->space ? o->space : def, err)) {
		free(sp);
		return -1;
	}
	*out = sp;
	return 0;
}
