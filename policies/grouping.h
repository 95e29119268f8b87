/*
 * grouping: the request-grouping family (scheduler.grouping): whether and how waiting requests
 * are grouped into BucketServe length buckets (policies/bs_manager.h).  See policies/policy.h.
 * Ownership: static, read-only data.
 */
#ifndef BS_GROUPING_H
#define BS_GROUPING_H

#include <stdbool.h>

#include "policies/bs_manager.h"
#include "policies/policy.h"

struct grouping_policy {
	struct policy_info info;
	enum bsm_grouping bsm;      /* the bucket manager's grouping */
	bool buckets;               /* waiting requests in buckets (also forced on by an order
				     * or batch controller that needs them) */
	/* Fast-path hook: AdjustBuckets runs (on arrivals, batches or a timer): bucket
	 * boundaries can change what the next batch draws between two events.  One call splits
	 * a bucket at most once, so the next call may change the buckets again with nothing
	 * else changed: run before each batch (scheduler.adjust=batch), it makes every step
	 * different from the last, and such a lane runs one step per event (no decode jumps). */
	bool adjusts;
};

extern const struct policy_family grouping_family;
const struct grouping_policy *grouping_policy(const char *name);

#endif
