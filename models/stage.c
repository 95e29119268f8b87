/*
 * stage: the time of one pipeline-parallel stage of a forward pass, and the point-to-point
 * activation transfer between two stages.
 *
 * The layers are split over the stages as vLLM splits them (get_pp_indices in
 * vllm/distributed/utils.py): VLLM_PP_LAYER_PARTITION, when set, gives every stage's layer
 * count ("4,4,5,3": one count per stage, summing to the model's layers); otherwise each stage
 * gets layers / pp and the remainder r goes one layer each to the stages pp-2, pp-3, ...,
 * pp-1-r (partitions[-i] += 1 for i in 2..r+1: the last stage, which holds the final norm and
 * the LM head, gets none).  The embedding table sits on the first stage: its lookup has no
 * term in the pass equations (a gather of one row per token), so it adds no time.  The LM
 * head (and so the sampler's logits) runs on the last stage only.
 *
 * A stage's time is the roofline pass (roofline.c) over its own layers: the linear, attention
 * and all-reduce terms scale with its layer count, the KV bytes with its share of the cache,
 * and the head term is there on the last stage only.  The fixed per-pass cost t_pass is left
 * out: the engine charges it once per microbatch, not once per stage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost_int.h"

int pp_split_init(struct pp_split *ps, int layers, int pp, const char *partition, char *msg,
		  size_t msg_len)
{
	memset(ps, 0, sizeof *ps);
	if (pp < 1 || pp > PP_SPLIT_MAX) {
		snprintf(msg, msg_len, "%d pipeline stages (1 to %d)", pp, PP_SPLIT_MAX);
		return -1;
	}
	if (pp > layers) {
		snprintf(msg, msg_len, "%d pipeline stages for a model of %d layers", pp, layers);
		return -1;
	}
	ps->pp = pp;
	if (partition) {
		/* get_pp_indices: int() of each comma-separated field; len == pp_size; sum ==
		 * num_hidden_layers.  A stage of no layer is refused here (vLLM would build an
		 * empty stage; it has no use). */
		const char *c = partition;
		int n = 0, sum = 0;
		for (;;) {
			char *end;
			long v = strtol(c, &end, 10);
			if (end == c || (*end && *end != ',') || v < 1 || v > layers) {
				snprintf(msg, msg_len, "VLLM_PP_LAYER_PARTITION '%s': expected %d "
					 "comma-separated layer counts >= 1", partition, pp);
				return -1;
			}
			if (n < pp)
				ps->layers[n] = (int32_t)v;
			n++;
			sum += (int)v;
			if (!*end)
				break;
			c = end + 1;
		}
		if (n != pp || sum != layers) {
			snprintf(msg, msg_len, "VLLM_PP_LAYER_PARTITION '%s': %d counts summing to %d; "
				 "the model has %d layers over %d stages", partition, n, sum, layers,
				 pp);
			return -1;
		}
		return 0;
	}
	for (int j = 0; j < pp; j++)
		ps->layers[j] = layers / pp;
	for (int i = 2; i < layers % pp + 2; i++)
		ps->layers[pp - i]++;
	return 0;
}

double eval_stage(const struct eval_ctx *e, const struct pp_split *ps, int phase,
		  const int32_t v[4], int stage, double max_logits)
{
	if (stage < 0 || stage >= ps->pp)
		BUG("stage %d of %d", stage, ps->pp);
	struct eval_ctx s = *e;
	s.m.layers = ps->layers[stage];
	s.kv_bytes_token = e->kv_bytes_token * ps->layers[stage] / e->m.layers;
	s.p.v[PP_T_PASS] = 0;
	s.no_head = stage != ps->pp - 1;
	switch (phase) {
	case 0:
		return eval_prefill(&s, v[0], v[1], v[2], NULL);
	case 1:
		return eval_decode(&s, v[0], v[2], NULL);
	case 2: {
		double q = v[0];
		double logits = v[3] ? (q < max_logits ? q : max_logits) : q;
		return eval_unified(&s, q, v[1], v[2], v[3] != 0, logits, NULL);
	}
	default:
		BUG("eval_stage: phase %d", phase);
	}
}

double eval_activation(const struct eval_ctx *e, double tokens, double link_bw, double latency)
{
	/* vLLM's decoder models hand the next stage IntermediateTensors of two tensors,
	 * hidden_states and residual (LlamaModel.forward), each tokens x hidden in the activation
	 * dtype (bf16, 2 bytes, in the fp8 recipes too).  Each card of the TP group sends the
	 * whole tensors over its own link. */
	double bytes = 2.0 * tokens * e->m.hidden * 2.0;
	return latency + bytes / link_bw;
}
