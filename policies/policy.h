/*
 * policy: what every pluggable policy says of itself, and the registry of families.
 *
 * A policy is one `static const` ops struct in its own file under policies/, whose FIRST member
 * is a `struct policy_info` (so a family's code can turn the info pointer back into its ops
 * struct).  It is registered by one line in policies/registry.c, the only list of policy names:
 * config choices, `bucketsim list policies`, `--help`, the README's tables and "unknown X 'y';
 * valid: ..." errors are all generated from it.
 *
 * Families (each with its own ops struct in its own header):
 *   order       scheduler.order      waiting-queue order          (policies/order.h)
 *   grouping    scheduler.grouping   request grouping             (policies/grouping.h)
 *   batching    scheduler.batching   batch controller             (policies/batching.h)
 *   bucketing   bucketing.strategy   shape-bucketing strategy     (policies/bucketing.h)
 *   loop        cluster.engine_loop  pipeline-parallel engine loop
 * (the exact set and headers are whatever registry.c lists).
 *
 * Ownership: everything here is static, read-only data.
 */
#ifndef BS_POLICY_H
#define BS_POLICY_H

#include <stddef.h>

#include "sim/config.h"

/* The first member of every policy's ops struct. */
struct policy_info {
	const char *name;             /* the value of its family's config key, e.g. "sjf" */
	const char *doc;              /* one line */
	const struct cfg_def *keys;   /* the config keys only this policy reads, in the config
				       * table's row format (NULL-terminated), or NULL */
};

/* One family of interchangeable policies, chosen by one config key. */
struct policy_family {
	const char *name;             /* "order", "grouping", ... */
	const char *key;              /* the choosing config key, e.g. "scheduler.order" */
	const char *doc;              /* one line */
	const struct policy_info *const *members; /* NULL-terminated */
};

/* NULL-terminated, in registry.c. */
extern const struct policy_family *const policy_families[];

const struct policy_family *policy_family_by_name(const char *name);
const struct policy_family *policy_family_by_key(const char *key);
/* The member named NAME, or NULL. */
const struct policy_info *policy_find(const struct policy_family *f, const char *name);

#endif
