/*
 * batching_memory_safe: BucketServe Dynamic Batching Controller: a batch from one bucket within M_safe (Eq. 5) under Eq. 6 (sum of lengths) or Eq. 1 (padded).
 */
#include "policies/batching.h"

static const struct cfg_def keys[] = {
	{"scheduler.kv_accounting", CFG_CHOICE, "sum", 0, 0, "sum|padded", "",
	 "memory_safe batch test: sum of lengths (Eq. 6) or N * S_max (Eq. 1, padded)"},
	{"scheduler.kv_charge", CFG_CHOICE, "prompt", 0, 0, "prompt|total", "",
	 "length charged per request in the batch test: prompt, or prompt + output (reserve)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* M_safe = fraction x M_remain (Eq. 5), M_remain being the instance's KV capacity not reserved
 * by the requests it runs.  KV bytes per token (Eq. 1) cancel: the cache size in blocks was
 * derived from memory with the model's exact per-token KV bytes.  The batch test is
 * bsb_fits(), the rule bsb_take() applies: a request that does not fit waits (N_max = 0),
 * and a request that cannot fit even in an idle instance is refused when the run is set up
 * (memory_safe_check()). */
static bool take(struct batch_view *v, struct batch_cand *c)
{
	const struct bucketserve_cfg *bc = v->bsc;
	int64_t remain = v->kv_tokens - v->kv_reserved;
	uint64_t safe = bsb_safe_bytes(bc->mem_safe_fraction, (uint64_t)(remain > 0 ? remain : 0));
	uint64_t len = bc->charge == BSB_CHARGE_TOTAL
			       ? (uint64_t)c->q->prompt_tokens + (uint64_t)c->q->output_tokens
			       : (uint64_t)c->q->prompt_tokens;
	if (!bsb_fits(v->n, v->charged, v->longest, len, safe, bc->accounting))
		return false;
	v->charged += len;
	if (len > v->longest)
		v->longest = len;
	c->reserve = (int32_t)len;
	return true;
}

const struct batch_policy batching_memory_safe = {
	.info = {"memory_safe", "BucketServe Dynamic Batching Controller: a batch from one bucket within M_safe (Eq. 5) under Eq. 6 (sum of lengths) or Eq. 1 (padded)", keys},
	.buckets = true,
	.unified = false,
	.beyond_budget = false,
	.idle_only = false,
	.reads = BV_KV,
	.take = take,
};
