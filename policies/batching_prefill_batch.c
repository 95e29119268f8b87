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
 * Where passes run at their own shape (bucketing.strategy=none or ideal, the GPU testbed of
 * analysis/reproduce_bucketserve.sh), the kernel runs the step's new prompts (the batch) as one
 * 2-D prompt pass of shape (N, longest prompt) (sim/kernel_prefill.c, padded_pass).
 *
 * On Gaudi (sim_params.prompt_grid) a pass runs in a prompt bucket (bs, query, ctx) of the
 * grid the server warmed at start-up, and vllm-gaudi forms its prefill passes only inside it:
 * vLLM's scheduler admits at most max_num_batched_tokens prompt tokens a step, chunking a longer
 * prompt, and the runner (vllm_gaudi/v1/worker/hpu_model_runner.py,
 * _extract_prefill_batch_contents) merges the step's fresh prompts into one padded pass
 * (_bucketize_2d_prompt: (bs, longest, 0) rounded up to a bucket by find_prompt_bucket) while
 * _can_merge_prefill_contents accepts it: bucket bs <= max_prefill_batch_size
 * (VLLM_PROMPT_BS_BUCKET_MAX, server.max_num_prefill_seqs) and bucket bs x query <=
 * max_num_batched_tokens, the filter generate_buckets() warms the grid with.  A deployment of
 * the paper's batches on Gaudi is therefore bounded by that grid: the batch grows while the
 * padded pass of its N prompts stays in a warmed bucket (bucketer_prompt_warm; so N is at most
 * the largest warmed prompt batch size), as well as within M_safe.  The first prompt of a batch
 * always joins; one longer than the grid's longest query runs alone in chunks of the token
 * budget, as vLLM chunks it, each chunk a warmed (1, query, context blocks) bucket.  So a run
 * compiles no prompt shape beyond its warm-up.  This form runs the kernel's token budget and
 * vllm-gaudi's pass grouping (padded_pass off): the batch's prompts are then exactly one pass.
 */
#include "policies/batching.h"
#include "policies/bucketing.h"

static bool take(struct batch_view *d, struct batch_cand *c)
{
	const struct bucketserve_cfg *bc = d->bsc;
	int64_t remain = d->kv_tokens - d->kv_reserved;
	uint64_t safe = bsb_safe_bytes(bc->mem_safe_fraction, (uint64_t)(remain > 0 ? remain : 0));
	uint64_t len = (uint64_t)c->q->prompt_tokens;
	if (!bsb_fits(d->n, d->charged, d->longest, len, safe, BSB_PADDED))
		return false;
	/* On a warmed grid: the pass with the candidate in a warmed bucket (the first always). */
	if (bc->pass_grid && d->n > 0 &&
	    !bucketer_prompt_warm(bc->pass_grid, (int64_t)d->n + 1,
				  (int64_t)(len > d->longest ? len : d->longest),
				  (int64_t)(d->charged + len)))
		return false;
	d->charged += len;
	if (len > d->longest)
		d->longest = len;
	c->reserve = (int32_t)len;
	return true;
}

#define PREFILL_BATCH_INFO                                                                      \
	{"prefill_batch", "BucketServe paper's prefill batch: up to N_max requests from one bucket "  \
	 "(arrival order with one bucket) as one pass padded to S_max x N (Eq. 1) within M_safe "    \
	 "(Eq. 5); on Gaudi the pass stays in a warmed prompt bucket (bs <= "                         \
	 "server.max_num_prefill_seqs, bs x query <= server.max_num_batched_tokens, a longer prompt " \
	 "alone in chunks), elsewhere whole prompts, no token budget", NULL}

extern const struct batch_policy batching_prefill_batch;
static const struct batch_policy *setup(const struct batch_setup *su);

/* On Gaudi's warmed prompt grid: the token budget and vllm-gaudi's pass grouping. */
static const struct batch_policy on_grid = {
	.info = PREFILL_BATCH_INFO,
	.buckets = true,
	.unified = false,
	.beyond_budget = false,
	.idle_only = false,
	.padded_pass = false,
	.setup = setup,
	.reads = BV_KV,
	.take = take,
};

/* On a warmed prompt grid: the form above, its batches' passes in the grid (take()), and
 * Algorithm 1's N_max at most the most prompts one warmed pass holds (the largest N whose pass
 * of N one-token prompts is warm: bucketserve_nmax); elsewhere the paper's form. */
static const struct batch_policy *setup(const struct batch_setup *su)
{
	struct bucketserve_cfg *bc = su->bsc;
	if (bc) {   /* either record may be set up again for another grid (the advisor) */
		bc->pass_grid = NULL;
		bc->grid_nmax = 0;
	}
	if (!su->prompt_grid)
		return &batching_prefill_batch;
	if (!bc)
		BUG("prefill_batch without buckets");
	bc->pass_grid = su->prompt_grid;
	while (bucketer_prompt_warm(su->prompt_grid, (int64_t)bc->grid_nmax + 1, 1,
				    (int64_t)bc->grid_nmax + 1))
		bc->grid_nmax++;
	return &on_grid;
}

const struct batch_policy batching_prefill_batch = {
	.info = PREFILL_BATCH_INFO,
	.buckets = true,
	.unified = false,
	.beyond_budget = false,
	.idle_only = false,
	.padded_pass = true,
	.setup = setup,
	.reads = BV_KV,
	.take = take,
};
