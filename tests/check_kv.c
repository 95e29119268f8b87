/*
 * check_kv: the KV pool's block ids with contiguous paged attention and the online
 * defragmenter (sim/kernel_defrag.c): the id sets against a plain array, the free-block
 * queue's order worked by hand, the decode shape (highest id + 1) in a hand-worked run,
 * upstream's defragmenter unit-test scenarios (vllm-gaudi tests/unit_tests/
 * test_defragmentation.py), the 512-swap cap, the swap time, the threshold held over random
 * runs, and the swap cost of the model (models/cost.h, cost_kv_swap_ns).
 */
#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "policies/grouping.h"
#include "policies/loop.h"
#include "sim/config.h"
#include "sim/kernel_int.h" /* white-box: the kernel's state */
#include "tests/check_main.h"
#include "tests/sim_fixture.h"

/* ---- fixed costs ---- */

struct fixed_cost {
	int64_t prefill_ns, decode_ns, swap_block_ns;
};

static int64_t fc_prefill(void *c, int32_t bs, int32_t q, int32_t ctx)
{
	(void)bs;
	(void)q;
	(void)ctx;
	return ((const struct fixed_cost *)c)->prefill_ns;
}

static int64_t fc_decode(void *c, int32_t bs, int32_t nb)
{
	(void)bs;
	(void)nb;
	return ((const struct fixed_cost *)c)->decode_ns;
}

static int64_t fc_unified(void *c, int32_t q, int32_t sh, int32_t un, bool causal)
{
	(void)c;
	(void)q;
	(void)sh;
	(void)un;
	(void)causal;
	return 1000;
}

static int64_t fc_compile(void *c, int phase, const int32_t v[4], bool runtime)
{
	(void)c;
	(void)phase;
	(void)v;
	(void)runtime;
	return 0;
}

static int64_t fc_transfer(void *c, int64_t tokens)
{
	(void)c;
	return 1000 + tokens;
}

/* SWAP_BLOCK_NS per padded block, twice with prefix caching, over the stages. */
static int64_t fc_swap(void *c, int32_t blocks, int32_t pp)
{
	return ((const struct fixed_cost *)c)->swap_block_ns * blocks / pp;
}

static struct sim_costs costs_of(struct fixed_cost *f)
{
	struct sim_costs c = {f, fc_prefill, fc_decode, fc_unified, fc_compile, fc_transfer,
			      NULL, NULL, NULL, NULL, NULL, NULL, fc_swap, NULL, NULL, NULL};
	return c;
}

/* One instance with contiguous PA and BLOCKS blocks of 128 tokens; the defragmenter at
 * THRESHOLD (< 0: off). */
static struct sim_params params(int64_t blocks, int32_t threshold)
{
	struct sim_params p = fixture_params();
	p.num_kv_blocks = blocks;
	p.contiguous_pa = true;
	p.defrag = threshold >= 0;
	p.defrag_threshold = threshold;
	return p;
}


/* Request I's block table as physical ids. */
static void table_is(const struct sim *s, int32_t i, const int32_t *want, int32_t n)
{
	const struct kvids *d = s->pools[0].ids;
	ck_assert_int_eq(s->rids[i].n, n);
	for (int32_t j = 0; j < n; j++) {
		int32_t l = s->rids[i].v[j];
		ck_assert_int_eq(d->fwd ? d->fwd[l] : l, want[j]);
	}
}

/* ---- the id sets ---- */

START_TEST(idset_matches_array)
{
	/* 3 levels (4099 ids); every operation checked against a plain array */
	enum { N = 4099 };
	static bool in[N];
	memset(in, 0, sizeof in);
	struct idset t;
	idset_init(&t, N);
	ck_assert_int_eq(t.levels, 3);
	ck_assert_int_eq(idset_max(&t), -1);
	ck_assert_int_eq(idset_next(&t, 0), -1);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 3);
	for (int op = 0; op < 200000; op++) {
		int64_t x = (int64_t)gsl_rng_uniform_int(r, N);
		/* dense phases and sparse phases */
		bool add = gsl_rng_uniform(r) < (op / 20000 % 2 ? 0.9 : 0.1);
		if (add && !in[x]) {
			idset_insert(&t, x);
			in[x] = true;
		} else if (!add && in[x]) {
			idset_erase(&t, x);
			in[x] = false;
		}
		int64_t y = (int64_t)gsl_rng_uniform_int(r, N);
		int64_t next = -1, max = -1;
		for (int64_t i = y; i < N; i++)
			if (in[i]) {
				next = i;
				break;
			}
		for (int64_t i = N - 1; i >= 0; i--)
			if (in[i]) {
				max = i;
				break;
			}
		ck_assert_int_eq(idset_next(&t, y), next);
		ck_assert_int_eq(idset_max(&t), max);
		ck_assert(idset_has(&t, y) == in[y]);
	}
	gsl_rng_free(r);
	idset_release(&t);
}
END_TEST

/* ---- the free-block queue ---- */

/* A simulation of N idle requests whose blocks the test takes and frees by hand. */
static void idle_sim(struct sim *s, struct sim_params *p, struct req_spec *r, size_t n,
		     struct sim_costs *c)
{
	for (size_t i = 0; i < n; i++)
		r[i] = (struct req_spec){0, 100, 2, 0, -1, 0, 0, {0}};
	sim_init(s, p, r, n, NULL, NULL, c, NULL);
}

START_TEST(free_queue_order_hand_worked)
{
	/* vLLM's free-block queue with prefix caching off: ids 1..8 in order (0 is the null
	 * block), taken from the head, a request's blocks freed to the tail last block first. */
	struct fixed_cost f = {1000, 1000, 0};
	struct sim_costs c = costs_of(&f);
	struct sim_params p = params(8, -1);
	struct req_spec r[3];
	struct sim s;
	idle_sim(&s, &p, r, 3, &c);
	struct lane *in = &s.lanes[0];
	kv_take(&s, in, &s.r[0], 3);
	table_is(&s, 0, (int32_t[]){1, 2, 3}, 3);
	kv_take(&s, in, &s.r[1], 2);
	table_is(&s, 1, (int32_t[]){4, 5}, 2);
	ck_assert_int_eq(kv_max_id(in->kv), 5);
	/* queue: 6 7 8, then r0's 3 2 1 */
	kv_release(&s, in, &s.r[0], 0);
	ck_assert_int_eq(kv_max_id(in->kv), 5);
	kv_take(&s, in, &s.r[2], 4);
	table_is(&s, 2, (int32_t[]){6, 7, 8, 3}, 4);
	ck_assert_int_eq(kv_max_id(in->kv), 8);
	/* queue: 2 1, then r1's 5 4 */
	kv_release(&s, in, &s.r[1], 1);
	kv_take(&s, in, &s.r[0], 3);
	table_is(&s, 0, (int32_t[]){2, 1, 5}, 3);
	ck_assert_int_eq(in->kv->used, 7);
	ck_assert(kv_ids_consistent(in->kv));
	/* r2 (6 7 8 3) goes: 8 is no longer in use, 5 is the highest */
	kv_release(&s, in, &s.r[2], 2);
	ck_assert_int_eq(kv_max_id(in->kv), 5);
	kv_release(&s, in, &s.r[0], 0);
	ck_assert_int_eq(kv_max_id(in->kv), 0);
	ck_assert(kv_ids_consistent(in->kv));
	sim_release(&s);
}
END_TEST

/* ---- the decode shape ---- */

START_TEST(decode_shape_is_highest_id)
{
	/* r0..r2 arrive at 0 (100 prompt tokens: one block each, ids 1, 2, 3; outputs 2, 50,
	 * 50), r3 at 4500 (output 3).  Prefills 1000 each (one per pass), decodes 1000.
	 *   step 1 [0, 3000]      3 prefills
	 *   step 2 [3000, 4000]   decode r0 r1 r2: ids 1..3, shape 4; r0 ends, frees id 1
	 *   step 3 [4000, 5000]   decode r1 r2: ids 2 3, shape 4 (2 blocks in use)
	 *   step 4 [5000, 7000]   prefill r3: id 4 (the queue's head: 1 went to its tail);
	 *                         decode r1 r2, shape 4
	 *   step 5 [7000, 8000]   decode r1 r2 r3: ids 2 3 4, shape 5 (3 in use) */
	for (int jumps = 0; jumps < 2; jumps++) {
		struct fixed_cost f = {1000, 1000, 0};
		struct sim_costs c = costs_of(&f);
		struct sim_params p = params(16, -1);
		p.step_by_step = !jumps;
		struct req_spec r[4] = {{0, 100, 2, 0, -1, 0, 0, {0}},
					{0, 100, 50, 0, -1, 0, 0, {0}},
					{0, 100, 50, 0, -1, 0, 0, {0}},
					{4500, 100, 3, 0, -1, 0, 0, {0}}};
		struct passlog l = {0};
		struct sim_hooks hk = {&l, NULL, log_pass, NULL, NULL};
		struct sim s;
		sim_init(&s, &p, r, 4, NULL, NULL, &c, &hk);
		sim_run(&s);
		sim_finish(&s);
		ck_assert_int_ge(l.n, 8);
		static const struct {
			int phase;
			int32_t bs, blocks;
			int64_t start;
		} want[8] = {{PHASE_PROMPT, 1, 0, 0},	  {PHASE_PROMPT, 1, 0, 1000},
			     {PHASE_PROMPT, 1, 0, 2000},  {PHASE_DECODE, 3, 4, 3000},
			     {PHASE_DECODE, 2, 4, 4000},  {PHASE_PROMPT, 1, 0, 5000},
			     {PHASE_DECODE, 2, 4, 6000},  {PHASE_DECODE, 3, 5, 7000}};
		for (int i = 0; i < 8; i++) {
			ck_assert_int_eq(l.p[i].phase, want[i].phase);
			ck_assert_int_eq(l.p[i].start_ns, want[i].start);
			if (want[i].phase == PHASE_DECODE) {
				ck_assert_int_eq(l.p[i].real[0], want[i].bs);
				ck_assert_int_eq(l.p[i].real[2], want[i].blocks);
			}
		}
		ck_assert_int_eq(s.m.defrag_swaps, 0);
		sim_release(&s);
	}
}
END_TEST

/* ---- the defragmenter ---- */

START_TEST(defrag_hand_worked_step)
{
	/* r0..r2 (output 2) and r3 (output 6) take ids 1..4; after step 2 [4000, 5000] r0..r2
	 * end: id 4 alone in use, 4 - threshold 1 > 1 block in use.  Step 3 swaps 4 into 1 (one
	 * swap, padded to 8: 8 x 100 ns), then decodes at shape 2: [5000, 5800 + 1000].  Then
	 * 1 - 1 <= 1: no more swaps; r3's last 3 decodes end at 9800. */
	for (int jumps = 0; jumps < 2; jumps++) {
		struct fixed_cost f = {1000, 1000, 100};
		struct sim_costs c = costs_of(&f);
		struct sim_params p = params(16, 1);
		p.step_by_step = !jumps;
		struct req_spec r[4] = {{0, 100, 2, 0, -1, 0, 0, {0}},
					{0, 100, 2, 0, -1, 0, 0, {0}},
					{0, 100, 2, 0, -1, 0, 0, {0}},
					{0, 100, 6, 0, -1, 0, 0, {0}}};
		struct passlog l = {0};
		struct sim_hooks hk = {&l, NULL, log_pass, NULL, NULL};
		struct sim s;
		sim_init(&s, &p, r, 4, NULL, NULL, &c, &hk);
		sim_run(&s);
		sim_finish(&s);
		ck_assert_int_eq(l.n, 4 + 5);
		ck_assert_int_eq(l.p[4].phase, PHASE_DECODE);
		ck_assert_int_eq(l.p[4].start_ns, 4000);
		ck_assert_int_eq(l.p[4].real[2], 5);
		ck_assert_int_eq(l.p[5].start_ns, 5800);
		ck_assert_int_eq(l.p[5].end_ns, 6800);
		ck_assert_int_eq(l.p[5].real[2], 2);
		for (int i = 6; i < 9; i++) {
			ck_assert_int_eq(l.p[i].start_ns, 6800 + 1000 * (i - 6));
			ck_assert_int_eq(l.p[i].real[2], 2);
		}
		ck_assert_int_eq(s.m.last_finish_ns, 9800);
		ck_assert_int_eq(s.m.defrag_steps, 1);
		ck_assert_int_eq(s.m.defrag_swaps, 1);
		ck_assert_int_eq(s.m.defrag_padded_swaps, 8);
		ck_assert_int_eq(s.m.defrag_ns, 800);
		/* steps 2..6 read 4 + 1 + 1 + 1 + 1 blocks, spans 5 + 2 + 2 + 2 + 2 */
		ck_assert_int_eq(s.m.kv_read_blocks, 8);
		ck_assert_int_eq(s.m.kv_span_blocks, 13);
		/* the step that swapped took 800 ns more of device time */
		ck_assert_int_eq(s.m.busy_ns, 4000 + 5 * 1000 + 800);
		sim_release(&s);
	}
}
END_TEST

/* Requests 0.. take COUNTS[i] blocks in turn; those with FREE[i] are then freed. */
static void layout(struct sim *s, const int32_t *counts, const bool *freed, int n)
{
	struct lane *in = &s->lanes[0];
	for (int i = 0; i < n; i++)
		kv_take(s, in, &s->r[i], counts[i]);
	for (int i = 0; i < n; i++)
		if (freed[i])
			kv_release(s, in, &s->r[i], i);
}

START_TEST(defrag_upstream_scenarios)
{
	struct fixed_cost f = {1000, 1000, 1};
	struct sim_costs c = costs_of(&f);
	struct req_spec r[4];
	struct sim s;
	/* test_defragment_triggers: blocks 1 2 3 and 100 101 102 in use, threshold 32:
	 * 102 - 32 > 6, the three high ones swap into 4 5 6 (padded to 8). */
	struct sim_params p = params(200, 32);
	idle_sim(&s, &p, r, 3, &c);
	layout(&s, (int32_t[]){3, 96, 3}, (bool[]){false, true, false}, 3);
	ck_assert_int_eq(kv_max_id(&s.pools[0]), 102);
	ck_assert_int_eq(kv_defrag(&s, &s.lanes[0]), 8);
	ck_assert_int_eq(s.lanes[0].step_swaps, 3);
	table_is(&s, 2, (int32_t[]){6, 5, 4}, 3);
	table_is(&s, 0, (int32_t[]){1, 2, 3}, 3);
	ck_assert_int_eq(kv_max_id(&s.pools[0]), 6);
	ck_assert(kv_ids_consistent(&s.pools[0]));
	/* then compact: nothing more */
	ck_assert_int_eq(kv_defrag(&s, &s.lanes[0]), 0);
	ck_assert_int_eq(s.lanes[0].step_swaps, 0);
	sim_release(&s);

	/* test_defragment_early_exit: 2 and 100 in use: (100, 1), then free 3 > used 2 */
	p = params(200, 32);
	idle_sim(&s, &p, r, 4, &c);
	layout(&s, (int32_t[]){1, 1, 97, 1}, (bool[]){true, false, true, false}, 4);
	ck_assert_int_eq(kv_defrag(&s, &s.lanes[0]), 8);
	ck_assert_int_eq(s.lanes[0].step_swaps, 1);
	table_is(&s, 3, (int32_t[]){1}, 1);
	table_is(&s, 1, (int32_t[]){2}, 1);
	sim_release(&s);

	/* test_defragment_below_threshold: 1..19 in use, 19 - 32 <= 19 */
	p = params(200, 32);
	idle_sim(&s, &p, r, 1, &c);
	layout(&s, (int32_t[]){19}, (bool[]){false}, 1);
	ck_assert_int_eq(kv_defrag(&s, &s.lanes[0]), 0);
	ck_assert_int_eq(kv_max_id(&s.pools[0]), 19);
	sim_release(&s);

	/* test_defragment_disabled: 100 alone in use stays there */
	p = params(200, -1);
	idle_sim(&s, &p, r, 2, &c);
	layout(&s, (int32_t[]){99, 1}, (bool[]){true, false}, 2);
	ck_assert_int_eq(kv_defrag(&s, &s.lanes[0]), 0);
	ck_assert_int_eq(kv_max_id(&s.pools[0]), 100);
	sim_release(&s);
}
END_TEST

START_TEST(defrag_swaps_at_most_512)
{
	/* 1..1000 taken then freed, 1001..1600 in use: the first step swaps 1600..1089 into
	 * 1..512 (512 swaps), the second 1088..1001 into 513..600 (88, padded to 128). */
	struct fixed_cost f = {1000, 1000, 1};
	struct sim_costs c = costs_of(&f);
	struct req_spec r[2];
	struct sim s;
	struct sim_params p = params(2000, 32);
	idle_sim(&s, &p, r, 2, &c);
	layout(&s, (int32_t[]){1000, 600}, (bool[]){true, false}, 2);
	ck_assert_int_eq(kv_defrag(&s, &s.lanes[0]), 512);
	ck_assert_int_eq(s.lanes[0].step_swaps, 512);
	ck_assert_int_eq(kv_max_id(&s.pools[0]), 1088);
	ck_assert_int_eq(kv_defrag(&s, &s.lanes[0]), 128);
	ck_assert_int_eq(s.lanes[0].step_swaps, 88);
	ck_assert_int_eq(kv_max_id(&s.pools[0]), 600);
	/* the block table in order: 1001..1088 kept their place in the table, now 600..513 */
	const struct kvids *d = s.pools[0].ids;
	ck_assert_int_eq(d->fwd[s.rids[1].v[0]], 600);
	ck_assert_int_eq(d->fwd[s.rids[1].v[87]], 513);
	ck_assert_int_eq(d->fwd[s.rids[1].v[88]], 512);
	ck_assert_int_eq(d->fwd[s.rids[1].v[599]], 1);
	ck_assert_int_eq(s.m.defrag_swaps, 600);
	ck_assert_int_eq(s.m.defrag_padded_swaps, 640);
	ck_assert_int_eq(kv_defrag(&s, &s.lanes[0]), 0);
	sim_release(&s);
}
END_TEST

/* Over random runs, whenever a step is in flight its pool's highest id in use exceeds the
 * blocks in use by at most the threshold (the defragmenter ran after the step's allocations
 * and pools of at most 512 blocks need no more than 512 swaps), and the decode read the slice
 * up to its highest id. */
START_TEST(defrag_keeps_ids_within_threshold)
{
	static const int32_t thresholds[] = {0, 3, 32};
	for (size_t ti = 0; ti < 3; ti++) {
		for (int prefix = 0; prefix < 2; prefix++) {
			struct fixed_cost f = {20000000, 5000000, 10};
			struct sim_costs c = costs_of(&f);
			struct sim_params p = params(96, thresholds[ti]);
			p.max_num_seqs = 16;
			p.prefix_caching = prefix; /* prefix cache and preemption reuse with ids */
			size_t n = 300;
			struct req_spec *r = calloc(n, sizeof *r);
			gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
			gsl_rng_set(g, 11 + ti);
			double t = 0;
			for (size_t i = 0; i < n; i++) {
				t += gsl_ran_exponential(g, 0.02);
				r[i].arrival_ns = (int64_t)llround(t * 1e9);
				r[i].prompt_tokens = 1 + (int32_t)gsl_rng_uniform_int(g, 1200);
				r[i].output_tokens = 1 + (int32_t)gsl_rng_uniform_int(g, 400);
				r[i].prefix_group = prefix ? (int32_t)(i % 3) : -1;
				r[i].prefix_tokens = prefix ? 300 : 0;
			}
			gsl_rng_free(g);
			struct sim s;
			sim_init(&s, &p, r, n, NULL, NULL, &c, NULL);
			int64_t checked = 0;
			while (sim_step(&s)) {
				const struct lane *in = &s.lanes[0];
				const struct kvpool *kv = in->kv;
				ck_assert(kv_ids_consistent(kv));
				if (!in->busy)
					continue;
				ck_assert_int_le(kv_max_id(kv) - thresholds[ti], kv->used);
				ck_assert_int_le(in->step_swaps, 512);
				checked++;
			}
			sim_finish(&s);
			ck_assert_int_gt(checked, 1000);
			ck_assert_int_gt(s.m.defrag_swaps, 0);
			ck_assert_int_gt(s.m.preemptions, 0);
			ck_assert_int_ge(s.m.kv_span_blocks, s.m.kv_read_blocks);
			sim_release(&s);
			free(r);
		}
	}
}
END_TEST

/* ---- the swap's cost ---- */

START_TEST(swap_cost_formula)
{
	struct config cfg;
	struct bs_err err = {0};
	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "hardware", "gaudi2", CFG_ORIGIN_CMDLINE, NULL, 0, &err), 0);
	ck_assert_int_eq(config_set(&cfg, "model", "llama-3.1-8b", CFG_ORIGIN_CMDLINE, NULL, 0, &err), 0);
	ck_assert_int_eq(config_set(&cfg, "model.precision", "bf16", CFG_ORIGIN_CMDLINE, NULL, 0, &err),
			 0);
	struct cost_model *cm = NULL;
	ck_assert_int_eq(cost_model_new(&cfg, &cm, &err), 0);
	config_release(&cfg);
	/* Llama 3.1 8B bf16: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 131072 bytes
	 * per token; a block of 128 tokens read and written once; gaudi2.json: hbm_tb_s 2.46,
	 * eta_kv 0.745395. */
	double bw = 2.46e12 * 0.745395;
	ck_assert_int_eq(cost_kv_swap_ns(cm, 8, 1), llround(2.0 * 8 * 128 * 131072 / bw * 1e9));
	ck_assert_int_eq(cost_kv_swap_ns(cm, 512, 1), llround(2.0 * 512 * 128 * 131072 / bw * 1e9));
	ck_assert_int_eq(cost_kv_swap_ns(cm, 64, 4), llround(2.0 * 64 * 128 * 131072 / 4 / bw * 1e9));
	ck_assert_int_eq(cost_kv_swap_ns(cm, 0, 1), 0);
	cost_model_free(cm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kv");
	TCase *tc = tcase_create("block_ids");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, idset_matches_array);
	tcase_add_test(tc, free_queue_order_hand_worked);
	tcase_add_test(tc, decode_shape_is_highest_id);
	tcase_add_test(tc, defrag_hand_worked_step);
	tcase_add_test(tc, defrag_upstream_scenarios);
	tcase_add_test(tc, defrag_swaps_at_most_512);
	tcase_add_test(tc, defrag_keeps_ids_within_threshold);
	tcase_add_test(tc, swap_cost_formula);
	suite_add_tcase(s, tc);
	return check_run(s);
}
