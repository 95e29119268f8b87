/*
 * grouping_none: no grouping: one waiting queue in the chosen order.
 */
#include "policies/grouping.h"

const struct grouping_policy grouping_none = {
	{"none", "no grouping: one waiting queue in the chosen order", NULL},
	BSM_GROUP_NONE, false, false,
};
