/*
 * order_earliest_bucket: BucketServe buckets served by their oldest request (groups requests into buckets).
 */
#include "policies/order.h"

static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	(void)q;
	return id;
}

const struct order_policy order_earliest_bucket = {
	.info = {"earliest_bucket", "BucketServe buckets served by their oldest request (groups requests into buckets)", NULL},
	.key = key,
	.bucket_order = BSM_FCFS,
	.in_buckets = true,
	.earliest_bucket = true,
	.fifo = false,
};
