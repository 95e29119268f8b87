/*
 * bucketserve: configuration of the BucketServe policies and the small glue between the
 * Request Bucketing Manager and the Dynamic Batching Controller.  See bucketserve.h.
 */
#include "policies/bucketserve.h"

#include "policies/grouping.h"
#include "policies/order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int bucketserve_cfg_resolve(const struct config *c, struct bucketserve_cfg *out,
			    struct bs_err *err)
{
	memset(out, 0, sizeof *out);
	const struct order_policy *order = order_policy(config_str(c, "scheduler.order"));
	if (!order)
		BUG("an order not in the registry");
	out->pick = order->earliest_bucket ? BUCKETSERVE_PICK_EARLIEST : BUCKETSERVE_PICK_ORDER;
	const struct grouping_policy *g = grouping_policy(config_str(c, "scheduler.grouping"));
	if (!g)
		BUG("a grouping not in the registry");
	out->grouping = g;
	policy_params_read(&g->info, c, &out->gpar);
	int64_t lmax;
	if (config_is_set(c, "scheduler.l_max"))
		lmax = config_int(c, "scheduler.l_max");
	else if (config_is_set(c, "server.max_model_len"))
		lmax = config_int(c, "server.max_model_len");
	else
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "scheduler.l_max",
			       "unknown: set scheduler.l_max or server.max_model_len");
	out->bsm.l_max = (uint32_t)lmax;
	if (g->bounds) {
		if (g->bounds(c, out->bsm.l_max, &out->bounds, &out->bsm.nbounds, err) < 0)
			return -1;
		out->bsm.bounds = out->bounds;
	}
	const char *a = config_str(c, "scheduler.adjust");
	out->adjust = strcmp(a, "batch") == 0    ? BUCKETSERVE_ADJUST_BATCH
		      : strcmp(a, "period") == 0 ? BUCKETSERVE_ADJUST_PERIOD
						 : BUCKETSERVE_ADJUST_ARRIVAL;
	out->adjust_period_ns = (int64_t)llround(config_double(c, "scheduler.adjust_period_s") * 1e9);
	out->n_max = config_is_set(c, "scheduler.n_max") ? (uint64_t)config_int(c, "scheduler.n_max")
							 : 0;
	out->mem_safe_fraction = config_double(c, "scheduler.mem_safe_fraction");
	out->nmax_sum = !strcmp(config_str(c, "scheduler.nmax_memory"), "sum");
	out->accounting = strcmp(config_str(c, "scheduler.kv_accounting"), "padded") == 0
				  ? BSB_PADDED
				  : BSB_SUM;
	out->charge = strcmp(config_str(c, "scheduler.kv_charge"), "total") == 0
			      ? BSB_CHARGE_TOTAL
			      : BSB_CHARGE_KEY;
	return 0;
}

void bucketserve_cfg_release(struct bucketserve_cfg *bc)
{
	free(bc->bounds);
	memset(bc, 0, sizeof *bc);
}

uint64_t bucketserve_nmax(const struct bucketserve_cfg *bc, const struct bsm *m,
			  uint64_t budget_tokens)
{
	if (bc->n_max)
		return bc->n_max;
	uint64_t n = bsm_nmax_auto(m, budget_tokens);
	return bc->grid_nmax && bc->grid_nmax < n ? bc->grid_nmax : n;
}

void bucketserve_adjust(const struct bucketserve_cfg *bc, struct bsm *m, uint64_t budget_tokens,
			struct bsm_adjust_result *res)
{
	bucketserve_adjust_with(bc, m, bucketserve_nmax(bc, m, budget_tokens), res);
}

void bucketserve_adjust_with(const struct bucketserve_cfg *bc, struct bsm *m, uint64_t n_max,
			     struct bsm_adjust_result *res)
{
	struct bsm_adjust_result dummy;
	if (!res)
		res = &dummy;
	res->splits = 0;
	res->merged = false;
	if (bc->grouping->adjust)
		bc->grouping->adjust(m, n_max, bc->gpar.v, res);
}

int64_t bucketserve_pick(const struct bucketserve_cfg *bc, const struct bsm *m)
{
	return bc->pick == BUCKETSERVE_PICK_EARLIEST ? bsm_earliest_bucket(m) : bsm_best_bucket(m);
}
