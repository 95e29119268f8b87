/*
 * check_pipeline: pipeline parallelism (cluster.pp > 1).  The layer split against vLLM's
 * get_pp_indices, worked by hand; the stage costs against the whole pass (the roofline terms
 * scale with the layers, so the stages plus one overhead add up to the pass); an idle pipeline
 * with one request against latencies worked by hand for each loop (stages, transfers, the
 * overhead once per microbatch, the atomic loop's empty microbatches); a saturated pipeline's
 * microbatch rate against pp x the rate of one unpipelined step; microbatches return in the
 * order they were submitted; the loops are one and the same with pp = 1.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/metrics.h"
#include "models/cost.h"
#include "models/cost_int.h"
#include "policies/grouping.h"
#include "policies/loop.h"
#include "sim/config.h"
#include "sim/kernel_int.h" /* white-box: the lanes' state */
#include "tests/check_main.h"
#include "tests/sim_fixture.h"

/* ---- the layer split ---- */

static void split_is(int layers, int pp, const char *part, const int32_t *want)
{
	struct pp_split ps;
	char msg[160];
	ck_assert_msg(!pp_split_init(&ps, layers, pp, part, msg, sizeof msg), "%s", msg);
	for (int j = 0; j < pp; j++)
		ck_assert_msg(ps.layers[j] == want[j], "%d layers over %d: stage %d has %d, not %d",
			      layers, pp, j, ps.layers[j], want[j]);
}

START_TEST(layer_split_as_vllm)
{
	/* get_pp_indices: layers // pp each, then partitions[-i] += 1 for i in 2 .. r + 1
	 * (r = layers % pp): the remainder goes to the stages before the last, from the back. */
	split_is(32, 2, NULL, (const int32_t[]){16, 16});
	split_is(32, 4, NULL, (const int32_t[]){8, 8, 8, 8});
	split_is(32, 3, NULL, (const int32_t[]){11, 11, 10});  /* 10 each, r = 2: [-2], [-3] */
	split_is(80, 3, NULL, (const int32_t[]){27, 27, 26});
	split_is(30, 4, NULL, (const int32_t[]){7, 8, 8, 7});  /* 7 each, r = 2: [-2], [-3] */
	split_is(7, 4, NULL, (const int32_t[]){2, 2, 2, 1});   /* 1 each, r = 3 */
	split_is(33, 2, NULL, (const int32_t[]){17, 16});
	split_is(16, 4, "4,4,5,3", (const int32_t[]){4, 4, 5, 3});
	struct pp_split ps;
	char msg[160];
	ck_assert_int_eq(pp_split_init(&ps, 16, 4, "4,4,5", msg, sizeof msg), -1); /* 3 counts */
	ck_assert_int_eq(pp_split_init(&ps, 16, 4, "4,4,5,4", msg, sizeof msg), -1); /* sum 17 */
	ck_assert_int_eq(pp_split_init(&ps, 16, 2, "8,x", msg, sizeof msg), -1);
	ck_assert_int_eq(pp_split_init(&ps, 16, 2, "16,0", msg, sizeof msg), -1);
	ck_assert_int_eq(pp_split_init(&ps, 4, 5, NULL, msg, sizeof msg), -1); /* > layers */
}
END_TEST

static struct cost_model *model_with(const char *const *kv, const char *partition)
{
	struct config cfg;
	struct bs_err err = {0};
	config_init(&cfg);
	for (size_t i = 0; kv[i]; i++)
		ck_assert_msg(!config_set_arg(&cfg, kv[i], &err), "%s: %s", kv[i], err.msg);
	if (partition) {
		char arg[96];
		snprintf(arg, sizeof arg, "VLLM_PP_LAYER_PARTITION=%s", partition);
		ck_assert(!config_set_env_arg(&cfg, arg, CFG_ORIGIN_CMDLINE, &err));
	}
	struct cost_model *cm = NULL;
	int rc = cost_model_new(&cfg, &cm, &err);
	config_release(&cfg);
	return rc ? NULL : cm;
}

START_TEST(stages_add_up_to_the_pass)
{
	/* tp = 1: every roofline term but the LM head is proportional to the layers, the head runs
	 * on the last stage, and t_pass is charged once: the stages plus the overhead are the
	 * whole pass (up to the rounding of each term to 1 ns). */
	static const char *const kv[] = {"model=llama-3.1-8b", "hardware=gaudi3", "cluster.pp=3",
					 NULL};
	struct cost_model *cm = model_with(kv, NULL);
	ck_assert_ptr_nonnull(cm);
	ck_assert_int_eq(cost_stage_layers(cm, 0) + cost_stage_layers(cm, 1) +
				 cost_stage_layers(cm, 2), 32);
	ck_assert_int_eq(cost_stage_layers(cm, 2), 10);
	const int32_t shapes[][4] = {{1, 512, 0, 0}, {4, 1024, 8, 0}, {64, 1, 512, 0},
				     {1, 1, 1, 0}};
	const int phases[] = {0, 0, 1, 1};
	for (size_t i = 0; i < 4; i++) {
		int64_t whole = phases[i] == 0 ? cost_prefill_ns(cm, shapes[i][0], shapes[i][1],
								 shapes[i][2])
						: cost_decode_ns(cm, shapes[i][0], shapes[i][2]);
		int64_t sum = cost_pass_overhead_ns(cm);
		for (int j = 0; j < 3; j++)
			sum += cost_stage_ns(cm, phases[i], shapes[i], j);
		ck_assert_msg(llabs(sum - whole) <= 3, "shape %zu: stages %lld, pass %lld", i,
			      (long long)sum, (long long)whole);
		/* stages 0 and 1 hold 11 layers, no head: the same time */
		ck_assert_int_eq(cost_stage_ns(cm, phases[i], shapes[i], 0),
				 cost_stage_ns(cm, phases[i], shapes[i], 1));
	}
	/* Activations: hidden states and residual, 4096 x 2 bytes each per token, over gaudi3's
	 * 75 GB/s scale-out link after its KV-transfer latency. */
	int64_t a1 = cost_activation_ns(cm, 1), a1001 = cost_activation_ns(cm, 1001);
	ck_assert_int_le(llabs(a1001 - a1 - 1000LL * 2 * 4096 * 2 * 1000000000LL / 75000000000LL), 1);
	ck_assert_int_eq(cost_activation_ns(cm, 0), 0);
	cost_model_free(cm);
	/* An uneven split from VLLM_PP_LAYER_PARTITION; a wrong one is an input error. */
	cm = model_with(kv, "8,8,16");
	ck_assert_ptr_nonnull(cm);
	ck_assert_int_eq(cost_stage_layers(cm, 2), 16);
	cost_model_free(cm);
	ck_assert_ptr_null(model_with(kv, "8,8"));
}
END_TEST

/* ---- the kernel with stage costs worked by hand ---- */

/* Stage j of a prompt pass: PROMPT[j]; of a decode pass: DECODE[j]; 50 ns overhead per pass;
 * 10 ns + 1 ns per token between stages. */
struct stage_cost {
	int64_t prompt[4], decode[4];
};

static int64_t sc_whole(void *c, int phase)
{
	const struct stage_cost *f = c;
	int64_t t = 50;
	for (int j = 0; j < 4; j++)
		t += phase == PHASE_PROMPT ? f->prompt[j] : f->decode[j];
	return t;
}

static int64_t sc_prefill(void *c, int32_t bs, int32_t q, int32_t ctx)
{
	(void)bs, (void)q, (void)ctx;
	return sc_whole(c, PHASE_PROMPT);
}

static int64_t sc_decode(void *c, int32_t bs, int32_t nb)
{
	(void)bs, (void)nb;
	return sc_whole(c, PHASE_DECODE);
}

static int64_t sc_unified(void *c, int32_t q, int32_t sh, int32_t un, bool causal)
{
	(void)c, (void)q, (void)sh, (void)un, (void)causal;
	BUG("no unified pass in these tests");
}

static int64_t sc_compile(void *c, int phase, const int32_t v[4], bool runtime)
{
	(void)c, (void)phase, (void)v, (void)runtime;
	return 0;
}

static int64_t sc_transfer(void *c, int64_t tokens)
{
	(void)c, (void)tokens;
	BUG("no KV transfer in these tests");
}

static int64_t sc_stage(void *c, int phase, const int32_t v[4], int stage)
{
	const struct stage_cost *f = c;
	(void)v;
	return phase == PHASE_PROMPT ? f->prompt[stage] : f->decode[stage];
}

static int64_t sc_overhead(void *c)
{
	(void)c;
	return 50;
}

static int64_t sc_activation(void *c, int64_t tokens)
{
	(void)c;
	return 10 + tokens;
}

static struct sim_costs stage_costs(struct stage_cost *f)
{
	struct sim_costs c = {f, sc_prefill, sc_decode, sc_unified, sc_compile, sc_transfer,
			      sc_stage, sc_overhead, sc_activation, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	return c;
}

static struct sim_params base_params(int32_t pp, const char *loop, bool jumps)
{
	struct sim_params p = fixture_params();
	p.max_num_seqs = 1024;
	p.pp = pp;
	p.loop = loop_policy(loop);
	p.step_by_step = !jumps;
	return p;
}

static void run_all(struct sim *s)
{
	sim_run(s);
	sim_finish(s);
}

START_TEST(idle_pipeline_hand_worked)
{
	/* One request of 8 prompt and 3 output tokens, alone, three stages:
	 *   prefill: 50 overhead + 1000 + (10 + 8 tokens) + 1200 + 18 + 1500       = 3786: TTFT
	 *   decode:  50 + 200 + (10 + 1 token) + 250 + 11 + 300 = 822, twice        -> 5430
	 * the same for every loop (one microbatch in flight), with or without decode jumps.  The
	 * atomic loop fills the two other slots of its queue with empty microbatches each time a
	 * microbatch returns and the next is submitted: 2 x 2 = 4.
	 * Stage 0 computes 1000 + 2 x 200 = 1400 ns of the 5430 ns the request runs: the rest
	 * is its bubble. */
	struct req_spec req[1] = {{0, 8, 3, 0, -1, 0, 0, {0}}};
	struct stage_cost f = {{1000, 1200, 1500, 0}, {200, 250, 300, 0}};
	struct sim_costs c = stage_costs(&f);
	const char *loops[] = {"async", "atomic", "virtual"};
	for (int l = 0; l < 3; l++)
		for (int jumps = 0; jumps < 2; jumps++) {
			struct sim_params p = base_params(3, loops[l], jumps);
			struct sim s;
			sim_init(&s, &p, req, 1, NULL, NULL, &c, NULL);
			run_all(&s);
			ck_assert_int_eq(s.r[0].t_first, 3786);
			ck_assert_int_eq(s.m.last_finish_ns, 5430);
			ck_assert_int_eq(s.m.empty_microbatches, l == 1 ? 4 : 0);
			ck_assert_int_eq(s.m.pp_stages, 3);
			ck_assert_int_eq(s.m.stage_busy_ns[0], 1400);
			ck_assert_int_eq(s.m.stage_busy_ns[1], 1700);
			ck_assert_int_eq(s.m.stage_busy_ns[2], 2100);
			ck_assert_int_eq(s.m.stage_active_ns, 5430);
			sim_release(&s);
		}
}
END_TEST

START_TEST(two_requests_hand_worked)
{
	/* Two stages, 1000 ns each for a prompt, 50 ns overhead, 18 ns transfer for 8 tokens.  A
	 * arrives at 0 and B at 10, one output token each.  A: 50 + 1000 + 18 + 1000 = 2068.
	 * Async and virtual: B is scheduled at 10, ready at 60, enters stage 0 when A leaves it
	 * (1050), stage 1 at max(2068, 2068) = 2068: done at 3068.  Atomic: B waits for A's
	 * microbatch to return (2068): 2068 + 2068 = 4136. */
	struct req_spec req[2] = {{0, 8, 1, 0, -1, 0, 0, {0}}, {10, 8, 1, 0, -1, 0, 0, {0}}};
	struct stage_cost f = {{1000, 1000, 0, 0}, {100, 100, 0, 0}};
	struct sim_costs c = stage_costs(&f);
	const char *loops[] = {"async", "virtual", "atomic"};
	const int64_t b_done[] = {3068, 3068, 4136};
	for (int l = 0; l < 3; l++) {
		struct sim_params p = base_params(2, loops[l], true);
		struct sim s;
		sim_init(&s, &p, req, 2, NULL, NULL, &c, NULL);
		run_all(&s);
		ck_assert_int_eq(s.r[0].t_first, 2068);
		ck_assert_msg(s.r[1].t_first == b_done[l], "%s: B done at %lld", loops[l],
			      (long long)s.r[1].t_first);
		sim_release(&s);
	}
}
END_TEST

START_TEST(atomic_lost_slot_hand_worked)
{
	/* Two stages: prompt 1000 ns, decode 100 ns on each; 50 ns overhead per pass; 10 ns + 1
	 * per token between stages.  A (0 s, 8 tokens, 3 out): prefill 50 + 1000 + 18 + 1000 =
	 * 2068, decode 50 + 100 + 11 + 100 = 261 -> 2329.  B (2100, 8 tokens, 1 out).
	 *   async: B starts at once in the idle slot: stage 0 when A's decode leaves it (2118 +
	 *     100 = 2218) to 3218, stage 1 from 3236 to 4236 = B's token.  A's second decode,
	 *     ready at 2379, waits for stage 0 (3218) and stage 1 (4236): done at 4336.
	 *   atomic: B waits for A's microbatch to return (2329); the idle slot takes it first:
	 *     stage 0 2379-3379, stage 1 3397-4397; A's decode: stage 0 3379-3479, stage 1
	 *     4397-4497.
	 *   atomic without empty microbatches: the second slot stayed empty when A's prefill
	 *     returned (2068), so it is lost: at 2329 B's prefill and A's decode share A's
	 *     microbatch: 2 x 50 + (1000 + 100) + (10 + 9 tokens) + 1100 = 2319 -> 4648. */
	struct req_spec req[2] = {{0, 8, 3, 0, -1, 0, 0, {0}}, {2100, 8, 1, 0, -1, 0, 0, {0}}};
	struct stage_cost f = {{1000, 1000, 0, 0}, {100, 100, 0, 0}};
	struct sim_costs c = stage_costs(&f);
	struct {
		const char *loop;
		bool lose;
		int64_t b_first, a_done, lost;
	} cases[] = {{"async", false, 4236, 4336, 0}, {"atomic", false, 4397, 4497, 0},
		     {"atomic", true, 4648, 4648, 1}};
	for (int i = 0; i < 3; i++)
		for (int jumps = 0; jumps < 2; jumps++) {
			struct sim_params p = base_params(2, cases[i].loop, jumps);
			p.pp_lose_empty_slots = cases[i].lose;
			struct sim s;
			sim_init(&s, &p, req, 2, NULL, NULL, &c, NULL);
			run_all(&s);
			ck_assert_int_eq(s.r[0].t_first, 2068);
			ck_assert_msg(s.r[1].t_first == cases[i].b_first, "case %d: B's token at %lld", i,
				      (long long)s.r[1].t_first);
			ck_assert_int_eq(s.m.last_finish_ns, cases[i].a_done);
			ck_assert_int_eq(s.m.lost_slots, cases[i].lost);
			sim_release(&s);
		}
}
END_TEST

START_TEST(prefill_chunks_in_several_microbatches)
{
	/* Two stages of 1000 ns for any prompt pass, 50 ns overhead, 10 + tokens ns between the
	 * stages; one request of 3000 prompt tokens (1 output) in chunks of 1000.  A step is
	 * 50 + 1000 + 1010 + 1000 = 3060.  One microbatch at a time: 3 x 3060 = 9180.
	 * With cluster.async_prefill_chunks: chunk 1 in slot 0 (stage 0 50-1050, stage 1
	 * 2060-3060); the idle slot 1 takes chunk 2 at once (stage 0 1050-2050, stage 1
	 * 3060-4060); slot 0, back at 3060, takes chunk 3 (stage 0 3110-4110, stage 1
	 * 5120-6120): the first token at 6120. */
	struct req_spec req[1] = {{0, 3000, 1, 0, -1, 0, 0, {0}}};
	struct stage_cost f = {{1000, 1000, 0, 0}, {100, 100, 0, 0}};
	struct sim_costs c = stage_costs(&f);
	struct {
		const char *loop;
		bool chunks;
		int64_t ttft;
	} cases[] = {{"async", false, 9180}, {"atomic", false, 9180}, {"virtual", false, 9180},
		     {"async", true, 6120}};
	for (int i = 0; i < 4; i++) {
		struct sim_params p = base_params(2, cases[i].loop, true);
		p.max_num_batched_tokens = 1000;
		p.pp_prefill_chunks = cases[i].chunks;
		struct sim s;
		sim_init(&s, &p, req, 1, NULL, NULL, &c, NULL);
		run_all(&s);
		ck_assert_msg(s.r[0].t_first == cases[i].ttft, "case %d: TTFT %lld", i,
			      (long long)s.r[0].t_first);
		ck_assert_int_eq(s.m.passes[PHASE_PROMPT], 3);
		sim_release(&s);
	}
}
END_TEST

/* N requests arriving at 0 with PROMPT and OUT tokens. */
static struct req_spec *burst(size_t n, int32_t prompt, int32_t out)
{
	struct req_spec *r = calloc(n, sizeof *r);
	for (size_t i = 0; i < n; i++) {
		r[i].prompt_tokens = prompt;
		r[i].output_tokens = out;
		r[i].prefix_group = -1;
	}
	return r;
}

START_TEST(saturated_rate)
{
	/* Every pass takes D = 1000 ns on each stage, no overhead apart and no transfer (the
	 * even split of a pass of pp x D), so one step of the whole model takes pp x D.  A burst
	 * large enough to fill pp microbatches: microbatches complete at pp x 1 / (pp x D),
	 * less the measured bubbles, so steps x D = (1 - bubble) x wall on every stage. */
	size_t n = 1000;
	struct req_spec *req = burst(n, 8, 64);
	const char *loops[] = {"async", "atomic", "virtual"};
	for (int32_t pp = 2; pp <= 4; pp += 2)
		for (int l = 0; l < 3; l++) {
			struct stage_cost f = {{1000, 1000, 1000, 1000}, {1000, 1000, 1000, 1000}};
			struct sim_costs c = {&f, sc_prefill, sc_decode, sc_unified, sc_compile,
					      sc_transfer, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
			/* sc_whole adds 50: make the even split exactly D per stage */
			f.prompt[0] = f.decode[0] = 1000 * pp - 50 - 1000 * (4 - 1);
			struct sim_params p = base_params(pp, loops[l], true);
			p.max_num_batched_tokens = 256 * 8; /* 256 sequences a microbatch */
			/* a full microbatch per lane, never a prompt and a decode pass in one step */
			p.max_num_seqs = l == 2 ? 256 : pp * 256;
			p.max_num_prefill_seqs = 256;       /* one pass a step */
			struct sim s;
			sim_init(&s, &p, req, n, NULL, NULL, &c, NULL);
			run_all(&s);
			double wall = (double)s.m.end_ns, D = 1000;
			double rate = (double)s.m.steps / wall; /* microbatches per ns */
			for (int j = 0; j < pp; j++) {
				double bubble = ((double)s.m.stage_active_ns -
						 (double)s.m.stage_busy_ns[j]) / wall;
				ck_assert_msg(fabs(rate * D - (1 - bubble)) < 1e-9,
					      "pp %d %s stage %d: rate x D %.6f, 1 - bubble %.6f", pp,
					      loops[l], j, rate * D, 1 - bubble);
			}
			/* and that is close to pp times the unpipelined rate 1 / (pp x D) */
			ck_assert_msg(rate * D > 0.9, "pp %d %s: %.4f of pp x the unpipelined rate", pp,
				      loops[l], rate * D);
			sim_release(&s);
		}
	free(req);
}
END_TEST

START_TEST(microbatches_return_in_submission_order)
{
	/* Under a varied load, step by step: every microbatch an instance submits returns after
	 * the ones submitted before it (the atomic loop's executor returns the oldest). */
	size_t n = 300;
	struct req_spec *req = burst(n, 0, 0);
	for (size_t i = 0; i < n; i++) {
		req[i].arrival_ns = (int64_t)i * 37000;
		req[i].prompt_tokens = 1 + (int32_t)((i * 7919) % 1500);
		req[i].output_tokens = 1 + (int32_t)((i * 104729) % 40);
	}
	struct stage_cost f = {{30000, 45000, 20000, 0}, {2000, 3000, 2500, 0}};
	struct sim_costs c = stage_costs(&f);
	const char *loops[] = {"atomic", "async", "virtual"};
	for (int l = 0; l < 3; l++) {
		struct sim_params p = base_params(3, loops[l], false);
		p.max_num_batched_tokens = 512;
		p.num_kv_blocks = 300;
		struct sim s;
		sim_init(&s, &p, req, n, NULL, NULL, &c, NULL);
		int fifo[8], head = 0, tail = 0;
		bool was[3] = {false, false, false};
		int64_t returned = 0;
		while (sim_step(&s)) {
			for (int i = 0; i < 3; i++) {
				bool b = s.lanes[i].busy;
				if (b && !was[i]) {
					fifo[tail++ % 8] = i;
				} else if (!b && was[i]) {
					ck_assert_int_lt(head, tail);
					ck_assert_msg(fifo[head++ % 8] == i,
						      "%s: lane %d returned before an older microbatch",
						      loops[l], i);
					returned++;
				}
				was[i] = b;
			}
		}
		sim_finish(&s);
		ck_assert_int_eq(returned, s.m.steps);
		ck_assert_uint_eq(s.finished, n);
		sim_release(&s);
	}
	free(req);
}
END_TEST

static int64_t tokens_out;
static void count_done(void *ctx, const struct sim *s, int32_t id)
{
	(void)ctx;
	tokens_out += sim_req(s, id)->generated;
}

START_TEST(requests_and_blocks_conserved)
{
	/* Every loop and option under KV pressure (preemption across lanes sharing a pool): every
	 * request finishes once with all its tokens, and every block returns (sim_finish checks
	 * the pools; sim_check_invariants after every event). */
	size_t n = 600;
	struct req_spec *req = burst(n, 0, 0);
	int64_t want = 0;
	for (size_t i = 0; i < n; i++) {
		req[i].arrival_ns = (int64_t)i * 2000000;
		req[i].prompt_tokens = 1 + (int32_t)((i * 7919) % 2500);
		req[i].output_tokens = 1 + (int32_t)((i * 104729) % 400);
		want += req[i].output_tokens;
	}
	struct stage_cost f = {{300000, 400000, 350000, 0}, {20000, 30000, 25000, 0}};
	struct sim_costs c = stage_costs(&f);
	struct {
		const char *loop;
		bool lose, chunks;
	} cases[] = {{"async", false, false}, {"async", false, true}, {"atomic", false, false},
		     {"atomic", true, false}, {"virtual", false, false}};
	for (int i = 0; i < 5; i++) {
		struct sim_params p = base_params(3, cases[i].loop, true);
		p.num_kv_blocks = 150;
		p.max_num_batched_tokens = 512;
		p.pp_lose_empty_slots = cases[i].lose;
		p.pp_prefill_chunks = cases[i].chunks;
		struct sim_hooks h = {NULL, count_done, NULL, NULL, NULL};
		tokens_out = 0;
		struct sim s;
		sim_init(&s, &p, req, n, NULL, NULL, &c, &h);
		while (sim_step(&s))
			ck_assert(sim_check_invariants(&s));
		sim_finish(&s);
		ck_assert_uint_eq(s.finished, n);
		ck_assert_int_eq(tokens_out, want);
		ck_assert_int_gt(s.m.preemptions, 0);
		for (int k = 0; k < s.n_pools; k++)
			ck_assert_int_eq(s.pools[k].used, 0);
		sim_release(&s);
	}
	free(req);
}
END_TEST

START_TEST(one_stage_loops_identical)
{
	/* With pp = 1 there is no pipeline: every loop gives the same requests and metrics. */
	size_t n = 400;
	struct req_spec *req = burst(n, 0, 0);
	for (size_t i = 0; i < n; i++) {
		req[i].arrival_ns = (int64_t)i * 900000;
		req[i].prompt_tokens = 1 + (int32_t)((i * 7919) % 3000);
		req[i].output_tokens = 1 + (int32_t)((i * 104729) % 300);
	}
	struct stage_cost f = {{300000, 400000, 0, 0}, {20000, 30000, 0, 0}};
	struct sim_costs c = stage_costs(&f);
	const char *loops[] = {"async", "atomic", "virtual"};
	char *first = NULL;
	int64_t *t_first = calloc(n, sizeof *t_first);
	for (int l = 0; l < 3; l++) {
		struct sim_params p = base_params(1, loops[l], true);
		p.num_kv_blocks = 200; /* preemption */
		struct sim s;
		sim_init(&s, &p, req, n, NULL, NULL, &c, NULL);
		run_all(&s);
		cJSON *m = metrics_to_json(&s.m);
		char *txt = cJSON_PrintUnformatted(m);
		cJSON_Delete(m);
		ck_assert_int_gt(s.m.preemptions, 0);
		if (!first) {
			first = txt;
			for (size_t i = 0; i < n; i++)
				t_first[i] = s.r[i].t_first;
		} else {
			ck_assert_str_eq(txt, first);
			for (size_t i = 0; i < n; i++)
				ck_assert_int_eq(s.r[i].t_first, t_first[i]);
			free(txt);
		}
		sim_release(&s);
	}
	free(first);
	free(t_first);
	free(req);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("pipeline");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, layer_split_as_vllm);
	tcase_add_test(tc, stages_add_up_to_the_pass);
	tcase_add_test(tc, idle_pipeline_hand_worked);
	tcase_add_test(tc, two_requests_hand_worked);
	tcase_add_test(tc, atomic_lost_slot_hand_worked);
	tcase_add_test(tc, prefill_chunks_in_several_microbatches);
	tcase_add_test(tc, saturated_rate);
	tcase_add_test(tc, microbatches_return_in_submission_order);
	tcase_add_test(tc, requests_and_blocks_conserved);
	tcase_add_test(tc, one_stage_loops_identical);
	suite_add_tcase(s, tc);
	return check_run(s);
}
