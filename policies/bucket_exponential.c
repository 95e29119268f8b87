/*
 * bucket_exponential: the exponential bucketing strategy (upstream ExponentialBucketingStrategy),
 * the default.
 *
 *   version current (reference 2.1-2.3): five exponential ranges (prompt bs, query, ctx blocks;
 *     decode bs, blocks) from the model's limits, combined by the shared current machinery.
 *   version docs (reference 8): ExpRangeFill over (bs, seq) and (bs, blocks), the triangular
 *     prompt list with prefix caching, the full decode product.
 */
#include <string.h>

#include "policies/bucket_int.h"

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static int gen_current(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnbt = p->max_num_batched_tokens, mnps = p->max_num_prefill_seqs;
	int64_t nhb = p->num_kv_blocks;
	bool cpa = p->contiguous_pa;
	struct bucket_ranges r = {0};
	int rc = -1;
	int64_t qmin_env = 0;
	int e = bucket_env_int(p->cfg, "VLLM_PROMPT_QUERY_BUCKET_MIN", &qmin_env, err);
	if (e < 0)
		return -1;
	int64_t qmin = (e == 1 && qmin_env == 1) ? 1 : B;
	bool lng = mml >= 8192;
	int64_t maxc = max64(1, bucket_floordiv(mml - (lng ? mnbt : qmin), B));
	int64_t climit = maxc == 1 ? 2 : bucket_ceil_log2(maxc) + 1;
	int64_t qlimit = bucket_ceil_log2(mnbt);
	int64_t pb[4], pq[4], pc[4];
	if (p->merged_prefill) {
		int64_t a[4] = {1, 1, 1, 1}, b[4] = {qmin, 4 * B, mnbt, qlimit},
			c[4] = {0, 4, maxc * mnps, climit};
		memcpy(pb, a, sizeof a);
		memcpy(pq, b, sizeof b);
		memcpy(pc, c, sizeof c);
	} else {
		int64_t a[4] = {1, 2, mnps, bucket_ceil_log2(mnps) + 1}, b[4] = {qmin, B, mnbt, qlimit},
			c[4] = {0, 1, maxc, climit};
		memcpy(pb, a, sizeof a);
		memcpy(pq, b, sizeof b);
		memcpy(pc, c, sizeof c);
	}
	int64_t worst = bucket_ceil_div(mml, B) * mns;
	int64_t maxb = cpa ? min64(nhb, worst) : min64(worst, 3 * nhb);
	int64_t db[4] = {1, 2, mns, bucket_ceil_log2(mns) + 1},
		dk[4] = {1, mns, maxb, bucket_ceil_log2(maxb) + 1};
	if (bucket_exp_cfg_ok(pb, "prompt bs", err) || bucket_exp_cfg_ok(pq, "prompt query", err) ||
	    bucket_exp_cfg_ok(pc, "prompt ctx", err) || bucket_exp_cfg_ok(db, "decode bs", err) ||
	    bucket_exp_cfg_ok(dk, "decode block", err))
		return -1;
	brange_exp(&r.bs, pb[0], pb[1], pb[2], pb[3], cpa);
	brange_exp(&r.query, pq[0], pq[1], pq[2], pq[3], cpa);
	brange_exp(&r.ctx, pc[0], pc[1], pc[2], pc[3], cpa);
	brange_exp(&r.dbs, db[0], db[1], db[2], db[3], cpa);
	brange_exp(&r.blocks, dk[0], dk[1], dk[2], dk[3], cpa);
	bucket_cfg_line(g->prompt_cfg, sizeof g->prompt_cfg,
			"Prompt bucket config (min, step, max_warmup, limit)", 4,
			p->merged_prefill ? 7u : 0u, "bs", pb, "query", pq, "blocks", pc);
	bucket_cfg_line(g->decode_cfg, sizeof g->decode_cfg,
			"Decode bucket config (min, step, max_warmup, limit)", 4, 0, "bs", db, "block",
			dk, NULL, NULL);
	rc = bucket_finish_current(p, &r, g, err);
	bucket_ranges_release(&r);
	return rc;
}

static int gen_docs(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnps = p->max_num_prefill_seqs, nhb = p->num_kv_blocks;
	bool cpa = p->contiguous_pa;
	int64_t pb[4] = {1, 1, mnps, bucket_ceil_log2(mnps) + 1},
		ps[4] = {B, B, mml, bucket_ceil_log2(mml) + 1},
		db[4] = {1, 1, mns, bucket_ceil_log2(mns) + 1},
		dk[4] = {B, B, nhb, bucket_ceil_log2(nhb) + 1};
	if (bucket_knob(p, "PROMPT", "BS", "LIMIT", &pb[3], err) < 0 ||
	    bucket_knob(p, "PROMPT", "SEQ", "LIMIT", &ps[3], err) < 0 ||
	    bucket_knob(p, "DECODE", "BS", "LIMIT", &db[3], err) < 0 ||
	    bucket_knob(p, "DECODE", "BLOCK", "LIMIT", &dk[3], err) < 0)
		return -1;
	if (bucket_exp_cfg_ok(pb, "prompt bs", err) || bucket_exp_cfg_ok(ps, "prompt seq", err) ||
	    bucket_exp_cfg_ok(db, "decode bs", err) || bucket_exp_cfg_ok(dk, "decode block", err))
		return -1;
	struct bucket_ranges r = {0};
	int rc = -1;
	brange_exp_fill(&r.bs, pb[0], pb[1], pb[2], pb[3], cpa);
	brange_exp_fill(&r.query, ps[0], ps[1], ps[2], ps[3], cpa);
	brange_exp_fill(&r.dbs, db[0], db[1], db[2], db[3], cpa);
	brange_exp_fill(&r.blocks, dk[0], dk[1], dk[2], dk[3], cpa);
	bucket_cfg_line(g->prompt_cfg, sizeof g->prompt_cfg,
			"Prompt bucket config (min, step, max_warmup, limit)", 4, 0, "bs", pb, "seq", ps,
			NULL, NULL);
	/* the July 2025 exponential code logged no decode config line */
	bucket_cfg_line(g->decode_cfg, sizeof g->decode_cfg,
			"Decode bucket config (min, step, max_warmup, limit)", 4, 0, "bs", db, "block",
			dk, NULL, NULL);
	g->decode_cfg_unlogged = true;
	if (bucket_check_range(&r.bs, "prompt bs", err) ||
	    bucket_check_range(&r.query, "prompt seq", err) ||
	    bucket_check_range(&r.dbs, "decode bs", err) ||
	    bucket_check_range(&r.blocks, "decode block", err) ||
	    bucket_docs_prompt(p, &r.bs, &r.query, ps[2], false, g, err) ||
	    bucket_product_check("decode", (double)r.dbs.n * (double)r.blocks.n, BUCKET_GEN_MAX,
				 err))
		goto out;
	blist_reserve(&g->decode, g->decode.n + r.dbs.n * r.blocks.n);
	for (size_t i = 0; i < r.dbs.n; i++)   /* the full decode product */
		for (size_t j = 0; j < r.blocks.n; j++)
			blist_push(&g->decode, r.dbs.v[i], 1, r.blocks.v[j], 0);
	blist_sort_unique(&g->decode);
	rc = g->decode.n ? 0 : bucket_empty_error("decode", err);
out:
	bucket_ranges_release(&r);
	return rc;
}

static const char *const env_docs[] = {
	BUCKET_KNOB("PROMPT", "BS", "LIMIT"), BUCKET_KNOB("PROMPT", "SEQ", "LIMIT"),
	BUCKET_KNOB("DECODE", "BS", "LIMIT"), BUCKET_KNOB("DECODE", "BLOCK", "LIMIT"), NULL,
};
static const char *const env_current[] = {
	BUCKET_KNOB("PROMPT", "QUERY", "MIN"), BUCKET_KNOB("PROMPT", "CTX", "MAX"), NULL,
};

const struct bucket_strategy bucket_exponential = {
	.info = {"exponential", "exponential ranges in every dimension (the server's default)",
		 NULL},
	.gen_docs = gen_docs,
	.gen_current = gen_current,
	.phases = BUCKET_PHASES_PROMPT_DECODE,
	.upstream_class = "ExponentialBucketingStrategy",
	.env_docs = env_docs,
	.env_current = env_current,
};
