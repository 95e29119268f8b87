/*
 * sim_cfg: the config tables of every module (rows in sim/config.h's format).  Each module
 * owns its table in its own file; config_tables[] in sim/config_tables.c lists them.
 */
#ifndef BS_SIM_CFG_H
#define BS_SIM_CFG_H

#include "sim/config.h"

extern const struct cfg_def sim_cfg_defs[];        /* sim/sim_cfg.c: server.*, slo.*, sim.* */
extern const struct cfg_def bucketing_cfg_defs[];  /* policies/bucketing_cfg.c */
extern const struct cfg_def scheduler_cfg_defs[];  /* policies/scheduler_cfg.c */
extern const struct cfg_def workload_cfg_defs[];   /* workloads/workload_cfg.c */
extern const struct cfg_def model_cfg_defs[];      /* models/model_cfg.c */

#endif
