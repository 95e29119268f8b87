/*
 * check_report: the report writers' fast number formatting against its reference
 * (report_reference_format: every field through printf).  The fast path must give the same
 * bytes: on numbers chosen to be hard (ties of %.6f's rounding, huge and tiny values, negative
 * times) and on whole runs' requests.csv, batches.csv and buckets.csv (disaggregated and
 * unified runs, so every column is written; monitor.csv and boundaries.csv too), written
 * directly or through the row writer (on its thread or on the caller's).  The same runs'
 * summary metrics, whose percentiles and moments have references too (metrics_reference_sort,
 * metrics_reference_stats: qsort and GSL), must be the same bytes with the fast paths.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/report.h"
#include "sim/run_int.h"
#include "tests/check_main.h"

/* fmt_f6 against printf("%.6f"), fmt_f3 against printf("%.3f") */
static void same_f6(double x)
{
	char a[512], b[512];
	report_reference_format = false;
	fmt_f6(a, sizeof a, x);
	report_reference_format = true;
	fmt_f6(b, sizeof b, x);
	report_reference_format = false;
	char c[512];
	snprintf(c, sizeof c, "%.6f", x);
	ck_assert_msg(!strcmp(a, c), "fmt_f6(%.17g) = %s, printf gives %s", x, a, c);
	ck_assert_str_eq(b, c);
	/* and %.3f, on X and on X * 1000 (so that the ties of the third decimal are met) */
	for (int k = 0; k < 2; k++) {
		double y = k ? x * 1000 : x;
		fmt_f3(a, sizeof a, y);
		snprintf(c, sizeof c, "%.3f", y);
		ck_assert_msg(!strcmp(a, c), "fmt_f3(%.17g) = %s, printf gives %s", y, a, c);
	}
}

START_TEST(f6_equals_printf)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 5);
	for (int i = 0; i < 100000; i++) {
		/* magnitudes from 1e-9 to 1e12 */
		double x = gsl_rng_uniform(r) * pow(10, (double)gsl_rng_uniform_int(r, 22) - 9);
		same_f6(x);
		/* exact and near ties of the sixth decimal: (n + 0.5) / 1e6 */
		double n = (double)gsl_rng_uniform_int(r, 1u << 30);
		same_f6((n + 0.5) / 1e6);
		same_f6(nextafter((n + 0.5) / 1e6, 0));
		same_f6(nextafter((n + 0.5) / 1e6, INFINITY));
		/* latencies as the writer forms them: nanoseconds over a token count */
		same_f6((double)gsl_rng_uniform_int(r, 4000000000u) / 1e6 /
			(double)(1 + gsl_rng_uniform_int(r, 4096)));
	}
	static const double edge[] = {0, 0.5e-6, 1.5e-6, 2.5e-6, 4e9, 4e9 - 1e-6, 1e300, 5e-324};
	for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
		same_f6(edge[i]);
	gsl_rng_free(r);
}
END_TEST

START_TEST(ns_formats_equal_printf)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 6);
	for (int i = 0; i < 100000; i++) {
		int64_t ns = (int64_t)(gsl_rng_get(r) % 4000000000000ull) - 1000000000000ll;
		if (i == 0)
			ns = INT64_MIN;
		if (i == 1)
			ns = INT64_MAX;
		char a[64], b[64];
		report_reference_format = false;
		fmt_ns_s(a, sizeof a, ns);
		report_reference_format = true;
		fmt_ns_s(b, sizeof b, ns);
		ck_assert_str_eq(a, b);
		report_reference_format = false;
		fmt_ns_ms(a, sizeof a, ns);
		report_reference_format = true;
		fmt_ns_ms(b, sizeof b, ns);
		ck_assert_str_eq(a, b);
	}
	report_reference_format = false;
	gsl_rng_free(r);
}
END_TEST

/* The files run_csv writes, and the summary's "metrics" object. */
enum { OUT_REQ, OUT_BAT, OUT_BUCK, OUT_MON, OUT_BND, OUT_SUM, NOUT };
static const char *const out_name[NOUT] = {"requests.csv", "batches.csv", "buckets.csv",
					   "monitor.csv", "boundaries.csv", "summary metrics"};

struct sinks {
	FILE *f[NOUT];
	struct report_writer *w;  /* NULL: the direct writers */
};

static void sink_request(void *ctx, const struct sim *s, int32_t id)
{
	struct sinks *k = ctx;
	if (k->w)
		report_writer_request(k->w, s, id);
	else
		report_request_row(k->f[OUT_REQ], s, id);
}

static void sink_pass(void *ctx, const struct sim *s, const struct pass_rec *p)
{
	struct sinks *k = ctx;
	(void)s;
	if (k->w)
		report_writer_pass(k->w, p);
	else
		report_batch_row(k->f[OUT_BAT], p);
}

static void sink_monitor(void *ctx, const struct sim *s, const struct monitor_rec *m)
{
	(void)s;
	report_monitor_row(((struct sinks *)ctx)->f[OUT_MON], m);
}

static void sink_boundaries(void *ctx, const struct sim *s, bool offline, const uint32_t *b,
			    size_t nb, size_t splits, size_t merged)
{
	report_boundaries_row(((struct sinks *)ctx)->f[OUT_BND], sim_now(s), offline, b, nb, splits,
			      merged, sim_last_nmax(s));
}

/* How run_csv writes the rows (the reference modes also summarise through the references). */
enum mode { DIRECT, REFERENCE, WRITER_THREAD, WRITER_CALLER, WRITER_THREAD_REFERENCE };

/* Runs KV ("key=value" list) and writes each file of out_name into OUT[]. */
static void run_csv(const char *const *kv, enum mode mode, char *out[NOUT])
{
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	cli_config_init(&x.cc);
	x.cc.seed = 3;
	struct bs_err err = {0};
	for (size_t i = 0; kv[i]; i++)
		ck_assert_msg(!config_set_arg(&x.cc.cfg, kv[i], &err), "%s: %s", kv[i], err.msg);
	ck_assert_msg(!run_setup(&x, run_default_trace(&x.cc.cfg, NULL), true, &err), "%s",
		      err.msg);
	size_t len[NOUT];
	struct sinks k = {{NULL}, NULL};
	for (int i = 0; i < OUT_SUM; i++)
		k.f[i] = open_memstream(&out[i], &len[i]);
	report_reference_format = mode == REFERENCE || mode == WRITER_THREAD_REFERENCE;
	metrics_reference_sort = metrics_reference_stats = report_reference_format;
	report_requests_header(k.f[OUT_REQ]);
	report_batches_header(k.f[OUT_BAT]);
	report_monitor_header(k.f[OUT_MON]);
	report_boundaries_header(k.f[OUT_BND]);
	if (mode >= WRITER_THREAD)
		k.w = report_writer_new(k.f[OUT_REQ], k.f[OUT_BAT], mode != WRITER_CALLER);
	struct sim_costs costs;
	sim_costs_from_model(&costs, x.cm);
	struct sim_hooks hooks = {&k, sink_request, sink_pass, sink_monitor, sink_boundaries};
	struct sim *s = sim_new(&x.sp, x.w.req, x.w.n, x.b, x.have_bsc ? &x.bsc : NULL, &costs,
				&hooks);
	sim_warmup(s);
	sim_run(s);
	sim_finish(s);
	/* As run does: buckets.csv on the writer's thread while the summary is built. */
	if (k.w)
		report_writer_buckets(k.w, k.f[OUT_BUCK], s);
	else
		report_buckets(k.f[OUT_BUCK], s);
	cJSON *m = run_metrics_json(&x, s);
	report_writer_close(k.w);
	out[OUT_SUM] = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	sim_free(s);
	report_reference_format = metrics_reference_sort = metrics_reference_stats = false;
	for (int i = 0; i < OUT_SUM; i++)
		fclose(k.f[i]);
	run_teardown(&x);
}

START_TEST(runs_equal_reference)
{
	/* The smallest size each file must reach in each run (so that its rows were written). */
	static const struct {
		const char *kv[16];
		size_t min[NOUT];
	} runs[] = {
		{{"workload.num_requests=2000", "cluster.mode=disaggregated", NULL},
		 {1000, 1000, 100, 0, 0, 1000}},
		{{"workload.num_requests=1000", "scheduler.batching=unified",
		  "bucketing.strategy=unified", NULL}, {1000, 1000, 100, 0, 0, 1000}},
		{{"workload.num_requests=1000", "workload.lengths=uniform", "workload.rate=50",
		  "bucketing.strategy=none", "monitor.interval_s=0.25", NULL}, {1000, 1000, 100, 1000, 0, 1000}},
		/* Contiguous PA with block ids and the defragmenter: kv_max_block_id in monitor.csv. */
		{{"workload.num_requests=1000", "workload.rate=20", "server.contiguous_pa=true",
		  "monitor.interval_s=0.25", NULL}, {1000, 1000, 100, 1000, 0, 1000}},
		/* More rows than the writer's blocks hold at once (6 x 2048): the caller waits. */
		{{"workload.num_requests=15000", "bucketing.strategy=none", NULL},
		 {1000, 1000, 100, 0, 0, 1000}},
		/* BucketServe's adaptive grouping: boundaries.csv, and monitor.csv. */
		{{"workload.mix=alpaca:0.8,longbench:0.2", "workload.truncate=true",
		  "server.max_model_len=4096", "workload.num_requests=2000", "workload.arrival=poisson",
		  "workload.rate=30", "server.max_num_seqs=16", "scheduler.n_max=8",
		  "scheduler.grouping=adaptive", "scheduler.order=earliest_bucket",
		  "monitor.interval_s=5", NULL}, {1000, 1000, 100, 1000, 100, 1000}},
	};
	for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
		char *ref[NOUT];
		run_csv(runs[i].kv, REFERENCE, ref);
		for (int o = 0; o < NOUT; o++)
			ck_assert_msg(strlen(ref[o]) >= runs[i].min[o], "run %zu: %s has %zu bytes", i,
				      out_name[o], strlen(ref[o]));
		for (enum mode m = DIRECT; m <= WRITER_THREAD_REFERENCE; m++) {
			if (m == REFERENCE)
				continue;
			char *got[NOUT];
			run_csv(runs[i].kv, m, got);
			for (int o = 0; o < NOUT; o++) {
				ck_assert_msg(!strcmp(got[o], ref[o]), "run %zu mode %d: %s differs from "
					      "the reference", i, (int)m, out_name[o]);
				free(got[o]);
			}
		}
		for (int o = 0; o < NOUT; o++)
			free(ref[o]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, f6_equals_printf);
	tcase_add_test(tc, ns_formats_equal_printf);
	tcase_add_test(tc, runs_equal_reference);
	suite_add_tcase(s, tc);
	return check_run(s);
}
