/*
 * waste: padding-waste metrics of BucketServe (paper Eq. 2, 3 and 4).
 *
 * Pure functions over caller-owned arrays of sequence lengths (tokens); nothing is allocated
 * except by waste_* functions that say so.  Empty samples give NaN, documented per function.
 *
 *   Eq. 2  WasteRatio of one batch = (S_max - S_avg) / S_max
 *   Eq. 3  E[Waste] = sum_b integral_{L_b}^{U_b} (1 - S / U_b) f(S) dS, with f the empirical
 *          distribution of the given lengths: (1/n) * sum over samples of (1 - S / U_b(S)),
 *          U_b(S) the upper boundary of the bucket holding S
 *   Eq. 4  U_b* = E[S | L_b <= S < U_b], the conditional mean of the lengths in bucket b
 *
 * Buckets are given as boundaries b[0] < b[1] < ... < b[nb-1]; bucket j is [b[j], b[j+1]),
 * and the last is closed, [b[nb-2], b[nb-1]], like bs_manager's.
 */
#ifndef BS_WASTE_H
#define BS_WASTE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/util.h"

/* Eq. 2 for the batch LENS[0..n): NaN when n == 0, 0 when every length is 0. */
double waste_ratio(const uint32_t *lens, size_t n);

/* Accumulates Eq. 2 over batches.  Zero-initialise (or waste_acc_init) before use. */
struct waste_acc {
	uint64_t batches;
	uint64_t real_tokens;    /* sum of S over every batched sequence */
	uint64_t padded_tokens;  /* sum of N * S_max over batches */
	double ratio_sum;        /* sum of the per-batch Eq. 2 ratios (batches with S_max > 0) */
	uint64_t ratio_batches;
};
void waste_acc_init(struct waste_acc *a);
/* Adds one batch of N sequences with total SUM and longest SMAX tokens. */
void waste_acc_add(struct waste_acc *a, uint64_t n, uint64_t sum, uint64_t smax);
void waste_acc_add_lens(struct waste_acc *a, const uint32_t *lens, size_t n);
/* Token-weighted mean of Eq. 2: each batch's ratio weighted by its padded tokens N * S_max,
 * which equals 1 - real / padded (the padded fraction of all tokens).  NaN without tokens. */
double waste_acc_weighted(const struct waste_acc *a);
/* Unweighted mean of the per-batch ratios.  NaN without batches. */
double waste_acc_mean(const struct waste_acc *a);

/* Checks boundaries (nb >= 2, strictly increasing); -1 with ERR naming FIELD otherwise. */
int waste_check_bounds(const uint32_t *b, size_t nb, const char *field, struct bs_err *err);
/* Index of the bucket holding LEN, or -1 when LEN < b[0] or LEN > b[nb-1]. */
long waste_bucket_of(const uint32_t *b, size_t nb, uint32_t len);

/* Eq. 3 over the empirical distribution of LENS[0..n) (a length of 0 in a bucket with
 * U_b = 0 cannot happen: boundaries increase from b[0] >= 0).  *OUT is NaN when n == 0.  A
 * length outside [b[0], b[nb-1]] is an error (code 3). */
int waste_expected(const uint32_t *b, size_t nb, const uint32_t *lens, size_t n, double *out,
		   struct bs_err *err);
/* Eq. 4 per bucket: OUT[j] (nb - 1 values) = mean of the lengths in bucket j, NaN when it
 * holds none; COUNT (may be NULL) receives the number of lengths per bucket. */
int waste_cond_mean(const uint32_t *b, size_t nb, const uint32_t *lens, size_t n, double *out,
		    uint64_t *count, struct bs_err *err);

#endif
