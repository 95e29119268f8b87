/*
 * grouping_adaptive: BucketServe Algorithm 1 (AdjustBuckets): starting from one bucket
 * [0, L_max], buckets are split and merged as the queue changes.
 */
#include "policies/grouping.h"

/* Its keys; theta is par[THETA] (struct policy_params).  The others say when and with which
 * N_max the kernel calls adjust() (policies/bucketserve.c reads them). */
enum { THETA };
static const struct cfg_def keys[] = {
	[THETA] = {"scheduler.theta", CFG_DOUBLE, "0.5", 0, 0.999999, NULL, "",
		   "Algorithm 1: split a bucket when more than this fraction lies below its midpoint"},
	{"scheduler.adjust", CFG_CHOICE, "arrival", 0, 0, "arrival|batch|period", "",
	 "when grouping=adaptive runs AdjustBuckets: after each arrival, before each batch, or "
	 "every adjust_period_s"},
	{"scheduler.adjust_period_s", CFG_DOUBLE, "1", 1e-6, 1e6, NULL, "s",
	 "period of AdjustBuckets with adjust=period"},
	{"scheduler.n_max", CFG_INT, NULL, 1, 1e12, NULL, "requests",
	 "Algorithm 1 threshold N_max; auto = Eq. 6 over the queue and the KV budget (with "
	 "prefill_batch on Gaudi, at most the prompts one warmed pass holds)"},
	{"scheduler.nmax_memory", CFG_CHOICE, "instance", 0, 0, "instance|sum", "",
	 "M_remain of Eq. 5 for the auto N_max: the free KV of one instance admitting from the "
	 "queue (the freest), or the sum over all of them"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* Algorithm 1's AdjustBuckets with threshold N_MAX (also the minimum split size m):
 *   total < N_MAX            -> merge every bucket into [0, L_max] (lines 11-13; counted when
 *                               there were several);
 *   otherwise, one pass (lines 15-27): every bucket b with |{S < m_b}| / |b| > theta and
 *   |b| > N_MAX and width >= 2 tokens is split at m_b = (lo + hi) / 2 (rounded up, which for
 *   integer keys is the same test as the real midpoint).
 * The pass decides on the buckets as they were when it started: it walks them from the last,
 * so a split (which adds a bucket after b) never moves one not yet decided on. */
static void adjust(struct bsm *m, uint64_t n_max, const double *par,
		   struct bsm_adjust_result *res)
{
	if ((uint64_t)bsm_total(m) < n_max) {
		res->merged = bsm_merge_all(m);
		return;
	}
	for (size_t k = bsm_nbuckets(m); k-- > 0;) {
		uint32_t lo, hi;
		bsm_bucket_range(m, k, &lo, &hi);
		uint64_t cnt = bsm_bucket_count(m, k);
		if (hi - lo < 2 || cnt <= n_max || cnt == 0)
			continue;
		uint32_t mid = lo + (hi - lo + 1) / 2;
		uint64_t cs = bsm_count_below(m, mid) - bsm_count_below(m, lo);
		if ((double)cs > par[THETA] * (double)cnt) {
			bsm_split(m, k, mid);
			res->splits++;
		}
	}
}

const struct grouping_policy grouping_adaptive = {
	.info = {"adaptive", "BucketServe Algorithm 1: buckets split and merged by AdjustBuckets", keys},
	.buckets = true,
	.bounds = NULL,
	.adjust = adjust,
};
