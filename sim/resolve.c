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
#include "policies/mode.h"

/* Set by the user (a file or the command line), not a default, preset or derived value. */
static bool set_by_user(const struct config *cfg, const char *key)
{
	const struct cfg_entry *e = config_find(cfg, key);
	return e->text && (e->origin == CFG_ORIGIN_FILE || e->origin == CFG_ORIGIN_CMDLINE);
}

/* server.execution_mode: auto resolved (policies/mode.h, exec_mode_auto), an explicit mode
 * checked against PT_HPU_LAZY_MODE and server.enforce_eager; server.block_size left at its
 * default takes the mode's; one warning when a GPU runs without a calibrated profile or the
 * mode is not the hardware's. */
static int resolve_mode(struct config *cfg, struct bs_err *err)
{
	bool gpu, calibrated;
	const char *hw = config_str(cfg, "hardware");
	if (cost_hardware_kind(hw, &gpu, &calibrated, err))
		return -1;
	const char *lazy = config_env(cfg, "PT_HPU_LAZY_MODE"); /* checked by cost_model_new */
	bool eager = config_bool(cfg, "server.enforce_eager");
	const struct exec_mode *m = exec_mode(config_str(cfg, "server.execution_mode"));
	if (!m) {
		m = exec_mode_auto(gpu, eager, lazy,
				   !strcmp(config_str(cfg, "bucketing.version"), "docs"));
		config_set_derived(cfg, "server.execution_mode", m->info.name);
	} else {
		if (!m->gpu && lazy && m->lazy != !strcmp(lazy, "1"))
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "PT_HPU_LAZY_MODE",
				       "%s, but server.execution_mode %s runs PT_HPU_LAZY_MODE=%d",
				       lazy, m->info.name, m->lazy);
		if (eager && !m->gpu && !m->eager)
			return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.enforce_eager",
				       "true runs no graph: execution mode hpu_eager, not %s",
				       m->info.name);
		if (m->eager && set_by_user(cfg, "server.enforce_eager") && !eager)
			return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.enforce_eager",
				       "false, but execution mode hpu_eager is --enforce-eager");
	}
	/* Derived over the defaults (config_set_derived keeps a default). */
	if (m->eager && !eager &&
	    config_set(cfg, "server.enforce_eager", "true", CFG_ORIGIN_DERIVED, NULL, 0, err))
		return -1;
	const struct cfg_entry *bs = config_find(cfg, "server.block_size");
	if (bs->origin == CFG_ORIGIN_DEFAULT && config_int(cfg, "server.block_size") != m->block_size) {
		char buf[16];
		snprintf(buf, sizeof buf, "%d", (int)m->block_size);
		if (config_set(cfg, "server.block_size", buf, CFG_ORIGIN_DERIVED, NULL, 0, err))
			return -1;
	}
	if (gpu && (!calibrated || !m->gpu))
		bs_warn("hardware %s: %s%s%s", hw,
			calibrated ? "" : "its profile is not calibrated (spec sheet and generic "
					  "efficiencies: models/README.md), so its pass times are a guess",
			!calibrated && !m->gpu ? "; and " : "",
			m->gpu ? "" : "it runs Gaudi semantics (server.execution_mode is a Gaudi mode: "
				      "bucketed passes, graph compiles, separate prefill and decode "
				      "forwards), not vLLM's on GPUs (cuda_graphs)");
	else if (!gpu && m->gpu)
		bs_warn("hardware %s is a Gaudi, but server.execution_mode %s runs vLLM's GPU "
			"semantics on it", hw, m->info.name);
	return 0;
}

int sim_resolve_config(struct config *cfg, struct cost_model **cm_out, struct bs_err *err)
{
	struct cost_model *cm;
	if (cluster_cards_resolve(cfg, err))
		return -1;
	if (resolve_mode(cfg, err))
		return -1;
	const struct exec_mode *mode = exec_mode(config_str(cfg, "server.execution_mode"));
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
		int32_t bsz = (int32_t)config_int(cfg, "server.block_size");
		double util = config_double(cfg, "server.gpu_memory_utilization");
		int32_t pp = (int32_t)config_int(cfg, "cluster.pp");
		int64_t nb;
		if (mode->gpu_kv) {
			int32_t largest;
			int64_t mnbt = config_int(cfg, "server.max_num_batched_tokens");
			int32_t captures = cuda_graph_captures(
				config_int(cfg, "server.max_num_seqs"), mnbt,
				config_is_set(cfg, "server.max_cudagraph_capture_size")
					? config_int(cfg, "server.max_cudagraph_capture_size") : 0,
				config_bool(cfg, "server.enforce_eager"), &largest);
			nb = cost_num_kv_blocks_gpu(cm, bsz, util, captures, pp);
		} else {
			nb = cost_num_kv_blocks_pp(cm, bsz, util, reserved, pp);
		}
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
