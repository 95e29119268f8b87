/*
 * check_advise: the bucket advisor's optimiser (policies/bucket_advise.c) on small cases
 * against brute force: the one-dimensional dynamic programme is exact over every choice of
 * boundaries (observed values or not), the product's look-up by per-dimension ceilings is the
 * server's look-up, and the multi-dimensional search is never worse than its starting point.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "policies/bucket_advise.h"
#include "tests/check_main.h"

/* An attention-like time, non-decreasing in every dimension, and a compile of 1000. */
static int64_t t_pass(void *ctx, int ph, const int32_t v[3])
{
	(void)ctx;
	(void)ph;
	return (int64_t)v[0] * (10 + 3 * v[1] + (int64_t)v[1] * v[1] / 4 + 2 * (int64_t)v[1] * v[2]);
}

static int64_t t_compile(void *ctx, int ph, const int32_t v[3])
{
	(void)ctx;
	(void)ph;
	(void)v;
	return 1000;
}

static const struct adv_cost cost = {NULL, t_pass, t_compile};
/* The optimiser is the same for both phases but for the least query a list may hold (a prompt
 * bucket's is 2: a query of 1 marks a decode bucket in the file format); these cases vary
 * every dimension, so they run as decode, whose least query is 1, like the brute force. */
#define PH PHASE_DECODE

static uint64_t lcg = 12345;
static int rnd(int n)
{
	lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (int)((lcg >> 33) % (uint64_t)n);
}

/* N random distinct shapes with values of dimension d in 1..MAXV[d]. */
static size_t shapes(struct adv_shape *sh, size_t n, const int *maxv)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		struct adv_shape s = {{1 + rnd(maxv[0]), 1 + rnd(maxv[1]), rnd(maxv[2] + 1)},
				      1 + rnd(20)};
		bool dup = false;
		for (size_t j = 0; j < k && !dup; j++)
			dup = !memcmp(sh[j].v, s.v, sizeof s.v);
		if (!dup)
			sh[k++] = s;
	}
	return k;
}

/* The least cost over every subset of at most K of the VMAX values from 1 (context: from 0) as
 * dimension D's list, the other lists as in S. */
static int64_t brute_dim(const struct adv_shape *sh, size_t n, const struct adv_set *s, int d,
			 int vmax, size_t k)
{
	int64_t best = INT64_MAX;
	for (unsigned mask = 1; mask < (1u << vmax); mask++) {
		if ((size_t)__builtin_popcount(mask) > k)
			continue;
		struct adv_set t = {0};
		for (int e = 0; e < 3; e++)
			if (e != d)
				for (size_t i = 0; i < s->val[e].n; i++)
					ivec_push(&t.val[e], s->val[e].v[i]);
		for (int v = 0; v < vmax; v++)
			if (mask & (1u << v))
				ivec_push(&t.val[d], v + (d == 2 ? 0 : 1));
		int64_t c = adv_cost_product(PH, sh, n, &t, &cost);
		if (c < best)
			best = c;
		adv_set_free(&t);
	}
	return best;
}

/* One dimension (the query; bs and ctx fixed): the DP equals brute force over every boundary
 * choice in 1..12, for every K. */
START_TEST(dp_exact_one_dim)
{
	for (int trial = 0; trial < 25; trial++) {
		struct adv_shape sh[16];
		int maxv[3] = {1, 10, 0};
		size_t n = shapes(sh, 1 + (size_t)rnd(14), maxv);
		for (size_t k = 1; k <= 6; k++) {
			struct adv_set s = {0};
			ivec_push(&s.val[0], 1);
			ivec_push(&s.val[1], 1);
			ivec_push(&s.val[2], 0);
			int64_t dp = adv_dp_dim(PH, sh, n, &s, 1, k, &cost);
			ck_assert_uint_le(s.val[1].n, k);
			ck_assert_int_eq(dp, adv_cost_product(PH, sh, n, &s, &cost));
			ck_assert_int_eq(dp, brute_dim(sh, n, &s, 1, 12, k));
			adv_set_free(&s);
		}
	}
}
END_TEST

/* The DP on one dimension of a product, the others fixed (bs and ctx lists given): exact
 * against brute force; uncovered shapes (above a fixed list) are charged their compile. */
START_TEST(dp_exact_given_others)
{
	for (int trial = 0; trial < 30; trial++) {
		struct adv_shape sh[24];
		int maxv[3] = {4, 8, 3};
		size_t n = shapes(sh, 1 + (size_t)rnd(22), maxv);
		for (int d = 0; d < 3; d += 2) {
			struct adv_set s = {0};
			ivec_push(&s.val[0], 2), ivec_push(&s.val[0], 4);
			ivec_push(&s.val[1], 3), ivec_push(&s.val[1], 8);
			ivec_push(&s.val[2], 1), ivec_push(&s.val[2], 3);
			for (size_t k = 1; k <= 3; k++) {
				int64_t dp = adv_dp_dim(PH, sh, n, &s, d, k, &cost);
				ck_assert_int_eq(dp, brute_dim(sh, n, &s, d, d ? 5 : 5, k));
			}
			adv_set_free(&s);
		}
	}
}
END_TEST

/* A shape uncovered in every choice: only its compile, once. */
START_TEST(uncovered_charged_compile)
{
	struct adv_shape sh[2] = {{{1, 4, 0}, 5}, {{1, 9, 0}, 7}};
	struct adv_set s = {0};
	ivec_push(&s.val[0], 1);
	ivec_push(&s.val[1], 4);
	ivec_push(&s.val[2], 0);
	/* (1,4,0) exact: 0; (1,9,0) above every query: 1000 */
	ck_assert_int_eq(adv_cost_product(PH, sh, 2, &s, &cost), 1000);
	/* with K = 1 the DP weighs padding 4 -> 9 (5 passes) against one compile */
	int64_t pad = 5 * (t_pass(NULL, 0, (int32_t[3]){1, 9, 0}) - t_pass(NULL, 0, (int32_t[3]){1, 4, 0}));
	int64_t dp = adv_dp_dim(PH, sh, 2, &s, 1, 1, &cost);
	ck_assert_int_eq(dp, pad < 1000 ? pad : 1000);
	adv_set_free(&s);
}
END_TEST

/* In a full product the server's look-up (lexicographically smallest dominating bucket) is
 * the per-dimension ceiling: both costs agree. */
START_TEST(list_lookup_is_ceiling)
{
	for (int trial = 0; trial < 30; trial++) {
		struct adv_shape sh[30];
		int maxv[3] = {6, 12, 5};
		size_t n = shapes(sh, 1 + (size_t)rnd(28), maxv);
		struct adv_set s = {0};
		for (int d = 0; d < 3; d++) {
			for (int v = 0; v <= maxv[d] + 1; v++)
				if (rnd(3) == 0)
					ivec_push(&s.val[d], v);
			if (!s.val[d].n)
				ivec_push(&s.val[d], maxv[d]);
			ivec_sort_unique(&s.val[d]);
		}
		struct blist l = {0};
		adv_set_list(PH, &s, &l);
		ck_assert_uint_eq(l.n, adv_set_size(&s));
		ck_assert_int_eq(adv_cost_list(PH, sh, n, &l, &cost),
				 adv_cost_product(PH, sh, n, &s, &cost));
		blist_free(&l);
		adv_set_free(&s);
	}
}
END_TEST

/* The search over products: within the budget, never worse than its starting point, and on
 * small cases within the brute-force optimum over every product of observed values (reported:
 * it is exact per dimension, not jointly). */
START_TEST(product_search)
{
	for (int trial = 0; trial < 20; trial++) {
		struct adv_shape sh[20];
		int maxv[3] = {4, 6, 1};
		size_t n = shapes(sh, 4 + (size_t)rnd(16), maxv);
		size_t k = 2 + (size_t)rnd(6);
		struct adv_set init = {0}, out;
		ivec_push(&init.val[0], 4);
		ivec_push(&init.val[1], 6);
		ivec_push(&init.val[2], 1);
		int64_t c0 = adv_cost_product(PH, sh, n, &init, &cost);
		int64_t c = adv_optimise(PH, sh, n, k, &init, &cost, &out);
		ck_assert_uint_le(adv_set_size(&out), k);
		ck_assert_int_le(c, c0);
		ck_assert_int_eq(c, adv_cost_product(PH, sh, n, &out, &cost));
		/* brute force over products of subsets of 1..4 x 1..6 x {0,1} within k */
		int64_t best = INT64_MAX;
		for (unsigned a = 1; a < 16; a++)
			for (unsigned b = 1; b < 64; b++)
				for (unsigned z = 1; z < 4; z++) {
					size_t sz = (size_t)__builtin_popcount(a) * __builtin_popcount(b) *
						    __builtin_popcount(z);
					if (sz > k)
						continue;
					struct adv_set t = {0};
					for (int v = 0; v < 4; v++)
						if (a & (1u << v))
							ivec_push(&t.val[0], v + 1);
					for (int v = 0; v < 6; v++)
						if (b & (1u << v))
							ivec_push(&t.val[1], v + 1);
					for (int v = 0; v < 2; v++)
						if (z & (1u << v))
							ivec_push(&t.val[2], v);
					int64_t v = adv_cost_product(PH, sh, n, &t, &cost);
					if (v < best)
						best = v;
					adv_set_free(&t);
				}
		ck_assert_int_ge(c, best);
		adv_set_free(&init);
		adv_set_free(&out);
	}
}
END_TEST

/* More distinct values than the programme's candidates (400): the list stays within the budget
 * and costs what the product costs, no more than an even spread (here a compile is cheaper
 * than padding the longest queries, so the list stops below them). */
START_TEST(many_values)
{
	static struct adv_shape sh[600];
	for (int i = 0; i < 600; i++)
		sh[i] = (struct adv_shape){{1, 2 + i, 0}, 1 + (i % 7)};
	struct adv_set s = {0}, even = {0};
	ivec_push(&s.val[0], 1);
	ivec_push(&s.val[1], 601);
	ivec_push(&s.val[2], 0);
	int64_t dp = adv_dp_dim(PH, sh, 600, &s, 1, 5, &cost);
	ck_assert_uint_le(s.val[1].n, 5);
	ck_assert_int_eq(dp, adv_cost_product(PH, sh, 600, &s, &cost));
	ivec_push(&even.val[0], 1);
	ivec_push(&even.val[2], 0);
	for (int v = 121; v <= 601; v += 120)
		ivec_push(&even.val[1], v);
	ck_assert_int_le(dp, adv_cost_product(PH, sh, 600, &even, &cost));
	adv_set_free(&s);
	adv_set_free(&even);
}
END_TEST

/* The free set of points on small cases: within the budget, what the server's look-up costs,
 * never above its starting product; and the lower bound never above the brute-force optimum
 * over every set of at most K points of the grid (any point: bucket_advise.h's derivation says
 * the optimum needs only joins of shapes, the brute force does not assume it). */
START_TEST(free_set_bound)
{
	for (int trial = 0; trial < 25; trial++) {
		struct adv_shape sh[12];
		int maxv[3] = {3, 4, 1};
		size_t n = shapes(sh, 3 + (size_t)rnd(9), maxv);
		/* the grid: bs 1..3, query 1..4, ctx 0..1 */
		int32_t grid[24][3];
		int ng = 0;
		for (int a = 1; a <= 3; a++)
			for (int b = 1; b <= 4; b++)
				for (int z = 0; z <= 1; z++)
					grid[ng][0] = a, grid[ng][1] = b, grid[ng][2] = z, ng++;
		for (size_t k = 1; k <= 3; k++) {
			int64_t best = INT64_MAX;
			int idx[3];
			/* every set of exactly k distinct grid points (fewer is never better: adding a
			 * point that dominates nothing changes nothing) */
			for (idx[0] = 0; idx[0] < ng; idx[0]++)
				for (idx[1] = k > 1 ? idx[0] + 1 : ng; idx[1] < (k > 1 ? ng : ng + 1); idx[1]++)
					for (idx[2] = k > 2 ? idx[1] + 1 : ng; idx[2] < (k > 2 ? ng : ng + 1); idx[2]++) {
						struct blist l = {0};
						for (size_t q = 0; q < k; q++)
							blist_push(&l, grid[idx[q]][0], grid[idx[q]][1],
								   grid[idx[q]][2], 0);
						blist_sort_unique(&l);
						int64_t v = adv_cost_list(PH, sh, n, &l, &cost);
						if (v < best)
							best = v;
						blist_free(&l);
					}
			int64_t lb = adv_lower_bound(PH, sh, n, k, &cost);
			ck_assert_int_le(lb, best);
			ck_assert_int_ge(lb, 0);
			struct adv_set ps;
			int64_t pc = adv_optimise(PH, sh, n, k, NULL, &cost, &ps);
			struct blist start = {0}, out = {0};
			adv_set_list(PH, &ps, &start);
			int64_t fc = adv_free_set(PH, sh, n, k, &start, &cost, &out);
			ck_assert_uint_le(out.n, k);
			ck_assert_int_le(fc, pc);
			ck_assert_int_eq(fc, adv_cost_list(PH, sh, n, &out, &cost));
			ck_assert_int_ge(fc, best);
			blist_free(&start), blist_free(&out);
			adv_set_free(&ps);
		}
		/* a bucket per shape: the bound is 0 and the heuristic reaches it */
		struct blist start = {0}, out = {0};
		blist_push(&start, 3, 4, 1, 0);
		ck_assert_int_eq(adv_lower_bound(PH, sh, n, n, &cost), 0);
		ck_assert_int_eq(adv_free_set(PH, sh, n, n, &start, &cost, &out), 0);
		ck_assert_uint_eq(out.n, n);
		blist_free(&start), blist_free(&out);
	}
}
END_TEST

/* The bound by hand: shapes (1,2,0) x3 and (1,4,0) x1 and (2,2,0) x1, compile 1000, K = 1.
 * t(1,q,0) = 10 + 3q + q^2/4 (17 at q = 2, 26 at q = 4), t(2,q,0) = twice that.
 * delta(1,2,0) = 3 * min(t(1,4,0) - t(1,2,0), t(2,2,0) - t(1,2,0)) = 3 * min(9, 17) = 27;
 * delta(1,4,0) = t(2,4,0) - t(1,4,0) = 52 - 26 = 26 (its join with (1,2,0) is itself);
 * delta(2,2,0) = t(2,4,0) - t(2,2,0) = 52 - 34 = 18.  K = 1 exempts the largest (27): 26 + 18
 * = 44; K = 2: 18. */
START_TEST(lower_bound_by_hand)
{
	struct adv_shape sh[3] = {{{1, 2, 0}, 3}, {{1, 4, 0}, 1}, {{2, 2, 0}, 1}};
	ck_assert_int_eq(adv_lower_bound(PH, sh, 3, 1, &cost), 44);
	ck_assert_int_eq(adv_lower_bound(PH, sh, 3, 2, &cost), 18);
	ck_assert_int_eq(adv_lower_bound(PH, sh, 3, 3, &cost), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("advise");
	TCase *tc = tcase_create("dp");
	tcase_set_timeout(tc, 120);   /* brute force under the sanitizers on a loaded machine */
	tcase_add_test(tc, dp_exact_one_dim);
	tcase_add_test(tc, dp_exact_given_others);
	tcase_add_test(tc, uncovered_charged_compile);
	tcase_add_test(tc, list_lookup_is_ceiling);
	tcase_add_test(tc, product_search);
	tcase_add_test(tc, many_values);
	tcase_add_test(tc, free_set_bound);
	tcase_add_test(tc, lower_bound_by_hand);
	suite_add_tcase(s, tc);
	return check_run(s);
}
