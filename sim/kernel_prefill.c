/*
 * kernel_prefill: how a step's prefill chunks are grouped into forward passes, and the padded
 * shape of each group, as vllm-gaudi's HPUModelRunner forms them
 * (vllm_gaudi/v1/worker/hpu_model_runner.py):
 *
 * - _extract_prefill_batch_contents walks the step's prefills in order and appends each to the
 *   current group when _can_merge_prefill_contents allows it, else starts a new group;
 * - _can_merge_prefill_contents: a prefill with context ("history": tokens already computed)
 *   joins no non-empty group, and a group holding one takes no other; otherwise the group with
 *   the candidate is bucketed as a prompt without context and accepted when the bucket's batch
 *   size is at most max_prefill_batch_size (server.max_num_prefill_seqs; more requests than
 *   that are refused before any bucket) and bs x seq fits max_num_batched_tokens;
 * - the group's pass: _bucketize_2d_prompt, a padded batch (bs, longest chunk, largest context
 *   blocks); with merged prefill (VLLM_MERGED_PREFILL) _bucketize_merged_prompt, one sequence
 *   of all chunks (1, prompt bucket of the summed tokens, summed context blocks rounded up to
 *   a multiple of 32).
 *
 * Under a batch controller whose batch is one padded pass (padded_pass: the BucketServe paper's
 * prefill batch, policies/batching_prefill_batch.c) every fresh prompt of the step joins one
 * group, whatever max_num_prefill_seqs and the token budget say; prompts with history still
 * run apart, as above.
 */
#include "sim/kernel_int.h"

/* The bucket of a prompt pass of real shape REAL (no compile). */
static void prompt_bucket(struct sim *s, const int32_t real[4], int32_t out[4])
{
	shape_graph(s, PHASE_PROMPT, real, false, out);
}

/* The real shape of the pass of items [I, END): 2-D (bs, longest chunk, largest context
 * blocks) or merged (1, summed chunks, summed context blocks). */
static void group_shape(struct sim *s, const struct lane *in, size_t i, size_t end,
			bool with_ctx, int32_t real[4])
{
	bool merged = s->p.merged_prefill;
	real[0] = merged ? 1 : (int32_t)(end - i);
	real[1] = real[2] = real[3] = 0;
	for (size_t j = i; j < end; j++) {
		int32_t chunk = in->items[j].chunk;
		int32_t ctx = with_ctx ? blocks_for(s, prefill_item_context(s, in, j)) : 0;
		real[1] = merged ? real[1] + chunk : (chunk > real[1] ? chunk : real[1]);
		real[2] = merged ? real[2] + ctx : (ctx > real[2] ? ctx : real[2]);
	}
}

/* _can_merge_prefill_contents: may item END join the group [I, END)? */
static bool can_merge(struct sim *s, const struct lane *in, size_t i, size_t end)
{
	if (prefill_item_context(s, in, end) > 0)
		return false; /* history: it starts a group of its own */
	if (prefill_item_context(s, in, i) > 0)
		return false; /* the group has history: it takes nothing more */
	if (s->p.batching->padded_pass)
		return true; /* the controller's batch is one padded pass (policies/batching.h),
			      * admitted with no token budget (step_budget, sim/kernel_engine.h) */
	if (!s->p.merged_prefill && end + 1 - i > (size_t)s->p.max_num_prefill_seqs)
		return false; /* _bucketize_2d_prompt raises BucketingFailedException */
	int32_t real[4], b[4];
	group_shape(s, in, i, end + 1, false, real);
	prompt_bucket(s, real, b);
	if (s->p.merged_prefill)
		b[0] = 1;
	return b[0] <= s->p.max_num_prefill_seqs &&
	       (int64_t)b[0] * b[1] <= s->p.max_num_batched_tokens;
}

size_t prefill_group_(struct sim *s, const struct lane *in, size_t i, int32_t real[4])
{
	size_t end = i + 1;
	while (end < in->n_items && can_merge(s, in, i, end))
		end++;
	group_shape(s, in, i, end, true, real);
	return end;
}
