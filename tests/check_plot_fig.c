/*
 * check_plot_fig: the parts of `bucketsim plot` that are plain functions: axis labels made from
 * column names (exact strings), the legend positions --key accepts, and the Student-t
 * confidence interval of a mean over seeds against t quantiles written out by hand.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plot_fig.h"
#include "tests/check_main.h"

static void label_is(const char *name, const char *want)
{
	char *got = plot_label(name);
	ck_assert_msg(!strcmp(got, want), "plot_label(\"%s\") = \"%s\", want \"%s\"", name, got,
		      want);
	free(got);
}

START_TEST(labels_by_rule)
{
	label_is("p99_ttft_ms", "p99 TTFT (ms)");
	label_is("mean_tpot_ms", "mean TPOT (ms)");
	label_is("std_itl_ms", "std ITL (ms)");
	label_is("median_e2el_ms", "median E2E latency (ms)");
	label_is("e2e_ms", "E2E (ms)");
	label_is("mean_kv_transfer_ms", "mean KV transfer (ms)");
	label_is("runtime_compile_s", "runtime compile (s)");
	label_is("capacity_req_s", "capacity (req/s)");
	label_is("request_throughput", "request throughput (req/s)");
	label_is("output_throughput", "output throughput (tokens/s)");
	label_is("total_token_throughput", "total token throughput (tokens/s)");
	label_is("goodput", "goodput (req/s)");
	label_is("slo_attainment", "SLO attainment (fraction)");
	label_is("utilization", "utilization (fraction)");
	label_is("kv_utilization_mean", "KV utilization mean (fraction)");
	label_is("kv_block_padding_ratio", "KV block padding (fraction)");
	label_is("batch_waste_ratio_mean", "batch waste ratio mean (fraction)");
	label_is("preemptions", "preemptions");
	label_is("kv_blocks_peak", "KV blocks peak");
	/* A unit alone is not a suffix; empty words are skipped. */
	label_is("s", "s");
	label_is("ms", "ms");
	label_is("p99__ttft_ms", "p99 TTFT (ms)");
}
END_TEST

START_TEST(labels_of_keys_and_phrases)
{
	label_is("server.max_num_seqs", "server.max_num_seqs (requests)");
	label_is("workload.rate", "request rate (req/s)");
	label_is("bucketing.strategy", "bucketing.strategy");
	label_is("env.VLLM_DECODE_BLOCK_BUCKET_STEP", "env.VLLM_DECODE_BLOCK_BUCKET_STEP");
	label_is("padding_waste_ratio", "padding waste (fraction of padded tokens)");
	label_is("compiles_warmup", "buckets compiled at warm-up (graphs)");
	label_is("warmup_s", "warm-up time (s)");
}
END_TEST

START_TEST(key_positions)
{
	ck_assert_str_eq(plot_key_command("top left"), "set key top left");
	ck_assert_str_eq(plot_key_command("bottom right"), "set key bottom right");
	ck_assert_str_eq(plot_key_command("outside"), "set key outside right top");
	ck_assert_str_eq(plot_key_command("off"), "unset key");
	ck_assert_ptr_null(plot_key_command("middle"));
	ck_assert_ptr_null(plot_key_command("Top Left"));
	ck_assert_ptr_null(plot_key_command("top  left"));
	ck_assert_ptr_null(plot_key_command(""));
	size_t n = 0;
	while (plot_key_positions[n])
		ck_assert_ptr_nonnull(plot_key_command(plot_key_positions[n++]));
	ck_assert_int_eq(n, 10);
}
END_TEST

/* gnuplot string literals, written by hand from gnuplot 5.4's rules: double quotes; \\ \" \n \t;
 * an octal escape for other control characters and the backquote, the literal ended after one
 * that a digit 0-7 follows (gnuplot reads every octal digit after "\0"); UTF-8 as it is.  (That
 * gnuplot reads each back exactly: tests/e2e_plot.sh.) */
static char *gp_str(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	plot_gp_str(f, s);
	fclose(f);
	return buf;
}

START_TEST(gnuplot_strings)
{
	static const char *const cases[][2] = {
		{"", "\"\""},
		{"vllm", "\"vllm\""},
		{"'95 results", "\"'95 results\""},
		{"O''Brien", "\"O''Brien\""},
		{"a\"b\\c", "\"a\\\"b\\\\c\""},
		{"l1\nl2\tx", "\"l1\\nl2\\tx\""},
		{"x`touch p`", "\"x\\140touch p\\140\""},
		{"\0331m", "\"\\033\".\"1m\""},
		{"\033[8m", "\"\\033[8m\""},
		{"`7", "\"\\140\".\"7\""},
		{"`8", "\"\\1408\""},
		{"\r\x7f", "\"\\015\\177\""},
		{"a_b^c{d}@e&f $g #h", "\"a_b^c{d}@e&f $g #h\""},
		{"\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *got = gp_str(cases[i][0]);
		ck_assert_str_eq(got, cases[i][1]);
		free(got);
	}
}
END_TEST

START_TEST(ci_student_t)
{
	/* 1, 2, 3: mean 2, sd 1; with 2 degrees of freedom t(p) = (2p - 1) sqrt(2 / (4p(1 - p))):
	 * t(0.975) = 4.302652729749464, t(0.995) = 9.924843200918276. */
	double a[] = {1, 2, 3};
	ck_assert_double_eq_tol(plot_ci_halfwidth(0.95, a, 3, 2), 4.302652729749464 / sqrt(3), 1e-12);
	ck_assert_double_eq_tol(plot_ci_halfwidth(0.95, a, 3, 2), 2.484137711750331, 1e-12);
	ck_assert_double_eq_tol(plot_ci_halfwidth(0.99, a, 3, 2), 9.924843200918276 / sqrt(3), 1e-11);
	/* 10, 14: mean 12, sd 2 sqrt 2; with 1 degree of freedom t(p) = tan(pi (p - 1/2)):
	 * t(0.975) = 12.706204736174707, and h = t 2 sqrt 2 / sqrt 2 = 2 t. */
	double b[] = {10, 14};
	ck_assert_double_eq_tol(plot_ci_halfwidth(0.95, b, 2, 12), 2 * 12.706204736174707, 1e-11);
	/* Equal values: a zero-width interval; one value: none. */
	double c[] = {5, 5, 5, 5};
	ck_assert_double_eq(plot_ci_halfwidth(0.95, c, 4, 5), 0);
	ck_assert(isnan(plot_ci_halfwidth(0.95, c, 1, 5)));
}
END_TEST

START_TEST(key_words)
{
	static const char *const cases[][2] = {
		{"env.VLLM_DECODE_BLOCK_BUCKET_STEP", "decode block bucket step"},
		{"server.max_num_seqs", "max num seqs"},
		{"bucketing.strategy", "strategy"},
		{"VLLM_", "vllm "},
		{"plain", "plain"},
		{"a.b.PT_HPU_LAZY_MODE", "pt hpu lazy mode"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *got = plot_key_words(cases[i][0]);
		ck_assert_str_eq(got, cases[i][1]);
		free(got);
	}
	ck_assert_uint_eq(plot_text_len(""), 0);
	ck_assert_uint_eq(plot_text_len("vllm"), 4);
	ck_assert_uint_eq(plot_text_len("\xc3\xa9t\xc3\xa9"), 3);   /* été */
	ck_assert_uint_eq(plot_text_len("\xe2\x88\x92x"), 2);       /* −x */
}
END_TEST

/* The legend box against points, worked by hand: a graph of 40 x 10 characters, a box of 10 x 4
 * (0.25 x 0.4 of the graph) in each corner and at the centres. */
START_TEST(key_box)
{
	/* top right: x >= 0.75, y >= 0.6 */
	ck_assert(plot_key_covers("top right", 40, 10, 10, 4, 0.75, 0.6));
	ck_assert(plot_key_covers("top right", 40, 10, 10, 4, 1, 1));
	ck_assert(!plot_key_covers("top right", 40, 10, 10, 4, 0.74, 0.9));
	ck_assert(!plot_key_covers("top right", 40, 10, 10, 4, 0.9, 0.59));
	/* top left: x <= 0.25 */
	ck_assert(plot_key_covers("top left", 40, 10, 10, 4, 0.25, 0.6));
	ck_assert(!plot_key_covers("top left", 40, 10, 10, 4, 0.26, 0.9));
	/* bottom left, bottom right: y <= 0.4 */
	ck_assert(plot_key_covers("bottom left", 40, 10, 10, 4, 0, 0.4));
	ck_assert(!plot_key_covers("bottom left", 40, 10, 10, 4, 0, 0.41));
	ck_assert(plot_key_covers("bottom right", 40, 10, 10, 4, 0.8, 0.1));
	ck_assert(!plot_key_covers("bottom right", 40, 10, 10, 4, 0.7, 0.1));
	/* centres: |x - 0.5| <= 0.125 */
	ck_assert(plot_key_covers("top center", 40, 10, 10, 4, 0.625, 0.7));
	ck_assert(!plot_key_covers("top center", 40, 10, 10, 4, 0.626, 0.7));
	ck_assert(plot_key_covers("bottom center", 40, 10, 10, 4, 0.375, 0));
	ck_assert(!plot_key_covers("bottom center", 40, 10, 10, 4, 0.5, 0.5));
	/* The box's size in characters: 9 beyond the longest title, 1.1 lines an entry and 1.5. */
	ck_assert_double_eq(PLOT_KEY_W(11), 20);
	ck_assert_double_eq_tol(PLOT_KEY_H(3), 4.8, 1e-12);
}
END_TEST

/* Series styles: widths from 2.2 down to 1 by equal steps, each point shape open or a stroke
 * (gnuplot's filled shapes are the odd types 5 to 15), none twice. */
START_TEST(series_styles)
{
	ck_assert_double_eq(plot_style_lw(0, 1), 1);
	ck_assert_double_eq_tol(plot_style_lw(0, 4), 2.2, 1e-12);
	ck_assert_double_eq_tol(plot_style_lw(1, 4), 1.8, 1e-12);
	ck_assert_double_eq_tol(plot_style_lw(3, 4), 1, 1e-12);
	for (size_t i = 0; i < PLOT_POINT_TYPES_N; i++) {
		int t = plot_point_types[i];
		ck_assert_msg(!(t >= 5 && t <= 15 && t % 2), "point type %d is filled", t);
		for (size_t j = 0; j < i; j++)
			ck_assert_int_ne(plot_point_types[j], t);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plot_fig");
	TCase *tc = tcase_create("labels");
	tcase_add_test(tc, labels_by_rule);
	tcase_add_test(tc, labels_of_keys_and_phrases);
	tcase_add_test(tc, key_positions);
	tcase_add_test(tc, key_words);
	tcase_add_test(tc, key_box);
	tcase_add_test(tc, series_styles);
	suite_add_tcase(s, tc);
	tc = tcase_create("ci");
	tcase_add_test(tc, ci_student_t);
	tcase_add_test(tc, gnuplot_strings);
	suite_add_tcase(s, tc);
	return check_run(s);
}
