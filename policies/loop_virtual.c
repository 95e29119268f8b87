/*
 * loop_virtual: pp virtual engines, each with its own scheduler, queue and share of the KV cache (vLLM V0).
 */
#include "policies/loop.h"

const struct loop_policy loop_virtual = {
	.info = {"virtual", "pp virtual engines, each with its own scheduler, queue and share of the KV cache (vLLM V0)", NULL},
	.virtual_engines = true,
	.waits_for_oldest = false,
};
