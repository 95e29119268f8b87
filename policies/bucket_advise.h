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

/*
 * A free set of points (the bucket file's exact buckets: any K tuples, not a product).
 *
 * adv_free_set() is a heuristic: from START (the product advice, at most K buckets) it drops
 * the buckets no shape runs in, lowers each bucket to the join (per-dimension maximum) of the
 * shapes that run in it when that is cheaper, then, while the budget allows, adds as an exact
 * bucket the shape (among the 64 costliest) whose addition lowers the cost most.  Each step is
 * applied only when it lowers the expected cost under the server's look-up, so the result never
 * costs more than START.  Returns its cost; OUT receives the sorted points.
 *
 * adv_lower_bound() bounds the expected cost of ANY set of at most K buckets from below,
 * assuming the pass time is non-decreasing in every dimension (as the cost model's is).
 * Derivation.  Relax the look-up: let every shape run in whichever dominating bucket is
 * cheapest for it; the server's look-up cannot cost less.  In the relaxed problem a bucket B
 * can be replaced by the join of the shapes it serves (it still dominates them, time does not
 * increase, and more shapes may be dominated), so some optimum has only joins of shapes.  A
 * shape s that is not itself a bucket then either runs nowhere (its compile C(s)) or in a join
 * containing s and a shape s' that s does not dominate, which dominates join(s, s'):
 *
 *     delta(s) = min( C(s),  min over s' not <= s of  w(s) * (t(join(s, s')) - t(s)) )
 *
 * is the least such a shape can cost.  At most K shapes are buckets themselves (cost 0), so
 *
 *     cost >= sum of delta(s) over all shapes minus the K largest delta(s).
 *
 * Above ADV_LB_PAIRWISE distinct shapes (bucket_advise.c) the inner minimum uses a weaker,
 * still valid, bound: join(s, s') is at least s with one dimension d raised to the next value
 * observed above s[d] in any shape.  With K at least the number of shapes the bound is 0 (every
 * shape its own bucket), which the heuristic then reaches.
 */
int64_t adv_free_set(int ph, const struct adv_shape *sh, size_t n, size_t k,
		     const struct blist *start, const struct adv_cost *c, struct blist *out);
int64_t adv_lower_bound(int ph, const struct adv_shape *sh, size_t n, size_t k,
			const struct adv_cost *c);

/* `bucketsim buckets --advise` (bucket_advise_run.c): X set up with the workload loaded. */
struct run_ctx;
struct advise_opts {
	size_t max_buckets;   /* per phase */
	double holdout;       /* 0, or the fraction of the requests (the last) evaluated only */
	double max_warmup_s;  /* 0, or a warm-up budget, seconds: replaces max_buckets */
	bool free_set;        /* the advice as a free set of points, not a product */
	const size_t *budgets;  /* --budgets: a CSV of every strategy at each count, instead */
	size_t nbudgets;
};
int buckets_advise(struct run_ctx *x, const struct advise_opts *o, FILE *out, struct bs_err *err);

#endif
