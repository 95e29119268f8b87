/*
 * bucket_int: internals shared by the bucketing files (not part of the module's contract).
 *
 *   bucket_range.c  the one-dimensional range generators of every strategy and version
 *                   (ExpRange, ExpRangeFill, LinRange, padding-aware, unified six-point and
 *                   ten-point ranges) and the fallback rounding fb(n, step)
 *   bucket_gen.c    per version and strategy: configs, combination, filters, correctors
 *   bucket_file.c   the bucket-file grammar (VLLM_BUCKETING_FROM_FILE)
 *   bucketing.c     parameters, the bucketer object, look-ups and warm-up order
 *
 * Ranges are `struct ivec` of int64 values, always returned sorted and without duplicates.
 * Bucket lists are `struct blist`, sorted lexicographically over v[0..3] after
 * blist_sort_unique().  Every function here borrows its inputs; outputs are appended to
 * caller-owned vectors (freed with ivec_free / blist_free).
 */
#ifndef BS_BUCKET_INT_H
#define BS_BUCKET_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/bucketing.h"

struct ivec {
	int64_t *v;
	size_t n, cap;
};
void ivec_push(struct ivec *r, int64_t x);
void ivec_sort_unique(struct ivec *r);
void ivec_free(struct ivec *r);
bool ivec_has(const struct ivec *r, int64_t x);
int64_t ivec_max(const struct ivec *r);

struct blist {
	struct bshape *a;
	size_t n, cap;
};
void blist_push(struct blist *l, int64_t a, int64_t b, int64_t c, int64_t d);
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

/* Output of generation: the warm-up lists and the server's config log lines. */
struct bgen {
	struct blist prompt, decode, unified;
	char prompt_cfg[512], decode_cfg[512], unified_cfg[512];   /* "" when none */
	/* The line is bucketsim's: the reproduced server version did not log it. */
	bool decode_cfg_unlogged, unified_cfg_unlogged;
};
/* Version current's combination of ranges (reference 2.4), exposed for the tests: prompt with
 * the long-context edge rule and the filters, decode with the non-contiguous corrector.
 * OUT receives the sorted list; an empty result is an error. */
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

int bucket_generate(const struct bucket_params *p, struct bgen *g, struct bs_err *err);
void bgen_release(struct bgen *g);

/* Reads an integer environment variable NAME (via config_env).  Returns 1 when set (value in
 * *out), 0 when not set, -1 (ERR filled, exit 3 naming the variable) when not an integer. */
int bucket_env_int(const struct config *cfg, const char *name, int64_t *out, struct bs_err *err);

#endif
