/*
 * order: the waiting-queue order family (scheduler.order).  See policies/policy.h.
 *
 * An order ranks waiting requests by a key, one implementation wherever requests wait: in a
 * plain queue (a heap, ties by id, i.e. by arrival) and inside BucketServe buckets (the bucket
 * manager, ties by arrival, then by queuing order: policies/bs_manager.h).  Because the key is
 * fixed when a request is queued, every order can order requests inside buckets; an order with
 * earliest_bucket also chooses which bucket is served.  Ownership: static, read-only data.
 */
#ifndef BS_ORDER_H
#define BS_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "policies/policy.h"
#include "workloads/workload.h"

struct order_policy {
	struct policy_info info;
	/* Rank of request Q (its id ID: ids are in arrival order) among the waiting requests:
	 * smaller first, ties by arrival (so a constant key is FCFS).  PAR: the values of its own
	 * keys and of the keys it declares it reads (struct policy_params).  The key is fixed
	 * when the request is queued: a priority that changes with time while keeping the order
	 * of the waiting requests (linear aging) is such a key, e.g. arrival_ns + w *
	 * prompt_tokens.  Break ties by arrival through the tie-break, not by adding ID: inside
	 * buckets a request queued again after a preemption ranks by its queuing order among
	 * equal keys and arrivals, which ID cannot express. */
	int64_t (*key)(const struct req_spec *q, int32_t id, const double *par);
	/* Serves the bucket whose first request is the oldest, so with a constant key the bucket
	 * of the oldest request (BucketServe's rule for online work): it needs buckets (forces
	 * them on).  Data: which bucket to serve is the bucket manager's (bsm_earliest_bucket). */
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
