/* verify.h - the arithmetic of verification and timing, on the CPU.
 *
 * Statistics of timing samples, the pass/fail verdict, exact decoding of fp16
 * and bf16, the relative L2 error of an output against the reference, and an
 * fp64 attention for tests and the worker's self-test. No GPU, no I/O: the
 * worker (evaluate.c) feeds it what it copied back.
 */
#ifndef FT_VERIFY_H
#define FT_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "run/job.h"

/* The largest relative L2 error against the GPU fp32 reference that passes:
 * 2e-3 for fp16, 1e-2 for bf16 (see verify.c for why). */
double ft_tolerance(enum ft_dtype t);

struct ft_stats {
	double median;	/* middle value; the mean of the two middle values when n is even */
	double min;
	double p90;	/* nearest rank: the ceil(0.9 n)-th smallest */
	double spread;	/* (p90 - min) / median */
};

/* Statistics of x[0..n-1] (sorted in place). -1 when n < 1 or a value is not
 * finite. */
int ft_stats_compute(double *x, int n, struct ft_stats *out);

/* The verdict of a verification: FT_ST_WRONG_RESULT when nonfinite > 0 or when
 * rel_err is not <= tolerance (so NaN never passes), with a reason quoting the
 * numbers; else FT_ST_OK. Sets res->status, res->reason, res->rel_err and
 * res->nonfinite. Returns 1 when ok. */
int ft_verdict(double rel_err, long long nonfinite, double tolerance, struct ft_job_result *res);

/* The whole output's relative error dilutes a local one: one wrong tile of 64
 * rows in 16,384 moves it by 1/16 of that tile's error. So the output is also
 * judged in windows of FT_WINDOW_ROWS consecutive rows (of D outputs each, in
 * the output's layout): every window's relative L2 error must be <=
 * FT_WINDOW_FACTOR x the tolerance. Legitimate rounding is about as large in
 * a window as in the whole (0.2 of the tolerance on the H200's searches), so
 * the factor leaves it some 25x room and still catches a wrong tile, which
 * lands at 10-25x the tolerance (docs/timing.md, "Verification"). */
#define FT_WINDOW_ROWS 64
#define FT_WINDOW_FACTOR 5.0

/* The window verdict, after ft_verdict passed: FT_ST_WRONG_RESULT when
 * window_err (the worst window's relative L2 error; its absolute one when that
 * window's reference is all 0) is not <= FT_WINDOW_FACTOR * tolerance, with a
 * reason that names the window's rows (first_row .. first_row + 63, counted in
 * the output's layout) and both errors. Returns 1 when ok (res untouched). */
int ft_window_verdict(double window_err, long long first_row, double tolerance, struct ft_job_result *res);

/* Decoding of the 16-bit formats (exact). */
double ft_fp16_to_double(uint16_t h);
double ft_bf16_to_double(uint16_t h);
/* 1 when the pattern is NaN or infinite in its format. */
int ft_u16_nonfinite(uint16_t h, int bf16);

/* Relative L2 error ||o - ref|| / ||ref|| of n 16-bit outputs against ref,
 * summed in fp64 over the finite outputs only; *nonfinite counts the others.
 * When ||ref|| is 0 the absolute error ||o|| is returned. The CPU model of
 * reference.cu's fatune_ref_check, which the worker runs instead (the same
 * sums, on the GPU). */
/* The error from the sums: num = sum (o - ref)^2, den = sum ref^2 and onorm =
 * sum o^2 over the finite outputs; sqrt(onorm) when den is 0. */
double ft_rel_l2_sums(double num, double den, double onorm);

double ft_rel_l2(const uint16_t *o, int bf16, const float *ref, size_t n, long long *nonfinite);

/* The worst window of `window` consecutive outputs (the last may be shorter):
 * its relative L2 error over its finite outputs (its absolute error when its
 * reference is all 0), and its index in *worst (the first of equals). The CPU
 * model of fatune_ref_check's worst_window. */
double ft_window_l2(const uint16_t *o, int bf16, const float *ref, size_t n, size_t window, long long *worst);

/* Element strides (batch, head, row) of Q and O (kv == 0) or K and V (kv ==
 * 1) laid out densely as sh->layout says; D is contiguous. */
void ft_shape_strides(const struct ft_shape *sh, int kv, long long st[3]);

/* fp64 attention over dense arrays laid out as sh says (Q, O [B, H, S, D],
 * K, V [B, H_kv, S_kv, D] in sh->layout): out = softmax(q k^T / sqrt(D)) v,
 * query head h reading KV head h / (H / H_kv), bottom-right causal when
 * sh->causal (a row with no key is 0). For tests and the self-test
 * (O(B H S S_kv D)). */
void ft_attention_cpu(const double *q, const double *k, const double *v, const struct ft_shape *sh,
		      double *out);

#endif
