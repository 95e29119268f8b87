/*
 * report_human: the readable summary `run` prints (report.h), read from summary.json's object.
 */
#include "analysis/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

void report_human(FILE *f, const cJSON *summary)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(summary, "meta");
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(summary, "config");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(summary, "metrics");
	const cJSON *wl = cJSON_GetObjectItemCaseSensitive(meta, "workload");
	fprintf(f, "bucketsim %s  workload %s  seed %.0f\n", str(meta, "version"), str(wl, "source"),
		num(meta, "seed"));
	/* The bucketing that ran (meta.bucketing: the environment may choose the strategy). */
	const cJSON *bk = cJSON_GetObjectItemCaseSensitive(meta, "bucketing");
	/* The execution mode that ran (config's server.execution_mode is the resolved one); a
	 * GPU mode pads to capture sizes, so the Gaudi bucketing is not named. */
	const char *mode = str(cfg, "server.execution_mode");
	bool gpu = !strcmp(mode, "cuda_graphs");
	fprintf(f, "  %s on %s (tp %.0f), %s", str(cfg, "model"), str(cfg, "hardware"),
		num(cfg, "hardware.tp"), mode);
	if (!gpu)
		fprintf(f, ", bucketing %s/%s%s", str(bk, "strategy"), str(bk, "version"),
			cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(bk, "enabled")) ? " (off)"
											: "");
	fprintf(f, ", max_num_seqs %.0f, max_num_batched_tokens %.0f, max_model_len %.0f, "
		   "%.0f KV blocks\n",
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
	fprintf(f, "padding     %.2f%% of the padded tokens are padding (%.0f real, %.0f padded)",
		100 * num(m, "padding_waste_ratio"), num(m, "real_tokens"), num(m, "padded_tokens"));
	if (num(m, "padded_kv_blocks") > 0)
		fprintf(f, "; %.2f%% of decode KV blocks read are padding",
			100 * num(m, "kv_block_padding_ratio"));
	fputc('\n', f);
	if (gpu)
		fprintf(f, "graphs      %.0f CUDA graphs captured at start-up (%.1f s), none "
			   "compiled at run time\n",
			num(m, "cuda_graph_captures"), num(m, "capture_s"));
	else
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
	else if (cJSON_GetObjectItemCaseSensitive(m, "n_max_adjustments") &&
		 num(m, "n_max_adjustments") > 0)
		fprintf(f, "buckets     adaptive grouping never split: N_max %.0f to %.0f (mean %.1f) "
			   "over %.0f adjustment%s, no bucket held more\n", num(m, "n_max_min"),
			num(m, "n_max_max"), num(m, "n_max_mean"), num(m, "n_max_adjustments"),
			num(m, "n_max_adjustments") == 1 ? "" : "s");
	else if (cJSON_GetObjectItemCaseSensitive(m, "n_max_adjustments"))
		fputs("buckets     adaptive grouping never split: no batch was formed under a "
		      "bounded N_max\n", f);
}
