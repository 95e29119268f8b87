/*
 * bucket_unified: unified-attention buckets (query, shared_blocks, unique_blocks, causal),
 * reference 6.  Chosen by bucketing.strategy=unified or VLLM_UNIFIED_ATTN=true.  Version docs
 * uses the alpha (six-point) ranges, version current the last (ten-point) ones.  A look-up
 * miss runs unpadded (no fallback bucket).
 */
#include <string.h>

#include "policies/bucket_int.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Upstream generate_unified_buckets' filter: 1 keep, 0 drop, -1 where upstream divides by zero
 * (causal: shared * B // min(max_num_seqs, query) with a query of 0, which the alpha ranges
 * hold when max_num_seqs < 4; non-causal in the last version: shared * B // (query // 2) with a
 * query of 1, held when max_num_seqs = 1).  Python evaluates the conditions left to right and
 * stops at the first false one, as the C below does. */
static int keep(const struct bucket_params *p, bool alpha, int64_t q, int64_t s, int64_t u,
		int causal)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	if (causal) {
		int64_t d = min64(mns, q);
		if (d <= 0)
			return -1;
		return (s * B) / d <= mml;
	}
	if (q > mns || !(s > 0 || u > 0))
		return 0;
	if (s != 0) {
		if (alpha && !(q > 1))
			return 0;
		if (q / 2 <= 0)
			return -1;
		if ((s * B) / (q / 2) > mml)
			return 0;
	}
	if (!alpha && !(s > 0 || q <= u))
		return 0;
	return 1;
}

static int gen(const struct bucket_params *p, struct bgen *g, bool alpha, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnbt = p->max_num_batched_tokens, nhb = p->num_kv_blocks, tp = mns;
	struct ivec q = {0}, s = {0}, u = {0};
	int64_t cq[3], cs[3], cu[3];
	int rc = -1;
	if (alpha) {
		int64_t a[3] = {B, mnbt, tp}, b[3] = {0, (mml / B) * mns, tp}, c[3] = {0, nhb, tp};
		memcpy(cq, a, sizeof a);
		memcpy(cs, b, sizeof b);
		memcpy(cu, c, sizeof c);
		brange_unified_alpha(&q, cq[0], cq[1], tp);
		brange_unified_alpha(&s, cs[0], cs[1], tp);
		brange_unified_alpha(&u, cu[0], cu[1], tp);
	} else {
		int64_t a[3] = {1, mnbt, tp}, b[3] = {0, min64(mml / B, nhb), tp}, c[3] = {0, nhb, tp};
		memcpy(cq, a, sizeof a);
		memcpy(cs, b, sizeof b);
		memcpy(cu, c, sizeof c);
		brange_unified_last(&q, cq[0], cq[1], tp);
		brange_unified_last(&s, cs[0], cs[1], tp);
		brange_unified_last(&u, cu[0], cu[1], tp);
	}
	if (bucket_check_range(&q, "unified query", err) ||
	    bucket_check_range(&s, "unified shared", err) ||
	    bucket_check_range(&u, "unified unique", err))
		goto out;
	bucket_cfg_line(g->unified_cfg, sizeof g->unified_cfg,
			"Unified bucket config (min, max, turning_point)", 3, 0, "query", cq, "shared",
			cs, "unique", cu);
	g->unified_cfg_unlogged = true;   /* upstream logged only the generated list */
	if (bucket_product_check("unified", 2.0 * (double)q.n * (double)s.n * (double)u.n,
				 BUCKET_GEN_MAX, err))
		goto out;
	for (size_t i = 0; i < q.n; i++)
		for (size_t j = 0; j < s.n; j++)
			for (size_t k = 0; k < u.n; k++)
				for (int c = 0; c < 2; c++) {
					int kp = keep(p, alpha, q.v[i], s.v[j], u.v[k], c);
					if (kp < 0) {
						bs_errf(err, BS_EXIT_INPUT, p->cfg ? p->cfg->file : NULL,
							0, "server.max_num_seqs",
							"unified bucketing of bucketing.version %s "
							"cannot start with max_num_seqs = %lld: the "
							"bucket (%lld, %lld, %lld, %d) makes the server's "
							"generate_unified_buckets divide by zero (need "
							"max_num_seqs >= %d)",
							alpha ? "docs" : "current", (long long)mns,
							(long long)q.v[i], (long long)s.v[j],
							(long long)u.v[k], c, alpha ? 4 : 2);
						goto out;
					}
					if (kp)
						blist_push(&g->unified, q.v[i], s.v[j], u.v[k], c);
				}
	blist_sort_unique(&g->unified);
	rc = g->unified.n ? 0 : bucket_empty_error("unified", err);
out:
	ivec_free(&q);
	ivec_free(&s);
	ivec_free(&u);
	return rc;
}

static int gen_docs(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	return gen(p, g, true, err);
}

static int gen_current(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	return gen(p, g, false, err);
}

const struct bucket_strategy bucket_unified = {
	.info = {"unified", "unified-attention buckets (query, shared, unique blocks, causal) "
		 "(VLLM_UNIFIED_ATTN)", NULL},
	.gen_docs = gen_docs,
	.gen_current = gen_current,
	.phases = BUCKET_PHASES_UNIFIED,
};
