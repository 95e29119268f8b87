/*
 * bucket_env: the one table of the environment variables bucketsim reads (given with
 * `--env NAME=VALUE` or a config file's "env" object), with a one-line doc each.  Any other
 * name warns once when the bucketing parameters are resolved (an error with sim.strict).
 * A module that reads a new variable adds its row here; a variable that sets what a config
 * key sets names the key (.key), and the two given different values are an error.
 */
#include <string.h>

#include "policies/bucket_int.h"

#define KNOB(ph, dim, param, doc_) {.name = BUCKET_KNOB(ph, dim, param), .doc = doc_}
#define MMX(ph, dim, what)                                                                   \
	KNOB(ph, dim, "MIN", "smallest " what " bucket (linear and padding-aware strategies)"), \
	KNOB(ph, dim, "STEP", what " bucket step (linear and padding-aware strategies)"),      \
	KNOB(ph, dim, "MAX", "largest " what " bucket (linear and padding-aware strategies)")
#define PAD(ph, dim, what)                                                                   \
	KNOB(ph, dim, "PAD_MAX", "largest padding of a " what " bucket step (padding_aware)"), \
	KNOB(ph, dim, "PAD_PERCENT", "largest padding of a " what " bucket step, in percent "  \
	     "(padding_aware, 0 to 50)")

const struct env_var_def env_var_defs[] = {
	{.name = "VLLM_BUCKETING_STRATEGY",
	 .doc = "exp, lin or pad: the bucketing strategy (version current)",
	 .key = "bucketing.strategy"},
	{.name = "VLLM_EXPONENTIAL_BUCKETING",
	 .doc = "true: exponential, false: linear bucketing (deprecated in "
	 "version current)"},
	{.name = "VLLM_BUCKETING_FROM_FILE",
	 .doc = "read the buckets from this file (strategy file)",
	 .unit = CFG_UNIT_FILE, .key = "bucketing.file"},
	{.name = "VLLM_UNIFIED_ATTN",
	 .doc = "true: unified attention with unified buckets (strategy unified)"},
	{.name = "VLLM_ENABLE_BUCKETING",
	 .doc = "false: no bucketing, every shape compiles on first use"},
	{.name = "VLLM_SKIP_WARMUP",
	 .doc = "true: compile nothing at start (bucketing.skip_warmup)",
	 .key = "bucketing.skip_warmup"},
	{.name = "VLLM_CONTIGUOUS_PA", .doc = "contiguous paged attention (server.contiguous_pa)",
	 .key = "server.contiguous_pa"},
	{.name = "VLLM_DEFRAG",
	 .doc = "the online defragmenter of the KV block ids (server.defrag)",
	 .key = "server.defrag"},
	{.name = "VLLM_DEFRAG_THRESHOLD",
	 .doc = "fragmentation in blocks the defragmenter tolerates "
	 "(server.defrag_threshold)", .key = "server.defrag_threshold"},
	{.name = "VLLM_MERGED_PREFILL",
	 .doc = "merge several prefills into one sequence (server.merged_prefill)",
	 .key = "server.merged_prefill"},
	KNOB("PROMPT", "BS", "MIN", "smallest prompt batch-size bucket (linear and padding-aware "
	     "strategies)"),
	KNOB("PROMPT", "BS", "STEP", "prompt batch-size bucket step (linear and padding-aware "
	     "strategies)"),
	{.name = BUCKET_KNOB("PROMPT", "BS", "MAX"), .doc = "largest prompt batch size "
	 "(server.max_num_prefill_seqs), hence the largest prompt batch-size bucket",
	 .key = "server.max_num_prefill_seqs"},
	PAD("PROMPT", "BS", "prompt batch-size"),
	KNOB("PROMPT", "BS", "LIMIT", "number of prompt batch-size buckets (exponential, docs)"),
	KNOB("PROMPT", "QUERY", "MIN", "smallest prompt query-length bucket (linear and "
	     "padding-aware; exponential, version current: 1 starts the range at 1)"),
	KNOB("PROMPT", "QUERY", "STEP", "prompt query-length bucket step (linear and "
	     "padding-aware strategies)"),
	KNOB("PROMPT", "QUERY", "MAX", "largest prompt query-length bucket (linear and "
	     "padding-aware strategies)"),
	PAD("PROMPT", "QUERY", "prompt query-length"),
	MMX("PROMPT", "SEQ", "prompt sequence-length (legacy name of QUERY)"),
	PAD("PROMPT", "SEQ", "prompt sequence-length (legacy name of QUERY)"),
	KNOB("PROMPT", "SEQ", "LIMIT", "number of prompt sequence-length buckets (exponential, "
	     "docs)"),
	KNOB("PROMPT", "CTX", "MIN", "smallest prompt context-blocks bucket (linear and "
	     "padding-aware strategies)"),
	KNOB("PROMPT", "CTX", "STEP", "prompt context-blocks bucket step (linear and "
	     "padding-aware strategies)"),
	KNOB("PROMPT", "CTX", "MAX", "largest prompt context-blocks bucket (linear and "
	     "padding-aware); bounds the long-context edge buckets of version current"),
	PAD("PROMPT", "CTX", "prompt context-blocks"),
	MMX("DECODE", "BS", "decode batch-size"),
	PAD("DECODE", "BS", "decode batch-size"),
	KNOB("DECODE", "BS", "LIMIT", "number of decode batch-size buckets (exponential, docs)"),
	MMX("DECODE", "BLOCK", "decode blocks"),
	PAD("DECODE", "BLOCK", "decode blocks"),
	KNOB("DECODE", "BLOCK", "LIMIT", "number of decode block buckets (exponential, docs)"),
	{.name = "VLLM_GRAPH_RESERVED_MEM",
	 .doc = "fraction of the usable free memory kept for HPU graphs, "
	 "not KV cache (default 0.1; sizes server.num_kv_blocks, models/cost.c)"},
	{.name = "RUNTIME_SCALE_PATCHING",
	 .doc = "1: FP8 graphs compile without the FP8 compile-time factor, "
	 "0: with it (default: 1 unless lazy mode, as vllm-gaudi sets it; models/cost.c)"},
	{.name = "PT_HPU_LAZY_MODE", .doc = "1: lazy mode, 0: torch.compile; only its default for "
	 "RUNTIME_SCALE_PATCHING is modelled (default: 0 with bucketing.version current, 1 "
	 "with docs; models/cost.c)"},
	{.name = "VLLM_PP_LAYER_PARTITION",
	 .doc = "layers of each pipeline stage, a,b,... (cluster.pp counts "
	 "summing to the model's layers; default: vLLM's get_pp_indices split, models/stage.c)"},
	{.name = NULL},
};

const struct env_var_def *env_var_find(const char *name)
{
	for (const struct env_var_def *d = env_var_defs; d->name; d++)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}
