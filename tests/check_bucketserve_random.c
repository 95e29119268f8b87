/*
 * check_bucketserve_random: randomized consistency of the Request Bucketing Manager.
 *
 * Many inserts, removes, pops, batch takes and adjusts (fixed seeds, every registered grouping
 * and order, read from the registry) against a shadow copy of the queue.  Invariants checked:
 * bsm_check() (every request in exactly one bucket, buckets partition [0, L_max], counts and
 * histogram consistent), the shadow and the manager agree on which ids are queued, every pop
 * returns the first request of its bucket by (the order's key(), arrival, queuing order), a
 * grouping without adjust() never changes the buckets, and the Algorithm 1 counters only grow.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "policies/bucketserve.h"
#include "policies/grouping.h"
#include "policies/order.h"
#include "tests/check_main.h"

struct shadow {
	struct bsm_req *req;
	bool *queued;
	uint64_t *seq;
	size_t n;
};

static int before(const struct shadow *sh, uint32_t a, uint32_t b)
{
	const struct bsm_req *x = &sh->req[a], *y = &sh->req[b];
	if (x->key != y->key)
		return x->key < y->key;
	if (x->arrival_ns != y->arrival_ns)
		return x->arrival_ns < y->arrival_ns;
	return sh->seq[a] < sh->seq[b];
}

/* The first queued request in bucket K by brute force. */
static int64_t brute_first(const struct bsm *m, const struct shadow *sh, size_t k)
{
	int64_t best = -1;
	for (size_t i = 0; i < sh->n; i++) {
		if (!sh->queued[i] || bsm_bucket_of(m, (uint32_t)i) != k)
			continue;
		if (best < 0 || before(sh, (uint32_t)i, (uint32_t)best))
			best = (int64_t)i;
	}
	return best;
}

/* The grouping's adjust() as bucketserve_adjust_with() calls it (theta 0.5). */
static void adjust(const struct grouping_policy *g, struct bsm *m, uint64_t n_max,
		   struct bsm_adjust_result *res)
{
	struct bsm_adjust_result dummy;
	if (!res)
		res = &dummy;
	*res = (struct bsm_adjust_result){0, false};
	double par[POLICY_MAX_KEYS] = {0.5};
	if (g->adjust)
		g->adjust(m, n_max, par, res);
}

static uint32_t draw_len(gsl_rng *r, uint32_t l_max)
{
	/* Long-tailed: mostly short, some long, some exactly 0 or L_max. */
	unsigned long u = gsl_rng_uniform_int(r, 100);
	if (u < 2)
		return 0;
	if (u < 4)
		return l_max;
	if (u < 70)
		return (uint32_t)gsl_rng_uniform_int(r, l_max / 16 + 1);
	return (uint32_t)gsl_rng_uniform_int(r, l_max + 1);
}

/* One random run of grouping G (with the boundaries below when it has bounds()) and order O
 * with its default keys PAR. */
static void run(const struct grouping_policy *g, const struct order_policy *o, const double *par,
		unsigned long seed, size_t nops)
{
	const uint32_t l_max = 4096;
	uint32_t bounds[] = {0, 128, 512, 2048, 4096};
	struct bsm_params p = {.l_max = l_max, .bounds = g->bounds ? bounds : NULL,
			       .nbounds = g->bounds ? 5 : 0};
	struct bsm m;
	ck_assert_int_eq(bsm_init(&m, &p, NULL), 0);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, seed);
	struct shadow sh = {0};
	size_t cap = nops + 1;
	sh.req = xcalloc(cap, sizeof *sh.req);
	sh.queued = xcalloc(cap, sizeof *sh.queued);
	sh.seq = xcalloc(cap, sizeof *sh.seq);
	uint64_t seq = 0, splits = 0, merges = 0;
	size_t queued = 0;
	uint32_t *out = xmalloc(cap * sizeof *out);
	int64_t now = 0;
	for (size_t op = 0; op < nops; op++) {
		unsigned long u = gsl_rng_uniform_int(r, 100);
		if (u < 55 || queued == 0) { /* insert a new request */
			uint32_t id = (uint32_t)sh.n++;
			now += (int64_t)gsl_rng_uniform_int(r, 3); /* ties in arrival happen */
			struct req_spec rs = {.arrival_ns = now, .prompt_tokens = (int32_t)draw_len(r, l_max),
					      .priority = (uint8_t)gsl_rng_uniform_int(r, 4),
					      .prefix_group = -1};
			rs.output_tokens = 1 + (int32_t)gsl_rng_uniform_int(r, 500);
			struct bsm_req q = {.arrival_ns = now, .len = (uint32_t)rs.prompt_tokens,
					    .total = (uint32_t)(rs.prompt_tokens + rs.output_tokens),
					    .key = o->key(&rs, (int32_t)id, par)};
			sh.req[id] = q;
			sh.seq[id] = seq++;
			sh.queued[id] = true;
			queued++;
			ck_assert_int_eq(bsm_insert(&m, id, &q, NULL), 0);
		} else if (u < 70) { /* remove a random queued request */
			uint32_t id;
			do
				id = (uint32_t)gsl_rng_uniform_int(r, sh.n);
			while (!sh.queued[id]);
			bsm_remove(&m, id);
			sh.queued[id] = false;
			queued--;
		} else if (u < 82) { /* pop the head of a random non-empty bucket */
			size_t k = (size_t)gsl_rng_uniform_int(r, bsm_nbuckets(&m));
			int64_t want = brute_first(&m, &sh, k);
			ck_assert_int_eq(bsm_peek(&m, k), want);
			ck_assert_int_eq(bsm_pop(&m, k), want);
			if (want >= 0) {
				sh.queued[want] = false;
				queued--;
			}
		} else if (u < 88) { /* a memory-safe batch from the picked bucket */
			int64_t k = bsm_best_bucket(&m);
			ck_assert_int_ge(k, 0);
			uint64_t budget = gsl_rng_uniform_int(r, 20000);
			size_t n = bsb_take(&m, (size_t)k, budget, BSB_SUM, BSB_CHARGE_KEY, 0, out, cap);
			uint64_t sum = 0;
			for (size_t i = 0; i < n; i++) {
				ck_assert(sh.queued[out[i]]);
				sh.queued[out[i]] = false;
				sum += sh.req[out[i]].len;
			}
			ck_assert_uint_le(sum, budget);
			queued -= n;
		} else { /* adjust with a threshold around the queue size */
			uint64_t nmax = gsl_rng_uniform_int(r, 2 * queued + 2);
			if (gsl_rng_uniform_int(r, 4) == 0)
				nmax = bsm_nmax_auto(&m, gsl_rng_uniform_int(r, 100000));
			struct bsm_adjust_result res;
			size_t before_k = bsm_nbuckets(&m);
			adjust(g, &m, nmax, &res);
			if (!g->adjust)
				ck_assert_uint_eq(bsm_nbuckets(&m), before_k);
			else if (res.merged)
				ck_assert_uint_eq(bsm_nbuckets(&m), 1);
			else
				ck_assert_uint_eq(bsm_nbuckets(&m), before_k + res.splits);
			ck_assert_uint_ge(bsm_nsplits(&m), splits);
			ck_assert_uint_ge(bsm_nmerges(&m), merges);
			splits = bsm_nsplits(&m);
			merges = bsm_nmerges(&m);
		}
		ck_assert_uint_eq(bsm_total(&m), queued);
		if (op % 97 == 0) {
			ck_assert(bsm_check(&m));
			for (size_t i = 0; i < sh.n; i++)
				ck_assert_int_eq(bsm_queued(&m, (uint32_t)i), sh.queued[i]);
		}
	}
	ck_assert(bsm_check(&m));
	if (g->adjust)
		ck_assert_uint_gt(bsm_nsplits(&m), 0);
	/* Drain everything in bucket order and end empty. */
	for (size_t k = 0; k < bsm_nbuckets(&m); k++)
		while (bsm_pop(&m, k) >= 0)
			;
	ck_assert_uint_eq(bsm_total(&m), 0);
	ck_assert(bsm_check(&m));
	free(out);
	free(sh.req);
	free(sh.queued);
	free(sh.seq);
	gsl_rng_free(r);
	bsm_release(&m);
}

START_TEST(random_all)
{
	unsigned long seed = 12345;
	struct config c;
	config_init(&c);
	for (size_t gi = 0; grouping_family.members[gi]; gi++) {
		const struct grouping_policy *g =
			(const struct grouping_policy *)grouping_family.members[gi];
		for (size_t oi = 0; order_family.members[oi]; oi++) {
			const struct order_policy *o =
				(const struct order_policy *)order_family.members[oi];
			struct policy_params par;
			policy_params_read(&o->info, &c, &par);
			run(g, o, par.v, seed++, g->adjust ? 6000 : 2000);
		}
	}
	config_release(&c);
}
END_TEST

/* A large queue: 200000 requests, adjusting after every arrival, stays fast and consistent. */
START_TEST(large_queue)
{
	struct bsm_params p = {.l_max = 32768};
	const struct grouping_policy *g = grouping_policy("adaptive");
	struct bsm m;
	ck_assert_int_eq(bsm_init(&m, &p, NULL), 0);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 7);
	const uint32_t n = 200000;
	bsm_reserve(&m, n);
	for (uint32_t i = 0; i < n; i++) {
		struct bsm_req q = {.arrival_ns = i, .len = draw_len(r, 32768)};
		q.total = q.len + 10;
		q.key = q.len; /* sjf */
		ck_assert_int_eq(bsm_insert(&m, i, &q, NULL), 0);
		adjust(g, &m, bsm_nmax_auto(&m, 50000), NULL);
		if (i % 3 == 0) {
			int64_t k = bsm_best_bucket(&m);
			bsm_pop(&m, (size_t)k);
		}
	}
	ck_assert(bsm_check(&m));
	ck_assert_uint_gt(bsm_nbuckets(&m), 1);
	gsl_rng_free(r);
	bsm_release(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bucketserve_random");
	TCase *tc = tcase_create("random");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, random_all);
	tcase_add_test(tc, large_queue);
	suite_add_tcase(s, tc);
	return check_run(s);
}
