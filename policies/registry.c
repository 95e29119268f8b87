/*
 * registry: the only list of policy names.  Each family below lists its members, one line per
 * policy; a new policy is one new file plus one line here.  See policies/policy.h.
 */
#include <math.h>
#include <string.h>

#include "sim/config.h"

#include "policies/batching.h"
#include "policies/bucketing.h"
#include "policies/grouping.h"
#include "policies/loop.h"
#include "policies/mode.h"
#include "policies/order.h"
#include "policies/policy.h"

/* ---- families (each section lists its members, then defines the family) ------------------ */

/* ---- families: waiting-queue order, request grouping, batch controller, engine loop, shape
 * bucketing ------------------------------------------------------------------------------- */

/* Each family lists its members in an X-macro, one line per policy: the name of its ops struct
 * (defined in its own file).  The line declares it and puts it in the family, in this order;
 * a new policy is one more line before "end of list". */
#define DECLARE(type, name) extern const struct type name;
#define MEMBER(type, name) &name.info,

#define ORDERS(X)                                       \
	X(order_policy, order_fcfs)                     \
	X(order_policy, order_sjf)                      \
	X(order_policy, order_ljf)                      \
	X(order_policy, order_sjf_total)                \
	X(order_policy, order_ljf_total)                \
	X(order_policy, order_priority)                 \
	X(order_policy, order_earliest_bucket)          \
	X(order_policy, order_slo_output)               \
	X(order_policy, order_sjf_aging)                \
	/* end of list */
ORDERS(DECLARE)
static const struct policy_info *const orders[] = {ORDERS(MEMBER) NULL};
const struct policy_family order_family = {"order", "scheduler.order",
					   "order of waiting requests", orders};

#define GROUPINGS(X)                                    \
	X(grouping_policy, grouping_none)               \
	X(grouping_policy, grouping_fixed)              \
	X(grouping_policy, grouping_adaptive)           \
	/* end of list */
GROUPINGS(DECLARE)
static const struct policy_info *const groupings[] = {GROUPINGS(MEMBER) NULL};
const struct policy_family grouping_family = {"grouping", "scheduler.grouping",
					      "request grouping into length buckets", groupings};

#define BATCHINGS(X)                                    \
	X(batch_policy, batching_continuous)            \
	X(batch_policy, batching_static)                \
	X(batch_policy, batching_memory_safe)           \
	X(batch_policy, batching_prefill_batch)         \
	X(batch_policy, batching_unified)               \
	X(batch_policy, batching_token_budget)          \
	X(batch_policy, batching_queue_budget)          \
	/* end of list */
BATCHINGS(DECLARE)
static const struct policy_info *const batchings[] = {BATCHINGS(MEMBER) NULL};
const struct policy_family batching_family = {"batching", "scheduler.batching",
					      "batch controller", batchings};

#define LOOPS(X)                                        \
	X(loop_policy, loop_async)                      \
	X(loop_policy, loop_atomic)                     \
	X(loop_policy, loop_virtual)                    \
	/* end of list */
LOOPS(DECLARE)
static const struct policy_info *const loops[] = {LOOPS(MEMBER) NULL};
const struct policy_family loop_family = {"loop", "cluster.engine_loop",
					  "pipeline-parallel engine loop (cluster.pp > 1)", loops};

#define BUCKETINGS(X)                                   \
	X(bucket_strategy, bucket_exponential)          \
	X(bucket_strategy, bucket_linear)               \
	X(bucket_strategy, bucket_padding_aware)        \
	X(bucket_strategy, bucket_unified)              \
	X(bucket_strategy, bucket_file)                 \
	X(bucket_strategy, bucket_log)                  \
	X(bucket_strategy, bucket_none)                 \
	X(bucket_strategy, bucket_pow2)                 \
	X(bucket_strategy, bucket_ideal)                \
	/* end of list */
BUCKETINGS(DECLARE)
static const struct policy_info *const bucketings[] = {BUCKETINGS(MEMBER) NULL};
const struct policy_family bucketing_family = {
	"bucketing", "bucketing.strategy", "shape-bucketing strategy: the warm-up bucket lists",
	bucketings};

#define MODES(X)                                        \
	X(exec_mode, mode_hpu_graphs)                   \
	X(exec_mode, mode_hpu_compile)                  \
	X(exec_mode, mode_hpu_eager)                    \
	X(exec_mode, mode_cuda_graphs)                  \
	/* end of list */
MODES(DECLARE)
static const struct policy_info *const modes[] = {MODES(MEMBER) NULL};
const struct policy_family mode_family = {
	"mode", "server.execution_mode",
	"execution mode: how the forward pass runs (graphs, compiles, padding, forwards per step, "
	"KV sizing); auto follows the hardware and the version", modes};

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

const struct exec_mode *exec_mode(const char *name)
{
	return name ? (const struct exec_mode *)policy_find(&mode_family, name) : NULL;
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
	&bucketing_family,
	&mode_family,
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

size_t policy_nkeys(const struct policy_info *info)
{
	size_t n = 0;
	for (const struct cfg_def *d = info->keys; d && d->key; d++)
		n++;
	return n;
}

void policy_params_read(const struct policy_info *info, const struct config *cfg,
			struct policy_params *out)
{
	for (size_t i = 0; i < POLICY_MAX_KEYS; i++)
		out->v[i] = NAN;
	size_t row = 0;
	for (const struct cfg_def *r = info->keys; r && r->key; r++, row++) {
		const struct cfg_entry *e = config_find(cfg, r->key);
		/* A key it only reads: as its owner defines it (checked by config_init). */
		const struct cfg_def *d = r->type == CFG_READS ? e->def : r;
		if (!e->text)
			continue; /* an auto key left unset */
		switch (d->type) {
		case CFG_INT:
		case CFG_DOUBLE:
			out->v[row] = e->d;
			break;
		case CFG_BOOL:
			out->v[row] = e->b;
			break;
		case CFG_CHOICE:
			out->v[row] = config_choice_index(d->choices, e->text);
			break;
		case CFG_STRING:
			break;
		case CFG_READS:
			BUG("policy '%s': key '%s' has no definition", info->name, r->key);
		}
	}
}
