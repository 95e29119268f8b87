/*
 * batching_queue_budget: continuous batching whose budget for new prompt tokens shrinks while
 * the waiting queue is short.  While fewer than scheduler.queue_threshold requests wait (as
 * the scheduler sees them when the step starts: policies/batching.h, struct batch_view), a
 * step admits waiting requests only while their prompt tokens stay within
 * scheduler.budget_short_queue_tokens; from the threshold on, only the kernel's own budget
 * (max_num_batched_tokens) applies.  A short queue then costs the running decodes little
 * (small prefills in their steps); a long one is drained with full steps.  The first request
 * of a batch on an idle instance always joins, so every request runs; a prompt longer than the
 * short budget waits until the queue reaches the threshold or the instance idles.
 *
 * A scheduling knob, not a model of a measured system: its defaults are illustrative (the
 * example of policies/README.md, "Adding a policy").
 */
#include "policies/batching.h"

enum { THRESHOLD, SHORT_TOKENS }; /* the rows of its keys, the indices of par[] */
static const struct cfg_def keys[] = {
	[THRESHOLD] = {"scheduler.queue_threshold", CFG_INT, "8", 1, 1 << 30, NULL, "requests",
		       "queue_budget: waiting requests from which a step admits within the full "
		       "token budget"},
	[SHORT_TOKENS] = {"scheduler.budget_short_queue_tokens", CFG_INT, "512", 1, 1 << 30, NULL,
			  "tokens",
			  "queue_budget: prompt tokens a step admits while fewer than "
			  "scheduler.queue_threshold requests wait"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static bool take(struct batch_view *v, struct batch_cand *c)
{
	if (v->idle && v->n == 0)
		return true; /* an idle instance always takes one: nothing starves */
	if ((double)v->waiting >= v->par[THRESHOLD])
		return true; /* a long queue: the kernel's budget alone */
	uint64_t taken = 0;
	for (size_t i = 0; i < v->n; i++)
		taken += v->lens[i];
	return (double)(taken + (uint64_t)c->q->prompt_tokens) <= v->par[SHORT_TOKENS];
}

const struct batch_policy batching_queue_budget = {
	.info = {"queue_budget",
		 "continuous batching whose budget for new prompt tokens is "
		 "scheduler.budget_short_queue_tokens while fewer than scheduler.queue_threshold "
		 "requests wait",
		 keys},
	.buckets = false,
	.unified = false,
	.beyond_budget = false,
	.idle_only = false,
	.reads = BV_WAITING | BV_RUNNING, /* waiting; idle */
	.take = take,
};
