/*
 * batching_continuous: continuous batching (vLLM): waiting requests join running ones at every step.
 */
#include "policies/batching.h"

const struct batch_policy batching_continuous = {
	{"continuous", "continuous batching (vLLM): waiting requests join running ones at every step", NULL},
	false, false, false, false, NULL,
};
