/*
 * cost: the calibrated, profile-driven cost model behind models/cost.h.
 *
 * Owns the loaded profiles (struct eval_ctx, see cost_int.h and roofline.c for the equations)
 * and one open-addressing hash per phase (prefill, decode, unified) from a padded shape to its
 * cost in ns.  A table is allocated at its first shape (a run uses only some of them) and grows
 * (doubling) when it is half full, so after warm-up a call is a hash probe with no allocation.
 * Times are integer nanoseconds >= 1.
 */
#include "models/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost_int.h"
#include "policies/mode.h"

struct shape_key {
	int32_t v[4];
};

struct shape_cache {
	struct shape_key *keys;  /* v[0] == -1: empty slot; NULL until the first shape */
	int64_t *vals;
	size_t cap, n;
};

enum { CACHE_CAP0 = 1024 };  /* slots of a table at its first shape */
enum { NCACHE = 5 };

struct cost_model {
	struct eval_ctx e;       /* the pass functions' context (t_pass 0 when host_separate) */
	double t_pass;           /* the profile's t_pass (cost_static_batch always charges it) */
	struct host_params h;
	struct compile_params c;
	double compile_mult;     /* fp8_factor or 1 */
	double kv_link_bw;       /* bytes/s */
	int32_t max_num_seqs;
	struct shape_cache cache[NCACHE]; /* prefill, decode, unified, decode through the gather,
				       * GPU forward */
	struct pp_split pps;     /* layers per pipeline stage (cluster.pp; models/stage.c) */
};

static void cache_init(struct shape_cache *c, size_t cap)
{
	c->cap = cap;
	c->n = 0;
	c->keys = xmalloc(cap * sizeof *c->keys);
	c->vals = xmalloc(cap * sizeof *c->vals);
	for (size_t i = 0; i < cap; i++)
		c->keys[i].v[0] = -1;
}

static uint64_t key_hash(const struct shape_key *k)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 4; i++) {
		h ^= (uint32_t)k->v[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

/* Empties C, keeping its slots. */
static void cache_clear(struct shape_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		c->keys[i].v[0] = -1;
	c->n = 0;
}

static int64_t *cache_slot(struct shape_cache *c, const struct shape_key *k, bool *found)
{
	size_t mask = c->cap - 1, i = key_hash(k) & mask;
	for (;;) {
		if (c->keys[i].v[0] == -1) {
			*found = false;
			return &c->vals[i];
		}
		if (!memcmp(&c->keys[i], k, sizeof *k)) {
			*found = true;
			return &c->vals[i];
		}
		i = (i + 1) & mask;
	}
}

/* C's value of K, or NULL. */
static const int64_t *cache_get(struct shape_cache *c, const struct shape_key *k)
{
	bool found;
	int64_t *slot = c->n ? cache_slot(c, k, &found) : NULL;
	return slot && found ? slot : NULL;
}

static void cache_put(struct shape_cache *c, const struct shape_key *k, int64_t v);

static void cache_grow(struct shape_cache *c)
{
	struct shape_cache old = *c;
	cache_init(c, old.cap * 2);
	for (size_t i = 0; i < old.cap; i++)
		if (old.keys[i].v[0] != -1)
			cache_put(c, &old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
}

static void cache_put(struct shape_cache *c, const struct shape_key *k, int64_t v)
{
	if (!c->keys)
		cache_init(c, CACHE_CAP0);
	else if (2 * (c->n + 1) > c->cap)
		cache_grow(c);
	bool found;
	int64_t *slot = cache_slot(c, k, &found);
	size_t idx = (size_t)(slot - c->vals);
	c->keys[idx] = *k;
	*slot = v;
	if (!found)
		c->n++;
}

static int64_t to_ns(double s)
{
	if (isnan(s))
		BUG("cost model produced NaN");
	if (s > 9e9)
		return INT64_C(9000000000000000000);  /* saturate absurd shapes (~285 years) */
	int64_t v = (int64_t)llround(s * 1e9);
	return v < 1 ? 1 : v;
}

static int32_t nonneg(int32_t x)
{
	return x < 0 ? 0 : x;
}

/* hardware.tp as vLLM accepts it (ModelConfig.verify_with_parallel_config: "Total number of
 * attention heads (H) must be divisible by tensor parallel size (T)."), within one box: the
 * all-reduce is modelled on the scale-up links of a box of scaleup_peers + 1 cards (a profile
 * with scaleup_peers 0 links every card through a switch, and has no such bound). */
static int check_tp(const struct config *cfg, const struct hw_spec *hw,
		    const struct model_arch *m, struct bs_err *err)
{
	int64_t tp = config_int(cfg, "hardware.tp");
	if (m->heads % tp)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "hardware.tp",
			       "%lld does not divide the %d attention heads of %s: vLLM requires "
			       "num_attention_heads %% tensor_parallel_size == 0", (long long)tp,
			       m->heads, m->name);
	/* QKVParallelLinear (vllm/model_executor/layers/linear.py): the KV heads are split over
	 * the cards (kv_heads % tp == 0) or, when fewer than the cards, each replicated on
	 * tp / kv_heads of them (tp % kv_heads == 0); `divide` asserts either. */
	if (tp >= m->kv_heads ? tp % m->kv_heads : m->kv_heads % tp)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "hardware.tp",
			       "%lld and the %d KV heads of %s: vLLM splits the KV heads over the cards "
			       "or replicates each on some of them, so one must divide the other "
			       "(QKVParallelLinear)", (long long)tp, m->kv_heads, m->name);
	if (hw->scaleup_peers > 0 && tp > hw->scaleup_peers + 1)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "hardware.tp",
			       "%lld cards, more than the %d of one %s box (scaleup_peers %d + 1), "
			       "whose scale-up links the tensor-parallel all-reduce is modelled on",
			       (long long)tp, hw->scaleup_peers + 1, hw->name, hw->scaleup_peers);
	return 0;
}

int cost_model_new(const struct config *cfg, struct cost_model **out, struct bs_err *err)
{
	struct hw_spec hw;
	struct perf_params p;
	struct compile_params c;
	struct model_arch m;
	const char *hwname = config_str(cfg, "hardware"), *mname = config_str(cfg, "model");
	if (profile_load_hw(hwname ? hwname : "", &hw, &p, &c, err))
		return -1;
	if (profile_load_model(mname ? mname : "", &m, err))
		return -1;
	if (check_tp(cfg, &hw, &m, err))
		return -1;
	struct cost_model *cm = xcalloc(1, sizeof *cm);
	const char *prec = config_str(cfg, "model.precision");
	const char *kvd = config_str(cfg, "model.kv_dtype");
	bool fp8 = prec && !strcmp(prec, "fp8");
	bool kv_fp8 = kvd ? !strcmp(kvd, "fp8") : fp8;  /* auto: follows model.precision */
	eval_setup(&cm->e, &hw, &m, &p, (int)config_int(cfg, "hardware.tp"), fp8, kv_fp8,
		   (int)config_int(cfg, "server.block_size"));
	cm->t_pass = cm->e.p.v[PP_T_PASS];
	if (host_params_load(hw.chip, hwname, &cm->h, err)) {
		free(cm);
		return -1;
	}
	cm->c = c;
	/* RUNTIME_SCALE_PATCHING as vllm-gaudi sets it (HpuPlatform.set_compile_env_defaults,
	 * vllm_gaudi/platform.py): when unset, on in torch.compile mode and off in lazy mode
	 * (PT_HPU_LAZY_MODE=1), whose fp8 graphs compile with the factor.  Unset, the mode is
	 * the version's: vllm-gaudi (current) defaults to PT_HPU_LAZY_MODE=0, the vLLM fork of
	 * the docs version ran lazy. */
	const char *rsp = config_env(cfg, "RUNTIME_SCALE_PATCHING");
	const char *lazy_mode = config_env(cfg, "PT_HPU_LAZY_MODE");
	if (lazy_mode && strcmp(lazy_mode, "0") && strcmp(lazy_mode, "1")) {
		free(cm);
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "PT_HPU_LAZY_MODE",
			       "expected 0 (torch.compile) or 1 (lazy), got '%s'", lazy_mode);
	}
	/* The execution mode's (policies/mode.h), resolved by sim/resolve.c before the cost model
	 * is made; unresolved (a command without a simulation), as auto resolves it on Gaudi. */
	const struct exec_mode *em = exec_mode(config_str(cfg, "server.execution_mode"));
	bool lazy = em ? em->lazy
		       : exec_mode_auto(false, config_bool(cfg, "server.enforce_eager"), lazy_mode,
					!strcmp(config_str(cfg, "bucketing.version"), "docs"))->lazy;
	/* INC reads it as "true" or "1" (is_runtime_scale_patching); a value that is not a
	 * boolean is refused rather than read as off. */
	bool rsp_on = !lazy;
	char why[160];
	if (rsp && parse_bool(rsp, &rsp_on, why, sizeof why)) {
		free(cm);
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "RUNTIME_SCALE_PATCHING", "%s", why);
	}
	cm->compile_mult = fp8 && !rsp_on ? c.fp8_factor : 1;
	cm->kv_link_bw = config_is_set(cfg, "hardware.kv_link_gb_s")
				 ? config_double(cfg, "hardware.kv_link_gb_s") * 1e9
				 : hw.scaleout_bw;
	cm->max_num_seqs = (int32_t)config_int(cfg, "server.max_num_seqs");
	/* The layers of each pipeline stage, as vLLM splits them (models/stage.c). */
	char msg[160];
	const char *part = config_env(cfg, "VLLM_PP_LAYER_PARTITION");
	if (pp_split_init(&cm->pps, m.layers, (int)config_int(cfg, "cluster.pp"), part, msg,
			  sizeof msg)) {
		free(cm);
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0,
			       part ? "VLLM_PP_LAYER_PARTITION" : "cluster.pp", "%s", msg);
	}
	*out = cm;
	return 0;
}

void cost_model_free(struct cost_model *cm)
{
	if (!cm)
		return;
	for (int i = 0; i < NCACHE; i++) {
		free(cm->cache[i].keys);
		free(cm->cache[i].vals);
	}
	free(cm);
}

int64_t cost_prefill_ns(struct cost_model *cm, int32_t bs, int32_t query, int32_t ctx_blocks)
{
	struct shape_key k = {{nonneg(bs), nonneg(query), nonneg(ctx_blocks), 0}};
	const int64_t *hit = cache_get(&cm->cache[0], &k);
	if (hit)
		return *hit;
	int64_t v = to_ns(eval_prefill(&cm->e, k.v[0], k.v[1], k.v[2], NULL));
	cache_put(&cm->cache[0], &k, v);
	return v;
}

int64_t cost_decode_ns(struct cost_model *cm, int32_t bs, int32_t num_blocks)
{
	struct shape_key k = {{nonneg(bs), nonneg(num_blocks), 0, 0}};
	const int64_t *hit = cache_get(&cm->cache[1], &k);
	if (hit)
		return *hit;
	int64_t v = to_ns(eval_decode(&cm->e, k.v[0], k.v[1], NULL));
	cache_put(&cm->cache[1], &k, v);
	return v;
}

int64_t cost_decode_gather_ns(struct cost_model *cm, int32_t bs, int32_t num_blocks)
{
	struct shape_key k = {{nonneg(bs), nonneg(num_blocks), 0, 0}};
	const int64_t *hit = cache_get(&cm->cache[3], &k);
	if (hit)
		return *hit;
	int64_t v = to_ns(eval_decode_gather(&cm->e, k.v[0], k.v[1], cm->h.gather_kv, NULL));
	cache_put(&cm->cache[3], &k, v);
	return v;
}

int64_t cost_host_ns(const struct cost_model *cm, const struct host_work *w)
{
	if (w->num_decodes < 0 || w->num_prefills < 0)
		BUG("cost_host_ns: negative request count");
	return to_ns(cm->h.step_s + cm->h.req_s * ((double)w->num_decodes + w->num_prefills));
}

void cost_model_set_host_separate(struct cost_model *cm, bool on)
{
	cm->e.p.v[PP_T_PASS] = on ? 0 : cm->t_pass;
	for (int i = 0; i < NCACHE; i++)
		cache_clear(&cm->cache[i]);
}

/* vllm-gaudi HPUModelRunner._use_graphs (vllm_gaudi/v1/worker/hpu_model_runner.py). */
bool cost_prompt_uses_graphs(int32_t bs, int32_t query, int64_t num_blocks, int32_t block_size,
			     int64_t max_capture, bool enforce_eager)
{
	if (enforce_eager)
		return false;
	int64_t total = (int64_t)bs * query + num_blocks * block_size;
	return total <= max_capture;
}

int64_t cost_eager_extra_ns(const struct cost_model *cm)
{
	return to_ns(cm->e.m.layers * cm->h.eager_layer_s);
}

int64_t cost_unified_ns(struct cost_model *cm, int32_t query, int32_t shared_blocks,
			int32_t unique_blocks, bool causal)
{
	struct shape_key k = {{nonneg(query), nonneg(shared_blocks), nonneg(unique_blocks), causal}};
	const int64_t *hit = cache_get(&cm->cache[2], &k);
	if (hit)
		return *hit;
	/* Logits: one per decode token; a causal (prompt-carrying) batch is charged one per
	 * sequence, at most server.max_num_seqs. */
	double q = k.v[0];
	double logits = causal ? fmin(q, cm->max_num_seqs) : q;
	int64_t v = to_ns(eval_unified(&cm->e, q, k.v[1], k.v[2], causal, logits, NULL));
	cache_put(&cm->cache[2], &k, v);
	return v;
}

int64_t cost_forward_ns(struct cost_model *cm, int32_t tokens, int32_t ctx_blocks,
			int32_t dec_blocks, int32_t pre_tokens)
{
	struct shape_key k = {{nonneg(tokens), nonneg(ctx_blocks), nonneg(dec_blocks),
			       nonneg(pre_tokens)}};
	const int64_t *hit = cache_get(&cm->cache[4], &k);
	if (hit)
		return *hit;
	/* Logits: one per decode token and one per prefill (compute_logits at logits_indices),
	 * the decode tokens counted with the padding, at most server.max_num_seqs. */
	double pre = k.v[3], q = k.v[0];
	double logits = fmin(q - pre + (pre > 0), cm->max_num_seqs);
	int64_t v = to_ns(eval_forward(&cm->e, q, k.v[1], k.v[2], pre, logits, NULL));
	cache_put(&cm->cache[4], &k, v);
	return v;
}

int64_t cost_launch_ns(const struct cost_model *cm, int kind)
{
	switch (kind) {
	case 0:
		return 0; /* a FULL graph: one replay */
	case 1:
		return to_ns(cm->e.m.layers * cm->h.cuda_piecewise_layer_s);
	case 2:
		return to_ns(cm->e.m.layers * cm->h.cuda_eager_layer_s);
	case 3:
		return to_ns(cm->h.hpu_launch_s);
	default:
		BUG("cost_launch_ns: kind %d", kind);
	}
}

int64_t cost_capture_ns(const struct cost_model *cm, int32_t captures)
{
	return captures > 0 ? to_ns(captures * cm->h.cuda_capture_s) : 0;
}

int cost_hardware_kind(const char *name, bool *gpu, bool *calibrated, struct bs_err *err)
{
	struct hw_spec hw;
	struct perf_params p;
	struct compile_params c;
	if (profile_load_hw(name ? name : "", &hw, &p, &c, err))
		return -1;
	*gpu = hw.gpu;
	*calibrated = hw.calibrated;
	return 0;
}

/*
 * KV blocks as vLLM's GPU worker sizes them (Worker.determine_available_memory,
 * vllm/v1/worker/gpu_worker.py, and get_num_blocks, vllm/v1/core/kv_cache_utils.py):
 *   requested = total memory x gpu_memory_utilization;
 *   available = requested - non_kv_cache_memory (weights / pp + the profiled activation peak,
 *               COST_ACTIVATION_RESERVE) - cudagraph_memory_estimate (CAPTURES x the memory of
 *               one capture, models/data/host.json);
 *   blocks    = floor(available / block bytes)  (the page size of every layer: no dummy block).
 */
int64_t cost_num_kv_blocks_gpu(const struct cost_model *cm, int32_t block_size, double mem_util,
			       int32_t captures, int32_t pp)
{
	double avail = cm->e.hw.hbm_bytes * mem_util - cm->e.weight_bytes / pp -
		       COST_ACTIVATION_RESERVE - captures * cm->h.cuda_capture_bytes;
	double block_bytes = (double)block_size * cm->e.kv_bytes_token / pp;
	return avail <= 0 ? 0 : (int64_t)floor(avail / block_bytes);
}

bool cost_model_gpu(const struct cost_model *cm)
{
	return cm->e.hw.gpu;
}

int64_t cost_compile_ns(struct cost_model *cm, int phase, const int32_t v[4], bool runtime)
{
	double tokens;
	switch (phase) {
	case 0:
		tokens = (double)nonneg(v[0]) * nonneg(v[1]);
		break;
	case 1:
		tokens = nonneg(v[0]);
		break;
	case 2:
		tokens = nonneg(v[0]);
		break;
	default:
		BUG("cost_compile_ns: phase %d", phase);
	}
	double t = (cm->c.c0 + cm->c.c1 * tokens) * cm->compile_mult;
	t += runtime ? cm->c.runtime : cm->c.capture;
	return to_ns(t);
}

int64_t cost_kv_transfer_ns(struct cost_model *cm, int64_t tokens)
{
	if (tokens <= 0)
		return 1;
	/* Each card of the TP group sends its own KV heads over its own link. */
	double bytes = (double)tokens * cm->e.kv_bytes_token;
	return to_ns(cm->c.kv_latency + bytes / cm->kv_link_bw);
}

int64_t cost_stage_ns(const struct cost_model *cm, int phase, const int32_t v[4], int stage)
{
	int32_t k[4] = {nonneg(v[0]), nonneg(v[1]), nonneg(v[2]), nonneg(v[3])};
	return to_ns(eval_stage(&cm->e, &cm->pps, phase, k, stage, cm->max_num_seqs));
}

int64_t cost_pass_overhead_ns(const struct cost_model *cm)
{
	return (int64_t)llround(cm->e.p.v[PP_T_PASS] * 1e9);
}

int64_t cost_activation_ns(const struct cost_model *cm, int64_t tokens)
{
	if (tokens <= 0)
		return 0;
	return to_ns(eval_activation(&cm->e, (double)tokens, cm->kv_link_bw, cm->c.kv_latency));
}

int cost_stage_layers(const struct cost_model *cm, int stage)
{
	return stage >= 0 && stage < cm->pps.pp ? cm->pps.layers[stage] : 0;
}

double cost_kv_bytes_per_token(const struct cost_model *cm)
{
	return cm->e.kv_bytes_token;
}

int64_t cost_kv_swap_ns(const struct cost_model *cm, int32_t blocks, int32_t pp)
{
	if (blocks <= 0)
		return 0;
	double bytes = 2.0 * blocks * cm->e.block_size * cm->e.kv_bytes_token / (pp > 0 ? pp : 1);
	return to_ns(bytes / (cm->e.hw.hbm_bw * cm->e.p.v[PP_ETA_KV]));
}

double cost_weight_bytes(const struct cost_model *cm)
{
	return cm->e.weight_bytes;
}

/*
 * KV blocks that fit, as vllm-gaudi sizes the cache (HPUWorker.determine_available_memory,
 * vllm_gaudi/v1/worker/hpu_worker.py): after loading the weights and a profiling run,
 *   free      = HBM - weights / pp - COST_ACTIVATION_RESERVE (the profiled activation peak,
 *               taken as a fixed 2 GiB: the data gives no per-configuration value);
 *   available = free * gpu_memory_utilization;
 *   cache     = available * (1 - VLLM_GRAPH_RESERVED_MEM) - one dummy block;
 *   blocks    = floor(cache / block bytes).
 * Each of the pp stages holds 1/pp of the layers: of the weights and of every block's bytes, so
 * every stage finds the same count.
 */
int64_t cost_num_kv_blocks_pp(const struct cost_model *cm, int32_t block_size, double mem_util,
			      double graph_reserved, int32_t pp)
{
	double free_bytes = cm->e.hw.hbm_bytes - cm->e.weight_bytes / pp - COST_ACTIVATION_RESERVE;
	if (free_bytes <= 0)
		return 0;
	double block_bytes = (double)block_size * cm->e.kv_bytes_token / pp;
	double cache = free_bytes * mem_util * (1 - graph_reserved) - block_bytes;
	return cache <= 0 ? 0 : (int64_t)floor(cache / block_bytes);
}

int64_t cost_num_kv_blocks(const struct cost_model *cm, int32_t block_size, double mem_util,
			   double graph_reserved)
{
	return cost_num_kv_blocks_pp(cm, block_size, mem_util, graph_reserved, 1);
}

int32_t cost_model_max_context(const struct cost_model *cm)
{
	return cm->e.m.max_context;
}

const char *cost_model_hardware(const struct cost_model *cm)
{
	return cm->e.hw.name;
}

const char *cost_model_name(const struct cost_model *cm)
{
	return cm->e.m.name;
}

void cost_static_batch(const struct cost_model *cm, int64_t bs, int64_t in, int64_t out,
		       double *prefill_s, double *decode_step_s, double *total_s,
		       double *throughput)
{
	struct static_batch r;
	struct eval_ctx e = cm->e;
	e.p.v[PP_T_PASS] = cm->t_pass;
	eval_static_batch(&e, (double)bs, (double)in, (double)out, &r);
	*prefill_s = r.prefill_s;
	*decode_step_s = r.decode_mean_s;
	*total_s = r.total_s;
	*throughput = r.throughput;
}

void cost_list_print(FILE *out)
{
	struct bs_err err = {0};
	fprintf(out, "hardware:\n");
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	if (!mf)
		BUG("open_memstream failed");
	profile_list_names(mf, true, "\n");
	fclose(mf);
	for (char *s = buf, *e; s && *s; s = e ? e + 1 : NULL) {
		e = strchr(s, '\n');
		if (e)
			*e = 0;
		struct hw_spec hw;
		struct perf_params p;
		struct compile_params c;
		if (profile_load_hw(s, &hw, &p, &c, &err) == 0)
			fprintf(out, "  %-16s %-12s %7.1f TFLOPS bf16 %7.1f fp8 %6.1f GiB %5.2f TB/s  %s\n",
				hw.name, hw.calibrated ? "calibrated" : "uncalibrated", hw.peak_bf16 / 1e12,
				hw.peak_fp8 / 1e12, hw.hbm_bytes / 1073741824.0, hw.hbm_bw / 1e12, hw.desc);
		if (!e)
			break;
	}
	free(buf);
	fprintf(out, "models:\n");
	buf = NULL;
	mf = open_memstream(&buf, &len);
	if (!mf)
		BUG("open_memstream failed");
	profile_list_names(mf, false, "\n");
	fclose(mf);
	for (char *s = buf, *e; s && *s; s = e ? e + 1 : NULL) {
		e = strchr(s, '\n');
		if (e)
			*e = 0;
		struct model_arch m;
		if (profile_load_model(s, &m, &err) == 0) {
			struct eval_ctx ec;
			struct perf_params pp = {{1, 1, 1, 1, 1, 0, 0, 0}};
			eval_setup(&ec, &(struct hw_spec){.peak_bf16 = 1}, &m, &pp, 1, false, false, 128);
			fprintf(out, "  %-16s %4d layers %6d hidden %4d/%-3d heads/kv %3d experts (top %d) "
				"%7.2f GB bf16  context %d\n",
				m.name, m.layers, m.hidden, m.heads, m.kv_heads, m.experts,
				m.experts_per_token, ec.weight_bytes / 1e9, m.max_context);
		}
		if (!e)
			break;
	}
	free(buf);
}
