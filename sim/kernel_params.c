/*
 * kernel_params: the kernel parameters from the configuration (and the checks vLLM and the
 * policies make of them) and the adapter from the cost model to struct sim_costs.
 */
#include "sim/kernel_int.h"

#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "policies/grouping.h"
#include "policies/loop.h"

/* ---- cost adapter ---------------------------------------------------------------------- */

static int64_t model_prefill(void *ctx, int32_t bs, int32_t q, int32_t c)
{
	return cost_prefill_ns(ctx, bs, q, c);
}

static int64_t model_decode(void *ctx, int32_t bs, int32_t nb)
{
	return cost_decode_ns(ctx, bs, nb);
}

static int64_t model_unified(void *ctx, int32_t q, int32_t sh, int32_t un, bool causal)
{
	return cost_unified_ns(ctx, q, sh, un, causal);
}

static int64_t model_compile(void *ctx, int phase, const int32_t v[4], bool runtime)
{
	return cost_compile_ns(ctx, phase, v, runtime);
}

static int64_t model_transfer(void *ctx, int64_t tokens)
{
	return cost_kv_transfer_ns(ctx, tokens);
}

static int64_t model_stage(void *ctx, int phase, const int32_t v[4], int stage)
{
	return cost_stage_ns(ctx, phase, v, stage);
}

static int64_t model_overhead(void *ctx)
{
	return cost_pass_overhead_ns(ctx);
}

static int64_t model_activation(void *ctx, int64_t tokens)
{
	return cost_activation_ns(ctx, tokens);
}

static int64_t model_host(void *ctx, int32_t num_decodes, int32_t num_prefills)
{
	struct host_work w = {num_decodes, num_prefills};
	return cost_host_ns(ctx, &w);
}

static int64_t model_decode_gather(void *ctx, int32_t bs, int32_t nb)
{
	return cost_decode_gather_ns(ctx, bs, nb);
}

static int64_t model_eager(void *ctx)
{
	return cost_eager_extra_ns(ctx);
}

static int64_t model_forward(void *ctx, const int32_t v[4])
{
	return cost_forward_ns(ctx, v[0], v[1], v[2], v[3]);
}

static int64_t model_launch(void *ctx, int kind)
{
	return cost_launch_ns(ctx, kind);
}

static int64_t model_capture(void *ctx, int32_t captures)
{
	return cost_capture_ns(ctx, captures);
}

static int64_t model_kv_swap(void *ctx, int32_t blocks, int32_t pp)
{
	return cost_kv_swap_ns(ctx, blocks, pp);
}

void sim_costs_from_model(struct sim_costs *c, struct cost_model *cm)
{
	c->ctx = cm;
	c->prefill = model_prefill;
	c->decode = model_decode;
	c->unified = model_unified;
	c->compile = model_compile;
	c->transfer = model_transfer;
	c->stage = model_stage;
	c->overhead = model_overhead;
	c->activation = model_activation;
	c->host = model_host;
	c->decode_gather = model_decode_gather;
	c->eager = model_eager;
	c->kv_swap = model_kv_swap;
	c->forward = model_forward;
	c->launch = model_launch;
	c->capture = model_capture;
}

/* ---- parameters -------------------------------------------------------------------------- */

/* KV blocks one request of max_model_len tokens needs. */
static int64_t need_blocks(const struct sim_params *p)
{
	return (p->max_model_len + p->block_size - 1) / p->block_size;
}

/* vllm-gaudi's online defragmenter: on with contiguous PA (extension/features.py, Value('defrag',
 * Enabled('use_contiguous_pa')), overridden by VLLM_DEFRAG), its threshold VLLM_DEFRAG_THRESHOLD
 * (32 when unset: OnlineDefragmenter.__init__).  Block ids are modelled for the prompt/decode
 * engine, not under unified attention (its shape is kernel_unified.c's). */
#define BLOCK_IDS_MAX (INT64_C(1) << 24)

static int defrag_params(const struct config *cfg, struct sim_params *p, struct bs_err *err)
{
	char why[160];
	const char *src = "server.defrag", *file = cfg->file;
	p->defrag = config_is_set(cfg, "server.defrag") ? config_bool(cfg, "server.defrag")
							 : p->contiguous_pa && !p->unified;
	const char *e = config_env(cfg, "VLLM_DEFRAG");
	if (e) {
		if (parse_bool(e, &p->defrag, why, sizeof why))
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "VLLM_DEFRAG", "%s", why);
		src = "VLLM_DEFRAG";
		file = NULL;
	}
	int64_t t = config_int(cfg, "server.defrag_threshold");
	if ((e = config_env(cfg, "VLLM_DEFRAG_THRESHOLD")) &&
	    parse_i64(e, 0, 1ll << 30, &t, why, sizeof why))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "VLLM_DEFRAG_THRESHOLD", "%s", why);
	p->defrag_threshold = (int32_t)t;
	/* Block ids cost about 16 bytes per block and lane (sim/kernel_defrag.c). */
	if (p->contiguous_pa && !p->unified && p->num_kv_blocks > BLOCK_IDS_MAX)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.num_kv_blocks",
			       "block ids are modelled with contiguous PA for at most %lld blocks "
			       "per instance, got %lld", (long long)BLOCK_IDS_MAX,
			       (long long)p->num_kv_blocks);
	if (p->defrag && !p->contiguous_pa)
		return bs_errf(err, BS_EXIT_INPUT, file, 0, src,
			       "the defragmenter compacts the block ids that contiguous paged "
			       "attention reads: it needs server.contiguous_pa");
	if (p->defrag && p->unified)
		return bs_errf(err, BS_EXIT_INPUT, file, 0, src,
			       "block ids and the defragmenter are not modelled under unified "
			       "attention");
	return 0;
}

bool sim_prompt_grid(const struct sim_params *p, const struct bucket_params *bp)
{
	return p->mode->padding == MODE_PAD_BUCKETS && bp->enabled && !bp->strategy->ideal &&
	       !p->unified && bucket_params_prompt_decode(bp);
}

int sim_params_from_config(const struct config *cfg, const struct bucket_params *bp,
			   struct sim_params *p, struct bs_err *err)
{
	memset(p, 0, sizeof *p);
	p->max_num_seqs = (int32_t)config_int(cfg, "server.max_num_seqs");
	p->max_num_batched_tokens = (int32_t)config_int(cfg, "server.max_num_batched_tokens");
	p->max_num_prefill_seqs = bp->max_num_prefill_seqs;
	p->block_size = (int32_t)config_int(cfg, "server.block_size");
	p->max_model_len = (int32_t)config_int(cfg, "server.max_model_len");
	p->num_kv_blocks = config_int(cfg, "server.num_kv_blocks");
	p->chunked_prefill = config_bool(cfg, "server.chunked_prefill");
	p->contiguous_pa = bp->contiguous_pa;
	p->skip_warmup = bp->skip_warmup;
	p->prefix_caching = bp->prefix_caching;
	p->stop_ns = INT64_MAX;
	p->step_by_step = !config_bool(cfg, "sim.decode_jumps");
	p->host_time = config_bool(cfg, "sim.host_time");
	p->async_scheduling = config_bool(cfg, "server.async_scheduling");
	/* The execution mode, resolved (sim/resolve.c); hpu_eager is --enforce-eager. */
	p->mode = exec_mode(config_str(cfg, "server.execution_mode"));
	if (!p->mode)
		BUG("server.execution_mode not resolved");
	p->enforce_eager = config_bool(cfg, "server.enforce_eager") || p->mode->eager;
	p->merged_prefill = bp->merged_prefill;
	p->ideal = bp->strategy->ideal;
	/* vllm-gaudi HPUModelRunner.__init__: max_cudagraph_capture_size defaults to
	 * max_num_batched_tokens. */
	p->max_capture = config_is_set(cfg, "server.max_cudagraph_capture_size")
				 ? config_int(cfg, "server.max_cudagraph_capture_size")
				 : p->max_num_batched_tokens;
	/* Both keys' ranges keep their nanoseconds within int64; checked all the same. */
	if (config_is_set(cfg, "sim.stop_s") && s_to_ns(config_double(cfg, "sim.stop_s"), &p->stop_ns))
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "sim.stop_s", "out of range");
	if (s_to_ns(config_double(cfg, "monitor.interval_s"), &p->monitor_ns))
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "monitor.interval_s", "out of range");
	if (p->monitor_ns > 0 && p->monitor_ns < 1000000)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "monitor.interval_s",
			       "expected 0 (off) or at least 0.001 s, got '%s'",
			       config_str(cfg, "monitor.interval_s"));
	p->slo_ttft_ms = config_double(cfg, "slo.ttft_ms");
	p->slo_tpot_ms = config_double(cfg, "slo.tpot_ms");
	p->slo_e2e_ms = config_is_set(cfg, "slo.e2e_ms") ? config_double(cfg, "slo.e2e_ms") : 0;
	if (config_is_set(cfg, "workload.concurrency")) /* closed-loop client */
		p->concurrency = (int32_t)config_int(cfg, "workload.concurrency");
	/* The choices were checked against the registry when set. */
	p->order = order_policy(config_str(cfg, "scheduler.order"));
	p->grouping = grouping_policy(config_str(cfg, "scheduler.grouping"));
	p->batching = batch_policy(config_str(cfg, "scheduler.batching"));
	p->loop = loop_policy(config_str(cfg, "cluster.engine_loop"));
	if (!p->order || !p->grouping || !p->batching || !p->loop)
		BUG("a policy choice not in the registry");
	p->unified = p->batching->unified || bucket_params_unified(bp);
	p->prompt_grid = sim_prompt_grid(p, bp);
	if (p->mode->one_forward && p->unified)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0,
			       p->batching->unified ? "scheduler.batching" : "bucketing.strategy",
			       "unified attention is vllm-gaudi's; execution mode %s runs vLLM V1's one "
			       "forward per step (use scheduler.batching=continuous and a bucketing "
			       "strategy other than unified)", p->mode->info.name);
	if (p->mode->one_forward) {
		/* vLLM V1 on GPUs (policies/mode_cuda_graphs.c): the unified path of the kernel, one
		 * forward per step, with the GPU forward's shape; capture sizes as
		 * _set_cudagraph_sizes (policies/mode.c). */
		p->one_forward = true;
		p->unified = true;
		if (bp->contiguous_pa) {
			const struct cfg_entry *e = config_find(cfg, "server.contiguous_pa");
			bool by_env = config_env(cfg, "VLLM_CONTIGUOUS_PA") != NULL;
			if (by_env || e->origin == CFG_ORIGIN_FILE || e->origin == CFG_ORIGIN_CMDLINE)
				return bs_errf(err, BS_EXIT_INPUT, by_env ? NULL : cfg->file, 0,
					       by_env ? "VLLM_CONTIGUOUS_PA" : "server.contiguous_pa",
					       "contiguous paged attention is vllm-gaudi's; execution "
					       "mode %s reads the KV cache through block tables",
					       p->mode->info.name);
		}
		p->contiguous_pa = false;
		p->capture_bound = cuda_graph_bound(p->max_num_seqs, p->max_num_batched_tokens,
						    config_is_set(cfg, "server.max_cudagraph_capture_size")
							    ? config_int(cfg, "server.max_cudagraph_capture_size")
							    : 0);
		p->captures = cuda_graph_captures(p->max_num_seqs, p->max_num_batched_tokens,
						  p->capture_bound, p->enforce_eager,
						  &p->capture_max);
	} else if (p->unified && bucket_params_prompt_decode(bp))
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "scheduler.batching",
			       "unified batching runs unified buckets: set bucketing.strategy=unified "
			       "(or none)");
	policy_params_read(&p->order->info, cfg, &p->order_par);
	policy_params_read(&p->batching->info, cfg, &p->batching_par);
	p->task_aware = config_bool(cfg, "scheduler.task_aware");
	p->grouped = p->grouping->buckets || p->order->earliest_bucket || p->batching->buckets;
	p->disaggregated = !strcmp(config_str(cfg, "cluster.mode"), "disaggregated");
	p->instances = (int32_t)config_int(cfg, "cluster.instances");
	p->pp = (int32_t)config_int(cfg, "cluster.pp");
	p->pp_lose_empty_slots = p->loop->waits_for_oldest &&
				 !config_bool(cfg, "cluster.atomic_empty_microbatches");
	p->pp_prefill_chunks = !p->loop->waits_for_oldest && !p->loop->virtual_engines &&
			       config_bool(cfg, "cluster.async_prefill_chunks");
	p->prefill_instances = (int32_t)config_int(cfg, "cluster.prefill_instances");
	p->decode_instances = (int32_t)config_int(cfg, "cluster.decode_instances");
	if (p->pp > 1 && p->disaggregated)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "cluster.pp",
			       "pipeline parallelism is modelled for colocated instances only");
	if (p->pp > 1 && p->loop->virtual_engines && p->grouped)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "cluster.engine_loop",
			       "virtual engines keep one plain queue each: BucketServe grouping "
			       "needs the async or atomic loop");
	if (p->pp > 1 && p->loop->virtual_engines && p->num_kv_blocks / p->pp < need_blocks(p))
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.num_kv_blocks",
			       "%lld blocks split over %d virtual engines cannot hold one request of "
			       "max_model_len %d", (long long)p->num_kv_blocks, p->pp,
			       p->max_model_len);
	/* Unified attention reads its unique blocks as one contiguous slice of the KV cache
	 * (create_unified_batch: unique_blocks = max block id + 1): contiguous PA is what runs,
	 * and a setting that says otherwise cannot apply. */
	if (p->unified && !p->one_forward) {
		const struct cfg_entry *e = config_find(cfg, "server.contiguous_pa");
		if (e->origin != CFG_ORIGIN_DEFAULT && e->origin != CFG_ORIGIN_DERIVED &&
		    !config_bool(cfg, "server.contiguous_pa"))
			return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.contiguous_pa",
				       "unified attention always reads a contiguous slice of the KV "
				       "cache: false cannot apply");
		if (!p->contiguous_pa && config_env(cfg, "VLLM_CONTIGUOUS_PA"))
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "VLLM_CONTIGUOUS_PA",
				       "unified attention always reads a contiguous slice of the KV "
				       "cache: false cannot apply");
		p->contiguous_pa = true;
	}
	if (defrag_params(cfg, p, err))
		return -1;
	if (p->disaggregated && p->one_forward)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "cluster.mode",
			       "execution mode %s is modelled for colocated instances only",
			       p->mode->info.name);
	if (p->disaggregated && p->unified)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "cluster.mode",
			       "unified attention runs prefill and decode together: it cannot be "
			       "disaggregated");
	/* vLLM's own configuration checks (SchedulerConfig, the KV-cache check at start-up). */
	if (p->max_num_batched_tokens < p->max_num_seqs)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.max_num_batched_tokens",
			       "%d is smaller than server.max_num_seqs (%d), which vLLM rejects",
			       p->max_num_batched_tokens, p->max_num_seqs);
	if (!p->chunked_prefill && p->max_num_batched_tokens < p->max_model_len)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.max_num_batched_tokens",
			       "%d is smaller than server.max_model_len (%d) with chunked prefill "
			       "off, which vLLM rejects", p->max_num_batched_tokens, p->max_model_len);
	int64_t need = (p->max_model_len + p->block_size - 1) / p->block_size;
	if (need > p->num_kv_blocks)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.num_kv_blocks",
			       "%lld blocks of %d tokens cannot hold one request of max_model_len %d "
			       "(vLLM refuses to start)", (long long)p->num_kv_blocks, p->block_size,
			       p->max_model_len);
	return 0;
}

int sim_check_workload(const struct sim_params *p, const struct bucketserve_cfg *bsc,
		       const struct req_spec *req, size_t n, const char *file, struct bs_err *err)
{
	const struct batch_policy *ctl = p->batching;
	if (!ctl->take)
		return 0;
	/* The view of an idle instance with its whole KV cache free, one request waiting (the
	 * candidate), at its arrival; a controller with a state sees it as init() sets it. */
	uint32_t len;
	struct batch_view d = {0};
	d.lens = &len;
	d.idle = true;
	d.waiting = 1;
	d.max_running = p->max_num_seqs;
	d.step_tokens = p->max_num_batched_tokens;
	d.kv_free = p->num_kv_blocks;
	d.kv_tokens = p->num_kv_blocks * p->block_size;
	d.par = p->batching_par.v;
	d.bsc = bsc;
	void *state = ctl->state_size ? xcalloc(1, ctl->state_size) : NULL;
	for (size_t i = 0; i < n; i++) {
		int64_t blocks = (req[i].prompt_tokens + p->block_size - 1) / p->block_size;
		struct batch_cand c = {&req[i], blocks, blocks, 0, 0};
		struct batch_view t = d;
		t.now_ns = req[i].arrival_ns;
		t.waiting_tokens = req[i].prompt_tokens;
		if (state) {
			memset(state, 0, ctl->state_size);
			if (ctl->init)
				ctl->init(state, p->batching_par.v);
		}
		t.state = state;
		if (!ctl->take(&t, &c)) {
			free(state);
			return bs_errf(err, BS_EXIT_INPUT, file, 0, "scheduler.batching",
				       "request %zu (%d prompt + %d output tokens) does not fit in a "
				       "batch of the %s controller even on an idle instance of %lld KV "
				       "blocks: it could never run", i, req[i].prompt_tokens,
				       req[i].output_tokens, ctl->info.name,
				       (long long)p->num_kv_blocks);
		}
	}
	free(state);
	return 0;
}
