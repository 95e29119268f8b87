/*
 * check_metrics: the summary statistics of analysis/metrics: the weighted quantile of the
 * inter-token-latency multiset against GSL on the expanded data, vllm-bench definitions of the
 * latency keys (population standard deviation, TPOT excludes one-token outputs), throughput
 * and SLO attainment by hand.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/report.h"
#include "tests/check_main.h"

/* A value of kind KIND for the sorts' tests: latencies with ties, values of every sign and
 * magnitude, a few small integers (long runs of ties), non-negative bit patterns of every kind
 * (zero, subnormals, huge values, +infinity: the radix path), and the same with a rare -0, NaN
 * or negative value (the arrays that go to qsort). */
static double sample(gsl_rng *rng, int kind)
{
	double u = gsl_rng_uniform(rng);
	switch (kind) {
	case 0:
		return (double)gsl_rng_uniform_int(rng, 1000000) / 1e6 * 50;
	case 1:
		return (u - 0.5) * pow(10, (double)gsl_rng_uniform_int(rng, 40) - 20);
	case 2:
		return (double)gsl_rng_uniform_int(rng, 7);
	default: {
		static const double special[] = {0.0, 4.9406564584124654e-324, 2.2250738585072009e-308,
						 2.2250738585072014e-308, 1.7976931348623157e308,
						 INFINITY, 1, 0x1p-1074 * 3};
		double x;
		if (u < 0.3)
			x = special[gsl_rng_uniform_int(rng, sizeof special / sizeof *special)];
		else if (u < 0.6)
			x = ldexp(gsl_rng_uniform(rng), (int)gsl_rng_uniform_int(rng, 2100) - 1074);
		else
			x = 0x1p-1074 * (double)gsl_rng_uniform_int(rng, 1000);
		if (kind == 4 && gsl_rng_uniform_int(rng, 1000) == 0) {
			static const double odd[] = {-0.0, -1e-300, -5};
			x = odd[gsl_rng_uniform_int(rng, 3)];
		}
		return x;
	}
	}
}

/* The radix sort of the percentiles against its reference (qsort): the same bits, ascending,
 * on every kind of sample and on the short arrays it hands to qsort. */
START_TEST(radix_sort_equals_qsort)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 11);
	size_t sizes[] = {0, 1, 255, 256, 257, 5000, 30000};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		for (int kind = 0; kind < 5; kind++) {
			size_t n = sizes[k];
			double *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
			for (size_t i = 0; i < n; i++)
				b[i] = a[i] = sample(rng, kind);
			metrics_reference_sort = false;
			metrics_sort(a, n);
			metrics_reference_sort = true;
			metrics_sort(b, n);
			metrics_reference_sort = false;
			ck_assert_int_eq(memcmp(a, b, n * sizeof *a), 0);
			for (size_t i = 1; i < n; i++)
				ck_assert(a[i - 1] <= a[i]);
			free(a);
			free(b);
		}
	}
	/* A NaN anywhere: qsort in both cases, so the same bits. */
	double a[300], b[300];
	for (int i = 0; i < 300; i++)
		a[i] = b[i] = i == 150 ? NAN : 300 - i;
	metrics_sort(a, 300);
	metrics_reference_sort = true;
	metrics_sort(b, 300);
	metrics_reference_sort = false;
	ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
	gsl_rng_free(rng);
}
END_TEST

/* TTFT and E2E: the integers sorted, then converted to ms, against the conversion then qsort
 * (metrics_reference_sort), on latencies with ties, zeros, values up to 2^62 ns, runs where
 * every value is the same, and arrays with a negative value (converted, then sorted). */
START_TEST(sorted_ms_equals_reference)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 13);
	size_t sizes[] = {0, 1, 255, 256, 3000, 30000};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		for (int kind = 0; kind < 5; kind++) {
			size_t n = sizes[k];
			int64_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
			for (size_t i = 0; i < n; i++) {
				int64_t v = kind == 0 ? (int64_t)gsl_rng_uniform_int(rng, 4000000000u)
					  : kind == 1 ? (int64_t)(gsl_rng_get(rng) % 1000) * 1000000
					  : kind == 2 ? (int64_t)(((uint64_t)gsl_rng_get(rng) << 32 ^
								  gsl_rng_get(rng)) >> (2 + gsl_rng_uniform_int(rng, 60)))
					  : kind == 3 ? 123456789
						      : (int64_t)gsl_rng_uniform_int(rng, 1000) - 1;
				a[i] = b[i] = v;
			}
			double *x = metrics_sorted_ms(a, n);
			metrics_reference_sort = true;
			double *y = metrics_sorted_ms(b, n);
			metrics_reference_sort = false;
			ck_assert_int_eq(memcmp(x, y, n * sizeof *x), 0);
			for (size_t i = 1; i < n; i++)
				ck_assert(x[i - 1] <= x[i]);
			free(x);
			free(y);
		}
	}
	/* By hand: 3 ms, 0, 1.5 ms, 3 ms -> 0, 1.5, 3, 3 (radix: 300 copies of the four). */
	int64_t *c = malloc(1200 * sizeof *c);
	for (int i = 0; i < 1200; i++)
		c[i] = (int64_t[]){3000000, 0, 1500000, 3000000}[i % 4];
	double *x = metrics_sorted_ms(c, 1200);
	ck_assert_double_eq(x[0], 0);
	ck_assert_double_eq(x[299], 0);
	ck_assert_double_eq(x[300], 1.5);
	ck_assert_double_eq(x[599], 1.5);
	ck_assert_double_eq(x[600], 3);
	ck_assert_double_eq(x[1199], 3);
	free(x);
	gsl_rng_free(rng);
}
END_TEST

/* The summary of random requests and inter-token gaps (KIND 0: latencies of every size, gaps
 * from 0 to 2^40 ns; 1: also negative gaps, which go to qsort), printed. */
static char *random_summary(int kind, bool reference)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 21 + kind);
	struct metrics m;
	metrics_init(&m, 3000, 500, 50);
	for (int i = 0; i < 3000; i++) {
		int64_t a = (int64_t)gsl_rng_uniform_int(rng, 1000000000) * 100;
		int64_t f = a + (int64_t)gsl_rng_uniform_int(rng, 4000000000u);
		int64_t e = f + (int64_t)(gsl_rng_get(rng) % 2000) * 1000000;
		metrics_request(&m, a, f, e, 10, 1 + (int32_t)gsl_rng_uniform_int(rng, 300));
	}
	for (int i = 0; i < 5000; i++) {
		int64_t g = (int64_t)(gsl_rng_get(rng) >> gsl_rng_uniform_int(rng, 32)) << 8;
		if (kind == 1 && i % 1000 == 999)
			g = -g;
		metrics_itl(&m, g, 1 + (int64_t)gsl_rng_uniform_int(rng, 5));
	}
	metrics_itl(&m, 0, 3);
	m.end_ns = 200000000000;
	metrics_reference_sort = metrics_reference_stats = reference;
	cJSON *o = metrics_to_json(&m);
	metrics_reference_sort = metrics_reference_stats = false;
	char *t = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	metrics_release(&m);
	gsl_rng_free(rng);
	return t;
}

/* A whole summary (percentiles, means and deviations of the three samples, the inter-token
 * multiset's) with the fast sorts and statistics against the references: the same bytes. */
START_TEST(summary_equals_reference)
{
	for (int kind = 0; kind < 2; kind++) {
		char *a = random_summary(kind, false), *b = random_summary(kind, true);
		ck_assert_str_eq(a, b);
		ck_assert_ptr_nonnull(strstr(a, "\"p99_itl_ms\":"));
		free(a);
		free(b);
	}
}
END_TEST

/* The interleaved mean and standard deviation against GSL's own (metrics_reference_stats):
 * the same bits, on sorted latencies and on values of every magnitude, for arrays of unequal
 * lengths (each one the shortest in turn, and empty or single ones). */
START_TEST(mean_sd3_equals_gsl)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 12);
	static const size_t sizes[][3] = {{0, 0, 0}, {1, 0, 1}, {1, 1, 1}, {2, 5, 3}, {1000, 999, 1000},
					  {777, 5000, 4000}, {3000, 2000, 1}, {100000, 60000, 100000}};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		double *x[3];
		for (int j = 0; j < 3; j++) {
			size_t n = sizes[k][j];
			x[j] = malloc((n ? n : 1) * sizeof *x[j]);
			for (size_t i = 0; i < n; i++)
				x[j][i] = j == 1 ? (gsl_rng_uniform(rng) - 0.3) *
							   pow(10, (double)gsl_rng_uniform_int(rng, 30) - 15)
						 : (double)gsl_rng_uniform_int(rng, 4000000000u) / 1e6;
			gsl_sort(x[j], 1, n);
		}
		const double *cx[3] = {x[0], x[1], x[2]};
		double m1[3], s1[3], m2[3], s2[3];
		metrics_reference_stats = false;
		metrics_mean_sd3(cx, sizes[k], m1, s1);
		metrics_reference_stats = true;
		metrics_mean_sd3(cx, sizes[k], m2, s2);
		metrics_reference_stats = false;
		for (int j = 0; j < 3; j++) {
			ck_assert_msg(!memcmp(&m1[j], &m2[j], sizeof m1[j]), "case %zu array %d: mean %.17g, "
				      "GSL %.17g", k, j, m1[j], m2[j]);
			ck_assert_msg(!memcmp(&s1[j], &s2[j], sizeof s1[j]), "case %zu array %d: sd %.17g, "
				      "GSL %.17g", k, j, s1[j], s2[j]);
			ck_assert(sizes[k][j] ? isfinite(m1[j]) : isnan(m1[j]));
			free(x[j]);
		}
	}
	/* By hand: {1, 2, 3, 4} has mean 2.5 and population sd sqrt(1.25); one value has sd 0. */
	const double a[] = {1, 2, 3, 4}, b[] = {7};
	const double *cx[3] = {a, b, a};
	const size_t n[3] = {4, 1, 0};
	double m[3], sd[3];
	metrics_mean_sd3(cx, n, m, sd);
	ck_assert_double_eq(m[0], 2.5);
	ck_assert_double_eq(sd[0], sqrt(1.25));
	ck_assert_double_eq(m[1], 7);
	ck_assert_double_eq(sd[1], 0);
	ck_assert(isnan(m[2]) && isnan(sd[2]));
	gsl_rng_free(rng);
}
END_TEST

/* The fast %.6f of requests.csv against printf: random magnitudes, the exact ties printf rounds
 * to even (k/128), values around every rounding boundary, zero and huge values. */
START_TEST(fast_f6_equals_printf)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 3);
	char fast[400], ref[400];
	for (int i = 0; i < 300000; i++) {
		double x;
		switch (i % 4) {
		case 0: x = gsl_rng_uniform(rng) * pow(10, (double)gsl_rng_uniform_int(rng, 12) - 3); break;
		case 1: x = (double)gsl_rng_uniform_int(rng, 1 << 20) / 128.0; break;
		case 2: x = ((double)gsl_rng_uniform_int(rng, 100000000) + 0.5) / 1e6; break;
		default: x = (double)(int64_t)gsl_rng_uniform_int(rng, 4000000000UL) / 1e6 / 
			     (double)(1 + gsl_rng_uniform_int(rng, 2000)); break;
		}
		fmt_f6(fast, sizeof fast, x);
		snprintf(ref, sizeof ref, "%.6f", x);
		ck_assert_msg(!strcmp(fast, ref), "%.17g: %s != %s", x, fast, ref);
	}
	const double edge[] = {0, 0.0078125, 0.0000005, 3.9999999999e9, 4e9, 1e300, 2.5e-7};
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
		fmt_f6(fast, sizeof fast, edge[i]);
		snprintf(ref, sizeof ref, "%.6f", edge[i]);
		ck_assert_str_eq(fast, ref);
	}
	/* Exact nanosecond formatting, negative values included. */
	char buf[32];
	fmt_ns_s(buf, sizeof buf, -1);
	ck_assert_str_eq(buf, "-0.000000001");
	fmt_ns_s(buf, sizeof buf, INT64_MAX);
	ck_assert_str_eq(buf, "9223372036.854775807");
	fmt_ns_ms(buf, sizeof buf, INT64_MIN);
	ck_assert_str_eq(buf, "-9223372036854.775808");
	fmt_ns_ms(buf, sizeof buf, 1234567);
	ck_assert_str_eq(buf, "1.234567");
	gsl_rng_free(rng);
}
END_TEST

START_TEST(wquantile_equals_gsl_on_expanded_data)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 5);
	for (int trial = 0; trial < 200; trial++) {
		size_t n = 1 + gsl_rng_uniform_int(rng, 12);
		double x[16];
		int64_t w[16], total = 0;
		for (size_t i = 0; i < n; i++) {
			x[i] = (double)i * 1.5 + (double)gsl_rng_uniform_int(rng, 3);
			w[i] = 1 + (int64_t)gsl_rng_uniform_int(rng, 9);
			total += w[i];
		}
		gsl_sort(x, 1, n); /* values sorted; weights stay attached by index order */
		double *e = malloc((size_t)total * sizeof *e);
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			for (int64_t j = 0; j < w[i]; j++)
				e[k++] = x[i];
		const double fs[] = {0, 0.1, 0.25, 0.5, 0.9, 0.99, 1};
		for (size_t f = 0; f < sizeof fs / sizeof *fs; f++)
			ck_assert_double_eq_tol(metrics_wquantile(x, w, n, fs[f]),
						gsl_stats_quantile_from_sorted_data(e, 1, k, fs[f]), 1e-12);
		free(e);
	}
	gsl_rng_free(rng);
	ck_assert(isnan(metrics_wquantile(NULL, NULL, 0, 0.5)));
}
END_TEST

static double get(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsRaw(v))
		return strtod(v->valuestring, NULL);
	ck_assert_msg(cJSON_IsNumber(v), "key %s", k);
	return v->valuedouble;
}

START_TEST(summary_by_hand)
{
	/* Three requests: arrivals 0, 1, 2 s; first tokens 0.1, 1.3, 2.05 s; finishes 1.1, 1.3,
	 * 3.05 s; outputs 11, 1, 5 tokens; prompts 100, 200, 300.  TTFT 100, 300, 50 ms; TPOT
	 * (1.0 s / 10) 100 ms and (1.0 s / 4) 250 ms (the one-token request has none); E2E 1100,
	 * 300, 1050 ms.  SLO TTFT <= 200 ms and TPOT <= 200 ms: only the first meets both; the
	 * one-token request fails on TTFT.  Duration 3.05 s. */
	struct metrics m;
	metrics_init(&m, 3, 200, 200);
	metrics_request(&m, 0, 100000000, 1100000000, 100, 11);
	metrics_request(&m, 1000000000, 1300000000, 1300000000, 200, 1);
	metrics_request(&m, 2000000000, 2050000000, 3050000000, 300, 5);
	metrics_itl(&m, 100000000, 10);
	metrics_itl(&m, 250000000, 4);
	m.end_ns = 3050000000;
	cJSON *o = metrics_to_json(&m);
	ck_assert_double_eq(get(o, "completed"), 3);
	ck_assert_double_eq_tol(get(o, "duration"), 3.05, 1e-12);
	ck_assert_double_eq_tol(get(o, "request_throughput"), 3 / 3.05, 1e-12);
	ck_assert_double_eq_tol(get(o, "output_throughput"), 17 / 3.05, 1e-12);
	ck_assert_double_eq_tol(get(o, "total_token_throughput"), 617 / 3.05, 1e-12);
	ck_assert_double_eq_tol(get(o, "mean_ttft_ms"), 150, 1e-9);
	ck_assert_double_eq_tol(get(o, "median_ttft_ms"), 100, 1e-9);
	/* population sd of {50, 100, 300}: sqrt(((100)^2 + 50^2 + 150^2) / 3) */
	ck_assert_double_eq_tol(get(o, "std_ttft_ms"), sqrt((10000.0 + 2500 + 22500) / 3), 1e-9);
	ck_assert_double_eq_tol(get(o, "mean_tpot_ms"), 175, 1e-9);
	ck_assert_double_eq_tol(get(o, "p99_tpot_ms"), 100 + 0.99 * 150, 1e-9);
	ck_assert_double_eq_tol(get(o, "mean_itl_ms"), (10 * 100.0 + 4 * 250) / 14, 1e-9);
	ck_assert_double_eq_tol(get(o, "median_itl_ms"), 100, 1e-9);
	/* 14 gaps: index 0.9 * 13 = 11.7 -> between the 12th (250) and 13th (250) */
	ck_assert_double_eq_tol(get(o, "p90_itl_ms"), 250, 1e-9);
	ck_assert_double_eq_tol(get(o, "mean_e2el_ms"), (1100 + 300 + 1050) / 3.0, 1e-9);
	ck_assert_double_eq_tol(get(o, "slo_attainment"), 1 / 3.0, 1e-12);
	cJSON_Delete(o);
	metrics_release(&m);
}
END_TEST

START_TEST(empty_samples_are_null)
{
	struct metrics m;
	metrics_init(&m, 0, 1, 1);
	cJSON *o = metrics_to_json(&m);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "mean_ttft_ms")));
	ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "p99_itl_ms")));
	ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "slo_attainment")));
	cJSON_Delete(o);
	metrics_release(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, wquantile_equals_gsl_on_expanded_data);
	tcase_add_test(tc, summary_by_hand);
	tcase_add_test(tc, empty_samples_are_null);
	tcase_add_test(tc, radix_sort_equals_qsort);
	tcase_add_test(tc, sorted_ms_equals_reference);
	tcase_add_test(tc, summary_equals_reference);
	tcase_add_test(tc, mean_sd3_equals_gsl);
	tcase_add_test(tc, fast_f6_equals_printf);
	suite_add_tcase(s, tc);
	return check_run(s);
}
