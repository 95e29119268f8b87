/*
 * order_priority: highest priority (smallest priority value) first, then arrival.
 */
#include "policies/order.h"

static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	return ((int64_t)q->priority << 40) + id;
}

const struct order_policy order_priority = {
	.info = {"priority", "highest priority (smallest priority value) first, then arrival", NULL},
	.key = key,
	.bucket_order = BSM_PRIORITY,
	.in_buckets = true,
	.earliest_bucket = false,
	.fifo = false,
	.reads_priority = true,
};
