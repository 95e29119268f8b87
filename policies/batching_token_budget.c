/*
 * batching_token_budget: continuous batching with an adaptive token budget for new prompts:
 * a step admits waiting requests while their prompt tokens stay within
 * max_num_batched_tokens x (1 - running / max_num_seqs), so a busy instance takes new work in
 * smaller portions (decodes keep their pace) and an idle one takes a full step's worth.  The
 * first request of a batch on an idle instance is always taken, so every request can run.
 */
#include "policies/batching.h"

static bool take(struct batch_view *v, struct batch_cand *c)
{
	uint64_t taken = 0;
	for (size_t i = 0; i < v->n; i++)
		taken += v->lens[i];
	int64_t budget = v->step_tokens * (v->max_running - v->running) / v->max_running;
	if (v->idle && v->n == 0)
		return true;
	return (int64_t)(taken + (uint64_t)c->q->prompt_tokens) <= budget;
}

const struct batch_policy batching_token_budget = {
	.info = {"token_budget",
		 "continuous batching whose budget for new prompt tokens shrinks as the instance "
		 "fills (max_num_batched_tokens x free sequence slots / max_num_seqs)",
		 NULL},
	.buckets = false,
	.unified = false,
	.beyond_budget = false,
	.idle_only = false,
	.reads = BV_RUNNING,
	.take = take,
};
