/*
 * bucketserve: the BucketServe policies (adaptive request bucketing, memory-safe dynamic
 * batching and padding-waste metrics) and their configuration.
 *
 * This header gathers the three modules and resolves the scheduler.* keys they read:
 *   policies/bs_manager.h  Request Bucketing Manager (Algorithm 1), prefix bsm_
 *   policies/bs_batch.h    Dynamic Batching Controller (Eq. 1, 5, 6), prefix bsb_
 *   analysis/waste.h       padding waste (Eq. 2, 3, 4), prefix waste_
 * None of them depends on the simulation kernel.  Typical use by a scheduler:
 *
 *   bucketserve_cfg_resolve(cfg, &bc, err);  bsm_init(&m, &bc.bsm, err);
 *   on arrival:   req.key = order->key(...);  bsm_insert(&m, id, &req, err);
 *                 if adjust == arrival: bucketserve_adjust()
 *   on a free slot: if adjust == batch: bucketserve_adjust();
 *                 k = bucketserve_pick(&bc, &m);  budget = bsb_budget_tokens(
 *                     bsb_safe_bytes(bc.mem_safe_fraction, m_remain), bsb_kv_bytes_per_token());
 *                 n = bsb_take(&m, k, budget, bc.accounting, bc.charge, max_seqs, ids, cap);
 *   log:          bsm_boundaries(), bsm_nsplits(), bsm_nmerges()
 *
 * Lifetime: bucketserve_cfg_resolve() fills a caller-owned struct that owns the fixed
 * boundaries; bucketserve_cfg_release() frees them.
 */
#ifndef BS_BUCKETSERVE_H
#define BS_BUCKETSERVE_H

#include <stdint.h>

#include "analysis/waste.h"
#include "policies/bs_batch.h"
#include "policies/bs_manager.h"
#include "policies/bucketing.h"
#include "policies/grouping.h"
#include "policies/policy.h"
#include "sim/config.h"
#include "sim/util.h"

enum bucketserve_adjust { BUCKETSERVE_ADJUST_ARRIVAL, BUCKETSERVE_ADJUST_BATCH,
			  BUCKETSERVE_ADJUST_PERIOD };
enum bucketserve_pick {
	BUCKETSERVE_PICK_EARLIEST,  /* scheduler.order = earliest_bucket: bucket of the oldest request */
	BUCKETSERVE_PICK_ORDER,     /* any other order: bucket of the first request in that order */
};

struct bucketserve_cfg {
	struct bsm_params bsm;            /* bsm.bounds points into `bounds` */
	uint32_t *bounds;                 /* owned; NULL unless the grouping has bounds() */
	const struct grouping_policy *grouping;
	struct policy_params gpar;        /* the grouping's own keys */
	enum bucketserve_pick pick;
	enum bucketserve_adjust adjust;
	int64_t adjust_period_ns;
	uint64_t n_max;                   /* 0 = auto (bsm_nmax_auto) */
	bool nmax_sum;                    /* auto N_max budgeted on the free KV of every
					   * instance of the queue (else the freest one's) */
	double mem_safe_fraction;
	enum bsb_accounting accounting;
	enum bsb_charge charge;
	/* The prompt bucket grid the server warms (borrowed; set by the caller after resolution),
	 * or NULL when passes run at their own shape: a prefill batch of
	 * scheduler.batching=prefill_batch grows only while its pass stays in a warmed bucket
	 * (bucketer_prompt_warm). */
	const struct bucketer *pass_grid;
	/* With pass_grid: the most prompts one warmed pass holds (the largest N whose pass of
	 * N one-token prompts is warm), which bounds the auto N_max as memory does; 0 = none. */
	uint64_t grid_nmax;
};

/* Reads scheduler.order, grouping and the grouping's own keys (its bounds() reads
 * scheduler.boundaries for fixed), l_max (auto: server.max_model_len), adjust,
 * adjust_period_s, n_max, mem_safe_fraction, kv_accounting, kv_charge.  Errors (code 3) name
 * the key: boundaries missing with grouping = fixed, boundaries not ending at L_max, no L_max
 * known. */
int bucketserve_cfg_resolve(const struct config *c, struct bucketserve_cfg *out,
			    struct bs_err *err);
void bucketserve_cfg_release(struct bucketserve_cfg *bc);

/* The Algorithm 1 threshold: bc->n_max when set, else bsm_nmax_auto(m, budget_tokens), at
 * most bc->grid_nmax when that is set (a batch is one warmed pass). */
uint64_t bucketserve_nmax(const struct bucketserve_cfg *bc, const struct bsm *m,
			  uint64_t budget_tokens);
/* The grouping's adjust() with that threshold (nothing when it has none).  RES may be NULL. */
void bucketserve_adjust(const struct bucketserve_cfg *bc, struct bsm *m, uint64_t budget_tokens,
			struct bsm_adjust_result *res);
/* The grouping's adjust() with threshold N_MAX.  RES may be NULL. */
void bucketserve_adjust_with(const struct bucketserve_cfg *bc, struct bsm *m, uint64_t n_max,
			     struct bsm_adjust_result *res);
/* Bucket to serve next under bc->pick, or -1 when nothing is queued. */
int64_t bucketserve_pick(const struct bucketserve_cfg *bc, const struct bsm *m);

#endif
