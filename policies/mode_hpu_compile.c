/*
 * mode_hpu_compile: vllm-gaudi with torch.compile (PT_HPU_LAZY_MODE=0, vllm-gaudi's default).
 *
 * _maybe_compile (hpu_model_runner.py) compiles the decoder layers region by region
 * (_regional_compilation: each child of the layers' ModuleList, RMSNorm and the embedding) and
 * the sampler; each bucket compiles at warm-up and a new shape at its first use, as in lazy
 * mode.  No pass uses an HPU graph: _execute_model_generic sets use_graphs = False outside lazy
 * mode ("no hpu graphs for t.compile"), so _use_graphs' capture-size rule, and the eager host
 * time it implies in lazy mode, do not apply.  Passes, padding and KV sizing as hpu_graphs.
 */
#include "policies/mode.h"

const struct exec_mode mode_hpu_compile = {
	.info = {"hpu_compile", "Gaudi torch.compile mode (PT_HPU_LAZY_MODE=0, vllm-gaudi's "
		 "default): bucketed passes compiled per region at warm-up or first use, no HPU "
		 "graphs", NULL},
	.gpu = false,
	.lazy = false,
	.compiles = true,
	.captures = false,
	.padding = MODE_PAD_BUCKETS,
	.one_forward = false,
	.hpu_graphs = false,
	.eager = false,
	.block_size = 128,
	.gpu_kv = false,
};
