/*
 * cost_int: internals of the cost model shared by cost.c (the simulator's API), profile.c
 * (loading the embedded JSON profiles), roofline.c (the pure equations), calib.c (the fit) and
 * the predict/calibrate commands.  Nothing here is part of the public contract (models/cost.h).
 *
 * Units inside: seconds, bytes, FLOP/s, bytes/s.  The fitted parameters are kept in physical
 * units (efficiencies in (0, 1], overheads in seconds); the fit works on transformed values
 * (logit for efficiencies, log for the rest) so that they stay in range.
 */
#ifndef BS_COST_INT_H
#define BS_COST_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/util.h"

struct cJSON;

/* A hardware profile's specification (one card). */
struct hw_spec {
	char name[32];       /* the profile's name (a file's base name for a profile read at run
			      * time) */
	char chip[32];       /* the chip it describes: its "name" member (gaudi2, gaudi3, ...) */
	char desc[160];
	bool calibrated;
	bool gpu;            /* an NVIDIA GPU ("device": "gpu"; without the member, a chip whose
			      * name does not start with "gaudi") */
	double peak_bf16;    /* FLOP/s, dense matrix */
	double peak_fp8;     /* FLOP/s, dense matrix */
	double vector_bf16;  /* FLOP/s; 0 = not known (not used by the equations) */
	double hbm_bytes;    /* usable device memory */
	double hbm_bw;       /* bytes/s */
	double scaleup_bw;   /* bytes/s per direction per card (tensor parallelism) */
	double scaleout_bw;  /* bytes/s per direction per card (KV transfer between instances) */
	int scaleup_peers;   /* all-to-all box: scale-up links split evenly over this many peers
			      * (7 in an 8-card Gaudi box); 0 = switched (any peer at full rate) */
};

/* The fitted pass-time parameters, physical units. */
enum perf_param {
	PP_ETA_COMPUTE,   /* matrix efficiency of large linear layers, (0,1] */
	PP_N_HALF,        /* tokens per pass at which linear-layer efficiency is half of it */
	PP_ETA_WEIGHTS,   /* HBM efficiency streaming weights, (0,1] */
	PP_ETA_KV,        /* HBM efficiency reading the paged KV cache, (0,1] */
	PP_ETA_ATTN,      /* matrix efficiency of attention (QK^T, PV, softmax), (0,1] */
	PP_T_PASS,        /* fixed cost of a forward pass (host, launches, sampler), s */
	PP_T_ALLREDUCE,   /* latency of one tensor-parallel all-reduce, s */
	PP_AR_OVERLAP,    /* fraction of all-reduce transfer time hidden behind compute, (0,1) */
	PP_COUNT
};
struct perf_params {
	double v[PP_COUNT];
};
/* Names as in the profile JSON (with unit suffixes), and the JSON unit scale (value in the
 * JSON = physical value * scale). */
extern const char *const perf_param_names[PP_COUNT];
extern const double perf_param_json_scale[PP_COUNT];
/* true: logit transform (efficiency); false: log transform. */
extern const bool perf_param_is_eff[PP_COUNT];

struct compile_params {
	double c0;          /* s per compiled graph */
	double c1;          /* s per padded token of the graph */
	double capture;     /* s per HPU-graph capture (warm-up only) */
	double runtime;     /* s added to a compile that happens while serving */
	double fp8_factor;  /* compile-time multiplier for fp8 weights without runtime scale patching */
	double kv_latency;  /* s, fixed latency of one KV transfer */
};

struct model_arch {
	char name[32];
	int layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
	int experts, experts_per_token, max_context, learned_positions;
	bool gated_mlp, tied_embeddings;
};

/* Everything the equations need, derived once. */
struct eval_ctx {
	struct hw_spec hw;
	struct model_arch m;
	struct perf_params p;
	int tp;
	bool fp8, kv_fp8;
	int block_size;
	/* derived per card */
	double peak_lin;         /* FLOP/s for the transformer linear layers */
	double peak_attn;        /* FLOP/s for attention and the LM head (bf16) */
	double wbytes;           /* bytes per weight of the transformer linear layers */
	double dense_params;     /* per layer, non-expert linear weights (whole model, not / tp) */
	double expert_params;    /* per expert per layer (0 for dense models) */
	double active_mlp;       /* MLP weights a token multiplies with, per layer */
	double head_params;      /* LM head weights (vocab x hidden) */
	double kv_bytes_token;   /* per card, all layers, K and V */
	double weight_bytes;     /* resident weights per card */
	bool no_head;            /* a pipeline stage without the LM head (models/stage.c):
				  * pass() leaves out the head term */
};

/* Terms of one evaluated pass (for tests and the roofline sanity checks). */
struct pass_cost {
	double t;           /* s, total */
	double flops;       /* per card */
	double bytes;       /* HBM bytes per card (weights streamed + KV read/written) */
};

void eval_setup(struct eval_ctx *e, const struct hw_spec *hw, const struct model_arch *m,
		const struct perf_params *p, int tp, bool fp8, bool kv_fp8, int block_size);
double eval_prefill(const struct eval_ctx *e, double bs, double query, double ctx_blocks,
		    struct pass_cost *pc);
double eval_decode(const struct eval_ctx *e, double bs, double num_blocks, struct pass_cost *pc);
/* A pass of T tokens without attention, KV traffic and LM head: the linear layers and the
 * tensor-parallel all-reduces, plus the fixed per-pass cost (the operators Vidur's MLP and
 * all-reduce profiles measure; models/README.md, "GPU profiles"). */
double eval_linear(const struct eval_ctx *e, double T, struct pass_cost *pc);
/* A GPU forward (varlen attention, no per-sequence padding) of Q tokens: PRE of them prefill
 * tokens reading CTX_BLOCKS context blocks, the others decodes reading DEC_BLOCKS blocks
 * (models/README.md, "GPU forward"). */
double eval_forward(const struct eval_ctx *e, double q, double ctx_blocks, double dec_blocks,
		    double pre, double logits, struct pass_cost *pc);
double eval_unified(const struct eval_ctx *e, double query, double shared, double unique,
		    bool causal, double logits, struct pass_cost *pc);
/* The static-batch generate() of the published rows: prefill of bs x in, then out - 1 decode
 * steps at context in + k, the KV span padded in steps of 128 tokens.  Returns T (s). */
struct static_batch {
	double prefill_s, decode_mean_s, total_s, throughput;
};
void eval_static_batch(const struct eval_ctx *e, double bs, double in, double out,
		       struct static_batch *r);
/* Pipeline parallelism (stage.c): the layers of each stage, as vLLM's get_pp_indices splits
 * them (PARTITION: VLLM_PP_LAYER_PARTITION, or NULL).  Returns -1 with MSG on a bad partition. */
#define PP_SPLIT_MAX 64
struct pp_split {
	int pp;
	int32_t layers[PP_SPLIT_MAX];
};
int pp_split_init(struct pp_split *ps, int layers, int pp, const char *partition, char *msg,
		  size_t msg_len);
/* Stage STAGE's share of a pass at padded shape V of PHASE (0 prompt, 1 decode, 2 unified, the
 * shapes of cost.h), without t_pass, s.  MAX_LOGITS: logits of a causal unified pass are at
 * most this many. */
double eval_stage(const struct eval_ctx *e, const struct pp_split *ps, int phase,
		  const int32_t v[4], int stage, double max_logits);
/* Sending TOKENS tokens' activations to the next stage over a link of LINK_BW bytes/s with
 * LATENCY s, s. */
double eval_activation(const struct eval_ctx *e, double tokens, double link_bw, double latency);
/* Expected distinct experts per layer that TOKENS tokens touch (uniform routing). */
double eval_experts_touched(const struct model_arch *m, double tokens);

/* The decode pass with the KV bytes read through the block gather scaled by GATHER (>= 1; 1 is
 * the contiguous slice, which eval_decode charges). */
double eval_decode_gather(const struct eval_ctx *e, double bs, double num_blocks, double gather,
			  struct pass_cost *pc);

/* Engine-side costs outside the forward pass (host.c, models/data/host.json). */
struct host_row {
	double requests;        /* requests in the step */
	double host_s;          /* host time of the step (or of the measured part), s */
	bool fit;               /* use "fit": a total host time that enters the fit */
};
struct host_params {
	double step_s, req_s;   /* host time per engine step and per scheduled request, s */
	double step_se, req_se; /* standard errors; NAN with no more rows than parameters */
	int n_fit;              /* rows fitted */
	double eager_layer_s;   /* extra host time per decoder layer of a pass without HPU graphs */
	double hpu_launch_s;    /* host time of launching one forward's HPU graph (lazy mode) */
	double gather_kv;       /* KV-read factor of the gather paged-attention path (>= 1) */
	/* GPU forwards (execution mode cuda_graphs): host time per decoder layer of launching a
	 * PIECEWISE forward (the attention between the pieces) and an eager one (every op); one
	 * capture's time and memory at start-up. */
	double cuda_piecewise_layer_s, cuda_eager_layer_s;
	double cuda_capture_s, cuda_capture_bytes;
};
/* The rows of models/data/host.json (owned by the caller, free()). */
size_t host_rows_load(struct host_row **out);
/* Fits step_s and req_s (GSL weighted linear least squares on the relative error) on the rows
 * with fit set.  Returns 0, or -1 with fewer than two such rows, a GSL failure or a negative
 * term. */
int host_fit(const struct host_row *rows, size_t n, struct host_params *hp);
/* The fitted host terms, the eager and the gather constants of chip CHIP (a hardware profile's
 * "name" member).  A chip without a gather factor is an input error naming PROFILE. */
int host_params_load(const char *chip, const char *profile, struct host_params *hp,
		     struct bs_err *err);

/* Profiles (profile.c).  Names are case-sensitive lower case. */
int profile_load_hw(const char *name, struct hw_spec *hw, struct perf_params *p,
		    struct compile_params *c, struct bs_err *err);
int profile_load_model(const char *name, struct model_arch *m, struct bs_err *err);
/* The parsed embedded JSON of hardware NAME (owned by the caller), or NULL. */
struct cJSON *profile_hw_json(const char *name);
void profile_list_names(FILE *out, bool hardware, const char *sep);

/* Transforms (calib.c). */
double perf_to_theta(int i, double phys);
double perf_from_theta(int i, double theta);

#endif
