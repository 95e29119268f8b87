/*
 * bucket_pow2: powers of two in every dimension, a bucketsim baseline (not a vllm-gaudi
 * strategy), and the worked example of policies/README.md, "Adding a bucketing strategy".
 *
 *   prompt bs      1, 2, 4, ... up to the first power of two >= max_num_prefill_seqs
 *   prompt query   the powers of two from the first one >= block_size up to the first one
 *                  >= max_num_batched_tokens
 *   prompt ctx     0, then 1, 2, 4, ... up to the first power of two >= (max_model_len - 1) /
 *                  block_size, rounded up
 *   decode bs      1, 2, 4, ... up to the first power of two >= max_num_seqs
 *   decode blocks  1, 2, 4, ... up to the first power of two >= the blocks of max_num_seqs
 *                  full-length sequences, ceil(max_model_len / block_size) * max_num_seqs,
 *                  capped at num_kv_blocks
 *
 * The ranges go through version current's combination and filters (long-context edge
 * buckets, the token budget, the non-contiguous decode corrector) in both versions; the
 * version still decides the look-up fallbacks and the warm-up skipping (bucketing.c).
 */
#include "policies/bucket_int.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The powers of two from the first one >= LO to the first one >= HI. */
static void pow2_range(struct ivec *r, int64_t lo, int64_t hi)
{
	int64_t x = 1;
	while (x < lo)
		x *= 2;
	for (;; x *= 2) {
		ivec_push(r, x);
		if (x >= hi)
			break;
	}
}

static int gen(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size;
	struct bucket_ranges r = {0};
	pow2_range(&r.bs, 1, p->max_num_prefill_seqs);
	pow2_range(&r.query, B, p->max_num_batched_tokens);
	ivec_push(&r.ctx, 0);
	pow2_range(&r.ctx, 1, bucket_ceil_div(p->max_model_len - 1, B));
	pow2_range(&r.dbs, 1, p->max_num_seqs);
	pow2_range(&r.blocks, 1, min64(bucket_ceil_div(p->max_model_len, B) * p->max_num_seqs,
				       p->num_kv_blocks));
	int rc = bucket_finish_current(p, &r, g, err);
	bucket_ranges_release(&r);
	return rc;
}

/* bucket_combine_prompt() bounds the edge buckets by VLLM_PROMPT_CTX_BUCKET_MAX */
static const char *const env[] = {BUCKET_KNOB("PROMPT", "CTX", "MAX"), NULL};

const struct bucket_strategy bucket_pow2 = {
	.info = {"pow2", "powers of two in every dimension (a bucketsim baseline)", NULL},
	.gen_docs = gen,
	.gen_current = gen,
	.phases = BUCKET_PHASES_PROMPT_DECODE,
	.env_docs = env,
	.env_current = env,
};
