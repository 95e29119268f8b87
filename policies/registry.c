/*
 * registry: the only list of policy names.  Each family below lists its members, one line per
 * policy; a new policy is one new file plus one line here.  See policies/policy.h.
 */
#include <string.h>

#include "policies/batching.h"
#include "policies/grouping.h"
#include "policies/loop.h"
#include "policies/order.h"
#include "policies/policy.h"

/* ---- families (each section lists its members, then defines the family) ------------------ */

/* ---- kernel-side families: waiting-queue order, request grouping, batch controller, engine
 * loop ------------------------------------------------------------------------------------- */

extern const struct order_policy order_fcfs, order_sjf, order_ljf, order_sjf_total,
	order_ljf_total, order_priority, order_earliest_bucket, order_slo_output;
static const struct policy_info *const orders[] = {
	&order_fcfs.info,
	&order_sjf.info,
	&order_ljf.info,
	&order_sjf_total.info,
	&order_ljf_total.info,
	&order_priority.info,
	&order_earliest_bucket.info,
	&order_slo_output.info,
	NULL,
};
const struct policy_family order_family = {"order", "scheduler.order",
					   "order of waiting requests", orders};

extern const struct grouping_policy grouping_none, grouping_fixed, grouping_adaptive;
static const struct policy_info *const groupings[] = {
	&grouping_none.info,
	&grouping_fixed.info,
	&grouping_adaptive.info,
	NULL,
};
const struct policy_family grouping_family = {"grouping", "scheduler.grouping",
					      "request grouping into length buckets", groupings};

extern const struct batch_policy batching_continuous, batching_static, batching_memory_safe,
	batching_unified;
static const struct policy_info *const batchings[] = {
	&batching_continuous.info,
	&batching_static.info,
	&batching_memory_safe.info,
	&batching_unified.info,
	NULL,
};
const struct policy_family batching_family = {"batching", "scheduler.batching",
					      "batch controller", batchings};

extern const struct loop_policy loop_async, loop_atomic, loop_virtual;
static const struct policy_info *const loops[] = {
	&loop_async.info,
	&loop_atomic.info,
	&loop_virtual.info,
	NULL,
};
const struct policy_family loop_family = {"loop", "cluster.engine_loop",
					  "pipeline-parallel engine loop (cluster.pp > 1)", loops};

const struct order_policy *order_policy(const char *name)
{
	return (const struct order_policy *)policy_find(&order_family, name);
}

const struct grouping_policy *grouping_policy(const char *name)
{
	return (const struct grouping_policy *)policy_find(&grouping_family, name);
}

const struct batch_policy *batch_policy(const char *name)
{
	return (const struct batch_policy *)policy_find(&batching_family, name);
}

const struct loop_policy *loop_policy(const char *name)
{
	return (const struct loop_policy *)policy_find(&loop_family, name);
}


/* ---- the registry ----------------------------------------------------------------------- */

const struct policy_family *const policy_families[] = {
	&order_family,
	&grouping_family,
	&batching_family,
	&loop_family,
	NULL,
};

const struct policy_family *policy_family_by_name(const char *name)
{
	for (size_t i = 0; policy_families[i]; i++)
		if (!strcmp(policy_families[i]->name, name))
			return policy_families[i];
	return NULL;
}

const struct policy_family *policy_family_by_key(const char *key)
{
	for (size_t i = 0; policy_families[i]; i++)
		if (!strcmp(policy_families[i]->key, key))
			return policy_families[i];
	return NULL;
}

const struct policy_info *policy_find(const struct policy_family *f, const char *name)
{
	for (size_t i = 0; f->members[i]; i++)
		if (!strcmp(f->members[i]->name, name))
			return f->members[i];
	return NULL;
}
