/*
 * grouping_none: no grouping: one waiting queue in the chosen order (one bucket [0, L_max]
 * when an order or batch controller needs buckets; it never changes).
 */
#include "policies/grouping.h"

const struct grouping_policy grouping_none = {
	.info = {"none", "no grouping: one waiting queue in the chosen order", NULL},
	.buckets = false,
	.bounds = NULL,
	.adjust = NULL,
};
