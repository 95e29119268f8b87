/*
 * cost: the time of one forward pass at a padded shape, of a graph compile, of a KV transfer,
 * and the memory arithmetic (KV bytes per token, KV blocks that fit) for the configured
 * hardware, model, precision and tensor parallelism.
 *
 * Owns the loaded profiles (models/data/ JSON files, embedded in the binary at build time: see
 * sim/embed.h) and a per-shape cache, so evaluating the same shape again is a hash lookup.
 * Times are integer nanoseconds, always >= 1.
 *
 * Shapes are the bucketing module's: prompt (bs, query, ctx_blocks), decode (bs, num_blocks)
 * where num_blocks is the flattened block-list length the decode pass reads, unified
 * (query, shared_blocks, unique_blocks, causal).
 */
#ifndef BS_COST_H
#define BS_COST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/config.h"
#include "sim/util.h"

struct cost_model;

/* Reads hardware, model, model.*, hardware.* and server.block_size. */
int cost_model_new(const struct config *cfg, struct cost_model **out, struct bs_err *err);
void cost_model_free(struct cost_model *cm);

int64_t cost_prefill_ns(struct cost_model *cm, int32_t bs, int32_t query, int32_t ctx_blocks);
int64_t cost_decode_ns(struct cost_model *cm, int32_t bs, int32_t num_blocks);
int64_t cost_unified_ns(struct cost_model *cm, int32_t query, int32_t shared_blocks,
			int32_t unique_blocks, bool causal);
/* One GPU forward (execution mode cuda_graphs: vLLM V1, varlen attention, no per-sequence
 * padding) of TOKENS tokens (the capture size it is padded to), PRE_TOKENS of them prefill
 * tokens whose chunks read CTX_BLOCKS context blocks, the others decodes reading DEC_BLOCKS
 * blocks: device time (models/README.md, "GPU forward"). */
int64_t cost_forward_ns(struct cost_model *cm, int32_t tokens, int32_t ctx_blocks,
			int32_t dec_blocks, int32_t pre_tokens);
/* The host time of launching a GPU forward of KIND (0 a FULL graph, 1 a PIECEWISE graph, 2
 * eager): layers x the per-layer launch of models/data/host.json's cuda_graphs (0 for FULL);
 * the forward takes max(device, launch).  KIND 3: launching one Gaudi forward's HPU graph in
 * lazy mode (hpu_graph_launch_us), added to the pass as the eager extra is. */
int64_t cost_launch_ns(const struct cost_model *cm, int kind);
/* Start-up time of CAPTURES CUDA-graph captures (models/data/host.json's cuda_graphs). */
int64_t cost_capture_ns(const struct cost_model *cm, int32_t captures);
/* Whether hardware profile NAME is a GPU, and calibrated; an unknown profile is an input
 * error. */
int cost_hardware_kind(const char *name, bool *gpu, bool *calibrated, struct bs_err *err);
bool cost_model_gpu(const struct cost_model *cm);
/* KV blocks of BLOCK_SIZE tokens as vLLM's GPU worker sizes them (cost.c), an instance of PP
 * stages with CAPTURES CUDA graphs. */
int64_t cost_num_kv_blocks_gpu(const struct cost_model *cm, int32_t block_size, double mem_util,
			       int32_t captures, int32_t pp);
/* Compile time of one graph at a padded shape.  PHASE: 0 prompt, 1 decode, 2 unified; the
 * shape as in bucketing (v[0..3]).  RUNTIME adds the runtime-compile penalty. */
int64_t cost_compile_ns(struct cost_model *cm, int phase, const int32_t v[4], bool runtime);
/* Time to move TOKENS tokens of KV cache between two instances. */
int64_t cost_kv_transfer_ns(struct cost_model *cm, int64_t tokens);

/*
 * Pipeline parallelism (cluster.pp stages, models/stage.c).  The layers are split over the
 * stages as vLLM's get_pp_indices splits them (VLLM_PP_LAYER_PARTITION when set); the LM head
 * and the sampler's logits run on the last stage.  cost_stage_ns() is stage STAGE's share of a
 * pass at padded shape V of PHASE (as cost_compile_ns), without the fixed per-pass cost, which
 * cost_pass_overhead_ns() gives (t_pass, or 0 when the host time is charged separately) and an
 * engine charges once per microbatch.  cost_activation_ns() is the point-to-point send of
 * TOKENS tokens' activations to the next stage (hidden states and residual, bf16) over the
 * hardware profile's scale-out link (hardware.kv_link_gb_s when set) plus its latency; 0 for
 * no token.  cost_stage_layers() is the layer count of STAGE.
 */
int64_t cost_stage_ns(const struct cost_model *cm, int phase, const int32_t v[4], int stage);
int64_t cost_pass_overhead_ns(const struct cost_model *cm);
int64_t cost_activation_ns(const struct cost_model *cm, int64_t tokens);
int cost_stage_layers(const struct cost_model *cm, int stage);

/* KV-cache bytes per token on one card (all layers, K and V, KV heads / tp). */
double cost_kv_bytes_per_token(const struct cost_model *cm);
/* One swap graph of vllm-gaudi's online defragmenter (CacheSwapUtils.forward) moving BLOCKS
 * padded blocks on each card of a PP-stage instance: every block's K and V of the stage's
 * layers (1/PP of the cache) is read and written once, at the HBM bandwidth with the profile's
 * KV-read efficiency: 2 x BLOCKS x block_size x kv bytes per token / PP / (hbm_bw x eta_kv).
 * (Upstream swaps the free blocks back too when prefix caching is on, but contiguous PA, which
 * the defragmenter serves, turns prefix caching off.)  0 for no block. */
int64_t cost_kv_swap_ns(const struct cost_model *cm, int32_t blocks, int32_t pp);
/* The decode pass of cost_decode_ns through the non-contiguous paged-attention path: the KV
 * blocks are gathered by index instead of read as one slice cache[:n] (VLLMKVCache.
 * fetch_from_cache in vllm-gaudi), and the gathered KV bytes cost pa_gather_kv_factor times as
 * much (models/data/host.json).  NUM_BLOCKS is the flattened block-list length as for
 * cost_decode_ns.  Never below cost_decode_ns at the same shape. */
int64_t cost_decode_gather_ns(struct cost_model *cm, int32_t bs, int32_t num_blocks);

/*
 * Host time.  What the engine knows of one engine step (one schedule() and execute_model() of
 * vLLM's EngineCore): the requests it runs.  cost_host_ns() is the host time of that step,
 * h_step + h_req * (num_decodes + num_prefills), in ns (>= 1): scheduling, input preparation,
 * sampling bookkeeping and output processing, fitted on measurements that isolate host time
 * (models/README.md, "Host time").  The evidence has decode-only steps, so a prefill chunk is
 * charged as one request like a decode; it gives no term per token, per new or per finished
 * request.
 *
 * With async scheduling the step takes max(host, device); without it host + device, where
 * device is the sum of the step's pass times.  The per-pass fixed cost that the pass functions
 * include by default (t_pass, fitted on static generate() loops whose host time it absorbs) is
 * host time too: an engine that charges cost_host_ns() calls cost_model_set_host_separate(cm,
 * true) once, before any pass is evaluated, so that the pass functions return device time only.
 */
struct host_work {
	int32_t num_decodes;    /* decode requests in the step, >= 0 */
	int32_t num_prefills;   /* prefill chunks in the step (one per request), >= 0 */
};
int64_t cost_host_ns(const struct cost_model *cm, const struct host_work *w);
/* ON: the pass functions (prefill, decode, decode_gather, unified) leave out t_pass, which
 * cost_host_ns() charges instead; OFF (the default): they include it.  cost_static_batch()
 * always includes it (the static rows it was fitted on).  Clears the shape caches. */
void cost_model_set_host_separate(struct cost_model *cm, bool on);
/* vllm-gaudi's HPUModelRunner._use_graphs for a prompt pass: false (the pass runs eagerly,
 * without its HPU graph) when BS * QUERY + NUM_BLOCKS * BLOCK_SIZE > MAX_CAPTURE, NUM_BLOCKS
 * being the pass's flattened context block list (bs x ctx_blocks for a padded prompt shape) and
 * MAX_CAPTURE compilation_config.max_cudagraph_capture_size, which vllm-gaudi sets to
 * max_num_batched_tokens when it is not given (HPUModelRunner.__init__).  Decode passes always
 * use graphs.  ENFORCE_EAGER: no pass uses graphs. */
bool cost_prompt_uses_graphs(int32_t bs, int32_t query, int64_t num_blocks, int32_t block_size,
			     int64_t max_capture, bool enforce_eager);
/* Extra host time of one pass through all layers run without its HPU graph (ops accumulated
 * one by one in lazy mode): layers x eager_layer_us (models/data/host.json, an assumption).  It
 * precedes the pass's device work, so it adds to that pass even with async scheduling; a
 * pipeline stage holding 1/pp of the layers pays 1/pp of it. */
int64_t cost_eager_extra_ns(const struct cost_model *cm);

/* KV blocks of BLOCK_SIZE tokens that fit on the instance, as vllm-gaudi's
 * determine_available_memory sizes them: floor(((HBM - weights - COST_ACTIVATION_RESERVE)
 * * MEM_UTIL * (1 - GRAPH_RESERVED) - one block) / block bytes); 0 when nothing fits.
 * MEM_UTIL is server.gpu_memory_utilization, GRAPH_RESERVED the fraction set aside for HPU graphs
 * (VLLM_GRAPH_RESERVED_MEM: COST_GRAPH_RESERVED_DEFAULT, 0 for an eager engine). */
int64_t cost_num_kv_blocks(const struct cost_model *cm, int32_t block_size, double mem_util,
			   double graph_reserved);
/* The same for an instance whose layers are split over PP pipeline stages (one card each): each
 * stage holds 1/PP of the weights and of each block. */
int64_t cost_num_kv_blocks_pp(const struct cost_model *cm, int32_t block_size, double mem_util,
			      double graph_reserved, int32_t pp);
/* The model's own context length (vLLM's default max_model_len). */
int32_t cost_model_max_context(const struct cost_model *cm);
/* Names for output metadata. */
const char *cost_model_hardware(const struct cost_model *cm);
const char *cost_model_name(const struct cost_model *cm);

/* The profiled activation peak of cost_num_kv_blocks, bytes (see cost.c). */
#define COST_ACTIVATION_RESERVE (2.0 * 1073741824.0)
/* VLLM_GRAPH_RESERVED_MEM's default in vllm-gaudi (hpu_worker.py, determine_available_memory). */
#define COST_GRAPH_RESERVED_DEFAULT 0.1
/* Resident weight bytes on one card. */
double cost_weight_bytes(const struct cost_model *cm);
/* The static-batch generate() the published throughput rows measure: prefill of BS x IN
 * tokens, then OUT - 1 decode steps at the growing context, KV span padded in 128-token steps.
 * Outputs seconds and generated tokens per second (BS * OUT / total). */
void cost_static_batch(const struct cost_model *cm, int64_t bs, int64_t in, int64_t out,
		       double *prefill_s, double *decode_step_s, double *total_s,
		       double *throughput);

/* `bucketsim list models`: every hardware and model profile. */
void cost_list_print(FILE *out);

#endif
