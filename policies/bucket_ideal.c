/*
 * bucket_ideal: the reference without bucketing costs.  Every pass runs at its real shape (no
 * padding) and nothing is ever compiled (no warm-up, no runtime compile), under the same
 * scheduler: the difference from another strategy is what bucketing costs.  No real server
 * runs this way.
 */
#include "policies/bucket_int.h"

static int gen_nothing(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	(void)p;
	(void)g;
	(void)err;
	return 0;
}

const struct bucket_strategy bucket_ideal = {
	.info = {"ideal", "reference: every pass at its real shape, no padding and no compile "
			  "(what bucketing costs, by difference)", NULL},
	.gen_docs = gen_nothing,
	.gen_current = gen_nothing,
	.phases = 0,
	.ideal = true,
};
