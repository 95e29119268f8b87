/*
 * check_kernel: the simulation kernel against queueing theory (M/D/1, M/G/1 by
 * Pollaczek-Khinchine, and exactly against Lindley's recursion on the same arrivals), token
 * and KV-block conservation under preemption, chunked prefill shapes, the run-length jump
 * against step-by-step execution, and determinism.
 */
#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/evq.h"
#include "sim/kernel.h"

/* ---- exact service times ---- */

struct fixed_cost {
	int64_t prefill_ns, prefill_per_token_ns, decode_ns, decode_per_block_ns, compile_ns;
};

static int64_t fc_prefill(void *c, int32_t bs, int32_t q, int32_t ctx)
{
	const struct fixed_cost *f = c;
	(void)ctx;
	return f->prefill_ns + f->prefill_per_token_ns * bs * q;
}

static int64_t fc_decode(void *c, int32_t bs, int32_t nb)
{
	const struct fixed_cost *f = c;
	(void)bs;
	return f->decode_ns + f->decode_per_block_ns * nb;
}

static int64_t fc_compile(void *c, int phase, const int32_t v[4], bool runtime)
{
	const struct fixed_cost *f = c;
	(void)phase;
	(void)v;
	(void)runtime;
	return f->compile_ns;
}

static struct sim_costs costs_of(struct fixed_cost *f)
{
	struct sim_costs c = {f, fc_prefill, fc_decode, fc_compile};
	return c;
}

static struct sim_params base_params(void)
{
	struct sim_params p;
	memset(&p, 0, sizeof p);
	p.max_num_seqs = 256;
	p.max_num_batched_tokens = 2048;
	p.max_num_prefill_seqs = 1;
	p.block_size = 128;
	p.max_model_len = 4096;
	p.num_kv_blocks = 100000;
	p.chunked_prefill = true;
	p.order = WO_FCFS;
	p.stop_ns = INT64_MAX;
	p.slo_ttft_ms = 1000;
	p.slo_tpot_ms = 100;
	return p;
}

/* Poisson arrivals at RATE per second, fixed lengths unless OUT_P > 0 (then output tokens are
 * 1 + Geometric(OUT_P) - 1, i.e. geometric on {1, 2, ...}). */
static struct req_spec *poisson_reqs(size_t n, double rate, int32_t prompt, int32_t out,
				     double out_p, unsigned long seed)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, seed);
	struct req_spec *r = calloc(n, sizeof *r);
	double t = 0;
	for (size_t i = 0; i < n; i++) {
		t += gsl_ran_exponential(rng, 1.0 / rate);
		r[i].arrival_ns = (int64_t)llround(t * 1e9);
		r[i].prompt_tokens = prompt;
		r[i].output_tokens = out_p > 0 ? (int32_t)gsl_ran_geometric(rng, out_p) : out;
		r[i].prefix_group = -1;
	}
	gsl_rng_free(rng);
	return r;
}

static int64_t service_ns(const struct fixed_cost *f, const struct req_spec *q)
{
	return f->prefill_ns + f->prefill_per_token_ns * q->prompt_tokens +
	       (int64_t)(q->output_tokens - 1) * (f->decode_ns + f->decode_per_block_ns);
}

/* Runs one server with max_num_seqs = 1; checks every wait against Lindley's recursion and
 * returns the mean wait in seconds. */
static double single_server_mean_wait(struct req_spec *req, size_t n, struct fixed_cost *f)
{
	struct sim_params p = base_params();
	p.max_num_seqs = 1;
	struct sim_costs c = costs_of(f);
	struct sim s;
	sim_init(&s, &p, req, n, NULL, &c, NULL);
	sim_run(&s);
	sim_finish(&s);
	double sum = 0;
	int64_t free_at = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t start = req[i].arrival_ns > free_at ? req[i].arrival_ns : free_at;
		ck_assert_int_eq(s.r[i].t_sched, start);
		free_at = start + service_ns(f, &req[i]);
		sum += (double)(start - req[i].arrival_ns) / 1e9;
	}
	ck_assert_int_eq(s.finished, n);
	sim_release(&s);
	return sum / (double)n;
}

static void check_md1(double rho, size_t n)
{
	/* Prefill 0.6 ms + 4 decode steps of 0.1 ms: a constant service of 1 ms. */
	struct fixed_cost f = {600000, 0, 99999, 1, 0};
	double S = 1e-3, mu = 1 / S, lambda = rho * mu;
	struct req_spec *req = poisson_reqs(n, lambda, 100, 5, 0, 42);
	double w = single_server_mean_wait(req, n, &f);
	double theory = rho / (2 * mu * (1 - rho));
	ck_assert_msg(fabs(w - theory) / theory < 0.02, "M/D/1 rho %.1f: mean wait %.6g s, theory %.6g s",
		      rho, w, theory);
	free(req);
}

START_TEST(md1_rho_05)
{
	check_md1(0.5, 1000000);
}
END_TEST

START_TEST(md1_rho_08)
{
	check_md1(0.8, 1000000);
}
END_TEST

START_TEST(mg1_pollaczek_khinchine)
{
	/* Geometric output lengths: service = 0.2 ms + (O - 1) x 0.1 ms, O ~ Geometric(0.1) on
	 * {1, 2, ...}: E[O-1] = 9, Var[O-1] = 90. */
	struct fixed_cost f = {200000, 0, 100000, 0, 0};
	double p = 0.1, d = 1e-4, a = 2e-4;
	double es = a + d * (1 - p) / p;
	double varo = (1 - p) / (p * p), eo = (1 - p) / p;
	double es2 = a * a + 2 * a * d * eo + d * d * (varo + eo * eo);
	double rho = 0.6, lambda = rho / es;
	size_t n = 1000000;
	struct req_spec *req = poisson_reqs(n, lambda, 100, 0, p, 7);
	double w = single_server_mean_wait(req, n, &f);
	double theory = lambda * es2 / (2 * (1 - rho));
	ck_assert_msg(fabs(w - theory) / theory < 0.03, "M/G/1: mean wait %.6g s, theory %.6g s", w,
		      theory);
	free(req);
}
END_TEST

/* ---- conservation and determinism under load and preemption ---- */

struct tally {
	int64_t tokens_out, passes;
	uint64_t h;
	int64_t last_end;
	int finished_twice;
	unsigned char *seen;
};

static void on_done(void *ctx, const struct sim *s, int32_t id)
{
	struct tally *t = ctx;
	if (t->seen[id])
		t->finished_twice = 1;
	t->seen[id] = 1;
	t->tokens_out += s->r[id].generated;
	t->h = t->h * 1000003u + (uint64_t)id * 31u + (uint64_t)s->now;
}

static void on_pass(void *ctx, const struct sim *s, const struct pass_rec *p)
{
	struct tally *t = ctx;
	(void)s;
	ck_assert_int_ge(p->start_ns, t->last_end);  /* passes never overlap, time never decreases */
	ck_assert_int_gt(p->end_ns, p->start_ns);
	t->last_end = p->end_ns;
	t->passes++;
	t->h = t->h * 1000003u + (uint64_t)p->end_ns + (uint64_t)p->real[0] * 7u + (uint64_t)p->real[2];
}

static struct req_spec *random_reqs(size_t n, unsigned long seed, double rate)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, seed);
	struct req_spec *r = calloc(n, sizeof *r);
	double t = 0;
	for (size_t i = 0; i < n; i++) {
		t += gsl_ran_exponential(rng, 1.0 / rate);
		r[i].arrival_ns = (int64_t)llround(t * 1e9);
		r[i].prompt_tokens = 1 + (int32_t)gsl_rng_uniform_int(rng, 3000);
		r[i].output_tokens = 1 + (int32_t)gsl_rng_uniform_int(rng, 1000);
		r[i].prefix_group = -1;
	}
	gsl_rng_free(rng);
	return r;
}

static struct tally run_tally(const struct sim_params *p, struct req_spec *req, size_t n,
			      struct fixed_cost *f, int64_t *preemptions)
{
	struct tally t = {0};
	t.seen = calloc(n, 1);
	struct sim_costs c = costs_of(f);
	struct sim_hooks h = {&t, on_done, on_pass};
	struct sim s;
	sim_init(&s, p, req, n, NULL, &c, &h);
	while (sim_step(&s))
		ck_assert(sim_check_invariants(&s));
	sim_finish(&s);
	ck_assert_int_eq(s.kv_used, 0);
	ck_assert_int_eq(s.kv_free, p->num_kv_blocks);
	ck_assert_int_eq(s.finished, n);
	ck_assert_int_eq(s.m.passes[0] + s.m.passes[1], t.passes);
	*preemptions = s.m.preemptions;
	sim_release(&s);
	free(t.seen);
	return t;
}

START_TEST(conservation_with_preemption)
{
	size_t n = 3000;
	struct req_spec *req = random_reqs(n, 3, 40.0);
	struct sim_params p = base_params();
	p.num_kv_blocks = 64; /* 8192 tokens: heavy preemption */
	struct fixed_cost f = {1000000, 2000, 5000000, 20000, 0};
	int64_t pre1, pre2;
	struct tally a = run_tally(&p, req, n, &f, &pre1);
	int64_t expect = 0;
	for (size_t i = 0; i < n; i++)
		expect += req[i].output_tokens;
	ck_assert_int_eq(a.tokens_out, expect);
	ck_assert_int_eq(a.finished_twice, 0);
	ck_assert_int_gt(pre1, 0);
	/* Determinism: the same inputs give the same sequence of events. */
	struct tally b = run_tally(&p, req, n, &f, &pre2);
	ck_assert_int_eq(a.h, b.h);
	ck_assert_int_eq(pre1, pre2);
	free(req);
}
END_TEST

START_TEST(jump_equals_single_steps)
{
	/* A per-block decode cost makes the decode time change at every block boundary.  The
	 * same run is repeated with a stop time every 50 ms: a stop bounds every run of
	 * identical steps, so the second simulation jumps differently; every time must agree. */
	size_t n = 500;
	struct req_spec *req = random_reqs(n, 11, 5.0);
	struct sim_params p = base_params();
	struct fixed_cost f = {1000000, 1000, 3000000, 10000, 0};
	struct sim_costs c = costs_of(&f);
	struct sim s1, s2;
	sim_init(&s1, &p, req, n, NULL, &c, NULL);
	sim_run(&s1);
	sim_finish(&s1);
	struct sim_params p2 = p;
	sim_init(&s2, &p2, req, n, NULL, &c, NULL);
	for (int64_t stop = 50000000; ; stop += 50000000) {
		s2.p.stop_ns = stop;
		while (sim_step(&s2))
			;
		if (s2.finished == n)
			break;
	}
	s2.p.stop_ns = INT64_MAX;
	sim_finish(&s2);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(s1.r[i].t_first, s2.r[i].t_first);
		ck_assert_int_eq(s1.r[i].t_sched, s2.r[i].t_sched);
	}
	ck_assert_int_eq(s1.m.passes[1], s2.m.passes[1]);
	ck_assert_int_eq(s1.m.real_blocks, s2.m.real_blocks);
	ck_assert_int_eq(s1.now, s2.now);
	sim_release(&s1);
	sim_release(&s2);
	free(req);
}
END_TEST

/* ---- hand-worked scenarios ---- */

struct passlog {
	struct pass_rec p[64];
	int n;
};

static void log_pass(void *ctx, const struct sim *s, const struct pass_rec *p)
{
	struct passlog *l = ctx;
	(void)s;
	if (l->n < 64)
		l->p[l->n] = *p;
	l->n++;
}

START_TEST(chunked_prefill_shapes)
{
	/* One 5000-token prompt, budget 2048: chunks 2048, 2048, 904 with context blocks
	 * 0, 16, 32; then 2 decode steps over ceil(5001/128) = 40 and 40 blocks. */
	struct req_spec req[1] = {{0, 5000, 3, 0, -1, 0, 0, {0}}};
	struct sim_params p = base_params();
	p.max_model_len = 8192;
	struct fixed_cost f = {1000, 1, 100, 1, 0};
	struct sim_costs c = costs_of(&f);
	struct passlog l = {0};
	struct sim_hooks h = {&l, NULL, log_pass};
	struct sim s;
	sim_init(&s, &p, req, 1, NULL, &c, &h);
	sim_run(&s);
	sim_finish(&s);
	ck_assert_int_eq(l.n, 5);
	int32_t want[5][3] = {{1, 2048, 0}, {1, 2048, 16}, {1, 904, 32}, {1, 1, 40}, {1, 1, 40}};
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 3; k++)
			ck_assert_int_eq(l.p[i].real[k], want[i][k]);
	/* Times: prefill 1000 + 2048, 1000 + 2048, 1000 + 904; decode 100 + 40 each. */
	ck_assert_int_eq(l.p[2].end_ns, 3048 + 3048 + 1904);
	ck_assert_int_eq(s.r[0].t_first, 3048 + 3048 + 1904);
	ck_assert_int_eq(s.m.last_finish_ns, 3048 + 3048 + 1904 + 2 * 140);
	ck_assert_int_eq(s.m.real_tokens, 5000 + 2);
	sim_release(&s);
}
END_TEST

START_TEST(preemption_hand_worked)
{
	/* Block size 4, 3 blocks.  Two requests (prompt 4, output 5) at t = 0.  Step 1 admits
	 * both (1 block each) and prefills them in two passes.  At the first decode step both
	 * write slot 4 and need a second block: request 0 takes the last one, request 1 (the most
	 * recently admitted) is preempted.  Request 0 decodes its 4 steps alone (2 blocks), then
	 * request 1 recomputes 5 tokens (2 blocks) and decodes 3 more. */
	struct req_spec req[2] = {{0, 4, 5, 0, -1, 0, 0, {0}}, {0, 4, 5, 0, -1, 0, 0, {0}}};
	struct sim_params p = base_params();
	p.block_size = 4;
	p.num_kv_blocks = 3;
	p.max_model_len = 12;
	p.max_num_seqs = 2;
	p.max_num_batched_tokens = 16;
	struct fixed_cost f = {10, 0, 1, 0, 0};
	struct sim_costs c = costs_of(&f);
	struct passlog l = {0};
	struct sim_hooks h = {&l, NULL, log_pass};
	struct sim s;
	sim_init(&s, &p, req, 2, NULL, &c, &h);
	sim_run(&s);
	sim_finish(&s);
	ck_assert_int_eq(s.m.preemptions, 1);
	ck_assert_int_eq(s.r[1].preemptions, 1);
	/* Passes: P(r0) P(r1) | D x4 (r0) | P(r1, 5 tokens) | D x3 (r1). */
	ck_assert_int_eq(l.n, 2 + 4 + 1 + 3);
	ck_assert_int_eq(l.p[6].phase, PHASE_PROMPT);
	ck_assert_int_eq(l.p[6].real[1], 5);
	ck_assert_int_eq(l.p[6].real[2], 0);
	ck_assert_int_eq(l.p[3].real[0], 1);
	ck_assert_int_eq(l.p[3].real[2], 2);
	/* r0: first token at 20, finishes after 4 decodes at 24; r1 first token at 20 too. */
	ck_assert_int_eq(s.r[0].t_first, 20);
	ck_assert_int_eq(s.r[1].t_first, 20);
	ck_assert_int_eq(s.m.last_finish_ns, 24 + 10 + 3);
	ck_assert_int_eq(s.m.output_tokens, 10);
	sim_release(&s);
}
END_TEST

START_TEST(evq_order)
{
	struct evq q;
	evq_init(&q);
	evq_push(&q, 5, 2, 0, 1);
	evq_push(&q, 5, 0, 0, 2);
	evq_push(&q, 3, 1, 0, 3);
	evq_push(&q, 5, 0, 0, 4);
	evq_push(&q, 5, 2, 0, 5);
	int64_t want[] = {3, 2, 4, 1, 5};
	struct event e;
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(evq_pop(&q, &e), 0);
		ck_assert_int_eq(e.arg, want[i]);
	}
	ck_assert_int_eq(evq_pop(&q, &e), -1);
	evq_release(&q);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kernel");
	TCase *tq = tcase_create("queueing");
	tcase_set_timeout(tq, 300);
	tcase_add_test(tq, md1_rho_05);
	tcase_add_test(tq, md1_rho_08);
	tcase_add_test(tq, mg1_pollaczek_khinchine);
	suite_add_tcase(s, tq);
	TCase *tc = tcase_create("engine");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, evq_order);
	tcase_add_test(tc, conservation_with_preemption);
	tcase_add_test(tc, jump_equals_single_steps);
	tcase_add_test(tc, chunked_prefill_shapes);
	tcase_add_test(tc, preemption_hand_worked);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
