/*
 * bucketing_cfg: config keys of shape bucketing (bucketing.*).
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def bucketing_cfg_defs[] = {
	{"bucketing.strategy", CFG_CHOICE, "exponential", 0, 0, NULL, "",   /* registry.c */
	 "shape bucketing strategy (VLLM_BUCKETING_STRATEGY / VLLM_BUCKETING_FROM_FILE override)"},
	{"bucketing.version", CFG_CHOICE, "current", 0, 0, "docs|current", "",
	 "whose behaviour: current = vllm-gaudi main (the default); docs = the July 2025 "
	 "extension the documentation logs (reproduces its logs)"},
	{"bucketing.file", CFG_STRING, NULL, 0, 0, NULL, CFG_UNIT_FILE,
	 "bucket file for strategy file (VLLM_BUCKETING_FROM_FILE syntax)"},
	{"bucketing.log", CFG_STRING, NULL, 0, 0, NULL, CFG_UNIT_FILE,
	 "a vllm-gaudi server's log for strategy log: the bucket lists it logged at start-up"},
	{"bucketing.skip_warmup", CFG_BOOL, "false", 0, 0, NULL, "",
	 "compile nothing at start; every shape compiles on first use (VLLM_SKIP_WARMUP)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};
