/*
 * check_trace: the CSV trace reader in two parts on two threads (workloads/trace.c, load_csv)
 * against its reference, one parser on one thread (trace_reference_read).  For every input the
 * two readings must give the same rows, bit for bit, or the same error (file, line, field,
 * message): the fuzzers' corpus and past crashes, the bundled traces, and random traces of
 * quoted fields with newlines and commas, CRLF, blank lines and errors in either part, each
 * split at every line start.  Then the cases worked out by hand: when the second part is kept,
 * when it is not, and the line an error names.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/embed.h"
#include "tests/check_main.h"
#include "workloads/trace_int.h"

#define SAME_COL(x, y, col, n)                                                               \
	ck_assert(((x)->col == NULL && (y)->col == NULL) ||                                  \
		  ((x)->col && (y)->col && !memcmp((x)->col, (y)->col, (n) * sizeof *(x)->col)))

static void same_result(int ra, const struct trace *a, const struct bs_err *ea, int rb,
			const struct trace *b, const struct bs_err *eb)
{
	ck_assert_int_eq(ra, rb);
	ck_assert_int_eq(ea->code, eb->code);
	ck_assert_str_eq(ea->file, eb->file);
	ck_assert_int_eq(ea->line, eb->line);
	ck_assert_str_eq(ea->field, eb->field);
	ck_assert_str_eq(ea->msg, eb->msg);
	if (ra == 0) {
		ck_assert_uint_eq(a->n, b->n);
		SAME_COL(a, b, prompt, a->n);
		SAME_COL(a, b, output, a->n);
		SAME_COL(a, b, arrival_s, a->n);
		SAME_COL(a, b, priority, a->n);
		SAME_COL(a, b, task, a->n);
		SAME_COL(a, b, prefix_group, a->n);
		SAME_COL(a, b, prefix_tokens, a->n);
		SAME_COL(a, b, max_new, a->n);
		SAME_COL(a, b, recno, a->n);
		ck_assert_int_eq(a->sorted, b->sorted);
		ck_assert_str_eq(a->prompt_col, b->prompt_col);
		ck_assert_str_eq(a->output_col, b->output_col);
	}
}

/* The reading split at SPLIT against the reading in one part; returns the split's parts. */
static int split_vs_reference(const char *buf, size_t len, size_t split, bool sort,
			      bool outputs_only_ok)
{
	struct trace a, b;
	struct bs_err ea = {0}, eb = {0};
	int pa = 0, pb = 0;
	int ra = trace_load_csv_split("t.csv", buf, len, split, sort, outputs_only_ok, &a, &ea,
				      &pa);
	int rb = trace_load_csv_split("t.csv", buf, len, len, sort, outputs_only_ok, &b, &eb,
				      &pb);
	ck_assert_int_eq(pb, 1);
	same_result(ra, &a, &ea, rb, &b, &eb);
	if (ra == 0) {
		trace_release(&a);
		trace_release(&b);
	}
	return pa;
}

/* Every line start of BUF as the split (the header's included: the second part then starts
 * right after it), with the sort and outputs-only switches both off and both on (as the fuzzer
 * reads) at alternate splits; returns how many splits kept the second part. */
static int every_split(const char *buf, size_t len)
{
	int kept = 0, k = 0;
	for (size_t s = 0; s <= len; s++) {
		if (s > 0 && buf[s - 1] != '\n')
			continue;
		bool mode = k++ % 2;
		kept += split_vs_reference(buf, len, s, mode, mode) == 2;
	}
	return kept;
}

/* Every byte of PATH (read_file would stop after a NUL byte, which some inputs hold). */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s", path);
	size_t cap = 1 << 16, n = 0, r;
	char *buf = xmalloc(cap + 1);
	while ((r = fread(buf + n, 1, cap - n, f)) > 0)
		if ((n += r) == cap)
			buf = xrealloc(buf, (cap *= 2) + 1);
	ck_assert(!ferror(f));
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* The fuzzers' seeds and every past crash input (the existing trace inputs: the suites' cases
 * were its seeds). */
START_TEST(split_equals_reference_on_corpus)
{
	static const char *const dirs[] = {"tests/fuzz/corpus/trace_csv",
					   "tests/fuzz/crashes/trace_csv"};
	size_t files = 0;
	int kept = 0;
	for (size_t k = 0; k < 2; k++) {
		DIR *d = opendir(dirs[k]);
		ck_assert_msg(d != NULL, "%s (run from the repository's root)", dirs[k]);
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char *p = xasprintf("%s/%s", dirs[k], de->d_name);
			size_t len;
			char *buf = read_all(p, &len);
			kept += every_split(buf, len);
			files++;
			free(buf);
			free(p);
		}
		closedir(d);
	}
	ck_assert_uint_gt(files, 200);
	ck_assert_int_gt(kept, 100); /* the clean inputs do use the second part */
}
END_TEST

/* The bundled traces, split at the middle (as trace_load splits) and at nine other points. */
START_TEST(split_equals_reference_on_bundled)
{
	for (const struct bundled_trace *b = bundled_traces; b->name; b++) {
		const struct embedded_file *f = embedded_find(b->path);
		ck_assert_ptr_nonnull(f);
		for (size_t k = 0; k <= 10; k++) {
			size_t split = k == 10 ? f->size / 2 : f->size * k / 10;
			int parts = split_vs_reference((const char *)f->data, f->size, split, false,
						       true);
			ck_assert_int_eq(parts, 2);
		}
	}
}
END_TEST

static unsigned long long rng_x = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
	rng_x ^= rng_x << 13;
	rng_x ^= rng_x >> 7;
	rng_x ^= rng_x << 17;
	return (unsigned)(rng_x % n);
}

struct text {
	char *s;
	size_t n;
};
static void put(struct text *t, const char *s, size_t n)
{
	t->s = xrealloc(t->s, t->n + n + 1);
	memcpy(t->s + t->n, s, n);
	t->n += n;
	t->s[t->n] = 0;
}
static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

/* A random trace: a header of known and unknown columns, then rows of mostly good values, with
 * quoted fields (holding newlines, commas and doubled quotes), CRLF or LF line ends, blank and
 * blank-looking lines, and now and then an error (a bad value, a field too many or too few, a bad
 * or unterminated quote, a NUL byte, a timestamp going back). */
static char *random_trace(size_t *len, int bad_per_mille)
{
	static const char *const cols[] = {"arrival_time_s", "prompt_tokens", "output_tokens",
					   "priority", "task", "id", "note", "max_new_tokens"};
	struct text t = {NULL, 0};
	int ncol = 8;
	bool crlf = rnd(3) == 0;
	const char *eol = crlf ? "\r\n" : "\n";
	for (int c = 0; c < ncol; c++) {
		if (c)
			puts_(&t, ",");
		puts_(&t, c == 6 && rnd(2) ? "\"no\nte\"" : cols[c]);
	}
	puts_(&t, eol);
	int rows = 20 + (int)rnd(40);
	double arr = 0;
	for (int r = 0; r < rows; r++) {
		unsigned k = rnd(100);
		if (k < 5) {
			puts_(&t, k < 2 ? eol : k < 4 ? " \t\n" : "\r\n");
			continue;
		}
		arr += rnd(1000) / 1000.0;
		for (int c = 0; c < ncol; c++) {
			char f[64];
			switch (c) {
			case 0:
				snprintf(f, sizeof f, "%.3f", arr);
				break;
			case 1:
			case 2:
			case 7:
				snprintf(f, sizeof f, "%u", 1 + rnd(3000));
				break;
			case 3:
				snprintf(f, sizeof f, "%s", rnd(2) ? "" : "3");
				break;
			case 4:
				snprintf(f, sizeof f, "%s", rnd(2) ? "online" : "offline");
				break;
			case 5:
				snprintf(f, sizeof f, "r%d", r);
				break;
			default:
				switch (rnd(6)) {
				case 0:
					snprintf(f, sizeof f, "\"multi\nline\r\n\nnote\"");
					break;
				case 1:
					snprintf(f, sizeof f, "\"a,b \"\"q\"\"\"");
					break;
				case 2:
					snprintf(f, sizeof f, "\"\n%s\"", cols[rnd(8)]);
					break;
				default:
					snprintf(f, sizeof f, "x%u", rnd(100));
				}
			}
			if ((int)rnd(1000) < bad_per_mille) {
				static const char *const bad[] = {"-4", "1x", "\"unterminated", "a\"b",
								  "0x10", "1,2", "\"q\"x", ""};
				unsigned b = rnd(9);
				if (b < 8) {
					snprintf(f, sizeof f, "%s", bad[b]);
				} else {
					put(&t, "1\0", 2); /* a NUL byte in a value */
					f[0] = 0;
				}
			}
			if (c == 0 && (int)rnd(1000) < bad_per_mille)
				snprintf(f, sizeof f, "%.3f", arr > 5 ? arr - 5 : 0.0); /* goes back */
			if (c)
				puts_(&t, ",");
			puts_(&t, f);
		}
		if (rnd(200) == 0)
			puts_(&t, ",extra");
		if (r < rows - 1 || rnd(2))
			puts_(&t, eol);
	}
	*len = t.n;
	return t.s;
}

START_TEST(split_equals_reference_on_random_traces)
{
	int kept = 0, errors = 0;
	for (int i = 0; i < 160; i++) {
		size_t len;
		char *buf = random_trace(&len, i % 4 == 0 ? 0 : i % 4 == 1 ? 2 : 20);
		kept += every_split(buf, len);
		struct trace t;
		struct bs_err e = {0};
		if (trace_load_csv_split("t.csv", buf, len, len, false, false, &t, &e, NULL) == 0)
			trace_release(&t);
		else
			errors++;
		free(buf);
	}
	/* Both kinds of input were made: readings with an error and readings that kept the second
	 * part. */
	ck_assert_int_gt(errors, 40);
	ck_assert_int_gt(kept, 400);
}
END_TEST

/* The per-field fast path (numbers parsed in place, a task's exact name) against every value
 * through the general path (util_reference_parse), on the random traces. */
START_TEST(fast_fields_equal_general_path_on_random_traces)
{
	int errors = 0;
	for (int i = 0; i < 300; i++) {
		size_t len;
		char *buf = random_trace(&len, i % 2 ? 0 : 10);
		for (int mode = 0; mode < 2; mode++) {
			struct trace a, b;
			struct bs_err ea = {0}, eb = {0};
			int ra = trace_load_csv_split("t.csv", buf, len, len, mode, mode, &a, &ea,
						      NULL);
			util_reference_parse = true;
			int rb = trace_load_csv_split("t.csv", buf, len, len, mode, mode, &b, &eb,
						      NULL);
			util_reference_parse = false;
			same_result(ra, &a, &ea, rb, &b, &eb);
			if (ra == 0) {
				trace_release(&a);
				trace_release(&b);
			} else {
				errors++;
			}
		}
		free(buf);
	}
	ck_assert_int_gt(errors, 100);
	ck_assert_int_lt(errors, 500);
}
END_TEST

/* The number fast path on a span: a run of 8 to 16 digits (a point and a sign in some) with one
 * byte replaced by each of the 256 values, at each place, is taken exactly when it is a plain
 * decimal of at most 15 digits, and then gives strtod's value. */
START_TEST(fast_numbers_with_one_odd_byte)
{
	static const char *const base[] = {"12345678", "123456789012345", "1234.567890123",
					   "98765432.1234567", "-1234567.89012345"};
	for (size_t b = 0; b < sizeof base / sizeof *base; b++) {
		size_t n = strlen(base[b]);
		for (size_t at = 0; at < n; at++) {
			for (int c = 0; c < 256; c++) {
				char s[32];
				memcpy(s, base[b], n);
				s[at] = (char)c;
				double d1 = -1, d2 = -1;
				bool f = parse_f64_span(s, n, -1e300, 1e300, &d1);
				util_reference_parse = true;
				char z[33], why[128];
				memcpy(z, s, n);
				z[n] = 0;
				bool g = memchr(z, 0, n) == NULL &&
					 parse_f64(z, -1e300, 1e300, &d2, why, sizeof why) == 0;
				util_reference_parse = false;
				/* Taken only for plain decimals, and then exactly strtod's value. */
				if (f)
					ck_assert_msg(g && d1 == d2, "'%s': %.17g vs %.17g", z, d1, d2);
				/* Plain: an optional '-', 1+ digits, optionally '.' and 1+ digits, at
				 * most 15 digits in all. */
				size_t k = s[0] == '-', ip = 0, fp = 0;
				for (; k < n && s[k] >= '0' && s[k] <= '9'; k++)
					ip++;
				bool point = k < n && s[k] == '.';
				for (k += point; k < n && s[k] >= '0' && s[k] <= '9'; k++)
					fp++;
				bool plain = k == n && ip > 0 && (!point || fp > 0) && ip + fp <= 15;
				ck_assert_msg(f == plain,
					      "'%s' taken %d", z, f);
			}
		}
	}
}
END_TEST

/* Worked out by hand.  Lines: 1 header, 2 and 3 rows, 4 a row whose quoted note holds a
 * newline (the record goes on to line 5), 6 a row. */
static const char hand[] = "prompt_tokens,output_tokens,note\n"
			   "1,2,a\n"
			   "3,4,b\n"
			   "5,6,\"x\n"
			   "y\"\n"
			   "7,8,c\n";

START_TEST(split_kept_only_between_records)
{
	size_t len = strlen(hand);
	const char *line3 = strstr(hand, "3,4"), *line5 = strstr(hand, "y\"");
	const char *line6 = strstr(hand, "7,8");
	/* At the start of line 3 the first part has ended a record: kept. */
	ck_assert_int_eq(split_vs_reference(hand, len, (size_t)(line3 - hand), false, false), 2);
	ck_assert_int_eq(split_vs_reference(hand, len, (size_t)(line6 - hand), false, false), 2);
	/* Line 5 begins inside the quoted note of line 4's record: one parser reads on. */
	ck_assert_int_eq(split_vs_reference(hand, len, (size_t)(line5 - hand), false, false), 1);
	/* A second part that reads cleanly on its own (blank lines) but begins inside the first
	 * part's quoted field (opened on line 2, never closed): not kept, and the error is the
	 * reference's, on line 2. */
	static const char open_q[] = "prompt_tokens,output_tokens,note\n1,2,\"x\n\n\n";
	struct trace t;
	struct bs_err e = {0};
	int parts = 0;
	ck_assert_int_eq(trace_load_csv_split("t.csv", open_q, strlen(open_q), strlen(open_q) - 1,
					      false, false, &t, &e, &parts), -1);
	ck_assert_int_eq(parts, 1);
	ck_assert_int_eq(e.line, 2);
	ck_assert_str_eq(e.msg, "malformed CSV (unterminated quoted field at end of file)");
	ck_assert_int_eq(split_vs_reference(open_q, strlen(open_q), strlen(open_q) - 1, false,
					    false), 1);
	/* A split in the middle of line 3 moves to the start of line 4. */
	memset(&e, 0, sizeof e);
	ck_assert_int_eq(trace_load_csv_split("t.csv", hand, len, (size_t)(line3 - hand) + 2,
					      false, false, &t, &e, &parts), 0);
	ck_assert_int_eq(parts, 2);
	ck_assert_uint_eq(t.n, 4);
	static const uint32_t lines[] = {2, 3, 4, 6};
	static const int32_t prompt[] = {1, 3, 5, 7};
	for (size_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(t.recno[i], lines[i]);
		ck_assert_int_eq(t.prompt[i], prompt[i]);
		ck_assert_int_eq(t.output[i], prompt[i] + 1);
	}
	trace_release(&t);
}
END_TEST

/* An error in either part is the first in the file, on its line. */
START_TEST(split_first_error_in_file_order)
{
	/* Lines 3 and 6 are bad; split before line 5: the first part's error (line 3) wins. */
	static const char two[] = "prompt_tokens,output_tokens\n"
				  "1,2\n"
				  "-3,4\n"
				  "\n"
				  "5,6\n"
				  "7,x\n";
	size_t len = strlen(two);
	for (size_t s = 0; s <= len; s++) {
		struct trace t;
		struct bs_err e = {0};
		int parts = 0;
		ck_assert_int_eq(trace_load_csv_split("t.csv", two, len, s, false, false, &t, &e,
						      &parts), -1);
		ck_assert_int_eq(parts, 1);
		ck_assert_int_eq(e.line, 3);
		ck_assert_str_eq(e.field, "prompt_tokens");
		ck_assert_str_eq(e.msg, "expected a positive integer, got '-3'");
	}
	/* Only the second part is bad (line 6, after a blank line 4): its line is the file's. */
	static const char one[] = "prompt_tokens,output_tokens\n"
				  "1,2\n"
				  "3,4\n"
				  "\n"
				  "5,6\n"
				  "7,x\n";
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load_csv_split("t.csv", one, strlen(one), strstr(one, "5,6") - one,
					      false, false, &t, &e, NULL), -1);
	ck_assert_int_eq(e.line, 6);
	ck_assert_str_eq(e.field, "output_tokens");
	ck_assert_str_eq(e.msg, "expected a non-negative integer, got 'x'");
}
END_TEST

/* A timestamp that goes back across the split: an error naming the second part's first row,
 * or with sorting, the rows sorted. */
START_TEST(split_arrival_order_across_parts)
{
	static const char back[] = "arrival_time_s,prompt_tokens,output_tokens\n"
				   "1.5,1,1\n"
				   "2.5,2,2\n"
				   "2.0,3,3\n"
				   "3.0,4,4\n";
	size_t len = strlen(back), s = (size_t)(strstr(back, "2.0,") - back);
	struct trace t;
	struct bs_err e = {0};
	int parts = 0;
	ck_assert_int_eq(trace_load_csv_split("t.csv", back, len, s, false, false, &t, &e, &parts),
			 -1);
	ck_assert_int_eq(parts, 1);
	ck_assert_int_eq(e.line, 4);
	ck_assert_str_eq(e.field, "arrival_time_s");
	ck_assert_ptr_nonnull(strstr(e.msg, "2 s is earlier than the previous record's 2.5 s"));
	ck_assert_int_eq(trace_load_csv_split("t.csv", back, len, s, true, false, &t, &e, &parts),
			 0);
	ck_assert_int_eq(parts, 2);
	ck_assert(t.sorted);
	static const int32_t prompt[] = {1, 3, 2, 4};
	static const uint32_t lines[] = {2, 4, 3, 5};
	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(t.prompt[i], prompt[i]);
		ck_assert_uint_eq(t.recno[i], lines[i]);
	}
	trace_release(&t);
}
END_TEST

/* trace_load of a file above trace_split_min reads it in two and gives the reference's rows. */
START_TEST(trace_load_file_in_two)
{
	char dir[] = "/tmp/bs_trXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *p = xasprintf("%s/big.csv", dir);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs("arrival_time_s,prompt_tokens,output_tokens\n", f);
	size_t rows = 40000;
	for (size_t i = 0; i < rows; i++)
		fprintf(f, "%zu.%03zu,%zu,%zu\n", i / 10, i % 10 * 100, 1 + i % 977, i % 313);
	ck_assert_int_eq(fclose(f), 0);
	size_t len;
	char *buf = read_all(p, &len);
	ck_assert_uint_ge(len, trace_split_min);
	ck_assert_int_eq(split_vs_reference(buf, len, len / 2, false, false), 2);
	struct trace a, b;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, false, false, &a, &e), 0);
	trace_reference_read = true;
	ck_assert_int_eq(trace_load(p, false, false, &b, &e), 0);
	trace_reference_read = false;
	ck_assert_uint_eq(a.n, rows);
	ck_assert_uint_eq(b.n, rows);
	SAME_COL(&a, &b, prompt, rows);
	SAME_COL(&a, &b, output, rows);
	SAME_COL(&a, &b, arrival_s, rows);
	SAME_COL(&a, &b, recno, rows);
	ck_assert_uint_eq(a.recno[rows - 1], rows + 1);
	ck_assert_int_eq(a.prompt[rows - 1], 1 + (int)((rows - 1) % 977));
	trace_release(&a);
	trace_release(&b);
	free(buf);
	remove(p);
	remove(dir);
	free(p);
}
END_TEST

/* The error of trace_load on the file DIR/NAME holding LEN bytes of TEXT (LEN 0: strlen). */
static void load_error(const char *dir, const char *name, const char *text, size_t len,
		       long line, const char *field, const char *msg)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	len = len ? len : strlen(text);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	struct trace t;
	struct bs_err e = {0};
	ck_assert_int_eq(trace_load(p, false, false, &t, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.file, p);
	ck_assert_int_eq(e.line, line);
	ck_assert_str_eq(e.field, field);
	ck_assert_str_eq(e.msg, msg);
	remove(p);
	free(p);
}

/* A NUL byte anywhere stops the reading with the error of its line and column, in CSV (the
 * first byte, the header, a value, past the middle of a file read in two) and in JSON (cJSON
 * would take it for a blank); a record longer than BS_RECORD_MAX is an error at its line. */
START_TEST(nul_and_long_records)
{
	char dir[] = "/tmp/bs_trXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	load_error(dir, "a.csv", "\0prompt_tokens,output_tokens\n1,2\n", 33, 1, "",
		   "NUL byte in the header");
	load_error(dir, "b.csv", "\n\nprompt_tokens,out\0put_tokens\n1,2\n", 35, 3, "",
		   "NUL byte in the header");
	load_error(dir, "c.csv", "prompt_tokens,output_tokens,note\n1,2,\"x\ny\0\"\n", 44, 2,
		   "note", "NUL byte in the value");
	load_error(dir, "d.jsonl", "{\"prompt_tokens\": 1, \"output_tokens\": 2}\n"
		   "{\"prompt_tokens\": 1, \"output_tokens\":\0 2}\n", 82, 2, "",
		   "NUL byte at column 38");
	load_error(dir, "e.json", "[{\"prompt_tokens\": 1,\n\"output_tokens\": 2}\0]", 43, 2, "",
		   "NUL byte at column 20");
	/* 40000 rows (above trace_split_min) and a NUL past the middle, then a long tail. */
	size_t rows = 40000, cap = 64 * rows + ((size_t)1 << 20);
	char *big = xmalloc(cap);
	size_t n = (size_t)snprintf(big, cap, "prompt_tokens,output_tokens,note\n");
	for (size_t i = 0; i < rows; i++)
		n += (size_t)snprintf(big + n, cap - n, "%zu,%zu,%s\n", 1 + i % 977, i % 313,
				      i == 30000 ? "ab\001" : "x");
	char *z = strchr(big, '\001');
	*z = 0;
	memset(big + n, 'x', cap - n);
	load_error(dir, "f.csv", big, cap, 30002, "note", "NUL byte in the value");
	/* A record over BS_RECORD_MAX: one line, or quoted lines, past the middle. */
	*z = 'c';
	size_t m = n;
	m += (size_t)snprintf(big + m, cap - m, "1,1,\"");
	char *tail = xmalloc(m + BS_RECORD_MAX + 64);
	memcpy(tail, big, m);
	memset(tail + m, 'y', BS_RECORD_MAX);
	for (size_t i = m + 100; i < m + BS_RECORD_MAX; i += 1000)
		tail[i] = '\n';
	memcpy(tail + m + BS_RECORD_MAX, "\"\n1,1,x\n", 8);
	load_error(dir, "g.csv", tail, m + BS_RECORD_MAX + 8, (long)rows + 2, "",
		   "record longer than the limit of 16 MiB");
	/* Just within the limit: read. */
	size_t k = BS_RECORD_MAX - 64;
	memcpy(tail + m + k, "\"\n1,1,x\n", 8);
	char *p = xasprintf("%s/h.csv", dir);
	FILE *f = fopen(p, "wb");
	ck_assert_uint_eq(fwrite(tail, 1, m + k + 8, f), m + k + 8);
	ck_assert_int_eq(fclose(f), 0);
	struct trace t;
	struct bs_err e = {0};
	ck_assert_msg(trace_load(p, false, false, &t, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(t.n, rows + 2);
	trace_release(&t);
	remove(p);
	free(p);
	free(tail);
	free(big);
	remove(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("split");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, split_equals_reference_on_corpus);
	tcase_add_test(tc, split_equals_reference_on_bundled);
	tcase_add_test(tc, split_equals_reference_on_random_traces);
	tcase_add_test(tc, fast_fields_equal_general_path_on_random_traces);
	tcase_add_test(tc, fast_numbers_with_one_odd_byte);
	tcase_add_test(tc, split_kept_only_between_records);
	tcase_add_test(tc, split_first_error_in_file_order);
	tcase_add_test(tc, split_arrival_order_across_parts);
	tcase_add_test(tc, trace_load_file_in_two);
	tcase_add_test(tc, nul_and_long_records);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
