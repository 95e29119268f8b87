/*
 * grouping_adaptive: BucketServe Algorithm 1: buckets split and merged by AdjustBuckets.
 */
#include "policies/grouping.h"

static const struct cfg_def keys[] = {
	{"scheduler.theta", CFG_DOUBLE, "0.5", 0, 0.999999, NULL, "",
	 "Algorithm 1: split a bucket when more than this fraction lies below its midpoint"},
	{"scheduler.adjust", CFG_CHOICE, "arrival", 0, 0, "arrival|batch|period", "",
	 "when grouping=adaptive runs AdjustBuckets: after each arrival, before each batch, or "
	 "every adjust_period_s"},
	{"scheduler.adjust_period_s", CFG_DOUBLE, "1", 1e-6, 1e6, NULL, "s",
	 "period of AdjustBuckets with adjust=period"},
	{"scheduler.n_max", CFG_INT, NULL, 1, 1e12, NULL, "requests",
	 "Algorithm 1 threshold N_max; auto = Eq. 6 over the queue and the KV budget"},
	{"scheduler.nmax_memory", CFG_CHOICE, "instance", 0, 0, "instance|sum", "",
	 "M_remain of Eq. 5 for the auto N_max: the free KV of one instance admitting from the "
	 "queue (the freest), or the sum over all of them"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

const struct grouping_policy grouping_adaptive = {
	.info = {"adaptive", "BucketServe Algorithm 1: buckets split and merged by AdjustBuckets", keys},
	.bsm = BSM_GROUP_ADAPTIVE,
	.buckets = true,
	.adjusts = true,
};
