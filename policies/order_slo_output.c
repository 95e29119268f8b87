/*
 * order_slo_output: priority, then output length (UELLM's sort, output length known in advance); plain queues only.
 */
#include "policies/order.h"

static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)par;
	return ((int64_t)q->priority << 40) + q->output_tokens;
}

const struct order_policy order_slo_output = {
	{"slo_output", "priority, then output length (UELLM's sort, output length known in advance); plain queues only", NULL},
	key, BSM_FCFS, false, false, false,
};
