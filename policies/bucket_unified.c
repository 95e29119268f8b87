/*
 * bucket_unified: unified-attention buckets (query, shared_blocks, unique_blocks, causal),
 * reference 6.  Chosen by bucketing.strategy=unified or VLLM_UNIFIED_ATTN=true.  Version docs
 * uses the alpha (six-point) ranges, version current the last (ten-point) ones.  A look-up
 * miss runs unpadded (no fallback bucket).
 */
#include <string.h>

#include "policies/bucket_int.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static bool keep(const struct bucket_params *p, bool alpha, int64_t q, int64_t s, int64_t u,
		 int causal)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	if (causal) {
		int64_t d = min64(mns, q);
		return d > 0 && (s * B) / d <= mml;   /* upstream divides by zero here: dropped */
	}
	if (q > mns || !(s > 0 || u > 0))
		return false;
	if (s != 0) {
		if (alpha && !(q > 1))
			return false;
		if (q / 2 == 0 || (s * B) / (q / 2) > mml)
			return false;
	}
	if (!alpha && !(s > 0 || q <= u))
		return false;
	return true;
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
	if (bucket_product_check("unified", 2.0 * (double)q.n * (double)s.n * (double)u.n, err))
		goto out;
	for (size_t i = 0; i < q.n; i++)
		for (size_t j = 0; j < s.n; j++)
			for (size_t k = 0; k < u.n; k++)
				for (int c = 0; c < 2; c++)
					if (keep(p, alpha, q.v[i], s.v[j], u.v[k], c))
						blist_push(&g->unified, q.v[i], s.v[j], u.v[k], c);
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
