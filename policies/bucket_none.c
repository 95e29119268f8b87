/*
 * bucket_none: no bucketing.  No bucket is generated or warmed up and every look-up returns
 * the real shape (each new shape compiles on first use), the same as VLLM_ENABLE_BUCKETING=false
 * with any other strategy.
 */
#include "policies/bucket_int.h"

static int gen_nothing(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	return 0;
}

const struct bucket_strategy bucket_none = {
	.info = {"none", "no bucketing: every shape runs as it is and compiles on first use", NULL},
	.gen_docs = gen_nothing,
	.gen_current = gen_nothing,
	.phases = 0,
};
