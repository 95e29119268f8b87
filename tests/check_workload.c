/*
 * check_workload: traces (formats, validation, bundled files), the max_model_len rules, the
 * generators (distributions, seeding, stream independence), mixes and task/priority rules.
 */
#include <check.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/config.h"
#include "workloads/trace_int.h"
#include "workloads/workload.h"
#include "tests/check_main.h"

static char tmpdir[64];

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/bs_wlXXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

/* Writes TEXT to TMPDIR/NAME; returns the path (owned by the caller). */
static char *write_tmp(const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* A config with max_model_len MML and "key=value" settings (NULL-terminated). */
static void cfg_make(struct config *c, int mml, const char *const *sets)
{
	struct bs_err e = {0};
	char buf[32];
	config_init(c);
	snprintf(buf, sizeof buf, "%d", mml);
	ck_assert_int_eq(config_set(c, "server.max_model_len", buf, CFG_ORIGIN_CMDLINE, NULL, 0, &e),
			 0);
	for (size_t i = 0; sets && sets[i]; i++) {
		ck_assert_msg(config_set_arg(c, sets[i], &e) == 0, "%s: %s", sets[i], e.msg);
	}
}

static int build(struct workload *w, int mml, const char *trace, uint64_t seed,
		 const char *const *sets, struct bs_err *e)
{
	struct config c;
	cfg_make(&c, mml, sets);
	memset(e, 0, sizeof *e);
	int rc = workload_build(&c, trace, seed, w, e);
	config_release(&c);
	return rc;
}

/* Expects TEXT (as file NAME) to fail loading at RECORD / FIELD with MSG in the message. */
static void expect_bad(const char *name, const char *text, long record, const char *field,
		       const char *msg)
{
	char *p = write_tmp(name, text);
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.file, p);
	ck_assert_int_eq(e.line, record);
	ck_assert_str_eq(e.field, field);
	ck_assert_msg(strstr(e.msg, msg), "message '%s' lacks '%s'", e.msg, msg);
	ck_assert_ptr_null(t.prompt);
	ck_assert_int_eq(t.n, 0);
	free(p);
}

START_TEST(bundled_row_counts)
{
	static const struct {
		const char *name;
		size_t rows;
		bool ts, prompts;
	} want[] = {
		{"alpaca", 5000, false, true},        {"longbench", 4750, false, true},
		{"azure-conv", 19366, true, true},    {"azure-code", 8819, true, true},
		{"mooncake-conv", 12031, true, true}, {"mooncake-synthetic", 3993, true, true},
		{"sharegpt", 10000, false, true},     {"arxiv", 28257, false, true},
		{"alpaca-outputs", 20000, false, false},
	};
	size_t nb = 0;
	while (bundled_traces[nb].name)
		nb++;
	ck_assert_int_eq(nb, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct trace t;
		struct bs_err e = {0};
		ck_assert_int_eq(trace_load(want[i].name, false, true, &t, &e), 0);
		ck_assert_int_eq(t.n, want[i].rows);
		ck_assert_int_eq(t.arrival_s != NULL, want[i].ts);
		ck_assert_int_eq(t.prompt != NULL, want[i].prompts);
		ck_assert_int_eq(trace_bundled_find(want[i].name)->rows, want[i].rows);
		trace_release(&t);
	}
}
END_TEST

START_TEST(bundled_statistics)
{
	/* The published summary statistics of the bundled files. */
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load("alpaca", false, false, &t, &e), 0);
	double *d = xmalloc(t.n * sizeof *d);
	for (size_t i = 0; i < t.n; i++)
		d[i] = t.prompt[i];
	struct col_stats s;
	col_stats_compute(d, t.n, &s);
	ck_assert_double_eq(s.min, 39);
	ck_assert_double_eq(s.p50, 53);
	ck_assert_double_eq(s.max, 301);
	ck_assert_double_eq_tol(s.mean, 61.8, 0.05);
	free(d);
	trace_release(&t);
	ck_assert_int_eq(trace_load("longbench", false, false, &t, &e), 0);
	ck_assert_ptr_nonnull(t.max_new);
	ck_assert_int_eq(t.prompt[0], 34115);
	ck_assert_int_eq(t.max_new[0], 128);
	ck_assert_str_eq(t.prompt_col, "prompt_tokens");
	trace_release(&t);
	ck_assert_int_eq(trace_load("azure-conv", false, false, &t, &e), 0);
	ck_assert_str_eq(t.prompt_col, "input_tokens");
	ck_assert_double_eq_tol(t.arrival_s[1], 4.314579, 1e-12);
	trace_release(&t);
}
END_TEST

START_TEST(csv_all_columns)
{
	char *p = write_tmp("full.csv",
			    "id,arrival_time_s,prompt_tokens,output_tokens,priority,task,"
			    "prefix_group,prefix_tokens,extra\n"
			    "a,0.5,10,5,2,offline,3,4,x\n"
			    "\"b,c\",1.25,20,0,,,,,\"y\"\"z\"\n");
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 2);
	ck_assert_int_eq(t.prompt[1], 20);
	ck_assert_int_eq(t.output[1], 0);
	ck_assert_double_eq(t.arrival_s[1], 1.25);
	ck_assert_int_eq(t.priority[0], 2);
	ck_assert_int_eq(t.priority[1], TRACE_UNSET_U8);
	ck_assert_int_eq(t.task[0], TASK_OFFLINE);
	ck_assert_int_eq(t.task[1], TRACE_UNSET_U8);
	ck_assert_int_eq(t.prefix_group[0], 3);
	ck_assert_int_eq(t.prefix_group[1], -1);
	ck_assert_int_eq(t.prefix_tokens[0], 4);
	ck_assert_int_eq(t.recno[1], 3);
	trace_release(&t);
	free(p);
	/* A byte-order mark and CRLF line ends are accepted. */
	p = write_tmp("bom.csv", "\xef\xbb\xbfprompt_tokens,output_tokens\r\n3,4\r\n");
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 1);
	ck_assert_int_eq(t.output[0], 4);
	trace_release(&t);
	free(p);
	/* The mark before a quoted first name (libcsv saw the mark, then a quote inside an
	 * unquoted field: bad quoting): from a file and from a buffer. */
	static const char q[] = "\xef\xbb\xbf\"prompt_tokens\",\"output_tokens\"\n5,1\n6,2\n";
	p = write_tmp("bomq.csv", q);
	ck_assert_msg(trace_load(p, false, false, &t, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(t.n, 2);
	ck_assert_int_eq(t.prompt[1], 6);
	ck_assert_int_eq(t.recno[1], 3);
	ck_assert_str_eq(t.prompt_col, "prompt_tokens");
	trace_release(&t);
	free(p);
	ck_assert_int_eq(trace_load_buffer("b.csv", q, sizeof q - 1, false, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 2);
	trace_release(&t);
	/* Only a mark, or part of one: an empty file and a header of one odd name. */
	ck_assert_int_eq(trace_load_buffer("e.csv", "\xef\xbb\xbf", 3, false, false, false, &t, &e), -1);
	ck_assert_str_eq(e.msg, "empty file (expected a header row)");
	bs_err_clear(&e);
	ck_assert_int_eq(trace_load_buffer("e.csv", "\xef\xbb", 2, false, false, false, &t, &e), -1);
	bs_err_clear(&e);
	/* A mark is taken once: a second one is part of the first name. */
	ck_assert_int_eq(trace_load_buffer("e.csv", "\xef\xbb\xbf\xef\xbb\xbfprompt_tokens,output_tokens\n1,1\n",
					   38, false, false, false, &t, &e), -1);
	ck_assert_msg(strstr(e.msg, "prompt"), "%s", e.msg);
	bs_err_clear(&e);
}
END_TEST

/* A file above trace_split_min (read in two parts, the mark read with pread) with the mark and
 * a quoted first name. */
START_TEST(bom_quoted_header_in_two)
{
	size_t rows = 40000, cap = 32 * rows, n = 0;
	char *text = xmalloc(cap);
	n += (size_t)snprintf(text, cap, "\xef\xbb\xbf\"arrival_time_s\",prompt_tokens,output_tokens\n");
	for (size_t i = 0; i < rows; i++)
		n += (size_t)snprintf(text + n, cap - n, "%zu,%zu,%zu\n", i, 1 + i % 97, i % 31);
	char *p = write_tmp("bomq_big.csv", text);
	struct trace t;
	struct bs_err e = {0};
	ck_assert_msg(trace_load(p, false, false, &t, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(t.n, rows);
	ck_assert_ptr_nonnull(t.arrival_s);
	ck_assert_double_eq(t.arrival_s[rows - 1], (double)(rows - 1));
	ck_assert_int_eq(t.recno[rows - 1], (int)rows + 1);
	trace_release(&t);
	free(p);
	free(text);
}
END_TEST

START_TEST(time_range)
{
	struct workload w;
	struct bs_err e;
	const char *s[] = {"workload.rate=1e-9", "workload.lengths=constant", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 1, s, &e), -1);
	ck_assert_str_eq(e.field, "workload.rate");
	ck_assert_ptr_nonnull(strstr(e.msg, "time range"));
}
END_TEST

START_TEST(csv_malformed)
{
	expect_bad("neg.csv", "prompt_tokens,output_tokens\n5,1\n-3,4\n", 3, "prompt_tokens",
		   "expected a positive integer, got '-3'");
	expect_bad("zero.csv", "prompt_tokens,output_tokens\n0,1\n", 2, "prompt_tokens",
		   "got '0'");
	expect_bad("nan.csv", "input_tokens,output_tokens\n5,abc\n", 2, "output_tokens",
		   "expected a non-negative integer, got 'abc'");
	expect_bad("frac.csv", "prompt_tokens,output_tokens\n5.5,1\n", 2, "prompt_tokens",
		   "'5.5'");
	expect_bad("fields.csv", "prompt_tokens,output_tokens\n1,2\n3,4,5\n", 3, "",
		   "expected 2 fields as in the header, got 3");
	expect_bad("short.csv", "prompt_tokens,output_tokens\n1,2\n3\n", 3, "",
		   "expected 2 fields as in the header, got 1");
	expect_bad("quote.csv", "prompt_tokens,output_tokens\n1,2\n3,\"4\"x\n", 3, "",
		   "malformed CSV");
	expect_bad("unterm.csv", "prompt_tokens,output_tokens\n1,2\n3,\"4\n", 3, "",
		   "unterminated");
	expect_bad("nocol.csv", "id,output_tokens\n1,2\n", 1, "prompt_tokens",
		   "required column is missing");
	expect_bad("noout.csv", "prompt_tokens,id\n1,2\n", 1, "output_tokens",
		   "required column is missing");
	expect_bad("dup.csv", "prompt_tokens,input_tokens,output_tokens\n1,2,3\n", 1, "",
		   "column 'input_tokens' repeats column 'prompt_tokens'");
	expect_bad("mono.csv", "arrival_time_s,prompt_tokens,output_tokens\n1,1,1\n2,1,1\n1.5,1,1\n",
		   4, "arrival_time_s", "earlier than the previous record");
	expect_bad("negt.csv", "arrival_time_s,prompt_tokens,output_tokens\n-1,1,1\n", 2,
		   "arrival_time_s", "non-negative number of seconds, got '-1'");
	expect_bad("nant.csv", "arrival_time_s,prompt_tokens,output_tokens\nnan,1,1\n", 2,
		   "arrival_time_s", "got 'nan'");
	expect_bad("emptyreq.csv", "prompt_tokens,output_tokens\n,1\n", 2, "prompt_tokens",
		   "got ''");
	expect_bad("task.csv", "prompt_tokens,output_tokens,task\n1,1,narrativeqa\n", 2, "task",
		   "expected 'online' or 'offline', got 'narrativeqa'");
	expect_bad("prio.csv", "prompt_tokens,output_tokens,priority\n1,1,300\n", 2, "priority",
		   "[0, 254]");
	expect_bad("prefix.csv", "prompt_tokens,output_tokens,prefix_group,prefix_tokens\n5,1,0,9\n",
		   2, "prefix_tokens", "longer than the prompt");
	expect_bad("prefix2.csv", "prompt_tokens,output_tokens,prefix_tokens\n5,1,3\n", 2,
		   "prefix_tokens", "no prefix_group");
	expect_bad("maxnew.csv", "prompt_tokens,output_tokens,max_new_tokens\n5,1,0\n", 2,
		   "max_new_tokens", "positive integer");
	expect_bad("header.csv", "prompt_tokens,output_tokens\n", 0, "", "no records");
	expect_bad("empty.csv", "", 0, "", "empty file"); /* no line to name */
}
END_TEST

/* Errors name the physical line: blank lines and quoted newlines count (libcsv counts
 * records only). */
/* The CSV reader's fast path for plain numbers (parsed in place) against its reference, every
 * value through the general parsers (util_reference_parse): same columns, bit for bit, on
 * fields of every accepted form (signs, fractions, exponents, leading zeros, more than 15
 * digits, quoted, empty, ignored columns, an arrival in milliseconds), and the same error for
 * every rejected form. */
static void load_both(const char *path, struct trace *fast, struct trace *ref, struct bs_err *ef,
		      struct bs_err *er)
{
	util_reference_parse = false;
	int a = trace_load(path, false, true, fast, ef);
	util_reference_parse = true;
	int b = trace_load(path, false, true, ref, er);
	util_reference_parse = false;
	ck_assert_int_eq(a, b);
}

#define SAME_COL(x, y, col, n)                                                               \
	ck_assert(((x)->col == NULL && (y)->col == NULL) ||                                  \
		  ((x)->col && (y)->col && !memcmp((x)->col, (y)->col, (n) * sizeof *(x)->col)))

/* A trace of 2000 rows whose integer fields take FORMS[k] on one field in four. */
static char *mixed_trace(const char *arrival_col, const char *const *forms, size_t nforms,
			 unsigned long long x)
{
	char *text = xasprintf("id,%s,prompt_tokens,output_tokens,priority,prefix_group,"
			       "prefix_tokens,max_new_tokens,note\n", arrival_col);
	size_t len = strlen(text);
	static const char *const afrac[] = {"%d.%03u", "%d", "%d.%03u0000000000000000", "%de0"};
	for (int i = 0; i < 2000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		char f[6][64], arr[64];
		for (int k = 0; k < 6; k++) {
			unsigned v = 1 + (unsigned)((x >> (8 * k)) % 200);
			const char *form = (x >> (40 + k)) % 4 ? "%u" : forms[(x >> (8 * k)) % nforms];
			snprintf(f[k], sizeof f[k], form, v);
		}
		snprintf(arr, sizeof arr, afrac[(x >> 50) % 4], i, (unsigned)(x % 1000));
		char row[512];
		int n = snprintf(row, sizeof row, "r%d,%s,%s,%s,%s,%s,%s,%s,\"a,b\"\n", i, arr, f[0],
				 f[1], (x >> 60) % 2 ? f[2] : "", (x >> 61) % 2 ? "-1" : f[3],
				 (x >> 62) % 2 ? "" : "0", (x >> 63) % 2 ? f[5] : "");
		text = xrealloc(text, len + (size_t)n + 1);
		memcpy(text + len, row, (size_t)n + 1);
		len += (size_t)n;
	}
	return text;
}

START_TEST(csv_fast_path_equals_reference)
{
	static const char *const good[] = {"%u", "%u.0", "%ue0", "+%u", "0%u",
					   "00000000000000%u", "\"%u\"", "%u.000000000000000", "%u.",
					   " %u", "%u "};
	static const char *const bad[] = {"%u.5", "-%u", ".%u", "0x%u", "%u-",
					  "%u99999999999999999999", "1e400", "%u\"\"", "-0"};
	static const char *const heads[] = {"arrival_time_s", "timestamp"};
	for (size_t h = 0; h < 2; h++) {
		char *text = mixed_trace(heads[h], good, sizeof good / sizeof *good, 88172645463325252ull + h);
		char *p = write_tmp("mixed.csv", text);
		struct trace a, b;
		struct bs_err ea = {0}, eb = {0};
		load_both(p, &a, &b, &ea, &eb);
		ck_assert_int_eq(a.n, 2000);
		ck_assert_int_eq(a.n, b.n);
		SAME_COL(&a, &b, prompt, a.n);
		SAME_COL(&a, &b, output, a.n);
		SAME_COL(&a, &b, arrival_s, a.n);
		SAME_COL(&a, &b, priority, a.n);
		SAME_COL(&a, &b, prefix_group, a.n);
		SAME_COL(&a, &b, prefix_tokens, a.n);
		SAME_COL(&a, &b, max_new, a.n);
		SAME_COL(&a, &b, recno, a.n);
		trace_release(&a);
		trace_release(&b);
		free(p);
		free(text);
	}
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		const char *one[] = {bad[k]};
		char *text = mixed_trace(heads[k % 2], one, 1, 88172645463325252ull + k);
		char *p = write_tmp("bad.csv", text);
		struct trace a, b;
		struct bs_err ea = {0}, eb = {0};
		load_both(p, &a, &b, &ea, &eb);
		ck_assert_msg(a.n == 0 && ea.line > 1, "form '%s' accepted", bad[k]);
		ck_assert_int_eq(ea.line, eb.line);
		ck_assert_str_eq(ea.field, eb.field);
		ck_assert_str_eq(ea.msg, eb.msg);
		free(p);
		free(text);
	}
}
END_TEST

START_TEST(csv_physical_lines)
{
	expect_bad("blank.csv", "prompt_tokens,output_tokens\n\n\n5,1\n\n-3,4\n", 6, "prompt_tokens",
		   "got '-3'");
	expect_bad("quoted.csv", "id,prompt_tokens,output_tokens\n\"a\nb\nc\",1,1\nx,0,1\n", 5,
		   "prompt_tokens", "got '0'");
	expect_bad("crlf.csv", "prompt_tokens,output_tokens\r\n\r\n1,1\r\n2,x\r\n", 4,
		   "output_tokens", "got 'x'");
	expect_bad("badquote.csv", "prompt_tokens,output_tokens\n1,1\n\n\n3,\"4\"x\n", 5, "",
		   "malformed CSV");
	expect_bad("blankhdr.csv", "\n\nprompt_tokens,output_tokens\n2,1,9\n", 4, "",
		   "expected 2 fields");
	/* The rows keep their lines for later errors (workload_build). */
	char *p = write_tmp("lines.csv", "id,prompt_tokens,output_tokens\n\nA,7,1\n\"B\nB\",8,1\nC,9,1\n");
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 3);
	ck_assert_int_eq(t.recno[0], 3);
	ck_assert_int_eq(t.recno[1], 4);
	ck_assert_int_eq(t.recno[2], 6);
	trace_release(&t);
	free(p);
}
END_TEST

/* Writes LEN bytes of DATA (NUL bytes included) to TMPDIR/NAME. */
static char *write_tmp_bytes(const char *name, const char *data, size_t len)
{
	char *p = xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	return p;
}

START_TEST(csv_nul_rejected)
{
	static const char v[] = "prompt_tokens,output_tokens\n5,1\0002\n";
	static const char ign[] = "prompt_tokens,note,output_tokens\n5,\"a\000b\",1\n";
	static const char hdr[] = "prompt_tokens,out\000put_tokens\n5,1\n";
	static const struct {
		const char *name, *data;
		size_t len;
		long line;
		const char *field, *msg;
	} c[] = {
		{"v.csv", v, sizeof v - 1, 2, "output_tokens", "NUL byte in the value"},
		{"ign.csv", ign, sizeof ign - 1, 2, "note", "NUL byte in the value"},
		{"hdr.csv", hdr, sizeof hdr - 1, 1, "", "NUL byte in the header"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char *p = write_tmp_bytes(c[i].name, c[i].data, c[i].len);
		struct trace t;
		struct bs_err e = {0};
		ck_assert_int_eq(trace_load(p, false, false, &t, &e), -1);
		ck_assert_int_eq(e.line, c[i].line);
		ck_assert_str_eq(e.field, c[i].field);
		ck_assert_str_eq(e.msg, c[i].msg);
		free(p);
	}
}
END_TEST

/* Text columns take any length; a long value in a numeric column is an error about the value,
 * shown shortened. */
START_TEST(csv_long_text)
{
	size_t n = 5000;
	char *id = xmalloc(n + 1);
	memset(id, 'x', n);
	id[n] = 0;
	char *text = xasprintf("id,prompt_tokens,output_tokens,extra\n%s,4,2,%s\nshort,5,3,\n", id, id);
	char *p = write_tmp("long.csv", text);
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 2);
	ck_assert_int_eq(t.prompt[0], 4);
	ck_assert_int_eq(t.output[1], 3);
	trace_release(&t);
	free(p);
	free(text);
	text = xasprintf("prompt_tokens,output_tokens,task\n4,2,%s\n", id);
	p = write_tmp("longtask.csv", text);
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), -1);
	ck_assert_str_eq(e.field, "task");
	ck_assert_ptr_nonnull(strstr(e.msg, "expected 'online' or 'offline', got 'xxxx"));
	ck_assert_ptr_nonnull(strstr(e.msg, "...'"));
	free(p);
	free(text);
	/* A long number (leading zeros) is still a number. */
	text = xasprintf("prompt_tokens,output_tokens\n%0300d,2\n", 7);
	p = write_tmp("longnum.csv", text);
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.prompt[0], 7);
	trace_release(&t);
	free(p);
	free(text);
	free(id);
}
END_TEST

/* Numbers in traces are decimal: hex and hex floats are errors; blanks around an unquoted
 * field are trimmed by the CSV reader (libcsv), but not inside quotes. */
START_TEST(csv_lenient_numbers)
{
	expect_bad("hex.csv", "prompt_tokens,output_tokens\n0x10,1\n", 2, "prompt_tokens",
		   "got '0x10'");
	expect_bad("hexf.csv", "arrival_time_s,prompt_tokens,output_tokens\n0x1p4,1,1\n", 2,
		   "arrival_time_s", "got '0x1p4'");
	expect_bad("inf.csv", "arrival_time_s,prompt_tokens,output_tokens\ninf,1,1\n", 2,
		   "arrival_time_s", "got 'inf'");
	expect_bad("qblank.csv", "prompt_tokens,output_tokens\n\" 5\",1\n", 2, "prompt_tokens",
		   "got ' 5'");
	char *p = write_tmp("blank.csv", "prompt_tokens,output_tokens\n 5 ,\t1\n");
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.prompt[0], 5);
	ck_assert_int_eq(t.output[0], 1);
	trace_release(&t);
	free(p);
}
END_TEST

/* Timestamps past the simulator's range (BS_MAX_SECONDS) are an error of the trace, at its
 * line; an arrival pushed out of range by a key names that key. */
START_TEST(timestamp_range)
{
	expect_bad("late.csv", "arrival_time_s,prompt_tokens,output_tokens\n0,1,1\n9.3e9,1,1\n", 3,
		   "arrival_time_s", "beyond the simulator's time range");
	expect_bad("latems.jsonl", "{\"timestamp\": 9.3e12, \"input_length\": 1, "
				   "\"output_length\": 1}\n", 1, "timestamp", "beyond");
	char *p = write_tmp("ok.csv", "arrival_time_s,prompt_tokens,output_tokens\n0,1,1\n5e9,1,1\n");
	struct workload w;
	struct bs_err e;
	const char *ts[] = {"workload.time_scale=2", NULL};
	ck_assert_int_eq(build(&w, 4096, p, 1, ts, &e), -1);
	ck_assert_str_eq(e.field, "workload.time_scale");
	/* 12 rows one second apart, compressed to 1e-9 req/s: the last at 1.1e10 s. */
	char *q = write_tmp("rate.csv", "arrival_time_s,prompt_tokens,output_tokens\n0,1,1\n1,1,1\n"
			    "2,1,1\n3,1,1\n4,1,1\n5,1,1\n6,1,1\n7,1,1\n8,1,1\n9,1,1\n10,1,1\n11,1,1\n");
	const char *tr[] = {"workload.target_rate=1e-9", NULL};
	ck_assert_int_eq(build(&w, 4096, q, 1, tr, &e), -1);
	ck_assert_str_eq(e.field, "workload.target_rate");
	free(q);
	const char *nr[] = {"workload.num_requests=4", "workload.arrival=trace", NULL};
	ck_assert_int_eq(build(&w, 4096, p, 1, nr, &e), -1);
	ck_assert_str_eq(e.field, "workload.num_requests");
	ck_assert_int_eq(build(&w, 4096, p, 1, NULL, &e), 0);
	ck_assert(w.req[1].arrival_ns == 5000000000000000000LL);
	workload_release(&w);
	free(p);
}
END_TEST

/* The formats of other simulators, recognised by their header (values worked out by hand). */
START_TEST(foreign_formats)
{
	struct trace t;
	struct bs_err e = {0};
	/* Vidur: arrived_at in seconds. */
	char *p = write_tmp("vidur.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n"
					 "0.5,100,20\n1.25,200,30\n");
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 2);
	ck_assert_double_eq(t.arrival_s[1], 1.25);
	ck_assert_int_eq(t.prompt[1], 200);
	ck_assert_int_eq(t.output[0], 20);
	trace_release(&t);
	free(p);
	/* vllm bench serve's per-request records: start_time made relative to the first. */
	p = write_tmp("bench.csv", "start_time,prompt_len,output_tokens,ttft,itl\n"
				   "1000.5,10,3,0.1,\"[0.01]\"\n1002.0,20,4,0.2,\"[]\"\n");
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_double_eq(t.arrival_s[0], 0);
	ck_assert_double_eq(t.arrival_s[1], 1.5);
	ck_assert_int_eq(t.prompt[0], 10);
	trace_release(&t);
	free(p);
	/* Mooncake: timestamp in ms; hash_ids of 512-token blocks onto prefix groups.  Row 1 and
	 * 2 share ids 0,1 (1024 tokens, group 0); row 3 shares id 7 with row 5 but only 600
	 * prompt tokens (group 1, capped at 600); row 4 shares nothing. */
	p = write_tmp("mc.jsonl",
		      "{\"timestamp\": 0, \"input_length\": 1500, \"output_length\": 5, \"hash_ids\": [0, 1, 2]}\n"
		      "{\"timestamp\": 1500, \"input_length\": 1200, \"output_length\": 6, \"hash_ids\": [0, 1, 3]}\n"
		      "{\"timestamp\": 2000, \"input_length\": 600, \"output_length\": 7, \"hash_ids\": [7, 8]}\n"
		      "{\"timestamp\": 2500, \"input_length\": 100, \"output_length\": 8, \"hash_ids\": [9]}\n"
		      "{\"timestamp\": 3000, \"input_length\": 2000, \"output_length\": 9, \"hash_ids\": [7, 8, 10]}\n");
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 5);
	ck_assert_double_eq(t.arrival_s[1], 1.5);
	ck_assert_int_eq(t.prompt[2], 600);
	const int32_t grp[] = {0, 0, 1, -1, 1}, tok[] = {1024, 1024, 600, 0, 1024};
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(t.prefix_group[i], grp[i]);
		ck_assert_int_eq(t.prefix_tokens[i], tok[i]);
	}
	trace_release(&t);
	free(p);
	expect_bad("mcbad.jsonl", "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, "
				  "\"hash_ids\": [1, -2]}\n", 1, "hash_ids",
		   "element 2: expected a non-negative integer");
	expect_bad("mcboth.jsonl", "{\"input_length\": 5, \"output_length\": 1, "
				   "\"hash_ids\": [1], \"prefix_group\": 0}\n", 1, "hash_ids",
		   "use one or the other");
}
END_TEST

START_TEST(missing_file)
{
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load("/nonexistent/x.csv", false, false, &t, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.file, "/nonexistent/x.csv");
	ck_assert_ptr_nonnull(strstr(e.msg, "cannot open"));
	bs_err_clear(&e);
	ck_assert_int_eq(trace_load("alpacca", false, false, &t, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_ptr_nonnull(strstr(e.msg, "bundled: alpaca"));
}
END_TEST

START_TEST(sort_arrivals)
{
	char *p = write_tmp("unsorted.csv", "arrival_time_s,prompt_tokens,output_tokens\n"
					    "2,20,1\n1,10,1\n2,21,1\n0.5,5,1\n");
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, true, false, &t, &e), 0);
	ck_assert(t.sorted);
	int want[] = {5, 10, 20, 21}; /* stable: 20 before 21 */
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(t.prompt[i], want[i]);
	ck_assert_int_eq(t.recno[0], 5);
	trace_release(&t);
	struct workload w;
	const char *sets[] = {"workload.sort_arrivals=true", NULL};
	ck_assert_int_eq(build(&w, 1000, p, 1, sets, &e), 0);
	ck_assert_int_eq(w.req[0].arrival_ns, 500000000);
	ck_assert_int_eq(w.req[3].prompt_tokens, 21);
	workload_release(&w);
	ck_assert_int_eq(build(&w, 1000, p, 1, NULL, &e), -1);
	ck_assert_int_eq(e.line, 3);
	free(p);
}
END_TEST

START_TEST(jsonl)
{
	char *p = write_tmp("t.jsonl",
			    "{\"arrival_time_s\": 0.25, \"prompt_tokens\": 7, \"output_tokens\": 3, "
			    "\"task\": \"offline\", \"priority\": 1, \"id\": \"r1\"}\n"
			    "\n"
			    "{\"arrival_time_s\": 1, \"input_tokens\": 8, \"output_tokens\": 0, "
			    "\"other\": [1,2]}\n");
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 2);
	ck_assert_int_eq(t.prompt[1], 8);
	ck_assert_int_eq(t.task[0], TASK_OFFLINE);
	ck_assert_int_eq(t.priority[1], TRACE_UNSET_U8);
	ck_assert_int_eq(t.recno[1], 3);
	trace_release(&t);
	free(p);
	/* Content detection: a .txt file that starts with '['. */
	p = write_tmp("t.txt", "[{\"prompt_tokens\": 4, \"output_tokens\": 2},\n"
			       " {\"prompt_tokens\": 5, \"output_tokens\": 3}]\n");
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), 0);
	ck_assert_int_eq(t.n, 2);
	ck_assert_int_eq(t.output[1], 3);
	trace_release(&t);
	free(p);
}
END_TEST

START_TEST(jsonl_malformed)
{
	expect_bad("a.jsonl", "{\"prompt_tokens\": 1, \"output_tokens\": 1}\n{\"prompt_tokens\": 2,\n",
		   2, "", "invalid JSON");
	expect_bad("b.jsonl", "{\"prompt_tokens\": \"5\", \"output_tokens\": 1}\n", 1,
		   "prompt_tokens", "expected a number, got '\"5\"'");
	expect_bad("c.jsonl", "{\"prompt_tokens\": 1, \"output_tokens\": 1}\n"
			      "{\"output_tokens\": 1}\n", 2, "prompt_tokens", "missing value");
	expect_bad("d.jsonl", "{\"prompt_tokens\": -2, \"output_tokens\": 1}\n", 1,
		   "prompt_tokens", "got '-2'");
	expect_bad("e.jsonl", "[1, 2]\n", 1, "", "expected a JSON object");
	expect_bad("f.jsonl", "{\"prompt_tokens\": 1, \"output_tokens\": 1} x\n", 1, "",
		   "invalid JSON at column 42");
	expect_bad("g.jsonl", "{\"prompt_tokens\": 1, \"output_tokens\": 1}\n"
			      "{\"prompt_tokens\": 1, \"output_tokens\": 1, \"arrival_time_s\": 3}\n",
		   2, "arrival_time_s", "not in the first record");
	expect_bad("h.jsonl", "{\"prompt_tokens\": 1, \"output_tokens\": 1, \"task\": 1}\n", 1,
		   "task", "expected a string");
	expect_bad("i.jsonl", " \n", 0, "", "empty file");
}
END_TEST

START_TEST(length_rules_exact)
{
	/* max_model_len 100: raised, capped, fitting, too long (error / truncated). */
	char *ok = write_tmp("ok.csv", "prompt_tokens,output_tokens\n"
				       "10,0\n"      /* output raised to 1 */
				       "50,60\n"     /* output capped at 50 */
				       "99,5\n"      /* output capped at 1 */
				       "40,60\n"     /* exactly fits */
				       "30,0\n");    /* raised */
	struct workload w;
	struct bs_err e;
	ck_assert_int_eq(build(&w, 100, ok, 1, NULL, &e), 0);
	ck_assert_int_eq(w.n, 5);
	ck_assert_int_eq(w.outputs_raised, 2);
	ck_assert_int_eq(w.outputs_capped, 2);
	ck_assert_int_eq(w.prompts_truncated, 0);
	ck_assert_int_eq(w.req[0].output_tokens, 1);
	ck_assert_int_eq(w.req[1].output_tokens, 50);
	ck_assert_int_eq(w.req[2].output_tokens, 1);
	ck_assert_int_eq(w.req[3].output_tokens, 60);
	workload_release(&w);
	char *lng = write_tmp("long.csv", "input_tokens,output_tokens\n"
					  "10,5\n"
					  "150,10\n"    /* truncated to 90 */
					  "100,5\n"     /* prompt == mml: truncated to 95 */
					  "500,200\n"); /* truncated to 1, output capped at 99 */
	ck_assert_int_eq(build(&w, 100, lng, 1, NULL, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.file, lng);
	ck_assert_int_eq(e.line, 3);
	ck_assert_str_eq(e.field, "input_tokens");
	ck_assert_ptr_nonnull(strstr(e.msg, "prompt of 150 tokens does not fit"));
	ck_assert_ptr_null(w.req);
	const char *tr[] = {"workload.truncate=true", NULL};
	ck_assert_int_eq(build(&w, 100, lng, 1, tr, &e), 0);
	ck_assert_int_eq(w.prompts_truncated, 3);
	ck_assert_int_eq(w.outputs_capped, 1);
	ck_assert_int_eq(w.req[1].prompt_tokens, 90);
	ck_assert_int_eq(w.req[1].output_tokens, 10);
	ck_assert_int_eq(w.req[2].prompt_tokens, 95);
	ck_assert_int_eq(w.req[3].prompt_tokens, 1);
	ck_assert_int_eq(w.req[3].output_tokens, 99);
	for (size_t i = 0; i < w.n; i++)
		ck_assert_int_le(w.req[i].prompt_tokens + w.req[i].output_tokens, 100);
	workload_release(&w);
	free(ok);
	free(lng);
}
END_TEST

START_TEST(eval_cap_longbench)
{
	struct workload w;
	struct bs_err e;
	const char *sets[] = {"workload.eval_cap=true", "workload.arrival=offline", NULL};
	ck_assert_int_eq(build(&w, 1 << 20, "longbench", 1, sets, &e), 0);
	ck_assert_int_eq(w.n, 4750);
	struct trace t;
	ck_assert_int_eq(trace_load("longbench", false, false, &t, &e), 0);
	size_t capped = 0;
	for (size_t i = 0; i < t.n; i++) {
		int32_t o = t.output[i] ? t.output[i] : 1;
		if (o > t.max_new[i])
			capped++;
		ck_assert_int_eq(w.req[i].output_tokens, o < t.max_new[i] ? o : t.max_new[i]);
		ck_assert_int_eq(w.req[i].arrival_ns, 0);
	}
	ck_assert_int_eq(w.outputs_eval_capped, capped);
	ck_assert_int_gt(capped, 0);
	trace_release(&t);
	workload_release(&w);
	/* Paper-style: truncated to a 4k model. */
	const char *tr[] = {"workload.truncate=true", NULL};
	ck_assert_int_eq(build(&w, 4096, "longbench", 1, tr, &e), 0);
	ck_assert_int_gt(w.prompts_truncated, 3000);
	for (size_t i = 0; i < w.n; i++)
		ck_assert_int_le(w.req[i].prompt_tokens + w.req[i].output_tokens, 4096);
	workload_release(&w);
}
END_TEST

static void arrivals_gaps(const struct workload *w, double *mean, double *cv)
{
	double *g = xmalloc(w->n * sizeof *g);
	int64_t prev = 0;
	for (size_t i = 0; i < w->n; i++) {
		g[i] = (double)(w->req[i].arrival_ns - prev) * 1e-9;
		prev = w->req[i].arrival_ns;
	}
	*mean = gsl_stats_mean(g, 1, w->n);
	*cv = gsl_stats_sd(g, 1, w->n) / *mean;
	free(g);
}

START_TEST(poisson_and_gamma)
{
	struct workload w;
	struct bs_err e;
	const char *po[] = {"workload.lengths=constant", "workload.num_requests=100000",
			    "workload.rate=4", "workload.arrival=poisson", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 7, po, &e), 0);
	double mean, cv;
	arrivals_gaps(&w, &mean, &cv);
	ck_assert_double_eq_tol(mean, 0.25, 0.25 * 0.015);
	ck_assert_double_eq_tol(cv, 1.0, 0.02);
	for (size_t i = 1; i < w.n; i++)
		ck_assert_int_ge(w.req[i].arrival_ns, w.req[i - 1].arrival_ns);
	workload_release(&w);
	const char *ga[] = {"workload.lengths=constant", "workload.num_requests=100000",
			    "workload.rate=2", "workload.arrival=gamma", "workload.cv=3", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 7, ga, &e), 0);
	arrivals_gaps(&w, &mean, &cv);
	ck_assert_double_eq_tol(mean, 0.5, 0.5 * 0.04);
	ck_assert_double_eq_tol(cv, 3.0, 0.15);
	ck_assert_str_eq(w.streams[0].name, "arrival");
	workload_release(&w);
	const char *ga2[] = {"workload.lengths=constant", "workload.num_requests=100000",
			     "workload.arrival=gamma", "workload.cv=0.5", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 3, ga2, &e), 0);
	arrivals_gaps(&w, &mean, &cv);
	ck_assert_double_eq_tol(mean, 1.0, 0.01);
	ck_assert_double_eq_tol(cv, 0.5, 0.01);
	workload_release(&w);
}
END_TEST

static void length_moments(const struct workload *w, bool prompt, double *mean, double *var)
{
	double *d = xmalloc(w->n * sizeof *d);
	for (size_t i = 0; i < w->n; i++)
		d[i] = prompt ? w->req[i].prompt_tokens : w->req[i].output_tokens;
	*mean = gsl_stats_mean(d, 1, w->n);
	*var = gsl_stats_variance(d, 1, w->n);
	free(d);
}

START_TEST(length_distributions)
{
	struct workload w;
	struct bs_err e;
	double m, v;
	const char *ln[] = {"workload.lengths=lognormal", "workload.num_requests=100000",
			    "workload.prompt_mean=500", "workload.prompt_cv=0.8",
			    "workload.output_mean=200", "workload.output_cv=0.5", NULL};
	ck_assert_int_eq(build(&w, 1 << 20, NULL, 11, ln, &e), 0);
	length_moments(&w, true, &m, &v);
	ck_assert_double_eq_tol(m, 500, 500 * 0.015);
	ck_assert_double_eq_tol(sqrt(v) / m, 0.8, 0.04);
	length_moments(&w, false, &m, &v);
	ck_assert_double_eq_tol(m, 200, 200 * 0.01);
	ck_assert_double_eq_tol(sqrt(v) / m, 0.5, 0.02);
	ck_assert_int_eq(w.outputs_capped + w.prompts_truncated, 0);
	workload_release(&w);
	const char *un[] = {"workload.lengths=uniform", "workload.num_requests=100000",
			    "workload.prompt_min=10", "workload.prompt_max=110",
			    "workload.output_min=1", "workload.output_max=1", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 11, un, &e), 0);
	length_moments(&w, true, &m, &v);
	ck_assert_double_eq_tol(m, 60, 0.3);
	ck_assert_double_eq_tol(v, (101.0 * 101.0 - 1) / 12, 15);
	int32_t lo = 1 << 30, hi = 0;
	for (size_t i = 0; i < w.n; i++) {
		lo = w.req[i].prompt_tokens < lo ? w.req[i].prompt_tokens : lo;
		hi = w.req[i].prompt_tokens > hi ? w.req[i].prompt_tokens : hi;
		ck_assert_int_eq(w.req[i].output_tokens, 1);
	}
	ck_assert_int_eq(lo, 10);
	ck_assert_int_eq(hi, 110);
	workload_release(&w);
	const char *co[] = {"workload.lengths=constant", "workload.prompt_mean=128",
			    "workload.output_mean=16", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 11, co, &e), 0);
	ck_assert_int_eq(w.n, 1000);
	ck_assert_int_eq(w.req[999].prompt_tokens, 128);
	ck_assert_int_eq(w.req[999].output_tokens, 16);
	workload_release(&w);
	const char *bad[] = {"workload.lengths=uniform", "workload.prompt_min=10",
			     "workload.prompt_max=5", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 11, bad, &e), -1);
	ck_assert_str_eq(e.field, "workload.prompt_min");
	/* A generated prompt that does not fit is an error unless truncated. */
	const char *big[] = {"workload.lengths=constant", "workload.prompt_mean=5000", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 11, big, &e), -1);
	ck_assert_str_eq(e.field, "workload.lengths");
}
END_TEST

START_TEST(random_dataset)
{
	/* vllm bench serve's random dataset: L_in = 1000, L_out = 100, r = 0.25: prompts uniform
	 * on [750, 1250] after a 64-token shared prefix, outputs on [75, 125]. */
	struct workload w;
	struct bs_err e;
	const char *rd[] = {"workload.lengths=random", "workload.num_requests=100000",
			    "workload.random_input_len=1000", "workload.random_output_len=100",
			    "workload.random_range_ratio=0.25", "workload.random_prefix_len=64",
			    NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 5, rd, &e), 0);
	int32_t plo = 1 << 30, phi = 0, olo = 1 << 30, ohi = 0;
	double psum = 0, osum = 0;
	for (size_t i = 0; i < w.n; i++) {
		const struct req_spec *q = &w.req[i];
		plo = q->prompt_tokens < plo ? q->prompt_tokens : plo;
		phi = q->prompt_tokens > phi ? q->prompt_tokens : phi;
		olo = q->output_tokens < olo ? q->output_tokens : olo;
		ohi = q->output_tokens > ohi ? q->output_tokens : ohi;
		psum += q->prompt_tokens;
		osum += q->output_tokens;
		ck_assert_int_eq(q->prefix_group, 0);
		ck_assert_int_eq(q->prefix_tokens, 64);
	}
	ck_assert_int_eq(plo, 64 + 750);
	ck_assert_int_eq(phi, 64 + 1250);
	ck_assert_int_eq(olo, 75);
	ck_assert_int_eq(ohi, 125);
	/* Means 1064 and 100; standard errors 145/sqrt(1e5) = 0.46 and 0.05 tokens. */
	ck_assert_double_eq_tol(psum / (double)w.n, 1064, 2.5);
	ck_assert_double_eq_tol(osum / (double)w.n, 100, 0.25);
	workload_release(&w);
	/* Range ratio 0: the lengths exactly; no prefix group without a prefix.  An output
	 * length of 1 at r = 0.9 ranges over [max(1, floor(0.1)), ceil(1.9)] = [1, 2]. */
	const char *fixed[] = {"workload.lengths=random", "workload.random_input_len=512",
			       "workload.random_output_len=1", "workload.num_requests=2000", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 5, fixed, &e), 0);
	for (size_t i = 0; i < w.n; i++) {
		ck_assert_int_eq(w.req[i].prompt_tokens, 512);
		ck_assert_int_eq(w.req[i].output_tokens, 1);
		ck_assert_int_eq(w.req[i].prefix_group, -1);
	}
	workload_release(&w);
	const char *one[] = {"workload.lengths=random", "workload.random_output_len=1",
			     "workload.random_range_ratio=0.9", "workload.num_requests=2000", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 5, one, &e), 0);
	int seen[3] = {0, 0, 0};
	for (size_t i = 0; i < w.n; i++) {
		ck_assert_int_ge(w.req[i].output_tokens, 1);
		ck_assert_int_le(w.req[i].output_tokens, 2);
		seen[w.req[i].output_tokens]++;
	}
	ck_assert(seen[1] > 0 && seen[2] > 0);
	workload_release(&w);
	/* vLLM's refusals: r >= 1, and a prompt range reaching 0 tokens without a prefix. */
	const char *r1[] = {"workload.lengths=random", "workload.random_range_ratio=1", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 5, r1, &e), -1);
	ck_assert_str_eq(e.field, "workload.random_range_ratio");
	const char *zero[] = {"workload.lengths=random", "workload.random_input_len=1",
			      "workload.random_range_ratio=0.5", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 5, zero, &e), -1);
	ck_assert_str_eq(e.field, "workload.random_input_len");
	/* A closed-loop client without a rate sends everything as soon as it can (arrivals 0);
	 * with a rate it keeps the rate's arrival times. */
	const char *cl[] = {"workload.lengths=random", "workload.concurrency=8",
			    "workload.num_requests=50", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 5, cl, &e), 0);
	ck_assert_int_eq(w.req[49].arrival_ns, 0);
	workload_release(&w);
	const char *clr[] = {"workload.lengths=random", "workload.concurrency=8",
			     "workload.rate=2", "workload.num_requests=50", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 5, clr, &e), 0);
	ck_assert_int_gt(w.req[49].arrival_ns, 0);
	workload_release(&w);
}
END_TEST

START_TEST(empirical_resamples_rows)
{
	struct workload w;
	struct bs_err e;
	const char *s[] = {"workload.lengths=empirical", "workload.num_requests=100000", NULL};
	ck_assert_int_eq(build(&w, 1 << 20, "alpaca", 5, s, &e), 0);
	double m, v;
	length_moments(&w, true, &m, &v);
	ck_assert_double_eq_tol(m, 61.79, 0.6);
	ck_assert_str_eq(w.lengths, "empirical");
	/* Every (prompt, output) pair is a row of the trace (joint resampling). */
	struct trace t;
	ck_assert_int_eq(trace_load("alpaca", false, false, &t, &e), 0);
	static bool seen[1024][1024];
	memset(seen, 0, sizeof seen);
	for (size_t i = 0; i < t.n; i++)
		seen[t.prompt[i]][t.output[i] ? t.output[i] : 1] = true;
	for (size_t i = 0; i < w.n; i++)
		ck_assert(seen[w.req[i].prompt_tokens][w.req[i].output_tokens]);
	trace_release(&t);
	workload_release(&w);
	/* Outputs from an outputs-only trace. */
	const char *o[] = {"workload.output_trace=alpaca-outputs", "workload.num_requests=100000",
			   "workload.lengths=empirical", NULL};
	ck_assert_int_eq(build(&w, 1 << 20, "alpaca", 5, o, &e), 0);
	length_moments(&w, false, &m, &v);
	ck_assert_double_eq_tol(m, 64.6, 0.8);
	workload_release(&w);
	/* As the main trace it is refused with a pointer to output_trace. */
	ck_assert_int_eq(build(&w, 4096, "alpaca-outputs", 5, NULL, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "workload.output_trace"));
}
END_TEST

START_TEST(determinism_and_streams)
{
	const char *a[] = {"workload.lengths=lognormal", "workload.num_requests=5000",
			   "workload.task=random", "workload.priority=random",
			   "workload.priority_weights=1,2,3", NULL};
	struct workload w1, w2, w3;
	struct bs_err e;
	ck_assert_int_eq(build(&w1, 1 << 20, NULL, 42, a, &e), 0);
	ck_assert_int_eq(build(&w2, 1 << 20, NULL, 42, a, &e), 0);
	ck_assert_int_eq(memcmp(w1.req, w2.req, w1.n * sizeof *w1.req), 0);
	ck_assert_int_eq(w1.nstreams, 5);
	ck_assert_int_eq(memcmp(w1.streams, w2.streams, sizeof w1.streams), 0);
	workload_release(&w2);
	ck_assert_int_eq(build(&w2, 1 << 20, NULL, 43, a, &e), 0);
	ck_assert_int_ne(memcmp(w1.req, w2.req, w1.n * sizeof *w1.req), 0);
	workload_release(&w2);
	/* Change only the output distribution and the rate: prompts, tasks and priorities are
	 * identical; arrivals are scaled but from the same variates. */
	const char *b[] = {"workload.lengths=lognormal", "workload.num_requests=5000",
			   "workload.task=random", "workload.priority=random",
			   "workload.priority_weights=1,2,3", "workload.output_cv=3",
			   "workload.output_mean=10", NULL};
	ck_assert_int_eq(build(&w3, 1 << 20, NULL, 42, b, &e), 0);
	size_t out_diff = 0;
	for (size_t i = 0; i < w1.n; i++) {
		ck_assert_int_eq(w1.req[i].arrival_ns, w3.req[i].arrival_ns);
		ck_assert_int_eq(w1.req[i].prompt_tokens, w3.req[i].prompt_tokens);
		ck_assert_int_eq(w1.req[i].task, w3.req[i].task);
		ck_assert_int_eq(w1.req[i].priority, w3.req[i].priority);
		out_diff += w1.req[i].output_tokens != w3.req[i].output_tokens;
	}
	ck_assert_int_gt(out_diff, 4000);
	workload_release(&w3);
	const char *c[] = {"workload.lengths=lognormal", "workload.num_requests=5000",
			   "workload.task=random", "workload.priority=random",
			   "workload.priority_weights=1,2,3", "workload.rate=3",
			   "workload.offline_fraction=0.5", NULL};
	ck_assert_int_eq(build(&w3, 1 << 20, NULL, 42, c, &e), 0);
	for (size_t i = 0; i < w1.n; i++) {
		ck_assert_int_eq(w1.req[i].prompt_tokens, w3.req[i].prompt_tokens);
		ck_assert_int_eq(w1.req[i].output_tokens, w3.req[i].output_tokens);
		ck_assert_int_eq(w1.req[i].priority, w3.req[i].priority);
		ck_assert(llabs(w1.req[i].arrival_ns - 3 * w3.req[i].arrival_ns) <= 3);
	}
	workload_release(&w3);
	workload_release(&w1);
}
END_TEST

START_TEST(stream_seeds)
{
	/* Stable across machines and releases: these values are part of the output format. */
	ck_assert_uint_eq(workload_stream_seed(1, "arrival"), 1198643384u);
	uint64_t a = workload_stream_seed(1, "arrival"), b = workload_stream_seed(1, "rows");
	uint64_t c = workload_stream_seed(2, "arrival");
	ck_assert_uint_ne(a, b);
	ck_assert_uint_ne(a, c);
	for (uint64_t m = 0; m < 1000; m++) {
		uint64_t s = workload_stream_seed(m, "prompt_len");
		ck_assert_uint_ge(s, 1);
		ck_assert_uint_le(s, 0xffffffffu);
	}
}
END_TEST

START_TEST(trace_timestamps)
{
	char *p = write_tmp("ts.csv", "arrival_time_s,prompt_tokens,output_tokens\n"
				      "0,1,1\n1,2,1\n3,3,1\n4,4,1\n");
	struct workload w;
	struct bs_err e;
	ck_assert_int_eq(build(&w, 100, p, 1, NULL, &e), 0);
	ck_assert_int_eq(w.req[2].arrival_ns, 3000000000);
	ck_assert_int_eq(w.nstreams, 0);
	workload_release(&w);
	/* Cycling: period = span + mean gap = 4 + 4/3. */
	const char *cy[] = {"workload.num_requests=6", NULL};
	ck_assert_int_eq(build(&w, 100, p, 1, cy, &e), 0);
	ck_assert_int_eq(w.req[4].arrival_ns, 5333333333);
	ck_assert_int_eq(w.req[5].arrival_ns, 6333333333);
	ck_assert_int_eq(w.req[5].prompt_tokens, 2);
	workload_release(&w);
	const char *ts[] = {"workload.time_scale=0.5", NULL};
	ck_assert_int_eq(build(&w, 100, p, 1, ts, &e), 0);
	ck_assert_int_eq(w.req[3].arrival_ns, 2000000000);
	workload_release(&w);
	const char *tr[] = {"workload.target_rate=1.5", NULL};
	ck_assert_int_eq(build(&w, 100, p, 1, tr, &e), 0);
	ck_assert_int_eq(w.req[3].arrival_ns, 2000000000); /* observed 3/4 req/s */
	workload_release(&w);
	const char *both[] = {"workload.target_rate=1.5", "workload.time_scale=2", NULL};
	ck_assert_int_eq(build(&w, 100, p, 1, both, &e), -1);
	ck_assert_str_eq(e.field, "workload.target_rate");
	const char *po[] = {"workload.arrival=poisson", "workload.rate=10", NULL};
	ck_assert_int_eq(build(&w, 100, p, 1, po, &e), 0);
	ck_assert_int_ne(w.req[2].arrival_ns, 3000000000);
	ck_assert_int_eq(w.req[2].prompt_tokens, 3);
	workload_release(&w);
	const char *bad[] = {"workload.arrival=trace", NULL};
	ck_assert_int_eq(build(&w, 100, "alpaca", 1, bad, &e), -1);
	ck_assert_str_eq(e.field, "workload.arrival");
	const char *bad2[] = {"workload.time_scale=2", NULL};
	ck_assert_int_eq(build(&w, 4096, "alpaca", 1, bad2, &e), -1);
	ck_assert_str_eq(e.field, "workload.time_scale");
	/* A real trace replays its own timestamps by default. */
	ck_assert_int_eq(build(&w, 1 << 20, "azure-conv", 1, NULL, &e), 0);
	ck_assert_int_eq(w.n, 19366);
	ck_assert_int_eq(w.req[1].arrival_ns, 4314579000);
	workload_release(&w);
	free(p);
}
END_TEST

START_TEST(mix)
{
	struct workload w;
	struct bs_err e;
	const char *m[] = {"workload.mix=alpaca:0.8,longbench:0.2:offline",
			   "workload.num_requests=50000", "workload.truncate=true", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 9, m, &e), 0);
	ck_assert_str_eq(w.lengths, "empirical");
	ck_assert_str_eq(w.source, "mix alpaca:0.8,longbench:0.2:offline");
	size_t off = 0, longp = 0;
	for (size_t i = 0; i < w.n; i++) {
		off += w.req[i].task == TASK_OFFLINE;
		longp += w.req[i].prompt_tokens > 400; /* longer than any Alpaca prompt */
		if (w.req[i].task == TASK_ONLINE)
			ck_assert_int_le(w.req[i].prompt_tokens, 301);
	}
	ck_assert_double_eq_tol((double)off / (double)w.n, 0.2, 0.01);
	ck_assert_int_le(longp, off);
	workload_release(&w);
	/* Equal weights by default; auto size = sum of rows. */
	const char *m2[] = {"workload.mix=alpaca,sharegpt", NULL};
	ck_assert_int_eq(build(&w, 1 << 20, NULL, 9, m2, &e), 0);
	ck_assert_int_eq(w.n, 15000);
	workload_release(&w);
	/* A JSON array in a config file arrives comma-joined; spaces around entries are fine. */
	char *cf = write_tmp("mix.json", "{\"server\": {\"max_model_len\": 4096}, \"workload\": "
					"{\"mix\": [\"alpaca:3\", \" longbench : 1 : offline\"], "
					"\"truncate\": true, \"num_requests\": 4000}}");
	struct config c;
	config_init(&c);
	ck_assert_int_eq(config_load_json(&c, cf, &e), 0);
	ck_assert_str_eq(config_str(&c, "workload.mix"), "alpaca:3, longbench : 1 : offline");
	ck_assert_int_eq(workload_build(&c, NULL, 1, &w, &e), 0);
	size_t noff = 0;
	for (size_t i = 0; i < w.n; i++)
		noff += w.req[i].task == TASK_OFFLINE;
	ck_assert_double_eq_tol(noff / 4000.0, 0.25, 0.03);
	workload_release(&w);
	config_release(&c);
	free(cf);
	const char *bad[][3] = {
		{"workload.mix=alpaca:-1", NULL, NULL},
		{"workload.mix=alpaca:1:batch", NULL, NULL},
		{"workload.mix=alpaca:x", NULL, NULL},
		{"workload.mix=alpaca,,longbench", NULL, NULL},
		{"workload.mix=alpaca", "workload.lengths=lognormal", NULL},
		{"workload.mix=azure-conv", "workload.arrival=trace", NULL}, /* no trace given */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(build(&w, 1 << 20, NULL, 9, bad[i], &e), -1);
		ck_assert_int_eq(e.code, BS_EXIT_INPUT);
		ck_assert_str_ne(e.field, "");
	}
	/* With a mix, a trace given supplies only its timestamps (when it has them). */
	ck_assert_int_eq(build(&w, 1 << 20, "alpaca", 9, m2, &e), 0);
	ck_assert_int_eq(w.n, 15000);
	ck_assert_str_eq(w.source, "mix alpaca,sharegpt");
	ck_assert_str_eq(w.arrival, "poisson rate=1 req/s");
	workload_release(&w);
	ck_assert_int_eq(build(&w, 1 << 20, "azure-code", 9, m2, &e), 0);
	ck_assert_int_eq(w.n, 8819);
	ck_assert_str_eq(w.source, "mix alpaca,sharegpt; arrivals of azure-code");
	ck_assert_int_eq(w.req[1].arrival_ns, 52000000);
	ck_assert_int_le(w.req[1].prompt_tokens, 3973);
	workload_release(&w);
	const char *m3[] = {"workload.mix=alpaca,nosuchtrace", NULL};
	ck_assert_int_eq(build(&w, 1 << 20, NULL, 9, m3, &e), -1);
	/* an entry that names no trace is an error of workload.mix, naming the entry */
	ck_assert_str_eq(e.field, "workload.mix");
	ck_assert_str_eq(e.msg, "entry 2 ('nosuchtrace'): no such file and no bundled trace of "
			 "that name (bundled: alpaca, alpaca-outputs, longbench, azure-conv, "
			 "azure-code, mooncake-conv, mooncake-synthetic, sharegpt, arxiv)");
}
END_TEST

START_TEST(tasks_and_priorities)
{
	char *p = write_tmp("tp.csv", "prompt_tokens,output_tokens,task,priority,prefix_group,"
				      "prefix_tokens\n"
				      "10,1,offline,3,0,8\n10,1,,,,\n10,1,online,1,0,8\n");
	struct workload w;
	struct bs_err e;
	ck_assert_int_eq(build(&w, 100, p, 1, NULL, &e), 0);
	ck_assert_int_eq(w.req[0].task, TASK_OFFLINE);
	ck_assert_int_eq(w.req[0].priority, 3);
	ck_assert_int_eq(w.req[0].prefix_group, 0);
	ck_assert_int_eq(w.req[0].prefix_tokens, 8);
	ck_assert_int_eq(w.req[1].task, TASK_ONLINE);
	ck_assert_int_eq(w.req[1].priority, 0);
	ck_assert_int_eq(w.req[1].prefix_group, -1);
	ck_assert_int_eq(w.req[1].prefix_tokens, 0);
	workload_release(&w);
	const char *pt[] = {"workload.priority=task", NULL};
	ck_assert_int_eq(build(&w, 100, p, 1, pt, &e), 0);
	ck_assert_int_eq(w.req[0].priority, 1);
	ck_assert_int_eq(w.req[2].priority, 0);
	workload_release(&w);
	const char *off[] = {"workload.task=offline", "workload.priority=task", NULL};
	ck_assert_int_eq(build(&w, 100, p, 1, off, &e), 0);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(w.req[i].task, TASK_OFFLINE);
		ck_assert_int_eq(w.req[i].priority, 1);
	}
	workload_release(&w);
	const char *rnd[] = {"workload.task=random", "workload.offline_fraction=0.3",
			     "workload.priority=random", "workload.priority_weights=0,1,3",
			     "workload.lengths=constant", "workload.num_requests=100000", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 1, rnd, &e), 0);
	size_t noff = 0, lv[3] = {0};
	for (size_t i = 0; i < w.n; i++) {
		noff += w.req[i].task == TASK_OFFLINE;
		ck_assert_int_le(w.req[i].priority, 2);
		lv[w.req[i].priority]++;
	}
	ck_assert_double_eq_tol(noff / 1e5, 0.3, 0.01);
	ck_assert_int_eq(lv[0], 0);
	ck_assert_double_eq_tol(lv[2] / 1e5, 0.75, 0.01);
	workload_release(&w);
	const char *bw[] = {"workload.priority=random", "workload.priority_weights=0,0", NULL};
	ck_assert_int_eq(build(&w, 4096, NULL, 1, bw, &e), -1);
	ck_assert_str_eq(e.field, "workload.priority_weights");
	free(p);
}
END_TEST

START_TEST(trace_order_and_size)
{
	struct workload w;
	struct bs_err e;
	const char *s[] = {"workload.num_requests=12000", NULL};
	ck_assert_int_eq(build(&w, 1 << 20, "alpaca", 1, s, &e), 0);
	ck_assert_int_eq(w.n, 12000);
	for (size_t i = 0; i < 2000; i++) {
		ck_assert_int_eq(w.req[i].prompt_tokens, w.req[i + 5000].prompt_tokens);
		ck_assert_int_eq(w.req[i].output_tokens, w.req[i + 10000].output_tokens);
	}
	workload_release(&w);
	ck_assert_uint_eq(sizeof(struct req_spec), 32);
}
END_TEST

START_TEST(million_requests)
{
	struct workload w;
	struct bs_err e;
	const char *s[] = {"workload.lengths=empirical", "workload.num_requests=1000000", NULL};
	ck_assert_int_eq(build(&w, 1 << 20, "alpaca", 1, s, &e), 0);
	ck_assert_int_eq(w.n, 1000000);
	ck_assert_int_gt(w.req[w.n - 1].arrival_ns, 900000LL * 1000000000LL);
	workload_release(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workload");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, bundled_row_counts);
	tcase_add_test(tc, bundled_statistics);
	tcase_add_test(tc, csv_all_columns);
	tcase_add_test(tc, csv_malformed);
	tcase_add_test(tc, bom_quoted_header_in_two);
	tcase_add_test(tc, csv_physical_lines);
	tcase_add_test(tc, csv_fast_path_equals_reference);
	tcase_add_test(tc, csv_nul_rejected);
	tcase_add_test(tc, csv_long_text);
	tcase_add_test(tc, csv_lenient_numbers);
	tcase_add_test(tc, timestamp_range);
	tcase_add_test(tc, foreign_formats);
	tcase_add_test(tc, time_range);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, sort_arrivals);
	tcase_add_test(tc, jsonl);
	tcase_add_test(tc, jsonl_malformed);
	tcase_add_test(tc, length_rules_exact);
	tcase_add_test(tc, eval_cap_longbench);
	tcase_add_test(tc, poisson_and_gamma);
	tcase_add_test(tc, length_distributions);
	tcase_add_test(tc, empirical_resamples_rows);
	tcase_add_test(tc, determinism_and_streams);
	tcase_add_test(tc, stream_seeds);
	tcase_add_test(tc, trace_timestamps);
	tcase_add_test(tc, mix);
	tcase_add_test(tc, tasks_and_priorities);
	tcase_add_test(tc, trace_order_and_size);
	tcase_add_test(tc, million_requests);
	tcase_add_test(tc, random_dataset);
	suite_add_tcase(s, tc);
	return check_run(s);
}
