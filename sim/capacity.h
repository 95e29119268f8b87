/*
 * capacity: the highest arrival rate at which a system's SLO attainment stays at or above a
 * target, by bracketing and bisection on the rate.
 *
 * The caller supplies attainment(rate) for one seed: with common random numbers (the same seed
 * at every rate, so a Poisson workload's arrival times are the same exponential draws scaled
 * by 1/rate and its lengths are identical) attainment falls with the rate without sampling
 * noise between the probes, and bisection is sound.
 *
 * Search: probe rate0; while it meets the target double the rate (bracket from below), while
 * it misses halve it (bracket from above); then bisect [lo, hi] (lo meets, hi misses) until
 * hi - lo <= rel_tol * hi.  The capacity reported is lo: the highest probed rate that met the
 * target.  Every probe is kept (the measured attainment curve, sorted by rate).
 */
#ifndef BS_CAPACITY_H
#define BS_CAPACITY_H

#include <stddef.h>

#include "sim/util.h"

typedef int (*cap_attain_fn)(void *ctx, double rate, double *attainment, struct bs_err *err);

struct cap_opts {
	double target;     /* attainment to keep, in (0, 1] */
	double rate0;      /* first probe, requests/s */
	double rel_tol;    /* stop when hi - lo <= rel_tol * hi */
	double rate_min, rate_max;   /* the bracket search gives up outside [rate_min, rate_max] */
};

struct cap_point {
	double rate, attainment;
};

struct cap_result {
	double rate;       /* capacity: the highest probed rate meeting the target */
	double lo, hi;     /* lo meets, hi misses (hi - lo <= rel_tol * hi) */
	struct cap_point *curve;     /* every probe, sorted by rate */
	size_t n;
};

/* Returns 0, or -1 with ERR (the callback's error, or no rate in [rate_min, rate_max] bracketing
 * the target). */
int capacity_search(const struct cap_opts *o, cap_attain_fn f, void *ctx, struct cap_result *r,
		    struct bs_err *err);
void cap_result_release(struct cap_result *r);

/* Mean and the half-width of its two-sided 95 % Student-t interval over X[0..n) (0 when n < 2). */
void capacity_mean_ci(const double *x, size_t n, double *mean, double *half);

#endif
