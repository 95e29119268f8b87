/*
 * order: the waiting-queue order family (scheduler.order).  See policies/policy.h.
 *
 * An order ranks waiting requests in a plain queue by a key; inside BucketServe buckets it is
 * the bucket manager's order (bucket_order), or it serves the bucket of the oldest request
 * (earliest_bucket).  Ownership: static, read-only data.
 */
#ifndef BS_ORDER_H
#define BS_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "policies/bs_manager.h"
#include "policies/policy.h"
#include "workloads/workload.h"

struct order_policy {
	struct policy_info info;
	/* Rank of request Q (its id ID: ids are in arrival order) in a plain waiting queue:
	 * smaller first, ties by id.  PAR: the values of its own keys (struct policy_params).
	 * The key is fixed when the request is queued: a priority that changes with time while
	 * keeping the order of the waiting requests (linear aging) is such a key, e.g.
	 * arrival_ns + w * prompt_tokens. */
	int64_t (*key)(const struct req_spec *q, int32_t id, const double *par);
	/* Inside buckets: the bucket manager's order; meaningful when in_buckets. */
	enum bsm_order bucket_order;
	/* Whether it can order requests inside BucketServe buckets (false: the config check
	 * refuses it together with grouping or memory-safe batching). */
	bool in_buckets;
	/* Serves buckets by their oldest request: it needs buckets (forces them on). */
	bool earliest_bucket;
	/* Fast-path hook: a request that arrives later is never served before one already
	 * waiting, so an arrival cannot be admitted while the queue's head waits. */
	bool fifo;
	/* Its key (or bucket order) reads the requests' priority: without it workload.priority
	 * has no effect, and workload.priority_weights is reported set but never read. */
	bool reads_priority;
};

extern const struct policy_family order_family;
/* The order named NAME, or NULL. */
const struct order_policy *order_policy(const char *name);

#endif
