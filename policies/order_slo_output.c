/*
 * order_slo_output: priority, then output length (UELLM's sort, output length known in advance).
 */
#include "policies/order.h"

static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	return ((int64_t)q->priority << 40) + q->output_tokens;
}

const struct order_policy order_slo_output = {
	.info = {"slo_output", "priority, then output length (UELLM's sort, output length known in advance)", NULL},
	.key = key,
	.earliest_bucket = false,
	.fifo = false,
	.reads_priority = true,
};
