/*
 * capacity: see capacity.h.
 */
#include "sim/capacity.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int probe(cap_attain_fn f, void *ctx, double rate, struct cap_result *r, double *a,
		 struct bs_err *err)
{
	if (f(ctx, rate, a, err))
		return -1;
	r->curve = xrealloc(r->curve, (r->n + 1) * sizeof *r->curve);
	r->curve[r->n++] = (struct cap_point){rate, *a};
	return 0;
}

static int cmp_point(const void *a, const void *b)
{
	const struct cap_point *x = a, *y = b;
	return (x->rate > y->rate) - (x->rate < y->rate);
}

int capacity_search(const struct cap_opts *o, cap_attain_fn f, void *ctx, struct cap_result *r,
		    struct bs_err *err)
{
	memset(r, 0, sizeof *r);
	double a, rate = o->rate0, lo = NAN, hi = NAN;
	if (probe(f, ctx, rate, r, &a, err))
		return -1;
	if (a >= o->target) {
		lo = rate;
		while (isnan(hi)) {
			rate *= 2;
			if (rate > o->rate_max)
				return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "--rate-max",
					       "attainment still %.4g at %.6g requests/s: no capacity "
					       "below %.6g requests/s", a, lo, o->rate_max);
			if (probe(f, ctx, rate, r, &a, err))
				return -1;
			if (a >= o->target)
				lo = rate;
			else
				hi = rate;
		}
	} else {
		hi = rate;
		while (isnan(lo)) {
			rate /= 2;
			if (rate < o->rate_min)
				return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "--target",
					       "attainment %.4g < %.4g even at %.6g requests/s", a,
					       o->target, hi);
			if (probe(f, ctx, rate, r, &a, err))
				return -1;
			if (a >= o->target)
				lo = rate;
			else
				hi = rate;
		}
	}
	while (hi - lo > o->rel_tol * hi) {
		rate = (lo + hi) / 2;
		if (probe(f, ctx, rate, r, &a, err))
			return -1;
		if (a >= o->target)
			lo = rate;
		else
			hi = rate;
	}
	r->rate = lo;
	r->lo = lo;
	r->hi = hi;
	qsort(r->curve, r->n, sizeof *r->curve, cmp_point);
	return 0;
}

void cap_result_release(struct cap_result *r)
{
	free(r->curve);
	memset(r, 0, sizeof *r);
}

void capacity_mean_ci(const double *x, size_t n, double *mean, double *half)
{
	*mean = n ? gsl_stats_mean(x, 1, n) : NAN;
	*half = 0;
	if (n >= 2)
		*half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * gsl_stats_sd(x, 1, n) /
			sqrt((double)n);
}
