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

#include "run/verify.h"

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
	/* the device check's sums (fatune_ref_check) give the same number */
	assert_true(fabs(ft_rel_l2_sums(1.0, 4.0, 9.0) - 0.5) < 1e-15);
	assert_true(fabs(ft_rel_l2_sums(0.0, 0.0, 4.0) - 2.0) < 1e-15);
	assert_true(isnan(ft_rel_l2_sums(NAN, 4.0, 1.0)));
}

/* fp32 -> bf16 by truncation (exact for the values below) */
static uint16_t bf16_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint16_t)(u >> 16);
}

/* One wrong window of a large output: the whole output's error passes, the
 * window's does not (the case of the Q-release bug: one wrong 64-row tile). */
static void test_window(void **state)
{
	enum { W = 64 * 8, WINDOWS = 1024, N = W * WINDOWS };
	static uint16_t o[N];
	static float ref[N];
	struct ft_job_result r;
	const double tol = ft_tolerance(FT_BF16);
	long long bad, worst = -1;
	double whole, win;

	(void)state;
	for (size_t i = 0; i < N; i++) { /* bf16 values that are exact: ref = o */
		ref[i] = (float)((int)(i % 13) - 6) * 0.125f;
		o[i] = bf16_of(ref[i]);
	}
	assert_true(ft_window_l2(o, 1, ref, N, W, &worst) == 0.0);
	assert_int_equal(worst, 0);
	/* window 700 scaled by 1.125 (exact in bf16): an error of 1/8 of the
	 * window's norm, 1/256 of the whole output's */
	for (size_t i = 700 * (size_t)W; i < 701 * (size_t)W; i++) {
		o[i] = bf16_of(1.125f * ref[i]);
	}
	whole = ft_rel_l2(o, 1, ref, N, &bad);
	win = ft_window_l2(o, 1, ref, N, W, &worst);
	assert_true(fabs(whole - 0.125 / 32) < 1e-4); /* windows of near-equal norms */
	assert_true(fabs(win - 0.125) < 1e-12);
	assert_int_equal(worst, 700);

	ft_job_result_init(&r);
	assert_int_equal(ft_verdict(whole, bad, tol, &r), 1); /* the whole output passes... */
	assert_int_equal(ft_window_verdict(win, worst * FT_WINDOW_ROWS, tol, &r), 0); /* ...the window does not */
	assert_int_equal(r.status, FT_ST_WRONG_RESULT);
	assert_non_null(strstr(r.reason, "output rows 44800-44863"));
	assert_non_null(strstr(r.reason, "error 0.125, over 5 x the tolerance 0.01 (the whole output: 0.003"));

	/* at the limit passes; NaN never does; a reference window of zeros
	 * judges the output's absolute norm */
	ft_job_result_init(&r);
	assert_int_equal(ft_window_verdict(FT_WINDOW_FACTOR * tol, 0, tol, &r), 1);
	assert_int_equal(r.status, FT_ST_OK);
	assert_int_equal(ft_window_verdict(NAN, 0, tol, &r), 0);
	{
		const uint16_t z[] = { 0x3f80, 0, 0, 0 }; /* 1, 0 | 0, 0 */
		const float zr[] = { 0, 0, 0, 0 };
		assert_true(ft_window_l2(z, 1, zr, 4, 2, &worst) == 1.0);
		assert_int_equal(worst, 0);
		assert_true(ft_window_l2(z, 1, zr, 3, 2, &worst) == 1.0); /* a short last window */
	}
}

/* A self-attention shape in bhsd. */
static struct ft_shape mk(int b, int h, int s, int d, int causal)
{
	struct ft_shape sh = { .b = b, .h = h, .s = s, .d = d, .causal = causal, .s_kv = s, .h_kv = h };
	return sh;
}

static void fill_random(double *x, size_t n, unsigned *seed)
{
	for (size_t i = 0; i < n; i++) {
		*seed = *seed * 1103515245u + 12345u;
		x[i] = (double)(*seed >> 16) / 65536.0 - 0.5;
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

	ft_attention_cpu(q, k, v, &(struct ft_shape){ .b = 1, .h = 1, .s = 2, .d = 2, .s_kv = 2, .h_kv = 1 }, o);
	assert_true(fabs(o[0] - (p * 1 + r * 3)) < 1e-14);
	assert_true(fabs(o[1] - (p * 2 - r)) < 1e-14);
	assert_true(fabs(o[2] - (r * 1 + p * 3)) < 1e-14);
	assert_true(fabs(o[3] - (r * 2 - p)) < 1e-14);
	assert_true(fabs(o[0] - 1.6604769013466862) < 1e-14);

	/* causal, top-left: row 0 sees only key 0, row 1 is unchanged */
	ft_attention_cpu(q, k, v, &(struct ft_shape){ .b = 1, .h = 1, .s = 2, .d = 2, .causal = 1, .s_kv = 2, .h_kv = 1 }, o);
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
		struct ft_shape sh = mk(1, H, S, D, causal);
		ft_attention_cpu(q, k, v, &sh, o);
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
		struct ft_shape s0 = mk(1, 1, S, D, 0), s1 = mk(1, 1, S, D, 1);
		ft_attention_cpu(q, k, v, &s0, o);
		ft_attention_cpu(q, k, v, &s1, oc);
		for (int t = 0; t < D; t++) {
			assert_true(fabs(oc[(S - 1) * D + t] - o[(S - 1) * D + t]) < 1e-12);
			assert_true(oc[t] == v[t]);
		}
		assert_true(fabs(o[0] - v[0]) > 1e-3); /* non-causal row 0 mixes keys */
	}
}

/* Grouped-query heads: H = 4 over H_kv = 2 gives what the same problem gives
 * with each KV head copied for the two query heads that read it. */
static void test_attention_gqa(void **state)
{
	enum { H = 4, HKV = 2, S = 3, SKV = 7, D = 4 };
	double q[H * S * D], k[HKV * SKV * D], v[HKV * SKV * D];
	double k4[H * SKV * D], v4[H * SKV * D], o[H * S * D], o4[H * S * D];
	struct ft_shape g = { .b = 1, .h = H, .s = S, .d = D, .s_kv = SKV, .h_kv = HKV };
	struct ft_shape full = g;
	unsigned seed = 7;

	full.h_kv = H;
	fill_random(q, H * S * D, &seed);
	fill_random(k, HKV * SKV * D, &seed);
	fill_random(v, HKV * SKV * D, &seed);
	for (int h = 0; h < H; h++)
		for (int i = 0; i < SKV * D; i++) {
			k4[h * SKV * D + i] = k[(h / (H / HKV)) * SKV * D + i];
			v4[h * SKV * D + i] = v[(h / (H / HKV)) * SKV * D + i];
		}
	for (int causal = 0; causal < 2; causal++) {
		g.causal = full.causal = causal;
		ft_attention_cpu(q, k, v, &g, o);
		ft_attention_cpu(q, k4, v4, &full, o4);
		for (int i = 0; i < H * S * D; i++)
			assert_true(o[i] == o4[i]);
	}
}

/* Bottom-right causal: S_q queries over S_kv keys are the last S_q rows of the
 * S_kv x S_kv causal problem; with S_q > S_kv the first rows see no key and
 * are 0 (not NaN). */
static void test_attention_bottom_right(void **state)
{
	enum { SKV = 6, D = 3 };
	double q[SKV * D], k[SKV * D], v[SKV * D], full[SKV * D], part[SKV * D];
	struct ft_shape sq = { .b = 1, .h = 1, .s = 2, .d = D, .causal = 1, .s_kv = SKV, .h_kv = 1 };
	struct ft_shape sf = mk(1, 1, SKV, D, 1);
	unsigned seed = 99;

	fill_random(q, SKV * D, &seed);
	fill_random(k, SKV * D, &seed);
	fill_random(v, SKV * D, &seed);
	ft_attention_cpu(q, k, v, &sf, full);
	ft_attention_cpu(q + (SKV - 2) * D, k, v, &sq, part);
	for (int i = 0; i < 2 * D; i++)
		assert_true(fabs(part[i] - full[(SKV - 2) * D + i]) < 1e-15);
	/* 6 queries over 2 keys: rows 0..3 see none */
	{
		struct ft_shape over = { .b = 1, .h = 1, .s = SKV, .d = D, .causal = 1, .s_kv = 2, .h_kv = 1 };
		ft_attention_cpu(q, k, v, &over, part);
		for (int i = 0; i < 4 * D; i++)
			assert_true(part[i] == 0.0);
		for (int i = 4 * D; i < SKV * D; i++)
			assert_true(isfinite(part[i]) && part[i] != 0.0);
	}
}

/* bshd is bhsd with heads and rows swapped in memory: permuted inputs give the
 * permuted output. */
static void test_attention_layout(void **state)
{
	enum { B = 2, H = 2, S = 3, D = 2 };
	const int n = B * H * S * D;
	double q[B * H * S * D], k[B * H * S * D], v[B * H * S * D], o[B * H * S * D];
	double qt[B * H * S * D], kt[B * H * S * D], vt[B * H * S * D], ot[B * H * S * D];
	struct ft_shape a = mk(B, H, S, D, 1), t = a;
	long long sa[3], st[3];
	unsigned seed = 3;

	t.layout = FT_LAYOUT_BSHD;
	fill_random(q, n, &seed);
	fill_random(k, n, &seed);
	fill_random(v, n, &seed);
	ft_shape_strides(&a, 0, sa);
	ft_shape_strides(&t, 0, st);
	assert_true(st[0] == S * H * D && st[1] == D && st[2] == H * D);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
			for (int s = 0; s < S; s++)
				for (int d = 0; d < D; d++) {
					long long from = b * sa[0] + h * sa[1] + s * sa[2] + d;
					long long to = b * st[0] + h * st[1] + s * st[2] + d;
					qt[to] = q[from];
					kt[to] = k[from];
					vt[to] = v[from];
				}
	ft_attention_cpu(q, k, v, &a, o);
	ft_attention_cpu(qt, kt, vt, &t, ot);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
			for (int s = 0; s < S; s++)
				for (int d = 0; d < D; d++)
					assert_true(ot[b * st[0] + h * st[1] + s * st[2] + d] ==
						    o[b * sa[0] + h * sa[1] + s * sa[2] + d]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_odd),	 cmocka_unit_test(test_stats_even),
		cmocka_unit_test(test_stats_thirty),	 cmocka_unit_test(test_stats_edges),
		cmocka_unit_test(test_verdict),		 cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_fp16_exhaustive), cmocka_unit_test(test_tolerance),
		cmocka_unit_test(test_rel_l2),		 cmocka_unit_test(test_window),
		cmocka_unit_test(test_attention_hand),
		cmocka_unit_test(test_attention_properties),
		cmocka_unit_test(test_attention_gqa),	 cmocka_unit_test(test_attention_bottom_right),
		cmocka_unit_test(test_attention_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
