/*
 * scheduler_cfg: config keys of request ordering, grouping, batching and the cluster topology
 * (scheduler.*, cluster.*).
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def scheduler_cfg_defs[] = {
	{"scheduler.order", CFG_CHOICE, "fcfs", 0, 0, "fcfs|sjf|ljf|sjf_total|ljf_total|priority|earliest_bucket",
	 "", "order of waiting requests"},
	{"scheduler.grouping", CFG_CHOICE, "none", 0, 0, "none|fixed|adaptive", "",
	 "request grouping into length buckets"},
	{"scheduler.batching", CFG_CHOICE, "continuous", 0, 0,
	 "continuous|static|memory_safe|unified", "", "batch controller"},
	{"cluster.mode", CFG_CHOICE, "colocated", 0, 0, "colocated|disaggregated", "",
	 "one instance doing prefill and decode, or prefill/decode disaggregation"},
	{"cluster.engine_loop", CFG_CHOICE, "sync", 0, 0, "sync|atomic|async|virtual", "",
	 "engine loop: sync (one batch in flight), or a pipeline-parallel loop"},
	{"cluster.pp", CFG_INT, "1", 1, 64, NULL, "stages",
	 "pipeline-parallel stages (microbatches in flight)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};
