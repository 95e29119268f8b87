/*
 * bs_batch: the BucketServe Dynamic Batching Controller (Eq. 1, 5, 6).  See bs_batch.h.
 */
#include "policies/bs_batch.h"

#include <math.h>

uint64_t bsb_kv_bytes_per_token(const struct bsb_model *md)
{
	return 2ull * md->layers * md->kv_heads * md->head_dim * md->dtype_bytes;
}

uint64_t bsb_kv_bytes(const struct bsb_model *md, uint64_t s_max, uint64_t n)
{
	return bsb_kv_bytes_per_token(md) * s_max * n;
}

uint64_t bsb_safe_bytes(double fraction, uint64_t m_remain)
{
	long double v = floorl((long double)fraction * (long double)m_remain);
	return v <= 0 ? 0 : (uint64_t)v;
}

uint64_t bsb_budget_tokens(uint64_t m_safe, uint64_t bytes_per_token)
{
	if (bytes_per_token == 0)
		BUG("zero KV bytes per token");
	return m_safe / bytes_per_token;
}

bool bsb_fits(uint64_t n, uint64_t sum, uint64_t smax, uint64_t len, uint64_t budget,
	      enum bsb_accounting acc)
{
	if (acc == BSB_SUM)
		return sum + len <= budget;
	uint64_t mx = len > smax ? len : smax;
	return mx == 0 || (n + 1) <= budget / mx;
}

size_t bsb_fit(const uint32_t *lens, size_t n, uint64_t budget, enum bsb_accounting acc,
	       size_t max_n)
{
	uint64_t sum = 0, smax = 0;
	size_t i = 0;
	for (; i < n && (max_n == 0 || i < max_n); i++) {
		if (!bsb_fits(i, sum, smax, lens[i], budget, acc))
			break;
		sum += lens[i];
		if (lens[i] > smax)
			smax = lens[i];
	}
	return i;
}

size_t bsb_nmax(const uint32_t *lens, size_t n, uint64_t budget)
{
	return bsb_fit(lens, n, budget, BSB_SUM, 0);
}

size_t bsb_take(struct bsm *m, size_t k, uint64_t budget, enum bsb_accounting acc,
		enum bsb_charge charge, size_t max_n, uint32_t *out, size_t cap)
{
	uint64_t sum = 0, smax = 0;
	size_t i = 0;
	while (i < cap && (max_n == 0 || i < max_n)) {
		int64_t id = bsm_peek(m, k);
		if (id < 0)
			break;
		uint64_t len = charge == BSB_CHARGE_TOTAL ? bsm_total_len(m, (uint32_t)id)
							  : bsm_len(m, (uint32_t)id);
		if (!bsb_fits(i, sum, smax, len, budget, acc))
			break;
		bsm_remove(m, (uint32_t)id);
		out[i++] = (uint32_t)id;
		sum += len;
		if (len > smax)
			smax = len;
	}
	return i;
}
