/*
 * mode_cuda_graphs: vLLM V1 on NVIDIA GPUs, cudagraph_mode FULL_AND_PIECEWISE (the default of
 * optimization level O2, vllm/config/vllm.py).
 *
 * - Captures: at start-up, one PIECEWISE graph per capture size (VllmConfig.
 *   _set_cudagraph_sizes, cuda_graph_sizes in mode.c) and one FULL graph per capture size up to
 *   max_num_seqs (uniform decode batches); reported as captures, not compiles.  Nothing
 *   compiles at run time (torch.compile's graph is compiled once for a symbolic token count).
 * - Passes: ONE forward per step over every scheduled token (GPUModelRunner.execute_model):
 *   decodes and chunked-prefill chunks flattened, varlen attention, no per-sequence padding.
 * - Padding: the token count up to the next capture size (CudagraphDispatcher); a decode-only
 *   step replays a FULL graph, a mixed one a PIECEWISE graph (attention runs between the
 *   pieces); above the largest capture size the forward runs eagerly, unpadded.
 * - KV: Worker.determine_available_memory (vllm/v1/worker/gpu_worker.py): total memory x
 *   gpu_memory_utilization - weights - activation peak - CUDA-graph memory; block 16.
 */
#include "policies/mode.h"

const struct exec_mode mode_cuda_graphs = {
	.info = {"cuda_graphs", "vLLM V1 on NVIDIA GPUs: one forward per step over every "
		 "scheduled token, padded to a CUDA-graph capture size (FULL graphs for decode-only "
		 "steps, PIECEWISE for mixed ones, eager above the largest)", NULL},
	.gpu = true,
	.lazy = false,
	.compiles = false,
	.captures = true,
	.padding = MODE_PAD_CAPTURE,
	.one_forward = true,
	.hpu_graphs = false,
	.eager = false,
	.block_size = 16,
	.gpu_kv = true,
};
