/* target.c - resolving the shared target options (see target.h). */
#include "cmd/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/paths.h"

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
