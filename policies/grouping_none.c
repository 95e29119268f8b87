/*
 * grouping_none: no grouping: one waiting queue in the chosen order.
 */
#include "policies/grouping.h"

const struct grouping_policy grouping_none = {
	.info = {"none", "no grouping: one waiting queue in the chosen order", NULL},
	.bsm = BSM_GROUP_NONE,
	.buckets = false,
	.adjusts = false,
};
