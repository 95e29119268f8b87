/*
 * batching_static: static batching (UELLM): a batch of at most static_batch_size requests whose prompts fit in the free KV cache, closed before its Eq. 2 padding waste exceeds static_max_waste, runs to completion before the next is formed.
 */
#include "policies/batching.h"
#include "analysis/waste.h"

/* Its keys, and their rows in par[] (struct batch_view). */
enum { BATCH_SIZE, MAX_WASTE };
static const struct cfg_def keys[] = {
	[BATCH_SIZE] = {"scheduler.static_batch_size", CFG_INT, "10", 1, 1 << 20, NULL, "requests",
	 "static batching: most requests in one batch (UELLM packs at most 10)"},
	[MAX_WASTE] = {"scheduler.static_max_waste", CFG_DOUBLE, "0.25", 0, 1, NULL, "fraction",
	 "static batching: a batch is closed before its Eq. 2 padding waste of prompt lengths "
	 "would exceed this"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static bool take(struct batch_view *v, struct batch_cand *c)
{
	if ((double)v->n >= v->par[BATCH_SIZE])
		return false;
	if (v->deferred_blocks + c->full_blocks + c->revive_blocks > v->kv_free)
		return false;
	v->lens[v->n] = (uint32_t)c->q->prompt_tokens;
	if (v->n > 0 && waste_ratio(v->lens, v->n + 1) > v->par[MAX_WASTE])
		return false;
	v->deferred_blocks += c->full_blocks - c->need_blocks;
	return true;
}

const struct batch_policy batching_static = {
	.info = {"static", "static batching (UELLM): bounded batches of requests whose prompts fit in the free KV cache, each run to completion before the next is formed", keys},
	.buckets = false,
	.unified = false,
	.beyond_budget = true,
	.idle_only = true,
	.reads = BV_KV,
	.take = take,
};
