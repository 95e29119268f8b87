/*
 * cost: BOOTSTRAP roofline (to be replaced by the calibrated, profile-driven model).
 * gaudi2 + llama-3.1-8b constants only.
 */
#include "models/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cost_model {
	double params, layers, hidden, kv_heads, head_dim, wbytes, kvbytes;
	double flops, bw, hbm, overhead_s;
	int32_t block_size, max_ctx;
};

int cost_model_new(const struct config *cfg, struct cost_model **out, struct bs_err *err)
{
	struct cost_model *m = xcalloc(1, sizeof *m);
	m->params = 8.03e9; m->layers = 32; m->hidden = 4096; m->kv_heads = 8; m->head_dim = 128;
	m->wbytes = 2; m->kvbytes = 2; m->flops = 432e12 * 0.6; m->bw = 2.45e12 * 0.8;
	m->hbm = 96e9; m->overhead_s = 1e-3; m->max_ctx = 131072;
	m->block_size = (int32_t)config_int(cfg, "server.block_size");
	*out = m;
	return 0;
}

void cost_model_free(struct cost_model *cm) { free(cm); }

static int64_t ns(double s) { int64_t v = (int64_t)llround(s * 1e9); return v < 1 ? 1 : v; }

double cost_kv_bytes_per_token(const struct cost_model *m)
{
	return 2 * m->layers * m->kv_heads * m->head_dim * m->kvbytes;
}

static double pass(const struct cost_model *m, double tokens, double kv_tokens_read, double attn_flops)
{
	double fl = 2 * m->params * tokens + attn_flops;
	double by = m->params * m->wbytes + kv_tokens_read * cost_kv_bytes_per_token(m);
	return fmax(fl / m->flops, by / m->bw) + m->overhead_s;
}

int64_t cost_prefill_ns(struct cost_model *m, int32_t bs, int32_t q, int32_t ctx)
{
	double kv = (double)bs * ctx * m->block_size;
	double att = 4.0 * m->layers * m->hidden * bs * (double)q * (q / 2.0 + (double)ctx * m->block_size);
	return ns(pass(m, (double)bs * q, kv, att));
}

int64_t cost_decode_ns(struct cost_model *m, int32_t bs, int32_t nb)
{
	double kv = (double)nb * m->block_size;
	return ns(pass(m, bs, kv, 4.0 * m->layers * m->hidden * kv));
}

int64_t cost_unified_ns(struct cost_model *m, int32_t q, int32_t sh, int32_t un, bool causal)
{
	(void)causal;
	return ns(pass(m, q, (double)(sh + un) * m->block_size, 0));
}

int64_t cost_compile_ns(struct cost_model *m, int phase, const int32_t v[4], bool runtime)
{
	(void)m; (void)phase;
	double tok = phase == 1 ? v[0] : (double)v[0] * v[1];
	return ns(0.35 + 0.6e-3 * tok + (runtime ? 0.3 : 0));
}

int64_t cost_kv_transfer_ns(struct cost_model *m, int64_t tokens)
{
	return ns(tokens * cost_kv_bytes_per_token(m) / 50e9 + 10e-6);
}

int64_t cost_num_kv_blocks(const struct cost_model *m, int32_t bs, double util)
{
	double free_b = m->hbm * util - m->params * m->wbytes;
	return (int64_t)floor(free_b / (cost_kv_bytes_per_token(m) * bs));
}

int32_t cost_model_max_context(const struct cost_model *m) { return m->max_ctx; }
const char *cost_model_hardware(const struct cost_model *m) { (void)m; return "gaudi2"; }
const char *cost_model_name(const struct cost_model *m) { (void)m; return "llama-3.1-8b"; }
void cost_list_print(FILE *out) { fputs("gaudi2\nllama-3.1-8b\n", out); }
