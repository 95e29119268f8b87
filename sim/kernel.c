/*
 * kernel: see kernel.h for the model, the lifecycle and the invariants.
 */
#include "sim/kernel.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/cost.h"

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

void sim_costs_from_model(struct sim_costs *c, struct cost_model *cm)
{
	c->ctx = cm;
	c->prefill = model_prefill;
	c->decode = model_decode;
	c->unified = model_unified;
	c->compile = model_compile;
	c->transfer = model_transfer;
}

/* ---- parameters -------------------------------------------------------------------------- */

/* KV blocks one request of max_model_len tokens needs. */
static int64_t need_blocks(const struct sim_params *p)
{
	return (p->max_model_len + p->block_size - 1) / p->block_size;
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
	const char *o = config_str(cfg, "scheduler.order");
	static const char *const names[] = {"fcfs", "sjf", "ljf", "sjf_total", "ljf_total",
					    "priority", "slo_output"};
	p->order = WO_FCFS;
	for (int i = 0; i < 7; i++)
		if (!strcmp(o, names[i]))
			p->order = (enum wait_order)i;
	const char *batching = config_str(cfg, "scheduler.batching");
	p->memory_safe = !strcmp(batching, "memory_safe");
	p->unified = !strcmp(batching, "unified") || bp->strategy == BUCKET_UNIFIED;
	if (p->unified && bp->strategy != BUCKET_UNIFIED && bp->strategy != BUCKET_NONE)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "scheduler.batching",
			       "unified batching runs unified buckets: set bucketing.strategy=unified "
			       "(or none)");
	p->static_batch = !strcmp(batching, "static");
	p->static_batch_size = (int32_t)config_int(cfg, "scheduler.static_batch_size");
	p->static_max_waste = config_double(cfg, "scheduler.static_max_waste");
	p->task_aware = config_bool(cfg, "scheduler.task_aware");
	p->grouped = strcmp(config_str(cfg, "scheduler.grouping"), "none") ||
		     !strcmp(o, "earliest_bucket") || p->memory_safe;
	p->disaggregated = !strcmp(config_str(cfg, "cluster.mode"), "disaggregated");
	p->instances = (int32_t)config_int(cfg, "cluster.instances");
	p->pp = (int32_t)config_int(cfg, "cluster.pp");
	const char *loop = config_str(cfg, "cluster.engine_loop");
	p->loop = !strcmp(loop, "atomic") ? LOOP_ATOMIC : !strcmp(loop, "virtual") ? LOOP_VIRTUAL
										  : LOOP_ASYNC;
	p->prefill_instances = (int32_t)config_int(cfg, "cluster.prefill_instances");
	p->decode_instances = (int32_t)config_int(cfg, "cluster.decode_instances");
	if (p->pp > 1 && p->disaggregated)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "cluster.pp",
			       "pipeline parallelism is modelled for colocated instances only");
	if (p->pp > 1 && p->loop == LOOP_VIRTUAL && p->grouped)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "cluster.engine_loop",
			       "virtual engines keep one plain queue each: BucketServe grouping "
			       "needs the async or atomic loop");
	if (p->pp > 1 && p->loop == LOOP_VIRTUAL && p->num_kv_blocks / p->pp < need_blocks(p))
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.num_kv_blocks",
			       "%lld blocks split over %d virtual engines cannot hold one request of "
			       "max_model_len %d", (long long)p->num_kv_blocks, p->pp,
			       p->max_model_len);
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

/* ---- indexed heaps ----------------------------------------------------------------------- */

static void ih_init(struct iheap *h, int64_t *key, int32_t *pos, size_t cap)
{
	h->cap = cap ? cap : 16;
	h->ids = xmalloc(h->cap * sizeof *h->ids);
	h->n = 0;
	h->key = key;
	h->pos = pos;
}

static void ih_release(struct iheap *h)
{
	free(h->ids);
	h->ids = NULL;
}

static inline bool ih_less(const struct iheap *h, int32_t a, int32_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static inline void ih_set(struct iheap *h, size_t i, int32_t id)
{
	h->ids[i] = id;
	h->pos[id] = (int32_t)i;
}

static void ih_up(struct iheap *h, size_t i)
{
	int32_t id = h->ids[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ih_less(h, id, h->ids[p]))
			break;
		ih_set(h, i, h->ids[p]);
		i = p;
	}
	ih_set(h, i, id);
}

static void ih_down(struct iheap *h, size_t i)
{
	int32_t id = h->ids[i];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		int32_t best = id;
		if (l < h->n && ih_less(h, h->ids[l], best)) {
			m = l;
			best = h->ids[l];
		}
		if (l + 1 < h->n && ih_less(h, h->ids[l + 1], best)) {
			m = l + 1;
			best = h->ids[l + 1];
		}
		if (m == i)
			break;
		ih_set(h, i, best);
		i = m;
	}
	ih_set(h, i, id);
}

static void ih_push(struct iheap *h, int32_t id, int64_t key)
{
	if (h->n == h->cap)
		h->ids = xrealloc(h->ids, (h->cap *= 2) * sizeof *h->ids);
	h->key[id] = key;
	h->ids[h->n] = id;
	h->pos[id] = (int32_t)h->n;
	h->n++;
	ih_up(h, h->n - 1);
}

static void ih_remove(struct iheap *h, int32_t id)
{
	size_t i = (size_t)h->pos[id];
	h->pos[id] = -1;
	h->n--;
	if (i == h->n)
		return;
	int32_t last = h->ids[h->n];
	ih_set(h, i, last);
	ih_down(h, i);
	ih_up(h, (size_t)h->pos[last]);
}

static void ih_update(struct iheap *h, int32_t id, int64_t key)
{
	h->key[id] = key;
	ih_down(h, (size_t)h->pos[id]);
	ih_up(h, (size_t)h->pos[id]);
}

static inline int32_t ih_top(const struct iheap *h)
{
	return h->n ? h->ids[0] : -1;
}

/* ---- waiting queues ---------------------------------------------------------------------- */

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t wait_key(const struct sim *s, const struct waitq *wq, int32_t id)
{
	const struct req_spec *q = &s->spec[id];
	switch (wq->order) {
	case WO_SJF:
		return q->prompt_tokens;
	case WO_LJF:
		return -(int64_t)q->prompt_tokens;
	case WO_SJF_TOTAL:
		return (int64_t)q->prompt_tokens + q->output_tokens;
	case WO_LJF_TOTAL:
		return -((int64_t)q->prompt_tokens + q->output_tokens);
	case WO_PRIORITY:
		return ((int64_t)q->priority << 40) + id;
	case WO_SLO_OUTPUT:
		return ((int64_t)q->priority << 40) + q->output_tokens;
	case WO_FCFS:
		break;
	}
	return id; /* ids are in arrival order */
}

static size_t wq_len(const struct waitq *q)
{
	return q->bsm ? bsm_total(q->bsm) : q->h.n;
}

/* The queue a new (or preempted) request waits in. */
static struct waitq *queue_of(struct sim *s, int32_t id)
{
	return s->p.task_aware && s->spec[id].task == TASK_OFFLINE ? &s->wq[2] : &s->wq[0];
}

static bool is_new_queue(const struct sim *s, const struct waitq *q)
{
	return q != &s->wq[1];
}

/* The KV budget in tokens for Algorithm 1's N_max (Eq. 5/6): the safe fraction of the free
 * KV memory of the instances that draw from the grouped queue. */
static uint64_t nmax_budget(const struct sim *s)
{
	int64_t free_blocks = 0;
	for (int k = 0; k < s->n_pools; k++)
		for (int i = 0; i < s->n_inst; i++)
			if (s->inst[i].kv == &s->pools[k] && s->inst[i].q == &s->wq[0]) {
				free_blocks += s->pools[k].free;
				break;
			}
	return (uint64_t)(s->bsc->mem_safe_fraction * (double)(free_blocks * s->p.block_size));
}

static void adjust(struct sim *s, struct waitq *q)
{
	struct bsm_adjust_result res = {0, false};
	double t0 = s->time_bucketing ? wall_now() : 0;
	bucketserve_adjust(&q->bc, q->bsm, nmax_budget(s), &res);
	if (s->time_bucketing)
		s->bucketing_wall_s += wall_now() - t0;
	if (res.splits || res.merged) {
		s->splits += res.splits;
		s->merges += res.merged;
		if (s->hooks.boundaries) {
			uint32_t b[1024];
			size_t nb = bsm_boundaries(q->bsm, b, 1024);
			s->hooks.boundaries(s->hooks.ctx, s, q == &s->wq[2], b, nb < 1024 ? nb : 1024,
					    res.splits, res.merged);
		}
	}
}

/* Queues ID; FRONT puts a preempted request ahead of the others (vLLM prepends it). */
static void wq_push(struct sim *s, struct waitq *q, int32_t id, bool front)
{
	if (is_new_queue(s, q))
		s->wait_prompt_tokens += s->spec[id].prompt_tokens;
	if (!q->bsm) {
		ih_push(&q->h, id, front ? q->front_key-- : wait_key(s, q, id));
		return;
	}
	const struct req_spec *r = &s->spec[id];
	struct bsm_req br = {r->arrival_ns, (uint32_t)r->prompt_tokens,
			     (uint32_t)(r->prompt_tokens + r->output_tokens), r->priority};
	struct bs_err err = {0};
	double t0 = s->time_bucketing ? wall_now() : 0;
	if (bsm_insert(q->bsm, (uint32_t)id, &br, &err))
		BUG("bucket insert: %s", err.msg); /* lengths are checked at set-up */
	if (s->time_bucketing)
		s->bucketing_wall_s += wall_now() - t0;
	if (q->bc.adjust == BUCKETSERVE_ADJUST_ARRIVAL && is_new_queue(s, q))
		adjust(s, q);
}

/* The bucket admission draws from next, or -1 (plain heap: 0). */
static int64_t wq_pick(struct sim *s, struct waitq *q)
{
	if (!q->bsm)
		return q->h.n ? 0 : -1;
	double t0 = s->time_bucketing ? wall_now() : 0;
	int64_t k = bucketserve_pick(&q->bc, q->bsm);
	if (s->time_bucketing)
		s->bucketing_wall_s += wall_now() - t0;
	return k;
}

static int32_t wq_peek(struct sim *s, struct waitq *q, int64_t k)
{
	if (k < 0)
		return -1;
	if (!q->bsm)
		return ih_top(&q->h);
	return (int32_t)bsm_peek(q->bsm, (size_t)k);
}

static void wq_remove(struct sim *s, struct waitq *q, int32_t id)
{
	if (is_new_queue(s, q))
		s->wait_prompt_tokens -= s->spec[id].prompt_tokens;
	if (!q->bsm) {
		ih_remove(&q->h, id);
		return;
	}
	double t0 = s->time_bucketing ? wall_now() : 0;
	bsm_remove(q->bsm, (uint32_t)id);
	if (s->time_bucketing)
		s->bucketing_wall_s += wall_now() - t0;
}

/* ---- set-up ------------------------------------------------------------------------------ */

static void inst_init(struct sim *s, struct inst *in, int idx, enum inst_role role,
		      struct waitq *q, struct kvpool *kv, struct igroup *grp)
{
	memset(in, 0, sizeof *in);
	in->idx = idx;
	in->role = role;
	in->q = q;
	in->kv = kv;
	in->grp = grp;
	size_t mns = (size_t)s->p.max_num_seqs;
	in->run = xmalloc(mns * sizeof *in->run);
	in->pre = xmalloc(mns * sizeof *in->pre);
	in->items = xmalloc(mns * sizeof *in->items);
	ih_init(&in->done_at, s->dkey, s->dpos, mns);
	ih_init(&in->cross_at, s->xkey, s->xpos, mns);
}

static void inst_release(struct inst *in)
{
	free(in->run);
	free(in->pre);
	free(in->items);
	ih_release(&in->done_at);
	ih_release(&in->cross_at);
}

static void pool_init(struct sim *s, struct kvpool *kv, int64_t blocks)
{
	memset(kv, 0, sizeof *kv);
	kv->total = kv->free = blocks;
	kv->pc = xcalloc((size_t)(s->ngroups ? s->ngroups : 1), sizeof *kv->pc);
	kv->lru_head = kv->lru_tail = -1;
}

/* Builds the instances: lanes, their groups (one per serving instance), KV pools, queues. */
static void build_instances(struct sim *s)
{
	const struct sim_params *p = &s->p;
	int lanes = p->disaggregated || p->pp < 1 ? 1 : p->pp;
	int ninst = p->disaggregated ? p->prefill_instances + p->decode_instances
				     : (p->instances > 0 ? p->instances : 1);
	bool shared_pool = lanes > 1 && p->loop != LOOP_VIRTUAL;
	s->n_groups = ninst;
	s->groups = xcalloc((size_t)ninst, sizeof *s->groups);
	s->n_inst = ninst * lanes;
	s->inst = xcalloc((size_t)s->n_inst, sizeof *s->inst);
	s->n_pools = shared_pool ? ninst : s->n_inst;
	s->pools = xcalloc((size_t)s->n_pools, sizeof *s->pools);
	/* Virtual engines split the instance's KV cache between them (vLLM V0). */
	int64_t blocks = p->num_kv_blocks / (shared_pool ? 1 : lanes);
	for (int k = 0; k < s->n_pools; k++)
		pool_init(s, &s->pools[k], blocks);
	if (lanes > 1 && p->loop == LOOP_VIRTUAL) {
		s->lane_q = xcalloc((size_t)s->n_inst, sizeof *s->lane_q);
		for (int i = 0; i < s->n_inst; i++) {
			ih_init(&s->lane_q[i].h, s->wkey, s->wpos, 64);
			s->lane_q[i].front_key = INT64_MIN / 2;
			s->lane_q[i].order = p->order;
		}
	}
	for (int g = 0; g < ninst; g++) {
		struct igroup *grp = &s->groups[g];
		grp->first = g * lanes;
		grp->lanes = lanes;
		grp->stages = lanes;
		grp->stage_free = xcalloc((size_t)lanes, sizeof *grp->stage_free);
		for (int l = 0; l < lanes; l++) {
			int i = g * lanes + l;
			enum inst_role role = !p->disaggregated ? ROLE_MIXED
					      : g < p->prefill_instances ? ROLE_PREFILL : ROLE_DECODE;
			struct waitq *q = role == ROLE_DECODE ? &s->wq[1]
					  : s->lane_q ? &s->lane_q[i] : &s->wq[0];
			inst_init(s, &s->inst[i], i, role, q, &s->pools[shared_pool ? g : i], grp);
		}
	}
}

void sim_init(struct sim *s, const struct sim_params *p, const struct req_spec *req, size_t n,
	      struct bucketer *bucketer, const struct bucketserve_cfg *bsc,
	      const struct sim_costs *costs, const struct sim_hooks *hooks)
{
	memset(s, 0, sizeof *s);
	s->p = *p;
	s->spec = req;
	s->n = n;
	size_t nn = n ? n : 1;
	s->r = xcalloc(nn, sizeof *s->r);
	for (size_t i = 0; i < n; i++) {
		s->r[i].t_sched = s->r[i].t_first = s->r[i].t_last_tok = -1;
		s->r[i].target = req[i].prompt_tokens;
		s->r[i].inst = -1;
		if (req[i].prefix_group >= s->ngroups && req[i].prefix_tokens > 0)
			s->ngroups = req[i].prefix_group + 1;
	}
	s->bucketer = bucketer;
	s->bsc = bsc;
	s->costs = *costs;
	if (hooks)
		s->hooks = *hooks;
	evq_init(&s->q);
	s->wkey = xmalloc(nn * sizeof *s->wkey);
	s->dkey = xmalloc(nn * sizeof *s->dkey);
	s->xkey = xmalloc(nn * sizeof *s->xkey);
	s->wpos = xmalloc(nn * sizeof *s->wpos);
	s->dpos = xmalloc(nn * sizeof *s->dpos);
	s->xpos = xmalloc(nn * sizeof *s->xpos);
	for (int k = 0; k < 3; k++) {
		ih_init(&s->wq[k].h, s->wkey, s->wpos, 1024);
		s->wq[k].front_key = INT64_MIN / 2;
		s->wq[k].order = p->order;
	}
	/* Task-aware: online requests are served first, by earliest arrival (the earliest bucket
	 * when grouped); offline ones follow scheduler.order. */
	if (p->task_aware)
		s->wq[0].order = WO_FCFS;
	if (p->grouped) {
		if (!bsc)
			BUG("grouped scheduling without its configuration");
		for (int k = 0; k < 3; k += 2) {
			if (k == 2 && !p->task_aware)
				break;
			struct waitq *q = &s->wq[k];
			q->bc = *bsc;
			if (k == 0 && p->task_aware) {
				q->bc.bsm.order = BSM_FCFS;
				q->bc.pick = BUCKETSERVE_PICK_EARLIEST;
			}
			q->bsm = xmalloc(sizeof *q->bsm);
			struct bs_err err = {0};
			if (bsm_init(q->bsm, &q->bc.bsm, &err))
				BUG("bucket manager: %s", err.msg); /* validated at set-up */
			bsm_reserve(q->bsm, n);
		}
	}
	build_instances(s);
	s->batch_lens = xmalloc((size_t)p->max_num_seqs * sizeof *s->batch_lens);
	waste_acc_init(&s->batch_waste);
	shapemap_init(&s->lookup);
	shapemap_init(&s->graphs_by_shape);
	metrics_init(&s->m, n, p->slo_ttft_ms, p->slo_tpot_ms);
	s->m.kv_blocks_total = 0;
	for (int k = 0; k < s->n_pools; k++)
		s->m.kv_blocks_total += s->pools[k].total;
	if (n)
		evq_push(&s->q, req[0].arrival_ns, EVC_ARRIVAL, EV_ARRIVAL, 0);
	if (p->monitor_ns > 0 && n)
		evq_push(&s->q, 0, EVC_MONITOR, EV_MONITOR, 0);
	if (p->grouped && bsc->adjust == BUCKETSERVE_ADJUST_PERIOD && n)
		evq_push(&s->q, bsc->adjust_period_ns, EVC_MONITOR, EV_ADJUST, 0);
}

void sim_release(struct sim *s)
{
	evq_release(&s->q);
	for (int k = 0; k < 3; k++) {
		ih_release(&s->wq[k].h);
		if (s->wq[k].bsm) {
			bsm_release(s->wq[k].bsm);
			free(s->wq[k].bsm);
		}
	}
	for (int i = 0; i < s->n_inst; i++)
		inst_release(&s->inst[i]);
	free(s->inst);
	for (int k = 0; k < s->n_pools; k++)
		free(s->pools[k].pc);
	free(s->pools);
	for (int g = 0; g < s->n_groups; g++) {
		free(s->groups[g].stage_free);
		free(s->groups[g].compiled);
	}
	free(s->groups);
	if (s->lane_q) {
		for (int i = 0; i < s->n_inst; i++)
			ih_release(&s->lane_q[i].h);
		free(s->lane_q);
	}
	free(s->r);
	free(s->wkey);
	free(s->dkey);
	free(s->xkey);
	free(s->wpos);
	free(s->dpos);
	free(s->xpos);
	free(s->batch_lens);
	shapemap_release(&s->lookup);
	shapemap_release(&s->graphs_by_shape);
	free(s->graphs);
	metrics_release(&s->m);
	memset(s, 0, sizeof *s);
}

/* ---- graphs: padded shapes, their cost and their compile state ---------------------------- */

static int64_t shape_cost(struct sim *s, int phase, const int32_t v[4])
{
	if (phase == PHASE_PROMPT)
		return s->costs.prefill(s->costs.ctx, v[0], v[1], v[2]);
	if (phase == PHASE_DECODE)
		return s->costs.decode(s->costs.ctx, v[0], v[2]);
	return s->costs.unified(s->costs.ctx, v[0], v[1], v[2], v[3] != 0);
}

static int32_t graph_get(struct sim *s, int phase, const int32_t v[4])
{
	struct shape_key k = {phase, {v[0], v[1], v[2], v[3]}};
	int32_t gi = shapemap_get(&s->graphs_by_shape, &k);
	if (gi >= 0)
		return gi;
	if (s->n_graphs == s->cap_graphs) {
		s->cap_graphs = s->cap_graphs ? 2 * s->cap_graphs : 64;
		s->graphs = xrealloc(s->graphs, s->cap_graphs * sizeof *s->graphs);
	}
	gi = (int32_t)s->n_graphs++;
	struct graph *g = &s->graphs[gi];
	memset(g, 0, sizeof *g);
	g->phase = phase;
	memcpy(g->v, v, sizeof g->v);
	g->cost_ns = shape_cost(s, phase, v);
	if (g->cost_ns < 1)
		BUG("cost of a pass must be positive");
	shapemap_put(&s->graphs_by_shape, &k, gi);
	return gi;
}

/* Compile state of graph GI on IN's serving instance (grown on demand). */
static uint8_t *compiled_flag(struct inst *in, int32_t gi)
{
	struct igroup *g = in->grp;
	if ((size_t)gi >= g->compiled_cap) {
		size_t cap = g->compiled_cap ? g->compiled_cap : 64;
		while (cap <= (size_t)gi)
			cap *= 2;
		g->compiled = xrealloc(g->compiled, cap);
		memset(g->compiled + g->compiled_cap, 0, cap - g->compiled_cap);
		g->compiled_cap = cap;
	}
	return &g->compiled[gi];
}

static void warm_phase(struct sim *s, struct inst *in, enum phase ph)
{
	struct bshape *w;
	size_t n = bucketer_warmup(s->bucketer, ph, &w);
	for (size_t i = 0; i < n; i++) {
		int32_t gi = graph_get(s, ph, w[i].v);
		uint8_t *c = compiled_flag(in, gi);
		if (*c)
			continue;
		*c = 1;
		struct graph *g = &s->graphs[gi];
		g->warm = true;
		g->compile_ns = s->costs.compile(s->costs.ctx, ph, g->v, false);
		s->m.warmup_ns += g->compile_ns;
		s->m.compiles_warmup++;
	}
	free(w);
}

void sim_warmup(struct sim *s)
{
	if (!s->bucketer || s->p.skip_warmup)
		return;
	for (int g = 0; g < s->n_groups; g++) {
		struct inst *in = &s->inst[s->groups[g].first];
		if (s->p.unified) {
			warm_phase(s, in, PHASE_UNIFIED);
			continue;
		}
		if (in->role != ROLE_DECODE)
			warm_phase(s, in, PHASE_PROMPT);
		if (in->role != ROLE_PREFILL)
			warm_phase(s, in, PHASE_DECODE);
	}
}

/* Pads a real shape to its bucket.  Returns the graph; *compile_ns is the runtime compile
 * charged now on IN (0 when the graph is warm there). */
static int32_t pad_shape(struct sim *s, struct inst *in, int phase, const int32_t real[4],
			 int64_t *compile_ns)
{
	struct shape_key k = {phase, {real[0], real[1], real[2], real[3]}};
	int32_t gi = shapemap_get(&s->lookup, &k);
	if (gi < 0) {
		struct bshape bin = {{real[0], real[1], real[2], real[3]}}, out = bin;
		bool created = false;
		if (s->bucketer)
			created = bucketer_lookup(s->bucketer, (enum phase)phase, &bin, &out);
		if (created) {
			/* The bucket list changed: cached look-ups may no longer be the server's. */
			shapemap_clear(&s->lookup);
			s->m.fallback_buckets++;
		}
		gi = graph_get(s, phase, out.v);
		if (created)
			s->graphs[gi].fallback = true;
		shapemap_put(&s->lookup, &k, gi);
	}
	struct graph *g = &s->graphs[gi];
	uint8_t *c = compiled_flag(in, gi);
	*compile_ns = 0;
	if (!*c) {
		*c = 1;
		g->runtime = true;
		g->compile_ns = s->costs.compile(s->costs.ctx, phase, g->v, true);
		*compile_ns = g->compile_ns;
		s->m.compiles_runtime++;
		s->m.runtime_compile_ns += g->compile_ns;
	}
	return gi;
}

/* ---- KV blocks, running sets ------------------------------------------------------------- */

static inline int32_t blocks_for(const struct sim *s, int64_t tokens)
{
	return (int32_t)((tokens + s->p.block_size - 1) / s->p.block_size);
}

/* ---- automatic prefix caching ------------------------------------------------------------
 *
 * Requests of one prefix group share the KV blocks of their common prefix (whole blocks only,
 * and never the whole prompt: at least its last token is computed).  The first request to
 * compute the prefix donates those blocks to the group's cache; later requests admitted while
 * the prefix is cached reference them and start their prefill after it.  When the last
 * reference goes, the blocks return to the free pool but keep their content (cached_free)
 * until an allocation needs them: then the least recently used unreferenced prefixes are
 * evicted first, as vLLM's free-block queue does. */

static void lru_unlink(struct inst *in, int32_t g)
{
	struct pcache *c = &in->kv->pc[g];
	if (c->prev >= 0)
		in->kv->pc[c->prev].next = c->next;
	else
		in->kv->lru_head = c->next;
	if (c->next >= 0)
		in->kv->pc[c->next].prev = c->prev;
	else
		in->kv->lru_tail = c->prev;
	c->prev = c->next = -1;
}

static void lru_append(struct inst *in, int32_t g)
{
	struct pcache *c = &in->kv->pc[g];
	c->prev = in->kv->lru_tail;
	c->next = -1;
	if (in->kv->lru_tail >= 0)
		in->kv->pc[in->kv->lru_tail].next = g;
	else
		in->kv->lru_head = g;
	in->kv->lru_tail = g;
}

/* Changes the blocks in use of KV, integrating blocks x time for kv_utilization_mean. */
static void pool_used_add(struct sim *s, struct kvpool *kv, int64_t delta)
{
	s->m.kv_block_ns += (double)kv->used * (double)(s->now - kv->t_used);
	kv->t_used = s->now;
	kv->used += delta;
	kv->free -= delta;
	s->kv_used_all += delta;
	if (s->kv_used_all > s->m.kv_blocks_peak)
		s->m.kv_blocks_peak = s->kv_used_all;
}

/* Evicts unreferenced cached prefixes until NB blocks can be taken without touching one. */
static void pc_evict_for(struct inst *in, int64_t nb)
{
	while (in->kv->free - nb < in->kv->cached_free && in->kv->lru_head >= 0) {
		int32_t g = in->kv->lru_head;
		lru_unlink(in, g);
		in->kv->cached_free -= in->kv->pc[g].blocks;
		in->kv->pc[g].blocks = 0;
	}
}

/* Whole blocks of request ID's prompt that its prefix group can share. */
static int32_t prefix_blocks(const struct sim *s, int32_t id)
{
	const struct req_spec *q = &s->spec[id];
	if (!s->p.prefix_caching || q->prefix_group < 0 || q->prefix_tokens <= 0)
		return 0;
	int32_t p = q->prefix_tokens < q->prompt_tokens ? q->prefix_tokens : q->prompt_tokens - 1;
	return p / s->p.block_size;
}

/* References group G's cached blocks for request R (its first SHARE blocks). */
static void pc_ref(struct sim *s, struct inst *in, struct req *r, int32_t g, int32_t share)
{
	struct pcache *c = &in->kv->pc[g];
	if (c->ref++ == 0) {
		/* Unreferenced: its blocks come back from the free pool. */
		lru_unlink(in, g);
		in->kv->cached_free -= c->blocks;
		pool_used_add(s, in->kv, c->blocks);
	}
	r->shared = share;
}

static void pc_unref(struct sim *s, struct inst *in, struct req *r, int32_t id)
{
	if (!r->shared)
		return;
	int32_t g = s->spec[id].prefix_group;
	struct pcache *c = &in->kv->pc[g];
	r->shared = 0;
	if (--c->ref == 0) {
		pool_used_add(s, in->kv, -c->blocks);
		in->kv->cached_free += c->blocks;
		lru_append(in, g);
	}
}

static void kv_take(struct sim *s, struct inst *in, struct req *r, int32_t nb)
{
	assert(in->kv->free >= nb);
	pc_evict_for(in, nb);
	pool_used_add(s, in->kv, nb);
	r->blocks += nb;
}

/* Frees the blocks request ID owns and drops its reference to its group's prefix. */
static void kv_release(struct sim *s, struct inst *in, struct req *r, int32_t id)
{
	pool_used_add(s, in->kv, -r->blocks);
	r->blocks = 0;
	pc_unref(s, in, r, id);
}

/* After a prefill chunk: a request that has computed its group's prefix gives those blocks to
 * the group's cache when the group has none cached (content-addressed blocks in vLLM). */
static void pc_donate(struct sim *s, struct inst *in, struct req *r, int32_t id)
{
	int32_t pb = prefix_blocks(s, id);
	if (!pb || r->shared || r->computed < pb * s->p.block_size)
		return;
	int32_t g = s->spec[id].prefix_group;
	struct pcache *c = &in->kv->pc[g];
	if (c->ref > 0)
		return; /* another request's copy is in use: keep its own */
	if (c->blocks) { /* an unreferenced copy: replaced by this one */
		lru_unlink(in, g);
		in->kv->cached_free -= c->blocks;
	}
	c->blocks = pb;
	c->ref = 1;
	r->blocks -= pb;
	r->shared = pb;
}

static void run_remove(struct inst *in, int32_t id)
{
	for (size_t i = 0; i < in->n_run; i++)
		if (in->run[i] == id) {
			in->run[i] = in->run[--in->n_run];
			in->grp->running--;
			return;
		}
	BUG("request %d not running", id);
}

static void pre_remove(struct inst *in, int32_t id)
{
	for (size_t i = 0; i < in->n_pre; i++)
		if (in->pre[i] == id) {
			memmove(&in->pre[i], &in->pre[i + 1], (in->n_pre - i - 1) * sizeof *in->pre);
			in->n_pre--;
			return;
		}
	BUG("request %d not in prefill", id);
}

static void admit(struct sim *s, struct inst *in, int32_t id, enum req_state st)
{
	struct req *r = &s->r[id];
	r->state = st;
	r->admit = s->next_admit++;
	r->inst = (int16_t)in->idx;
	in->run[in->n_run++] = id;
	in->grp->running++;
	if ((int64_t)in->grp->running > s->m.running_peak)
		s->m.running_peak = (int64_t)in->grp->running;
}

/* Whether IN may run one more request: max_num_seqs bounds an instance, over its lanes when
 * they share one scheduler (async and atomic loops) and per lane for virtual engines. */
static bool has_slot(const struct sim *s, const struct inst *in)
{
	if (in->grp->lanes > 1 && s->p.loop != LOOP_VIRTUAL)
		return in->grp->running < s->p.max_num_seqs;
	return in->n_run < (size_t)s->p.max_num_seqs;
}

static void dec_join(struct sim *s, struct inst *in, int32_t id)
{
	struct req *r = &s->r[id];
	const struct req_spec *q = &s->spec[id];
	r->state = RS_DECODE;
	r->join = in->G;
	r->g0 = r->generated;
	/* At step G the request writes KV slot P + g(G) - 1, with g(G) = g0 + G - join.
	 * Completion: after the step that brings generated to output_tokens. */
	ih_push(&in->done_at, id, r->join + (q->output_tokens - r->g0) - 1);
	/* Next block: the step writing the first slot past the blocks held. */
	int64_t slot = (int64_t)(r->shared + r->blocks) * s->p.block_size;
	if (slot < (int64_t)q->prompt_tokens + r->generated - 1)
		BUG("request %d holds too few blocks", id);
	ih_push(&in->cross_at, id, slot - q->prompt_tokens + 1 - r->g0 + r->join);
	in->n_dec++;
	in->dec_blocks += r->shared + r->blocks;
}

static void dec_leave(struct inst *in, struct req *r, int32_t id)
{
	r->generated = r->g0 + (int32_t)(in->G - r->join);
	ih_remove(&in->done_at, id);
	ih_remove(&in->cross_at, id);
	in->n_dec--;
	in->dec_blocks -= r->shared + r->blocks;
}

static void kick(struct sim *s, struct inst *in)
{
	if (!in->schedule_pending && !in->busy) {
		in->schedule_pending = true;
		evq_push(&s->q, s->now, EVC_SCHEDULE, EV_SCHEDULE, in->idx);
	}
}

/* Kicks every idle instance that admits from Q, the least loaded first (fewest running
 * requests, then lowest index), so that simultaneous work spreads over the instances. */
static bool group_busy(const struct sim *s, const struct igroup *g)
{
	for (int l = 0; l < g->lanes; l++)
		if (s->inst[g->first + l].busy)
			return true;
	return false;
}

static void kick_queue(struct sim *s, const struct waitq *q)
{
	if (s->n_inst == 1) {
		if (s->inst[0].q == q)
			kick(s, &s->inst[0]);
		return;
	}
	for (;;) {
		struct inst *best = NULL;
		for (int i = 0; i < s->n_inst; i++) {
			struct inst *in = &s->inst[i];
			if (in->q != q || in->busy || in->schedule_pending)
				continue;
			/* The atomic loop schedules only when its oldest microbatch returns (or
			 * while the whole pipeline is idle): new work waits for that. */
			if (s->p.loop == LOOP_ATOMIC && in->grp->lanes > 1 && group_busy(s, in->grp))
				continue;
			if (!best || in->n_run < best->n_run)
				best = in;
		}
		if (!best)
			return;
		kick(s, best);
	}
}

static void preempt(struct sim *s, struct inst *in, int32_t id)
{
	struct req *r = &s->r[id];
	if (r->state == RS_DECODE) {
		dec_leave(in, r, id);
		r->t_last_tok = in->last_end;
	} else {
		pre_remove(in, id);
	}
	run_remove(in, id);
	kv_release(s, in, r, id);
	in->kv->reserved -= r->reserved;
	r->reserved = 0;
	r->computed = 0;
	r->target = s->spec[id].prompt_tokens + r->generated;
	r->state = RS_WAITING;
	r->inst = -1;
	r->preemptions++;
	s->m.preemptions++;
	/* Back to the front of the queue that recomputes it (the prefill instances' queue when
	 * disaggregated: the KV is lost; a virtual engine's own queue). */
	struct waitq *back = s->lane_q ? in->q : queue_of(s, id);
	wq_push(s, back, id, true);
	if (in->q != back)
		kick_queue(s, back);
}

/* The most recently admitted running request: vLLM preempts from the end of its running
 * list. */
static int32_t victim(const struct sim *s, const struct inst *in)
{
	int32_t best = -1;
	const struct igroup *g = in->grp;
	for (int l = 0; l < g->lanes; l++) {
		const struct inst *o = &s->inst[g->first + l];
		/* Lanes sharing the pool, but not a microbatch in flight. */
		if (o->kv != in->kv || (o != in && o->busy))
			continue;
		for (size_t i = 0; i < o->n_run; i++)
			if (best < 0 || s->r[o->run[i]].admit > s->r[best].admit)
				best = o->run[i];
	}
	return best;
}

/* Frees blocks by preemption until NB are free or ID itself was preempted.  Returns true when
 * ID still runs. */
static bool make_room(struct sim *s, struct inst *in, int32_t id, int32_t nb, bool *preempted)
{
	while (in->kv->free < nb) {
		int32_t v = victim(s, in);
		if (v < 0)
			BUG("no victim for %d blocks", nb);
		preempt(s, &s->inst[s->r[v].inst], v);
		*preempted = true;
		if (v == id)
			return false;
	}
	return true;
}

/* ---- the engine: schedule, submit ----------------------------------------------------------- */

static void emit_pass(struct sim *s, struct inst *in, int phase, const int32_t real[4],
		      int32_t gi, int64_t start, int64_t compile_ns, int64_t real_tokens,
		      int64_t padded_tokens)
{
	const struct graph *g = &s->graphs[gi];
	struct pass_rec pr = {s->pass_index, start, start + compile_ns + g->cost_ns, compile_ns,
			      phase, in->idx, {real[0], real[1], real[2], real[3]},
			      {g->v[0], g->v[1], g->v[2], g->v[3]}, real_tokens, padded_tokens};
	s->pass_index++;
	s->hooks.pass(s->hooks.ctx, s, &pr);
}

/* Accounts TIMES identical passes of graph GI starting at START, the first carrying
 * COMPILE_NS.  Returns the duration of one pass without the compile. */
static int64_t account_pass(struct sim *s, struct inst *in, int phase, const int32_t real[4],
			    int32_t gi, int64_t compile_ns, int64_t real_tokens,
			    int64_t real_blocks, int64_t start, int64_t times)
{
	struct graph *g = &s->graphs[gi];
	int64_t padded_tokens = phase == PHASE_PROMPT ? (int64_t)g->v[0] * g->v[1] : g->v[0];
	int64_t padded_blocks = phase == PHASE_DECODE ? g->v[2] : 0;
	g->uses += times;
	g->real_tokens += real_tokens * times;
	g->padded_tokens += padded_tokens * times;
	s->m.passes[phase] += times;
	s->m.real_tokens += real_tokens * times;
	s->m.padded_tokens += padded_tokens * times;
	s->m.real_blocks += real_blocks * times;
	s->m.padded_blocks += padded_blocks * times;
	if (s->hooks.pass) {
		int64_t t = start;
		for (int64_t i = 0; i < times; i++) {
			int64_t c = i ? 0 : compile_ns;
			emit_pass(s, in, phase, real, gi, t, c, real_tokens, padded_tokens);
			t += c + g->cost_ns;
		}
	} else {
		s->pass_index += times;
	}
	return g->cost_ns;
}

/* Whether an arrival during a run of decode steps could change what the next step does: not
 * when every sequence slot is taken, nor behind a blocked first-come-first-served queue. */
static bool arrivals_matter(const struct sim *s, const struct inst *in)
{
	if (in->role == ROLE_DECODE)
		return false; /* transfers, not arrivals, feed it: they are events of their own */
	bool fifo = in->q->order == WO_FCFS && (!s->p.task_aware || s->wq[2].order == WO_FCFS);
	size_t queued = wq_len(in->q) + (s->p.task_aware ? wq_len(&s->wq[2]) : 0);
	return has_slot(s, in) && !(fifo && queued > 0);
}

/* How many identical decode-only steps of DT, starting at T, can run as one event: up to the
 * next completion (included), the next KV-block boundary (excluded), the first step that
 * could admit an arrival or see a bucket adjustment, and the stop time. */
static int64_t decode_run_length(const struct sim *s, const struct inst *in, int64_t t,
				 int64_t dt)
{
	int32_t c = ih_top(&in->done_at), x = ih_top(&in->cross_at);
	int64_t k = in->done_at.key[c] - in->G + 1;
	if (x >= 0 && in->cross_at.key[x] - in->G < k)
		k = in->cross_at.key[x] - in->G;
	if (k < 1)
		BUG("decode run of %lld steps", (long long)k);
	int64_t limit = INT64_MAX;
	if (arrivals_matter(s, in) && s->next_arrival < s->n)
		limit = s->spec[s->next_arrival].arrival_ns;
	if (s->p.stop_ns < limit)
		limit = s->p.stop_ns;
	if (limit != INT64_MAX) {
		int64_t kk = limit <= t ? 1 : (limit - t + dt - 1) / dt;
		if (kk < k)
			k = kk;
	}
	return k < 1 ? 1 : k;
}

/* Memory-safe batching (BucketServe's Dynamic Batching Controller): the KV budget in tokens
 * for the next batch, M_safe = fraction x M_remain (Eq. 5), M_remain being the instance's KV
 * capacity not reserved by the requests it runs.  KV bytes per token (Eq. 1) cancel: the cache
 * size in blocks was derived from memory with the model's exact per-token KV bytes. */
static int64_t safe_budget(const struct sim *s, const struct inst *in)
{
	int64_t remain = s->p.num_kv_blocks * s->p.block_size - in->kv->reserved;
	return (int64_t)(s->bsc->mem_safe_fraction * (double)(remain > 0 ? remain : 0));
}

static int32_t charge_of(const struct sim *s, int32_t id)
{
	const struct req_spec *q = &s->spec[id];
	return s->bsc->charge == BSB_CHARGE_TOTAL ? q->prompt_tokens + q->output_tokens
						  : q->prompt_tokens;
}

/* Admits waiting requests of queue Q into IN within BUDGET tokens.  Returns the budget left. */
static int64_t admit_from(struct sim *s, struct inst *in, struct waitq *q, int64_t budget)
{
	if (q->bsm && q->bc.adjust == BUCKETSERVE_ADJUST_BATCH)
		adjust(s, q);
	int64_t k = wq_pick(s, q);
	int64_t safe = s->p.memory_safe ? safe_budget(s, in) : 0, charged = 0;
	int32_t smax = 0;
	size_t nb = 0;
	int64_t static_need = 0; /* blocks the static batch's deferred prefills will take */
	if (s->p.static_batch && in->n_run > 0)
		return budget; /* a static batch runs to completion before the next is formed */
	while ((budget > 0 || s->p.static_batch) && has_slot(s, in)) {
		int32_t id = wq_peek(s, q, k);
		if (id < 0)
			break;
		struct req *r = &s->r[id];
		/* A cached prefix of its group is not computed again. */
		int32_t hit = prefix_blocks(s, id), g = s->spec[id].prefix_group;
		if (hit && hit > in->kv->pc[g].blocks)
			hit = in->kv->pc[g].blocks;
		int64_t computed = (int64_t)hit * s->p.block_size;
		int64_t remaining = r->target - computed;
		if (!s->p.chunked_prefill && remaining > budget && !s->p.static_batch)
			break;
		int32_t chunk = (int32_t)(remaining < budget ? remaining : budget);
		if (!s->p.chunked_prefill && remaining > budget)
			chunk = 0; /* static batch member whose prefill waits for a later step */
		int32_t need = blocks_for(s, computed + chunk) - hit;
		int32_t revive = hit && in->kv->pc[g].ref == 0 ? in->kv->pc[g].blocks : 0;
		if (need + revive > in->kv->free)
			break;
		if (s->p.static_batch) {
			/* UELLM-style: at most static_batch_size requests whose prompts all fit in
			 * the free KV cache, closed before the Eq. 2 waste of the batch's prompt
			 * lengths would exceed static_max_waste. */
			if (nb >= (size_t)s->p.static_batch_size)
				break;
			int64_t full = blocks_for(s, r->target) - hit;
			if (static_need + full + revive > in->kv->free)
				break;
			static_need += full - need;
			s->batch_lens[nb] = (uint32_t)s->spec[id].prompt_tokens;
			if (nb > 0 && waste_ratio(s->batch_lens, nb + 1) > s->p.static_max_waste)
				break;
		}
		if (s->p.memory_safe) {
			/* Eq. 6 (sum of lengths) or Eq. 1 (padded to the longest) within M_safe; a
			 * request that cannot fit even alone runs alone on an idle instance. */
			int32_t c = charge_of(s, id);
			int32_t m = c > smax ? c : smax;
			int64_t use = s->bsc->accounting == BSB_PADDED ? (int64_t)(nb + 1) * m
								      : charged + c;
			if (use > safe && !(in->n_run == 0 && nb == 0))
				break;
			charged += c;
			smax = m;
			r->reserved = c;
			in->kv->reserved += c;
		}
		wq_remove(s, q, id);
		admit(s, in, id, RS_PREFILL);
		in->pre[in->n_pre++] = id;
		if (hit) {
			pc_ref(s, in, r, g, hit);
			r->computed = (int32_t)computed;
			s->prefix_hit_tokens += computed;
		}
		kv_take(s, in, r, need);
		if (chunk > 0)
			in->items[in->n_items++] = (struct pre_item){id, chunk};
		s->batch_lens[nb++] = (uint32_t)s->spec[id].prompt_tokens;
		budget -= chunk;
		if (!q->bsm)
			continue;
		/* A grouped batch is drawn from one bucket; a plain FCFS-like pick moves on. */
		if (!s->p.memory_safe && k >= 0 && bsm_peek(q->bsm, (size_t)k) < 0)
			k = wq_pick(s, q);
	}
	if (nb)
		waste_acc_add_lens(&s->batch_waste, s->batch_lens, nb);
	return budget;
}

/* Admits from IN's queue, then, when task-aware, offline requests into what is left. */
static void admit_waiting(struct sim *s, struct inst *in, int64_t budget)
{
	budget = admit_from(s, in, in->q, budget);
	if (s->p.task_aware && in->q == &s->wq[0])
		admit_from(s, in, &s->wq[2], budget);
}

/* Admits transferred requests into a decode instance. */
static void admit_transferred(struct sim *s, struct inst *in)
{
	struct waitq *q = in->q;
	while (has_slot(s, in) && q->h.n) {
		int32_t id = ih_top(&q->h);
		struct req *r = &s->r[id];
		/* Its KV cache plus the slot its first decode step writes (allocated when the step
		 * is scheduled, as for every decode). */
		int32_t need = blocks_for(s, (int64_t)r->computed + 1);
		if (need > in->kv->free)
			break;
		ih_remove(&q->h, id);
		admit(s, in, id, RS_DECODE);
		kv_take(s, in, r, need);
		dec_join(s, in, id);
	}
}

/* Submits the step's passes starting at T; returns the end time. */
static int64_t submit(struct sim *s, struct inst *in, int64_t t, bool preempted)
{
	in->step_dec = in->n_dec;
	in->step_k = 0;
	if (s->p.unified) {
		/* One pass of every token: (query, shared blocks, unique blocks, causal).  Context
		 * of a prefill chunk is read by all its query tokens (shared); a decode's blocks by
		 * one token (unique). */
		int32_t real[4] = {in->n_dec, 0, 0, in->n_items > 0};
		int64_t tokens = in->n_dec;
		for (size_t j = 0; j < in->n_items; j++) {
			struct req *r = &s->r[in->items[j].id];
			real[0] += in->items[j].chunk;
			tokens += in->items[j].chunk;
			real[1] += blocks_for(s, r->computed);
			if (r->t_sched < 0)
				r->t_sched = t;
		}
		real[2] = (int32_t)(s->p.contiguous_pa ? in->kv->used : in->dec_blocks);
		int64_t compile_ns;
		int32_t gi = pad_shape(s, in, PHASE_UNIFIED, real, &compile_ns);
		int64_t k = 1;
		if (!in->n_items && !preempted && !compile_ns && in->n_dec && in->grp->stages == 1)
			k = decode_run_length(s, in, t, s->graphs[gi].cost_ns);
		t += compile_ns +
		     k * account_pass(s, in, PHASE_UNIFIED, real, gi, compile_ns, tokens, 0, t, k);
		in->step_k = in->n_dec ? k : 0;
		return t;
	}
	for (size_t i = 0; i < in->n_items; i += (size_t)s->p.max_num_prefill_seqs) {
		size_t end = i + (size_t)s->p.max_num_prefill_seqs;
		if (end > in->n_items)
			end = in->n_items;
		int32_t real[4] = {(int32_t)(end - i), 0, 0, 0};
		int64_t tokens = 0;
		for (size_t j = i; j < end; j++) {
			struct req *r = &s->r[in->items[j].id];
			if (in->items[j].chunk > real[1])
				real[1] = in->items[j].chunk;
			int32_t ctx = blocks_for(s, r->computed);
			if (ctx > real[2])
				real[2] = ctx;
			tokens += in->items[j].chunk;
			if (r->t_sched < 0)
				r->t_sched = t;
		}
		int64_t compile_ns;
		int32_t gi = pad_shape(s, in, PHASE_PROMPT, real, &compile_ns);
		t += compile_ns +
		     account_pass(s, in, PHASE_PROMPT, real, gi, compile_ns, tokens, 0, t, 1);
	}
	if (in->n_dec) {
		int32_t nb = (int32_t)(s->p.contiguous_pa ? in->kv->used : in->dec_blocks);
		int32_t real[4] = {in->n_dec, 1, nb, 0};
		int64_t compile_ns;
		int32_t gi = pad_shape(s, in, PHASE_DECODE, real, &compile_ns);
		int64_t k = 1;
		if (!in->n_items && !preempted && !compile_ns && in->grp->stages == 1)
			k = decode_run_length(s, in, t, s->graphs[gi].cost_ns);
		t += compile_ns + k * account_pass(s, in, PHASE_DECODE, real, gi, compile_ns,
						   in->n_dec, nb, t, k);
		in->step_k = k;
	}
	return t;
}

static void schedule(struct sim *s, struct inst *in)
{
	bool preempted = false;
	const int32_t B = s->p.block_size;

	/* 1. Decodes: each writes one KV slot; a request starting a new block allocates it. */
	for (int32_t id = ih_top(&in->cross_at); id >= 0 && in->cross_at.key[id] <= in->G;
	     id = ih_top(&in->cross_at)) {
		if (!make_room(s, in, id, 1, &preempted))
			continue;
		kv_take(s, in, &s->r[id], 1);
		in->dec_blocks++;
		ih_update(&in->cross_at, id, in->cross_at.key[id] + B);
	}

	/* 2. Running prefills continue, in admission order. */
	in->n_items = 0;
	int64_t budget = s->p.max_num_batched_tokens - in->n_dec;
	for (size_t i = 0; i < in->n_pre && budget > 0;) {
		int32_t id = in->pre[i];
		struct req *r = &s->r[id];
		int32_t chunk = r->target - r->computed;
		if (chunk > budget)
			chunk = (int32_t)budget;
		int32_t need = blocks_for(s, (int64_t)r->computed + chunk) - r->shared - r->blocks;
		if (need > 0 && !make_room(s, in, id, need, &preempted))
			continue; /* it was preempted: pre[i] is now the next one */
		if (need > 0)
			kv_take(s, in, r, need);
		in->items[in->n_items++] = (struct pre_item){id, chunk};
		budget -= chunk;
		i++;
	}
	budget = s->p.max_num_batched_tokens - in->n_dec;
	for (size_t i = 0; i < in->n_items; i++)
		budget -= in->items[i].chunk;

	/* 3. Queued requests, unless this step preempted (as vLLM V1). */
	if (!preempted) {
		if (in->role == ROLE_DECODE)
			admit_transferred(s, in);
		else
			admit_waiting(s, in, budget);
	}

	if (!in->n_items && !in->n_dec) {
		in->busy = false;
		return;
	}
	int64_t t0 = s->now;
	struct igroup *grp = in->grp;
	if (grp->stages > 1 && grp->stage_free[0] > t0)
		t0 = grp->stage_free[0]; /* the microbatch enters the first stage when it frees */
	int64_t t = submit(s, in, t0, preempted);
	int64_t work = t - t0;
	if (grp->stages > 1) {
		/* Pipeline parallelism: the pass's layers are split evenly over the stages; the
		 * microbatch goes through them in order, each stage working on one microbatch at
		 * a time. */
		int64_t at = t0;
		for (int j = 0; j < grp->stages; j++) {
			int64_t part = work / grp->stages + (j == grp->stages - 1 ? work % grp->stages : 0);
			if (grp->stage_free[j] > at)
				at = grp->stage_free[j];
			at += part;
			grp->stage_free[j] = at;
		}
		t = at;
	}
	/* One step of a run lasts step_dt; the whole event lasts step_dt * k. */
	int64_t k = in->step_k ? in->step_k : 1;
	in->step_dt = (t - s->now) / k;
	if (in->step_dt * k != t - s->now)
		BUG("uneven decode run");
	/* Busy time is the compute of the step (summed over stages, it is card time / stages). */
	in->busy_ns += work;
	s->m.busy_ns += work;
	s->m.steps += k;
	s->mon_step_ns += t - s->now;
	s->mon_steps += k;
	in->busy = true;
	evq_push(&s->q, t, EVC_PASS_DONE, EV_PASS_DONE, in->idx);
}

/* ---- the engine: update ------------------------------------------------------------------ */

static void finish(struct sim *s, struct inst *in, int32_t id)
{
	struct req *r = &s->r[id];
	const struct req_spec *q = &s->spec[id];
	r->generated = q->output_tokens;
	r->state = RS_DONE;
	run_remove(in, id);
	kv_release(s, in, r, id);
	in->kv->reserved -= r->reserved;
	r->reserved = 0;
	s->finished++;
	metrics_request(&s->m, q->arrival_ns, r->t_first, s->now, q->prompt_tokens,
			q->output_tokens);
	if (s->hooks.request_done)
		s->hooks.request_done(s->hooks.ctx, s, id);
}

/* A prefill instance hands the request's KV cache to the decode instances. */
static void start_transfer(struct sim *s, struct inst *in, int32_t id)
{
	struct req *r = &s->r[id];
	run_remove(in, id);
	in->kv->reserved -= r->reserved;
	r->reserved = 0;
	r->state = RS_TRANSFER;
	int64_t dt = s->costs.transfer(s->costs.ctx, r->computed);
	s->transfer_ns_total += dt;
	s->transfers++;
	s->transferring++;
	evq_push(&s->q, s->now + dt, EVC_ARRIVAL, EV_TRANSFER, id);
}

static void update(struct sim *s, struct inst *in)
{
	int64_t k = in->step_k;
	in->last_end = s->now;
	/* Decoders: k tokens each; each token's gap is one step. */
	if (k) {
		metrics_itl(&s->m, in->step_dt, (int64_t)in->step_dec * k);
		in->G += k;
		for (int32_t id = ih_top(&in->done_at); id >= 0 && in->done_at.key[id] < in->G;
		     id = ih_top(&in->done_at)) {
			dec_leave(in, &s->r[id], id);
			finish(s, in, id);
		}
	}
	/* Prefills: computed chunks; a completed prefill samples a token. */
	for (size_t i = 0; i < in->n_items; i++) {
		int32_t id = in->items[i].id;
		struct req *r = &s->r[id];
		r->computed += in->items[i].chunk;
		pc_donate(s, in, r, id);
		if (r->computed < r->target)
			continue;
		pre_remove(in, id);
		r->generated++;
		if (r->t_first < 0)
			r->t_first = s->now;
		else
			metrics_itl(&s->m, s->now - r->t_last_tok, 1);
		r->t_last_tok = s->now;
		if (r->generated >= s->spec[id].output_tokens)
			finish(s, in, id);
		else if (in->role == ROLE_PREFILL)
			start_transfer(s, in, id);
		else
			dec_join(s, in, id);
	}
	in->n_items = 0;
	in->busy = false;
}

static void on_transfer(struct sim *s, int32_t id)
{
	struct req *r = &s->r[id];
	struct inst *from = &s->inst[r->inst];
	kv_release(s, from, r, id);
	r->inst = -1;
	r->state = RS_XFER_WAIT;
	s->transferring--;
	/* Decode instances take transferred requests first come, first served. */
	ih_push(&s->wq[1].h, id, s->now);
	kick(s, from);
	kick_queue(s, &s->wq[1]);
}

static void on_monitor(struct sim *s)
{
	struct monitor_rec m = {0};
	m.t_ns = s->now;
	m.waiting = sim_waiting(s);
	m.running = sim_running(s);
	m.transferring = s->transferring;
	for (int k = 0; k < s->n_pools; k++) {
		m.kv_used += s->pools[k].used;
		m.kv_total += s->pools[k].total;
	}
	double iv = (double)s->p.monitor_ns / 1e9;
	m.arrival_rate = (double)s->mon_arrivals / iv;
	size_t nw = sim_waiting(s) - s->wq[1].h.n;
	m.mean_waiting_len = nw ? (double)s->wait_prompt_tokens / (double)nw : 0;
	m.batch_latency_ms = s->mon_steps ? (double)s->mon_step_ns / 1e6 / (double)s->mon_steps : 0;
	m.buckets = s->wq[0].bsm ? bsm_nbuckets(s->wq[0].bsm) : 1;
	if (s->hooks.monitor)
		s->hooks.monitor(s->hooks.ctx, s, &m);
	s->mon_arrivals = 0;
	s->mon_step_ns = s->mon_steps = 0;
}

/* Whether anything is left to happen besides periodic ticks. */
static bool work_left(const struct sim *s)
{
	return s->finished < s->n;
}

bool sim_step(struct sim *s)
{
	struct event e;
	const struct event *top = evq_peek(&s->q);
	if (!top || top->t_ns > s->p.stop_ns)
		return false;
	evq_pop(&s->q, &e);
	if (e.t_ns < s->now)
		BUG("time went backwards");
	s->now = e.t_ns;
	s->events++;
	switch (e.kind) {
	case EV_ARRIVAL: {
		int32_t id = (int32_t)e.arg;
		s->r[id].state = RS_WAITING;
		if (s->lane_q) {
			/* Virtual engines: the one with the fewest unfinished requests takes it. */
			struct inst *best = NULL;
			for (int i = 0; i < s->n_inst; i++) {
				struct inst *c = &s->inst[i];
				if (!best || c->n_run + c->q->h.n < best->n_run + best->q->h.n)
					best = c;
			}
			wq_push(s, best->q, id, false);
			kick(s, best);
		} else {
			wq_push(s, queue_of(s, id), id, false);
		}
		s->arrived++;
		s->mon_arrivals++;
		s->next_arrival = (size_t)id + 1;
		if (s->next_arrival < s->n)
			evq_push(&s->q, s->spec[s->next_arrival].arrival_ns, EVC_ARRIVAL, EV_ARRIVAL,
				 (int64_t)s->next_arrival);
		kick_queue(s, &s->wq[0]);
		break;
	}
	case EV_PASS_DONE: {
		struct inst *in = &s->inst[e.arg];
		update(s, in);
		/* The lane schedules its returned requests again; its idle sibling lanes (empty
		 * microbatch slots) may take waiting work.  The atomic loop builds the next
		 * microbatch before it processes the returned one, so the idle lanes go first
		 * there; the async loop processes the returned microbatch first. */
		bool atomic = s->p.loop == LOOP_ATOMIC && in->grp->lanes > 1;
		if (!atomic)
			kick(s, in);
		for (int l = 0; l < in->grp->lanes; l++)
			if (&s->inst[in->grp->first + l] != in)
				kick(s, &s->inst[in->grp->first + l]);
		kick(s, in);
		break;
	}
	case EV_SCHEDULE: {
		struct inst *in = &s->inst[e.arg];
		in->schedule_pending = false;
		if (!in->busy)
			schedule(s, in);
		break;
	}
	case EV_TRANSFER:
		on_transfer(s, (int32_t)e.arg);
		break;
	case EV_MONITOR:
		on_monitor(s);
		if (work_left(s))
			evq_push(&s->q, s->now + s->p.monitor_ns, EVC_MONITOR, EV_MONITOR, 0);
		break;
	case EV_ADJUST:
		adjust(s, &s->wq[0]);
		if (s->wq[2].bsm)
			adjust(s, &s->wq[2]);
		kick_queue(s, &s->wq[0]);
		if (work_left(s))
			evq_push(&s->q, s->now + s->bsc->adjust_period_ns, EVC_MONITOR, EV_ADJUST, 0);
		break;
	default:
		BUG("unknown event kind %d", e.kind);
	}
	assert(sim_check_invariants(s));
	return true;
}

void sim_run(struct sim *s)
{
	while (sim_step(s))
		;
}

size_t sim_waiting(const struct sim *s)
{
	size_t n = wq_len(&s->wq[0]) + s->wq[1].h.n + wq_len(&s->wq[2]);
	if (s->lane_q)
		for (int i = 0; i < s->n_inst; i++)
			n += s->lane_q[i].h.n;
	return n;
}

size_t sim_running(const struct sim *s)
{
	size_t n = 0;
	for (int i = 0; i < s->n_inst; i++)
		n += s->inst[i].n_run;
	return n;
}

bool sim_check_invariants(const struct sim *s)
{
	if (s->arrived != s->finished + sim_waiting(s) + sim_running(s) + s->transferring)
		return false;
	for (int k = 0; k < s->n_pools; k++) {
		const struct kvpool *kv = &s->pools[k];
		if (kv->free + kv->used != kv->total || kv->free < 0 || kv->reserved < 0 ||
		    kv->cached_free > kv->free || kv->cached_free < 0)
			return false;
	}
	for (int i = 0; i < s->n_inst; i++) {
		const struct inst *in = &s->inst[i];
		if ((size_t)in->n_dec + in->n_pre != in->n_run)
			return false;
	}
	return true;
}

void sim_finish(struct sim *s)
{
	s->m.end_ns = s->now;
	if (s->m.end_ns < s->m.last_finish_ns)
		s->m.end_ns = s->m.last_finish_ns;
	/* Utilization is per instance: busy time over instances x simulated time. */
	s->m.busy_ns = 0;
	for (int i = 0; i < s->n_inst; i++)
		s->m.busy_ns += s->inst[i].busy_ns;
	s->m.instances = s->n_inst;
	for (int k = 0; k < s->n_pools; k++)  /* the tail of the blocks x time integral */
		pool_used_add(s, &s->pools[k], 0);
	if (!sim_check_invariants(s))
		BUG("conservation violated at the end of the run");
	if (s->p.stop_ns == INT64_MAX) {
		if (s->finished != s->n)
			BUG("%zu of %zu requests finished", s->finished, s->n);
		for (int k = 0; k < s->n_pools; k++)
			if (s->pools[k].used != 0)
				BUG("%lld KV blocks not returned to pool %d",
				    (long long)s->pools[k].used, k);
	}
}
