/*
 * order_ljf_total: longest prompt + output first (output length known in advance).
 */
#include "policies/order.h"

static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	(void)id;
	return -((int64_t)q->prompt_tokens + q->output_tokens);
}

const struct order_policy order_ljf_total = {
	.info = {"ljf_total", "longest prompt + output first (output length known in advance)", NULL},
	.key = key,
	.earliest_bucket = false,
	.fifo = false,
};
