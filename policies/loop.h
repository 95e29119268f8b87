/*
 * loop: the pipeline-parallel engine-loop family (cluster.engine_loop), after the vLLM V1
 * RFC's options; it matters only with cluster.pp > 1.  See policies/policy.h.
 * Ownership: static, read-only data.
 */
#ifndef BS_LOOP_H
#define BS_LOOP_H

#include <stdbool.h>

#include "policies/policy.h"

struct loop_policy {
	struct policy_info info;
	/* Each lane is a virtual engine with its own scheduler, waiting queue and share of the
	 * KV cache (false: the lanes share one scheduler, KV pool and max_num_seqs). */
	bool virtual_engines;
	/* The next microbatch is built only when the oldest one returns (or while the whole
	 * pipeline is idle), before the returned one is processed. */
	bool waits_for_oldest;
};

extern const struct policy_family loop_family;
const struct loop_policy *loop_policy(const char *name);

#endif
