/*
 * order_sjf: shortest prompt first.
 */
#include "policies/order.h"

static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	(void)id;
	return q->prompt_tokens;
}

const struct order_policy order_sjf = {
	.info = {"sjf", "shortest prompt first", NULL},
	.key = key,
	.earliest_bucket = false,
	.fifo = false,
};
