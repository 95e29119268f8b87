/*
 * order_fcfs: first come, first served (arrival order).
 */
#include "policies/order.h"

static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	(void)q;
	return id;
}

const struct order_policy order_fcfs = {
	.info = {"fcfs", "first come, first served (arrival order)", NULL},
	.key = key,
	.bucket_order = BSM_FCFS,
	.in_buckets = true,
	.earliest_bucket = false,
	.fifo = true,
};
