/*
 * mode_hpu_eager: vllm-gaudi with --enforce-eager in lazy mode: no HPU graph is captured
 * (_use_graphs returns False with enforce_eager), so every pass accumulates its ops one by one
 * on the host (the eager host time per layer, models/README.md "Host time"); the lazy graphs
 * still compile per bucket shape (the recipe cache), at warm-up and at first use.  No memory is
 * kept for graphs (HPUWorker.determine_available_memory reserves VLLM_GRAPH_RESERVED_MEM only
 * when graphs are used).  Passes and padding as hpu_graphs.
 */
#include "policies/mode.h"

const struct exec_mode mode_hpu_eager = {
	.info = {"hpu_eager", "Gaudi without graphs (--enforce-eager, lazy): bucketed passes, "
		 "each accumulating its ops on the host layer by layer", NULL},
	.gpu = false,
	.lazy = true,
	.compiles = true,
	.captures = false,
	.padding = MODE_PAD_BUCKETS,
	.one_forward = false,
	.hpu_graphs = false,
	.eager = true,
	.block_size = 128,
	.gpu_kv = false,
};
