/*
 * kernel: see kernel.h for the model, the lifecycle and the invariants.
 */
#include "sim/kernel.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

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

static int64_t model_compile(void *ctx, int phase, const int32_t v[4], bool runtime)
{
	return cost_compile_ns(ctx, phase, v, runtime);
}

void sim_costs_from_model(struct sim_costs *c, struct cost_model *cm)
{
	c->ctx = cm;
	c->prefill = model_prefill;
	c->decode = model_decode;
	c->compile = model_compile;
}

/* ---- parameters -------------------------------------------------------------------------- */

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
	p->stop_ns = INT64_MAX;
	if (config_is_set(cfg, "sim.stop_s"))
		p->stop_ns = (int64_t)(config_double(cfg, "sim.stop_s") * 1e9 + 0.5);
	p->slo_ttft_ms = config_double(cfg, "slo.ttft_ms");
	p->slo_tpot_ms = config_double(cfg, "slo.tpot_ms");
	const char *o = config_str(cfg, "scheduler.order");
	static const char *const names[] = {"fcfs", "sjf", "ljf", "sjf_total", "ljf_total",
					    "priority"};
	p->order = WO_FCFS;
	bool found = false;
	for (int i = 0; i < 6; i++)
		if (!strcmp(o, names[i])) {
			p->order = (enum wait_order)i;
			found = true;
		}
	if (!found)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "scheduler.order",
			       "'%s' needs scheduler.grouping (not available in this build)", o);
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

static void ih_init(struct iheap *h, size_t n)
{
	h->ids = xmalloc((n ? n : 1) * sizeof *h->ids);
	h->key = xmalloc((n ? n : 1) * sizeof *h->key);
	h->pos = xmalloc((n ? n : 1) * sizeof *h->pos);
	for (size_t i = 0; i < n; i++)
		h->pos[i] = -1;
	h->n = 0;
}

static void ih_release(struct iheap *h)
{
	free(h->ids);
	free(h->key);
	free(h->pos);
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

/* ---- set-up ------------------------------------------------------------------------------ */

void sim_init(struct sim *s, const struct sim_params *p, const struct req_spec *req, size_t n,
	      struct bucketer *bucketer, const struct sim_costs *costs,
	      const struct sim_hooks *hooks)
{
	memset(s, 0, sizeof *s);
	s->p = *p;
	s->spec = req;
	s->n = n;
	s->r = xcalloc(n ? n : 1, sizeof *s->r);
	for (size_t i = 0; i < n; i++) {
		s->r[i].t_sched = s->r[i].t_first = s->r[i].t_last_tok = -1;
		s->r[i].target = req[i].prompt_tokens;
	}
	s->bucketer = bucketer;
	s->costs = *costs;
	if (hooks)
		s->hooks = *hooks;
	evq_init(&s->q);
	ih_init(&s->wait, n);
	ih_init(&s->done_at, n);
	ih_init(&s->cross_at, n);
	s->front_key = INT64_MIN / 2;
	s->run = xmalloc((size_t)p->max_num_seqs * sizeof *s->run);
	s->pre = xmalloc((size_t)p->max_num_seqs * sizeof *s->pre);
	s->items = xmalloc((size_t)p->max_num_seqs * sizeof *s->items);
	s->kv_free = p->num_kv_blocks;
	shapemap_init(&s->lookup);
	shapemap_init(&s->graphs_by_shape);
	metrics_init(&s->m, n, p->slo_ttft_ms, p->slo_tpot_ms);
	s->m.kv_blocks_total = p->num_kv_blocks;
	if (n)
		evq_push(&s->q, req[0].arrival_ns, EVC_ARRIVAL, EV_ARRIVAL, 0);
}

void sim_release(struct sim *s)
{
	evq_release(&s->q);
	ih_release(&s->wait);
	ih_release(&s->done_at);
	ih_release(&s->cross_at);
	free(s->r);
	free(s->run);
	free(s->pre);
	free(s->items);
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
	return s->costs.decode(s->costs.ctx, v[0], v[2]);
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

void sim_warmup(struct sim *s)
{
	if (!s->bucketer || s->p.skip_warmup)
		return;
	for (int ph = PHASE_PROMPT; ph <= PHASE_DECODE; ph++) {
		struct bshape *w;
		size_t n = bucketer_warmup(s->bucketer, (enum phase)ph, &w);
		for (size_t i = 0; i < n; i++) {
			int32_t gi = graph_get(s, ph, w[i].v);
			struct graph *g = &s->graphs[gi];
			if (g->compiled)
				continue;
			g->warm = g->compiled = true;
			g->compile_ns = s->costs.compile(s->costs.ctx, ph, g->v, false);
			s->m.warmup_ns += g->compile_ns;
			s->m.compiles_warmup++;
		}
		free(w);
	}
}

/* Pads a real shape to its bucket.  Returns the graph; *compile_ns is the runtime compile
 * charged now (0 when the graph is warm). */
static int32_t pad_shape(struct sim *s, int phase, const int32_t real[4], int64_t *compile_ns)
{
	struct shape_key k = {phase, {real[0], real[1], real[2], real[3]}};
	int32_t gi = shapemap_get(&s->lookup, &k);
	if (gi < 0) {
		struct bshape in = {{real[0], real[1], real[2], real[3]}}, out = in;
		bool created = false;
		if (s->bucketer)
			created = bucketer_lookup(s->bucketer, (enum phase)phase, &in, &out);
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
	*compile_ns = 0;
	if (!g->compiled) {
		g->compiled = true;
		g->compile_ns = s->costs.compile(s->costs.ctx, phase, g->v, true);
		*compile_ns = g->compile_ns;
		s->m.compiles_runtime++;
		s->m.runtime_compile_ns += g->compile_ns;
	}
	return gi;
}

/* ---- KV blocks, queues ---------------------------------------------------------------------- */

static inline int32_t blocks_for(const struct sim *s, int64_t tokens)
{
	return (int32_t)((tokens + s->p.block_size - 1) / s->p.block_size);
}

static void kv_take(struct sim *s, struct req *r, int32_t nb)
{
	assert(s->kv_free >= nb);
	s->kv_free -= nb;
	s->kv_used += nb;
	r->blocks += nb;
	if (s->kv_used > s->m.kv_blocks_peak)
		s->m.kv_blocks_peak = s->kv_used;
}

static void kv_release(struct sim *s, struct req *r)
{
	s->kv_free += r->blocks;
	s->kv_used -= r->blocks;
	r->blocks = 0;
}

static int64_t wait_key(const struct sim *s, int32_t id)
{
	const struct req_spec *q = &s->spec[id];
	switch (s->p.order) {
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
	case WO_FCFS:
		break;
	}
	return id;   /* ids are in arrival order */
}

static void run_remove(struct sim *s, int32_t id)
{
	for (size_t i = 0; i < s->n_run; i++)
		if (s->run[i] == id) {
			s->run[i] = s->run[--s->n_run];
			return;
		}
	BUG("request %d not running", id);
}

static void pre_remove(struct sim *s, int32_t id)
{
	for (size_t i = 0; i < s->n_pre; i++)
		if (s->pre[i] == id) {
			memmove(&s->pre[i], &s->pre[i + 1], (s->n_pre - i - 1) * sizeof *s->pre);
			s->n_pre--;
			return;
		}
	BUG("request %d not in prefill", id);
}

/* Step index (value of G) at which decoding request R writes KV slot number SLOT. */
static int64_t step_of_slot(const struct sim *s, const struct req *r, const struct req_spec *q,
			    int64_t slot)
{
	/* At step G the request writes slot P + g(G) - 1 with g(G) = g0 + G - join. */
	return slot - q->prompt_tokens + 1 - r->g0 + r->join;
}

static void dec_join(struct sim *s, int32_t id)
{
	struct req *r = &s->r[id];
	const struct req_spec *q = &s->spec[id];
	r->state = RS_DECODE;
	r->join = s->G;
	r->g0 = r->generated;
	/* Completion: after the step that brings generated to output_tokens. */
	ih_push(&s->done_at, id, r->join + (q->output_tokens - r->g0) - 1);
	/* Next block: the first slot at or after the next one that lies past the blocks held. */
	int64_t slot = (int64_t)r->blocks * s->p.block_size;
	int64_t next = q->prompt_tokens + r->generated - 1;
	if (slot < next)
		BUG("request %d holds too few blocks", id);
	ih_push(&s->cross_at, id, step_of_slot(s, r, q, slot));
	s->n_dec++;
	s->dec_blocks += r->blocks;
}

static void dec_leave(struct sim *s, int32_t id)
{
	struct req *r = &s->r[id];
	r->generated = r->g0 + (int32_t)(s->G - r->join);
	ih_remove(&s->done_at, id);
	ih_remove(&s->cross_at, id);
	s->n_dec--;
	s->dec_blocks -= r->blocks;
}

static void preempt(struct sim *s, int32_t id)
{
	struct req *r = &s->r[id];
	if (r->state == RS_DECODE) {
		dec_leave(s, id);
		r->t_last_tok = s->last_end;
	} else {
		pre_remove(s, id);
	}
	run_remove(s, id);
	kv_release(s, r);
	r->computed = 0;
	r->target = s->spec[id].prompt_tokens + r->generated;
	r->state = RS_WAITING;
	r->preemptions++;
	s->m.preemptions++;
	/* vLLM puts a preempted request back at the front of the waiting queue. */
	ih_push(&s->wait, id, s->front_key--);
}

/* The most recently admitted running request: vLLM preempts from the end of its running
 * list. */
static int32_t victim(const struct sim *s)
{
	int32_t best = -1;
	for (size_t i = 0; i < s->n_run; i++)
		if (best < 0 || s->r[s->run[i]].admit > s->r[best].admit)
			best = s->run[i];
	return best;
}

/* Frees blocks by preemption until NB are free or ID itself was preempted.  Returns true when
 * ID still runs. */
static bool make_room(struct sim *s, int32_t id, int32_t nb, bool *preempted)
{
	while (s->kv_free < nb) {
		int32_t v = victim(s);
		preempt(s, v);
		*preempted = true;
		if (v == id)
			return false;
	}
	return true;
}

/* ---- the engine: schedule, submit ----------------------------------------------------------- */

static void emit_pass(struct sim *s, int phase, const int32_t real[4], int32_t gi,
		      int64_t start, int64_t compile_ns, int64_t real_tokens, int64_t padded_tokens)
{
	const struct graph *g = &s->graphs[gi];
	struct pass_rec pr = {s->pass_index, start, start + compile_ns + g->cost_ns, compile_ns,
			      phase, {real[0], real[1], real[2], real[3]},
			      {g->v[0], g->v[1], g->v[2], g->v[3]}, real_tokens, padded_tokens};
	s->pass_index++;
	if (s->hooks.pass)
		s->hooks.pass(s->hooks.ctx, s, &pr);
}

/* Accounts TIMES identical passes of graph GI starting at START, the first carrying
 * COMPILE_NS.  Returns the duration of one pass without the compile. */
static int64_t account_pass(struct sim *s, int phase, const int32_t real[4], int32_t gi,
			    int64_t compile_ns, int64_t real_tokens, int64_t real_blocks,
			    int64_t start, int64_t times)
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
			emit_pass(s, phase, real, gi, t, c, real_tokens, padded_tokens);
			t += c + g->cost_ns;
		}
	} else {
		s->pass_index += times;
	}
	return g->cost_ns;
}

/* How many identical decode-only steps of DT, starting at T, can run as one event: up to the
 * next completion (included), the next KV-block boundary (excluded), the first step that
 * could admit an arrival, and the stop time. */
static int64_t decode_run_length(const struct sim *s, int64_t t, int64_t dt)
{
	int32_t c = ih_top(&s->done_at), x = ih_top(&s->cross_at);
	int64_t k = s->done_at.key[c] - s->G + 1;
	if (x >= 0 && s->cross_at.key[x] - s->G < k)
		k = s->cross_at.key[x] - s->G;
	if (k < 1)
		BUG("decode run of %lld steps", (long long)k);
	/* An arrival can change the next step only if it could be admitted: not when every
	 * sequence slot is taken, nor behind a blocked FCFS queue. */
	bool arrivals_matter = s->n_run < (size_t)s->p.max_num_seqs &&
			       !(s->p.order == WO_FCFS && s->wait.n);
	if (arrivals_matter && s->next_arrival < s->n) {
		int64_t ta = s->spec[s->next_arrival].arrival_ns;
		int64_t kk = ta <= t ? 1 : (ta - t + dt - 1) / dt;
		if (kk < k)
			k = kk;
	}
	if (s->p.stop_ns != INT64_MAX) {
		int64_t kk = s->p.stop_ns <= t ? 1 : (s->p.stop_ns - t + dt - 1) / dt;
		if (kk < k)
			k = kk;
	}
	return k < 1 ? 1 : k;
}

static void schedule(struct sim *s)
{
	bool preempted = false;
	const int32_t B = s->p.block_size;

	/* 1. Decodes: each writes one KV slot; a request starting a new block allocates it. */
	for (int32_t id = ih_top(&s->cross_at); id >= 0 && s->cross_at.key[id] <= s->G;
	     id = ih_top(&s->cross_at)) {
		if (!make_room(s, id, 1, &preempted))
			continue;
		struct req *r = &s->r[id];
		kv_take(s, r, 1);
		s->dec_blocks++;
		ih_update(&s->cross_at, id, s->cross_at.key[id] + B);
	}

	/* 2. Running prefills continue, in admission order. */
	s->n_items = 0;
	int64_t budget = s->p.max_num_batched_tokens - s->n_dec;
	for (size_t i = 0; i < s->n_pre && budget > 0;) {
		int32_t id = s->pre[i];
		struct req *r = &s->r[id];
		int32_t chunk = r->target - r->computed;
		if (chunk > budget)
			chunk = (int32_t)budget;
		int32_t need = blocks_for(s, (int64_t)r->computed + chunk) - r->blocks;
		if (need > 0 && !make_room(s, id, need, &preempted))
			continue; /* it was preempted: pre[i] is now the next one */
		if (need > 0)
			kv_take(s, r, need);
		s->items[s->n_items++] = (struct pre_item){id, chunk};
		budget -= chunk;
		i++;
	}
	budget = s->p.max_num_batched_tokens - s->n_dec;
	for (size_t i = 0; i < s->n_items; i++)
		budget -= s->items[i].chunk;

	/* 3. Waiting requests, unless this step preempted (as vLLM V1). */
	while (!preempted && budget > 0 && s->n_run < (size_t)s->p.max_num_seqs && s->wait.n) {
		int32_t id = ih_top(&s->wait);
		struct req *r = &s->r[id];
		int64_t remaining = r->target - r->computed;
		if (!s->p.chunked_prefill && remaining > budget)
			break;
		int32_t chunk = (int32_t)(remaining < budget ? remaining : budget);
		int32_t need = blocks_for(s, chunk);
		if (need > s->kv_free)
			break;
		ih_remove(&s->wait, id);
		r->state = RS_PREFILL;
		r->admit = s->next_admit++;
		s->run[s->n_run++] = id;
		s->pre[s->n_pre++] = id;
		kv_take(s, r, need);
		s->items[s->n_items++] = (struct pre_item){id, chunk};
		budget -= chunk;
	}
	if ((int64_t)s->n_run > s->m.running_peak)
		s->m.running_peak = (int64_t)s->n_run;

	if (!s->n_items && !s->n_dec) {
		s->busy = false;
		return;
	}

	/* Submit: prefill passes of up to max_num_prefill_seqs, then one decode pass. */
	int64_t t = s->now;
	s->step_start = t;
	for (size_t i = 0; i < s->n_items; i += (size_t)s->p.max_num_prefill_seqs) {
		size_t end = i + (size_t)s->p.max_num_prefill_seqs;
		if (end > s->n_items)
			end = s->n_items;
		int32_t real[4] = {(int32_t)(end - i), 0, 0, 0};
		int64_t tokens = 0;
		for (size_t j = i; j < end; j++) {
			struct req *r = &s->r[s->items[j].id];
			if (s->items[j].chunk > real[1])
				real[1] = s->items[j].chunk;
			int32_t ctx = blocks_for(s, r->computed);
			if (ctx > real[2])
				real[2] = ctx;
			tokens += s->items[j].chunk;
			if (r->t_sched < 0)
				r->t_sched = t;
		}
		int64_t compile_ns;
		int32_t gi = pad_shape(s, PHASE_PROMPT, real, &compile_ns);
		t += compile_ns + account_pass(s, PHASE_PROMPT, real, gi, compile_ns, tokens, 0, t, 1);
	}
	s->step_dec = s->n_dec;
	s->step_k = 0;
	if (s->n_dec) {
		int32_t nb = (int32_t)(s->p.contiguous_pa ? s->kv_used : s->dec_blocks);
		int32_t real[4] = {s->n_dec, 1, nb, 0};
		int64_t compile_ns;
		int32_t gi = pad_shape(s, PHASE_DECODE, real, &compile_ns);
		int64_t dt = s->graphs[gi].cost_ns, k = 1;
		if (!s->n_items && !preempted && !compile_ns)
			k = decode_run_length(s, t, dt);
		t += compile_ns + k * account_pass(s, PHASE_DECODE, real, gi, compile_ns, s->n_dec, nb,
						   t, k);
		s->step_k = k;
	}
	/* One step of the run lasts step_dt; the whole event lasts step_dt * k. */
	int64_t k = s->step_k ? s->step_k : 1;
	s->step_dt = (t - s->step_start) / k;
	if (s->step_dt * k != t - s->step_start)
		BUG("uneven decode run");
	s->m.busy_ns += t - s->step_start;
	s->m.steps += k;
	s->m.kv_block_ns += (double)s->kv_used * (double)(t - s->step_start);
	s->busy = true;
	evq_push(&s->q, t, EVC_PASS_DONE, EV_PASS_DONE, 0);
}

/* ---- the engine: update ------------------------------------------------------------------ */

static void finish(struct sim *s, int32_t id)
{
	struct req *r = &s->r[id];
	const struct req_spec *q = &s->spec[id];
	r->generated = q->output_tokens;
	r->state = RS_DONE;
	run_remove(s, id);
	kv_release(s, r);
	s->finished++;
	metrics_request(&s->m, q->arrival_ns, r->t_first, s->now, q->prompt_tokens,
			q->output_tokens);
	if (s->hooks.request_done)
		s->hooks.request_done(s->hooks.ctx, s, id);
}

static void update(struct sim *s)
{
	int64_t k = s->step_k;
	s->last_end = s->now;
	/* Decoders: k tokens each; each token's gap is one step. */
	if (k) {
		metrics_itl(&s->m, s->step_dt, (int64_t)s->step_dec * k);
		s->G += k;
		for (int32_t id = ih_top(&s->done_at); id >= 0 && s->done_at.key[id] < s->G;
		     id = ih_top(&s->done_at)) {
			dec_leave(s, id);
			finish(s, id);
		}
	}
	/* Prefills: computed chunks; a completed prefill samples a token. */
	for (size_t i = 0; i < s->n_items; i++) {
		int32_t id = s->items[i].id;
		struct req *r = &s->r[id];
		r->computed += s->items[i].chunk;
		if (r->computed < r->target)
			continue;
		pre_remove(s, id);
		r->generated++;
		if (r->t_first < 0)
			r->t_first = s->now;
		else
			metrics_itl(&s->m, s->now - r->t_last_tok, 1);
		r->t_last_tok = s->now;
		if (r->generated >= s->spec[id].output_tokens)
			finish(s, id);
		else
			dec_join(s, id);
	}
	s->n_items = 0;
	s->busy = false;
}

static void kick(struct sim *s)
{
	if (!s->schedule_pending && !s->busy) {
		s->schedule_pending = true;
		evq_push(&s->q, s->now, EVC_SCHEDULE, EV_SCHEDULE, 0);
	}
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
		ih_push(&s->wait, id, wait_key(s, id));
		s->arrived++;
		s->next_arrival = (size_t)id + 1;
		if (s->next_arrival < s->n)
			evq_push(&s->q, s->spec[s->next_arrival].arrival_ns, EVC_ARRIVAL, EV_ARRIVAL,
				 (int64_t)s->next_arrival);
		kick(s);
		break;
	}
	case EV_PASS_DONE:
		update(s);
		kick(s);
		break;
	case EV_SCHEDULE:
		s->schedule_pending = false;
		if (!s->busy)
			schedule(s);
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

bool sim_check_invariants(const struct sim *s)
{
	size_t waiting = s->wait.n, running = s->n_run;
	if (s->arrived != s->finished + waiting + running)
		return false;
	if (s->kv_free + s->kv_used != s->p.num_kv_blocks || s->kv_free < 0)
		return false;
	if (s->n_dec + s->n_pre != s->n_run)
		return false;
	return true;
}

void sim_finish(struct sim *s)
{
	s->m.end_ns = s->now;
	if (!sim_check_invariants(s))
		BUG("conservation violated at the end of the run");
	if (s->p.stop_ns == INT64_MAX) {
		if (s->finished != s->n)
			BUG("%zu of %zu requests finished", s->finished, s->n);
		if (s->kv_used != 0)
			BUG("%lld KV blocks not returned", (long long)s->kv_used);
	}
}
