/*
 * sim_cfg: the configuration keys of the serving instance (server.*), the SLO (slo.*) and the
 * kernel's run controls (sim.*, output.*).  See sim/config.h for the row format.
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def sim_cfg_defs[] = {
	{"server.max_num_seqs", CFG_INT, "256", 1, 1 << 20, NULL, "requests",
	 "most requests running at once (vLLM max_num_seqs)"},
	{"server.max_num_batched_tokens", CFG_INT, "2048", 1, 1 << 24, NULL, "tokens",
	 "per-step token budget shared by prefill chunks (vLLM max_num_batched_tokens; 2048 as "
	 "for vllm serve)"},
	{"server.max_model_len", CFG_INT, NULL, 1, 1 << 24, NULL, "tokens",
	 "longest prompt + output a request may have; auto = the model's context length"},
	{"server.max_num_prefill_seqs", CFG_INT, "1", 1, 1 << 20, NULL, "requests",
	 "most prefills in one forward pass (the Gaudi runner's default is 1)"},
	{"server.execution_mode", CFG_CHOICE, NULL, 0, 0, NULL, "",   /* registry.c */
	 "how the forward pass runs (policies/README.md, \"Execution modes\"); auto = "
	 "cuda_graphs on a GPU; on Gaudi hpu_eager with server.enforce_eager, else as "
	 "PT_HPU_LAZY_MODE (--env) says, else the version's (current: hpu_compile, docs: "
	 "hpu_graphs)"},
	{"server.block_size", CFG_INT, "128", 1, 1 << 16, NULL, "tokens",
	 "tokens per KV-cache block (128 on Gaudi); left at its default, the execution mode's "
	 "(16 with cuda_graphs, as vLLM on GPUs)"},
	{"server.num_kv_blocks", CFG_INT, NULL, 1, 1ll << 40, NULL, "blocks",
	 "KV-cache blocks; auto = vllm-gaudi's sizing (models/README.md): (HBM - weights - "
	 "activations) x server.gpu_memory_utilization x (1 - VLLM_GRAPH_RESERVED_MEM) / block bytes; "
	 "with cuda_graphs vLLM's GPU worker's: (HBM x server.gpu_memory_utilization - weights - "
	 "activations - CUDA-graph memory) / block bytes"},
	{"server.gpu_memory_utilization", CFG_DOUBLE, "0.9", 0.01, 1.0, NULL, "fraction",
	 "fraction of the device memory free after weights and activations that vLLM may use"},
	{"server.prefix_caching", CFG_BOOL, "true", 0, 0, NULL, "",
	 "automatic prefix caching (on by default in vLLM V1); contiguous PA turns it off, as "
	 "vllm-gaudi's platform does (setting both true is an error)"},
	{"server.contiguous_pa", CFG_BOOL, NULL, 0, 0, NULL, "",
	 "contiguous paged attention; auto = false in bucketing.version current (only "
	 "VLLM_CONTIGUOUS_PA turns it on), not server.prefix_caching in docs (env "
	 "VLLM_CONTIGUOUS_PA overrides)"},
	{"server.defrag", CFG_BOOL, NULL, 0, 0, NULL, "",
	 "vllm-gaudi's online defragmenter (env VLLM_DEFRAG overrides): each step, when the "
	 "highest KV block id in use exceeds the blocks in use by more than "
	 "server.defrag_threshold, it swaps the highest used blocks into the lowest free ids, at "
	 "most 512 per step, charging their copy time (sim/README.md, \"Block ids\"); auto = "
	 "server.contiguous_pa outside unified attention; needs contiguous PA"},
	{"server.defrag_threshold", CFG_INT, "32", 0, 1ll << 30, NULL, "blocks",
	 "fragmentation the defragmenter tolerates: highest block id in use - blocks in use "
	 "(env VLLM_DEFRAG_THRESHOLD overrides; 32 as upstream)"},
	{"server.merged_prefill", CFG_BOOL, "false", 0, 0, NULL, "",
	 "merge several prefills into one sequence (VLLM_MERGED_PREFILL)"},
	{"server.chunked_prefill", CFG_BOOL, "true", 0, 0, NULL, "",
	 "split prompts longer than the token budget into chunks (on in vLLM V1)"},
	{"server.async_scheduling", CFG_BOOL, "true", 0, 0, NULL, "",
	 "async scheduling (vLLM --async-scheduling, on by default): the host work of a step "
	 "overlaps the device, a step takes max(host, device) instead of host + device, and a "
	 "request arriving during a step joins one step later (sim/README.md, \"Engine step\"); "
	 "read when sim.host_time is on"},
	{"server.enforce_eager", CFG_BOOL, "false", 0, 0, NULL, "",
	 "run every pass without graphs (vLLM --enforce-eager): on Gaudi execution mode "
	 "hpu_eager, each pass paying the eager launch time (with sim.host_time), no memory "
	 "reserved for graphs; with cuda_graphs no capture size (every forward eager)"},
	{"server.max_cudagraph_capture_size", CFG_INT, NULL, 1, 1 << 24, NULL, "tokens",
	 "Gaudi (hpu_graphs): prompt passes of more tokens (bs x query + context blocks x "
	 "block_size) run without their HPU graph (vllm-gaudi _use_graphs), auto = "
	 "server.max_num_batched_tokens; cuda_graphs: the bound of the CUDA-graph capture sizes "
	 "(vLLM _set_cudagraph_sizes), auto = min(2 x server.max_num_seqs, 512), capped by "
	 "server.max_num_batched_tokens"},
	{"sim.host_time", CFG_BOOL, "true", 0, 0, NULL, "",
	 "charge the host time of each engine step (scheduling, input preparation, sampling, "
	 "output processing: models/README.md, \"Host time\") and model async scheduling; "
	 "false = device time only, each pass carrying the profile's fixed per-pass cost (the "
	 "model of earlier releases)"},
	{"slo.ttft_ms", CFG_DOUBLE, "1000", 0, 1e12, NULL, "ms",
	 "time-to-first-token objective of slo_attainment"},
	{"slo.tpot_ms", CFG_DOUBLE, "100", 0, 1e12, NULL, "ms",
	 "time-per-output-token objective of slo_attainment"},
	{"slo.e2e_ms", CFG_DOUBLE, NULL, 1e-6, 1e12, NULL, "ms",
	 "end-to-end latency objective of slo_attainment and goodput; auto = none"},
	{"sim.stop_s", CFG_DOUBLE, NULL, 0, BS_MAX_SECONDS, NULL, "s",
	 "stop the simulation at this simulated time; auto = run until every request finished"},
	{"sim.decode_jumps", CFG_BOOL, "true", 0, 0, NULL, "",
	 "run identical decode-only steps as one event (the fast path); false = every decode step "
	 "its own event, the step-by-step reference the fast path is tested against (same "
	 "results, slower)"},
	{"sim.strict", CFG_BOOL, "false", 0, 0, NULL, "",
	 "make the warnings about explicitly set keys and --env variables that the chosen "
	 "policies and topology never read errors (--strict)"},
	{"monitor.interval_s", CFG_DOUBLE, "0", 0, 1e9, NULL, "s",
	 "global monitor: sample queues, memory, arrival rate, sequence length and batch latency "
	 "every this many seconds into monitor.csv; 0 = off, else at least 0.001"},
	{"output.batches", CFG_BOOL, "true", 0, 0, NULL, "",
	 "write batches.csv (one row per forward pass); --no-batches sets false"},
	{"output.requests", CFG_BOOL, "true", 0, 0, NULL, "",
	 "write requests.csv (one row per request)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};
