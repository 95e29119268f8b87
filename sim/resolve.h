/*
 * resolve: derives the auto configuration keys every command needs before it builds a
 * simulation: creates the cost model, then server.max_model_len (the model's context length),
 * server.num_kv_blocks (from device memory over hardware.tp x cluster.pp cards) and server.contiguous_pa (not prefix caching),
 * each recorded with origin "derived".
 */
#ifndef BS_RESOLVE_H
#define BS_RESOLVE_H

#include "models/cost.h"
#include "sim/config.h"

/* On success *cm is owned by the caller (cost_model_free). */
int sim_resolve_config(struct config *cfg, struct cost_model **cm, struct bs_err *err);

#endif
