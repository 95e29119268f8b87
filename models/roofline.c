/*
 * roofline: the pass-time equations, pure functions of an eval_ctx (no state, no cache).
 *
 * One forward pass on one card of a TP group is the sum of four roofline terms plus overheads:
 *
 *   linear  = max(F_lin  / (P_lin  * eff(T)),      W_lin  / (BW * eta_weights))
 *   head    = max(F_head / (P_bf16 * eff(L)),      W_head / (BW * eta_weights))
 *   attn    = max(F_attn / (P_attn * eta_attn),    KV     / (BW * eta_kv))
 *   xfer    = 2 * layers * 2 (tp-1)/tp * T * hidden * 2 B / ar_bw        (0 when tp = 1)
 *   t       = max(compute + (1 - ar_overlap) xfer, xfer) + 2 layers t_allreduce + t_pass
 *   compute = linear + head + attn
 *
 * with T the tokens of the pass, L the logits fetched (one per sequence), eff(T) = eta_compute *
 * T / (T + n_half) (thin GEMMs waste the matrix engine; F/eff is still increasing in T), F the
 * FLOPs and W the weight bytes per card; P_lin is the peak at the weight precision, P_attn at
 * the KV-cache precision, P_bf16 the bf16 peak (fp8 recipes keep the LM head in bf16).  A
 * fraction ar_overlap of the all-reduce transfer hides behind the pass's compute, never more
 * than that compute, so a pass is never shorter than the bare transfer.  Every term is
 * non-decreasing in each shape dimension, and every efficiency is <= 1, so a pass never beats
 * peak compute or peak bandwidth.
 *
 * ar_bw, the all-reduce bandwidth of one card: in an all-to-all box (Gaudi: 21 scale-up ports
 * spread over the 7 other cards, 3 per peer) a TP group of n cards can use only the links to
 * its n - 1 peers, ar_bw = scaleup_bw * (n - 1) / peers; behind a switch (NVLink) ar_bw =
 * scaleup_bw for any n.
 */
#include <math.h>

#include "models/cost_int.h"

double eval_experts_touched(const struct model_arch *m, double tokens)
{
	if (m->experts <= 1)
		return 1;
	double e = m->experts, k = m->experts_per_token;
	if (tokens <= 0)
		return 0;
	return e * (1 - pow(1 - k / e, tokens));
}

void eval_setup(struct eval_ctx *e, const struct hw_spec *hw, const struct model_arch *m,
		const struct perf_params *p, int tp, bool fp8, bool kv_fp8, int block_size)
{
	e->hw = *hw;
	e->m = *m;
	e->p = *p;
	e->tp = tp < 1 ? 1 : tp;
	e->fp8 = fp8;
	e->kv_fp8 = kv_fp8;
	e->block_size = block_size;
	e->no_head = false;
	e->peak_lin = fp8 ? hw->peak_fp8 : hw->peak_bf16;
	e->peak_attn = kv_fp8 ? hw->peak_fp8 : hw->peak_bf16;  /* attention runs at the KV dtype */
	e->wbytes = fp8 ? 1 : 2;
	double h = m->hidden, qd = (double)m->heads * m->head_dim, kvd = (double)m->kv_heads * m->head_dim;
	double attn_proj = h * qd + 2 * h * kvd + qd * h;
	double mlp = (m->gated_mlp ? 3.0 : 2.0) * h * m->ffn;
	if (m->experts > 1) {
		e->dense_params = attn_proj + h * m->experts;  /* + router */
		e->expert_params = mlp;
		e->active_mlp = mlp * m->experts_per_token;
	} else {
		e->dense_params = attn_proj + mlp;
		e->expert_params = 0;
		e->active_mlp = 0;
	}
	e->head_params = (double)m->vocab * h;
	double kvh = (double)m->kv_heads / e->tp;
	if (kvh < 1)
		kvh = 1;  /* KV heads are replicated when tp exceeds them */
	e->kv_bytes_token = 2.0 * m->layers * kvh * m->head_dim * (kv_fp8 ? 1 : 2);
	/* Resident weights: transformer layers at the weight precision, embeddings and LM head in
	 * bf16 (fp8 recipes keep them unquantised); tied embeddings are stored once. */
	double layer_w = m->layers * (e->dense_params + e->expert_params * (m->experts > 1 ? m->experts : 0));
	double emb = e->head_params * (m->tied_embeddings ? 1 : 2) + (double)m->learned_positions * h;
	e->weight_bytes = (layer_w * e->wbytes + emb * 2) / e->tp;
}

static double eff(const struct eval_ctx *e, double tokens)
{
	return e->p.v[PP_ETA_COMPUTE] * tokens / (tokens + e->p.v[PP_N_HALF]);
}

/* T tokens through the layers, LOGITS rows through the LM head, attention FLOPs and KV bytes
 * (per card) given. */
static double pass(const struct eval_ctx *e, double T, double logits, double attn_flops,
		   double kv_bytes, struct pass_cost *pc)
{
	const struct model_arch *m = &e->m;
	double tp = e->tp, bw = e->hw.hbm_bw;
	double lin_params = m->layers * (e->dense_params + e->active_mlp);
	double touched = m->experts > 1 ? eval_experts_touched(m, T) : 0;
	double lin_bytes = m->layers * (e->dense_params + e->expert_params * touched) * e->wbytes / tp;
	double f_lin = 2 * lin_params * T / tp;
	double t_lin = 0;
	if (T > 0)
		t_lin = fmax(f_lin / (e->peak_lin * eff(e, T)), lin_bytes / (bw * e->p.v[PP_ETA_WEIGHTS]));
	/* The LM head stays bf16 in the fp8 recipes (weights and matmul). */
	if (e->no_head)
		logits = 0; /* a pipeline stage before the last: no LM head, no sampler */
	double f_head = 2 * e->head_params * logits / tp;
	double head_bytes = logits > 0 ? e->head_params * 2 / tp : 0;
	double t_head = 0;
	if (logits > 0)
		t_head = fmax(f_head / (e->hw.peak_bf16 * eff(e, logits)),
			      head_bytes / (bw * e->p.v[PP_ETA_WEIGHTS]));
	double t_attn = fmax(attn_flops / (e->peak_attn * e->p.v[PP_ETA_ATTN]),
			     kv_bytes / (bw * e->p.v[PP_ETA_KV]));
	double t_lat = 0, t_xfer = 0;
	if (e->tp > 1 && T > 0) {
		double ar_bw = e->hw.scaleup_bw;
		if (e->hw.scaleup_peers > 0)
			ar_bw *= fmin(tp - 1, e->hw.scaleup_peers) / e->hw.scaleup_peers;
		t_lat = 2.0 * m->layers * e->p.v[PP_T_ALLREDUCE];
		t_xfer = 2.0 * m->layers * 2 * (tp - 1) / tp * T * m->hidden * 2 / ar_bw;
	}
	/* A fraction ar_overlap of the transfer hides behind compute, never more than the
	 * compute there is: body = max(compute + (1 - ovl) xfer, xfer). */
	double compute = t_lin + t_head + t_attn;
	double body = fmax(compute + (1 - e->p.v[PP_AR_OVERLAP]) * t_xfer, t_xfer);
	double t = body + t_lat + e->p.v[PP_T_PASS];
	if (pc) {
		pc->t = t;
		pc->flops = f_lin + f_head + attn_flops;
		pc->bytes = lin_bytes + head_bytes + kv_bytes;
	}
	return t;
}

/* Attention FLOPs (QK^T and PV) per card for Q query tokens against K keys each. */
static double attn_flops(const struct eval_ctx *e, double pairs)
{
	double heads = (double)e->m.heads / e->tp;
	return 4.0 * e->m.layers * heads * e->m.head_dim * pairs;
}

double eval_prefill(const struct eval_ctx *e, double bs, double q, double ctx_blocks,
		    struct pass_cost *pc)
{
	double ctx_tok = ctx_blocks * e->block_size;
	double pairs = bs * (q * (q + 1) / 2 + q * ctx_tok);
	double kv = bs * (ctx_tok + q) * e->kv_bytes_token;  /* read context, write the new keys */
	return pass(e, bs * q, bs, attn_flops(e, pairs), kv, pc);
}

double eval_decode_gather(const struct eval_ctx *e, double bs, double num_blocks, double gather,
			  struct pass_cost *pc)
{
	double kv_tok = num_blocks * e->block_size;
	double kv = (gather * kv_tok + bs) * e->kv_bytes_token;
	return pass(e, bs, bs, attn_flops(e, kv_tok), kv, pc);
}

double eval_decode(const struct eval_ctx *e, double bs, double num_blocks, struct pass_cost *pc)
{
	return eval_decode_gather(e, bs, num_blocks, 1.0, pc);
}

double eval_linear(const struct eval_ctx *e, double T, struct pass_cost *pc)
{
	return pass(e, T, 0, 0, 0, pc);
}

double eval_unified(const struct eval_ctx *e, double q, double shared, double unique,
		    bool causal, double logits, struct pass_cost *pc)
{
	double B = e->block_size;
	/* causal part: the query tokens among themselves; shared blocks: every query token against
	 * every shared block (dense with a bias mask); unique blocks: each read by one token. */
	double pairs = (causal ? q * (q + 1) / 2 : 0) + q * shared * B + unique * B;
	double kv = ((shared + unique) * B + q) * e->kv_bytes_token;
	return pass(e, q, logits, attn_flops(e, pairs), kv, pc);
}

double eval_forward(const struct eval_ctx *e, double q, double ctx_blocks, double dec_blocks,
		    double pre, double logits, struct pass_cost *pc)
{
	double B = e->block_size;
	/* causal: the prefill tokens among themselves; context: every prefill token against the
	 * context blocks; decodes: each token against its own blocks.  Exact for one prefill
	 * chunk in the forward; with several, the causal and context pairs are bounded from above
	 * (every prefill token counted against every chunk's context). */
	double pairs = pre * (pre + 1) / 2 + pre * ctx_blocks * B + dec_blocks * B;
	double kv = ((ctx_blocks + dec_blocks) * B + q) * e->kv_bytes_token;
	return pass(e, q, logits, attn_flops(e, pairs), kv, pc);
}

void eval_static_batch(const struct eval_ctx *e, double bs, double in, double out,
		       struct static_batch *r)
{
	const double step = 128;  /* run_generation.py --bucket_size 128 */
	r->prefill_s = eval_prefill(e, bs, in, 0, NULL);
	double dec = 0;
	double k = 1;
	while (k <= out - 1) {
		double span = ceil((in + k) / step) * step;
		double last = fmin(out - 1, span - in);  /* last k with this span */
		double n = last - k + 1;
		double blocks = bs * ceil(span / e->block_size);
		dec += n * eval_decode(e, bs, blocks, NULL);
		k = last + 1;
	}
	r->decode_mean_s = out > 1 ? dec / (out - 1) : 0;
	r->total_s = r->prefill_s + dec;
	r->throughput = bs * out / r->total_s;
}
