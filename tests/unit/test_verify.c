/* test_verify.c - verify.c: statistics, the verdict, 16-bit decoding, the
 * relative L2 error and the fp64 attention (no GPU needed). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verify.h"

static void test_stats_odd(void **state)
{
	double x[] = { 5, 1, 4, 2, 3 };
	struct ft_stats st;

	assert_int_equal(ft_stats_compute(x, 5, &st), 0);
	assert_true(st.median == 3);
	assert_true(st.min == 1);
	assert_true(st.p90 == 5); /* rank ceil(4.5) = 5 */
	assert_true(fabs(st.spread - (5.0 - 1.0) / 3.0) < 1e-15);
	/* sorted in place */
	for (int i = 1; i < 5; i++)
		assert_true(x[i - 1] <= x[i]);
}

static void test_stats_even(void **state)
{
	double x[] = { 7, 3, 10, 1, 9, 2, 8, 4, 6, 5 };
	struct ft_stats st;

	assert_int_equal(ft_stats_compute(x, 10, &st), 0);
	assert_true(st.median == 5.5);
	assert_true(st.min == 1);
	assert_true(st.p90 == 9); /* rank 9 of 10: one outlier above is ignored */
	assert_true(fabs(st.spread - 8.0 / 5.5) < 1e-15);
}

static void test_stats_thirty(void **state)
{
	/* the default sample count: p90 is the 27th value, the top 3 are ignored */
	double x[30];
	struct ft_stats st;

	for (int i = 0; i < 30; i++)
		x[i] = 100 - i; /* 71 .. 100 */
	x[0] = 1e6;		/* one huge outlier */
	assert_int_equal(ft_stats_compute(x, 30, &st), 0);
	assert_true(st.min == 71);
	assert_true(st.p90 == 97);
	assert_true(st.median == 85.5);
}

static void test_stats_edges(void **state)
{
	double one[] = { 4.5 }, bad[] = { 1, NAN, 3 }, inf[] = { 1, INFINITY };
	struct ft_stats st;

	assert_int_equal(ft_stats_compute(one, 1, &st), 0);
	assert_true(st.median == 4.5 && st.min == 4.5 && st.p90 == 4.5 && st.spread == 0);
	assert_int_equal(ft_stats_compute(one, 0, &st), -1);
	assert_int_equal(ft_stats_compute(bad, 3, &st), -1);
	assert_int_equal(ft_stats_compute(inf, 2, &st), -1);
}

static void test_verdict(void **state)
{
	struct ft_job_result r;

	ft_job_result_init(&r);
	assert_int_equal(ft_verdict(1e-4, 0, 1e-3, &r), 1);
	assert_int_equal(r.status, FT_ST_OK);
	assert_string_equal(r.reason, "");
	assert_true(r.rel_err == 1e-4);

	/* exactly at the tolerance passes */
	assert_int_equal(ft_verdict(1e-3, 0, 1e-3, &r), 1);

	assert_int_equal(ft_verdict(0.002, 0, 0.001, &r), 0);
	assert_int_equal(r.status, FT_ST_WRONG_RESULT);
	assert_non_null(strstr(r.reason, "0.002"));
	assert_non_null(strstr(r.reason, "tolerance 0.001"));

	/* one NaN output fails even with a perfect rest */
	assert_int_equal(ft_verdict(0.0, 1, 1e-3, &r), 0);
	assert_int_equal(r.status, FT_ST_WRONG_RESULT);
	assert_int_equal(r.nonfinite, 1);
	assert_non_null(strstr(r.reason, "1 outputs are NaN"));

	/* NaN never passes, on either side */
	assert_int_equal(ft_verdict(NAN, 0, 1e-3, &r), 0);
	assert_int_equal(r.status, FT_ST_WRONG_RESULT);
	assert_int_equal(ft_verdict(1e-9, 0, NAN, &r), 0);
	assert_int_equal(ft_verdict(INFINITY, 0, INFINITY, &r), 1); /* inf <= inf: caller's choice */
	assert_int_equal(ft_verdict(1e-9, 0, -1, &r), 0);
}

static void test_decode(void **state)
{
	assert_true(ft_fp16_to_double(0x3c00) == 1.0);
	assert_true(ft_fp16_to_double(0xc000) == -2.0);
	assert_true(ft_fp16_to_double(0x0001) == ldexp(1, -24));
	assert_true(ft_fp16_to_double(0x8000) == 0.0);
	assert_true(ft_fp16_to_double(0x7bff) == 65504.0);
	assert_true(ft_fp16_to_double(0x3555) == 0.333251953125);
	assert_true(ft_fp16_to_double(0x0400) == ldexp(1, -14)); /* smallest normal */
	assert_true(isinf(ft_fp16_to_double(0x7c00)));
	assert_true(isnan(ft_fp16_to_double(0x7fff)));
	assert_true(ft_bf16_to_double(0x3f80) == 1.0);
	assert_true(ft_bf16_to_double(0xc040) == -3.0);
	assert_true(ft_bf16_to_double(0x3eaa) == 0.33203125);
	assert_true(isnan(ft_bf16_to_double(0x7fff)));
	assert_true(isinf(ft_bf16_to_double(0xff80)));

	/* the poison pattern is non-finite in both formats */
	assert_true(ft_u16_nonfinite(0x7fff, 0));
	assert_true(ft_u16_nonfinite(0x7fff, 1));
	assert_true(ft_u16_nonfinite(0xfc00, 0));
	assert_false(ft_u16_nonfinite(0x7bff, 0));
	assert_false(ft_u16_nonfinite(0x7f7f, 1));
	assert_false(ft_u16_nonfinite(0x7c00, 1)); /* a normal bf16 */
}

/* Every fp16 bit pattern decodes to the value the format defines: sign,
 * (1 + m/2^10) * 2^(e-15) for normals, m * 2^-24 for subnormals, inf, NaN. */
static void test_decode_fp16_exhaustive(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 65536; h++) {
		int e = (h >> 10) & 0x1f, m = h & 0x3ff;
		double want = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
		double got = ft_fp16_to_double((uint16_t)h);
		if (h & 0x8000)
			want = -want;
		if (!(got == want || (isnan(got) && isnan(want))))
			fail_msg("fp16 0x%04x decodes to %g, not %g", h, got, want);
	}
}

/* search and bench share these thresholds; a change must be deliberate */
static void test_tolerance(void **state)
{
	(void)state;
	assert_true(ft_tolerance(FT_FP16) == 2e-3);
	assert_true(ft_tolerance(FT_BF16) == 1e-2);
}

static void test_rel_l2(void **state)
{
	/* fp16: 1, 2, -0.5 */
	const uint16_t same[] = { 0x3c00, 0x4000, 0xb800 };
	const uint16_t off[] = { 0x3c00, 0x4100, 0xb800 };	/* 2 -> 2.5 */
	const uint16_t nan1[] = { 0x3c00, 0x7fff, 0xb800 };
	const float ref[] = { 1.0f, 2.0f, -0.5f }, zero[] = { 0, 0, 0 };
	long long bad = -1;
	double e;

	e = ft_rel_l2(same, 0, ref, 3, &bad);
	assert_true(e == 0.0);
	assert_int_equal(bad, 0);

	e = ft_rel_l2(off, 0, ref, 3, &bad);
	assert_true(fabs(e - 0.5 / sqrt(5.25)) < 1e-15);

	e = ft_rel_l2(nan1, 0, ref, 3, &bad);
	assert_int_equal(bad, 1);
	assert_true(isfinite(e)); /* over the finite outputs */

	/* reference all zero: the absolute norm of the output */
	e = ft_rel_l2(off, 0, zero, 3, &bad);
	assert_true(fabs(e - sqrt(1 + 6.25 + 0.25)) < 1e-15);

	/* bf16: 1, -3 */
	{
		const uint16_t b[] = { 0x3f80, 0xc040 };
		const float r2[] = { 1.0f, -3.0f };
		assert_true(ft_rel_l2(b, 1, r2, 2, &bad) == 0.0);
	}
}

/* S = 2, D = 2 by hand: q0 = (1,0), q1 = (0,1), k = identity, v0 = (1,2),
 * v1 = (3,-1); scores are 1/sqrt(2) on the diagonal and 0 elsewhere, so the
 * weights are sigmoid(1/sqrt 2) = 0.6697615493266569 and its complement. */
static void test_attention_hand(void **state)
{
	const double q[] = { 1, 0, 0, 1 }, k[] = { 1, 0, 0, 1 }, v[] = { 1, 2, 3, -1 };
	const double p = 0.6697615493266569, r = 0.3302384506733431;
	double o[4];

	ft_attention_cpu(q, k, v, 1, 1, 2, 2, 0, o);
	assert_true(fabs(o[0] - (p * 1 + r * 3)) < 1e-14);
	assert_true(fabs(o[1] - (p * 2 - r)) < 1e-14);
	assert_true(fabs(o[2] - (r * 1 + p * 3)) < 1e-14);
	assert_true(fabs(o[3] - (r * 2 - p)) < 1e-14);
	assert_true(fabs(o[0] - 1.6604769013466862) < 1e-14);

	/* causal, top-left: row 0 sees only key 0, row 1 is unchanged */
	ft_attention_cpu(q, k, v, 1, 1, 2, 2, 1, o);
	assert_true(o[0] == 1.0 && o[1] == 2.0);
	assert_true(fabs(o[2] - 2.3395230986533138) < 1e-14);
	assert_true(fabs(o[3] + 0.00928464797997064) < 1e-14);
}

/* Heads are independent, and equal V rows make the output that row whatever
 * the scores. */
static void test_attention_properties(void **state)
{
	enum { H = 2, S = 5, D = 3 };
	double q[H * S * D], k[H * S * D], v[H * S * D], o[H * S * D];
	unsigned x = 12345;

	for (int i = 0; i < S * D; i++) {
		x = x * 1103515245u + 12345u;
		q[i] = (double)(x >> 16) / 65536.0 - 0.5;
		x = x * 1103515245u + 12345u;
		k[i] = (double)(x >> 16) / 65536.0 - 0.5;
		v[i] = (double)(i % D) - 1.0; /* every row (-1, 0, 1) */
		q[S * D + i] = q[i];
		k[S * D + i] = k[i];
		v[S * D + i] = v[i];
	}
	for (int causal = 0; causal < 2; causal++) {
		ft_attention_cpu(q, k, v, 1, H, S, D, causal, o);
		for (int i = 0; i < S * D; i++) {
			assert_true(fabs(o[i] - v[i % D]) < 1e-14);
			assert_true(o[i] == o[S * D + i]);
		}
	}
	/* now make V vary: the last causal row equals the non-causal one (it sees
	 * every key), the first causal row equals v0 */
	for (int i = 0; i < S * D; i++)
		v[i] = (double)i;
	{
		double oc[H * S * D];
		ft_attention_cpu(q, k, v, 1, 1, S, D, 0, o);
		ft_attention_cpu(q, k, v, 1, 1, S, D, 1, oc);
		for (int t = 0; t < D; t++) {
			assert_true(fabs(oc[(S - 1) * D + t] - o[(S - 1) * D + t]) < 1e-12);
			assert_true(oc[t] == v[t]);
		}
		assert_true(fabs(o[0] - v[0]) > 1e-3); /* non-causal row 0 mixes keys */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_odd),	 cmocka_unit_test(test_stats_even),
		cmocka_unit_test(test_stats_thirty),	 cmocka_unit_test(test_stats_edges),
		cmocka_unit_test(test_verdict),		 cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_fp16_exhaustive), cmocka_unit_test(test_tolerance),
		cmocka_unit_test(test_rel_l2),		 cmocka_unit_test(test_attention_hand),
		cmocka_unit_test(test_attention_properties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
