/*
 * check_capacity: the capacity search (sim/capacity.h) on step functions with hand-worked
 * probe sequences, its give-up cases and the t interval; then on the simulation kernel as an
 * M/M/1 queue, against the closed form.
 *
 * M/M/1: one server (max_num_seqs = 1), Poisson arrivals, service d x O with O geometric on
 * {1, 2, ...} with p = 0.002 (a prefill of d, then O - 1 decode steps of d), i.e. exponential
 * with mean d/p = 10 ms up to a lattice of d = 0.02 ms.  The sojourn time of M/M/1 is
 * exponential with rate mu - lambda, so the attainment of an end-to-end objective D is
 * 1 - exp(-(mu - lambda) D) and the rate meeting attainment a is lambda = mu + ln(1 - a) / D.
 */
#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/batching.h"
#include "policies/grouping.h"
#include "policies/loop.h"
#include "policies/order.h"
#include "sim/capacity.h"
#include "sim/kernel.h"
#include "tests/check_main.h"
#include "tests/sim_fixture.h"

/* ---- the search on step functions ---- */

static int step_fn(void *ctx, double rate, double *a, struct bs_err *err)
{
	(void)err;
	*a = rate <= *(const double *)ctx ? 1.0 : 0.0;
	return 0;
}

START_TEST(bracket_up_then_bisect)
{
	/* Edge 7.3 from 1: probes 1 2 4 8 (meets up to 4), then 6 7 7.5 7.25 7.375 7.3125;
	 * [7.25, 7.3125] is 0.0625 wide <= 0.01 x 7.3125. */
	double edge = 7.3;
	struct cap_opts o = {0.9, 1, 0.01, 1e-6, 1e6};
	struct cap_result r;
	struct bs_err e = {0};
	ck_assert_int_eq(capacity_search(&o, step_fn, &edge, &r, &e), 0);
	ck_assert_double_eq(r.rate, 7.25);
	ck_assert_double_eq(r.lo, 7.25);
	ck_assert_double_eq(r.hi, 7.3125);
	static const double want[] = {1, 2, 4, 6, 7, 7.25, 7.3125, 7.375, 7.5, 8};
	ck_assert_uint_eq(r.n, 10);
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_double_eq(r.curve[i].rate, want[i]);
		ck_assert_double_eq(r.curve[i].attainment, want[i] <= edge ? 1 : 0);
	}
	cap_result_release(&r);
}
END_TEST

START_TEST(bracket_down_then_bisect)
{
	/* Edge 0.3 from 1: 1 0.5 miss, 0.25 meets; then 0.375 0.3125 miss, 0.28125 0.296875
	 * meet, 0.3046875 0.30078125 miss, 0.298828125 meets: 0.001953125 <= 0.0030078125. */
	double edge = 0.3;
	struct cap_opts o = {0.5, 1, 0.01, 1e-6, 1e6};
	struct cap_result r;
	struct bs_err e = {0};
	ck_assert_int_eq(capacity_search(&o, step_fn, &edge, &r, &e), 0);
	ck_assert_double_eq(r.lo, 0.298828125);
	ck_assert_double_eq(r.hi, 0.30078125);
	ck_assert_uint_eq(r.n, 10);
	cap_result_release(&r);
}
END_TEST

START_TEST(gives_up)
{
	double edge = 1e9;
	struct cap_opts o = {0.9, 1, 0.01, 1e-3, 100};
	struct cap_result r;
	struct bs_err e = {0};
	ck_assert_int_eq(capacity_search(&o, step_fn, &edge, &r, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "no capacity below 100"));
	ck_assert_uint_eq(r.n, 7); /* 1 2 4 ... 64 */
	cap_result_release(&r);
	edge = 1e-9;
	bs_err_clear(&e);
	ck_assert_int_eq(capacity_search(&o, step_fn, &edge, &r, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "even at"));
	ck_assert_uint_eq(r.n, 10); /* 1 0.5 ... 2^-9 */
	cap_result_release(&r);
}
END_TEST

START_TEST(t_interval)
{
	/* {1, 2, 3}: mean 2, sd 1, t(0.975, 2) = 4.30265272974946. */
	double x[] = {1, 2, 3}, m, h;
	capacity_mean_ci(x, 3, &m, &h);
	ck_assert_double_eq_tol(m, 2, 1e-15);
	ck_assert_double_eq_tol(h, 4.30265272974946 / sqrt(3), 1e-9);
	capacity_mean_ci(x, 1, &m, &h);
	ck_assert_double_eq(m, 1);
	ck_assert_double_eq(h, 0);
}
END_TEST

/* ---- M/M/1 on the kernel ---- */

#define D_NS 20000       /* one step: 0.02 ms */
#define GEO_P 0.002      /* mean O = 500: mean service 10 ms */

static int64_t c_prefill(void *c, int32_t bs, int32_t q, int32_t ctx)
{
	(void)c, (void)bs, (void)q, (void)ctx;
	return D_NS;
}

static int64_t c_decode(void *c, int32_t bs, int32_t nb)
{
	(void)c, (void)bs, (void)nb;
	return D_NS;
}

static int64_t c_unified(void *c, int32_t q, int32_t sh, int32_t un, bool causal)
{
	(void)c, (void)q, (void)sh, (void)un, (void)causal;
	return D_NS;
}

static int64_t c_compile(void *c, int phase, const int32_t v[4], bool runtime)
{
	(void)c, (void)phase, (void)v, (void)runtime;
	return 0;
}

static int64_t c_transfer(void *c, int64_t tokens)
{
	(void)c, (void)tokens;
	return 0;
}

struct mm1 {
	size_t n;
	double *e;        /* unit exponential inter-arrival draws (common random numbers) */
	int32_t *out;     /* geometric output lengths */
	double slo_ms;
};

static int mm1_attainment(void *ctx, double rate, double *a, struct bs_err *err)
{
	(void)err;
	const struct mm1 *m = ctx;
	struct req_spec *req = calloc(m->n, sizeof *req);
	double t = 0;
	for (size_t i = 0; i < m->n; i++) {
		t += m->e[i] / rate;
		req[i].arrival_ns = (int64_t)llround(t * 1e9);
		req[i].prompt_tokens = 16;
		req[i].output_tokens = m->out[i];
		req[i].prefix_group = -1;
	}
	struct sim_params p = fixture_params();
	p.max_num_seqs = 1;
	p.max_model_len = 1 << 20;
	p.num_kv_blocks = 1 << 20;
	p.slo_ttft_ms = 1e12;
	p.slo_tpot_ms = 1e12;
	p.slo_e2e_ms = m->slo_ms;
	struct sim_costs c = {NULL, c_prefill, c_decode, c_unified, c_compile, c_transfer,
			      NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	struct sim *s = sim_new(&p, req, m->n, NULL, NULL, &c, NULL);
	sim_run(s);
	sim_finish(s);
	*a = metrics_slo_attainment(sim_metrics(s));
	sim_free(s);
	free(req);
	return 0;
}

static void check_mm1(double target, double slo_ms)
{
	struct mm1 m = {250000, NULL, NULL, slo_ms};
	m.e = malloc(m.n * sizeof *m.e);
	m.out = malloc(m.n * sizeof *m.out);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 11);
	for (size_t i = 0; i < m.n; i++) {
		m.e[i] = gsl_ran_exponential(rng, 1.0);
		m.out[i] = (int32_t)gsl_ran_geometric(rng, GEO_P);
	}
	gsl_rng_free(rng);
	double mu = GEO_P / (D_NS * 1e-9), d = slo_ms / 1e3;
	double theory = mu + log(1 - target) / d;
	struct cap_opts o = {target, 10, 0.001, 1e-3, 1e4};
	struct cap_result r;
	struct bs_err e = {0};
	ck_assert_int_eq(capacity_search(&o, mm1_attainment, &m, &r, &e), 0);
	fprintf(stderr, "M/M/1 target %.2f, SLO %.0f ms: capacity %.4f req/s [%.4f, %.4f], "
		"closed form %.4f req/s (%+.2f %%), %zu probes\n", target, slo_ms, r.rate, r.lo,
		r.hi, theory, 100 * (r.rate - theory) / theory, r.n);
	ck_assert_msg(fabs(r.rate - theory) / theory < 0.01, "capacity %.4f, theory %.4f", r.rate,
		      theory);
	ck_assert(r.hi - r.lo <= 0.001 * r.hi);
	cap_result_release(&r);
	free(m.e);
	free(m.out);
}

START_TEST(mm1_90)
{
	check_mm1(0.9, 100);
}
END_TEST

START_TEST(mm1_80)
{
	check_mm1(0.8, 50);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("capacity");
	TCase *tc = tcase_create("search");
	tcase_add_test(tc, bracket_up_then_bisect);
	tcase_add_test(tc, bracket_down_then_bisect);
	tcase_add_test(tc, gives_up);
	tcase_add_test(tc, t_interval);
	suite_add_tcase(s, tc);
	tc = tcase_create("mm1");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, mm1_90);
	tcase_add_test(tc, mm1_80);
	suite_add_tcase(s, tc);
	return check_run(s);
}
