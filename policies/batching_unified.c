/*
 * batching_unified: unified batching: continuous batching with one mixed pass of every token per step (unified attention; bucketing.strategy unified or none).
 */
#include "policies/batching.h"

const struct batch_policy batching_unified = {
	{"unified", "unified batching: continuous batching with one mixed pass of every token per step (unified attention; bucketing.strategy unified or none)", NULL},
	false, true, false, false, NULL,
};
