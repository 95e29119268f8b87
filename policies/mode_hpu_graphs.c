/*
 * mode_hpu_graphs: vllm-gaudi in lazy mode (PT_HPU_LAZY_MODE=1) with HPU graphs.
 *
 * The model is wrapped in an HPU graph (hpu_model_runner.py, _maybe_wrap_in_hpu_graph when
 * htorch.utils.internal.is_lazy()); each bucket compiles at warm-up (warmup_model) and a shape
 * outside the buckets at its first use; a pass replays its graph unless _use_graphs refuses
 * it (a prompt pass of more than max_cudagraph_capture_size tokens: bs x query + context blocks
 * x block size), and that pass accumulates its ops one by one (the eager host time).  Each
 * prefill group and the decode batch are forwards of their own (_execute_model_generic per
 * batch).  KV: HPUWorker.determine_available_memory, VLLM_GRAPH_RESERVED_MEM kept for graphs.
 */
#include "policies/mode.h"

const struct exec_mode mode_hpu_graphs = {
	.info = {"hpu_graphs", "Gaudi lazy mode with HPU graphs (PT_HPU_LAZY_MODE=1): bucketed "
		 "passes, compiled at warm-up or first use, each replaying its graph", NULL},
	.gpu = false,
	.lazy = true,
	.compiles = true,
	.captures = false,
	.padding = MODE_PAD_BUCKETS,
	.one_forward = false,
	.hpu_graphs = true,
	.eager = false,
	.block_size = 128,
	.gpu_kv = false,
};
