/*
 * trace: see trace_int.h.  The column names, the per-field validators and the rows
 * (trace_load_int.h), sorting, Mooncake prefixes and the entry points.  CSV is read by
 * trace_csv.c and JSON by trace_json.c, both through the same validators, so a value means the
 * same in either format.
 */
#include "workloads/trace_int.h"
#include "workloads/trace_load_int.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
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

/* The ranges of the integer columns (trace_load_int.h). */
const struct tl_col_range tl_col_range[NCOL] = {
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
	if (tl_col_range[c].integer &&
	    parse_i64(s, tl_col_range[c].min, tl_col_range[c].max, &v, why, sizeof why)) {
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
		if (!tl_col_range[c].integer)
			return 0;
		break;
	}
	L->given[c] = true;
	L->v[c] = v;
	return 0;
}
#undef shown

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
			char a[32], b[32];
			if (!L->sort)
				return tl_err(L, COL_ARRIVAL,
					    "%s s is earlier than the previous record's %s s "
					    "(timestamps must not decrease; workload.sort_arrivals=true "
					    "sorts them)", shortest_g(L->arrival, a, sizeof a),
					    shortest_g(L->last_arrival, b, sizeof b));
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

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
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
		for (size_t from = 0; (r = csv_src_read(&L, &src, blk, from, sizeof blk)) > 0;
		     from += (size_t)r) {
			for (i = 0; i < (size_t)r && is_blank(blk[i]); i++)
				;
			if (i < (size_t)r) { /* a NUL too: the CSV reader reports it */
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
	/* Anything else (JSON, a pipe...) read whole from the descriptor already open (pread
	 * above left its offset at 0; a FIFO opened again by name would wait for a writer that
	 * has gone), as far as the first NUL byte (reported by the reader, where it is) and with
	 * the record limit on every line, except in one JSON array (parsed whole). */
	static const struct read_lim lim = {
		0, "a trace in one JSON array (JSON Lines and CSV have none)", BS_RECORD_MAX,
		TRACE_JSON_ARRAY_MAX};
	size_t len;
	char *buf = read_fd_lim(fd, spec, &len, &lim, err);
	if (!buf) {
		memset(t, 0, sizeof *t);
		return -1;
	}
	if (!is_json) {
		size_t i = 0;
		while (i < len && is_blank(buf[i]))
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
