/* warp_softmax.cuh - a header of tests/kernels/cxx_template.cu, found through the
 * space's compile.include (tests/spaces/cxx_template.yaml: `include: [../kernels/include]`).
 *
 * The online-softmax state of one query row, split over the lanes of a warp:
 * each lane folds in its own keys, and merge() combines the lanes' states with
 * cooperative_groups shuffles.
 */
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/std/limits>

namespace byo {

namespace cg = cooperative_groups;

template <int DIMS>
struct row_state {
	float m = -cuda::std::numeric_limits<float>::infinity();	/* running max */
	float l = 0.0f;							/* running sum */
	float acc[DIMS] = {};						/* running output */

	/* folds in one key of score s and value row v */
	template <typename LoadV>
	__device__ void add(float s, LoadV v)
	{
		const float m_new = fmaxf(m, s);
		const float corr = __expf(m - m_new), e = __expf(s - m_new);

		l = l * corr + e;
#pragma unroll
		for (int d = 0; d < DIMS; d++)
			acc[d] = acc[d] * corr + e * v(d);
		m = m_new;
	}

	/* every lane ends with the whole row's state */
	__device__ void merge(const cg::thread_block_tile<32> &warp)
	{
		const float m_all = cg::reduce(warp, m, cg::greater<float>());
		const float corr = m == m_all ? 1.0f : __expf(m - m_all);	/* -inf - -inf is NaN */

		l = cg::reduce(warp, l * corr, cg::plus<float>());
#pragma unroll
		for (int d = 0; d < DIMS; d++)
			acc[d] = cg::reduce(warp, acc[d] * corr, cg::plus<float>());
		m = m_all;
	}
};

} /* namespace byo */
