/*
 * workload_cfg: config keys of the workload (workload.*).
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def workload_cfg_defs[] = {
	{"workload.arrival", CFG_CHOICE, "auto", 0, 0, "auto|trace|poisson|gamma|offline", "",
	 "arrival process; auto = the trace's timestamps when it has them, else poisson"},
	{"workload.rate", CFG_DOUBLE, "1", 1e-9, 1e9, NULL, "requests/s",
	 "arrival rate of poisson and gamma arrivals"},
	{"workload.truncate", CFG_BOOL, "false", 0, 0, NULL, "",
	 "cut prompts longer than max_model_len instead of rejecting the trace"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};
