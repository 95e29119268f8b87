/*
 * waste: padding-waste metrics (Eq. 2, 3, 4).  See waste.h.
 */
#include "analysis/waste.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double waste_ratio(const uint32_t *lens, size_t n)
{
	if (n == 0)
		return NAN;
	uint64_t sum = 0, smax = 0;
	for (size_t i = 0; i < n; i++) {
		sum += lens[i];
		if (lens[i] > smax)
			smax = lens[i];
	}
	if (smax == 0)
		return 0.0;
	double avg = (double)sum / (double)n;
	return ((double)smax - avg) / (double)smax;
}

void waste_acc_init(struct waste_acc *a)
{
	memset(a, 0, sizeof *a);
}

void waste_acc_add(struct waste_acc *a, uint64_t n, uint64_t sum, uint64_t smax)
{
	if (n == 0)
		return;
	a->batches++;
	a->real_tokens += sum;
	a->padded_tokens += n * smax;
	if (smax > 0) {
		/* An unpadded batch (every batch of one) adds its exact ratio 0 without dividing. */
		if (sum != n * smax)
			a->ratio_sum += ((double)smax - (double)sum / (double)n) / (double)smax;
		a->ratio_batches++;
	}
}

void waste_acc_add_lens(struct waste_acc *a, const uint32_t *lens, size_t n)
{
	uint64_t sum = 0, smax = 0;
	for (size_t i = 0; i < n; i++) {
		sum += lens[i];
		if (lens[i] > smax)
			smax = lens[i];
	}
	waste_acc_add(a, n, sum, smax);
}

double waste_acc_weighted(const struct waste_acc *a)
{
	if (a->padded_tokens == 0)
		return NAN;
	return (double)(a->padded_tokens - a->real_tokens) / (double)a->padded_tokens;
}

double waste_acc_mean(const struct waste_acc *a)
{
	return a->ratio_batches ? a->ratio_sum / (double)a->ratio_batches : NAN;
}

int waste_check_bounds(const uint32_t *b, size_t nb, const char *field, struct bs_err *err)
{
	if (nb < 2)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, field, "expected at least 2 boundaries");
	for (size_t i = 1; i < nb; i++)
		if (b[i] <= b[i - 1])
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, field,
				       "boundaries must increase strictly (%u after %u)", b[i],
				       b[i - 1]);
	return 0;
}

long waste_bucket_of(const uint32_t *b, size_t nb, uint32_t len)
{
	if (nb < 2 || len < b[0] || len > b[nb - 1])
		return -1;
	size_t lo = 0, hi = nb - 1; /* last j in [0, nb-1) with b[j] <= len */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (b[mid] <= len)
			lo = mid;
		else
			hi = mid;
	}
	return (long)lo;
}

int waste_expected(const uint32_t *b, size_t nb, const uint32_t *lens, size_t n, double *out,
		   struct bs_err *err)
{
	*out = NAN;
	if (waste_check_bounds(b, nb, "boundaries", err) < 0)
		return -1;
	if (n == 0)
		return 0;
	double acc = 0;
	for (size_t i = 0; i < n; i++) {
		long j = waste_bucket_of(b, nb, lens[i]);
		if (j < 0)
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "length",
				       "length %u outside the buckets [%u, %u]", lens[i], b[0],
				       b[nb - 1]);
		acc += 1.0 - (double)lens[i] / (double)b[j + 1];
	}
	*out = acc / (double)n;
	return 0;
}

int waste_cond_mean(const uint32_t *b, size_t nb, const uint32_t *lens, size_t n, double *out,
		    uint64_t *count, struct bs_err *err)
{
	if (waste_check_bounds(b, nb, "boundaries", err) < 0)
		return -1;
	uint64_t cnt_local[64];
	uint64_t *cnt = count ? count : nb - 1 <= 64 ? cnt_local : xcalloc(nb - 1, sizeof *cnt);
	double *sum = out;
	for (size_t j = 0; j + 1 < nb; j++) {
		cnt[j] = 0;
		sum[j] = 0;
	}
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		long j = waste_bucket_of(b, nb, lens[i]);
		if (j < 0) {
			rc = bs_errf(err, BS_EXIT_INPUT, NULL, 0, "length",
				     "length %u outside the buckets [%u, %u]", lens[i], b[0],
				     b[nb - 1]);
			break;
		}
		cnt[j]++;
		sum[j] += lens[i];
	}
	for (size_t j = 0; j + 1 < nb; j++)
		out[j] = cnt[j] ? sum[j] / (double)cnt[j] : NAN;
	if (cnt != count && cnt != cnt_local)
		free(cnt);
	return rc;
}
