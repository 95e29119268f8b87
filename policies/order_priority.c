/*
 * order_priority: highest priority (smallest priority value) first, then arrival.
 */
#include "policies/order.h"

/* Ties (equal priority) by arrival. */
static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	(void)id;
	return q->priority;
}

const struct order_policy order_priority = {
	.info = {"priority", "highest priority (smallest priority value) first, then arrival", NULL},
	.key = key,
	.earliest_bucket = false,
	.fifo = false,
	.reads_priority = true,
};
