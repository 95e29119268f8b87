/*
 * bucket_gen: the machinery every bucketing strategy shares (the strategies themselves are one
 * file each, policies/bucket_<name>.c):
 *
 *   version current (vllm-gaudi main, reference 2-6): a strategy yields per-dimension configs
 *     and ranges, which bucket_finish_current() checks and combines with
 *     bucket_combine_prompt()/bucket_combine_decode() (2.4: long-context edge buckets,
 *     filters, the non-contiguous decode corrector).
 *   version docs (the July 2025 extension, reference 8): the triangular prompt list with
 *     prefix caching and the token-budget filter, bucket_docs_prompt().
 *
 * Every list is sorted lexicographically and deduplicated, as Python's sorted(set(...)).
 */
#include <ctype.h>
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

int64_t bucket_floordiv(int64_t a, int64_t b)
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

int bucket_knob(const struct bucket_params *p, const char *phase, const char *dim,
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

int bucket_knobs(const struct bucket_params *p, const char *phase, const char *dim, int64_t *v,
		 int n, struct bs_err *err)
{
	static const char *const names[5] = {"MIN", "STEP", "MAX", "PAD_MAX", "PAD_PERCENT"};
	for (int i = 0; i < n; i++)
		if (bucket_knob(p, phase, dim, names[i], &v[i], err) < 0)
			return -1;
	return 0;
}

int bucket_check_range(const struct ivec *r, const char *what, struct bs_err *err)
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

int bucket_lin_range(struct ivec *r, const int64_t *c, bool head, const char *what,
		     struct bs_err *err)
{
	char kn[96];
	/* about (max - min) / step values: refused before they are allocated */
	if (c[1] >= 1 && c[2] >= c[0] && (c[2] - c[0]) / c[1] > BUCKET_GEN_MAX)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, knob_name(kn, sizeof kn, what, "STEP"),
			       "%s linear bucket config (min, step, max) = (%lld, %lld, %lld) spans "
			       "more than %d steps: raise the step", what, (long long)c[0],
			       (long long)c[1], (long long)c[2], BUCKET_GEN_MAX);
	if (brange_lin(r, c[0], c[1], c[2], head))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0,
			       knob_name(kn, sizeof kn, what, c[1] < 1 ? "STEP"
							 : c[0] < (head ? 0 : 1) ? "MIN" : "MAX"),
			       "%s linear bucket config (min, step, max) = (%lld, %lld, %lld) is "
			       "invalid: need %s, step >= 1 and min <= max", what, (long long)c[0],
			       (long long)c[1], (long long)c[2], head ? "min >= 0" : "min >= 1");
	return bucket_check_range(r, what, err);
}

int bucket_pad_range(struct ivec *r, const int64_t *c, const char *what, struct bs_err *err)
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
	return bucket_check_range(r, what, err);
}

int bucket_exp_cfg_ok(const int64_t *c, const char *what, struct bs_err *err)
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

int bucket_product_check(const char *phase, double n, double limit, struct bs_err *err)
{
	if (n <= limit)
		return 0;
	return bs_errf(err, BS_EXIT_INPUT, NULL, 0, NULL,
		       "the %s bucket ranges combine to %.0f candidate buckets, more than %.0f (no "
		       "server warms up that many): raise the bucket steps or server.block_size",
		       phase, n, limit);
}

int bucket_kept_error(const char *phase, struct bs_err *err)
{
	return bs_errf(err, BS_EXIT_INPUT, NULL, 0, NULL,
		       "the %s bucket filters keep more than %d buckets (no server warms up that "
		       "many): raise the bucket steps or server.block_size", phase, BUCKET_GEN_MAX);
}

int bucket_empty_error(const char *phase, struct bs_err *err)
{
	return bs_errf(err, BS_EXIT_INPUT, NULL, 0, NULL,
		       "generated 0 %s buckets: no bucket satisfies the filters for this "
		       "configuration (check server.max_model_len, server.max_num_batched_tokens and "
		       "the bucket settings)", phase);
}

/* ---- version current: combination, filters and correctors (reference 2.4) ---- */

int64_t bucket_prompt_ctx_bound(const struct bucket_params *p, int64_t bs, int64_t q)
{
	int64_t B = p->block_size, mml = p->max_model_len;
	if (p->merged_prefill) {
		int64_t mnps = p->max_num_prefill_seqs;
		return mnps * bucket_floordiv(mml - q / mnps, B);
	}
	if (q > mml || bs * q > p->max_num_batched_tokens)
		return INT64_MIN;
	return bucket_ceil_div(mml - 1, B);
}

bool bucket_prompt_keep(const struct bucket_params *p, int64_t bs, int64_t q, int64_t c)
{
	return c <= bucket_prompt_ctx_bound(p, bs, q);
}

int bucket_combine_prompt(const struct bucket_params *p, const struct ivec *bs,
			  const struct ivec *qr, const struct ivec *ctx, struct blist *out,
			  struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, cmax_env = 0;
	int has_cmax = bucket_env_int(p->cfg, "VLLM_PROMPT_CTX_BUCKET_MAX", &cmax_env, err);
	if (has_cmax < 0)
		return -1;
	if (bucket_product_check("prompt", (double)bs->n * (double)qr->n * (double)ctx->n,
				 BUCKET_SCAN_MAX, err))
		return -1;
	/* Upstream common.generate_buckets tests only is_prompt, the largest ctx and
	 * max_model_len >= LONG_CTX_THRESHOLD: the edge rule also applies with merged prefill
	 * (where the merged-prefill ctx filter then judges the edge bucket). */
	bool edge = mml >= 8192 && ctx->n;
	/* With the edge rule, upstream loops bs, ctx, query and replaces the largest ctx by the
	 * edge value floor((max_model_len - query) / block_size) when it is allowed; otherwise the
	 * ctx of the previous query carries over (upstream reassigns the loop variable).  That
	 * sequence depends on the query alone, so it is worked out once, in CM, and is the same for
	 * every ctx equal to the largest (a range can repeat a value: the merged-prefill
	 * exponential ctx range is [0, 1, 1]).  The buckets are then pushed in sorted order (bs,
	 * query, ctx) with the replaced ctx merged among the others, and blist_sort_unique() finds
	 * nothing to sort. */
	int64_t *cm = NULL, maxc = ctx->n ? ivec_max(ctx) : 0;
	if (edge) {
		cm = xmalloc((qr->n ? qr->n : 1) * sizeof *cm);
		int64_t c = maxc;
		for (size_t k = 0; k < qr->n; k++) {
			int64_t e = bucket_floordiv(mml - qr->v[k], B);
			if (e >= 0 && (!has_cmax || e < cmax_env))
				c = e;
			cm[k] = c;
		}
	}
	/* The filter keeps every ctx up to a bound, so the ctx loop stops at the first one above
	 * it: the work follows the buckets kept, not the candidates. */
	bool ctx_sorted = true;
	size_t nmaxc = 0;   /* how many ctx values equal the largest */
	for (size_t j = 0; j < ctx->n; j++) {
		ctx_sorted &= !j || ctx->v[j - 1] <= ctx->v[j];
		nmaxc += ctx->v[j] == maxc;
	}
	/* First the number of buckets each (bs, query) pair pushes, so the list is allocated once
	 * and the limit is enforced before anything is written: a pair pushes every ctx up to its
	 * bound (but the largest, with the edge rule) and, with the edge rule, its edge bucket
	 * when that is within the bound too (pushed among the others or after them). */
	size_t total = out->n;
	for (size_t i = 0; i < bs->n; i++)
		for (size_t k = 0; k < qr->n; k++) {
			int64_t bound = bucket_prompt_ctx_bound(p, bs->v[i], qr->v[k]);
			size_t m = 0;
			if (ctx_sorted) {
				size_t lo = 0, hi = ctx->n;   /* the first ctx above the bound */
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;
					if (ctx->v[mid] <= bound)
						lo = mid + 1;
					else
						hi = mid;
				}
				m = lo - (edge && maxc <= bound ? nmaxc : 0);
			} else {
				for (size_t j = 0; j < ctx->n; j++)
					m += ctx->v[j] <= bound && !(edge && ctx->v[j] == maxc);
			}
			total += m + (edge && cm[k] <= bound);
			/* A pair pushes at most one duplicate (its edge bucket) per bucket kept, so
			 * more than twice the limit means more than the limit kept. */
			if (total > 2 * (size_t)BUCKET_GEN_MAX) {
				free(cm);
				return bucket_kept_error("prompt", err);
			}
		}
	blist_reserve(out, total);
	for (size_t i = 0; i < bs->n; i++) {
		int64_t b = bs->v[i];
		for (size_t k = 0; k < qr->n; k++) {
			int64_t q = qr->v[k], bound = bucket_prompt_ctx_bound(p, b, q);
			bool pending = edge;
			for (size_t j = 0; j < ctx->n; j++) {
				int64_t c = ctx->v[j];
				if (edge && c == maxc)
					continue;
				if (c > bound) {
					if (ctx_sorted)
						break;
					continue;
				}
				if (pending && cm[k] <= c) {
					blist_put(out, b, q, cm[k], 0);
					pending = false;
				}
				blist_put(out, b, q, c, 0);
			}
			if (pending && cm[k] <= bound)
				blist_put(out, b, q, cm[k], 0);
		}
	}
	free(cm);
	blist_sort_unique(out);
	if (out->n > BUCKET_GEN_MAX)
		return bucket_kept_error("prompt", err);
	return out->n ? 0 : bucket_empty_error("prompt", err);
}

/* The non-contiguous decode filter and corrector for one bucket: false when it is dropped (bs
 * above its ctx), else its ctx capped at bs * PER (PER = ceil(max_model_len / block_size)) in
 * *C.  With contiguous PA every bucket is kept as it is. */
static bool decode_keep(const struct bucket_params *p, int64_t per, int64_t bs, int64_t *c)
{
	if (p->contiguous_pa)
		return true;
	if (bs > *c)
		return false;
	*c = min64(*c, bs * per);
	return true;
}

/* The non-contiguous decode filter and corrector, applied in place (then re-sorted). */
void bucket_correct_decode(const struct bucket_params *p, struct blist *l)
{
	int64_t per = bucket_ceil_div(p->max_model_len, p->block_size);
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		int64_t c = l->a[i].v[2];
		if (!decode_keep(p, per, l->a[i].v[0], &c))
			continue;
		l->a[k] = l->a[i];
		l->a[k].v[2] = (int32_t)c;
		k++;
	}
	l->n = k;
}

int bucket_combine_decode(const struct bucket_params *p, const struct ivec *bs,
			  const struct ivec *blocks, struct blist *out, struct bs_err *err)
{
	if (bucket_product_check("decode", (double)bs->n * (double)blocks->n, BUCKET_GEN_MAX, err))
		return -1;
	/* the product, filtered and corrected as it is written (bucket_correct_decode's rule) */
	int64_t per = bucket_ceil_div(p->max_model_len, p->block_size);
	blist_reserve(out, out->n + bs->n * blocks->n);
	for (size_t i = 0; i < bs->n; i++)
		for (size_t j = 0; j < blocks->n; j++) {
			int64_t c = blocks->v[j];
			if (decode_keep(p, per, bs->v[i], &c))
				blist_put(out, bs->v[i], 1, c, 0);
		}
	blist_sort_unique(out);
	return out->n ? 0 : bucket_empty_error("decode", err);
}

/* Bit k of TUP prints config k as a Python tuple: upstream builds some configs as tuples, e.g.
 * the merged-prefill overrides. */
void bucket_cfg_line(char *buf, size_t len, const char *head, int n, unsigned tup,
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

void bucket_ranges_release(struct bucket_ranges *r)
{
	ivec_free(&r->bs);
	ivec_free(&r->query);
	ivec_free(&r->ctx);
	ivec_free(&r->dbs);
	ivec_free(&r->blocks);
}

int bucket_finish_current(const struct bucket_params *p, const struct bucket_ranges *r,
			  struct bgen *g, struct bs_err *err)
{
	if (bucket_check_range(&r->bs, "prompt bs", err) ||
	    bucket_check_range(&r->query, "prompt query", err) ||
	    bucket_check_range(&r->ctx, "prompt ctx", err) ||
	    bucket_check_range(&r->dbs, "decode bs", err) ||
	    bucket_check_range(&r->blocks, "decode block", err))
		return -1;
	if (bucket_combine_prompt(p, &r->bs, &r->query, &r->ctx, &g->prompt, err))
		return -1;
	/* upstream HPUBucketingManager.generate_decode_buckets, for every strategy: with
	 * contiguous PA, num_hpu_blocks is appended to the block range when the range ends below
	 * it (the range is sorted, so this is its new maximum) */
	struct ivec blocks = {0};
	ivec_reserve(&blocks, r->blocks.n + 1);
	for (size_t i = 0; i < r->blocks.n; i++)
		ivec_push(&blocks, r->blocks.v[i]);
	if (p->contiguous_pa && blocks.n && blocks.v[blocks.n - 1] < p->num_kv_blocks)
		ivec_push(&blocks, p->num_kv_blocks);
	int rc = bucket_combine_decode(p, &r->dbs, &blocks, &g->decode, err);
	ivec_free(&blocks);
	return rc;
}

void bucket_merged_override(const struct bucket_params *p, int64_t *pb, int64_t *pq, int64_t *pc,
			    int64_t maxctx)
{
	if (!p->merged_prefill)
		return;
	pb[0] = pb[1] = pb[2] = 1;
	pq[1] = 4 * pq[1];
	pq[2] = p->max_num_batched_tokens;
	pc[1] = 4;
	pc[2] = maxctx * p->max_num_prefill_seqs;
}

int bucket_decode_blocks_current(const struct bucket_params *p, int64_t *dk, bool min_vs_max,
				 struct bs_err *err)
{
	int64_t nhb = p->num_kv_blocks, defmax = dk[2];
	if (bucket_knobs(p, "DECODE", "BLOCK", dk, 3, err))
		return -1;
	/* upstream: the maximum is clamped to num_kv_blocks with contiguous PA only; the pad_max
	 * default is a quarter of the default maximum.  A minimum above a bound X becomes
	 * max(1, X - step): X is the (clamped) maximum in LinearBucketingStrategy.get_decode_cfgs,
	 * num_kv_blocks (max_blocks) in PaddingAwareBucketingStrategy.get_decode_cfgs. */
	dk[3] = bucket_ceil_div(defmax, 4);
	if (p->contiguous_pa && dk[2] > nhb)
		dk[2] = nhb;
	int64_t bound = min_vs_max ? dk[2] : nhb;
	if (dk[0] > bound)
		dk[0] = max64(1, bound - dk[1]);
	return 0;
}

/* ---- version docs (reference 8) ---- */

int bucket_docs_prompt(const struct bucket_params *p, const struct ivec *bs,
		       const struct ivec *seq, int64_t smax, bool no_mml_check, struct bgen *g,
		       struct bs_err *err)
{
	int64_t B = p->block_size, mml = p->max_model_len, mnbt = p->max_num_batched_tokens;
	double cand = 0;   /* the (bs, seq, ctx) triples below */
	for (size_t j = 0; j < seq->n; j++)
		cand += p->prefix_caching ? (double)max64(0, bucket_floordiv(smax - seq->v[j], B) + 1)
					  : 1;
	if (bucket_product_check("prompt", cand * (double)bs->n, BUCKET_GEN_MAX, err))
		return -1;
	/* The (bs, seq, ctx) triples the token-budget filter keeps are counted first, so the kept
	 * ones are written once into a list of their size; when it keeps none, every triple is. */
	size_t kept = 0;
	for (int pass = 0; pass < 2; pass++) {
		bool all = pass && !kept;
		if (pass)
			blist_reserve(&g->prompt, g->prompt.n + (all ? (size_t)cand * bs->n : kept));
		for (size_t i = 0; i < bs->n; i++)
			for (size_t j = 0; j < seq->n; j++) {
				int64_t b0 = bs->v[i], q = seq->v[j];
				int64_t top = p->prefix_caching ? bucket_floordiv(smax - q, B) : 0;
				for (int64_t c = 0; c <= top; c++) {
					if (!all && !(b0 * (q + c * B) <= mnbt && (no_mml_check || q <= mml)))
						continue;
					if (pass)
						blist_put(&g->prompt, b0, q, c, 0);
					else
						kept++;
				}
			}
	}
	if (!kept && g->prompt.n)
		bs_warn("no prompt bucket fits max_num_batched_tokens (%lld); keeping all %zu, as "
			"the server does", (long long)mnbt, g->prompt.n);
	blist_sort_unique(&g->prompt);
	return g->prompt.n ? 0 : bucket_empty_error("prompt", err);
}

/* ---- running the resolved strategy ---- */

int bucket_generate(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	memset(g, 0, sizeof *g);
	bucket_gen_fn *gen = bucket_strategy_gen(p->strategy, p->version);
	if (!gen)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "bucketing.strategy",
			       "strategy %s does not exist in bucketing.version %s",
			       p->strategy->info.name, bucket_version_name(p->version));
	int rc = gen(p, g, err);
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
