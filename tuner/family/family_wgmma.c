/* family_wgmma.c - Hopper kernels: wgmma from shared memory, TMA loads, warp specialization.
 *
 * wgmma, setmaxnreg and the TMA multicast forms are sm_90a features: they exist
 * on sm_90 only (not on sm_100 or sm_120) and NVRTC must target "sm_90a". The
 * kernel reads Q, K and V through TMA descriptors the worker encodes per
 * candidate (fatune_abi.h): a box of 64 elements of D (128 bytes: one 128-byte
 * swizzle row, so D = 128 takes two boxes) by 64 query rows for Q (one
 * consumer warpgroup's m64 row tile) and BLOCK_N keys for K and V; O is stored
 * without TMA (docs/kernel_sm90.md, "What the host must do"). The space must
 * have those parameters and speak ABI v2.
 */
#include "space/family.h"

#include "space/space.h"

/* 16-bit elements per 128-byte swizzle row: the box width along D. */
#define BOX_COLS 64
#define SWIZZLE_BYTES 128
/* query rows per consumer warpgroup: the M of wgmma m64nNk16 */
#define Q_BOX_ROWS 64

static const char *wgmma_unsupported(const struct ft_arch *a)
{
	return a->cc == 90 ? NULL : "needs Hopper (sm_90): wgmma and TMA are sm_90a instructions";
}

static const char *wgmma_nvrtc_arch(const struct ft_arch *a)
{
	(void)a;
	return "sm_90a";
}

static int wgmma_check_space(const struct ft_space *sp, struct ft_err *err)
{
	static const char *const need[] = { "BLOCK_M", "BLOCK_N" };

	if (sp->abi != 2)
		return ft_error(err, FT_EINPUT,
				"%s: key 'template.abi': family 'wgmma' passes TMA descriptors, which "
				"only ABI v2 has: add 'abi: 2'",
				sp->path);
	for (int i = 0; i < 2; i++) {
		int p = ft_space_param(sp, need[i]);
		if (p < 0 || sp->params[p].kind != FT_PARAM_COMPILE)
			return ft_error(err, FT_EINPUT,
					"%s: key 'parameters': family 'wgmma' sizes its TMA boxes by "
					"the compile-time parameter %s: add it",
					sp->path, need[i]);
	}
	return 0;
}

static int wgmma_plan(const struct ft_space *sp, const struct ft_shape *shape,
		      const long long *values, struct ft_launch_plan *plan, struct ft_err *err)
{
	long long bm = values[ft_space_param(sp, "BLOCK_M")];
	long long bn = values[ft_space_param(sp, "BLOCK_N")];

	(void)shape;
	if (bm < 1 || bm > 256 || bn < 1 || bn > 256)
		return ft_error(err, FT_EINPUT,
				"BLOCK_M %lld / BLOCK_N %lld: a TMA box holds 1 to 256 rows", bm, bn);
	plan->tma[FT_TENSOR_Q] = (struct ft_tma_box){ Q_BOX_ROWS, BOX_COLS, SWIZZLE_BYTES };
	plan->tma[FT_TENSOR_K] = (struct ft_tma_box){ (int)bn, BOX_COLS, SWIZZLE_BYTES };
	plan->tma[FT_TENSOR_V] = (struct ft_tma_box){ (int)bn, BOX_COLS, SWIZZLE_BYTES };
	return 0;
}

const struct ft_family ft_family_wgmma = {
	.name = "wgmma",
	.summary = "Hopper: wgmma, TMA, warp-specialized producer/consumers (sm_90a)",
	.default_spaces = { "search_spaces/attention_sm90.yaml" },
	.arch_specific = 1,
	.unsupported = wgmma_unsupported,
	.nvrtc_arch = wgmma_nvrtc_arch,
	.check_space = wgmma_check_space,
	.plan = wgmma_plan,
};
