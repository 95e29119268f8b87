/*
 * model_cfg: config keys of the hardware and model profiles (hardware, hardware.*, model,
 * model.*).
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def model_cfg_defs[] = {
	{"hardware", CFG_STRING, "gaudi2", 0, 0, NULL, CFG_UNIT_NAME_OR_FILE,
	 "hardware profile (bucketsim list models)"},
	{"hardware.tp", CFG_INT, "1", 1, 64, NULL, "cards",
	 "tensor-parallel degree; divides the model's attention heads (as vLLM requires), at "
	 "most one box of the hardware (scaleup_peers + 1 cards when above 0)"},
	{"hardware.kv_link_gb_s", CFG_DOUBLE, NULL, 0.001, 1e6, NULL, "GB/s",
	 "per-card link bandwidth for KV transfer between instances; auto = the profile's "
	 "scale-out bandwidth"},
	{"model", CFG_STRING, "llama-3.1-8b", 0, 0, NULL, CFG_UNIT_NAME_OR_FILE,
	 "model profile (bucketsim list models), or a file holding one entry of models.json"},
	{"model.precision", CFG_CHOICE, "bf16", 0, 0, "bf16|fp8", "", "weight precision of the transformer linear layers (embeddings and LM head stay bf16)"},
	{"model.kv_dtype", CFG_CHOICE, NULL, 0, 0, "bf16|fp8", "",
	 "KV-cache precision; auto = model.precision (fp8 recipes quantise the KV cache and the "
	 "attention matmuls too)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};
