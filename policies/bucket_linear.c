/*
 * bucket_linear: the linear bucketing strategy (upstream LinearBucketingStrategy).
 *
 *   version current (reference 3): linear ranges (ramp-up doubling, then multiples of the step)
 *     of prompt bs, query, ctx blocks and decode bs, blocks, each tunable by its
 *     VLLM_*_BUCKET_{MIN,STEP,MAX} variables; combined by the shared current machinery.
 *   version docs (reference 8): the legacy linear ramp over (bs, seq) and (bs, blocks), the
 *     triangular prompt list with prefix caching and the legacy decode rule.
 */
#include <string.h>

#include "policies/bucket_int.h"

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static int gen_current(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnbt = p->max_num_batched_tokens, mnps = p->max_num_prefill_seqs;
	int64_t pb[3] = {1, 1, mnps}, pq[3] = {B, B, mnbt};
	if (bucket_knobs(p, "PROMPT", "BS", pb, 3, err) || bucket_knobs(p, "PROMPT", "QUERY", pq, 3, err))
		return -1;
	int64_t maxctx = bucket_floordiv(mml - pq[0], B);
	int64_t pc[3] = {0, 1, maxctx};
	bucket_merged_override(p, pb, pq, pc, maxctx);
	if (bucket_knobs(p, "PROMPT", "CTX", pc, 3, err))
		return -1;
	int64_t db[3] = {1, 32, mns};
	int64_t dk[4] = {1, B, p->contiguous_pa ? p->num_kv_blocks : max64(mml * mns / B, B), 0};
	if (bucket_knobs(p, "DECODE", "BS", db, 3, err) ||
	    bucket_decode_blocks_current(p, dk, true, err))
		return -1;
	struct bucket_ranges r = {0};
	int rc = -1;
	if (bucket_lin_range(&r.bs, pb, true, "prompt bs", err) ||
	    bucket_lin_range(&r.query, pq, true, "prompt query", err) ||
	    bucket_lin_range(&r.ctx, pc, true, "prompt ctx", err) ||
	    bucket_lin_range(&r.dbs, db, true, "decode bs", err) ||
	    bucket_lin_range(&r.blocks, dk, true, "decode block", err))
		goto out;
	bucket_cfg_line(g->prompt_cfg, sizeof g->prompt_cfg,
			"Prompt bucket config (min, step, max_warmup)", 3, p->merged_prefill ? 3u : 0u,
			"bs", pb, "query", pq, "blocks", pc);
	bucket_cfg_line(g->decode_cfg, sizeof g->decode_cfg,
			"Decode bucket config (min, step, max_warmup)", 3, 0, "bs", db, "blocks", dk,
			NULL, NULL);
	rc = bucket_finish_current(p, &r, g, err);
out:
	bucket_ranges_release(&r);
	return rc;
}

static int gen_docs(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnbt = p->max_num_batched_tokens, mnps = p->max_num_prefill_seqs;
	int64_t nhb = p->num_kv_blocks;
	int64_t pb[3] = {1, 32, mnps}, ps[3] = {B, B, mml}, db[3] = {1, 32, mns}, dk[3] = {B, B, nhb};
	if (bucket_knobs(p, "PROMPT", "BS", pb, 3, err) || bucket_knobs(p, "PROMPT", "SEQ", ps, 3, err) ||
	    bucket_knobs(p, "DECODE", "BS", db, 3, err) || bucket_knobs(p, "DECODE", "BLOCK", dk, 3, err))
		return -1;
	unsigned tup = 0;
	if (p->merged_prefill) {   /* the legacy linear merged-prefill override */
		int64_t max_bs = pb[2];
		pb[0] = pb[1] = pb[2] = 1;
		ps[2] = min64(max_bs * ps[2], mnbt);
		tup = 3;
	}
	struct bucket_ranges r = {0};
	int rc = -1;
	if (bucket_lin_range(&r.bs, pb, false, "prompt bs", err) ||
	    bucket_lin_range(&r.query, ps, false, "prompt seq", err) ||
	    bucket_lin_range(&r.dbs, db, false, "decode bs", err) ||
	    bucket_lin_range(&r.blocks, dk, false, "decode block", err))
		goto out;
	/* contiguous PA without a user maximum: the block list ends at num_kv_blocks */
	if (p->contiguous_pa && !config_env(p->cfg, "VLLM_DECODE_BLOCK_BUCKET_MAX") &&
	    !ivec_has(&r.blocks, nhb))
		ivec_push(&r.blocks, nhb);
	bucket_cfg_line(g->prompt_cfg, sizeof g->prompt_cfg,
			"Prompt bucket config (min, step, max_warmup)", 3, tup, "bs", pb, "seq", ps,
			NULL, NULL);
	bucket_cfg_line(g->decode_cfg, sizeof g->decode_cfg,
			"Decode bucket config (min, step, max_warmup)", 3, 0, "bs", db, "blocks", dk,
			NULL, NULL);
	/* the legacy linear prompt filter had no max_model_len check */
	if (bucket_check_range(&r.bs, "prompt bs", err) ||
	    bucket_check_range(&r.query, "prompt seq", err) ||
	    bucket_check_range(&r.dbs, "decode bs", err) ||
	    bucket_check_range(&r.blocks, "decode block", err) ||
	    bucket_docs_prompt(p, &r.bs, &r.query, ps[2], true, g, err) ||
	    bucket_product_check("decode", (double)r.dbs.n * (double)r.blocks.n, BUCKET_GEN_MAX,
				 err))
		goto out;
	/* legacy linear decode: skip bs > blocks; the first block value >= num_kv_blocks becomes
	 * num_kv_blocks and ends the row (at most the product, checked above) */
	blist_reserve(&g->decode, g->decode.n + r.dbs.n * r.blocks.n);
	for (size_t i = 0; i < r.dbs.n; i++)
		for (size_t j = 0; j < r.blocks.n; j++) {
			if (r.dbs.v[i] > r.blocks.v[j])
				continue;
			if (r.blocks.v[j] >= nhb) {
				blist_push(&g->decode, r.dbs.v[i], 1, nhb, 0);
				break;
			}
			blist_push(&g->decode, r.dbs.v[i], 1, r.blocks.v[j], 0);
		}
	blist_sort_unique(&g->decode);
	/* the legacy generate_decode_buckets does not check for an empty list (block values all
	 * below the minimum, or every bs above every block value): the server then warms up no
	 * decode graph and every decode batch falls back */
	rc = 0;
out:
	bucket_ranges_release(&r);
	return rc;
}

static const char *const env_docs[] = {
	BUCKET_KNOBS_MMX("PROMPT", "BS"), BUCKET_KNOBS_MMX("PROMPT", "SEQ"),
	BUCKET_KNOBS_MMX("DECODE", "BS"), BUCKET_KNOBS_MMX("DECODE", "BLOCK"), NULL,
};
static const char *const env_current[] = {
	BUCKET_KNOBS_MMX("PROMPT", "BS"), BUCKET_KNOBS_MMX("PROMPT", "QUERY"),
	BUCKET_KNOBS_MMX("PROMPT", "SEQ"), BUCKET_KNOBS_MMX("PROMPT", "CTX"),
	BUCKET_KNOBS_MMX("DECODE", "BS"), BUCKET_KNOBS_MMX("DECODE", "BLOCK"), NULL,
};

const struct bucket_strategy bucket_linear = {
	.info = {"linear", "linear ranges: doubling up to the step, then multiples of the step",
		 NULL},
	.gen_docs = gen_docs,
	.gen_current = gen_current,
	.phases = BUCKET_PHASES_PROMPT_DECODE,
	.upstream_class = "LinearBucketingStrategy",
	.env_docs = env_docs,
	.env_current = env_current,
};
