/*
 * grouping_fixed: BucketServe buckets with fixed boundaries (scheduler.boundaries), parsed at
 * set-up; they never change.
 */
#include "policies/grouping.h"

enum { BOUNDARIES };
static const struct cfg_def keys[] = {
	[BOUNDARIES] = {"scheduler.boundaries", CFG_STRING, NULL, 0, 0, NULL, "tokens",
			"bucket boundaries for grouping=fixed, e.g. 0,256,1024,max (max = L_max)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static int bounds(const struct config *cfg, uint32_t l_max, uint32_t **out, size_t *n,
		  struct bs_err *err)
{
	const char *t = config_str(cfg, keys[BOUNDARIES].key);
	if (!t)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, keys[BOUNDARIES].key,
			       "required with scheduler.grouping=fixed");
	return bsm_parse_bounds(t, l_max, keys[BOUNDARIES].key, out, n, err);
}

const struct grouping_policy grouping_fixed = {
	.info = {"fixed", "BucketServe buckets with fixed boundaries (scheduler.boundaries)", keys},
	.buckets = true,
	.bounds = bounds,
	.adjust = NULL,
};
