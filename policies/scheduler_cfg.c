/*
 * scheduler_cfg: config keys of request ordering, grouping, batching and the cluster topology
 * (scheduler.*, cluster.*) that no single policy owns.  The choices of scheduler.order,
 * scheduler.grouping, scheduler.batching and cluster.engine_loop are the members of their
 * policy families (policies/registry.c); each policy's own keys are rows of its policy_info.
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def scheduler_cfg_defs[] = {
	{"scheduler.order", CFG_CHOICE, "fcfs", 0, 0, NULL,
	 "", "order of waiting requests"},
	{"scheduler.task_aware", CFG_BOOL, "false", 0, 0, NULL, "",
	 "online requests first, by earliest arrival (earliest bucket when grouped); offline ones "
	 "(the trace's task column or workload.task) follow scheduler.order in what is left"},
	{"scheduler.grouping", CFG_CHOICE, "none", 0, 0, NULL, "",
	 "request grouping into length buckets"},
	{"scheduler.batching", CFG_CHOICE, "continuous", 0, 0, NULL, "",
	 "batch controller"},
	/* BucketServe (policies/bucketserve.h, README.md, "BucketServe policies"). */
	{"scheduler.l_max", CFG_INT, NULL, 1, 1 << 24, NULL, "tokens",
	 "L_max: buckets cover [0, L_max]; auto = server.max_model_len"},
	{"scheduler.mem_safe_fraction", CFG_DOUBLE, "0.9", 1e-6, 1, NULL, "",
	 "Eq. 5: M_safe = fraction * M_remain (the KV memory left after the weights)"},
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
	{"cluster.engine_loop", CFG_CHOICE, "async", 0, 0, NULL, "",
	 "engine loop with pipeline parallelism (vLLM V1 RFC; bucketsim list policies)"},
	{"cluster.prefill_instances", CFG_INT, "1", 1, 1024, NULL, "instances",
	 "prefill instances when disaggregated (they share one FCFS worker queue)"},
	{"cluster.decode_instances", CFG_INT, "1", 1, 1024, NULL, "instances",
	 "decode instances when disaggregated (each with its own KV cache)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};
