/* candidate.c - a candidate's macro list and launch (see candidate.h). */
#include "space/candidate.h"

#include <string.h>

int ft_candidate_macros(const struct ft_space *sp, const struct ft_shape *shape, const long long *values,
			const long long *define_values, long long smem_bytes, struct ft_macro *out)
{
	int n = 0;

	for (int i = 0; i < sp->nparams; i++)
		if (sp->params[i].kind == FT_PARAM_COMPILE)
			out[n++] = (struct ft_macro){ sp->params[i].name, values[i], FT_MACRO_PARAM };
	for (int i = 0; i < sp->ndefines; i++)
		out[n++] = (struct ft_macro){ sp->define_names[i], define_values[i], FT_MACRO_DEFINE };
	/* fatune's own, in the order of ft_fatune_macro_names */
	long long own[FT_FATUNE_MACRO_COUNT] = {
		shape->d, shape->causal ? 1 : 0, shape->dtype == FT_BF16, smem_bytes, sp->abi,
	};
	for (int i = 0; i < FT_FATUNE_MACRO_COUNT; i++)
		out[n++] = (struct ft_macro){ ft_fatune_macro_names[i], own[i],
					      i < 3 ? FT_MACRO_SHAPE : FT_MACRO_FATUNE };
	return n;
}

int ft_candidate_launch(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_candidate *c,
			struct ft_launch *out, struct ft_err *err)
{
	int split = ft_space_param(sp, "NUM_SPLITS");

	memset(out, 0, sizeof(*out));
	out->threads = c->threads;
	out->smem_bytes = c->smem_bytes;
	out->dynamic_smem = sp->smem_kind == FT_SMEM_DYNAMIC ? c->smem_bytes : 0;
	out->combine_threads = c->combine_threads;
	out->combine_pdl = c->combine_threads ? c->combine_pdl : 0;
	for (int i = 0; i < 3; i++) {
		out->grid[i] = c->grid[i];
		/* combine_threads 0: no combine launch, so no combine grid either */
		out->combine_grid[i] = c->combine_threads ? c->combine_grid[i] : 0;
	}
	out->workspace_bytes = c->workspace_bytes;
	out->workspace_init = sp->workspace_init;
	out->num_splits = split >= 0 ? (int)c->values[split] : 1;
	return ft_space_plan(sp, shape, c->values, &out->plan, err);
}

int ft_candidate_build(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_candidate *c,
		       struct ft_build *out, struct ft_err *err)
{
	out->nmacros = ft_candidate_macros(sp, shape, c->values, c->define_values, c->smem_bytes, out->macros);
	return ft_candidate_launch(sp, shape, c, &out->launch, err);
}

int ft_candidate_eval(const struct ft_space *sp, const struct ft_shape *shape, const struct ft_arch *arch,
		      const long long *values, struct ft_candidate *c, struct ft_err *err)
{
	struct ft_enum *e = NULL;
	int rc;

	if (ft_enum_open(&e, sp, shape, arch, values, err))
		return -1;
	rc = ft_enum_next(e, c, err);
	ft_enum_close(e);
	if (rc == 0)
		return ft_error(err, FT_EFAIL,
				"space '%s': a fixed enumeration produced no candidate: this is a fatune bug", sp->name);
	return rc < 0 ? -1 : 0;
}
