/*
 * trace: see trace_int.h.  The column names, the per-field validators and the rows
 * (trace_load_int.h), the CSV reader (libcsv, strict mode; records counted in the
 * end-of-record callback; a file read in blocks as it is parsed, a large input in two parts on
 * two threads, see load_csv), sorting, Mooncake prefixes and the entry points.  JSON is read by
 * trace_json.c through the same validators, so a value means the same in either format.
 */
#include "workloads/trace_int.h"
#include "workloads/trace_load_int.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim/embed.h"
#include "workloads/workload.h"

const struct bundled_trace bundled_traces[] = {
	{"alpaca", "workloads/data/alpaca.csv", 5000, false,
	 "Stanford Alpaca records 0-4999, template prompt, Llama-2 tokens (short)"},
	{"alpaca-outputs", "workloads/data/alpaca_outputs_20k.csv", 20000, false,
	 "output lengths only of a random 20k Alpaca sample (use as workload.output_trace)"},
	{"longbench", "workloads/data/longbench.csv", 4750, false,
	 "LongBench v1, 21 tasks, untruncated prompts (18 tasks estimated), max_new_tokens"},
	{"azure-conv", "workloads/data/azure2023_conv.csv", 19366, true,
	 "Azure LLM inference 2023, conversation, 1 h of real arrivals"},
	{"azure-code", "workloads/data/azure2023_code.csv", 8819, true,
	 "Azure LLM inference 2023, code, 1 h of real arrivals"},
	{"mooncake-conv", "workloads/data/mooncake_conversation.csv", 12031, true,
	 "Mooncake (Kimi) FAST'25 conversation trace, 1 h of real arrivals"},
	{"mooncake-synthetic", "workloads/data/mooncake_synthetic.csv", 3993, true,
	 "Mooncake FAST'25 synthetic trace (Poisson arrivals)"},
	{"sharegpt", "workloads/data/sharegpt_llama2_10k.csv", 10000, false,
	 "ShareGPT 10k validation sample, Llama-2 tokens, total <= 4k"},
	{"arxiv", "workloads/data/arxiv_summarization_llama2.csv", 28257, false,
	 "arXiv summarization, Llama-2 tokens, total <= 4096 (long prompts)"},
	{NULL, NULL, 0, false, NULL},
};

const struct bundled_trace *trace_bundled_find(const char *name)
{
	for (const struct bundled_trace *b = bundled_traces; b->name; b++)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

/* Mooncake's hash_ids name blocks of this many prompt tokens (kvcache-ai/Mooncake,
 * FAST25-release/traces: "block_size 512"). */
#define MOONCAKE_BLOCK_TOKENS 512
/* Most rows a trace may have (as workload.num_requests). */
#define TRACE_MAX_ROWS 100000000

/* Recognised column names (the bundled files' own names included), with the seconds one unit of
 * an arrival column is.  Anything else is ignored.  The other simulators' formats:
 *   Vidur (microsoft/vidur, TraceRequestGenerator): arrived_at (s), num_prefill_tokens,
 *     num_decode_tokens;
 *   Mooncake (kvcache-ai/Mooncake FAST25-release traces, JSON Lines): timestamp (ms),
 *     input_length, output_length, hash_ids;
 *   vllm bench serve's per-request records (vllm/benchmarks/serve.py): start_time (s, from an
 *     arbitrary origin: made relative to the first row), prompt_len, output_tokens. */
static const struct {
	const char *name;
	enum col col;
	double unit_s;
} col_names[] = {
	{"prompt_tokens", COL_PROMPT, 0},   {"input_tokens", COL_PROMPT, 0},
	{"prompt_len", COL_PROMPT, 0},      {"num_prefill_tokens", COL_PROMPT, 0},
	{"input_length", COL_PROMPT, 0},    {"output_tokens", COL_OUTPUT, 0},
	{"output_len", COL_OUTPUT, 0},      {"num_decode_tokens", COL_OUTPUT, 0},
	{"output_length", COL_OUTPUT, 0},   {"arrival_time_s", COL_ARRIVAL, 1},
	{"arrived_at", COL_ARRIVAL, 1},     {"timestamp", COL_ARRIVAL, 1e-3},
	{"start_time", COL_ARRIVAL, 1},
	{"id", COL_ID, 0},                  {"priority", COL_PRIORITY, 0},
	{"task", COL_TASK, 0},              {"prefix_group", COL_PREFIX_GROUP, 0},
	{"prefix_tokens", COL_PREFIX_TOKENS, 0}, {"max_new_tokens", COL_MAX_NEW, 0},
	{"hash_ids", COL_HASH_IDS, 0},
};

static int col_index(const char *name)
{
	for (size_t i = 0; i < sizeof col_names / sizeof col_names[0]; i++)
		if (!strcmp(col_names[i].name, name))
			return (int)i;
	return -1;
}

enum col tl_col_lookup(const char *name)
{
	int i = col_index(name);
	return i < 0 ? COL_IGNORE : col_names[i].col;
}

int tl_err(struct loader *L, enum col c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	L->failed = true;
	return bs_errf(L->err, BS_EXIT_INPUT, L->t->name, L->record,
		       c == COL_IGNORE ? NULL : L->colname[c], "%s", msg);
}

/* Grows every present column to hold one more row. */
static void grow(struct loader *L)
{
	struct trace *t = L->t;
	if (t->n < L->cap)
		return;
	L->cap = L->cap ? L->cap * 2 : 4096;
	t->output = xrealloc(t->output, L->cap * sizeof *t->output);
	t->recno = xrealloc(t->recno, L->cap * sizeof *t->recno);
	if (L->has[COL_PROMPT])
		t->prompt = xrealloc(t->prompt, L->cap * sizeof *t->prompt);
	if (L->has[COL_ARRIVAL])
		t->arrival_s = xrealloc(t->arrival_s, L->cap * sizeof *t->arrival_s);
	if (L->has[COL_PRIORITY])
		t->priority = xrealloc(t->priority, L->cap);
	if (L->has[COL_TASK])
		t->task = xrealloc(t->task, L->cap);
	if (L->has[COL_PREFIX_GROUP])
		t->prefix_group = xrealloc(t->prefix_group, L->cap * sizeof(int32_t));
	if (L->has[COL_PREFIX_TOKENS])
		t->prefix_tokens = xrealloc(t->prefix_tokens, L->cap * sizeof(int32_t));
	if (L->has[COL_MAX_NEW])
		t->max_new = xrealloc(t->max_new, L->cap * sizeof(int32_t));
	if (L->has[COL_HASH_IDS])
		L->hid_n = xrealloc(L->hid_n, L->cap * sizeof *L->hid_n);
}

/* Declares column C present under NAME.  For an optional column first seen after record 1
 * (JSON), the earlier rows get the "not given" value. */
void tl_add_col(struct loader *L, enum col c, const char *name)
{
	struct trace *t = L->t;
	snprintf(L->colname[c], sizeof L->colname[c], "%s", name);
	if (L->has[c])
		return;
	L->has[c] = true;
	size_t cap = L->cap ? L->cap : 1;
	switch (c) {
	case COL_PRIORITY:
		t->priority = xmalloc(cap);
		memset(t->priority, TRACE_UNSET_U8, t->n);
		break;
	case COL_TASK:
		t->task = xmalloc(cap);
		memset(t->task, TRACE_UNSET_U8, t->n);
		break;
	case COL_PREFIX_GROUP:
		t->prefix_group = xmalloc(cap * sizeof(int32_t));
		for (size_t i = 0; i < t->n; i++)
			t->prefix_group[i] = -1;
		break;
	case COL_PREFIX_TOKENS:
		t->prefix_tokens = xcalloc(cap, sizeof(int32_t));
		break;
	case COL_MAX_NEW:
		t->max_new = xcalloc(cap, sizeof(int32_t));
		break;
	case COL_PROMPT:
		t->prompt = xmalloc(cap * sizeof(int32_t));
		break;
	case COL_ARRIVAL:
		t->arrival_s = xmalloc(cap * sizeof(double));
		L->arrival_unit = col_names[col_index(name)].unit_s;
		L->arrival_relative = !strcmp(name, "start_time");
		break;
	case COL_HASH_IDS:
		L->hid_n = xcalloc(cap, sizeof *L->hid_n);
		break;
	default:
		break;
	}
}

const char *tl_short_text(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s);
	if (n < 48)
		return s;
	snprintf(buf, len, "%.40s...", s);
	return buf;
}

/* The integer columns' ranges (PROMPT, OUTPUT, PRIORITY, PREFIX_GROUP, PREFIX_TOKENS, MAX_NEW;
 * the others are not integers). */
static const struct {
	bool integer;
	int64_t min, max;
} col_range[NCOL] = {
	[COL_PROMPT] = {true, 1, INT32_MAX},        [COL_OUTPUT] = {true, 0, INT32_MAX},
	[COL_PRIORITY] = {true, 0, 254},            [COL_PREFIX_GROUP] = {true, -1, INT32_MAX},
	[COL_PREFIX_TOKENS] = {true, 0, INT32_MAX}, [COL_MAX_NEW] = {true, 1, INT32_MAX},
};

/* Validates one value given as text ("" = empty cell) and stores it in the row. */
int tl_set_field(struct loader *L, enum col c, const char *s)
{
	char why[160], sb[64];
	int64_t v = 0;
	double d;
#define shown tl_short_text(s, sb, sizeof sb) /* only on the error paths */
	if (c == COL_IGNORE)
		return 0;
	if (!*s && c != COL_PROMPT && c != COL_OUTPUT && c != COL_ARRIVAL)
		return 0; /* an empty optional cell: not given */
	if (col_range[c].integer &&
	    parse_i64(s, col_range[c].min, col_range[c].max, &v, why, sizeof why)) {
		switch (c) {
		case COL_PROMPT:
		case COL_MAX_NEW:
			return tl_err(L, c, "expected a positive integer, got '%s'", shown);
		case COL_PRIORITY:
			return tl_err(L, c, "expected an integer in [0, 254], got '%s'", shown);
		case COL_PREFIX_GROUP:
			return tl_err(L, c, "expected an integer >= -1 (-1 = none), got '%s'", shown);
		default:
			return tl_err(L, c, "expected a non-negative integer, got '%s'", shown);
		}
	}
	switch (c) {
	case COL_ARRIVAL:
		if (parse_f64(s, 0, DBL_MAX, &d, why, sizeof why))
			return tl_err(L, c, "expected a non-negative number of %s, got '%s'",
				    L->arrival_unit == 1 ? "seconds" : "milliseconds", shown);
		d *= L->arrival_unit;
		if (d > BS_MAX_SECONDS)
			return tl_err(L, c, "%s is beyond the simulator's time range (%.2g s)", shown,
				    BS_MAX_SECONDS);
		L->arrival = d;
		break;
	case COL_TASK:
		if (!strcmp(s, "online"))
			v = TASK_ONLINE;
		else if (!strcmp(s, "offline"))
			v = TASK_OFFLINE;
		else
			return tl_err(L, c, "expected 'online' or 'offline', got '%s'", shown);
		break;
	case COL_ID:
		break;
	default:
		if (!col_range[c].integer)
			return 0;
		break;
	}
	L->given[c] = true;
	L->v[c] = v;
	return 0;
}
#undef shown

/* tl_set_field's fast path for a CSV field S[0..LEN) (not NUL-terminated): a plain decimal in
 * its column's range (parse_i64_span, parse_f64_span) or a task's exact name is stored; false
 * for anything else (an empty cell, other text, a value out of range, a NUL byte...), which
 * tl_set_field then takes. */
static bool set_field_span(struct loader *L, enum col c, const char *s, size_t len)
{
	int64_t v;
	double d;
	if (util_reference_parse)
		return false;
	if (c == COL_TASK) {
		if (len == 6 && !memcmp(s, "online", 6))
			v = TASK_ONLINE;
		else if (len == 7 && !memcmp(s, "offline", 7))
			v = TASK_OFFLINE;
		else
			return false;
	} else if (c == COL_ARRIVAL) {
		if (!parse_f64_span(s, len, 0, DBL_MAX, &d))
			return false;
		d *= L->arrival_unit;
		if (d > BS_MAX_SECONDS)
			return false;
		L->arrival = d;
		v = 0;
	} else if (!col_range[c].integer ||
		   !parse_i64_span(s, len, col_range[c].min, col_range[c].max, &v)) {
		return false;
	}
	L->given[c] = true;
	L->v[c] = v;
	return true;
}

void tl_begin_row(struct loader *L)
{
	memset(L->given, 0, sizeof L->given);
}

/* Checks the finished row and appends it. */
int tl_end_row(struct loader *L)
{
	struct trace *t = L->t;
	for (int c = COL_PROMPT; c <= COL_ARRIVAL; c++)
		if (L->has[c] && !L->given[c])
			return tl_err(L, c, "missing value");
	int64_t pg = L->given[COL_PREFIX_GROUP] ? L->v[COL_PREFIX_GROUP] : -1;
	int64_t pt = L->given[COL_PREFIX_TOKENS] ? L->v[COL_PREFIX_TOKENS] : 0;
	if (pt > 0 && pg < 0)
		return tl_err(L, COL_PREFIX_TOKENS,
			    "%lld shared prefix tokens but no prefix_group in this record",
			    (long long)pt);
	if (L->has[COL_PROMPT] && pt > L->v[COL_PROMPT])
		return tl_err(L, COL_PREFIX_TOKENS,
			    "shared prefix of %lld tokens is longer than the prompt (%lld tokens)",
			    (long long)pt, (long long)L->v[COL_PROMPT]);
	if (L->has[COL_ARRIVAL]) {
		if (t->n > 0 && L->arrival < L->last_arrival) {
			if (!L->sort)
				return tl_err(L, COL_ARRIVAL,
					    "%.9g s is earlier than the previous record's %.9g s "
					    "(timestamps must not decrease; workload.sort_arrivals=true "
					    "sorts them)", L->arrival, L->last_arrival);
			L->need_sort = true;
		}
		L->last_arrival = L->arrival;
	}
	if (t->n >= TRACE_MAX_ROWS)
		return tl_err(L, COL_IGNORE, "more than %d records (the most a workload may have)",
			    TRACE_MAX_ROWS);
	if (L->record > (long)UINT32_MAX)
		return tl_err(L, COL_IGNORE, "more than %lu lines", (unsigned long)UINT32_MAX);
	if (L->given[COL_HASH_IDS] && (L->given[COL_PREFIX_GROUP] || L->given[COL_PREFIX_TOKENS]))
		return tl_err(L, COL_HASH_IDS, "given with prefix_group/prefix_tokens: use one or the "
			    "other");
	grow(L);
	size_t i = t->n++;
	if (L->has[COL_HASH_IDS])
		L->hid_n[i] = L->given[COL_HASH_IDS] ? (uint32_t)L->v[COL_HASH_IDS] : 0;
	t->output[i] = (int32_t)L->v[COL_OUTPUT];
	t->recno[i] = (uint32_t)L->record;
	if (L->has[COL_PROMPT])
		t->prompt[i] = (int32_t)L->v[COL_PROMPT];
	if (L->has[COL_ARRIVAL])
		t->arrival_s[i] = L->arrival;
	if (L->has[COL_PRIORITY])
		t->priority[i] = L->given[COL_PRIORITY] ? (uint8_t)L->v[COL_PRIORITY] : TRACE_UNSET_U8;
	if (L->has[COL_TASK])
		t->task[i] = L->given[COL_TASK] ? (uint8_t)L->v[COL_TASK] : TRACE_UNSET_U8;
	if (L->has[COL_PREFIX_GROUP])
		t->prefix_group[i] = (int32_t)pg;
	if (L->has[COL_PREFIX_TOKENS])
		t->prefix_tokens[i] = (int32_t)pt;
	if (L->has[COL_MAX_NEW])
		t->max_new[i] = L->given[COL_MAX_NEW] ? (int32_t)L->v[COL_MAX_NEW] : 0;
	return 0;
}

/* Checks the column set (after the CSV header or the first JSON record). */
int tl_check_columns(struct loader *L)
{
	if (!L->has[COL_OUTPUT]) {
		snprintf(L->colname[COL_OUTPUT], sizeof L->colname[0], "output_tokens");
		return tl_err(L, COL_OUTPUT, "required column is missing (also accepted: "
			    "output_len)");
	}
	if (!L->has[COL_PROMPT] && !L->outputs_only_ok) {
		snprintf(L->colname[COL_PROMPT], sizeof L->colname[0], "prompt_tokens");
		return tl_err(L, COL_PROMPT, "required column is missing (also accepted: "
			    "input_tokens, prompt_len); a trace of output lengths only can serve "
			    "as workload.output_trace");
	}
	return 0;
}

/* ---- CSV ---- */

/* The name of the CSV column of field F, for errors. */
static const char *field_name(const struct loader *L, size_t f, char *buf, size_t len)
{
	if (f < L->nhdr)
		return L->hdr[f];
	snprintf(buf, len, "column %zu", f + 1);
	return buf;
}

static void field_general(struct loader *L, const char *s, size_t len);

static void csv_cb_field(void *s, size_t len, void *data)
{
	struct loader *L = data;
	if (L->failed)
		return;
	if (L->nrec > 0 && L->field < L->nhdr) {
		/* The common case first: a number in a column that takes one. */
		if (L->field == 0)
			tl_begin_row(L);
		enum col c = L->roles[L->field];
		if ((c == COL_IGNORE || c == COL_ID) ? !memchr(s, 0, len)
						     : set_field_span(L, c, s, len)) {
			L->field++;
			return;
		}
	}
	field_general(L, s, len);
}

/* The header's names, and every value the fast path above does not take. */
static __attribute__((noinline)) void field_general(struct loader *L, const char *s, size_t len)
{
	char nb[32];
	L->record = L->ln.rec_line;
	if (memchr(s, 0, len)) {
		const char *name = L->nrec == 0 ? NULL : field_name(L, L->field, nb, sizeof nb);
		L->failed = true;
		bs_errf(L->err, BS_EXIT_INPUT, L->t->name, L->record, name,
			"NUL byte in the %s", L->nrec == 0 ? "header" : "value");
		return;
	}
	if (L->nrec == 0) {
		char *name = xmalloc(len + 1);
		memcpy(name, s, len);
		name[len] = 0;
		if (L->nhdr == 0 && !strncmp(name, "\xef\xbb\xbf", 3))
			memmove(name, name + 3, len - 2); /* a UTF-8 byte-order mark */
		if (L->nhdr == L->hdrcap) {
			L->hdrcap = L->hdrcap * 2 + 8;
			L->roles = xrealloc(L->roles, L->hdrcap * sizeof *L->roles);
			L->hdr = xrealloc(L->hdr, L->hdrcap * sizeof *L->hdr);
		}
		enum col c = tl_col_lookup(name);
		if (c == COL_HASH_IDS)
			c = COL_IGNORE; /* a list: JSON Lines only */
		L->hdr[L->nhdr] = name;
		L->roles[L->nhdr++] = c;
		if (c != COL_IGNORE && L->has[c]) {
			L->field++;
			tl_err(L, COL_IGNORE, "column '%s' repeats column '%s'", name, L->colname[c]);
			return;
		}
		if (c != COL_IGNORE)
			tl_add_col(L, c, name);
		return;
	}
	if (L->field == 0)
		tl_begin_row(L);
	enum col c = L->field < L->nhdr ? L->roles[L->field] : COL_IGNORE;
	L->field++;
	if (c == COL_IGNORE || c == COL_ID)
		return; /* text kept for reference only: any length */
	char buf[64], *heap = NULL, *v = buf;
	if (len >= sizeof buf)
		v = heap = xmalloc(len + 1);
	memcpy(v, s, len);
	v[len] = 0;
	tl_set_field(L, c, v);
	free(heap);
}

static void csv_cb_record(int c, void *data)
{
	struct loader *L = data;
	(void)c;
	if (L->failed)
		return;
	L->record = L->ln.rec_line;
	if (L->nrec == 0) {
		L->field = 0;
		if (tl_check_columns(L) == 0)
			L->nrec++;
		return;
	}
	if (L->field != L->nhdr) {
		tl_err(L, COL_IGNORE, "expected %zu fields as in the header, got %zu", L->nhdr,
		     L->field);
		return;
	}
	L->field = 0;
	if (tl_end_row(L) == 0)
		L->nrec++;
}

/*
 * The CSV input: the whole of it in memory (BUF), or a regular file read block by block with
 * pread (FD), so that a file is never held whole and its reading overlaps the parsing (each
 * thread reads the part it parses).  LEN is its size.
 */
struct csv_src {
	const char *buf;
	int fd;
	size_t len;
};

#define CSV_BLOCK ((size_t)1 << 18)

/* Bytes [FROM, FROM + N) of a file source into BLK (N <= CSV_BLOCK): the count read, 0 at the
 * end of the file, -1 on a read error (recorded on L). */
static ssize_t src_read(struct loader *L, const struct csv_src *src, char *blk, size_t from,
			size_t n)
{
	for (;;) {
		ssize_t r = pread(src->fd, blk, n, (off_t)from);
		if (r >= 0)
			return r;
		if (errno != EINTR) {
			L->failed = true;
			return bs_errf(L->err, BS_EXIT_INPUT, L->t->name, 0, NULL, "read error: %s",
				       strerror(errno));
		}
	}
}

/* Feeds DATA[0..N) to P; a malformed-CSV error recorded on L. */
static void feed(struct loader *L, struct csv_parser *p, const char *data, size_t n)
{
	if (csv_parse_lines(p, data, n, &L->ln) != n && !L->failed) {
		L->record = L->ln.line;
		tl_err(L, COL_IGNORE, "malformed CSV (%s)",
		       csv_error(p) == CSV_EPARSE ? "bad quoting" : "parser out of memory");
	}
}

/* Bytes [FROM, FROM + up to CSV_BLOCK) of SRC (before TO): in place, or read into BLK.  The
 * count, 0 at the end (TO, or a file that shrank), -1 on an error. */
static ssize_t src_block(struct loader *L, const struct csv_src *src, char *blk, size_t from,
			 size_t to, const char **data)
{
	size_t n = to - from < CSV_BLOCK ? to - from : CSV_BLOCK;
	if (src->buf || !n) {
		*data = src->buf + from;
		return (ssize_t)n;
	}
	*data = blk;
	return src_read(L, src, blk, from, n);
}

/* Feeds bytes [FROM, TO) of SRC to P in blocks of CSV_BLOCK, stopping after the block in which
 * the first error was recorded (or, when STOP is given, once it is set); 0 or -1 (L->failed). */
static int csv_feed(struct loader *L, struct csv_parser *p, const struct csv_src *src,
		    size_t from, size_t to, const atomic_bool *stop)
{
	char *blk = src->buf || from >= to ? NULL : xmalloc(CSV_BLOCK);
	while (from < to && !L->failed) {
		if (stop && atomic_load_explicit(stop, memory_order_relaxed))
			break;
		const char *data;
		ssize_t n = src_block(L, src, blk, from, to, &data);
		if (n <= 0)
			break;
		feed(L, p, data, (size_t)n);
		from += (size_t)n;
	}
	free(blk);
	return L->failed || from < to ? -1 : 0;
}

/* Feeds SRC from *OFF to the end of the line on which the header record ends (or to the end of a
 * block when that line goes on past it), line by line; *OFF is moved past the bytes fed. */
static void csv_feed_header(struct loader *L, struct csv_parser *p, const struct csv_src *src,
			    size_t *off)
{
	char *blk = src->buf ? NULL : xmalloc(CSV_BLOCK);
	while (*off < src->len && L->nrec == 0 && !L->failed) {
		const char *data;
		ssize_t r = src_block(L, src, blk, *off, src->len, &data);
		if (r <= 0)
			break;
		size_t n = (size_t)r, i = 0;
		while (i < n && L->nrec == 0 && !L->failed) {
			const char *nl = memchr(data + i, '\n', n - i);
			size_t e = nl ? (size_t)(nl - data) + 1 : n;
			feed(L, p, data + i, e - i);
			i = e;
		}
		*off += i;
	}
	free(blk);
}

/* The first line start of SRC at or after byte AT (>= 1): just past the first '\n' at or after
 * byte AT - 1; SRC->len when there is none. */
static size_t src_line_start(struct loader *L, const struct csv_src *src, size_t at)
{
	if (src->buf) {
		const char *nl = memchr(src->buf + at - 1, '\n', src->len - (at - 1));
		return nl ? (size_t)(nl - src->buf) + 1 : src->len;
	}
	char *blk = xmalloc(CSV_BLOCK);
	size_t s = src->len;
	for (size_t from = at - 1; from < src->len;) {
		size_t n = src->len - from < CSV_BLOCK ? src->len - from : CSV_BLOCK;
		ssize_t r = src_read(L, src, blk, from, n);
		if (r <= 0)
			break;
		const char *nl = memchr(blk, '\n', (size_t)r);
		if (nl) {
			s = from + (size_t)(nl - blk) + 1;
			break;
		}
		from += (size_t)r;
	}
	free(blk);
	return s;
}

/* The end of the input: libcsv's last record. */
static int csv_end(struct loader *L, struct csv_parser *p)
{
	if (!L->failed && csv_fini_lines(p, &L->ln) != 0 && !L->failed) {
		L->record = L->ln.rec_line;
		tl_err(L, COL_IGNORE, "malformed CSV (unterminated quoted field at end of file)");
	}
	return L->failed ? -1 : 0;
}

static void csv_parser_init(struct loader *L, struct csv_parser *p)
{
	if (csv_init(p, CSV_STRICT | CSV_STRICT_FINI) != 0)
		BUG("csv_init failed");
	csv_lines_init(&L->ln, csv_cb_field, csv_cb_record, L);
}

bool trace_reference_read;
size_t trace_split_min = (size_t)1 << 18;

/*
 * The speculative second part of a CSV read in two (load_csv): the records from a line start S
 * to the end, read on a thread of their own by a new parser and a copy of the loader as the
 * header left it, into rows of its own with lines counted from S.  Its rows are kept only when
 * the first part's parser ends at S between records (csv_lines_at_record_start) and neither part
 * found an error; otherwise the first part's parser reads on from S as if there had been no
 * second part (so any error is the one the reference reading reports, and where).
 */
struct csv_part {
	struct loader L;
	struct trace t;
	struct bs_err err;
	struct csv_parser p;
	const struct csv_src *src;
	size_t from;
	atomic_bool stop;       /* set by the first part when the second's rows cannot be kept */
	int rc;
};

static void *csv_part_main(void *arg)
{
	struct csv_part *q = arg;
	q->rc = csv_feed(&q->L, &q->p, q->src, q->from, q->src->len, &q->stop) ||
			csv_end(&q->L, &q->p) ? -1 : 0;
	return NULL;
}

static void csv_part_start(struct csv_part *q, const struct loader *L, const struct csv_src *src,
			   size_t from)
{
	memset(&q->t, 0, sizeof q->t);
	snprintf(q->t.name, sizeof q->t.name, "%s", L->t->name);
	memset(&q->err, 0, sizeof q->err);
	q->L = *L; /* the header's columns; roles and hdr are shared, read only */
	q->L.t = &q->t;
	q->L.err = &q->err;
	q->L.cap = 0;
	q->L.need_sort = false;
	q->L.nrec = 1;
	q->L.field = 0;
	csv_parser_init(&q->L, &q->p);
	q->src = src;
	q->from = from;
	atomic_init(&q->stop, false);
	q->rc = -1;
}

/* Appends the second part's N values of column A (of E bytes each) to the first part's N0. */
static void append_col(void *pa, const void *b, size_t n0, size_t n, size_t e)
{
	void **a = pa;
	if (!b)
		return;
	*a = xrealloc(*a, (n0 + n) * e);
	memcpy((char *)*a + n0 * e, b, n * e);
}

/* Keeps the second part's rows when the reading in two gives what one parser gives (the first
 * part is at a record start, both read without error, and the rows across the split keep the
 * rules one reading checks row by row); false leaves L as it was. */
static bool csv_part_merge(struct loader *L, struct csv_parser *p, struct csv_part *q)
{
	struct trace *t = L->t, *u = &q->t;
	if (L->failed || !csv_lines_at_record_start(p, &L->ln) || q->rc || q->L.failed)
		return false;
	long base = L->ln.line;
	if (u->n > 0) {
		if (t->n + u->n > TRACE_MAX_ROWS || base + (long)u->recno[u->n - 1] > (long)UINT32_MAX)
			return false;
		if (L->has[COL_ARRIVAL] && t->n > 0 && u->arrival_s[0] < L->last_arrival) {
			if (!L->sort)
				return false; /* the reference reading words the error */
			L->need_sort = true;
		}
	}
	for (size_t i = 0; i < u->n; i++)
		u->recno[i] += (uint32_t)base;
	size_t n0 = t->n, n = u->n;
	append_col(&t->prompt, u->prompt, n0, n, sizeof *u->prompt);
	append_col(&t->output, u->output, n0, n, sizeof *u->output);
	append_col(&t->arrival_s, u->arrival_s, n0, n, sizeof *u->arrival_s);
	append_col(&t->priority, u->priority, n0, n, sizeof *u->priority);
	append_col(&t->task, u->task, n0, n, sizeof *u->task);
	append_col(&t->prefix_group, u->prefix_group, n0, n, sizeof *u->prefix_group);
	append_col(&t->prefix_tokens, u->prefix_tokens, n0, n, sizeof *u->prefix_tokens);
	append_col(&t->max_new, u->max_new, n0, n, sizeof *u->max_new);
	append_col(&t->recno, u->recno, n0, n, sizeof *u->recno);
	t->n += n;
	if (n)
		L->cap = t->n;
	L->need_sort |= q->L.need_sort;
	if (n)
		L->last_arrival = q->L.last_arrival;
	L->nrec += q->L.nrec - 1;
	L->ln = q->L.ln; /* the lines of the second part, from 0 */
	L->ln.line += base;
	L->ln.rec_line += base;
	L->ln.ctx = L;
	return true;
}

/*
 * Reads SRC as CSV.  With SPLIT < SRC->len (and not trace_reference_read), the header is read
 * first, then the records from the first line start at or after byte SPLIT are read by a second
 * thread while this one reads those before it (struct csv_part); SPLIT >= SRC->len reads on one
 * thread, the reference.
 */
static int load_csv(struct loader *L, const struct csv_src *src, size_t split, int *parts)
{
	struct csv_parser p;
	csv_parser_init(L, &p);
	L->record = 1;
	size_t off = 0, len = src->len;
	if (parts)
		*parts = 1;
	if (split < len && !trace_reference_read) {
		/* The header first: the second part needs its columns. */
		csv_feed_header(L, &p, src, &off);
		size_t at = split > off ? split : off;
		size_t s = L->failed || at == 0 ? len : src_line_start(L, src, at);
		struct csv_part *q = NULL;
		pthread_t th;
		if (!L->failed && s < len) {
			q = xmalloc(sizeof *q);
			csv_part_start(q, L, src, s);
			if (pthread_create(&th, NULL, csv_part_main, q) != 0) {
				csv_free(&q->p);
				free(q);
				q = NULL;
			}
		}
		if (q) {
			csv_feed(L, &p, src, off, s, NULL);
			if (L->failed || !csv_lines_at_record_start(&p, &L->ln))
				atomic_store(&q->stop, true);
			if (pthread_join(th, NULL) != 0)
				BUG("pthread_join failed");
			bool kept = csv_part_merge(L, &p, q);
			csv_free(&q->p);
			trace_release(&q->t);
			free(q);
			off = kept ? len : s;
			if (parts && kept)
				*parts = 2;
		}
	}
	csv_feed(L, &p, src, off, len, NULL);
	csv_end(L, &p);
	csv_free(&p);
	if (L->failed)
		return -1;
	if (L->nrec == 0 && L->nhdr == 0) {
		L->record = 0;
		return tl_err(L, COL_IGNORE, "empty file (expected a header row)"), -1;
	}
	return 0;
}

/* ---- common ---- */

struct sort_item {
	double t;
	size_t i;
};

static int cmp_item(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

#define PERMUTE(arr, type)                                          \
	do {                                                        \
		if (arr) {                                          \
			type *tmp_ = xmalloc(t->n * sizeof *tmp_);  \
			for (size_t k_ = 0; k_ < t->n; k_++)        \
				tmp_[k_] = (arr)[it[k_].i];         \
			free(arr);                                  \
			(arr) = tmp_;                               \
		}                                                   \
	} while (0)

static void sort_rows(struct trace *t)
{
	struct sort_item *it = xmalloc(t->n * sizeof *it);
	for (size_t i = 0; i < t->n; i++) {
		it[i].t = t->arrival_s[i];
		it[i].i = i;
	}
	qsort(it, t->n, sizeof *it, cmp_item);
	PERMUTE(t->prompt, int32_t);
	PERMUTE(t->output, int32_t);
	PERMUTE(t->arrival_s, double);
	PERMUTE(t->priority, uint8_t);
	PERMUTE(t->task, uint8_t);
	PERMUTE(t->prefix_group, int32_t);
	PERMUTE(t->prefix_tokens, int32_t);
	PERMUTE(t->max_new, int32_t);
	PERMUTE(t->recno, uint32_t);
	free(it);
	t->sorted = true;
}

/*
 * Mooncake's hash_ids onto prefix groups.  A request's shared prefix is its leading blocks whose
 * hash id some other request of the trace also has (ids name a block with everything before it,
 * so a shared id means a shared prefix up to there): prefix_tokens = 512 x that count, at most
 * the prompt.  Its prefix_group is the (dense, first-seen) group of its first id; -1 when it
 * shares nothing.  The simulator keeps one cached prefix per group, so requests of one group
 * that share prefixes of different lengths are approximated by the length of the one cached.
 */
static void hash_prefixes(struct loader *L)
{
	struct trace *t = L->t;
	size_t cap = 16;
	while (cap < 2 * L->nhid)
		cap *= 2;
	struct slot { int64_t id; uint32_t count; int32_t group; } *h = xmalloc(cap * sizeof *h);
	for (size_t i = 0; i < cap; i++)
		h[i].id = -1;
	size_t *where = xmalloc((L->nhid ? L->nhid : 1) * sizeof *where);
	for (size_t k = 0; k < L->nhid; k++) {
		uint64_t x = (uint64_t)L->hid[k] * 0x9E3779B97F4A7C15ull;
		size_t j = (size_t)(x ^ (x >> 31)) & (cap - 1);
		while (h[j].id != -1 && h[j].id != L->hid[k])
			j = (j + 1) & (cap - 1);
		if (h[j].id == -1) {
			h[j].id = L->hid[k];
			h[j].count = 0;
			h[j].group = -1;
		}
		h[j].count++;
		where[k] = j;
	}
	free(t->prefix_group);
	free(t->prefix_tokens);
	t->prefix_group = xmalloc(t->n * sizeof(int32_t));
	t->prefix_tokens = xmalloc(t->n * sizeof(int32_t));
	int32_t groups = 0;
	size_t off = 0;
	for (size_t i = 0; i < t->n; i++) {
		size_t n = L->hid_n[i], k = 0;
		while (k < n && h[where[off + k]].count >= 2)
			k++;
		int64_t tok = (int64_t)k * MOONCAKE_BLOCK_TOKENS;
		if (t->prompt && tok > t->prompt[i])
			tok = t->prompt[i];
		t->prefix_group[i] = -1;
		t->prefix_tokens[i] = 0;
		if (tok > 0 && t->prompt) {
			struct slot *g = &h[where[off]];
			if (g->group < 0)
				g->group = groups++;
			t->prefix_group[i] = g->group;
			t->prefix_tokens[i] = (int32_t)tok;
		}
		off += n;
	}
	free(where);
	free(h);
}

static int finish(struct loader *L, int rc)
{
	free(L->roles);
	for (size_t i = 0; i < L->nhdr; i++)
		free(L->hdr[i]);
	free(L->hdr);
	if (!rc && !L->failed && L->has[COL_HASH_IDS] &&
	    (L->has[COL_PREFIX_GROUP] || L->has[COL_PREFIX_TOKENS])) {
		L->record = 0;
		tl_err(L, COL_HASH_IDS, "given with prefix_group/prefix_tokens: use one or the other");
	}
	if (!rc && !L->failed && L->has[COL_HASH_IDS] && L->t->n)
		hash_prefixes(L);
	free(L->hid);
	free(L->hid_n);
	if (rc || L->failed) {
		trace_release(L->t);
		return -1;
	}
	if (L->arrival_relative && L->t->n) {
		double first = L->t->arrival_s[0];
		for (size_t i = 1; i < L->t->n; i++)
			if (L->t->arrival_s[i] < first)
				first = L->t->arrival_s[i];
		for (size_t i = 0; i < L->t->n; i++)
			L->t->arrival_s[i] -= first;
	}
	if (L->t->n == 0) {
		L->record = 0;
		tl_err(L, COL_IGNORE, "no records (a trace needs at least one request)");
		trace_release(L->t);
		return -1;
	}
	if (L->need_sort)
		sort_rows(L->t);
	snprintf(L->t->prompt_col, sizeof L->t->prompt_col, "%s",
		 L->has[COL_PROMPT] ? L->colname[COL_PROMPT] : "prompt_tokens");
	snprintf(L->t->output_col, sizeof L->t->output_col, "%s", L->colname[COL_OUTPUT]);
	return 0;
}

static void loader_init(struct loader *L, const char *name, bool sort, bool outputs_only_ok,
			struct trace *t, struct bs_err *err)
{
	memset(t, 0, sizeof *t);
	memset(L, 0, sizeof *L);
	snprintf(t->name, sizeof t->name, "%s", name);
	L->t = t;
	L->err = err;
	L->sort = sort;
	L->outputs_only_ok = outputs_only_ok;
}

int trace_load_buffer(const char *name, const char *buf, size_t len, bool is_json, bool sort,
		      bool outputs_only_ok, struct trace *t, struct bs_err *err)
{
	struct loader L;
	loader_init(&L, name, sort, outputs_only_ok, t, err);
	if (is_json)
		return finish(&L, trace_load_json(&L, buf, len));
	struct csv_src src = {buf, -1, len};
	return finish(&L, load_csv(&L, &src, len >= trace_split_min ? len / 2 : len, NULL));
}

int trace_load_csv_split(const char *name, const char *buf, size_t len, size_t split, bool sort,
			 bool outputs_only_ok, struct trace *t, struct bs_err *err, int *parts)
{
	struct loader L;
	loader_init(&L, name, sort, outputs_only_ok, t, err);
	struct csv_src src = {buf, -1, len};
	return finish(&L, load_csv(&L, &src, split, parts));
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

int trace_load(const char *spec, bool sort, bool outputs_only_ok, struct trace *t,
	       struct bs_err *err)
{
	const struct bundled_trace *b = trace_bundled_find(spec);
	if (b) {
		const struct embedded_file *f = embedded_find(b->path);
		if (!f)
			BUG("bundled trace '%s' is not embedded", b->path);
		return trace_load_buffer(b->name, f->data, f->size, false, sort, outputs_only_ok,
					 t, err);
	}
	int fd = open(spec, O_RDONLY);
	struct stat st;
	if (fd < 0) {
		memset(t, 0, sizeof *t);
		if (!strchr(spec, '/') && !strchr(spec, '.')) {
			char names[512] = "";
			for (const struct bundled_trace *p = bundled_traces; p->name; p++)
				snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
					 p == bundled_traces ? "" : ", ", p->name);
			return bs_errf(err, BS_EXIT_INPUT, spec, 0, NULL,
				       "no such file and no bundled trace of that name "
				       "(bundled: %s)", names);
		}
		return bs_errf(err, BS_EXIT_INPUT, spec, 0, NULL, "cannot open: %s",
			       strerror(errno));
	}
	/* JSON by extension, or by content: the first non-blank byte is '{' or '['. */
	bool is_json = ends_with(spec, ".jsonl") || ends_with(spec, ".json");
	if (!is_json && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		/* A regular file: CSV read block by block as it is parsed (load_csv). */
		struct loader L;
		loader_init(&L, spec, sort, outputs_only_ok, t, err);
		struct csv_src src = {NULL, fd, (size_t)st.st_size};
		char blk[4096];
		ssize_t r;
		size_t i = 0;
		for (size_t from = 0; (r = src_read(&L, &src, blk, from, sizeof blk)) > 0;
		     from += (size_t)r) {
			for (i = 0; i < (size_t)r && strchr(" \t\r\n", blk[i]); i++)
				; /* NUL bytes skipped too */
			if (i < (size_t)r) {
				is_json = blk[i] == '{' || blk[i] == '[';
				break;
			}
		}
		if (!is_json || L.failed) {
			int rc = L.failed ? -1 : load_csv(&L, &src, src.len >= trace_split_min ?
							  src.len / 2 : src.len, NULL);
			close(fd);
			return finish(&L, rc);
		}
	}
	close(fd);
	/* Anything else (JSON, a pipe...) read whole. */
	size_t len;
	char *buf = read_file(spec, &len, err);
	if (!buf) {
		memset(t, 0, sizeof *t);
		return -1;
	}
	if (!is_json) {
		size_t i = 0;
		while (i < len && strchr(" \t\r\n", buf[i])) /* NUL bytes skipped too */
			i++;
		is_json = i < len && (buf[i] == '{' || buf[i] == '[');
	}
	int rc = trace_load_buffer(spec, buf, len, is_json, sort, outputs_only_ok, t, err);
	free(buf);
	return rc;
}

void trace_release(struct trace *t)
{
	free(t->prompt);
	free(t->output);
	free(t->arrival_s);
	free(t->priority);
	free(t->task);
	free(t->prefix_group);
	free(t->prefix_tokens);
	free(t->max_new);
	free(t->recno);
	char name[sizeof t->name];
	memcpy(name, t->name, sizeof name);
	memset(t, 0, sizeof *t);
	memcpy(t->name, name, sizeof name);
}

void col_stats_compute(double *data, size_t n, struct col_stats *s)
{
	memset(s, 0, sizeof *s);
	s->count = n;
	if (n == 0) {
		s->min = s->p50 = s->mean = s->p90 = s->p99 = s->max = NAN;
		return;
	}
	gsl_sort(data, 1, n);
	s->min = data[0];
	s->max = data[n - 1];
	s->mean = gsl_stats_mean(data, 1, n);
	s->p50 = gsl_stats_quantile_from_sorted_data(data, 1, n, 0.50);
	s->p90 = gsl_stats_quantile_from_sorted_data(data, 1, n, 0.90);
	s->p99 = gsl_stats_quantile_from_sorted_data(data, 1, n, 0.99);
}
