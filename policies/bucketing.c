/*
 * bucketing: BOOTSTRAP identity bucketing only (strategy none), replaced by the full
 * vLLM-Gaudi implementation.
 */
#include "policies/bucketing.h"

#include <stdlib.h>
#include <string.h>

struct bucketer { struct bucket_params p; };

int bucket_params_resolve(const struct config *cfg, struct bucket_params *p, struct bs_err *err)
{
	(void)err;
	memset(p, 0, sizeof *p);
	p->strategy = BUCKET_NONE;
	p->max_model_len = (int32_t)config_int(cfg, "server.max_model_len");
	p->max_num_seqs = (int32_t)config_int(cfg, "server.max_num_seqs");
	p->max_num_batched_tokens = (int32_t)config_int(cfg, "server.max_num_batched_tokens");
	p->max_num_prefill_seqs = (int32_t)config_int(cfg, "server.max_num_prefill_seqs");
	p->block_size = (int32_t)config_int(cfg, "server.block_size");
	p->num_kv_blocks = config_int(cfg, "server.num_kv_blocks");
	p->prefix_caching = config_bool(cfg, "server.prefix_caching");
	p->contiguous_pa = config_bool(cfg, "server.contiguous_pa");
	p->merged_prefill = config_bool(cfg, "server.merged_prefill");
	p->skip_warmup = config_bool(cfg, "bucketing.skip_warmup");
	p->enabled = false;
	p->cfg = cfg;
	return 0;
}

int bucketer_new(const struct bucket_params *p, struct bucketer **out, struct bs_err *err)
{
	(void)err;
	struct bucketer *b = xcalloc(1, sizeof *b);
	b->p = *p;
	*out = b;
	return 0;
}

void bucketer_free(struct bucketer *b) { free(b); }

size_t bucketer_list(const struct bucketer *b, enum phase ph, const struct bshape **out)
{ (void)b; (void)ph; *out = NULL; return 0; }

size_t bucketer_warmup(const struct bucketer *b, enum phase ph, struct bshape **out)
{ (void)b; (void)ph; *out = NULL; return 0; }

bool bucketer_lookup(struct bucketer *b, enum phase ph, const struct bshape *real, struct bshape *bucket)
{ (void)b; (void)ph; *bucket = *real; return false; }

const char *bucket_phase_name(enum phase ph)
{ return ph == PHASE_PROMPT ? "prompt" : ph == PHASE_DECODE ? "decode" : "unified"; }
