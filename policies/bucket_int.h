/*
 * bucket_int: internals shared by the bucketing files (not part of the module's contract).
 *
 *   bucket_range.c  the one-dimensional range generators of every strategy and version
 *                   (ExpRange, ExpRangeFill, LinRange, padding-aware, unified six-point and
 *                   ten-point ranges) and the fallback rounding fb(n, step)
 *   bucket_gen.c    machinery the strategies share: the bucket-knob variables, range checks,
 *                   config log lines, combination, filters and correctors of each version
 *   bucket_file.c   the bucket-file grammar (VLLM_BUCKETING_FROM_FILE)
 *   bucket_env.c    the table of every --env variable bucketsim reads
 *   bucketing.c     parameters, the bucketer object, look-ups and warm-up order
 *   bucket_<name>.c one strategy each (struct bucket_strategy, bucketing.h): exponential,
 *                   linear, padding_aware, unified, none, pow2, and bucket_file_strategy.c
 *
 * Ranges are `struct ivec` of int64 values, returned sorted; most have no duplicates, but a
 * range built as upstream builds it may repeat a value (the merged-prefill exponential ctx
 * range is [0, 1, 1]), so nothing relies on uniqueness.
 * Bucket lists are `struct blist`, sorted lexicographically over v[0..3] after
 * blist_sort_unique().  Every function here borrows its inputs; outputs are appended to
 * caller-owned vectors (freed with ivec_free / blist_free).
 */
#ifndef BS_BUCKET_INT_H
#define BS_BUCKET_INT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/bucketing.h"

struct ivec {
	int64_t *v;
	size_t n, cap;
};
void ivec_push(struct ivec *r, int64_t x);
/* Makes room for N values in all (pushes up to N then never reallocate). */
void ivec_reserve(struct ivec *r, size_t n);
void ivec_sort_unique(struct ivec *r);
void ivec_free(struct ivec *r);
bool ivec_has(const struct ivec *r, int64_t x);
int64_t ivec_max(const struct ivec *r);

struct blist {
	struct bshape *a;
	size_t n, cap;
};
void blist_push(struct blist *l, int64_t a, int64_t b, int64_t c, int64_t d);
/* blist_push into room already made by blist_reserve (no growth; debug builds assert room). */
static inline void blist_put(struct blist *l, int64_t a, int64_t b, int64_t c, int64_t d)
{
	assert(l->n < l->cap);
	struct bshape *s = &l->a[l->n++];
	s->v[0] = (int32_t)a;
	s->v[1] = (int32_t)b;
	s->v[2] = (int32_t)c;
	s->v[3] = (int32_t)d;
}
/* Makes room for N tuples in all (pushes up to N then never reallocate). */
void blist_reserve(struct blist *l, size_t n);
void blist_sort_unique(struct blist *l);
void blist_free(struct blist *l);
/* <0, 0, >0 as Python compares the tuples (all four members; v[3] is 0 for 3-tuples). */
int bshape_cmp(const struct bshape *x, const struct bshape *y);
/* First index whose element is >= T (Python bisect_left). */
size_t blist_bisect_left(const struct blist *l, const struct bshape *t);
/* Inserts S at its sorted place unless present; returns true when inserted. */
bool blist_insert_sorted(struct blist *l, const struct bshape *s);
/* Writes "[(1, 128, 0), (1, 128, 1)]" (NDIM members per tuple) as Python prints a list. */
void blist_print_py(const struct blist *l, int ndim, FILE *out);

/* ceil(log2(x)) for x >= 1, exact (what math.ceil(math.log2(x)) gives below 2^53). */
int64_t bucket_ceil_log2(int64_t x);
int64_t bucket_ceil_div(int64_t a, int64_t b);

/* Head `warmup_range_with_limit` (reference 2.1): 0/1 kept apart, set dedupe, top clamp. */
void brange_exp(struct ivec *out, int64_t bmin, int64_t bstep, int64_t bmax, int64_t n,
		bool contiguous_pa);
/* Legacy ExpRangeFill (reference 8): a taken bucket moves to the closest unused multiple. */
void brange_exp_fill(struct ivec *out, int64_t bmin, int64_t bstep, int64_t bmax, int64_t n,
		     bool contiguous_pa);
/* `warmup_range` (reference 3.1): ramp-up doubling then multiples of the step.  HEAD_ZERO
 * enables head's special case for bmin == 0.  Returns -1 when bmin > bmax or the step or
 * (legacy) bmin is < 1. */
int brange_lin(struct ivec *out, int64_t bmin, int64_t bstep, int64_t bmax, bool head_zero);
/* `warmup_range_with_limits` of the padding-aware strategy (reference 4).  Returns -1 for a
 * step < 1 or min > max. */
int brange_pad(struct ivec *out, int64_t min, int64_t step, int64_t max, int64_t pad_max,
	       int64_t pad_percent);
/* Unified ranges (reference 6): alpha six points, last ten exponential points. */
void brange_unified_alpha(struct ivec *out, int64_t min, int64_t max, int64_t tp);
void brange_unified_last(struct ivec *out, int64_t min, int64_t max, int64_t tp);

/* Head calc_fallback_value (reference 7). */
int64_t bucket_fb(int64_t n, int64_t step);

/* Parses a bucket file (reference 5): 3-tuples, y == 1 goes to DECODE, the rest to PROMPT
 * (both unsorted; duplicates kept).  NAME names the source in errors "NAME:LINE: ...". */
int bucket_file_parse_text(const char *text, const char *name, struct blist *prompt,
			   struct blist *decode, struct bs_err *err);
int bucket_file_parse(const char *path, struct blist *prompt, struct blist *decode,
		      struct bs_err *err);

/* The bucket lists of a vllm-gaudi start-up log (bucket_log.c; grammar and the upstream function
 * printing each line there).  LIST is what the server warmed per phase (enum phase): the
 * Generated list, plus the spec-decode list for decode, or, when the phase has no Generated
 * line, the distinct shapes of its [Warmup] lines; sorted and unique. */
struct bucket_log {
	struct blist list[3];
	struct blist gen[3], spec;      /* the Generated lists as logged */
	struct blist warm[3];           /* distinct [Warmup] shapes, in log order */
	long gen_line[3], spec_line;    /* line of each Generated list, 0 = none */
	long cfg_line[2];               /* line of the prompt / decode config line, 0 = none */
	char cfg[2][512];               /* its message, from "Prompt bucket config" on */
};
/* Parses TEXT (NAME in errors "NAME:LINE: ...", exit 3).  LG is zeroed first and must be
 * released with bucket_log_free() whatever the result. */
int bucket_log_parse_text(const char *text, const char *name, struct bucket_log *lg,
			  struct bs_err *err);
int bucket_log_parse(const char *path, struct bucket_log *lg, struct bs_err *err);
void bucket_log_free(struct bucket_log *lg);

/* Output of generation: the warm-up lists and the server's config log lines. */
struct bgen {
	struct blist prompt, decode, unified;
	char prompt_cfg[512], decode_cfg[512], unified_cfg[512];   /* "" when none */
	/* The line is bucketsim's: the reproduced server version did not log it. */
	bool decode_cfg_unlogged, unified_cfg_unlogged;
};
/* Version current's combination of ranges (reference 2.4), exposed for the tests: prompt with
 * the long-context edge rule and the filters, decode with the non-contiguous corrector.
 * OUT, empty on entry, receives the sorted list; an empty result is an error. */
int bucket_combine_prompt(const struct bucket_params *p, const struct ivec *bs,
			  const struct ivec *qr, const struct ivec *ctx, struct blist *out,
			  struct bs_err *err);
int bucket_combine_decode(const struct bucket_params *p, const struct ivec *bs,
			  const struct ivec *blocks, struct blist *out, struct bs_err *err);
/* Version current's generate_fallback_bucket for (bs, q, ctx): (min(fb(bs,2), mns),
 * min(fb(q,32), mnbt), min(fb(ctx,32), MAX_CTX)). */
struct bshape bucket_fallback_current(const struct bucket_params *p, int64_t bs, int64_t q,
				      int64_t ctx, int64_t max_ctx);
/* Version docs' fallback: (2^ceil(log2 bs), ceil(q/B)*B (1 for decode), ceil(ctx/2)*2). */
struct bshape bucket_fallback_docs(const struct bucket_params *p, enum phase ph, int64_t bs,
				   int64_t q, int64_t ctx);

/* Runs the resolved strategy's generator of the resolved version. */
int bucket_generate(const struct bucket_params *p, struct bgen *g, struct bs_err *err);
void bgen_release(struct bgen *g);

/* ---- machinery shared by the strategies (bucket_gen.c) ---- */

/* Python's a // b. */
int64_t bucket_floordiv(int64_t a, int64_t b);
/* Reads VLLM_{PHASE}_{DIM}_BUCKET_{PARAM} into *VAL when set; the QUERY dimension falls back to
 * the legacy SEQ name.  Returns 1 set, 0 unset, -1 error (not an integer). */
int bucket_knob(const struct bucket_params *p, const char *phase, const char *dim,
		const char *param, int64_t *val, struct bs_err *err);
/* Reads the first N of (MIN, STEP, MAX, PAD_MAX, PAD_PERCENT) over the defaults in V. */
int bucket_knobs(const struct bucket_params *p, const char *phase, const char *dim, int64_t *v,
		 int n, struct bs_err *err);
/* Every value of R in 0..INT32_MAX, else an error naming WHAT ("prompt bs"). */
int bucket_check_range(const struct ivec *r, const char *what, struct bs_err *err);
/* brange_lin / brange_pad of the config C (min, step, max[, pad_max, pad_percent]), with an
 * error naming WHAT and the config when it cannot be built. */
int bucket_lin_range(struct ivec *r, const int64_t *c, bool head, const char *what,
		     struct bs_err *err);
int bucket_pad_range(struct ivec *r, const int64_t *c, const char *what, struct bs_err *err);
/* An exponential config (min, step, max, limit) that brange_exp can build, else an error. */
int bucket_exp_cfg_ok(const int64_t *c, const char *what, struct bs_err *err);
/* "generated 0 PHASE buckets: ..." (exit 3); returns -1. */
int bucket_empty_error(const char *phase, struct bs_err *err);
/* Most steps in one linear bucket range, and most buckets of one phase: no server warms up
 * more, and an unbounded product (a linear step of 1 over a long context) would exhaust memory
 * instead of failing.  Version current's prompt phase counts the buckets its filter keeps (its
 * generator's work follows them); the others count candidates, the product of their ranges,
 * checked before expanding it. */
#define BUCKET_GEN_MAX 1000000
/* Most candidate buckets of version current's prompt phase, checked before any is examined:
 * they bound the (bs, query) pairs its generator visits. */
#define BUCKET_SCAN_MAX 10000000
/* An error (exit 3) when N, the candidate buckets of PHASE, exceeds LIMIT; else 0. */
int bucket_product_check(const char *phase, double n, double limit, struct bs_err *err);
/* The error (exit 3) of a PHASE whose filters keep more than BUCKET_GEN_MAX buckets; -1. */
int bucket_kept_error(const char *phase, struct bs_err *err);
/* The server's config log line "HEAD n1:c1, n2:c2[, n3:c3]" (N values per config, as Python
 * prints a list; bit k of TUP prints config k as a tuple).  N3 NULL: two configs. */
void bucket_cfg_line(char *buf, size_t len, const char *head, int n, unsigned tup,
		     const char *n1, const int64_t *c1, const char *n2, const int64_t *c2,
		     const char *n3, const int64_t *c3);

/* The five ranges of version current (prompt bs, query, ctx; decode bs, blocks). */
struct bucket_ranges {
	struct ivec bs, query, ctx, dbs, blocks;
};
void bucket_ranges_release(struct bucket_ranges *r);
/* Version current from ranges to lists: the range checks, then bucket_combine_prompt and
 * bucket_combine_decode into G; with contiguous PA, num_kv_blocks is appended to a block range
 * that ends below it (upstream's manager does this for every strategy). */
int bucket_finish_current(const struct bucket_params *p, const struct bucket_ranges *r,
			  struct bgen *g, struct bs_err *err);
/* Version current's prompt filter (reference 2.4; merged prefill has its own) and the
 * non-contiguous decode filter and corrector (in place, unsorted). */
bool bucket_prompt_keep(const struct bucket_params *p, int64_t bs, int64_t q, int64_t ctx);
/* The largest ctx that filter keeps with (BS, Q), INT64_MIN when it keeps none: it keeps
 * exactly the ctx values up to it. */
int64_t bucket_prompt_ctx_bound(const struct bucket_params *p, int64_t bs, int64_t q);
void bucket_correct_decode(const struct bucket_params *p, struct blist *l);
/* Version current's merged-prefill override of the linear-family prompt configs (min, step,
 * max, ...): bs (1, 1, 1), query step x4 and max mnbt, ctx step 4 and max MAXCTX * mnps. */
void bucket_merged_override(const struct bucket_params *p, int64_t *pb, int64_t *pq, int64_t *pc,
			    int64_t maxctx);
/* Version current's decode block config of the linear family: DK holds the defaults (min,
 * step, max); reads the MIN/STEP/MAX knobs, sets DK[3] to a quarter of the default maximum
 * (the pad_max default), clamps the maximum to num_kv_blocks with contiguous PA only and a
 * minimum above a bound to max(1, bound - step): the bound is the maximum with MIN_VS_MAX
 * (linear), num_kv_blocks without (padding-aware). */
int bucket_decode_blocks_current(const struct bucket_params *p, int64_t *dk, bool min_vs_max,
				 struct bs_err *err);
/* Version docs' prompt list: for each (bs, seq), ctx 0 or, with prefix caching, the triangle
 * 0..(SMAX - seq) // B; kept when bs * (seq + ctx * B) <= mnbt and (unless NO_MML_CHECK)
 * seq <= mml; when nothing is kept, all are kept with a warning, as the server does. */
int bucket_docs_prompt(const struct bucket_params *p, const struct ivec *bs,
		       const struct ivec *seq, int64_t smax, bool no_mml_check, struct bgen *g,
		       struct bs_err *err);

/* The variable-name lists of struct bucket_strategy: VLLM_<PHASE>_<DIM>_BUCKET_<PARAM>. */
#define BUCKET_KNOB(ph, dim, param) "VLLM_" ph "_" dim "_BUCKET_" param
#define BUCKET_KNOBS_MMX(ph, dim) BUCKET_KNOB(ph, dim, "MIN"), BUCKET_KNOB(ph, dim, "STEP"), \
	BUCKET_KNOB(ph, dim, "MAX")
#define BUCKET_KNOBS_PAD(ph, dim) BUCKET_KNOBS_MMX(ph, dim), BUCKET_KNOB(ph, dim, "PAD_MAX"), \
	BUCKET_KNOB(ph, dim, "PAD_PERCENT")

/* Reads an integer environment variable NAME (via config_env).  Returns 1 when set (value in
 * *out), 0 when not set, -1 (ERR filled, exit 3 naming the variable) when not an integer. */
int bucket_env_int(const struct config *cfg, const char *name, int64_t *out, struct bs_err *err);

#endif
