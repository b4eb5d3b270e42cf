/* sampling.c - when a job's timing loop ends (see sampling.h). */
#include "run/sampling.h"

#include <math.h>

int ft_median_ci_rank(int n, double coverage)
{
	double below = 0, term = 1; /* P(Bin(n, 1/2) < k) and C(n, k - 1), times 2^-n below */
	int k = 0;

	if (n < 1 || n > FT_RAW_SAMPLES_MAX)
		return 0;
	/* P(Bin < k + 1) = P(Bin < k) + C(n, k) / 2^n; grow k while it keeps the coverage */
	for (int j = 0; 2 * (j + 1) <= n + 1; j++) {
		below += ldexp(term, -n);
		if (1.0 - 2.0 * below < coverage)
			break;
		k = j + 1;
		term = term * (n - j) / (j + 1);
	}
	return k;
}

static int order_stat_ok(const struct ft_job *job, const double *us, int n)
{
	double x[FT_RAW_SAMPLES_MAX], med;
	int k;

	if (n < FT_SAMPLES_STABLE_MIN || n > FT_RAW_SAMPLES_MAX)
		return 0;
	k = ft_median_ci_rank(n, FT_SAMPLES_COVERAGE);
	if (k < 1)
		return 0;
	for (int i = 0; i < n; i++) { /* insertion sort: n <= 64 */
		int j = i;
		while (j > 0 && x[j - 1] > us[i]) {
			x[j] = x[j - 1];
			j--;
		}
		x[j] = us[i];
	}
	for (int i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	med = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	return med > 0 && (x[n - k] - x[k - 1]) <= job->stable_rel * med;
}

enum ft_samples_stop ft_samples_stop(const struct ft_job *job, const double *us, int n)
{
	if (job->quick_samples > 0 && n == job->quick_samples && job->cut_above_us > 0) {
		double min = us[0];
		int finite = 1;

		for (int i = 0; i < n; i++) {
			finite &= isfinite(us[i]) != 0;
			if (us[i] < min)
				min = us[i];
		}
		/* a non-finite sample is no time: the loop goes on, and its
		 * statistics make the job crashed, never cut */
		if (finite && min > job->cut_above_us)
			return FT_SAMPLES_CUT;
	}
	if (job->stable_rel > 0 && order_stat_ok(job, us, n))
		return FT_SAMPLES_STABLE;
	return FT_SAMPLES_ALL;
}

int ft_samples_queue(const struct ft_job *job, int done, int planned, int ahead)
{
	int upto;

	if (job->quick_samples > 0 && done < job->quick_samples)
		upto = job->quick_samples;
	else if (job->stable_rel > 0)
		upto = done + 2 > FT_SAMPLES_STABLE_MIN ? done + 2 : FT_SAMPLES_STABLE_MIN;
	else
		upto = planned;
	if (upto > done + ahead)
		upto = done + ahead;
	if (upto < done + 1)
		upto = done + 1;
	return upto < planned ? upto : planned;
}
