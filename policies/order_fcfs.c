/*
 * order_fcfs: first come, first served (arrival order).
 */
#include "policies/order.h"

/* A constant: the tie-break (arrival, then queuing order) decides. */
static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	(void)q;
	(void)id;
	return 0;
}

const struct order_policy order_fcfs = {
	.info = {"fcfs", "first come, first served (arrival order)", NULL},
	.key = key,
	.earliest_bucket = false,
	.fifo = true,
};
