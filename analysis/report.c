/*
 * report: see report.h.
 */
#include "analysis/report.h"
#include "analysis/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


bool report_reference_format;

/* ---- number formatting: digits written straight into the line (printf's output, faster) ---- */

/* "00".."99": two decimal digits per division. */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal digits of V (below 2^32) at P; returns the end.  The length first (compares against
 * powers of ten), then the digits backwards, two per division (32-bit divisions by constants). */
static char *put_u32_wide(char *p, uint32_t v)
{
	static const uint32_t pow10[9] = {10u,      100u,      1000u,      10000u,     100000u,
					  1000000u, 10000000u, 100000000u, 1000000000u};
	int n = 1;
	while (n < 10 && v >= pow10[n - 1])
		n++;
	char *e = p + n, *q = e;
	while (v >= 100) {
		q -= 2;
		memcpy(q, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(q - 2, digit_pairs + 2 * v, 2);
	else
		q[-1] = (char)('0' + v);
	return e;
}

/* put_u32_wide, with the values below 10^4 (most of the integers of a row: token counts,
 * indices, whole seconds and milliseconds) written inline. */
static inline __attribute__((always_inline)) char *put_u32(char *p, uint32_t v)
{
	if (v < 100) {
		if (v < 10) {
			*p = (char)('0' + v);
			return p + 1;
		}
		memcpy(p, digit_pairs + 2 * v, 2);
		return p + 2;
	}
	if (v < 10000) {
		uint32_t hi = v / 100;
		if (hi < 10)
			*p++ = (char)('0' + hi);
		else {
			memcpy(p, digit_pairs + 2 * hi, 2);
			p += 2;
		}
		memcpy(p, digit_pairs + 2 * (v - hi * 100), 2);
		return p + 2;
	}
	return put_u32_wide(p, v);
}

static char *put_u64_wide(char *p, uint64_t v);

/* Decimal digits of V at P; returns the end. */
static inline __attribute__((always_inline)) char *put_u64(char *p, uint64_t v)
{
	if (v <= UINT32_MAX)
		return put_u32(p, (uint32_t)v);
	return put_u64_wide(p, v);
}

/* put_u64 of V above 2^32 - 1: the leading digits, then the last 9 (V < 2^64 has at most 20
 * digits). */
static char *put_u64_wide(char *p, uint64_t v)
{
	p = put_u64(p, v / 1000000000);
	uint32_t f = (uint32_t)(v % 1000000000);
	for (int i = 9; i >= 2; i -= 2) {
		memcpy(p + i - 2, digit_pairs + 2 * (f % 100), 2);
		f /= 100;
	}
	p[0] = (char)('0' + f);
	return p + 9;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)(-(v + 1)) + 1);
	}
	return put_u64(p, (uint64_t)v);
}

/* The 8 decimal digits of N (below 10^8, leading zeros included) as the bytes of a little-endian
 * word, the first digit in the lowest byte: the two 4-digit halves into the two 32-bit lanes,
 * each lane split into its two 2-digit halves (16-bit lanes), each of those into its two digits
 * (bytes), quotients by multiplication (10486 / 2^20 is exact division by 100 below 10^4, 103 /
 * 2^10 by 10 below 100), then the ASCII offset. */
static inline uint64_t digits8_le(uint32_t n)
{
	uint64_t x = (uint64_t)(n / 10000) | (uint64_t)(n % 10000) << 32;
	uint64_t q = ((x * 10486) >> 20) & 0x0000007F0000007Fu;
	x = q | (x - q * 100) << 16;
	q = ((x * 103) >> 10) & 0x000F000F000F000Fu;
	x = q | (x - q * 10) << 8;
	return x | 0x3030303030303030u;
}

/* V / SCALE with DIGITS decimals, exactly (SCALE = 10^DIGITS <= 10^9).  Inlined into put_s9 and
 * put_ms6 so that the divisions are by constants. */
static inline __attribute__((always_inline)) char *put_fixed(char *p, int64_t v, uint64_t scale,
							     int digits)
{
	uint64_t a = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
	if (v < 0)
		*p++ = '-';
	p = put_u64(p, a / scale);
	*p++ = '.';
	uint32_t f = (uint32_t)(a % scale);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (digits >= 6) {
		/* The last 8 digits in one word (the 9th, first, alone); 6 digits: the word's
		 * last 6 bytes. */
		if (digits == 9) {
			*p++ = (char)('0' + f / 100000000);
			f %= 100000000;
		}
		uint64_t w = digits8_le(f) >> (digits == 6 ? 16 : 0);
		memcpy(p, &w, digits == 6 ? 6 : 8);
		return p + (digits == 6 ? 6 : 8);
	}
#endif
	int i = digits;
	for (; i >= 2; i -= 2) {
		memcpy(p + i - 2, digit_pairs + 2 * (f % 100), 2);
		f /= 100;
	}
	if (i)
		p[0] = (char)('0' + f);
	return p + digits;
}

/* Nanoseconds as seconds with 9 decimals / as milliseconds with 6. */
static char *put_s9(char *p, int64_t ns)
{
	return put_fixed(p, ns, 1000000000, 9);
}

static char *put_ms6(char *p, int64_t ns)
{
	return put_fixed(p, ns, 1000000, 6);
}

/* printf("%.6f", X) for a finite X >= 0: the exact value X * 10^6 rounded to an integer.
 * Y = X * 1e6 rounded is within 2^-52 relative of it, so when Y's fraction is not within that
 * of one half, rounding Y and rounding the exact product agree.  Near one half, the product's
 * rounding error E = fma(X, 1e6, -Y) is exact, and the sign of (F - 0.5) + E (F - 0.5 exact
 * there, and a rounded sum has the sign of the exact one) says on which side of the half the
 * exact product lies.  An exact half (printf rounds it to even), huge values, negative and NaN:
 * snprintf, which is also the reference (report_reference_format). */
static char *put_f6(char *p, double x)
{
	if (!report_reference_format && x >= 0 && x < 4e9) {
		double y = x * 1e6, r = floor(y), f = y - r;
		if (fabs(f - 0.5) > y * 0x1p-50 + 0x1p-60)
			return put_ms6(p, (int64_t)r + (f > 0.5));
		double t = (f - 0.5) + fma(x, 1e6, -y);
		if (t != 0)
			return put_ms6(p, (int64_t)r + (t > 0));
	}
	return p + sprintf(p, "%.6f", x);
}

/* printf("%.3f", X), as put_f6 with 10^3. */
static char *put_f3(char *p, double x)
{
	if (!report_reference_format && x >= 0 && x < 4e9) {
		double y = x * 1e3, r = floor(y), f = y - r;
		if (fabs(f - 0.5) > y * 0x1p-50 + 0x1p-60)
			return put_fixed(p, (int64_t)r + (f > 0.5), 1000, 3);
		double t = (f - 0.5) + fma(x, 1e3, -y);
		if (t != 0)
			return put_fixed(p, (int64_t)r + (t > 0), 1000, 3);
	}
	return p + sprintf(p, "%.3f", x);
}

int fmt_ns_s(char *buf, size_t n, int64_t ns)
{
	char tmp[32];
	int len = (int)(put_s9(tmp, ns) - tmp);
	if (report_reference_format) {
		uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
		return snprintf(buf, n, "%s%llu.%09llu", ns < 0 ? "-" : "",
				(unsigned long long)(a / 1000000000), (unsigned long long)(a % 1000000000));
	}
	return snprintf(buf, n, "%.*s", len, tmp);
}

int fmt_ns_ms(char *buf, size_t n, int64_t ns)
{
	char tmp[32];
	int len = (int)(put_ms6(tmp, ns) - tmp);
	if (report_reference_format) {
		uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
		return snprintf(buf, n, "%s%llu.%06llu", ns < 0 ? "-" : "",
				(unsigned long long)(a / 1000000), (unsigned long long)(a % 1000000));
	}
	return snprintf(buf, n, "%.*s", len, tmp);
}

int fmt_f6(char *buf, size_t n, double x)
{
	char tmp[400];
	int len = (int)(put_f6(tmp, x) - tmp);
	return snprintf(buf, n, "%.*s", len, tmp);
}

int fmt_f3(char *buf, size_t n, double x)
{
	char tmp[400];
	int len = (int)(put_f3(tmp, x) - tmp);
	return snprintf(buf, n, "%.*s", len, tmp);
}

static void header(FILE *f, const char *const *cols)
{
	/* Column names are snake_case identifiers: nothing to quote.  One write (the row writer's
	 * streams may be unbuffered). */
	char line[1024];
	size_t n = 0;
	for (size_t i = 0; cols[i]; i++) {
		size_t len = strlen(cols[i]);
		if (n + len + 2 > sizeof line)
			BUG("header longer than %zu bytes", sizeof line);
		if (i)
			line[n++] = ',';
		memcpy(line + n, cols[i], len);
		n += len;
	}
	line[n++] = '\n';
	fwrite(line, 1, n, f);
}

void report_requests_header(FILE *f)
{
	static const char *const cols[] = {
		"id", "arrival_s", "scheduled_s", "first_token_s", "finish_s", "prompt_tokens",
		"output_tokens", "preemptions", "ttft_ms", "tpot_ms", "e2e_ms", "instance",
		"prefill_instance", "kv_transfer_ms", NULL};
	header(f, cols);
}

void report_req_row_take(struct req_row *w, const struct sim *s, int32_t id)
{
	const struct req *r = sim_req(s, id);
	const struct req_spec *q = sim_spec(s, id);
	*w = (struct req_row){q->arrival_ns, r->t_sched, r->t_first, sim_now(s), r->transfer_ns,
			      id, q->prompt_tokens, q->output_tokens, r->preemptions, r->lane,
			      r->prefill_inst};
}

/* requests.csv's row as printf writes it: the reference of report_req_row_put. */
void report_req_row_printf(FILE *f, const struct req_row *w)
{
	char a[32], b[32], c[32], d[32], ttft[32], e2e[32], tpot[400] = "";
	fmt_ns_s(a, sizeof a, w->arrival);
	fmt_ns_s(b, sizeof b, w->sched);
	fmt_ns_s(c, sizeof c, w->first);
	fmt_ns_s(d, sizeof d, w->finish);
	fmt_ns_ms(ttft, sizeof ttft, w->first - w->arrival);
	fmt_ns_ms(e2e, sizeof e2e, w->finish - w->arrival);
	if (w->output > 1)
		snprintf(tpot, sizeof tpot, "%.6f",
			 (double)(w->finish - w->first) / 1e6 / (w->output - 1));
	char pin[16] = "";
	if (w->prefill_inst >= 0)
		snprintf(pin, sizeof pin, "%d", w->prefill_inst);
	fprintf(f, "%d,%s,%s,%s,%s,%d,%d,%d,%s,%s,%s,%d,%s,%.6f\n", w->id, a, b, c, d, w->prompt,
		w->output, w->preemptions, ttft, tpot, e2e, w->lane, pin,
		(double)w->transfer / 1e6);
}

char *report_req_row_put(char *p, const struct req_row *w)
{
	p = put_i64(p, w->id);
	*p++ = ',';
	p = put_s9(p, w->arrival);
	*p++ = ',';
	p = put_s9(p, w->sched);
	*p++ = ',';
	p = put_s9(p, w->first);
	*p++ = ',';
	p = put_s9(p, w->finish);
	*p++ = ',';
	p = put_i64(p, w->prompt);
	*p++ = ',';
	p = put_i64(p, w->output);
	*p++ = ',';
	p = put_i64(p, w->preemptions);
	*p++ = ',';
	p = put_ms6(p, w->first - w->arrival);
	*p++ = ',';
	if (w->output > 1)
		p = put_f6(p, (double)(w->finish - w->first) / 1e6 / (w->output - 1));
	*p++ = ',';
	p = put_ms6(p, w->finish - w->arrival);
	*p++ = ',';
	p = put_i64(p, w->lane);
	*p++ = ',';
	if (w->prefill_inst >= 0)
		p = put_i64(p, w->prefill_inst);
	*p++ = ',';
	p = put_ms6(p, w->transfer);
	*p++ = '\n';
	return p;
}

void report_request_row(FILE *f, const struct sim *s, int32_t id)
{
	struct req_row w;
	report_req_row_take(&w, s, id);
	if (report_reference_format) {
		report_req_row_printf(f, &w);
		return;
	}
	char line[REQ_ROW_MAX];
	fwrite(line, 1, (size_t)(report_req_row_put(line, &w) - line), f);
}

void report_batches_header(FILE *f)
{
	static const char *const cols[] = {
		"pass", "start_s", "end_s", "phase", "bs", "query", "blocks", "bucket_bs",
		"bucket_query", "bucket_blocks", "real_tokens", "padded_tokens", "compile_ms",
		"instance", "causal", "bucket_causal", "unified_phase", "query_tokens",
		"shared_blocks", "unique_blocks", "num_logits", "bucket_query_tokens",
		"bucket_shared_blocks", "bucket_unique_blocks", "bucket_num_logits", NULL};
	header(f, cols);
}

/* batches.csv's row as printf writes it: the reference of report_batch_row. */
void report_batch_row_printf(FILE *f, const struct pass_rec *p)
{
	char a[32], b[32], c[32];
	fmt_ns_s(a, sizeof a, p->start_ns);
	fmt_ns_s(b, sizeof b, p->end_ns);
	fmt_ns_ms(c, sizeof c, p->compile_ns);
	if (p->phase == PHASE_UNIFIED) {
		char ph[4] = {p->real[3] ? 'c' : '-', p->real[1] ? 's' : '-', p->real[2] ? 'u' : '-',
			      0};
		fprintf(f, "%lld,%s,%s,%s,,,,,,,%lld,%lld,%s,%d,%d,%d,%s,%d,%d,%d,%d,%d,%d,%d,%d\n",
			(long long)p->index, a, b, bucket_phase_name((enum phase)p->phase),
			(long long)p->real_tokens, (long long)p->padded_tokens, c, p->instance,
			p->real[3], p->bucket[3], ph, p->real[0], p->real[1], p->real[2], p->logits,
			p->bucket[0], p->bucket[1], p->bucket[2], p->bucket_logits);
		return;
	}
	fprintf(f, "%lld,%s,%s,%s,%d,%d,%d,%d,%d,%d,%lld,%lld,%s,%d,,,,,,,,,,,\n",
		(long long)p->index, a, b, bucket_phase_name((enum phase)p->phase), p->real[0],
		p->real[1], p->real[2], p->bucket[0], p->bucket[1], p->bucket[2],
		(long long)p->real_tokens, (long long)p->padded_tokens, c, p->instance);
}

/* S and a comma. */
static char *put_str_c(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	p[n] = ',';
	return p + n + 1;
}

/* V and a comma. */
static char *put_i64_c(char *p, int64_t v)
{
	p = put_i64(p, v);
	*p++ = ',';
	return p;
}

char *report_batch_row_put(char *q, const struct pass_rec *p)
{
	q = put_i64_c(q, p->index);
	q = put_s9(q, p->start_ns);
	*q++ = ',';
	q = put_s9(q, p->end_ns);
	*q++ = ',';
	q = put_str_c(q, bucket_phase_name((enum phase)p->phase));
	if (p->phase == PHASE_UNIFIED) {
		/* The seed's tuple (phase, query_len, num_shared_blocks, num_unique_blocks,
		 * num_logits) in columns of its own; the prompt/decode shape columns stay empty.
		 * The phase string names the attention paths that run: causal, shared, unique. */
		memcpy(q, ",,,,,,", 6);
		q += 6;
		q = put_i64_c(q, p->real_tokens);
		q = put_i64_c(q, p->padded_tokens);
		q = put_ms6(q, p->compile_ns);
		*q++ = ',';
		q = put_i64_c(q, p->instance);
		q = put_i64_c(q, p->real[3]);
		q = put_i64_c(q, p->bucket[3]);
		*q++ = p->real[3] ? 'c' : '-';
		*q++ = p->real[1] ? 's' : '-';
		*q++ = p->real[2] ? 'u' : '-';
		*q++ = ',';
		q = put_i64_c(q, p->real[0]);
		q = put_i64_c(q, p->real[1]);
		q = put_i64_c(q, p->real[2]);
		q = put_i64_c(q, p->logits);
		q = put_i64_c(q, p->bucket[0]);
		q = put_i64_c(q, p->bucket[1]);
		q = put_i64_c(q, p->bucket[2]);
		q = put_i64(q, p->bucket_logits);
		*q++ = '\n';
	} else {
		for (int i = 0; i < 3; i++)
			q = put_i64_c(q, p->real[i]);
		for (int i = 0; i < 3; i++)
			q = put_i64_c(q, p->bucket[i]);
		q = put_i64_c(q, p->real_tokens);
		q = put_i64_c(q, p->padded_tokens);
		q = put_ms6(q, p->compile_ns);
		*q++ = ',';
		q = put_i64(q, p->instance);
		memcpy(q, ",,,,,,,,,,,\n", 12);
		q += 12;
	}
	return q;
}

void report_batch_row(FILE *f, const struct pass_rec *p)
{
	if (report_reference_format) {
		report_batch_row_printf(f, p);
		return;
	}
	char line[BATCH_ROW_MAX];
	fwrite(line, 1, (size_t)(report_batch_row_put(line, p) - line), f);
}

static int cmp_graph(const void *a, const void *b)
{
	const struct graph *x = *(const struct graph *const *)a, *y = *(const struct graph *const *)b;
	if (x->phase != y->phase)
		return x->phase - y->phase;
	for (int i = 0; i < 4; i++)
		if (x->v[i] != y->v[i])
			return x->v[i] < y->v[i] ? -1 : 1;
	return 0;
}

/* buckets.csv's row as printf writes it: the reference of bucket_row. */
static void bucket_row_printf(FILE *f, const struct graph *g)
{
	char pass[32], comp[32], ratio[32];
	fmt_ns_ms(pass, sizeof pass, g->cost_ns);
	fmt_ns_s(comp, sizeof comp, g->compile_ns);
	if (g->padded_tokens)
		snprintf(ratio, sizeof ratio, "%.6f",
			 (double)(g->padded_tokens - g->real_tokens) / (double)g->padded_tokens);
	else
		ratio[0] = 0;
	char causal[8] = "";
	if (g->phase == PHASE_UNIFIED)
		snprintf(causal, sizeof causal, "%d", g->v[3]);
	fprintf(f, "%s,%d,%d,%d,%s,%d,%d,%d,%lld,%lld,%lld,%s,%s,%s\n",
		bucket_phase_name((enum phase)g->phase), g->v[0], g->v[1], g->v[2], causal, g->warm,
		g->fallback, g->runtime, (long long)g->uses, (long long)g->real_tokens,
		(long long)g->padded_tokens, ratio, pass, comp);
}

static void bucket_row(FILE *f, const struct graph *g)
{
	/* 14 fields: 10 integers of at most 20 bytes, 2 times of at most 22, a ratio (%.6f of a
	 * value that may be anything if a count is corrupt: at most 330 bytes), a phase name. */
	char line[640], *q = line;
	q = put_str_c(q, bucket_phase_name((enum phase)g->phase));
	for (int i = 0; i < 3; i++)
		q = put_i64_c(q, g->v[i]);
	if (g->phase == PHASE_UNIFIED)
		q = put_i64(q, g->v[3]);
	*q++ = ',';
	q = put_i64_c(q, g->warm);
	q = put_i64_c(q, g->fallback);
	q = put_i64_c(q, g->runtime);
	q = put_i64_c(q, g->uses);
	q = put_i64_c(q, g->real_tokens);
	q = put_i64_c(q, g->padded_tokens);
	if (g->padded_tokens)
		q = put_f6(q, (double)(g->padded_tokens - g->real_tokens) / (double)g->padded_tokens);
	*q++ = ',';
	q = put_ms6(q, g->cost_ns);
	*q++ = ',';
	q = put_s9(q, g->compile_ns);
	*q++ = '\n';
	fwrite(line, 1, (size_t)(q - line), f);
}

void report_buckets(FILE *f, const struct sim *s)
{
	static const char *const cols[] = {
		"phase", "bs", "query", "blocks", "causal", "warmed", "fallback", "compiled_at_runtime", "uses",
		"real_tokens", "padded_tokens", "padding_ratio", "pass_ms", "compile_s", NULL};
	header(f, cols);
	size_t ng;
	const struct graph *graphs = sim_graphs(s, &ng);
	const struct graph **g = xmalloc((ng ? ng : 1) * sizeof *g);
	for (size_t i = 0; i < ng; i++)
		g[i] = &graphs[i];
	qsort(g, ng, sizeof *g, cmp_graph);
	for (size_t i = 0; i < ng; i++) {
		if (report_reference_format)
			bucket_row_printf(f, g[i]);
		else
			bucket_row(f, g[i]);
	}
	free(g);
}

void report_monitor_header(FILE *f)
{
	static const char *const cols[] = {
		"time_s", "waiting", "running", "transferring", "kv_used_blocks", "kv_max_block_id",
		"kv_total_blocks", "kv_utilization", "arrival_rate", "mean_waiting_prompt_tokens", "batch_latency_ms",
		"buckets", "microbatches_in_flight", NULL};
	header(f, cols);
}

void report_monitor_row(FILE *f, const struct monitor_rec *m)
{
	double kv = m->kv_total ? (double)m->kv_used / (double)m->kv_total : 0.0;
	if (report_reference_format) {
		char t[32];
		fmt_ns_s(t, sizeof t, m->t_ns);
		fprintf(f, "%s,%zu,%zu,%zu,%lld,%lld,%lld,%.6f,%.6f,%.3f,%.6f,%zu,%zu\n", t, m->waiting,
			m->running, m->transferring, (long long)m->kv_used, (long long)m->kv_max_id,
			(long long)m->kv_total, kv,
			m->arrival_rate, m->mean_waiting_len, m->batch_latency_ms, m->buckets,
			m->microbatches);
		return;
	}
	/* 13 fields: 9 integers of at most 20 bytes, a time of at most 22, 4 numbers of at most
	 * 330 (%.6f of a huge double). */
	char line[1536], *p = line;
	p = put_s9(p, m->t_ns);
	*p++ = ',';
	p = put_u64(p, m->waiting);
	*p++ = ',';
	p = put_u64(p, m->running);
	*p++ = ',';
	p = put_u64(p, m->transferring);
	*p++ = ',';
	p = put_i64_c(p, m->kv_used);
	p = put_i64_c(p, m->kv_max_id);
	p = put_i64_c(p, m->kv_total);
	p = put_f6(p, kv);
	*p++ = ',';
	p = put_f6(p, m->arrival_rate);
	*p++ = ',';
	p = put_f3(p, m->mean_waiting_len);
	*p++ = ',';
	p = put_f6(p, m->batch_latency_ms);
	*p++ = ',';
	p = put_u64(p, m->buckets);
	*p++ = ',';
	p = put_u64(p, m->microbatches);
	*p++ = '\n';
	fwrite(line, 1, (size_t)(p - line), f);
}

void report_boundaries_header(FILE *f)
{
	static const char *const cols[] = {"time_s", "queue", "splits", "merged", "n_max",
					   "buckets", "boundaries", NULL};
	header(f, cols);
}

void report_boundaries_row(FILE *f, int64_t t_ns, bool offline, const uint32_t *b, size_t nb,
			   size_t splits, size_t merged, uint64_t n_max)
{
	if (report_reference_format) {
		char t[32];
		fmt_ns_s(t, sizeof t, t_ns);
		fprintf(f, "%s,%s,%zu,%zu,", t, offline ? "offline" : "all", splits, merged);
		if (n_max != UINT64_MAX)
			fprintf(f, "%llu", (unsigned long long)n_max);
		fprintf(f, ",%zu,", nb ? nb - 1 : 0);
		for (size_t i = 0; i < nb; i++)
			fprintf(f, "%s%u", i ? " " : "", b[i]);
		fputc('\n', f);
		return;
	}
	/* The fixed fields, then the boundaries (11 bytes each at most) in pieces of the line. */
	char line[1024], *p = line;
	p = put_s9(p, t_ns);
	*p++ = ',';
	p = put_str_c(p, offline ? "offline" : "all");
	p = put_u64(p, splits);
	*p++ = ',';
	p = put_u64(p, merged);
	*p++ = ',';
	if (n_max != UINT64_MAX)
		p = put_u64(p, n_max);
	*p++ = ',';
	p = put_u64(p, nb ? nb - 1 : 0);
	*p++ = ',';
	for (size_t i = 0; i < nb; i++) {
		if ((size_t)(p - line) > sizeof line - 16) {
			fwrite(line, 1, (size_t)(p - line), f);
			p = line;
		}
		if (i)
			*p++ = ' ';
		p = put_u32(p, b[i]);
	}
	*p++ = '\n';
	fwrite(line, 1, (size_t)(p - line), f);
}
