/*
 * scheduler_cfg: config keys of request ordering, grouping, batching and the cluster topology
 * (scheduler.*, cluster.*).
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def scheduler_cfg_defs[] = {
	{"scheduler.order", CFG_CHOICE, "fcfs", 0, 0, "fcfs|sjf|ljf|sjf_total|ljf_total|priority|earliest_bucket|slo_output",
	 "", "order of waiting requests (slo_output: priority, then output length, UELLM's sort "
	 "with the output length known in advance)"},
	{"scheduler.task_aware", CFG_BOOL, "false", 0, 0, NULL, "",
	 "online requests first, by earliest arrival (earliest bucket when grouped); offline ones "
	 "(the trace's task column or workload.task) follow scheduler.order in what is left"},
	{"scheduler.grouping", CFG_CHOICE, "none", 0, 0, "none|fixed|adaptive", "",
	 "request grouping into length buckets"},
	{"scheduler.batching", CFG_CHOICE, "continuous", 0, 0,
	 "continuous|static|memory_safe|unified", "", "batch controller"},
	/* BucketServe (policies/bucketserve.h, README.md, "BucketServe policies"). */
	{"scheduler.l_max", CFG_INT, NULL, 1, 1 << 24, NULL, "tokens",
	 "L_max: buckets cover [0, L_max]; auto = server.max_model_len"},
	{"scheduler.boundaries", CFG_STRING, NULL, 0, 0, NULL, "tokens",
	 "bucket boundaries for grouping=fixed, e.g. 0,256,1024,max (max = L_max)"},
	{"scheduler.theta", CFG_DOUBLE, "0.5", 0, 0.999999, NULL, "",
	 "Algorithm 1: split a bucket when more than this fraction lies below its midpoint"},
	{"scheduler.adjust", CFG_CHOICE, "arrival", 0, 0, "arrival|batch|period", "",
	 "when grouping=adaptive runs AdjustBuckets: after each arrival, before each batch, or "
	 "every adjust_period_s"},
	{"scheduler.adjust_period_s", CFG_DOUBLE, "1", 1e-6, 1e6, NULL, "s",
	 "period of AdjustBuckets with adjust=period"},
	{"scheduler.n_max", CFG_INT, NULL, 1, 1e12, NULL, "requests",
	 "Algorithm 1 threshold N_max; auto = Eq. 6 over the queue and the KV budget"},
	{"scheduler.mem_safe_fraction", CFG_DOUBLE, "0.9", 1e-6, 1, NULL, "",
	 "Eq. 5: M_safe = fraction * M_remain (the KV memory left after the weights)"},
	{"scheduler.kv_accounting", CFG_CHOICE, "sum", 0, 0, "sum|padded", "",
	 "memory_safe batch test: sum of lengths (Eq. 6) or N * S_max (Eq. 1, padded)"},
	{"scheduler.kv_charge", CFG_CHOICE, "prompt", 0, 0, "prompt|total", "",
	 "length charged per request in the batch test: prompt, or prompt + output (reserve)"},
	{"scheduler.static_batch_size", CFG_INT, "10", 1, 1 << 20, NULL, "requests",
	 "static batching: most requests in one batch (UELLM packs at most 10)"},
	{"scheduler.static_max_waste", CFG_DOUBLE, "0.25", 0, 1, NULL, "fraction",
	 "static batching: a batch is closed before its Eq. 2 padding waste of prompt lengths "
	 "would exceed this"},
	{"cluster.mode", CFG_CHOICE, "colocated", 0, 0, "colocated|disaggregated", "",
	 "one instance doing prefill and decode, or prefill/decode disaggregation"},
	{"cluster.cards", CFG_INT, NULL, 1, 65536, NULL, "cards",
	 "total cards, held fixed across presets: derives cluster.instances (colocated) or the "
	 "prefill/decode split (disaggregated); auto = from the instance counts"},
	{"cluster.instances", CFG_INT, "1", 1, 1024, NULL, "instances",
	 "colocated instances (data parallel: each with its own KV cache, all drawing from one "
	 "waiting queue)"},
	{"cluster.pp", CFG_INT, "1", 1, 64, NULL, "stages",
	 "pipeline-parallel stages per colocated instance (cards per instance = pp x hardware.tp)"},
	{"cluster.engine_loop", CFG_CHOICE, "async", 0, 0, "async|atomic|virtual", "",
	 "engine loop with pipeline parallelism (vLLM V1 RFC): async = two-stage loop, up to pp "
	 "microbatches in flight; atomic = one microbatch submitted per returned one; virtual = "
	 "pp virtual engines, each with its own scheduler and share of the KV cache"},
	{"cluster.prefill_instances", CFG_INT, "1", 1, 1024, NULL, "instances",
	 "prefill instances when disaggregated (they share one FCFS worker queue)"},
	{"cluster.decode_instances", CFG_INT, "1", 1, 1024, NULL, "instances",
	 "decode instances when disaggregated (each with its own KV cache)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};
