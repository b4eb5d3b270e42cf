/* family_cuda.c - kernels you bring, with no family of their own: the default.
 *
 * A space that names no template.family gets this one: a plain CUDA kernel
 * (scalar, mma.sync or anything else the arch compiles), recorded as family
 * "cuda" rather than as one of fatune's templates. Like mma it needs nothing
 * beyond the space: any arch of the table (sm_80 and newer), compiled for
 * that arch itself, params by value, no TMA descriptors; no shipped space.
 */
#include "space/family.h"

static const char *cuda_unsupported(const struct ft_arch *a)
{
	return a->cc >= 80 ? NULL : "needs sm_80 or newer";
}

static const char *cuda_nvrtc_arch(const struct ft_arch *a)
{
	return a->name;
}

const struct ft_family ft_family_cuda = {
	.name = "cuda",
	.summary = "plain CUDA kernels you bring (the default for a space that names no family): any arch",
	.unsupported = cuda_unsupported,
	.nvrtc_arch = cuda_nvrtc_arch,
};
