/*
 * metrics: see metrics.h.
 */
#include "analysis/metrics.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

void metrics_init(struct metrics *m, size_t n_req, double slo_ttft_ms, double slo_tpot_ms)
{
	memset(m, 0, sizeof *m);
	m->n_req = n_req;
	m->ttft_ns = xmalloc((n_req ? n_req : 1) * sizeof *m->ttft_ns);
	m->e2e_ns = xmalloc((n_req ? n_req : 1) * sizeof *m->e2e_ns);
	m->tpot_ms = xmalloc((n_req ? n_req : 1) * sizeof *m->tpot_ms);
	m->itl_cap = 256;
	m->itl = xcalloc(m->itl_cap, sizeof *m->itl);
	m->slo_ttft_ms = slo_ttft_ms;
	m->slo_tpot_ms = slo_tpot_ms;
	m->first_arrival_ns = INT64_MAX;
}

void metrics_release(struct metrics *m)
{
	free(m->ttft_ns);
	free(m->e2e_ns);
	free(m->ttft_ms);
	free(m->e2e_ms);
	free(m->tpot_ms);
	free(m->itl);
	free(m->stage_busy_ns);
	memset(m, 0, sizeof *m);
}

void metrics_itl_grow(struct metrics *m)
{
	size_t ncap = m->itl_cap * 2;
	struct itl_cell *t = xcalloc(ncap, sizeof *t);
	for (size_t i = 0; i < m->itl_cap; i++)
		if (m->itl[i].count)
			t[metrics_itl_slot(t, ncap, m->itl[i].gap_ns)] = m->itl[i];
	free(m->itl);
	m->itl = t;
	m->itl_cap = ncap;
}

/* Value at 0-based position POS of the expanded multiset. */
static double wvalue_at(const double *x, const int64_t *w, size_t n, int64_t pos)
{
	int64_t acc = 0;
	for (size_t i = 0; i < n; i++) {
		acc += w[i];
		if (pos < acc)
			return x[i];
	}
	return x[n - 1];
}

double metrics_wquantile(const double *x, const int64_t *w, size_t n, double f)
{
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += w[i];
	if (total == 0)
		return NAN;
	/* gsl_stats_quantile_from_sorted_data: index = (N-1) f, linear interpolation. */
	double index = f * (double)(total - 1);
	int64_t lhs = (int64_t)index;
	double delta = index - (double)lhs;
	double a = wvalue_at(x, w, n, lhs);
	if (lhs + 1 >= total || delta == 0)
		return a;
	double b = wvalue_at(x, w, n, lhs + 1);
	return (1 - delta) * a + delta * b;
}

void json_add_num(cJSON *o, const char *k, double v)
{
	/* NaN (an empty sample) is written as null. */
	cJSON_AddItemToObject(o, k, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

void json_add_int(cJSON *o, const char *k, int64_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)v);
	cJSON_AddItemToObject(o, k, cJSON_CreateRaw(buf));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

bool metrics_reference_sort;

/* The 8-byte slot I of P as an integer, and back (the radix sort's keys live in the sorted
 * array's own storage, doubles or integers; memcpy moves the bits between the types). */
static inline uint64_t slot_get(const void *p, size_t i)
{
	uint64_t k;
	memcpy(&k, (const char *)p + i * sizeof k, sizeof k);
	return k;
}

static inline void slot_put(void *p, size_t i, uint64_t k)
{
	memcpy((char *)p + i * sizeof k, &k, sizeof k);
}

/* The 0-based index of the highest set bit of V (V != 0). */
static int top_bit(uint64_t v)
{
	int b = 0;
	while (v >>= 1)
		b++;
	return b;
}

/* LSD radix sort of the N unsigned keys in the slots of X, ascending, with BUF (N slots) as
 * the other buffer; returns the one holding the result.  VARY has a bit set where the keys
 * differ: the digits cover only its lowest to highest bit (the other bits are the same in
 * every key, so they do not order anything), in as few passes of at most 11 bits as that span
 * needs.  Each pass counts the next pass's digits while it scatters. */
static void *radix_keys(void *x, void *buf, size_t n, uint64_t vary)
{
	enum { MAX_BITS = 11 };
	if (!vary)
		return x;
	int lo = 0;
	while (!(vary >> lo & 1))
		lo++;
	int span = top_bit(vary) - lo + 1;
	int passes = (span + MAX_BITS - 1) / MAX_BITS, bits = (span + passes - 1) / passes;
	size_t radix = (size_t)1 << bits, mask = radix - 1;
	size_t *cnt = xcalloc(2 * radix, sizeof *cnt), *c = cnt, *next = cnt + radix;
	for (size_t i = 0; i < n; i++)
		c[slot_get(x, i) >> lo & mask]++;
	void *src = x, *dst = buf;
	for (int p = 0; p < passes; p++) {
		int shift = lo + p * bits, nshift = shift + bits;
		size_t sum = 0;
		for (size_t d = 0; d < radix; d++) {
			size_t v = c[d];
			c[d] = sum;
			sum += v;
		}
		if (p + 1 < passes) {
			memset(next, 0, radix * sizeof *next);
			for (size_t i = 0; i < n; i++) {
				uint64_t k = slot_get(src, i);
				slot_put(dst, c[k >> shift & mask]++, k);
				next[k >> nshift & mask]++;
			}
		} else {
			for (size_t i = 0; i < n; i++) {
				uint64_t k = slot_get(src, i);
				slot_put(dst, c[k >> shift & mask]++, k);
			}
		}
		size_t *t = c;
		c = next;
		next = t;
		void *s = src;
		src = dst;
		dst = s;
	}
	free(cnt);
	return src;
}

/* Arrays shorter than this go to qsort. */
enum { RADIX_MIN = 256 };

/* Whether the radix sort takes the N keys in the slots of X (not under metrics_reference_sort,
 * at least RADIX_MIN of them, no bit 63 set in any key nor in any key + CARRY), and the bits in
 * which they differ (*VARY: their AND xor their OR). */
static bool radix_takes(const void *x, size_t n, uint64_t carry, uint64_t *vary)
{
	if (metrics_reference_sort || n < RADIX_MIN)
		return false;
	uint64_t all = ~0ull, any = 0, bad = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = slot_get(x, i);
		all &= k;
		any |= k;
		bad |= k + carry;
	}
	*vary = all ^ any;
	return !((any | bad) >> 63);
}

/* Sorts the N 64-bit slots of X: the radix sort when radix_takes() lets it (CARRY as there),
 * else qsort with CMP, the reference. */
static void radix_or_qsort(void *x, size_t n, uint64_t carry,
			   int (*cmp)(const void *, const void *))
{
	uint64_t vary;
	if (!radix_takes(x, n, carry, &vary)) {
		qsort(x, n, sizeof(uint64_t), cmp);
		return;
	}
	void *buf = xmalloc(n * sizeof(uint64_t));
	if (radix_keys(x, buf, n, vary) != x)
		memcpy(x, buf, n * sizeof(uint64_t));
	free(buf);
}

void metrics_sort(double *x, size_t n)
{
	/* The keys are the doubles' bits, whose unsigned order is the numeric order for every
	 * value from +0 to +infinity.  A value with the sign bit set (a negative number, -0) or
	 * a NaN (bits above +infinity's: adding 2^52 - 1 carries into bit 63) goes to qsort, the
	 * reference.  Equal non-negative doubles are identical bits, so the sorted array is
	 * qsort's. */
	radix_or_qsort(x, n, 0x000fffffffffffffull, cmp_double);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sorts V ascending: the radix sort for non-negative values, qsort for short arrays, arrays
 * with a negative value and under metrics_reference_sort. */
static void sort_i64(int64_t *v, size_t n)
{
	radix_or_qsort(v, n, 0, cmp_i64);
}

double *metrics_sorted_ms(int64_t *ns, size_t n)
{
	/* ns -> ms (a conversion to double, then a correctly rounded division) never decreases,
	 * so sorting the integers and converting them gives the array that converting and sorting
	 * gives, as long as the integers' unsigned order is their order: none is negative.  The
	 * ms values are written into the radix sort's second buffer (8 bytes a value for both
	 * steps: this runs at the end of a run, when memory peaks). */
	uint64_t vary;
	double *ms = xmalloc((n ? n : 1) * sizeof *ms);
	if (!radix_takes(ns, n, 0, &vary)) {
		for (size_t i = 0; i < n; i++)
			ms[i] = (double)ns[i] / 1e6;
		free(ns);
		metrics_sort(ms, n);
		return ms;
	}
	const void *sorted = radix_keys(ns, ms, n, vary);
	for (size_t i = 0; i < n; i++)
		ms[i] = (double)(int64_t)slot_get(sorted, i) / 1e6;
	free(ns);
	return ms;
}

bool metrics_reference_stats;

void metrics_mean_sd3(const double *const x[3], const size_t n[3], double mean[3], double sd[3])
{
	if (metrics_reference_stats) {
		for (int j = 0; j < 3; j++) {
			mean[j] = n[j] ? gsl_stats_mean(x[j], 1, n[j]) : NAN;
			/* vllm bench uses numpy's std, the population standard deviation (ddof 0). */
			sd[j] = n[j] > 1 ? gsl_stats_sd_with_fixed_mean(x[j], 1, n[j], mean[j])
				: n[j] ? 0.0 : NAN;
		}
		return;
	}
	/* GSL's recurrences (gsl statistics/mean_source.c gsl_stats_mean, variance_source.c
	 * compute_variance under gsl_stats_sd_with_fixed_mean), operation for operation: a long
	 * double accumulator, the difference from a double mean taken in double, one division by
	 * i + 1 per value.  The three arrays advance together while they all have values, so the
	 * three chains of dependent divisions overlap. */
	size_t lo = n[0] < n[1] ? n[0] : n[1];
	lo = lo < n[2] ? lo : n[2];
	long double m0 = 0, m1 = 0, m2 = 0, m[3];
	for (size_t i = 0; i < lo; i++) {
		m0 += (x[0][i] - m0) / (i + 1);
		m1 += (x[1][i] - m1) / (i + 1);
		m2 += (x[2][i] - m2) / (i + 1);
	}
	m[0] = m0;
	m[1] = m1;
	m[2] = m2;
	for (int j = 0; j < 3; j++) {
		long double mj = m[j];
		for (size_t i = lo; i < n[j]; i++)
			mj += (x[j][i] - mj) / (i + 1);
		mean[j] = n[j] ? (double)mj : NAN;
	}
	long double v0 = 0, v1 = 0, v2 = 0, v[3];
	for (size_t i = 0; i < lo; i++) {
		const long double d0 = x[0][i] - mean[0], d1 = x[1][i] - mean[1],
				  d2 = x[2][i] - mean[2];
		v0 += (d0 * d0 - v0) / (i + 1);
		v1 += (d1 * d1 - v1) / (i + 1);
		v2 += (d2 * d2 - v2) / (i + 1);
	}
	v[0] = v0;
	v[1] = v1;
	v[2] = v2;
	for (int j = 0; j < 3; j++) {
		long double vj = v[j];
		for (size_t i = lo; i < n[j]; i++) {
			const long double d = x[j][i] - mean[j];
			vj += (d * d - vj) / (i + 1);
		}
		const double var = (double)vj;
		sd[j] = n[j] > 1 ? sqrt(var) : n[j] ? 0.0 : NAN;
	}
}

/* mean, median, std, p90, p99 of X (sorted) under NAME, as vllm bench names them (MEAN and SD
 * from metrics_mean_sd3). */
static void add_dist(cJSON *o, const char *name, const double *x, size_t n, double mean,
		     double sd)
{
	char key[64];
	double med = NAN, p90 = NAN, p99 = NAN;
	if (n) {
		med = gsl_stats_median_from_sorted_data(x, 1, n);
		p90 = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.90);
		p99 = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.99);
	}
	snprintf(key, sizeof key, "mean_%s_ms", name);
	json_add_num(o, key, mean);
	snprintf(key, sizeof key, "median_%s_ms", name);
	json_add_num(o, key, med);
	snprintf(key, sizeof key, "std_%s_ms", name);
	json_add_num(o, key, sd);
	snprintf(key, sizeof key, "p90_%s_ms", name);
	json_add_num(o, key, p90);
	snprintf(key, sizeof key, "p99_%s_ms", name);
	json_add_num(o, key, p99);
}

static void add_itl(cJSON *o, struct metrics *m)
{
	/* The distinct gaps, sorted, then each one's count looked up in the set. */
	size_t n = 0;
	int64_t *gap = xmalloc((m->itl_n ? m->itl_n : 1) * sizeof *gap);
	for (size_t i = 0; i < m->itl_cap; i++)
		if (m->itl[i].count)
			gap[n++] = m->itl[i].gap_ns;
	sort_i64(gap, n);
	double *x = xmalloc((n ? n : 1) * sizeof *x);
	int64_t *w = xmalloc((n ? n : 1) * sizeof *w);
	double sum = 0, tot = (double)m->itl_total;
	for (size_t i = 0; i < n; i++) {
		x[i] = (double)gap[i] / 1e6;
		w[i] = m->itl[metrics_itl_slot(m->itl, m->itl_cap, gap[i])].count;
		sum += x[i] * (double)w[i];
	}
	double mean = n ? sum / tot : NAN, var = 0;
	for (size_t i = 0; i < n; i++)
		var += (double)w[i] * (x[i] - mean) * (x[i] - mean);
	json_add_num(o, "mean_itl_ms", mean);
	json_add_num(o, "median_itl_ms", metrics_wquantile(x, w, n, 0.5));
	json_add_num(o, "std_itl_ms", n ? sqrt(var / tot) : NAN);
	json_add_num(o, "p90_itl_ms", metrics_wquantile(x, w, n, 0.90));
	json_add_num(o, "p99_itl_ms", metrics_wquantile(x, w, n, 0.99));
	free(gap);
	free(x);
	free(w);
}

double metrics_slo_attainment(const struct metrics *m)
{
	return m->n_req ? (double)m->slo_met / (double)m->n_req : NAN;
}

/* Pipeline parallelism (analysis/README.md): per stage, utilisation (busy over instances x
 * simulated time) and bubble fraction (idle while its instance had a running request, over
 * the same); per run, the atomic loop's empty microbatches and the virtual engines' KV
 * fragmentation. */
static void add_pipeline(cJSON *o, const struct metrics *m)
{
	cJSON *util = cJSON_CreateArray(), *bub = cJSON_CreateArray();
	double wall = (double)m->end_ns * (m->pp_instances ? m->pp_instances : 1), mean = 0;
	for (int j = 0; j < m->pp_stages; j++) {
		double b = (double)m->stage_busy_ns[j];
		mean += wall > 0 ? ((double)m->stage_active_ns - b) / wall / m->pp_stages : 0;
		cJSON_AddItemToArray(util, cJSON_CreateNumber(wall > 0 ? b / wall : 0));
		cJSON_AddItemToArray(bub, cJSON_CreateNumber(
						  wall > 0 ? ((double)m->stage_active_ns - b) / wall : 0));
	}
	cJSON_AddItemToObject(o, "pp_stage_utilization", util);
	cJSON_AddItemToObject(o, "pp_stage_bubble_fraction", bub);
	json_add_num(o, "pp_bubble_fraction_mean", mean);
	json_add_int(o, "pp_empty_microbatches", m->empty_microbatches);
	json_add_int(o, "pp_lost_slots", m->lost_slots);
	json_add_int(o, "pp_kv_fragmented_preemptions", m->frag_preemptions);
	json_add_num(o, "pp_kv_free_elsewhere_blocks_mean",
		     m->preemptions ? (double)m->frag_free_blocks / (double)m->preemptions : 0);
}

cJSON *metrics_to_json(struct metrics *m)
{
	cJSON *o = cJSON_CreateObject();
	double dur = m->done ? (double)(m->last_finish_ns - m->first_arrival_ns) / 1e9 : 0;
	json_add_int(o, "completed", (int64_t)m->done);
	json_add_num(o, "duration", dur);
	json_add_int(o, "total_input_tokens", m->prompt_tokens);
	json_add_int(o, "total_output_tokens", m->output_tokens);
	json_add_num(o, "request_throughput", dur > 0 ? (double)m->done / dur : NAN);
	json_add_num(o, "output_throughput", dur > 0 ? (double)m->output_tokens / dur : NAN);
	json_add_num(o, "total_token_throughput",
		dur > 0 ? (double)(m->prompt_tokens + m->output_tokens) / dur : NAN);
	/* One sort per sample (radix; qsort is its reference), then the statistics on the sorted
	 * arrays, in that order (the mean's rounding depends on it). */
	if (!m->ttft_ms) {
		m->ttft_ms = metrics_sorted_ms(m->ttft_ns, m->done);
		m->ttft_ns = NULL;
		m->e2e_ms = metrics_sorted_ms(m->e2e_ns, m->done);
		m->e2e_ns = NULL;
	}
	metrics_sort(m->tpot_ms, m->n_tpot);
	const double *x[3] = {m->ttft_ms, m->tpot_ms, m->e2e_ms};
	const size_t n[3] = {m->done, m->n_tpot, m->done};
	double mean[3], sd[3];
	metrics_mean_sd3(x, n, mean, sd);
	add_dist(o, "ttft", x[0], n[0], mean[0], sd[0]);
	add_dist(o, "tpot", x[1], n[1], mean[1], sd[1]);
	add_itl(o, m);
	add_dist(o, "e2el", x[2], n[2], mean[2], sd[2]);
	/* Requests of the workload that did not finish (sim.stop_s) fail every objective: they
	 * stay in the denominator. */
	json_add_int(o, "unfinished", (int64_t)(m->n_req - m->done));
	json_add_num(o, "slo_attainment", metrics_slo_attainment(m));
	json_add_num(o, "goodput", dur > 0 ? (double)m->slo_met / dur : NAN);
	json_add_int(o, "real_tokens", m->real_tokens);
	json_add_int(o, "padded_tokens", m->padded_tokens);
	json_add_num(o, "padding_waste_ratio",
		m->padded_tokens ? (double)(m->padded_tokens - m->real_tokens) / (double)m->padded_tokens
				 : NAN);
	json_add_int(o, "real_kv_blocks", m->real_blocks);
	json_add_int(o, "padded_kv_blocks", m->padded_blocks);
	json_add_num(o, "kv_block_padding_ratio",
		m->padded_blocks ? (double)(m->padded_blocks - m->real_blocks) / (double)m->padded_blocks
				 : NAN);
	json_add_int(o, "compiles_warmup", m->compiles_warmup);
	json_add_int(o, "compiles_runtime", m->compiles_runtime);
	json_add_int(o, "fallback_buckets", m->fallback_buckets);
	json_add_num(o, "warmup_s", (double)m->warmup_ns / 1e9);
	json_add_num(o, "runtime_compile_s", (double)m->runtime_compile_ns / 1e9);
	json_add_int(o, "cuda_graph_captures", m->captures);
	json_add_num(o, "capture_s", (double)m->capture_ns / 1e9);
	json_add_int(o, "preemptions", m->preemptions);
	json_add_int(o, "prefill_passes", m->passes[0]);
	json_add_int(o, "decode_passes", m->passes[1]);
	json_add_int(o, "unified_passes", m->passes[2]);
	json_add_int(o, "engine_steps", m->steps);
	json_add_num(o, "utilization",
		m->end_ns > 0 ? (double)m->busy_ns / (double)m->end_ns / (m->instances ? m->instances : 1)
			      : NAN);
	json_add_int(o, "kv_blocks_total", m->kv_blocks_total);
	json_add_int(o, "kv_blocks_peak", m->kv_blocks_peak);
	json_add_num(o, "kv_utilization_mean",
		m->end_ns > 0 && m->kv_blocks_total
			? m->kv_block_ns / (double)m->end_ns / (double)m->kv_blocks_total : NAN);
	json_add_int(o, "running_peak", m->running_peak);
	if (m->kv_ids) {
		json_add_num(o, "kv_fragmentation",
			m->kv_read_blocks ? (double)m->kv_span_blocks / (double)m->kv_read_blocks : NAN);
		json_add_int(o, "kv_span_blocks", m->kv_span_blocks);
		json_add_int(o, "kv_read_blocks", m->kv_read_blocks);
		json_add_int(o, "defrag_steps", m->defrag_steps);
		json_add_int(o, "defrag_swaps", m->defrag_swaps);
		json_add_int(o, "defrag_padded_swaps", m->defrag_padded_swaps);
		json_add_num(o, "defrag_s", (double)m->defrag_ns / 1e9);
	}
	json_add_num(o, "simulated_s", (double)m->end_ns / 1e9);
	if (m->pp_stages > 1)
		add_pipeline(o, m);
	return o;
}
