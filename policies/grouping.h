/*
 * grouping: the request-grouping family (scheduler.grouping): whether and how waiting requests
 * are grouped into BucketServe length buckets (policies/bs_manager.h).  See policies/policy.h.
 *
 * A grouping is its two operations on the bucket manager: the buckets it starts with
 * (bounds()) and how it changes them (adjust()); the kernel decides when adjust() runs
 * (scheduler.adjust: after an arrival, before a batch, on a timer) and with which threshold
 * N_max (scheduler.n_max, or Eq. 6 over the queue and the KV budget).
 * Ownership: static, read-only data.
 */
#ifndef BS_GROUPING_H
#define BS_GROUPING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/bs_manager.h"
#include "policies/policy.h"
#include "sim/config.h"
#include "sim/util.h"

struct grouping_policy {
	struct policy_info info;
	/* Waiting requests in buckets (also forced on by an order or batch controller that needs
	 * them).  Data: the kernel's one rule "grouped or one plain queue". */
	bool buckets;
	/* The initial boundaries for a manager of L_MAX tokens, read from CFG: *OUT an owned
	 * array of *N values as bsm_params.bounds wants them.  0, or -1 with ERR (code 3, naming
	 * the key).  NULL: one bucket [0, L_max]. */
	int (*bounds)(const struct config *cfg, uint32_t l_max, uint32_t **out, size_t *n,
		      struct bs_err *err);
	/* Changes the buckets of M with threshold N_MAX (UINT64_MAX: none, the queue is empty)
	 * through bsm_split() and bsm_merge_all(), reporting them in RES (zeroed by the caller).
	 * PAR: its own keys (struct policy_params).  NULL: the boundaries never change.
	 * Fast-path contract: with adjust, bucket boundaries can change what the next batch draws
	 * between two events.  One call may leave the buckets so that the next call changes them
	 * again with nothing else changed (Algorithm 1 splits a bucket at most once a call): run
	 * before each batch (scheduler.adjust=batch), it makes every step different from the
	 * last, and such a lane runs one step per event (no decode jumps). */
	void (*adjust)(struct bsm *m, uint64_t n_max, const double *par,
		       struct bsm_adjust_result *res);
};

extern const struct policy_family grouping_family;
const struct grouping_policy *grouping_policy(const char *name);

#endif
