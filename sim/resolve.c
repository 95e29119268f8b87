/*
 * resolve: see resolve.h.
 */
#include "sim/resolve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/bucketing.h"

/* VLLM_GRAPH_RESERVED_MEM: the fraction of the usable free memory kept for HPU graphs
 * (vllm-gaudi HPUWorker.determine_available_memory; default 0.1).  Upstream falls back to the
 * default on a value it cannot parse; bucketsim reports it instead. */
static int graph_reserved_mem(const struct config *cfg, double *out, struct bs_err *err)
{
	const char *s = config_env(cfg, "VLLM_GRAPH_RESERVED_MEM");
	*out = COST_GRAPH_RESERVED_DEFAULT;
	if (!s)
		return 0;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < 0 || v >= 1)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "VLLM_GRAPH_RESERVED_MEM",
			       "'%s' is not a fraction in [0, 1)", s);
	*out = v;
	return 0;
}

#include "policies/presets.h"

int sim_resolve_config(struct config *cfg, struct cost_model **cm_out, struct bs_err *err)
{
	struct cost_model *cm;
	if (cluster_cards_resolve(cfg, err))
		return -1;
	if (cost_model_new(cfg, &cm, err))
		return -1;
	char buf[64];
	if (!config_is_set(cfg, "server.max_model_len")) {
		snprintf(buf, sizeof buf, "%d", (int)cost_model_max_context(cm));
		config_set_derived(cfg, "server.max_model_len", buf);
	}
	double reserved;
	if (graph_reserved_mem(cfg, &reserved, err)) {
		cost_model_free(cm);
		return -1;
	}
	/* An eager engine captures no graphs: nothing reserved (hpu_worker.py,
	 * determine_available_memory). */
	if (config_bool(cfg, "server.enforce_eager"))
		reserved = 0;
	if (!config_is_set(cfg, "server.num_kv_blocks")) {
		int64_t nb = cost_num_kv_blocks_pp(cm, (int32_t)config_int(cfg, "server.block_size"),
						   config_double(cfg, "server.gpu_memory_utilization"),
						   reserved, (int32_t)config_int(cfg, "cluster.pp"));
		if (nb < 1) {
			bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.num_kv_blocks",
				"the model's weights leave no memory for the KV cache on %s "
				"(try a larger hardware.tp or model.precision=fp8)",
				cost_model_hardware(cm));
			cost_model_free(cm);
			return -1;
		}
		snprintf(buf, sizeof buf, "%lld", (long long)nb);
		config_set_derived(cfg, "server.num_kv_blocks", buf);
	}
	if (!config_is_set(cfg, "server.contiguous_pa"))
		config_set_derived(cfg, "server.contiguous_pa",
				   bucket_contiguous_pa_auto(
					   strcmp(config_str(cfg, "bucketing.version"), "docs")
						   ? BUCKET_VERSION_CURRENT : BUCKET_VERSION_DOCS,
					   config_bool(cfg, "server.prefix_caching")) ? "true" : "false");
	*cm_out = cm;
	return 0;
}
