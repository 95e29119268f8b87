/*
 * bucket_padding_aware: the padding-aware bucketing strategy (upstream
 * PaddingAwareBucketingStrategy, added to vllm-gaudi main in April 2026, so version current
 * only).  Ranges grow by at most pad_max and pad_percent per step (reference 4), each tunable by
 * its VLLM_*_BUCKET_{MIN,STEP,MAX,PAD_MAX,PAD_PERCENT} variables; combined by the shared current
 * machinery.
 */
#include <stddef.h>

#include "policies/bucket_int.h"

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int gen_current(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnbt = p->max_num_batched_tokens, mnps = p->max_num_prefill_seqs;
	int64_t pb[5] = {1, 1, mnps, bucket_ceil_div(mnps, 4), 25};
	int64_t pq[5] = {B, B, mnbt, bucket_ceil_div(mnbt, 4), 25};
	if (bucket_knobs(p, "PROMPT", "BS", pb, 5, err) || bucket_knobs(p, "PROMPT", "QUERY", pq, 5, err))
		return -1;
	int64_t maxctx = bucket_ceil_div(mml - pq[0], B);
	int64_t pc[5] = {0, 2, maxctx, bucket_ceil_div(mnbt, B), 25};
	bucket_merged_override(p, pb, pq, pc, maxctx);
	if (bucket_knobs(p, "PROMPT", "CTX", pc, 5, err))
		return -1;
	int64_t db[5] = {1, 2, mns, bucket_ceil_div(mns, 4), 25};
	int64_t dk[5] = {B, B,
			 p->contiguous_pa ? p->num_kv_blocks : max64(bucket_ceil_div(mml * mns, B), B),
			 0, 25};
	if (bucket_knobs(p, "DECODE", "BS", db, 5, err) ||
	    bucket_decode_blocks_current(p, dk, false, err) ||
	    bucket_knob(p, "DECODE", "BLOCK", "PAD_MAX", &dk[3], err) < 0 ||
	    bucket_knob(p, "DECODE", "BLOCK", "PAD_PERCENT", &dk[4], err) < 0)
		return -1;
	struct bucket_ranges r = {0};
	int rc = -1;
	if (bucket_pad_range(&r.bs, pb, "prompt bs", err) ||
	    bucket_pad_range(&r.query, pq, "prompt query", err) ||
	    bucket_pad_range(&r.ctx, pc, "prompt ctx", err) ||
	    bucket_pad_range(&r.dbs, db, "decode bs", err) ||
	    bucket_pad_range(&r.blocks, dk, "decode block", err))
		goto out;
	bucket_cfg_line(g->prompt_cfg, sizeof g->prompt_cfg,
			"Prompt bucket config (min, step, max_warmup, pad_max, pad_percent)", 5,
			p->merged_prefill ? 3u : 0u, "bs", pb, "query", pq, "blocks", pc);
	bucket_cfg_line(g->decode_cfg, sizeof g->decode_cfg,
			"Decode bucket config (min, step, max_warmup, pad_max, pad_percent)", 5, 0, "bs",
			db, "blocks", dk, NULL, NULL);
	rc = bucket_finish_current(p, &r, g, err);
out:
	bucket_ranges_release(&r);
	return rc;
}

static const char *const env_current[] = {
	BUCKET_KNOBS_PAD("PROMPT", "BS"), BUCKET_KNOBS_PAD("PROMPT", "QUERY"),
	BUCKET_KNOBS_PAD("PROMPT", "SEQ"), BUCKET_KNOBS_PAD("PROMPT", "CTX"),
	BUCKET_KNOBS_PAD("DECODE", "BS"), BUCKET_KNOBS_PAD("DECODE", "BLOCK"), NULL,
};

const struct bucket_strategy bucket_padding_aware = {
	.info = {"padding_aware", "ranges whose steps bound the padding (pad_max, pad_percent); "
		 "version current only", NULL},
	.gen_docs = NULL,   /* not in the July 2025 code */
	.gen_current = gen_current,
	.phases = BUCKET_PHASES_PROMPT_DECODE,
	.upstream_class = "PaddingAwareBucketingStrategy",
	.env_docs = NULL,
	.env_current = env_current,
};
