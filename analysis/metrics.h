/*
 * metrics: what a run measured, accumulated while it runs and summarised at the end.
 *
 * Per-request latencies (TTFT, TPOT, E2E) are kept one value per finished request (24 bytes
 * each) so their percentiles are exact (gsl_stats_quantile_from_sorted_data).  Inter-token
 * latencies are kept as a multiset of (gap, count): every decoding request of a step sees the
 * same gap, so a step adds one value with a count, and a run of identical steps adds one value
 * with a large count.  Their percentiles are computed exactly on that multiset with the same
 * interpolation rule as GSL's quantile (metrics_wquantile; tested against GSL on the expanded
 * data).
 *
 * Units: times are int64 ns while accumulating; reported in ms or s as each key's name says.
 */
#ifndef BS_METRICS_H
#define BS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

struct itl_cell {
	int64_t gap_ns;
	int64_t count;   /* 0 = empty slot */
};

struct metrics {
	size_t n_req;                 /* requests in the workload */
	size_t done;
	int64_t *ttft_ns, *e2e_ns;     /* by finished request, as measured (metrics_to_json
					 * turns them into ttft_ms and e2e_ms and frees them) */
	double *ttft_ms, *e2e_ms;     /* the same in ms, ascending (NULL before metrics_to_json) */
	double *tpot_ms;
	size_t n_tpot;                /* requests with more than one output token */
	struct itl_cell *itl;         /* open-addressing set of distinct gaps */
	size_t itl_cap, itl_n;
	int64_t itl_total;            /* number of gaps */
	double slo_ttft_ms, slo_tpot_ms;
	double slo_e2e_ms;            /* end-to-end objective; 0 = none (set after metrics_init) */
	size_t slo_met;               /* finished requests meeting every objective */

	int64_t prompt_tokens, output_tokens;   /* of finished requests */
	int64_t first_arrival_ns, last_finish_ns;
	int64_t end_ns;                         /* simulated time at the end */

	/* Forward passes. */
	int64_t passes[3];                      /* by phase: prompt, decode, unified */
	int64_t real_tokens, padded_tokens;     /* tokens computed vs padded tokens */
	int64_t real_blocks, padded_blocks;     /* KV blocks read vs padded blocks (decode) */
	int64_t busy_ns;                        /* time with a pass executing (incl. compiles) */
	int64_t steps;                          /* engine steps */

	/* Graphs. */
	int64_t compiles_warmup, compiles_runtime, fallback_buckets;
	int64_t warmup_ns, runtime_compile_ns;
	int64_t captures, capture_ns;           /* CUDA graphs captured at start-up (cuda_graphs) */

	/* KV cache. */
	int64_t preemptions;
	int64_t kv_blocks_total, kv_blocks_peak;
	double kv_block_ns;                     /* integral of used blocks over time */
	int64_t running_peak;
	/* Block ids (contiguous PA, sim/kernel_defrag.c); kv_ids: modelled, and reported. */
	bool kv_ids;
	int64_t kv_span_blocks;                 /* over decode steps: highest id read + 1 */
	int64_t kv_read_blocks;                 /* over decode steps: distinct blocks read */
	int64_t defrag_steps, defrag_swaps, defrag_padded_swaps, defrag_ns;
	int instances;                          /* lanes: instances x pipeline stages (the cards
						   utilization divides by, per TP group) */
	/* Pipeline parallelism (pp_stages > 1; set by the kernel at the end of the run). */
	int pp_stages, pp_instances;
	int64_t *stage_busy_ns;                 /* by stage, summed over instances (owned) */
	int64_t stage_active_ns;                /* time instances had a running request, summed */
	int64_t empty_microbatches;             /* atomic loop */
	int64_t lost_slots;                     /* atomic loop without empty microbatches */
	int64_t frag_preemptions;               /* virtual engines: preemptions while another
						   engine had the blocks free */
	int64_t frag_free_blocks;               /* ... free blocks of the other engines, summed
						   over preemptions */
};

void metrics_init(struct metrics *m, size_t n_req, double slo_ttft_ms, double slo_tpot_ms);
void metrics_release(struct metrics *m);
/* One finished request (times in ns). */
static inline void metrics_request(struct metrics *m, int64_t arrival, int64_t first,
				   int64_t finish, int32_t prompt_tokens, int32_t output_tokens)
{
	bool ok = (double)(first - arrival) / 1e6 <= m->slo_ttft_ms;
	m->ttft_ns[m->done] = first - arrival;
	m->e2e_ns[m->done] = finish - arrival;
	if (output_tokens > 1) {
		double tpot = (double)(finish - first) / 1e6 / (output_tokens - 1);
		m->tpot_ms[m->n_tpot++] = tpot;
		ok = ok && tpot <= m->slo_tpot_ms;
	}
	if (m->slo_e2e_ms > 0)
		ok = ok && (double)(finish - arrival) / 1e6 <= m->slo_e2e_ms;
	m->slo_met += ok;
	m->done++;
	m->prompt_tokens += prompt_tokens;
	m->output_tokens += output_tokens;
	if (arrival < m->first_arrival_ns)
		m->first_arrival_ns = arrival;
	if (finish > m->last_finish_ns)
		m->last_finish_ns = finish;
}

/* The slot of GAP in the open-addressing set T of CAP cells (its own, or the empty one it
 * goes to). */
static inline size_t metrics_itl_slot(const struct itl_cell *t, size_t cap, int64_t gap)
{
	uint64_t h = (uint64_t)gap * 0x9E3779B97F4A7C15ull;
	size_t i = (size_t)(h ^ (h >> 29)) & (cap - 1);
	while (t[i].count && t[i].gap_ns != gap)
		i = (i + 1) & (cap - 1);
	return i;
}
/* Doubles the set of gaps (metrics_itl). */
void metrics_itl_grow(struct metrics *m);
/* COUNT inter-token gaps of GAP_NS. */
static inline void metrics_itl(struct metrics *m, int64_t gap_ns, int64_t count)
{
	if (count <= 0)
		return;
	if (2 * (m->itl_n + 1) > m->itl_cap)
		metrics_itl_grow(m);
	size_t i = metrics_itl_slot(m->itl, m->itl_cap, gap_ns);
	if (!m->itl[i].count) {
		m->itl[i].gap_ns = gap_ns;
		m->itl_n++;
	}
	m->itl[i].count += count;
	m->itl_total += count;
}

/* Quantile F in [0,1] of sorted values X[0..n) with multiplicities W (GSL's rule on the
 * expanded data). */
double metrics_wquantile(const double *x, const int64_t *w, size_t n, double f);

/* JSON helpers shared by the summary writers: an exact integer (written raw, so int64 values
 * past 2^53 keep every digit) and a number that is null when not finite (an empty sample). */
void json_add_int(struct cJSON *o, const char *k, int64_t v);
void json_add_num(struct cJSON *o, const char *k, double v);

/* SLO attainment: finished requests meeting every objective over the workload's requests
 * (unfinished ones fail); NaN for an empty workload. */
double metrics_slo_attainment(const struct metrics *m);

/* The "metrics" object of summary.json, keys in a fixed order (see README).  It sorts the
 * samples (the TTFT and E2E ones become ttft_ms and e2e_ms): no request may be added after. */
struct cJSON *metrics_to_json(struct metrics *m);

/* Sorts X ascending: an LSD radix sort on the IEEE 754 bits over only the bits in which the
 * values differ, the same result as qsort with a < comparison, which it falls back to for
 * short arrays, for arrays with a negative value, -0 or a NaN, and when metrics_reference_sort
 * is set (the slow reference the tests compare against). */
void metrics_sort(double *x, size_t n);
extern bool metrics_reference_sort;
/* The N latencies NS (ns; freed) in ms, ascending: the array that converting each one to ms
 * and metrics_sort would give, which is what it does under metrics_reference_sort; the fast
 * path sorts the integers (radix) and converts them in that order. */
double *metrics_sorted_ms(int64_t *ns, size_t n);

/* gsl_stats_mean and the population standard deviation (gsl_stats_sd_with_fixed_mean; 0 for one
 * value) of three arrays X[j] of N[j] values (NaN for an empty one), the same bits as GSL's:
 * its recurrences, with the three arrays' divisions interleaved.  metrics_reference_stats: GSL
 * itself (the reference the tests compare against). */
void metrics_mean_sd3(const double *const x[3], const size_t n[3], double mean[3], double sd[3]);
extern bool metrics_reference_stats;

#endif
