/*
 * order_earliest_bucket: BucketServe buckets served by their oldest request (groups requests into buckets).
 */
#include "policies/order.h"

/* A constant: arrival order inside a bucket, so a bucket's first request is its oldest. */
static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	(void)q;
	(void)id;
	return 0;
}

const struct order_policy order_earliest_bucket = {
	.info = {"earliest_bucket", "BucketServe buckets served by their oldest request (groups requests into buckets)", NULL},
	.key = key,
	.earliest_bucket = true,
	.fifo = false,
};
