/*
 * report: see report.h.
 */
#include "analysis/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool report_reference_format;

/* ---- number formatting: digits written straight into the line (printf's output, faster) ---- */

/* Decimal digits of V at P; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)(-(v + 1)) + 1);
	}
	return put_u64(p, (uint64_t)v);
}

/* V / SCALE with DIGITS decimals, exactly (SCALE = 10^DIGITS). */
static char *put_fixed(char *p, int64_t v, uint64_t scale, int digits)
{
	uint64_t a = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
	if (v < 0)
		*p++ = '-';
	p = put_u64(p, a / scale);
	*p++ = '.';
	uint64_t f = a % scale;
	for (int i = digits - 1; i >= 0; i--) {
		p[i] = (char)('0' + f % 10);
		f /= 10;
	}
	return p + digits;
}

/* printf("%.6f", X) for a finite X >= 0.  Fast path: Y = X * 1e6 is within 2^-52 relative of
 * the exact product, so when Y's fraction is not within that of one half, rounding Y and
 * rounding the exact product agree; otherwise (ties, huge values, negative, NaN) snprintf,
 * which is also the reference (report_reference_format). */
static char *put_f6(char *p, double x)
{
	if (!report_reference_format && x >= 0 && x < 4e9) {
		double y = x * 1e6, r = floor(y), f = y - r;
		if (fabs(f - 0.5) > y * 0x1p-50 + 0x1p-60)
			return put_fixed(p, (int64_t)r + (f > 0.5), 1000000, 6);
	}
	return p + sprintf(p, "%.6f", x);
}

int fmt_ns_s(char *buf, size_t n, int64_t ns)
{
	char tmp[32];
	int len = (int)(put_fixed(tmp, ns, 1000000000, 9) - tmp);
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
	int len = (int)(put_fixed(tmp, ns, 1000000, 6) - tmp);
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

static void header(FILE *f, const char *const *cols)
{
	/* Column names are snake_case identifiers: nothing to quote. */
	for (size_t i = 0; cols[i]; i++)
		fprintf(f, "%s%s", i ? "," : "", cols[i]);
	fputc('\n', f);
}

void report_requests_header(FILE *f)
{
	static const char *const cols[] = {
		"id", "arrival_s", "scheduled_s", "first_token_s", "finish_s", "prompt_tokens",
		"output_tokens", "preemptions", "ttft_ms", "tpot_ms", "e2e_ms", "instance",
		"prefill_instance", "kv_transfer_ms", NULL};
	header(f, cols);
}

void report_request_row(FILE *f, const struct sim *s, int32_t id)
{
	const struct req *r = sim_req(s, id);
	const struct req_spec *q = sim_spec(s, id);
	int64_t now = sim_now(s);
	/* 14 fields of at most 21 bytes, tpot at most 330 (the %.6f of a huge double). */
	char line[640], *p = line;
	p = put_i64(p, id);
	*p++ = ',';
	p = put_fixed(p, q->arrival_ns, 1000000000, 9);
	*p++ = ',';
	p = put_fixed(p, r->t_sched, 1000000000, 9);
	*p++ = ',';
	p = put_fixed(p, r->t_first, 1000000000, 9);
	*p++ = ',';
	p = put_fixed(p, now, 1000000000, 9);
	*p++ = ',';
	p = put_i64(p, q->prompt_tokens);
	*p++ = ',';
	p = put_i64(p, q->output_tokens);
	*p++ = ',';
	p = put_i64(p, r->preemptions);
	*p++ = ',';
	p = put_fixed(p, r->t_first - q->arrival_ns, 1000000, 6);
	*p++ = ',';
	if (q->output_tokens > 1)
		p = put_f6(p, (double)(now - r->t_first) / 1e6 / (q->output_tokens - 1));
	*p++ = ',';
	p = put_fixed(p, now - q->arrival_ns, 1000000, 6);
	*p++ = ',';
	p = put_i64(p, r->lane);
	*p++ = ',';
	if (r->prefill_inst >= 0)
		p = put_i64(p, r->prefill_inst);
	*p++ = ',';
	p = put_fixed(p, r->transfer_ns, 1000000, 6);
	*p++ = '\n';
	if (report_reference_format) {
		/* The reference: every field through printf. */
		char a[32], b[32], c[32], d[32], ttft[32], e2e[32], tpot[400] = "";
		fmt_ns_s(a, sizeof a, q->arrival_ns);
		fmt_ns_s(b, sizeof b, r->t_sched);
		fmt_ns_s(c, sizeof c, r->t_first);
		fmt_ns_s(d, sizeof d, now);
		fmt_ns_ms(ttft, sizeof ttft, r->t_first - q->arrival_ns);
		fmt_ns_ms(e2e, sizeof e2e, now - q->arrival_ns);
		if (q->output_tokens > 1)
			snprintf(tpot, sizeof tpot, "%.6f",
				 (double)(now - r->t_first) / 1e6 / (q->output_tokens - 1));
		char pin[16] = "";
		if (r->prefill_inst >= 0)
			snprintf(pin, sizeof pin, "%d", r->prefill_inst);
		fprintf(f, "%d,%s,%s,%s,%s,%d,%d,%d,%s,%s,%s,%d,%s,%.6f\n", id, a, b, c, d,
			q->prompt_tokens, q->output_tokens, r->preemptions, ttft, tpot, e2e, r->lane,
			pin, (double)r->transfer_ns / 1e6);
		return;
	}
	fwrite(line, 1, (size_t)(p - line), f);
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

void report_batch_row(FILE *f, const struct pass_rec *p)
{
	char a[32], b[32], c[32];
	fmt_ns_s(a, sizeof a, p->start_ns);
	fmt_ns_s(b, sizeof b, p->end_ns);
	fmt_ns_ms(c, sizeof c, p->compile_ns);
	if (p->phase == PHASE_UNIFIED) {
		/* The seed's tuple (phase, query_len, num_shared_blocks, num_unique_blocks,
		 * num_logits) in columns of its own; the prompt/decode shape columns stay empty.
		 * The phase string names the attention paths that run: causal, shared, unique. */
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
		char pass[32], comp[32], ratio[32];
		fmt_ns_ms(pass, sizeof pass, g[i]->cost_ns);
		fmt_ns_s(comp, sizeof comp, g[i]->compile_ns);
		if (g[i]->padded_tokens)
			snprintf(ratio, sizeof ratio, "%.6f",
				 (double)(g[i]->padded_tokens - g[i]->real_tokens) /
					 (double)g[i]->padded_tokens);
		else
			ratio[0] = 0;
		char causal[8] = "";
		if (g[i]->phase == PHASE_UNIFIED)
			snprintf(causal, sizeof causal, "%d", g[i]->v[3]);
		fprintf(f, "%s,%d,%d,%d,%s,%d,%d,%d,%lld,%lld,%lld,%s,%s,%s\n",
			bucket_phase_name((enum phase)g[i]->phase), g[i]->v[0], g[i]->v[1], g[i]->v[2],
			causal,
			g[i]->warm, g[i]->fallback, g[i]->runtime,
			(long long)g[i]->uses, (long long)g[i]->real_tokens,
			(long long)g[i]->padded_tokens, ratio, pass, comp);
	}
	free(g);
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsRaw(v))
		return strtod(v->valuestring, NULL);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : "?";
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
	char t[32];
	fmt_ns_s(t, sizeof t, m->t_ns);
	fprintf(f, "%s,%zu,%zu,%zu,%lld,%lld,%lld,%.6f,%.6f,%.3f,%.6f,%zu,%zu\n", t, m->waiting,
		m->running, m->transferring, (long long)m->kv_used, (long long)m->kv_max_id,
		(long long)m->kv_total,
		m->kv_total ? (double)m->kv_used / (double)m->kv_total : 0.0, m->arrival_rate,
		m->mean_waiting_len, m->batch_latency_ms, m->buckets, m->microbatches);
}

void report_boundaries_header(FILE *f)
{
	static const char *const cols[] = {"time_s", "queue", "splits", "merged", "buckets",
					   "boundaries", NULL};
	header(f, cols);
}

void report_boundaries_row(FILE *f, int64_t t_ns, bool offline, const uint32_t *b, size_t nb,
			   size_t splits, size_t merged)
{
	char t[32];
	fmt_ns_s(t, sizeof t, t_ns);
	fprintf(f, "%s,%s,%zu,%zu,%zu,", t, offline ? "offline" : "all", splits, merged,
		nb ? nb - 1 : 0);
	for (size_t i = 0; i < nb; i++)
		fprintf(f, "%s%u", i ? " " : "", b[i]);
	fputc('\n', f);
}

void report_human(FILE *f, const cJSON *summary)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(summary, "meta");
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(summary, "config");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(summary, "metrics");
	const cJSON *wl = cJSON_GetObjectItemCaseSensitive(meta, "workload");
	fprintf(f, "bucketsim %s  workload %s  seed %.0f\n", str(meta, "version"), str(wl, "source"),
		num(meta, "seed"));
	fprintf(f, "  %s on %s (tp %.0f), bucketing %s/%s, max_num_seqs %.0f, "
		   "max_num_batched_tokens %.0f, max_model_len %.0f, %.0f KV blocks\n",
		str(cfg, "model"), str(cfg, "hardware"), num(cfg, "hardware.tp"),
		str(cfg, "bucketing.strategy"), str(cfg, "bucketing.version"),
		num(cfg, "server.max_num_seqs"), num(cfg, "server.max_num_batched_tokens"),
		num(cfg, "server.max_model_len"), num(cfg, "server.num_kv_blocks"));
	fprintf(f, "requests    %.0f completed in %.3f s simulated (%.0f input, %.0f output tokens)\n",
		num(m, "completed"), num(m, "duration"), num(m, "total_input_tokens"),
		num(m, "total_output_tokens"));
	fprintf(f, "throughput  %.3f req/s, %.1f output tok/s, %.1f total tok/s\n",
		num(m, "request_throughput"), num(m, "output_throughput"),
		num(m, "total_token_throughput"));
	static const char *const rows[][2] = {
		{"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2el", "E2E"}};
	fprintf(f, "latency     %-5s %10s %10s %10s %10s (ms)\n", "", "mean", "median", "p90", "p99");
	for (size_t i = 0; i < 4; i++) {
		char k[4][48];
		snprintf(k[0], 48, "mean_%s_ms", rows[i][0]);
		snprintf(k[1], 48, "median_%s_ms", rows[i][0]);
		snprintf(k[2], 48, "p90_%s_ms", rows[i][0]);
		snprintf(k[3], 48, "p99_%s_ms", rows[i][0]);
		fprintf(f, "            %-5s %10.3f %10.3f %10.3f %10.3f\n", rows[i][1], num(m, k[0]),
			num(m, k[1]), num(m, k[2]), num(m, k[3]));
	}
	fprintf(f, "SLO         %.2f%% of requests meet TTFT <= %.0f ms and TPOT <= %.0f ms",
		100 * num(m, "slo_attainment"), num(cfg, "slo.ttft_ms"), num(cfg, "slo.tpot_ms"));
	if (num(cfg, "slo.e2e_ms") > 0) /* null (no objective) reads as NaN */
		fprintf(f, " and E2E <= %.0f ms", num(cfg, "slo.e2e_ms"));
	fprintf(f, "; goodput %.3f req/s", num(m, "goodput"));
	if (num(m, "unfinished") > 0)
		fprintf(f, "; %.0f unfinished (counted as failing)", num(m, "unfinished"));
	fputc('\n', f);
	fprintf(f, "padding     %.2f%% of computed tokens are padding (%.0f real, %.0f padded)",
		100 * num(m, "padding_waste_ratio"), num(m, "real_tokens"), num(m, "padded_tokens"));
	if (num(m, "padded_kv_blocks") > 0)
		fprintf(f, "; %.2f%% of decode KV blocks read are padding",
			100 * num(m, "kv_block_padding_ratio"));
	fputc('\n', f);
	fprintf(f, "graphs      %.0f compiled at warm-up (%.1f s), %.0f at run time (%.3f s), "
		   "%.0f fallback buckets\n",
		num(m, "compiles_warmup"), num(m, "warmup_s"), num(m, "compiles_runtime"),
		num(m, "runtime_compile_s"), num(m, "fallback_buckets"));
	if (num(m, "unified_passes") > 0)
		fprintf(f, "engine      %.0f unified passes", num(m, "unified_passes"));
	else
		fprintf(f, "engine      %.0f prefill + %.0f decode passes", num(m, "prefill_passes"),
			num(m, "decode_passes"));
	fprintf(f, " on %.0f instance%s (%.0f card%s)", num(m, "instances"),
		num(m, "instances") > 1 ? "s" : "", num(m, "cards"), num(m, "cards") > 1 ? "s" : "");
	if (num(m, "pipeline_stages") > 1)
		fprintf(f, " of %.0f pipeline stages", num(m, "pipeline_stages"));
	fprintf(f, ", utilization %.1f%%, %.0f preemptions, KV peak %.0f of "
		   "%.0f blocks\n",
		100 * num(m, "utilization"), num(m, "preemptions"), num(m, "kv_blocks_peak"),
		num(m, "kv_blocks_total"));
	if (num(m, "prefix_cache_hit_tokens") > 0)
		fprintf(f, "prefix      %.0f prompt tokens served from the prefix cache (%.2f%% of input)\n",
			num(m, "prefix_cache_hit_tokens"),
			100 * num(m, "prefix_cache_hit_tokens") / num(m, "total_input_tokens"));
	if (num(m, "kv_transfers") > 0)
		fprintf(f, "transfer    %.0f KV transfers, mean %.3f ms\n", num(m, "kv_transfers"),
			num(m, "mean_kv_transfer_ms"));
	if (num(m, "bucket_splits") > 0 || num(m, "bucket_merges") > 0)
		fprintf(f, "buckets     %.0f splits, %.0f merges; batch waste (Eq. 2) %.4f mean; "
			   "expected waste (Eq. 3) %.4f\n", num(m, "bucket_splits"),
			num(m, "bucket_merges"), num(m, "batch_waste_ratio_mean"),
			num(m, "expected_waste_eq3"));
}
