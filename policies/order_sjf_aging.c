/*
 * order_sjf_aging: shortest prompt first with linear aging, so that long prompts cannot
 * starve: a waiting request's rank at time t is prompt_tokens - (t - arrival) / w, one prompt
 * token less per w ms waited (w = scheduler.sjf_aging_ms).  All waiting requests age alike, so
 * that rank orders them as the fixed key arrival_ns + w * prompt_tokens does: w = 0 is FCFS, a
 * large w is SJF.  Inside BucketServe buckets the requests of a bucket age alike too.
 */
#include <math.h>

#include "policies/order.h"

/* Its key, and its row in par[] (struct policy_params). */
enum { AGING_MS };
static const struct cfg_def keys[] = {
	[AGING_MS] = {"scheduler.sjf_aging_ms", CFG_DOUBLE, "1", 0, 1000, NULL, "ms",
		      "sjf_aging: waiting time that makes up for one prompt token (0: FCFS)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static int64_t key(const struct req_spec *q, int32_t id, const double *par)
{
	(void)id;
	/* At most 1e9 ns x 2^31 tokens: within int64; the sum saturates. */
	int64_t weight = (int64_t)llround(par[AGING_MS] * 1e6 * (double)q->prompt_tokens), k;
	return __builtin_add_overflow(q->arrival_ns, weight, &k) ? INT64_MAX : k;
}

const struct order_policy order_sjf_aging = {
	.info = {"sjf_aging",
		 "shortest prompt first, aged: one prompt token less per scheduler.sjf_aging_ms "
		 "waited (no starvation)",
		 keys},
	.key = key,
	.earliest_bucket = false,
	.fifo = false, /* a later, shorter prompt may go first */
};
