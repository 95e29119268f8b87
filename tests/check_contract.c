/*
 * check_contract: the policies' contract with the decode-run fast path (policies/batching.h,
 * sim/kernel_contract.c).  A batch controller that reads an input of its view it does not
 * declare, and an order that declares FIFO but is not, are stopped by the contract check
 * (a BUG: SIGABRT) on a hand-worked queue; declared correctly, the same controller gives the
 * step-by-step reference's results with the fast path, worked out by hand.  A controller's
 * declared state is told of every step, a run's included; the queue_budget controller's
 * rule on hand-worked views.
 *
 * The check is on by default only in builds without NDEBUG; these cases switch it on
 * (sim_check_contract), so they run in every build.
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "policies/batching.h"
#include "policies/order.h"
#include "sim/kernel_int.h" /* white-box: the kernel's state and its contract switch */
#include "tests/check_main.h"
#include "tests/sim_fixture.h"

/* ---- 1 ms passes: a prefill pass, a decode step ---- */

static int64_t ms_prefill(void *c, int32_t bs, int32_t q, int32_t ctx)
{
	(void)c, (void)bs, (void)q, (void)ctx;
	return 1000000;
}

static int64_t ms_decode(void *c, int32_t bs, int32_t nb)
{
	(void)c, (void)bs, (void)nb;
	return 1000000;
}

static int64_t ms_unified(void *c, int32_t q, int32_t sh, int32_t un, bool causal)
{
	(void)c, (void)q, (void)sh, (void)un, (void)causal;
	return 1000000;
}

static int64_t no_compile(void *c, int phase, const int32_t v[4], bool runtime)
{
	(void)c, (void)phase, (void)v, (void)runtime;
	return 0;
}

static int64_t no_transfer(void *c, int64_t tokens)
{
	(void)c, (void)tokens;
	return 0;
}

static struct sim_costs ms_costs(void)
{
	struct sim_costs c;
	memset(&c, 0, sizeof c);
	c.prefill = ms_prefill;
	c.decode = ms_decode;
	c.unified = ms_unified;
	c.compile = no_compile;
	c.transfer = no_transfer;
	return c;
}

/* Request 0 at t = 0 (100 prompt tokens, 1000 output: it decodes until t = 1000 ms), then
 * requests 1, 2, 3 at 10, 20 and 30 ms (100 prompt tokens, 10 output).  Blocks of 2048 tokens:
 * request 0 never crosses a block boundary, so nothing but arrivals and its completion ends
 * its decode runs. */
static struct req_spec queue[4];

static void queue_init(void)
{
	memset(queue, 0, sizeof queue);
	for (int i = 0; i < 4; i++) {
		queue[i].arrival_ns = (int64_t)i * 10000000;
		queue[i].prompt_tokens = 100;
		queue[i].output_tokens = i ? 10 : 1000;
		queue[i].prefix_group = -1;
	}
}

static struct sim_params queue_params(const struct batch_policy *ctl)
{
	struct sim_params p = fixture_params();
	p.block_size = 2048;
	p.num_kv_blocks = 64;
	p.batching = ctl;
	return p;
}

/* A controller that waits for company: on a busy instance it takes requests only once three
 * wait.  It reads the waiting count; WAITS_UNDECLARED declares only the running count (idle),
 * the bug the contract check is for; WAITS_DECLARED declares both. */
static bool wait_for_three(struct batch_view *v, struct batch_cand *c)
{
	(void)c;
	return (v->idle && v->n == 0) || v->waiting >= 3;
}

static const struct batch_policy waits_undeclared = {
	.info = {"waits_undeclared", "test: reads waiting, declares only running", NULL},
	.reads = BV_RUNNING,
	.take = wait_for_three,
};

static const struct batch_policy waits_declared = {
	.info = {"waits_declared", "test: reads and declares waiting and running", NULL},
	.reads = BV_RUNNING | BV_WAITING,
	.take = wait_for_three,
};

/* Runs the queue with controller CTL (the fast path, or the step-by-step reference), the
 * contract check on or off; the scheduling times of requests 1-3 in T. */
static void run_queue(const struct batch_policy *ctl, bool step_by_step, bool check,
		      int64_t t[3])
{
	queue_init();
	struct sim_params p = queue_params(ctl);
	p.step_by_step = step_by_step;
	struct sim_costs c = ms_costs();
	struct sim s;
	sim_init(&s, &p, queue, 4, NULL, NULL, &c, NULL);
	sim_check_contract(&s, check);
	sim_run(&s);
	sim_finish(&s);
	ck_assert_uint_eq(s.finished, 4);
	for (int i = 0; i < 3; i++)
		t[i] = s.r[i + 1].t_sched;
	sim_release(&s);
}

START_TEST(declared_waiting_matches_reference)
{
	/* Request 0's prefill runs 0-1 ms, its decode steps start at 1, 2, ... ms.  Requests 1
	 * and 2 find fewer than three waiting and wait; at 30 ms the step sees three and takes
	 * them all: their prefills run one per pass (max_num_prefill_seqs 1) at 30, 31 and
	 * 32 ms.  The fast path ends request 0's runs at every arrival the controller reads. */
	int64_t fast[3], ref[3];
	run_queue(&waits_declared, true, true, ref);
	run_queue(&waits_declared, false, true, fast);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(ref[i], 30000000 + (int64_t)i * 1000000);
		ck_assert_int_eq(fast[i], ref[i]);
	}
}
END_TEST

START_TEST(undeclared_waiting_is_wrong_unchecked)
{
	/* Without the declaration the fast path keeps request 0's run from 10 ms (request 1 at
	 * the head, refused) to its completion at 1000 ms, through the arrivals at 20 and 30 ms:
	 * the three requests start 970 ms late.  The reference is right (30 ms). */
	int64_t fast[3], ref[3];
	run_queue(&waits_undeclared, true, false, ref);
	run_queue(&waits_undeclared, false, false, fast);
	ck_assert_int_eq(ref[0], 30000000);
	ck_assert_int_eq(fast[0], 1000000000);
}
END_TEST

START_TEST(undeclared_waiting_aborts)
{
	/* The same run with the contract checked: at the skipped step at 30 ms the controller
	 * takes request 1, which it refused at the run's first step: BUG (SIGABRT). */
	int64_t fast[3];
	run_queue(&waits_undeclared, false, true, fast);
}
END_TEST

/* An order whose fifo flag is wrong: shortest prompt first, declared FIFO. */
static struct order_policy sjf_claims_fifo;

/* Request 0 (100 prompt, 1000 output) decodes from 1 ms on, holding 1 of 10 blocks of 128
 * tokens (its decode crosses a block boundary at its 29th token, t = 29 ms).  Request 1
 * (1200-token prompt: 10 blocks) arrives at 10 ms and does not fit in the 9 free blocks;
 * request 2 (50 tokens) arrives at 20 ms.  Shortest first, request 2 runs at 20 ms. */
static int64_t run_fifo_lie(bool step_by_step, bool check)
{
	sjf_claims_fifo = *order_policy("sjf");
	sjf_claims_fifo.fifo = true;
	struct req_spec req[3];
	memset(req, 0, sizeof req);
	const int32_t prompt[3] = {100, 1200, 50}, out[3] = {1000, 10, 10};
	for (int i = 0; i < 3; i++) {
		req[i].arrival_ns = (int64_t)i * 10000000;
		req[i].prompt_tokens = prompt[i];
		req[i].output_tokens = out[i];
		req[i].prefix_group = -1;
	}
	struct sim_params p = fixture_params();
	p.num_kv_blocks = 10;
	p.order = &sjf_claims_fifo;
	p.step_by_step = step_by_step;
	struct sim_costs c = ms_costs();
	struct sim s;
	sim_init(&s, &p, req, 3, NULL, NULL, &c, NULL);
	sim_check_contract(&s, check);
	sim_run(&s);
	sim_finish(&s);
	int64_t t = s.r[2].t_sched;
	sim_release(&s);
	return t;
}

START_TEST(wrong_fifo_is_wrong_unchecked)
{
	/* The reference admits request 2 at 20 ms; the fast path, trusting fifo, keeps request
	 * 0's run to its block boundary (its decode step at 29 ms) and admits it there. */
	ck_assert_int_eq(run_fifo_lie(true, false), 20000000);
	ck_assert_int_eq(run_fifo_lie(false, false), 29000000);
}
END_TEST

START_TEST(wrong_fifo_aborts)
{
	run_fifo_lie(false, true);
}
END_TEST

/* A controller with declared state: it counts the steps it was told of and takes requests on
 * a busy instance only after an even count. */
struct parity_state {
	int64_t steps;
	int64_t marker;                 /* set by init() */
};

static void parity_init(void *state, const double *par)
{
	(void)par;
	struct parity_state *st = state;
	st->marker = 42;
}

static void parity_step_done(void *state, const struct batch_view *v)
{
	struct parity_state *st = state;
	ck_assert_int_eq(v->step, st->steps); /* told of every step, in order */
	st->steps++;
}

static bool parity_take(struct batch_view *v, struct batch_cand *c)
{
	(void)c;
	const struct parity_state *st = v->state;
	ck_assert_int_eq(st->marker, 42);
	ck_assert_int_eq(v->step, st->steps);
	return (v->idle && v->n == 0) || st->steps % 2 == 0;
}

static const struct batch_policy parity = {
	.info = {"parity", "test: declared state", NULL},
	.reads = BV_RUNNING,
	.take = parity_take,
	.state_size = sizeof(struct parity_state),
	.init = parity_init,
	.on_step_done = parity_step_done,
};

START_TEST(declared_state_sees_every_step)
{
	int64_t t[2][3], steps[2];
	for (int m = 0; m < 2; m++) {
		queue_init();
		struct sim_params p = queue_params(&parity);
		p.step_by_step = m == 1;
		struct sim_costs c = ms_costs();
		struct sim s;
		sim_init(&s, &p, queue, 4, NULL, NULL, &c, NULL);
		sim_check_contract(&s, true);
		sim_run(&s);
		sim_finish(&s);
		ck_assert_uint_eq(s.finished, 4);
		const struct parity_state *st = s.lanes[0].ctl_state;
		ck_assert_int_eq(st->steps, s.m.steps);
		steps[m] = st->steps;
		for (int i = 0; i < 3; i++)
			t[m][i] = s.r[i + 1].t_sched;
		sim_release(&s);
	}
	ck_assert_int_eq(steps[0], steps[1]);
	/* Request 1 arrives at 10 ms; the step at 10 ms is the lane's 11th (index 10: the
	 * prefill at 0, decodes at 1..9 ms), after an even count: taken at once. */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(t[0][i], t[1][i]);
	ck_assert_int_eq(t[0][0], 10000000);
}
END_TEST

/* queue_budget on hand-worked views: threshold 8, short budget 100 tokens. */
START_TEST(queue_budget_rule)
{
	const struct batch_policy *ctl = batch_policy("queue_budget");
	ck_assert_ptr_nonnull(ctl);
	ck_assert_uint_eq(ctl->reads & BV_WAITING, BV_WAITING);
	double par[POLICY_MAX_KEYS] = {8, 100};
	uint32_t lens[4] = {0};
	struct batch_view v;
	memset(&v, 0, sizeof v);
	v.par = par;
	v.lens = lens;
	v.waiting = 3;
	struct req_spec q60 = {0}, q50 = {0}, q40 = {0};
	q60.prompt_tokens = 60;
	q50.prompt_tokens = 50;
	q40.prompt_tokens = 40;
	struct batch_cand c = {&q60, 1, 1, 0, 0};
	/* Busy, 3 waiting (short): 60 fits in 100, then 60 + 50 does not, 60 + 40 does. */
	ck_assert(ctl->take(&v, &c));
	lens[v.n++] = 60;
	c.q = &q50;
	ck_assert(!ctl->take(&v, &c));
	c.q = &q40;
	ck_assert(ctl->take(&v, &c));
	/* 8 waiting: the kernel's budget alone. */
	v.waiting = 8;
	c.q = &q50;
	ck_assert(ctl->take(&v, &c));
	/* Idle: the first request joins whatever its length. */
	struct req_spec big = {0};
	big.prompt_tokens = 4000;
	v.waiting = 1;
	v.n = 0;
	v.idle = true;
	c.q = &big;
	ck_assert(ctl->take(&v, &c));
	v.idle = false;
	ck_assert(!ctl->take(&v, &c));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("contract");
	TCase *tc = tcase_create("contract");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, declared_waiting_matches_reference);
	tcase_add_test(tc, undeclared_waiting_is_wrong_unchecked);
	tcase_add_test_raise_signal(tc, undeclared_waiting_aborts, SIGABRT);
	tcase_add_test(tc, wrong_fifo_is_wrong_unchecked);
	tcase_add_test_raise_signal(tc, wrong_fifo_aborts, SIGABRT);
	tcase_add_test(tc, declared_state_sees_every_step);
	tcase_add_test(tc, queue_budget_rule);
	suite_add_tcase(s, tc);
	return check_run(s);
}
