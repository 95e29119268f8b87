/*
 * batching: the batch-controller family (scheduler.batching): which waiting requests join the
 * batch an engine step forms.  See policies/policy.h.
 *
 * The kernel forms a batch by offering the waiting requests one by one, in the queue's order,
 * after its own checks (a sequence slot, the step's token budget, free KV blocks for the
 * step's chunk); the controller's take() says whether the candidate joins or the batch closes
 * there.  Ownership: static, read-only data; the draft and the candidate are the caller's.
 */
#ifndef BS_BATCHING_H
#define BS_BATCHING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/bucketserve.h"
#include "policies/policy.h"
#include "workloads/workload.h"

/* The batch being formed on one instance in one step. */
struct batch_draft {
	size_t n;                       /* requests taken so far */
	uint32_t *lens;                 /* their prompt lengths, with room for one more */
	bool idle;                      /* the instance ran nothing when the batch started */
	int32_t running;                /* requests it ran when the batch started (over its
					 * lanes when they share one scheduler) */
	int32_t max_running;            /* server.max_num_seqs */
	int64_t step_tokens;            /* server.max_num_batched_tokens */
	int64_t kv_free;                /* free KV blocks of the instance */
	int64_t kv_tokens;              /* KV capacity of the instance in tokens */
	int64_t kv_reserved;            /* tokens reserved by the requests it runs */
	int64_t deferred_blocks;        /* blocks the taken requests' deferred prefills will take */
	uint64_t charged, longest;      /* sum and longest of the charges of the batch */
	const double *par;              /* the controller's own keys' values, par[ROW] for row
					 * ROW of its policy_info.keys (struct policy_params) */
	const struct bucketserve_cfg *bsc; /* NULL unless requests are in buckets */
};

/* The next waiting request offered to the batch. */
struct batch_cand {
	const struct req_spec *q;
	int64_t need_blocks;            /* blocks its chunk in this step takes */
	int64_t full_blocks;            /* blocks its whole prompt takes */
	int64_t revive_blocks;          /* cached prefix blocks it brings back into use */
	int32_t reserve;                /* out: tokens it reserves until it leaves (0) */
};

struct batch_policy {
	struct policy_info info;
	bool buckets;                   /* draws batches from BucketServe buckets */
	bool unified;                   /* one mixed pass of every token per step */
	/* Takes requests past the step's token budget (their prefill waits for a later step). */
	bool beyond_budget;
	/* Fast-path hook: forms a batch only while the instance runs nothing, so nothing that
	 * arrives can change the next step of a running instance. */
	bool idle_only;
	/* A step's new prompts run whole (no token budget: take() bounds the batch by memory)
	 * and together as one prompt pass padded to N x S_max (sim/kernel_prefill.c), not in
	 * vllm-gaudi's groups of server.max_num_prefill_seqs within the token budget. */
	bool padded_pass;
	/* Whether candidate C joins draft D (then D is updated); false closes the batch.  NULL:
	 * every candidate that passed the kernel's checks joins. */
	bool (*take)(struct batch_draft *d, struct batch_cand *c);
};

extern const struct policy_family batching_family;
const struct batch_policy *batch_policy(const char *name);

#endif
