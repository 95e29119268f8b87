/*
 * policy: what every pluggable policy says of itself, and the registry of families.
 *
 * A policy is one `const` ops struct (not static: the registry declares it extern) in its own
 * file under policies/, whose FIRST member is a `struct policy_info` (so a family's code can
 * turn the info pointer back into its ops struct).  It is registered by one line in
 * policies/registry.c, the only list of policy names: the config choices, `bucketsim list
 * policies` and `list keys`, `--print-config`, and the "unknown X 'y'; valid: ..." errors are
 * all generated from it.  The prose tables of policies/README.md are written by hand (a test
 * checks that they name every registered policy).
 *
 * Its own keys (policy_info.keys) become config keys like any other; a POLICY_READS row there
 * names a key another module owns that it reads too.  In the families whose ops have
 * functions, order (key()), grouping (adjust()) and batching (take(), through the draft), their
 * values reach those functions as a `const double *par`, indexed by the row of the key (struct
 * policy_params): no kernel code is needed for such a policy's parameters.  The loop, mode and
 * bucketing families declare data the kernel acts on (policies/README.md, "Flags that stay
 * data"); their keys are read by the kernel module that implements them (the pipeline, the
 * graph and cost code, the bucketer).
 *
 * Families (each with its own ops struct in its own header):
 *   order       scheduler.order      waiting-queue order          (policies/order.h)
 *   grouping    scheduler.grouping   request grouping             (policies/grouping.h)
 *   batching    scheduler.batching   batch controller             (policies/batching.h)
 *   bucketing   bucketing.strategy   shape-bucketing strategy     (policies/bucketing.h)
 *   loop        cluster.engine_loop  pipeline-parallel engine loop (policies/loop.h)
 *   mode        server.execution_mode  execution mode            (policies/mode.h)
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
	const struct cfg_def *keys;   /* the config keys this policy reads, in the config
				       * table's row format (NULL-terminated), or NULL: its own
				       * keys, defined here, and keys other modules own that it
				       * reads too, each a POLICY_READS row */
};

/* A row of a policy's keys naming a key another module defines (e.g. slo.ttft_ms), which the
 * policy reads: its value reaches par[] at that row like an own key's, it is not defined
 * twice, and config_init() stops with a BUG when no module defines it (or defines it as
 * text).  Whether a user's setting of it is read stays its owner's to say. */
#define POLICY_READS(k) {k, CFG_READS, NULL, 0, 0, NULL, NULL, NULL}

/* The values of the chosen policy's keys (its own and those it reads), par[ROW] for the key
 * of row ROW of its policy_info.keys: an integer or a double as set (integers are bounded by their range, exact
 * in a double), a boolean 0 or 1, a choice the index of its value in the row's choices; NaN
 * for text (CFG_STRING: its owner parses it) and for an auto key left unset.  At most
 * POLICY_MAX_KEYS rows, and an integer key's range within 2^53 (config_init() stops with a
 * BUG naming the policy otherwise). */
#define POLICY_MAX_KEYS 8
struct policy_params {
	double v[POLICY_MAX_KEYS];
};

/* Reads INFO's own keys from CFG into OUT. */
struct config;
void policy_params_read(const struct policy_info *info, const struct config *cfg,
			struct policy_params *out);
/* The number of rows of INFO's keys. */
size_t policy_nkeys(const struct policy_info *info);

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
