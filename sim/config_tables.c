/*
 * config_tables: the list of module config tables, in the order keys are printed.
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def *const config_tables[] = {
	sim_cfg_defs, scheduler_cfg_defs, bucketing_cfg_defs, model_cfg_defs, workload_cfg_defs,
	NULL,
};
