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
	{"priority", "highest priority (smallest priority value) first, then arrival", NULL},
	key, BSM_PRIORITY, true, false, false,
};
