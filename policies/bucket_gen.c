/*
 * bucket_gen: the warm-up bucket lists of one configuration, per version and strategy.
 *
 *   version current (vllm-gaudi main, reference 2-6): each strategy yields per-dimension
 *     configs, ranges are combined by combine_prompt()/combine_decode() (2.4: long-context edge
 *     buckets, filters, the non-contiguous decode corrector), file buckets go through the same
 *     filters without the edge rule; unified uses the last (ten-point) version.
 *   version docs (the July 2025 extension, reference 8): ExpRangeFill or the legacy linear
 *     ramp, the triangular prompt list with prefix caching, the full decode product; unified
 *     uses the alpha (six-point) version; file buckets are used as written.
 *
 * Every list is sorted lexicographically and deduplicated, as Python's sorted(set(...)).
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/bucket_int.h"

int bucket_env_int(const struct config *cfg, const char *name, int64_t *out, struct bs_err *err)
{
	const char *s = cfg ? config_env(cfg, name) : NULL;
	if (!s)
		return 0;
	char why[160];
	if (parse_i64(s, INT32_MIN, INT32_MAX, out, why, sizeof why))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, name, "%s", why);
	return 1;
}

static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* A config written as Python prints a list [v0, v1, ...] or, with TUPLE, a tuple (v0, v1, ...). */
static void cfg_str(char *buf, size_t len, const int64_t *v, int n, bool tuple)
{
	size_t o = (size_t)snprintf(buf, len, tuple ? "(" : "[");
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, i ? ", %lld" : "%lld", (long long)v[i]);
	if (o < len)
		snprintf(buf + o, len - o, tuple ? ")" : "]");
}

/* VLLM_{PHASE}_{DIM}_BUCKET_{PARAM}; the QUERY dimension falls back to the legacy SEQ name. */
static int knob(const struct bucket_params *p, const char *phase, const char *dim,
		const char *param, int64_t *val, struct bs_err *err)
{
	char name[96];
	snprintf(name, sizeof name, "VLLM_%s_%s_BUCKET_%s", phase, dim, param);
	int rc = bucket_env_int(p->cfg, name, val, err);
	if (rc == 0 && !strcmp(dim, "QUERY")) {
		snprintf(name, sizeof name, "VLLM_%s_SEQ_BUCKET_%s", phase, param);
		rc = bucket_env_int(p->cfg, name, val, err);
	}
	return rc;
}

/* Reads the first N of (MIN, STEP, MAX, PAD_MAX, PAD_PERCENT) over the defaults in V. */
static int knobs(const struct bucket_params *p, const char *phase, const char *dim, int64_t *v,
		 int n, struct bs_err *err)
{
	static const char *const names[5] = {"MIN", "STEP", "MAX", "PAD_MAX", "PAD_PERCENT"};
	for (int i = 0; i < n; i++)
		if (knob(p, phase, dim, names[i], &v[i], err) < 0)
			return -1;
	return 0;
}

static int check_range(const struct ivec *r, const char *what, struct bs_err *err)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i] < 0 || r->v[i] > INT32_MAX)
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, NULL,
				       "%s bucket value %lld out of range (0 to %d)", what,
				       (long long)r->v[i], INT32_MAX);
	return 0;
}

/* The variable VLLM_{WHAT}_BUCKET_{PARAM} ("decode block" -> VLLM_DECODE_BLOCK_BUCKET_STEP), so
 * an error about a bucket config names the setting to change. */
static const char *knob_name(char *buf, size_t len, const char *what, const char *param)
{
	size_t o = (size_t)snprintf(buf, len, "VLLM_");
	for (const char *p = what; *p && o + 1 < len; p++)
		buf[o++] = *p == ' ' ? '_' : (char)toupper((unsigned char)*p);
	snprintf(buf + o, len - o, "_BUCKET_%s", param);
	return buf;
}

static int lin_range(struct ivec *r, const int64_t *c, bool head, const char *what,
		     struct bs_err *err)
{
	char kn[96];
	if (brange_lin(r, c[0], c[1], c[2], head))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0,
			       knob_name(kn, sizeof kn, what, c[1] < 1 ? "STEP"
							 : c[0] < (head ? 0 : 1) ? "MIN" : "MAX"),
			       "%s linear bucket config (min, step, max) = (%lld, %lld, %lld) is "
			       "invalid: need %s, step >= 1 and min <= max", what, (long long)c[0],
			       (long long)c[1], (long long)c[2], head ? "min >= 0" : "min >= 1");
	return check_range(r, what, err);
}

static int pad_range(struct ivec *r, const int64_t *c, const char *what, struct bs_err *err)
{
	char kn[96];
	if (c[3] < 0 || c[4] < 0 || c[4] > 50 || brange_pad(r, c[0], c[1], c[2], c[3], c[4]))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0,
			       knob_name(kn, sizeof kn, what, c[3] < 0 ? "PAD_MAX"
							 : c[4] < 0 || c[4] > 50 ? "PAD_PERCENT"
							 : c[1] < 1 ? "STEP" : c[0] < 0 ? "MIN" : "MAX"),
			       "%s padding-aware bucket config (min, step, max, pad_max, pad_percent) "
			       "= (%lld, %lld, %lld, %lld, %lld) is invalid: need 0 <= min <= max, "
			       "step >= 1, pad_max >= 0 and 0 <= pad_percent <= 50", what, (long long)c[0],
			       (long long)c[1], (long long)c[2], (long long)c[3], (long long)c[4]);
	return check_range(r, what, err);
}

static int exp_cfg_ok(const int64_t *c, const char *what, struct bs_err *err)
{
	char kn[96];
	if (c[1] < 1 || c[2] < 0 || c[3] < 1 || (c[0] > 1 && c[2] < 1))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0,
			       c[3] < 1 && c[1] >= 1 && c[2] >= 0 ? NULL /* the limit is derived */
			       : knob_name(kn, sizeof kn, what, c[1] < 1 ? "STEP" : "MAX"),
			       "%s exponential bucket config (min, step, max, limit) = (%lld, %lld, "
			       "%lld, %lld) is invalid", what, (long long)c[0], (long long)c[1],
			       (long long)c[2], (long long)c[3]);
	return 0;
}

static int empty_error(const char *phase, struct bs_err *err)
{
	return bs_errf(err, BS_EXIT_INPUT, NULL, 0, NULL,
		       "generated 0 %s buckets: no bucket satisfies the filters for this "
		       "configuration (check server.max_model_len, server.max_num_batched_tokens and "
		       "the bucket settings)", phase);
}

/* ---- version current: combination, filters and correctors (reference 2.4) ---- */

static bool prompt_keep(const struct bucket_params *p, int64_t bs, int64_t q, int64_t c)
{
	int64_t B = p->block_size, mml = p->max_model_len;
	if (p->merged_prefill) {
		int64_t mnps = p->max_num_prefill_seqs;
		return c <= mnps * floordiv(mml - q / mnps, B);
	}
	return c <= bucket_ceil_div(mml - 1, B) && q <= mml && bs * q <= p->max_num_batched_tokens;
}

int bucket_combine_prompt(const struct bucket_params *p, const struct ivec *bs,
			  const struct ivec *qr, const struct ivec *ctx, struct blist *out,
			  struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, cmax_env = 0;
	int has_cmax = bucket_env_int(p->cfg, "VLLM_PROMPT_CTX_BUCKET_MAX", &cmax_env, err);
	if (has_cmax < 0)
		return -1;
	int64_t maxc = ivec_max(ctx);
	/* Upstream common.generate_buckets tests only is_prompt, the largest ctx and
	 * max_model_len >= LONG_CTX_THRESHOLD: the edge rule also applies with merged prefill
	 * (where the merged-prefill ctx filter then judges the edge bucket). */
	bool edge = mml >= 8192;
	for (size_t i = 0; i < bs->n; i++)
		for (size_t j = 0; j < ctx->n; j++) {
			int64_t c = ctx->v[j];
			/* Decided once per (bs, ctx) pair; the replaced ctx then carries over to the
			 * next query when its edge value is not allowed (upstream reassigns the loop
			 * variable). */
			bool is_max = c == maxc;
			for (size_t k = 0; k < qr->n; k++) {
				int64_t q = qr->v[k];
				if (edge && is_max) {
					int64_t e = floordiv(mml - q, B);
					if (e >= 0 && (!has_cmax || e < cmax_env))
						c = e;
				}
				if (prompt_keep(p, bs->v[i], q, c))
					blist_push(out, bs->v[i], q, c, 0);
			}
		}
	blist_sort_unique(out);
	return out->n ? 0 : empty_error("prompt", err);
}

/* The non-contiguous decode filter and corrector, applied in place (then re-sorted). */
static void correct_decode(const struct bucket_params *p, struct blist *l)
{
	if (p->contiguous_pa)
		return;
	int64_t per = bucket_ceil_div(p->max_model_len, p->block_size);
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		int64_t bs = l->a[i].v[0], c = l->a[i].v[2];
		if (bs > c)
			continue;
		l->a[k] = l->a[i];
		l->a[k].v[2] = (int32_t)min64(c, bs * per);
		k++;
	}
	l->n = k;
}

int bucket_combine_decode(const struct bucket_params *p, const struct ivec *bs,
			  const struct ivec *blocks, struct blist *out, struct bs_err *err)
{
	for (size_t i = 0; i < bs->n; i++)
		for (size_t j = 0; j < blocks->n; j++)
			blist_push(out, bs->v[i], 1, blocks->v[j], 0);
	correct_decode(p, out);
	blist_sort_unique(out);
	return out->n ? 0 : empty_error("decode", err);
}

/* "HEAD n1:c1, n2:c2[, n3:c3]"; bit k of TUP prints config k as a Python tuple (upstream
 * builds some configs as tuples, e.g. the merged-prefill overrides). */
static void fmt_line(char *buf, size_t len, const char *head, int n, unsigned tup,
		     const char *n1, const int64_t *c1, const char *n2, const int64_t *c2,
		     const char *n3, const int64_t *c3)
{
	char a[160], b[160], c[160];
	cfg_str(a, sizeof a, c1, n, tup & 1);
	cfg_str(b, sizeof b, c2, n, tup & 2);
	if (n3) {
		cfg_str(c, sizeof c, c3, n, tup & 4);
		snprintf(buf, len, "%s %s:%s, %s:%s, %s:%s", head, n1, a, n2, b, n3, c);
	} else {
		snprintf(buf, len, "%s %s:%s, %s:%s", head, n1, a, n2, b);
	}
}

static int gen_current(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnbt = p->max_num_batched_tokens, mnps = p->max_num_prefill_seqs;
	int64_t nhb = p->num_kv_blocks;
	bool cpa = p->contiguous_pa;
	struct ivec bs = {0}, qr = {0}, ctx = {0}, dbs = {0}, blk = {0};
	int rc = -1;
	int64_t pb[5], pq[5], pc[5], db[5], dk[5];

	if (p->strategy == BUCKET_EXPONENTIAL) {
		int64_t qmin_env = 0;
		int r = bucket_env_int(p->cfg, "VLLM_PROMPT_QUERY_BUCKET_MIN", &qmin_env, err);
		if (r < 0)
			goto out;
		int64_t qmin = (r == 1 && qmin_env == 1) ? 1 : B;
		bool lng = mml >= 8192;
		int64_t maxc = max64(1, floordiv(mml - (lng ? mnbt : qmin), B));
		int64_t climit = maxc == 1 ? 2 : bucket_ceil_log2(maxc) + 1;
		int64_t qlimit = bucket_ceil_log2(mnbt);
		if (p->merged_prefill) {
			int64_t a[4] = {1, 1, 1, 1}, b[4] = {qmin, 4 * B, mnbt, qlimit},
				c[4] = {0, 4, maxc * mnps, climit};
			memcpy(pb, a, sizeof a);
			memcpy(pq, b, sizeof b);
			memcpy(pc, c, sizeof c);
		} else {
			int64_t a[4] = {1, 2, mnps, bucket_ceil_log2(mnps) + 1},
				b[4] = {qmin, B, mnbt, qlimit}, c[4] = {0, 1, maxc, climit};
			memcpy(pb, a, sizeof a);
			memcpy(pq, b, sizeof b);
			memcpy(pc, c, sizeof c);
		}
		int64_t worst = bucket_ceil_div(mml, B) * mns;
		int64_t maxb = cpa ? min64(nhb, worst) : min64(worst, 3 * nhb);
		int64_t a[4] = {1, 2, mns, bucket_ceil_log2(mns) + 1},
			b[4] = {1, mns, maxb, bucket_ceil_log2(maxb) + 1};
		memcpy(db, a, sizeof a);
		memcpy(dk, b, sizeof b);
		if (exp_cfg_ok(pb, "prompt bs", err) || exp_cfg_ok(pq, "prompt query", err) ||
		    exp_cfg_ok(pc, "prompt ctx", err) || exp_cfg_ok(db, "decode bs", err) ||
		    exp_cfg_ok(dk, "decode block", err))
			goto out;
		brange_exp(&bs, pb[0], pb[1], pb[2], pb[3], cpa);
		brange_exp(&qr, pq[0], pq[1], pq[2], pq[3], cpa);
		brange_exp(&ctx, pc[0], pc[1], pc[2], pc[3], cpa);
		brange_exp(&dbs, db[0], db[1], db[2], db[3], cpa);
		brange_exp(&blk, dk[0], dk[1], dk[2], dk[3], cpa);
		if (cpa && blk.n && blk.v[blk.n - 1] < nhb)
			ivec_push(&blk, nhb);
		fmt_line(g->prompt_cfg, sizeof g->prompt_cfg,
			 "Prompt bucket config (min, step, max_warmup, limit)", 4,
			 p->merged_prefill ? 7u : 0u, "bs", pb, "query", pq, "blocks", pc);
		fmt_line(g->decode_cfg, sizeof g->decode_cfg,
			 "Decode bucket config (min, step, max_warmup, limit)", 4, 0, "bs", db, "block",
			 dk, NULL, NULL);
	} else if (p->strategy == BUCKET_LINEAR || p->strategy == BUCKET_PADDING_AWARE) {
		bool pad = p->strategy == BUCKET_PADDING_AWARE;
		int n = pad ? 5 : 3;
		int64_t a[5] = {1, 1, mnps, bucket_ceil_div(mnps, 4), 25};
		int64_t b[5] = {B, B, mnbt, bucket_ceil_div(mnbt, 4), 25};
		memcpy(pb, a, sizeof a);
		memcpy(pq, b, sizeof b);
		if (knobs(p, "PROMPT", "BS", pb, n, err) || knobs(p, "PROMPT", "QUERY", pq, n, err))
			goto out;
		int64_t qmin = pq[0];
		int64_t maxctx = pad ? bucket_ceil_div(mml - qmin, B) : floordiv(mml - qmin, B);
		int64_t c[5] = {0, pad ? 2 : 1, maxctx, bucket_ceil_div(mnbt, B), 25};
		memcpy(pc, c, sizeof c);
		if (p->merged_prefill) {
			pb[0] = pb[1] = pb[2] = 1;
			pq[1] = 4 * pq[1];
			pq[2] = mnbt;
			pc[1] = 4;
			pc[2] = maxctx * mnps;
		}
		if (knobs(p, "PROMPT", "CTX", pc, n, err))
			goto out;
		int64_t d[5] = {1, pad ? 2 : 32, mns, bucket_ceil_div(mns, 4), 25};
		memcpy(db, d, sizeof d);
		int64_t kmax = pad ? max64(bucket_ceil_div(mml * mns, B), B) : max64(mml * mns / B, B);
		int64_t k[5] = {pad ? B : 1, B, cpa ? nhb : kmax, 0, 25};
		memcpy(dk, k, sizeof k);
		if (knobs(p, "DECODE", "BS", db, n, err) || knobs(p, "DECODE", "BLOCK", dk, 3, err))
			goto out;
		/* upstream: the maximum is clamped to num_kv_blocks with contiguous PA only; a
		 * minimum above num_kv_blocks becomes max(1, num_kv_blocks - step); the pad_max
		 * default is a quarter of the default maximum */
		dk[3] = bucket_ceil_div(k[2], 4);
		if (cpa && dk[2] > nhb)
			dk[2] = nhb;
		if (dk[0] > nhb)
			dk[0] = max64(1, nhb - dk[1]);
		if (pad && (knob(p, "DECODE", "BLOCK", "PAD_MAX", &dk[3], err) < 0 ||
			    knob(p, "DECODE", "BLOCK", "PAD_PERCENT", &dk[4], err) < 0))
			goto out;
		if (pad) {
			if (pad_range(&bs, pb, "prompt bs", err) || pad_range(&qr, pq, "prompt query", err) ||
			    pad_range(&ctx, pc, "prompt ctx", err) || pad_range(&dbs, db, "decode bs", err) ||
			    pad_range(&blk, dk, "decode block", err))
				goto out;
		} else {
			if (lin_range(&bs, pb, true, "prompt bs", err) ||
			    lin_range(&qr, pq, true, "prompt query", err) ||
			    lin_range(&ctx, pc, true, "prompt ctx", err) ||
			    lin_range(&dbs, db, true, "decode bs", err) ||
			    lin_range(&blk, dk, true, "decode block", err))
				goto out;
		}
		const char *h = pad ? "Prompt bucket config (min, step, max_warmup, pad_max, pad_percent)"
				    : "Prompt bucket config (min, step, max_warmup)";
		fmt_line(g->prompt_cfg, sizeof g->prompt_cfg, h, n, p->merged_prefill ? 3u : 0u, "bs", pb,
			 "query", pq, "blocks", pc);
		h = pad ? "Decode bucket config (min, step, max_warmup, pad_max, pad_percent)"
			: "Decode bucket config (min, step, max_warmup)";
		fmt_line(g->decode_cfg, sizeof g->decode_cfg, h, n, 0, "bs", db, "blocks", dk, NULL, NULL);
	} else {
		BUG("gen_current: strategy %d", (int)p->strategy);
	}
	if (check_range(&bs, "prompt bs", err) || check_range(&qr, "prompt query", err) ||
	    check_range(&ctx, "prompt ctx", err) || check_range(&dbs, "decode bs", err) ||
	    check_range(&blk, "decode block", err))
		goto out;
	if (bucket_combine_prompt(p, &bs, &qr, &ctx, &g->prompt, err) ||
	    bucket_combine_decode(p, &dbs, &blk, &g->decode, err))
		goto out;
	rc = 0;
out:
	ivec_free(&bs);
	ivec_free(&qr);
	ivec_free(&ctx);
	ivec_free(&dbs);
	ivec_free(&blk);
	return rc;
}

/* ---- version docs: the July 2025 extension (reference 8) ---- */

static int gen_docs(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnbt = p->max_num_batched_tokens, mnps = p->max_num_prefill_seqs;
	int64_t nhb = p->num_kv_blocks;
	bool cpa = p->contiguous_pa, lin = p->strategy == BUCKET_LINEAR;
	struct ivec bs = {0}, seq = {0}, dbs = {0}, blk = {0};
	int rc = -1;
	int64_t pb[4], ps[4], db[4], dk[4];
	if (lin) {
		int64_t a[3] = {1, 32, mnps}, b[3] = {B, B, mml}, c[3] = {1, 32, mns}, d[3] = {B, B, nhb};
		memcpy(pb, a, sizeof a);
		memcpy(ps, b, sizeof b);
		memcpy(db, c, sizeof c);
		memcpy(dk, d, sizeof d);
		if (knobs(p, "PROMPT", "BS", pb, 3, err) || knobs(p, "PROMPT", "SEQ", ps, 3, err) ||
		    knobs(p, "DECODE", "BS", db, 3, err) || knobs(p, "DECODE", "BLOCK", dk, 3, err))
			goto out;
		unsigned tup = 0;
		if (p->merged_prefill) {   /* the legacy linear merged-prefill override */
			int64_t max_bs = pb[0 + 2];
			pb[0] = pb[1] = pb[2] = 1;
			ps[2] = min64(max_bs * ps[2], mnbt);
			tup = 3;
		}
		if (lin_range(&bs, pb, false, "prompt bs", err) ||
		    lin_range(&seq, ps, false, "prompt seq", err) ||
		    lin_range(&dbs, db, false, "decode bs", err) ||
		    lin_range(&blk, dk, false, "decode block", err))
			goto out;
		/* contiguous PA without a user maximum: the block list ends at num_kv_blocks */
		if (cpa && !config_env(p->cfg, "VLLM_DECODE_BLOCK_BUCKET_MAX") && !ivec_has(&blk, nhb))
			ivec_push(&blk, nhb);
		fmt_line(g->prompt_cfg, sizeof g->prompt_cfg, "Prompt bucket config (min, step, max_warmup)",
			 3, tup, "bs", pb, "seq", ps, NULL, NULL);
		fmt_line(g->decode_cfg, sizeof g->decode_cfg, "Decode bucket config (min, step, max_warmup)",
			 3, 0, "bs", db, "blocks", dk, NULL, NULL);
	} else {
		int64_t a[4] = {1, 1, mnps, bucket_ceil_log2(mnps) + 1},
			b[4] = {B, B, mml, bucket_ceil_log2(mml) + 1},
			c[4] = {1, 1, mns, bucket_ceil_log2(mns) + 1},
			d[4] = {B, B, nhb, bucket_ceil_log2(nhb) + 1};
		memcpy(pb, a, sizeof a);
		memcpy(ps, b, sizeof b);
		memcpy(db, c, sizeof c);
		memcpy(dk, d, sizeof d);
		if (knob(p, "PROMPT", "BS", "LIMIT", &pb[3], err) < 0 ||
		    knob(p, "PROMPT", "SEQ", "LIMIT", &ps[3], err) < 0 ||
		    knob(p, "DECODE", "BS", "LIMIT", &db[3], err) < 0 ||
		    knob(p, "DECODE", "BLOCK", "LIMIT", &dk[3], err) < 0)
			goto out;
		if (exp_cfg_ok(pb, "prompt bs", err) || exp_cfg_ok(ps, "prompt seq", err) ||
		    exp_cfg_ok(db, "decode bs", err) || exp_cfg_ok(dk, "decode block", err))
			goto out;
		brange_exp_fill(&bs, pb[0], pb[1], pb[2], pb[3], cpa);
		brange_exp_fill(&seq, ps[0], ps[1], ps[2], ps[3], cpa);
		brange_exp_fill(&dbs, db[0], db[1], db[2], db[3], cpa);
		brange_exp_fill(&blk, dk[0], dk[1], dk[2], dk[3], cpa);
		fmt_line(g->prompt_cfg, sizeof g->prompt_cfg,
			 "Prompt bucket config (min, step, max_warmup, limit)", 4, 0, "bs", pb, "seq", ps,
			 NULL, NULL);
		/* the July 2025 exponential code logged no decode config line */
		fmt_line(g->decode_cfg, sizeof g->decode_cfg,
			 "Decode bucket config (min, step, max_warmup, limit)", 4, 0, "bs", db, "block",
			 dk, NULL, NULL);
		g->decode_cfg_unlogged = true;
	}
	if (check_range(&bs, "prompt bs", err) || check_range(&seq, "prompt seq", err) ||
	    check_range(&dbs, "decode bs", err) || check_range(&blk, "decode block", err))
		goto out;
	/* Prompt: the triangle (prefix caching) or ctx 0, then the token-budget filter. */
	struct blist all = {0};
	int64_t smax = ps[2];
	for (size_t i = 0; i < bs.n; i++)
		for (size_t j = 0; j < seq.n; j++) {
			int64_t top = p->prefix_caching ? floordiv(smax - seq.v[j], B) : 0;
			for (int64_t c = 0; c <= top; c++)
				blist_push(&all, bs.v[i], seq.v[j], c, 0);
		}
	for (size_t i = 0; i < all.n; i++) {
		int64_t b0 = all.a[i].v[0], q = all.a[i].v[1], c = all.a[i].v[2];
		if (b0 * (q + c * B) <= mnbt && (lin || q <= mml))   /* linear had no mml check */
			blist_push(&g->prompt, b0, q, c, 0);
	}
	if (!g->prompt.n && all.n) {
		fprintf(stderr, "bucketsim: warning: no prompt bucket fits max_num_batched_tokens "
			"(%lld); keeping all %zu, as the server does\n", (long long)mnbt, all.n);
		blist_free(&g->prompt);
		g->prompt = all;
		all = (struct blist){0};
	}
	blist_free(&all);
	blist_sort_unique(&g->prompt);
	if (!g->prompt.n) {
		empty_error("prompt", err);
		goto out;
	}
	if (lin) {
		/* legacy linear: skip bs > blocks; the first block value >= num_kv_blocks becomes
		 * num_kv_blocks and ends the row */
		for (size_t i = 0; i < dbs.n; i++)
			for (size_t j = 0; j < blk.n; j++) {
				if (dbs.v[i] > blk.v[j])
					continue;
				if (blk.v[j] >= nhb) {
					blist_push(&g->decode, dbs.v[i], 1, nhb, 0);
					break;
				}
				blist_push(&g->decode, dbs.v[i], 1, blk.v[j], 0);
			}
	} else {
		for (size_t i = 0; i < dbs.n; i++)
			for (size_t j = 0; j < blk.n; j++)
				blist_push(&g->decode, dbs.v[i], 1, blk.v[j], 0);
	}
	blist_sort_unique(&g->decode);
	if (!g->decode.n) {
		empty_error("decode", err);
		goto out;
	}
	rc = 0;
out:
	ivec_free(&bs);
	ivec_free(&seq);
	ivec_free(&dbs);
	ivec_free(&blk);
	return rc;
}

/* ---- unified attention (reference 6) ---- */

static bool unified_keep(const struct bucket_params *p, bool alpha, int64_t q, int64_t s,
			 int64_t u, int causal)
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

static int gen_unified(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mns = p->max_num_seqs;
	int64_t mnbt = p->max_num_batched_tokens, nhb = p->num_kv_blocks, tp = mns;
	bool alpha = p->version == BUCKET_VERSION_DOCS;
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
	if (check_range(&q, "unified query", err) || check_range(&s, "unified shared", err) ||
	    check_range(&u, "unified unique", err))
		goto out;
	fmt_line(g->unified_cfg, sizeof g->unified_cfg,
		 "Unified bucket config (min, max, turning_point)", 3, 0, "query", cq, "shared", cs,
		 "unique", cu);
	g->unified_cfg_unlogged = true;   /* upstream logged only the generated list */
	for (size_t i = 0; i < q.n; i++)
		for (size_t j = 0; j < s.n; j++)
			for (size_t k = 0; k < u.n; k++)
				for (int c = 0; c < 2; c++)
					if (unified_keep(p, alpha, q.v[i], s.v[j], u.v[k], c))
						blist_push(&g->unified, q.v[i], s.v[j], u.v[k], c);
	blist_sort_unique(&g->unified);
	if (!g->unified.n) {
		empty_error("unified", err);
		goto out;
	}
	rc = 0;
out:
	ivec_free(&q);
	ivec_free(&s);
	ivec_free(&u);
	return rc;
}

/* ---- file ---- */

static int gen_file(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	struct blist pr = {0}, de = {0};
	if (bucket_file_parse(p->file, &pr, &de, err)) {
		blist_free(&pr);
		blist_free(&de);
		return -1;
	}
	if (p->version == BUCKET_VERSION_DOCS) {
		g->prompt = pr;
		g->decode = de;
		blist_sort_unique(&g->prompt);
		blist_sort_unique(&g->decode);
		return 0;
	}
	for (size_t i = 0; i < pr.n; i++)
		if (prompt_keep(p, pr.a[i].v[0], pr.a[i].v[1], pr.a[i].v[2]))
			blist_push(&g->prompt, pr.a[i].v[0], pr.a[i].v[1], pr.a[i].v[2], 0);
	blist_free(&pr);
	correct_decode(p, &de);
	g->decode = de;
	blist_sort_unique(&g->prompt);
	blist_sort_unique(&g->decode);
	if (!g->prompt.n)
		return empty_error("prompt", err);
	if (!g->decode.n)
		return empty_error("decode", err);
	return 0;
}

int bucket_generate(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	memset(g, 0, sizeof *g);
	int rc;
	switch (p->strategy) {
	case BUCKET_NONE:
		return 0;
	case BUCKET_UNIFIED:
		rc = gen_unified(p, g, err);
		break;
	case BUCKET_FILE:
		rc = gen_file(p, g, err);
		break;
	case BUCKET_PADDING_AWARE:
		if (p->version == BUCKET_VERSION_DOCS)
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "bucketing.strategy",
				       "padding_aware does not exist in bucketing.version docs "
				       "(use bucketing.version=current)");
		rc = gen_current(p, g, err);
		break;
	default:
		rc = p->version == BUCKET_VERSION_DOCS ? gen_docs(p, g, err) : gen_current(p, g, err);
		break;
	}
	if (rc)
		bgen_release(g);
	return rc;
}

void bgen_release(struct bgen *g)
{
	blist_free(&g->prompt);
	blist_free(&g->decode);
	blist_free(&g->unified);
}
