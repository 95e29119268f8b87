/*
 * batching_continuous: continuous batching (vLLM): waiting requests join running ones at every step.
 */
#include "policies/batching.h"

const struct batch_policy batching_continuous = {
	.info = {"continuous", "continuous batching (vLLM): waiting requests join running ones at every step", NULL},
	.buckets = false,
	.unified = false,
	.beyond_budget = false,
	.idle_only = false,
	.reads = 0,
	.take = NULL,
};
