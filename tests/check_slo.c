/*
 * check_slo: the SLO metrics of analysis/metrics.c on hand-made requests: attainment over every
 * objective (TTFT, TPOT, optional E2E) with unfinished requests failing, goodput, unfinished.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>

#include "analysis/metrics.h"
#include "tests/check_main.h"

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	ck_assert_ptr_nonnull(v);
	/* Integers are written raw (json_add_int). */
	return cJSON_IsRaw(v) ? strtod(v->valuestring, NULL) : v->valuedouble;
}

#define MS 1000000LL

static void four_of_five(struct metrics *m, double e2e_ms)
{
	/* Five requests in the workload, four finish (times in ms):
	 *   arrival first finish  out  TTFT TPOT  E2E
	 *   0       50    150     11   50   10    150   meets all
	 *   0       150   160     2    150  10    160   TTFT fails (> 100)
	 *   100     120   320     11   20   20    220   TPOT fails (> 10)
	 *   200     210   400     1    10   -     200   meets (no TPOT)
	 * duration = 400 - 0 ms. */
	metrics_init(m, 5, 100, 10);
	m->slo_e2e_ms = e2e_ms;
	metrics_request(m, 0, 50 * MS, 150 * MS, 10, 11);
	metrics_request(m, 0, 150 * MS, 160 * MS, 10, 2);
	metrics_request(m, 100 * MS, 120 * MS, 320 * MS, 10, 11);
	metrics_request(m, 200 * MS, 210 * MS, 400 * MS, 10, 1);
}

START_TEST(without_e2e)
{
	struct metrics m;
	four_of_five(&m, 0);
	ck_assert_double_eq(metrics_slo_attainment(&m), 2.0 / 5);
	cJSON *o = metrics_to_json(&m);
	ck_assert_double_eq(num(o, "unfinished"), 1);
	ck_assert_double_eq(num(o, "completed"), 4);
	ck_assert_double_eq(num(o, "slo_attainment"), 0.4);
	ck_assert_double_eq_tol(num(o, "goodput"), 2 / 0.4, 1e-12);
	cJSON_Delete(o);
	metrics_release(&m);
}
END_TEST

START_TEST(with_e2e)
{
	/* E2E <= 155 ms: the first request (150) still meets, the fourth (200) no longer. */
	struct metrics m;
	four_of_five(&m, 155);
	ck_assert_double_eq(metrics_slo_attainment(&m), 1.0 / 5);
	cJSON *o = metrics_to_json(&m);
	ck_assert_double_eq_tol(num(o, "goodput"), 1 / 0.4, 1e-12);
	cJSON_Delete(o);
	metrics_release(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slo");
	TCase *tc = tcase_create("slo");
	tcase_add_test(tc, without_e2e);
	tcase_add_test(tc, with_e2e);
	suite_add_tcase(s, tc);
	return check_run(s);
}
