/*
 * batching_prefill_batch: the BucketServe paper's prefill batch: up to N_max waiting requests
 * taken from one bucket in its order (arrival order when there is one bucket), run whole as
 * one pass padded to the longest prompt (Eq. 1: S_max x N), within M_safe of the instance.
 *
 * The paper's Dynamic Batching Controller "takes requests from the buckets and groups them into
 * batches", sized so that the batch's KV cache, Eq. 1's 2LHD x S_max x B x N, fits the safe
 * memory of Eq. 5; the P/D scheduler then runs those batches first come first served at the
 * prefill workers (Section III).  A batch is therefore a padded tensor of N prompts, and the
 * only bound on it is memory: no token budget per step and no chunking (a prompt never waits
 * for a later step).  The batch test is bsb_fits() under BSB_PADDED (N x S_max <= M_safe in
 * tokens), the rule memory_safe applies with scheduler.kv_accounting=padded; since
 * N x S_max >= S_1 + ... + S_N, a batch never exceeds the N_max of Eq. 6 over the same
 * requests.  M_remain is the instance's KV capacity not reserved by the requests it runs.
 *
 * The kernel runs the step's new prompts (the batch) as one 2-D prompt pass
 * (sim/kernel_prefill.c: the pass shape is (N, longest prompt) and the execution mode pads it
 * as it pads any prompt pass: on Gaudi to the prompt bucket, compiling a shape beyond the
 * warmed-up ones).
 */
#include "policies/batching.h"

static bool take(struct batch_view *d, struct batch_cand *c)
{
	const struct bucketserve_cfg *bc = d->bsc;
	int64_t remain = d->kv_tokens - d->kv_reserved;
	uint64_t safe = bsb_safe_bytes(bc->mem_safe_fraction, (uint64_t)(remain > 0 ? remain : 0));
	uint64_t len = (uint64_t)c->q->prompt_tokens;
	if (!bsb_fits(d->n, d->charged, d->longest, len, safe, BSB_PADDED))
		return false;
	d->charged += len;
	if (len > d->longest)
		d->longest = len;
	c->reserve = (int32_t)len;
	return true;
}

const struct batch_policy batching_prefill_batch = {
	.info = {"prefill_batch", "BucketServe paper's prefill batch: up to N_max requests from one bucket (arrival order with one bucket), whole prompts as one pass padded to S_max x N (Eq. 1) within M_safe (Eq. 5), no token budget", NULL},
	.buckets = true,
	.unified = false,
	.beyond_budget = false,
	.idle_only = false,
	.padded_pass = true,
	.reads = BV_KV,
	.take = take,
};
