/*
 * mode: the execution-mode family (server.execution_mode): how the forward pass runs on the
 * device.  Each mode states, in its own file and in one place (this struct): which shapes
 * compile or capture, when and at what cost; how a pass is padded; how a step is split into
 * forwards; the launch and host cost per forward and per layer; the KV-cache sizing and the
 * default block size.  See policies/policy.h for the family machinery and policies/README.md,
 * "Execution modes", for each mode's sources.
 *
 * The key's default, auto, follows the hardware and the version (exec_mode_auto).
 * Ownership: static, read-only data.
 */
#ifndef BS_MODE_H
#define BS_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/policy.h"

/* How a pass's real shape becomes the shape that runs. */
enum mode_padding {
	MODE_PAD_BUCKETS,   /* the Gaudi bucket lists (bucketing.*) */
	MODE_PAD_CAPTURE,   /* the token count up to the next CUDA-graph capture size, none above
			     * the largest */
};

struct exec_mode {
	struct policy_info info;
	bool gpu;                   /* the hardware it is vLLM's mode on: NVIDIA GPUs (false:
				     * Gaudi, vllm-gaudi) */
	bool lazy;                  /* Gaudi: the PT_HPU_LAZY_MODE it runs (true = 1) */
	/* Compiles and captures. */
	bool compiles;              /* every padded shape compiles: the warm-up buckets at
				     * start-up, a new shape at its first use (a runtime compile) */
	bool captures;              /* CUDA graphs captured at start-up, one per capture size and
				     * kind; nothing compiles at run time */
	enum mode_padding padding;
	/* Forwards per step: false = each prefill group and the decode batch are forwards of
	 * their own (vllm-gaudi); true = one forward of every scheduled token (vLLM V1 on GPUs:
	 * decodes and prefill chunks flattened, varlen attention without per-sequence
	 * padding). */
	bool one_forward;
	/* Launch: how a forward's ops reach the device. */
	bool hpu_graphs;            /* a forward replays its HPU graph unless vllm-gaudi's
				     * _use_graphs refuses it (a prompt pass above
				     * max_cudagraph_capture_size): that pass runs eagerly */
	bool eager;                 /* every forward runs its ops one by one (no graph) */
	int32_t block_size;         /* server.block_size's default */
	bool gpu_kv;                /* KV blocks as vLLM's GPU worker sizes them (false:
				     * vllm-gaudi's HPUWorker) */
};

extern const struct policy_family mode_family;
const struct exec_mode *exec_mode(const char *name);

/* server.execution_mode's auto: cuda_graphs on a GPU; on Gaudi hpu_eager with
 * server.enforce_eager, else the PT_HPU_LAZY_MODE given (LAZY_ENV: "0", "1" or NULL) or, without
 * it, the version's (vllm-gaudi current runs torch.compile, PT_HPU_LAZY_MODE=0; the fork of the
 * docs version ran lazy). */
const struct exec_mode *exec_mode_auto(bool gpu, bool enforce_eager, const char *lazy_env,
				       bool version_docs);

/* vLLM's VllmConfig._set_cudagraph_sizes (vllm/config/vllm.py) for a model without
 * speculative decoding on a GPU that is not a data-centre Blackwell, performance_mode
 * balanced, capture sizes not given: MAX_CAPTURE is compilation_config.max_cudagraph_capture_size
 * (<= 0: unset, min(2 x MAX_NUM_SEQS, 512)), bounded by MAX_NUM_BATCHED_TOKENS; the sizes are
 * 1, 2, 4, multiples of 8 below 256, multiples of 16 from 256, and max_num_batched_tokens when
 * it is within the bound, ascending.  Writes at most CAP sizes to OUT, returns the count (0
 * with ENFORCE_EAGER: cudagraph_mode NONE). */
size_t cuda_graph_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens,
			int64_t max_capture, bool enforce_eager, int32_t *out, size_t cap);

/* The bound of those sizes: MAX_CAPTURE (<= 0: unset, min(2 x MAX_NUM_SEQS, 512)) bounded by
 * MAX_NUM_BATCHED_TOKENS. */
int64_t cuda_graph_bound(int64_t max_num_seqs, int64_t max_num_batched_tokens,
			 int64_t max_capture);
/* The capture size a forward of X tokens is padded to (CudagraphDispatcher: the smallest
 * captured size >= X), for the sizes of bound M (cuda_graph_bound); 0 when X exceeds the
 * largest (the forward runs eagerly, unpadded). */
int64_t cuda_graph_pad(int64_t x, int64_t m, int64_t max_num_batched_tokens);
/* The graphs captured at start-up in FULL_AND_PIECEWISE (GPUModelRunner.capture_model): a
 * PIECEWISE graph per capture size and a FULL one per size of a uniform decode batch (at most
 * MAX_NUM_SEQS tokens); *LARGEST the largest size (0: none). */
int32_t cuda_graph_captures(int64_t max_num_seqs, int64_t max_num_batched_tokens,
			    int64_t max_capture, bool enforce_eager, int32_t *largest);

#endif
