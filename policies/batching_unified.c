/*
 * batching_unified: unified batching: continuous batching with one mixed pass of every token per step (unified attention; bucketing.strategy unified or none).
 */
#include "policies/batching.h"

const struct batch_policy batching_unified = {
	.info = {"unified", "unified batching: continuous batching with one mixed pass of every token per step (unified attention; bucketing.strategy unified or none)", NULL},
	.buckets = false,
	.unified = true,
	.beyond_budget = false,
	.idle_only = false,
	.reads = 0,
	.take = NULL,
};
