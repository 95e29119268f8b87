/*
 * check_bucketserve: the BucketServe core (policies/bs_manager, policies/bs_batch,
 * analysis/waste, policies/bucketserve) against hand-worked values.
 */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "policies/batching.h"
#include "policies/bucketserve.h"
#include "policies/order.h"
#include "tests/check_main.h"

/* ---------- helpers ---------- */

/* The order and grouping of the managers a test builds (the manager itself knows neither: it
 * holds keys, and a grouping changes it through its own adjust()), and the grouping's theta. */
static const struct order_policy *cur_order;
static const struct grouping_policy *cur_grouping;
static double cur_theta = 0.5;
static double cur_par0; /* the order's first own key (sjf_aging: scheduler.sjf_aging_ms) */

/* A manager of L_MAX tokens for grouping G (with BOUNDS when given) and order O (policy
 * names, policies/registry.c). */
static void init_mgr(struct bsm *m, uint32_t l_max, const char *g, const char *o,
		     const uint32_t *bounds, size_t nb)
{
	cur_grouping = grouping_policy(g);
	cur_order = order_policy(o);
	ck_assert_ptr_nonnull(cur_grouping);
	ck_assert_ptr_nonnull(cur_order);
	cur_theta = 0.5;
	struct bsm_params p = {.l_max = l_max, .bounds = bounds, .nbounds = nb};
	struct bs_err e = {0};
	ck_assert_int_eq(bsm_init(m, &p, &e), 0);
}

/* Queues request ID (arrival ARR, prompt LEN, output OUT, priority PR) keyed by the current
 * order's own key(), as the kernel does (sim/kernel_queue.c wq_push_bucketed). */
static void put(struct bsm *m, uint32_t id, int64_t arr, uint32_t len, uint32_t out, uint8_t pr)
{
	struct req_spec q = {.arrival_ns = arr, .prompt_tokens = (int32_t)len,
			     .output_tokens = (int32_t)out, .priority = pr, .prefix_group = -1};
	struct policy_params par = {{cur_par0}};
	struct bsm_req r = {.arrival_ns = arr, .len = len, .total = len + out,
			    .key = cur_order->key(&q, (int32_t)id, par.v)};
	struct bs_err e = {0};
	ck_assert_int_eq(bsm_insert(m, id, &r, &e), 0);
}

/* The current grouping's adjust() with threshold N_MAX (nothing when it has none), as
 * bucketserve_adjust_with() calls it.  RES may be NULL. */
static void adjust(struct bsm *m, uint64_t n_max, struct bsm_adjust_result *res)
{
	struct bsm_adjust_result dummy;
	if (!res)
		res = &dummy;
	*res = (struct bsm_adjust_result){0, false};
	double par[POLICY_MAX_KEYS] = {cur_theta};
	if (cur_grouping->adjust)
		cur_grouping->adjust(m, n_max, par, res);
}

/* Asserts the boundaries are exactly WANT[0..n). */
static void assert_bounds(const struct bsm *m, const uint32_t *want, size_t n)
{
	uint32_t got[64];
	ck_assert_uint_eq(bsm_boundaries(m, got, 64), n);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(got[i], want[i]);
	ck_assert(bsm_check(m));
}

/* ---------- Algorithm 1 ---------- */

/* L_max = 100, theta = 0.5, N_max = 3, lengths 10, 20, 30, 40, 90:
 *   total 5 >= 3; [0,100]: m_b = 50, C_s = 4, 4/5 = 0.8 > 0.5 and 5 > 3 -> split at 50.
 *   again: [0,50): m_b = 25, C_s = 2 (10, 20), 2/4 = 0.5 is not > 0.5 -> no split;
 *          [50,100]: 1 request -> no split.
 *   add 5: [0,50) = {5,10,20,30,40}: C_s = 3, 3/5 = 0.6 > 0.5, 5 > 3 -> split at 25.
 *   [0,25) = {5,10,20}: m_b = 13 (12.5 rounded up), C_s = 2, 2/3 > 0.5 but 3 is not > 3. */
START_TEST(alg1_split_steps)
{
	struct bsm m;
	init_mgr(&m, 100, "adaptive", "sjf", NULL, 0);
	uint32_t lens[] = {10, 20, 30, 40, 90};
	for (uint32_t i = 0; i < 5; i++)
		put(&m, i, i, lens[i], 1, 0);
	assert_bounds(&m, (uint32_t[]){0, 100}, 2);
	struct bsm_adjust_result r;
	adjust(&m, 3, &r);
	ck_assert_uint_eq(r.splits, 1);
	ck_assert(!r.merged);
	assert_bounds(&m, (uint32_t[]){0, 50, 100}, 3);
	ck_assert_uint_eq(bsm_bucket_count(&m, 0), 4);
	ck_assert_uint_eq(bsm_bucket_count(&m, 1), 1);
	ck_assert_uint_eq(bsm_bucket_of(&m, 4), 1);
	adjust(&m, 3, &r); /* exactly theta: no split */
	ck_assert_uint_eq(r.splits, 0);
	assert_bounds(&m, (uint32_t[]){0, 50, 100}, 3);
	put(&m, 5, 5, 5, 1, 0);
	adjust(&m, 3, &r);
	ck_assert_uint_eq(r.splits, 1);
	assert_bounds(&m, (uint32_t[]){0, 25, 50, 100}, 4);
	ck_assert_uint_eq(bsm_bucket_count(&m, 0), 3);
	ck_assert_uint_eq(bsm_bucket_count(&m, 1), 2);
	adjust(&m, 3, &r); /* |b| = 3 is not > N_max = 3 */
	ck_assert_uint_eq(r.splits, 0);
	ck_assert_uint_eq(bsm_nsplits(&m), 2);
	ck_assert_uint_eq(bsm_nmerges(&m), 0);
	/* SJF order survives the splits. */
	ck_assert_int_eq(bsm_pop(&m, 0), 5);
	ck_assert_int_eq(bsm_pop(&m, 0), 0);
	ck_assert_int_eq(bsm_pop(&m, 0), 1);
	ck_assert_int_eq(bsm_pop(&m, 0), -1);
	ck_assert(bsm_check(&m));
	bsm_release(&m);
}
END_TEST

/* One adjust call is one pass: a fresh half is not split again in the same call.
 * N_max = 2, lengths 1, 2, 3, 4 in [0,100]: split at 50 ([0,50) holds all 4); the next call
 * splits [0,50) at 25 (C_s = 4 > 2); the next splits [0,25) at 13; then [0,13) at 7; then
 * [0,7) at 4 (C_s = 3: 1,2,3, 3/4 > 0.5) into [0,4) = {1,2,3} and [4,7) = {4}. */
START_TEST(alg1_one_pass)
{
	struct bsm m;
	init_mgr(&m, 100, "adaptive", "fcfs", NULL, 0);
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, i, i + 1, 1, 0);
	struct bsm_adjust_result r;
	adjust(&m, 2, &r);
	ck_assert_uint_eq(r.splits, 1);
	assert_bounds(&m, (uint32_t[]){0, 50, 100}, 3);
	adjust(&m, 2, &r);
	assert_bounds(&m, (uint32_t[]){0, 25, 50, 100}, 4);
	adjust(&m, 2, &r);
	assert_bounds(&m, (uint32_t[]){0, 13, 25, 50, 100}, 5);
	adjust(&m, 2, &r);
	assert_bounds(&m, (uint32_t[]){0, 7, 13, 25, 50, 100}, 6);
	adjust(&m, 2, &r);
	assert_bounds(&m, (uint32_t[]){0, 4, 7, 13, 25, 50, 100}, 7);
	/* [0,4) = {1,2,3}: m_b = 2, C_s = 1 (only 1 < 2): 1/3 -> no further split. */
	adjust(&m, 2, &r);
	ck_assert_uint_eq(r.splits, 0);
	ck_assert_uint_eq(bsm_nsplits(&m), 5);
	ck_assert_uint_eq(bsm_bucket_count(&m, 0), 3);
	ck_assert_uint_eq(bsm_bucket_count(&m, 1), 1);
	bsm_release(&m);
}
END_TEST

/* Majority above the midpoint: lengths 10, 60, 70, 80 -> C_s = 1, 1/4 <= 0.5: never split. */
START_TEST(alg1_no_split_below_theta)
{
	struct bsm m;
	init_mgr(&m, 100, "adaptive", "fcfs", NULL, 0);
	uint32_t lens[] = {10, 60, 70, 80};
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, i, lens[i], 1, 0);
	adjust(&m, 1, NULL);
	assert_bounds(&m, (uint32_t[]){0, 100}, 2);
	ck_assert_uint_eq(bsm_nsplits(&m), 0);
	/* theta = 0.2 would split (1/4 = 0.25 > 0.2). */
	struct bsm m2;
	init_mgr(&m2, 100, "adaptive", "fcfs", NULL, 0);
	cur_theta = 0.2;
	for (uint32_t i = 0; i < 4; i++)
		put(&m2, i, i, lens[i], 1, 0);
	adjust(&m2, 1, NULL);
	assert_bounds(&m2, (uint32_t[]){0, 50, 100}, 3);
	bsm_release(&m);
	bsm_release(&m2);
}
END_TEST

/* Merge when total < N_max (lines 11-13), counted once; total == N_max does not merge. */
START_TEST(alg1_merge)
{
	struct bsm m;
	init_mgr(&m, 100, "adaptive", "ljf", NULL, 0);
	uint32_t lens[] = {10, 20, 30, 90};
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, i, lens[i], 1, 0);
	adjust(&m, 2, NULL); /* C_s = 3/4 > 0.5, 4 > 2: split at 50 */
	assert_bounds(&m, (uint32_t[]){0, 50, 100}, 3);
	bsm_remove(&m, 0);
	bsm_remove(&m, 3);
	struct bsm_adjust_result r;
	adjust(&m, 2, &r); /* total 2 == N_max: split branch; [0,50) has 2, not > 2 */
	ck_assert(!r.merged);
	ck_assert_uint_eq(bsm_nbuckets(&m), 2);
	bsm_remove(&m, 1);
	adjust(&m, 2, &r); /* total 1 < 2: merge */
	ck_assert(r.merged);
	assert_bounds(&m, (uint32_t[]){0, 100}, 2);
	ck_assert_uint_eq(bsm_nmerges(&m), 1);
	adjust(&m, 2, &r); /* already one bucket: not counted */
	ck_assert(!r.merged);
	ck_assert_uint_eq(bsm_nmerges(&m), 1);
	ck_assert_int_eq(bsm_peek(&m, 0), 2);
	bsm_release(&m);
}
END_TEST

/* Odd midpoint: [0,5] splits at ceil(2.5) = 3, so 0..2 (< 2.5) go left and 3..5 right; a
 * bucket one token wide is never split. */
START_TEST(alg1_midpoint_rounding)
{
	struct bsm m;
	init_mgr(&m, 5, "adaptive", "fcfs", NULL, 0);
	uint32_t lens[] = {0, 1, 2, 5};
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, i, lens[i], 1, 0);
	adjust(&m, 1, NULL);
	assert_bounds(&m, (uint32_t[]){0, 3, 5}, 3);
	ck_assert_uint_eq(bsm_bucket_of(&m, 2), 0);
	ck_assert_uint_eq(bsm_bucket_of(&m, 3), 1); /* length L_max is in the closed last bucket */
	adjust(&m, 1, NULL); /* [0,3): m_b = 2, C_s = 2 of 3 -> split at 2 */
	assert_bounds(&m, (uint32_t[]){0, 2, 3, 5}, 4);
	adjust(&m, 1, NULL); /* [0,2): m_b = 1, C_s = 1 of 2 = 0.5 -> no */
	assert_bounds(&m, (uint32_t[]){0, 2, 3, 5}, 4);
	bsm_remove(&m, 1);
	adjust(&m, 0, NULL); /* [0,2) = {0}: 1 > 0, C_s = 1 -> split at 1 */
	assert_bounds(&m, (uint32_t[]){0, 1, 2, 3, 5}, 5);
	adjust(&m, 0, NULL); /* [0,1) is one token wide: never split */
	assert_bounds(&m, (uint32_t[]){0, 1, 2, 3, 5}, 5);
	bsm_release(&m);
}
END_TEST

START_TEST(grouping_fixed_none)
{
	struct bsm m;
	uint32_t b[] = {0, 256, 1024, 4096};
	init_mgr(&m, 4096, "fixed", "fcfs", b, 4);
	put(&m, 0, 0, 255, 1, 0);
	put(&m, 1, 1, 256, 1, 0);
	put(&m, 2, 2, 4096, 1, 0);
	put(&m, 3, 3, 1023, 1, 0);
	ck_assert_uint_eq(bsm_bucket_of(&m, 0), 0);
	ck_assert_uint_eq(bsm_bucket_of(&m, 1), 1);
	ck_assert_uint_eq(bsm_bucket_of(&m, 2), 2);
	ck_assert_uint_eq(bsm_bucket_of(&m, 3), 1);
	adjust(&m, 0, NULL); /* fixed: no-op */
	assert_bounds(&m, b, 4);
	struct bs_err e = {0};
	struct bsm_req big = {.len = 4097, .total = 4098};
	ck_assert_int_eq(bsm_insert(&m, 9, &big, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.field, "prompt_tokens");
	bsm_release(&m);

	init_mgr(&m, 4096, "none", "fcfs", NULL, 0);
	for (uint32_t i = 0; i < 10; i++)
		put(&m, i, i, i * 100, 1, 0);
	adjust(&m, 1, NULL);
	assert_bounds(&m, (uint32_t[]){0, 4096}, 2);
	bsm_release(&m);

	/* Bad fixed boundaries. */
	uint32_t bad[] = {0, 256, 256, 4096};
	struct bsm_params p = {.l_max = 4096, .bounds = bad, .nbounds = 4};
	bs_err_clear(&e);
	ck_assert_int_eq(bsm_init(&m, &p, &e), -1);
	ck_assert_str_eq(e.field, "scheduler.boundaries");
	p.bounds = NULL;
	p.nbounds = 0;
	p.l_max = 0;
	bs_err_clear(&e);
	ck_assert_int_eq(bsm_init(&m, &p, &e), -1);
	ck_assert_str_eq(e.field, "scheduler.l_max");
}
END_TEST

START_TEST(parse_bounds)
{
	uint32_t *b;
	size_t n;
	struct bs_err e = {0};
	ck_assert_int_eq(bsm_parse_bounds("0,256,1024,max", 4096, "k", &b, &n, &e), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(b[2], 1024);
	ck_assert_uint_eq(b[3], 4096);
	free(b);
	ck_assert_int_eq(bsm_parse_bounds("0,4096", 4096, "k", &b, &n, &e), 0);
	free(b);
	const char *bad[] = {"", "0,256", "1,4096", "0,512,256,max", "0,,max", "0,x,max",
			     "0,5000,max", "0,-1,max", "max"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		bs_err_clear(&e);
		ck_assert_int_eq(bsm_parse_bounds(bad[i], 4096, "k", &b, &n, &e), -1);
		ck_assert_int_eq(e.code, BS_EXIT_INPUT);
		ck_assert_str_eq(e.field, "k");
		ck_assert_ptr_null(b);
	}
	ck_assert(order_policy("earliest_bucket")->earliest_bucket);
	ck_assert_ptr_null(order_policy("lfw"));
}
END_TEST

/* Misuse is a bug and aborts: queuing an id twice, removing an id that is not queued. */
START_TEST(bug_double_insert)
{
	struct bsm m;
	init_mgr(&m, 100, "none", "fcfs", NULL, 0);
	put(&m, 0, 0, 10, 1, 0);
	struct bsm_req r = {.len = 10, .total = 11};
	bsm_insert(&m, 0, &r, NULL);
}
END_TEST

START_TEST(bug_remove_unqueued)
{
	struct bsm m;
	init_mgr(&m, 100, "none", "fcfs", NULL, 0);
	put(&m, 0, 0, 10, 1, 0);
	bsm_remove(&m, 0);
	bsm_remove(&m, 0);
}
END_TEST

/* ---------- orders ---------- */

/* id: arrival, len, out (total), priority
 *  0:  0, 50, 10 (60),  2
 *  1:  1, 20, 100 (120), 0
 *  2:  2, 50, 1 (51),   1
 *  3:  3, 20, 5 (25),   0
 *  4:  3, 20, 5 (25),   0   (same arrival as 3: insertion order breaks the tie) */
static void check_order(const char *o, const int64_t *want)
{
	struct bsm m;
	init_mgr(&m, 100, "none", o, NULL, 0);
	put(&m, 0, 0, 50, 10, 2);
	put(&m, 1, 1, 20, 100, 0);
	put(&m, 2, 2, 50, 1, 1);
	put(&m, 3, 3, 20, 5, 0);
	put(&m, 4, 3, 20, 5, 0);
	uint32_t ids[8];
	ck_assert_uint_eq(bsm_bucket_ids(&m, 0, ids, 8), 5);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(ids[i], want[i]);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(bsm_pop(&m, 0), want[i]);
	ck_assert_int_eq(bsm_pop(&m, 0), -1);
	bsm_release(&m);
}

START_TEST(orders)
{
	check_order("fcfs", (int64_t[]){0, 1, 2, 3, 4});
	check_order("sjf", (int64_t[]){1, 3, 4, 0, 2});
	check_order("ljf", (int64_t[]){0, 2, 1, 3, 4});
	check_order("sjf_total", (int64_t[]){3, 4, 2, 0, 1});
	check_order("ljf_total", (int64_t[]){1, 0, 2, 3, 4});
	check_order("priority", (int64_t[]){1, 3, 4, 2, 0});
}
END_TEST

/* Removing from the middle keeps the order (heap delete with sift up or down). */
START_TEST(remove_middle)
{
	struct bsm m;
	init_mgr(&m, 1000, "none", "sjf", NULL, 0);
	for (uint32_t i = 0; i < 20; i++)
		put(&m, i, i, (i * 7) % 20 * 10, 1, 0);
	bsm_remove(&m, 5);
	bsm_remove(&m, 0);
	bsm_remove(&m, 19);
	ck_assert(!bsm_queued(&m, 5));
	ck_assert(bsm_queued(&m, 6));
	uint32_t prev = 0;
	size_t n = 0;
	for (int64_t id; (id = bsm_pop(&m, 0)) >= 0; n++) {
		ck_assert_uint_ge(bsm_len(&m, (uint32_t)id), prev);
		prev = bsm_len(&m, (uint32_t)id);
	}
	ck_assert_uint_eq(n, 17);
	/* A popped id can be queued again (a preempted request). */
	put(&m, 5, 100, 3, 1, 0);
	ck_assert_int_eq(bsm_peek(&m, 0), 5);
	bsm_release(&m);
}
END_TEST

/* Buckets [0,10), [10,100]: ids 0 (len 50, t 5), 1 (len 5, t 7), 2 (len 60, t 9).
 * earliest_bucket (key 0: arrival order inside buckets): the earliest bucket is 1 (its first
 * request arrived at t 5), and so is the best (the first request in that order).  SJF: the
 * best bucket is 0 (holds len 5). */
START_TEST(earliest_bucket)
{
	struct bsm m;
	uint32_t b[] = {0, 10, 100};
	init_mgr(&m, 100, "fixed", "earliest_bucket", b, 3);
	ck_assert_int_eq(bsm_earliest_bucket(&m), -1);
	ck_assert_int_eq(bsm_best_bucket(&m), -1);
	put(&m, 0, 5, 50, 1, 0);
	put(&m, 1, 7, 5, 1, 0);
	put(&m, 2, 9, 60, 1, 0);
	ck_assert_int_eq(bsm_earliest_bucket(&m), 1);
	ck_assert_int_eq(bsm_peek(&m, 1), 0);
	ck_assert_int_eq(bsm_best_bucket(&m), 1);
	bsm_remove(&m, 0);
	ck_assert_int_eq(bsm_earliest_bucket(&m), 0);
	ck_assert_int_eq(bsm_peek(&m, 1), 2);
	/* Same arrival in two buckets: the one inserted first wins. */
	put(&m, 3, 1, 70, 1, 0);
	put(&m, 4, 1, 3, 1, 0);
	ck_assert_int_eq(bsm_earliest_bucket(&m), 1);
	bsm_release(&m);

	init_mgr(&m, 100, "fixed", "sjf", b, 3);
	put(&m, 0, 5, 50, 1, 0);
	put(&m, 1, 7, 5, 1, 0);
	put(&m, 2, 9, 60, 1, 0);
	ck_assert_int_eq(bsm_best_bucket(&m), 0);
	bsm_release(&m);
}
END_TEST

/* An order is its key() inside buckets as in a plain queue, so an order the manager has never
 * heard of orders a bucket.  One bucket [0, 100], four requests (id: arrival ms, prompt):
 * 0: 0, 50;  1: 10, 20;  2: 20, 5;  3: 40, 1.
 *   sjf (key = prompt): 3 (1), 2 (5), 1 (20), 0 (50).
 *   sjf_aging, w = 1 ms per token (key = arrival + w x prompt, ms): 50, 30, 25, 41 ->
 *     2, 1, 3, 0.
 *   fcfs (key 0): 0, 1, 2, 3. */
static void check_key_order(const char *order, double par0, const int64_t want[4])
{
	struct bsm m;
	init_mgr(&m, 100, "none", order, NULL, 0);
	cur_par0 = par0;
	static const int64_t arr_ms[] = {0, 10, 20, 40};
	static const uint32_t len[] = {50, 20, 5, 1};
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, arr_ms[i] * 1000000, len[i], 1, 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(bsm_pop(&m, 0), want[i]);
	bsm_release(&m);
	cur_par0 = 0;
}

START_TEST(key_orders_bucket)
{
	check_key_order("sjf", 0, (int64_t[]){3, 2, 1, 0});
	check_key_order("sjf_aging", 1, (int64_t[]){2, 1, 3, 0});
	check_key_order("fcfs", 0, (int64_t[]){0, 1, 2, 3});
}
END_TEST

/* Ties inside a bucket go by arrival, then by queuing order: a request queued again (after a
 * preemption) goes behind one with the same key and arrival, whatever their ids.  Priority
 * (key = priority): ids 0, 1, 2 at t 0, priorities 1, 1, 0; 0 leaves and comes back: 2, 1, 0. */
START_TEST(key_ties_requeue)
{
	struct bsm m;
	init_mgr(&m, 100, "none", "priority", NULL, 0);
	put(&m, 0, 0, 10, 1, 1);
	put(&m, 1, 0, 10, 1, 1);
	put(&m, 2, 0, 10, 1, 0);
	ck_assert_int_eq(bsm_peek(&m, 0), 2);
	bsm_remove(&m, 0);
	put(&m, 0, 0, 10, 1, 1);
	ck_assert_int_eq(bsm_pop(&m, 0), 2);
	ck_assert_int_eq(bsm_pop(&m, 0), 1);
	ck_assert_int_eq(bsm_pop(&m, 0), 0);
	bsm_release(&m);
}
END_TEST

/* ---------- Eq. 1, 5, 6 ---------- */

START_TEST(eq1_kv_bytes)
{
	/* llama-2-13b: 2 * 40 layers * 40 KV heads * 128 * 2 bytes = 819200 bytes/token. */
	struct bsb_model l2 = {.layers = 40, .kv_heads = 40, .head_dim = 128, .dtype_bytes = 2};
	ck_assert_uint_eq(bsb_kv_bytes_per_token(&l2), 819200);
	/* llama-3.1-8b (GQA): 2 * 32 * 8 KV heads * 128 * 2 = 131072 (not 32 query heads). */
	struct bsb_model l3 = {.layers = 32, .kv_heads = 8, .head_dim = 128, .dtype_bytes = 2};
	ck_assert_uint_eq(bsb_kv_bytes_per_token(&l3), 131072);
	/* Eq. 1 for a batch of 4 padded to 1000 tokens: 819200 * 1000 * 4. */
	ck_assert_uint_eq(bsb_kv_bytes(&l2, 1000, 4), 3276800000ull);
}
END_TEST

/* Hand computation (llama-2-13b, M_remain = 10 GiB = 10737418240 bytes):
 *   Eq. 5: M_safe = 0.9 * 10737418240 = 9663676416 bytes
 *   2LHDB = 819200; M_safe / 819200 = 11796.48 -> budget 11796 tokens
 *   S = 4000, 3000, 2000, 2500, 500: prefix sums 4000, 7000, 9000, 11500, 12000
 *   Eq. 6: N_max = 4 (11500 <= 11796 < 12000).
 *   Padded (Eq. 1): N * S_max <= 11796: N = 2 (8000), N = 3 needs 12000. */
START_TEST(eq6_nmax)
{
	struct bsb_model l2 = {.layers = 40, .kv_heads = 40, .head_dim = 128, .dtype_bytes = 2};
	uint64_t safe = bsb_safe_bytes(0.9, 10737418240ull);
	ck_assert_uint_eq(safe, 9663676416ull);
	uint64_t budget = bsb_budget_tokens(safe, bsb_kv_bytes_per_token(&l2));
	ck_assert_uint_eq(budget, 11796);
	uint32_t s[] = {4000, 3000, 2000, 2500, 500};
	ck_assert_uint_eq(bsb_nmax(s, 5, budget), 4);
	ck_assert_uint_eq(bsb_fit(s, 5, budget, BSB_PADDED, 0), 2);
	ck_assert_uint_eq(bsb_fit(s, 5, budget, BSB_SUM, 3), 3);
	ck_assert_uint_eq(bsb_nmax(s, 5, 3999), 0);
	ck_assert_uint_eq(bsb_nmax(s, 5, 12000), 5);
	ck_assert_uint_eq(bsb_nmax(s, 0, 12000), 0);
	ck_assert_uint_eq(bsb_safe_bytes(1.0, 7), 7);
	ck_assert_uint_eq(bsb_safe_bytes(0.5, 7), 3);
}
END_TEST

/* Eq. 6 as the Algorithm 1 threshold over the queue 10, 20, 30, 40 (ascending sums 10, 30,
 * 60, 100): budget 65 -> 3; 100 -> 4; 150 -> 4 + floor(50 / 25) = 6; 5 -> 0.
 * Queue 10, 10, 10 with budget 25 -> 2 (partial cell). */
START_TEST(nmax_auto)
{
	struct bsm m;
	init_mgr(&m, 100, "adaptive", "fcfs", NULL, 0);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 100), UINT64_MAX);
	uint32_t lens[] = {40, 10, 30, 20};
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, i, lens[i], 1, 0);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 65), 3);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 100), 4);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 150), 6);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 5), 0);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 10), 1);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 29), 1);
	bsm_release(&m);
	init_mgr(&m, 100, "adaptive", "fcfs", NULL, 0);
	for (uint32_t i = 0; i < 3; i++)
		put(&m, i, i, 10, 1, 0);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 25), 2);
	put(&m, 3, 3, 100, 1, 0); /* a key equal to L_max (the last histogram cell) */
	ck_assert_uint_eq(bsm_nmax_auto(&m, 129), 3);
	ck_assert_uint_eq(bsm_nmax_auto(&m, 130), 4);
	bsm_release(&m);
}
END_TEST

/* bsb_take on an SJF bucket of 30, 10, 40, 20 (outputs 5 each): order 10, 20, 30, 40.
 * budget 60, sum: 10 + 20 + 30 = 60 -> 3 taken, 40 stays.
 * padded, budget 60: 1*10, 2*20 = 40, 3*30 = 90 > 60 -> 2 taken.
 * charge total (15, 25, 35, 45), sum, budget 60: 15 + 25 = 40, + 35 = 75 > 60 -> 2. */
START_TEST(take_batch)
{
	struct bsm m;
	uint32_t ids[8];
	uint32_t lens[] = {30, 10, 40, 20};
	init_mgr(&m, 100, "none", "sjf", NULL, 0);
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, i, lens[i], 5, 0);
	ck_assert_uint_eq(bsb_take(&m, 0, 60, BSB_SUM, BSB_CHARGE_KEY, 0, ids, 8), 3);
	ck_assert_uint_eq(ids[0], 1);
	ck_assert_uint_eq(ids[1], 3);
	ck_assert_uint_eq(ids[2], 0);
	ck_assert_uint_eq(bsm_total(&m), 1);
	ck_assert_uint_eq(bsb_take(&m, 0, 39, BSB_SUM, BSB_CHARGE_KEY, 0, ids, 8), 0);
	ck_assert_uint_eq(bsm_total(&m), 1);
	bsm_release(&m);

	init_mgr(&m, 100, "none", "sjf", NULL, 0);
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, i, lens[i], 5, 0);
	ck_assert_uint_eq(bsb_take(&m, 0, 60, BSB_PADDED, BSB_CHARGE_KEY, 0, ids, 8), 2);
	bsm_release(&m);

	init_mgr(&m, 100, "none", "sjf", NULL, 0);
	for (uint32_t i = 0; i < 4; i++)
		put(&m, i, i, lens[i], 5, 0);
	ck_assert_uint_eq(bsb_take(&m, 0, 60, BSB_SUM, BSB_CHARGE_TOTAL, 0, ids, 8), 2);
	ck_assert_uint_eq(bsb_take(&m, 0, 1000, BSB_SUM, BSB_CHARGE_KEY, 1, ids, 8), 1);
	ck_assert_uint_eq(bsb_take(&m, 0, 1000, BSB_SUM, BSB_CHARGE_KEY, 0, ids, 0), 0);
	ck_assert_uint_eq(bsb_take(&m, 0, 1000, BSB_SUM, BSB_CHARGE_KEY, 0, ids, 8), 1);
	ck_assert_uint_eq(bsb_take(&m, 0, 1000, BSB_SUM, BSB_CHARGE_KEY, 0, ids, 8), 0);
	ck_assert(bsm_check(&m));
	bsm_release(&m);
}
END_TEST

/* The simulator's memory_safe controller (policies/batching_memory_safe.c) forms the batches of
 * take_batch's worked example: offered 10, 20, 30, 40 in the bucket's order with M_safe = 60
 * tokens (fraction 0.5 of an idle instance of 120 tokens), it takes 3 (sum), 2 (padded) and 2
 * (charge total), reserving what it charged; with 9 tokens it takes none (the first request
 * waits). */
static size_t controller_batch(double fraction, enum bsb_accounting acc, enum bsb_charge ch,
			       int64_t *reserved)
{
	const struct batch_policy *ctl = batch_policy("memory_safe");
	struct bucketserve_cfg bc = {0};
	bc.mem_safe_fraction = fraction;
	bc.accounting = acc;
	bc.charge = ch;
	uint32_t lens[8];
	struct batch_view d = {0};
	d.lens = lens;
	d.idle = true;
	d.kv_free = 1000;
	d.kv_tokens = 120;
	d.bsc = &bc;
	const int32_t order[] = {10, 20, 30, 40};
	*reserved = 0;
	for (size_t i = 0; i < 4; i++) {
		struct req_spec q = {0};
		q.prompt_tokens = order[i];
		q.output_tokens = 5;
		struct batch_cand c = {&q, 1, 1, 0, 0};
		if (!ctl->take(&d, &c))
			break;
		*reserved += c.reserve;
		lens[d.n++] = (uint32_t)order[i];
	}
	return d.n;
}

START_TEST(controller_is_bsb_rule)
{
	int64_t r;
	ck_assert_uint_eq(controller_batch(0.5, BSB_SUM, BSB_CHARGE_KEY, &r), 3);
	ck_assert_int_eq(r, 60);
	ck_assert_uint_eq(controller_batch(0.5, BSB_PADDED, BSB_CHARGE_KEY, &r), 2);
	ck_assert_uint_eq(controller_batch(0.5, BSB_SUM, BSB_CHARGE_TOTAL, &r), 2);
	ck_assert_int_eq(r, 15 + 25);
	ck_assert_uint_eq(controller_batch(0.075, BSB_SUM, BSB_CHARGE_KEY, &r), 0); /* 9 tokens */
}
END_TEST

/* ---------- Eq. 2, 3, 4 ---------- */

START_TEST(eq2_waste_ratio)
{
	/* (6 - 4) / 6 = 1/3 */
	ck_assert_double_eq_tol(waste_ratio((uint32_t[]){2, 4, 6}, 3), 1.0 / 3, 1e-15);
	ck_assert_double_eq(waste_ratio((uint32_t[]){7, 7}, 2), 0.0);
	ck_assert(isnan(waste_ratio(NULL, 0)));
	ck_assert_double_eq(waste_ratio((uint32_t[]){0, 0}, 2), 0.0);
	/* Batches {2,4,6} (padded 18, real 12) and {10,10} (20, 20):
	 * token-weighted = (18 - 12 + 0) / 38 = 6/38; unweighted = (1/3 + 0) / 2 = 1/6. */
	struct waste_acc a;
	waste_acc_init(&a);
	ck_assert(isnan(waste_acc_weighted(&a)));
	ck_assert(isnan(waste_acc_mean(&a)));
	waste_acc_add_lens(&a, (uint32_t[]){2, 4, 6}, 3);
	waste_acc_add(&a, 2, 20, 10);
	waste_acc_add(&a, 0, 0, 0); /* empty batch: ignored */
	ck_assert_uint_eq(a.batches, 2);
	ck_assert_double_eq_tol(waste_acc_weighted(&a), 6.0 / 38, 1e-15);
	ck_assert_double_eq_tol(waste_acc_mean(&a), 1.0 / 6, 1e-15);
	/* Two batches without padding, {5} and {3,3}, count with the ratio 0: padded and real
	 * 38 + 5 + 6 = 49 and 32 + 11 = 43, token-weighted 6/49, unweighted (1/3 + 0 + 0 + 0) / 4. */
	waste_acc_add_lens(&a, (uint32_t[]){5}, 1);
	waste_acc_add_lens(&a, (uint32_t[]){3, 3}, 2);
	ck_assert_uint_eq(a.batches, 4);
	ck_assert_uint_eq(a.ratio_batches, 4);
	ck_assert_uint_eq(a.padded_tokens, 49);
	ck_assert_uint_eq(a.real_tokens, 43);
	ck_assert_double_eq_tol(waste_acc_weighted(&a), 6.0 / 49, 1e-15);
	ck_assert_double_eq_tol(waste_acc_mean(&a), 1.0 / 12, 1e-15);
}
END_TEST

START_TEST(eq3_eq4)
{
	/* Buckets [0,10), [10,20]; lengths 5, 10, 15:
	 * Eq. 3 = ((1 - 5/10) + (1 - 10/20) + (1 - 15/20)) / 3 = (0.5 + 0.5 + 0.25) / 3 */
	uint32_t b[] = {0, 10, 20};
	uint32_t s[] = {5, 10, 15};
	double w;
	struct bs_err e = {0};
	ck_assert_int_eq(waste_expected(b, 3, s, 3, &w, &e), 0);
	ck_assert_double_eq_tol(w, 1.25 / 3, 1e-15);
	/* One bucket [0,20]: (0.75 + 0.5 + 0.25) / 3 = 0.5 */
	ck_assert_int_eq(waste_expected((uint32_t[]){0, 20}, 2, s, 3, &w, &e), 0);
	ck_assert_double_eq_tol(w, 0.5, 1e-15);
	ck_assert_int_eq(waste_expected(b, 3, s, 0, &w, &e), 0);
	ck_assert(isnan(w));
	ck_assert_int_eq(waste_expected(b, 3, (uint32_t[]){21}, 1, &w, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	bs_err_clear(&e);
	ck_assert_int_eq(waste_expected((uint32_t[]){0, 10, 10}, 3, s, 3, &w, &e), -1);
	ck_assert_str_eq(e.field, "boundaries");
	/* Eq. 4: bucket 0 = {5} -> 5; bucket 1 = {10, 15} -> 12.5; bucket 2 empty -> NaN. */
	double u[3];
	uint64_t c[3];
	ck_assert_int_eq(waste_cond_mean((uint32_t[]){0, 10, 20, 30}, 4, s, 3, u, c, NULL), 0);
	ck_assert_double_eq(u[0], 5.0);
	ck_assert_double_eq(u[1], 12.5);
	ck_assert(isnan(u[2]));
	ck_assert_uint_eq(c[1], 2);
	ck_assert_int_eq(waste_cond_mean(b, 3, s, 3, u, NULL, NULL), 0);
	ck_assert_double_eq(u[1], 12.5);
	bs_err_clear(&e);
	ck_assert_int_eq(waste_cond_mean(b, 3, (uint32_t[]){5, 25}, 2, u, NULL, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.field, "length");
	bs_err_clear(&e);
	ck_assert_int_eq(waste_cond_mean((uint32_t[]){0}, 1, s, 3, u, NULL, &e), -1);
	ck_assert_str_eq(e.field, "boundaries");
	ck_assert_int_eq(waste_bucket_of(b, 3, 20), 1);
	ck_assert_int_eq(waste_bucket_of(b, 3, 9), 0);
	ck_assert_int_eq(waste_bucket_of(b, 3, 21), -1);
}
END_TEST

/* ---------- configuration ---------- */

static void set(struct config *c, const char *k, const char *v)
{
	struct bs_err e = {0};
	ck_assert_int_eq(config_set(c, k, v, CFG_ORIGIN_CMDLINE, NULL, 0, &e), 0);
}

START_TEST(cfg_resolve)
{
	struct config c;
	struct bucketserve_cfg bc;
	struct bs_err e = {0};
	config_init(&c);
	ck_assert_int_eq(bucketserve_cfg_resolve(&c, &bc, &e), -1); /* no L_max */
	ck_assert_str_eq(e.field, "scheduler.l_max");
	set(&c, "server.max_model_len", "4096");
	bs_err_clear(&e);
	ck_assert_int_eq(bucketserve_cfg_resolve(&c, &bc, &e), 0);
	ck_assert_uint_eq(bc.bsm.l_max, 4096);
	ck_assert_ptr_eq(bc.grouping, grouping_policy("none"));
	ck_assert_ptr_null(bc.bsm.bounds);
	ck_assert_double_eq(bc.mem_safe_fraction, 0.9);
	ck_assert_uint_eq(bc.n_max, 0);
	ck_assert_int_eq(bc.adjust, BUCKETSERVE_ADJUST_ARRIVAL);
	ck_assert_int_eq(bc.pick, BUCKETSERVE_PICK_ORDER);
	bucketserve_cfg_release(&bc);

	set(&c, "scheduler.grouping", "fixed");
	bs_err_clear(&e);
	ck_assert_int_eq(bucketserve_cfg_resolve(&c, &bc, &e), -1);
	ck_assert_str_eq(e.field, "scheduler.boundaries");
	set(&c, "scheduler.boundaries", "0,256,2048");
	bs_err_clear(&e);
	ck_assert_int_eq(bucketserve_cfg_resolve(&c, &bc, &e), -1);
	set(&c, "scheduler.boundaries", "0,256,max");
	set(&c, "scheduler.order", "earliest_bucket");
	set(&c, "scheduler.adjust", "period");
	set(&c, "scheduler.adjust_period_s", "0.25");
	set(&c, "scheduler.n_max", "64");
	set(&c, "scheduler.kv_accounting", "padded");
	set(&c, "scheduler.kv_charge", "total");
	bs_err_clear(&e);
	ck_assert_int_eq(bucketserve_cfg_resolve(&c, &bc, &e), 0);
	ck_assert_uint_eq(bc.bsm.nbounds, 3);
	ck_assert_uint_eq(bc.bsm.bounds[2], 4096);
	ck_assert_ptr_eq(bc.grouping, grouping_policy("fixed"));
	ck_assert_int_eq(bc.pick, BUCKETSERVE_PICK_EARLIEST);
	ck_assert_int_eq(bc.adjust, BUCKETSERVE_ADJUST_PERIOD);
	ck_assert_int_eq(bc.adjust_period_ns, 250000000);
	ck_assert_uint_eq(bc.n_max, 64);
	ck_assert_int_eq(bc.accounting, BSB_PADDED);
	ck_assert_int_eq(bc.charge, BSB_CHARGE_TOTAL);
	struct bsm m;
	ck_assert_int_eq(bsm_init(&m, &bc.bsm, &e), 0);
	ck_assert_uint_eq(bsm_nbuckets(&m), 2);
	cur_order = order_policy("earliest_bucket");
	put(&m, 0, 10, 300, 1, 0);
	put(&m, 1, 5, 3000, 1, 0);
	ck_assert_int_eq(bucketserve_pick(&bc, &m), 1);
	ck_assert_uint_eq(bucketserve_nmax(&bc, &m, 1), 64);
	bsm_release(&m);
	bucketserve_cfg_release(&bc);
	/* Out-of-range values are refused by the table itself. */
	ck_assert_int_eq(config_set(&c, "scheduler.theta", "1", CFG_ORIGIN_CMDLINE, NULL, 0, &e),
			 -1);
	config_release(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bucketserve");
	TCase *tc = tcase_create("algorithm1");
	tcase_add_test(tc, alg1_split_steps);
	tcase_add_test(tc, alg1_one_pass);
	tcase_add_test(tc, alg1_no_split_below_theta);
	tcase_add_test(tc, alg1_merge);
	tcase_add_test(tc, alg1_midpoint_rounding);
	tcase_add_test(tc, grouping_fixed_none);
	tcase_add_test(tc, parse_bounds);
	tcase_add_test_raise_signal(tc, bug_double_insert, SIGABRT);
	tcase_add_test_raise_signal(tc, bug_remove_unqueued, SIGABRT);
	suite_add_tcase(s, tc);
	tc = tcase_create("orders");
	tcase_add_test(tc, orders);
	tcase_add_test(tc, remove_middle);
	tcase_add_test(tc, earliest_bucket);
	tcase_add_test(tc, key_orders_bucket);
	tcase_add_test(tc, key_ties_requeue);
	suite_add_tcase(s, tc);
	tc = tcase_create("batching");
	tcase_add_test(tc, eq1_kv_bytes);
	tcase_add_test(tc, eq6_nmax);
	tcase_add_test(tc, nmax_auto);
	tcase_add_test(tc, take_batch);
	tcase_add_test(tc, controller_is_bsb_rule);
	suite_add_tcase(s, tc);
	tc = tcase_create("waste");
	tcase_add_test(tc, eq2_waste_ratio);
	tcase_add_test(tc, eq3_eq4);
	suite_add_tcase(s, tc);
	tc = tcase_create("config");
	tcase_add_test(tc, cfg_resolve);
	suite_add_tcase(s, tc);
	return check_run(s);
}
