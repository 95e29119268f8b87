/*
 * bucket_advise: which buckets to warm for a workload (`bucketsim buckets --advise`).
 *
 * Input: the distinct real shapes of one phase's forward passes, each with its number of
 * passes (prompt (bs, query, ctx_blocks), decode (bs, 1, num_blocks)), and the cost model's
 * time of a pass at a shape and of a run-time compile.  A bucket set is a Cartesian product of
 * per-dimension value lists, as the server's strategies build theirs, and a shape runs in the
 * product's smallest bucket that dominates it: each dimension's value rounded up to the next
 * listed value (in a full product, exactly the server's look-up, the lexicographically smallest
 * dominating bucket).  Its expected cost is
 *
 *     sum over shapes s of passes(s) * (time(bucket(s)) - time(s))      (time spent on padding)
 *   + sum over distinct shapes with no dominating bucket of compile(s)  (a run-time compile)
 *
 * in nanoseconds.  The optimiser chooses, for a budget of K buckets (the product of the list
 * sizes), the lists of least expected cost: for one dimension an exact dynamic programme over
 * the sorted observed values (a boundary above the largest value observed below it never
 * helps: the time is non-decreasing in each dimension); for several, the same programme on each
 * dimension in turn with the others fixed (exact per dimension; the joint optimum is not
 * guaranteed: the report states the result against the baselines), over every split of K into
 * list sizes.  Values are the observed ones; the DP is exact over them.
 */
#ifndef BS_BUCKET_ADVISE_H
#define BS_BUCKET_ADVISE_H

#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "policies/bucket_int.h"
#include "sim/run_int.h"

/* One distinct real shape of a phase and its number of passes. */
struct adv_shape {
	int32_t v[3];
	int64_t w;
};

/* The time of one pass at shape V of phase PH, and of compiling V at run time, in ns. */
struct adv_cost {
	void *ctx;
	int64_t (*pass)(void *ctx, int ph, const int32_t v[3]);
	int64_t (*compile)(void *ctx, int ph, const int32_t v[3]);
};

/* Per-dimension value lists, sorted ascending, no duplicates. */
struct adv_set {
	struct ivec val[3];
};
void adv_set_free(struct adv_set *s);
/* Buckets in the product. */
size_t adv_set_size(const struct adv_set *s);

/* The expected cost (above) of the product S on SHAPES. */
int64_t adv_cost_product(int ph, const struct adv_shape *sh, size_t n, const struct adv_set *s,
			 const struct adv_cost *c);
/* The same for any sorted bucket list L (the server's look-up: the lexicographically smallest
 * bucket that dominates the shape; none: its compile). */
int64_t adv_cost_list(int ph, const struct adv_shape *sh, size_t n, const struct blist *l,
		      const struct adv_cost *c);
/* Replaces dimension D of S by the best list of at most K observed values given the other
 * dimensions (exact dynamic programme); returns the new expected cost. */
int64_t adv_dp_dim(int ph, const struct adv_shape *sh, size_t n, struct adv_set *s, int d,
		   size_t k, const struct adv_cost *c);
/* The product of at most K buckets of least expected cost found (above); INIT, when not NULL,
 * is one more starting point (e.g. a baseline's own lists, so the result is never worse than
 * that product).  OUT receives the lists; returns its cost. */
int64_t adv_optimise(int ph, const struct adv_shape *sh, size_t n, size_t k,
		     const struct adv_set *init, const struct adv_cost *c, struct adv_set *out);
/* The product's buckets as a sorted list. */
void adv_set_list(int ph, const struct adv_set *s, struct blist *out);
/* The per-dimension lists of a bucket list (its projections). */
void adv_set_of_list(const struct blist *l, struct adv_set *out);

/* `bucketsim buckets --advise` (bucket_advise_run.c): X set up with the workload loaded. */
struct run_ctx;
struct advise_opts {
	size_t max_buckets;   /* per phase */
	double holdout;       /* 0, or the fraction of the requests (the last) evaluated only */
	double max_warmup_s;  /* 0, or a warm-up budget, seconds: replaces max_buckets */
};
int buckets_advise(struct run_ctx *x, const struct advise_opts *o, FILE *out, struct bs_err *err);

#endif
