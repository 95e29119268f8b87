/*
 * grouping_fixed: BucketServe buckets with fixed boundaries (scheduler.boundaries).
 */
#include "policies/grouping.h"

static const struct cfg_def keys[] = {
	{"scheduler.boundaries", CFG_STRING, NULL, 0, 0, NULL, "tokens",
	 "bucket boundaries for grouping=fixed, e.g. 0,256,1024,max (max = L_max)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

const struct grouping_policy grouping_fixed = {
	.info = {"fixed", "BucketServe buckets with fixed boundaries (scheduler.boundaries)", keys},
	.bsm = BSM_GROUP_FIXED,
	.buckets = true,
	.adjusts = false,
};
