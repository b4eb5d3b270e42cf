/* family_mma.c - the shipped mma.sync template (search_spaces/attention.yaml).
 *
 * Needs nothing beyond what the space says: any arch of fatune's table (all
 * have mma.sync m16n8k16, sm_80 and newer), compiled for that arch itself,
 * params by value, no TMA descriptors.
 */
#include "space/family.h"

static const char *mma_unsupported(const struct ft_arch *a)
{
	return a->cc >= 80 ? NULL : "needs sm_80 or newer";
}

static const char *mma_nvrtc_arch(const struct ft_arch *a)
{
	return a->name;
}

const struct ft_family ft_family_mma = {
	.name = "mma",
	.summary = "the shipped mma.sync template (FlashAttention-2 style): any arch",
	/* the decode space only for decode steps (its applies_to) */
	.default_spaces = { "search_spaces/attention.yaml", "search_spaces/attention_decode.yaml" },
	.unsupported = mma_unsupported,
	.nvrtc_arch = mma_nvrtc_arch,
};
