/*
 * kernel_unified: the shape of a unified-attention pass, as vllm-gaudi's create_unified_batch
 * builds it (vllm_gaudi/extension/unified_batch.py as of its last unified-attention version,
 * commit 9929e456; removed upstream since).  Every token of the step is one query; the
 * context a request reads is its computed tokens (a decode's also include the token it
 * writes: cached_tokens); Context.split makes a context block shared when more than one query
 * token of the pass reads it and unique when exactly one does:
 *  - a prompt chunk of more than one token reads its context blocks with all its tokens:
 *    shared; a chunk of one token: unique;
 *  - a decode reads its own blocks with its one token: unique;
 *  - a prefix group's cached blocks are one set of blocks for every request of the group in
 *    the pass: shared (counted once, np.unique) when more than one token reads them.
 * Shared blocks are counted; unique blocks are a contiguous slice of the KV cache
 * (unique_blocks = max(unique block id) + 1: contiguous PA is how unified attention reads
 * them), for which the kernel, without block ids, takes the blocks in use of the pool.  So a
 * pass of prompts alone has no unique part: phase `c--` or `cs-`.  The causal path runs
 * whenever the pass holds a prompt (contains_prompts).  Logits: one per request whose chunk
 * completes its prompt and one per decode; the bucket pads them to max_num_seqs.
 */
#include "sim/kernel_int.h"

void unified_shape(struct sim *s, struct lane *in, int32_t real[4], int32_t *logits)
{
	int64_t query = in->n_dec, shared = 0;
	bool unique = in->n_dec > 0;
	int32_t nlog = in->n_dec;
	int32_t ntouched = 0;
	for (size_t j = 0; j < in->n_items; j++) {
		const struct req *r = &s->r[in->items[j].id];
		int32_t chunk = in->items[j].chunk;
		/* its context: what is computed plus its chunks still in older microbatches */
		int64_t ctx = (int64_t)r->computed + in->items[j].ahead;
		int32_t own = blocks_for(s, ctx) - r->shared;
		query += chunk;
		if (own > 0 && chunk > 1)
			shared += own;
		else if (own > 0)
			unique = true;
		if (ctx + chunk >= r->target)
			nlog++;
		if (r->shared) {
			int32_t g = s->spec[in->items[j].id].prefix_group;
			if (!s->ua_group_tokens[g]++)
				s->ua_touched[ntouched++] = g;
			s->ua_group_tokens[g] += chunk - 1;
		}
	}
	if (s->ngroups) /* decodes reading a prefix group's blocks */
		for (size_t i = 0; i < in->n_run; i++) {
			int32_t id = in->run[i];
			if (s->r[id].state != RS_DECODE || !s->r[id].shared)
				continue;
			int32_t g = s->spec[id].prefix_group;
			if (!s->ua_group_tokens[g]++)
				s->ua_touched[ntouched++] = g;
		}
	for (int32_t k = 0; k < ntouched; k++) {
		int32_t g = s->ua_touched[k];
		if (s->ua_group_tokens[g] > 1)
			shared += in->kv->pc[g].blocks;
		else
			unique = true;
		s->ua_group_tokens[g] = 0;
	}
	real[0] = (int32_t)query;
	real[1] = (int32_t)shared;
	real[2] = unique ? (int32_t)in->kv->used : 0;
	real[3] = in->n_items > 0;
	*logits = nlog;
}

/* The shape of IN's step as one GPU forward (execution mode cuda_graphs, vLLM V1's
 * GPUModelRunner: every scheduled token flattened, varlen attention without per-sequence
 * padding): (tokens, context blocks its prefill chunks read, blocks its decodes hold, prefill
 * tokens) and its logits (one per decode and per prefill chunk completing its prompt).  A
 * decode's blocks are its own (in->dec_blocks): blocks of a cached prefix it shares are not
 * counted. */
void forward_shape(struct sim *s, struct lane *in, int32_t real[4], int32_t *logits)
{
	int64_t tokens = in->n_dec, ctx = 0, pre = 0;
	int32_t nlog = in->n_dec;
	for (size_t j = 0; j < in->n_items; j++) {
		const struct req *r = &s->r[in->items[j].id];
		int64_t done = prefill_item_context(s, in, j);
		int32_t chunk = in->items[j].chunk;
		ctx += blocks_for(s, done);
		pre += chunk;
		if (done + chunk >= r->target)
			nlog++;
	}
	tokens += pre;
	real[0] = (int32_t)tokens;
	real[1] = (int32_t)ctx;
	real[2] = (int32_t)in->dec_blocks;
	real[3] = (int32_t)pre;
	*logits = nlog;
}
