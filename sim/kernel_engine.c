/*
 * kernel_engine: the engine step of a lane: schedule (decodes, running prefills, admission
 * through the batch controller, preemption), submit (the passes of the step) and update
 * (tokens, first tokens, completions, transfers).
 */
#include "sim/kernel_int.h"

#include <string.h>

#include "policies/loop.h"

static inline void run_remove(struct sim *s, struct lane *in, int32_t id)
{
	run_del(s, in, id);
	in->owner->running--;
	pipe_running(s, in->owner, in->owner->running + 1);
}

static inline void pre_remove(struct lane *in, int32_t id)
{
	/* Shifted by hand: the list is short (a step's prefills), a call to memmove costs more. */
	for (size_t i = 0; i < in->n_pre; i++)
		if (in->pre[i] == id) {
			for (in->n_pre--; i < in->n_pre; i++)
				in->pre[i] = in->pre[i + 1];
			return;
		}
	BUG("request %d not in prefill", id);
}

static inline void admit(struct sim *s, struct lane *in, int32_t id, enum req_state st)
{
	struct req *r = &s->r[id];
	r->state = st;
	r->admit = s->next_admit++;
	r->lane = (int16_t)in->idx;
	run_add(s, in, id);
	in->owner->running++;
	pipe_running(s, in->owner, in->owner->running - 1);
	if ((int64_t)in->owner->running > s->m.running_peak)
		s->m.running_peak = (int64_t)in->owner->running;
}

/* The decode step (in the lane's count G) after which decoding request ID has its output. */
static int64_t last_step(const struct sim *s, const struct req *r, int32_t id)
{
	return r->join + (s->spec[id].output_tokens - r->g0) - 1;
}

/* Whether decoding request ID, next crossing a block boundary at step CROSS, waits in
 * cross_at: the fast path leaves out a crossing after its last step, which never comes. */
static bool needs_block(const struct sim *s, const struct req *r, int32_t id, int64_t cross)
{
	return s->p.step_by_step || cross <= last_step(s, r, id);
}

static void dec_join(struct sim *s, struct lane *in, int32_t id)
{
	struct req *r = &s->r[id];
	const struct req_spec *q = &s->spec[id];
	r->state = RS_DECODE;
	r->join = in->G;
	r->g0 = r->generated;
	/* At step G the request writes KV slot P + g(G) - 1, with g(G) = g0 + G - join.
	 * Completion: after the step that brings generated to output_tokens. */
	sq_push(&in->done_at, id, last_step(s, r, id));
	/* Next block: the step writing the first slot past the blocks held. */
	int64_t slot = (int64_t)(r->shared + r->blocks) * s->p.block_size;
	if (slot < (int64_t)q->prompt_tokens + r->generated - 1)
		BUG("request %d holds too few blocks", id);
	int64_t cross = slot - q->prompt_tokens + 1 - r->g0 + r->join;
	if (needs_block(s, r, id, cross))
		sq_push(&in->cross_at, id, cross);
	else
		in->cross_at.pos[id] = -1;
	in->n_dec++;
	in->dec_blocks += r->shared + r->blocks;
	kv_ids_decode(s, in, id, 1, 0);
}

static inline void dec_leave(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	kv_ids_decode(s, in, id, -1, 0);
	r->generated = r->g0 + (int32_t)(in->G - r->join);
	sq_remove(&in->done_at, id);
	if (sq_has(&in->cross_at, id))
		sq_remove(&in->cross_at, id);
	in->n_dec--;
	in->dec_blocks -= r->shared + r->blocks;
}

static void preempt(struct sim *s, struct lane *in, int32_t id)
{
	struct req *r = &s->r[id];
	/* The tokens whose KV it has computed: a decode has written all but its last token. */
	int64_t kv_tokens = r->computed;
	if (r->state == RS_DECODE) {
		dec_leave(s, in, r, id);
		r->t_last_tok = in->last_end;
		kv_tokens = (int64_t)s->spec[id].prompt_tokens + r->generated - 1;
	} else {
		pre_remove(in, id);
	}
	run_remove(s, in, id);
	kv_preempt(s, in, r, id, kv_tokens);
	in->kv->reserved -= r->reserved;
	r->reserved = 0;
	r->computed = 0;
	r->target = s->spec[id].prompt_tokens + r->generated;
	r->state = RS_WAITING;
	r->lane = -1;
	r->preemptions++;
	s->m.preemptions++;
	/* A livelock: requests that take each other's blocks for ever (e.g. prompts near the
	 * whole cache, held by microbatches in flight, cluster.pp > 1).  Between two prefills
	 * that complete, a run that progresses preempts at most the requests it runs, each a few
	 * times; 100000 preemptions without one are no progress, and the run stops there. */
	if (++s->preempt_since_prefill > LIVELOCK_PREEMPTIONS)
		s->livelock = true;
	/* Back to the front of the queue that recomputes it (the prefill instances' queue when
	 * disaggregated: the KV is lost; a virtual engine's own queue). */
	struct waitq *back = s->lane_q ? in->q : wq_for(s, id);
	cut_consumers(s, back, true);
	wq_push(s, back, id, true);
	if (!lane_admits_from(s, in, back)) /* it is not this lane's to take again */
		wq_kick(s, back);
}

/* The most recently admitted running request: vLLM preempts from the end of its running
 * list. */
static int32_t victim(const struct sim *s, const struct lane *in)
{
	int32_t best = -1;
	const struct instance *g = in->owner;
	for (int l = 0; l < g->lanes; l++) {
		const struct lane *o = &s->lanes[g->first + l];
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
static bool make_room(struct sim *s, struct lane *in, int32_t id, int32_t nb, bool *preempted)
{
	while (in->kv->free < nb) {
		int32_t v = victim(s, in);
		if (v < 0)
			BUG("no victim for %d blocks", nb);
		pipe_preempt(s, in, nb);
		preempt(s, &s->lanes[s->r[v].lane], v);
		*preempted = true;
		if (v == id)
			return false;
	}
	return true;
}

void engine_controller_setup(struct sim *s)
{
	const struct batch_policy *ctl = s->p.batching;
	s->view_waiting = (ctl->reads & BV_WAITING) || s->p.step_by_step || s->check_contract;
	s->steps_told = ctl->on_step_done || s->check_contract;
	s->ctl_varies = ctl->take && ((ctl->reads & (BV_CLOCK | BV_STEP)) || ctl->on_step_done);
	for (int i = 0; i < s->n_lanes; i++) {
		struct batch_view *v = &s->lanes[i].view;
		v->kv_tokens = s->p.num_kv_blocks * s->p.block_size;
		v->max_running = s->p.max_num_seqs;
		v->step_tokens = s->p.max_num_batched_tokens;
		v->par = s->p.batching_par.v;
		v->bsc = s->bsc;
		v->state = s->lanes[i].ctl_state;
		v->lens = s->batch_lens;
	}
}

/* Sets V, whose constants are IN's view's (engine_controller_setup), to IN's view of a step
 * scheduled at NOW, the lane's step STEP, seeing the waiting requests by CUTOFF
 * (host_cutoff), with an empty batch so far; returns whether the cutoff hid a waiting
 * request (host_waiting).  The waiting requests are counted only when the view is to show
 * them (struct sim's view_waiting): on the fast path, for a controller that reads them. */
static inline bool batch_view_set(const struct sim *s, const struct lane *in, int64_t now,
				  int64_t step, int64_t cutoff, struct batch_view *v)
{
	v->now_ns = now;
	v->step = step;
	v->running = in->owner->lanes > 1 && !s->p.loop->virtual_engines ? in->owner->running
									  : (int32_t)in->n_run;
	v->idle = in->n_run == 0;
	v->kv_free = in->kv->free;
	v->kv_reserved = in->kv->reserved;
	v->n = 0;
	v->deferred_blocks = 0;
	v->charged = v->longest = 0;
	return s->view_waiting && host_waiting(s, in, cutoff, &v->waiting, &v->waiting_tokens);
}

/* Admits waiting requests of queue Q (the QI-th IN admits from) into IN within BUDGET tokens:
 * each candidate, in the queue's order, needs a sequence slot, the step's token budget (unless
 * the controller takes requests beyond it) and the free KV blocks of its chunk
 * (admit_offer), then the batch controller's consent on the step's view.  Returns the budget
 * left. */
static int64_t admit_from(struct sim *s, struct lane *in, struct waitq *q, int qi,
			  int64_t budget)
{
	const struct batch_policy *ctl = s->p.batching;
	if (ctl->idle_only && in->n_run > 0)
		return budget; /* its batch runs to completion before the next is formed */
	if (!q->bsm && !q->h.n)
		return budget; /* an empty queue */
	if (q->bsm && q->bc.adjust == BUCKETSERVE_ADJUST_BATCH)
		wq_adjust(s, q);
	budget = step_budget(s, budget);
	int64_t k = wq_pick(s, q);
	if (ctl->take) {
		/* The step's view, as its admission from this queue starts.  A request the lag
		 * hid from a controller that reads the queue is in its view at the next step:
		 * this step is not repeated as a run (submit), as when the lag refused one. */
		if (batch_view_set(s, in, s->now, in->steps, host_cutoff(in), &in->view) &&
		    (ctl->reads & BV_WAITING))
			in->lag_blocked = true;
		in->view_set = true;
	}
	size_t nb = 0;
	while (budget_admits(s, budget) && lane_has_slot(s, in)) {
		int32_t id = wq_peek(s, q, k);
		if (id < 0 || !host_may_admit(s, in, id))
			break;
		struct req *r = &s->r[id];
		struct admit_offer o;
		if (!admit_offer(s, in, id, budget, &o)) {
			in->closed_by[qi] = id;
			break;
		}
		if (ctl->take) {
			struct batch_view *v = &in->view;
			struct batch_cand c = offer_cand(s, id, &o);
			v->n = nb;
			v->kv_free = in->kv->free;
			if (!ctl->take(v, &c)) {
				in->closed_by[qi] = id;
				break;
			}
			r->reserved = c.reserve;
			in->kv->reserved += c.reserve;
		}
		wq_remove(s, q, id);
		if (q->consumers > 1)
			cut_consumers(s, q, true); /* a new head: it may fit elsewhere */
		admit(s, in, id, RS_PREFILL);
		in->pre[in->n_pre++] = id;
		if (o.hit)
			pc_ref(s, in, r, o.g, o.hit);
		if (r->preemptions)
			kv_resume(s, in, r, id, o.own);
		if (o.hit || o.own) {
			r->computed = (int32_t)o.computed;
			s->prefix_hit_tokens += o.computed;
		}
		kv_take(s, in, r, o.need);
		if (o.chunk > 0)
			in->items[in->n_items++] = (struct pre_item){id, o.chunk, 0};
		s->batch_lens[nb++] = (uint32_t)s->spec[id].prompt_tokens;
		budget -= o.chunk;
		if (!q->bsm)
			continue;
		/* A controller that draws from buckets forms its batch from one bucket; other
		 * picks move on to the next bucket when one empties. */
		if (!ctl->buckets && k >= 0 && bsm_peek(q->bsm, (size_t)k) < 0)
			k = wq_pick(s, q);
	}
	in->view.n = nb; /* the requests it admitted (on_step_done) */
	if (nb)
		waste_acc_add_lens(&s->batch_waste, s->batch_lens, nb);
	return budget;
}

/* Admits from IN's queue, then, when task-aware, offline requests into what is left. */
static inline void admit_waiting(struct sim *s, struct lane *in, int64_t budget)
{
	budget = admit_from(s, in, in->q, 0, budget);
	if (s->p.task_aware && in->q == &s->queue[Q_NEW])
		admit_from(s, in, &s->queue[Q_OFFLINE], 1, budget);
}

/* Admits transferred requests into a decode instance. */
static void admit_transferred(struct sim *s, struct lane *in)
{
	struct waitq *q = in->q;
	while (lane_has_slot(s, in) && q->h.n) {
		int32_t id = ih_top(&q->h);
		struct req *r = &s->r[id];
		/* Its KV cache plus the slot its first decode step writes (allocated when the step
		 * is scheduled, as for every decode). */
		int32_t need = blocks_for(s, (int64_t)r->computed + 1);
		if (need > in->kv->free)
			break;
		ih_remove(&q->h, id);
		if (q->consumers > 1)
			cut_consumers(s, q, true); /* a new head: it may fit elsewhere */
		admit(s, in, id, RS_DECODE);
		kv_take(s, in, r, need);
		dec_join(s, in, id);
		/* Its next token ends this step: the gap since its first token (prefill instance)
		 * holds the transfer and the wait (engine_update). */
		in->late[in->n_late++] = s->now - r->t_last_tok;
	}
}

/* Submits the step's passes starting at T; returns the end time.  For a run of decode steps
 * (in->step_k > 1), *PASS_NS is the device time of one of its steps (its one pass). */
static int64_t submit(struct sim *s, struct lane *in, int64_t t, bool preempted,
		      int64_t *pass_ns)
{
	in->step_dec = in->n_dec;
	in->step_k = 0;
	in->itl_gi = -1;
	if (s->p.unified) {
		/* One pass of every token: (query, shared blocks, unique blocks, causal), as
		 * create_unified_batch builds it (kernel_unified.c). */
		int32_t real[4];
		if (s->p.one_forward)
			forward_shape(s, in, real, &in->ua_logits);
		else
			unified_shape(s, in, real, &in->ua_logits);
		int64_t tokens = real[0];
		for (size_t j = 0; j < in->n_items; j++) {
			struct req *r = &s->r[in->items[j].id];
			if (r->t_sched < 0)
				r->t_sched = t;
		}
		int64_t compile_ns;
		int32_t gi = pad_shape(s, in, PHASE_UNIFIED, real, &compile_ns);
		int64_t k = 1;
		if (!in->n_items && !preempted && !compile_ns && in->n_dec && pipe_jumps_ok(s, in) &&
		    !in->lag_blocked)
			k = decode_run_length(s, in, t, in->owner->stages == 1 ? step_span(s, in, s->graphs[gi].cost_ns)
						   : pipe_step_dt(s, in, gi, s->graphs[gi].v[0]));
		*pass_ns = account_pass(s, in, PHASE_UNIFIED, real, gi, compile_ns, tokens, 0, t, k);
		t += compile_ns + k * *pass_ns;
		in->step_k = in->n_dec ? k : 0;
		if (!in->n_items && !s->p.step_by_step)
			in->itl_gi = gi;
		return t;
	}
	/* Prefill passes grouped and shaped as vllm-gaudi does (sim/kernel_prefill.c). */
	for (size_t i = 0, end; i < in->n_items; i = end) {
		int32_t real[4];
		end = prefill_group(s, in, i, real);
		int64_t tokens = 0;
		for (size_t j = i; j < end; j++) {
			struct req *r = &s->r[in->items[j].id];
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
		/* Contiguous PA reads cache[:highest block id + 1] (sim/kernel_defrag.c). */
		int32_t nb = s->p.contiguous_pa ? kv_decode_span(in) : (int32_t)in->dec_blocks;
		int32_t real[4] = {in->n_dec, 1, nb, 0};
		int64_t compile_ns;
		int32_t gi = pad_shape(s, in, PHASE_DECODE, real, &compile_ns);
		int64_t k = 1;
		if (!in->n_items && !preempted && !compile_ns && pipe_jumps_ok(s, in) &&
		    !in->lag_blocked)
			k = decode_run_length(s, in, t, in->owner->stages == 1 ? step_span(s, in, s->graphs[gi].cost_ns)
						   : pipe_step_dt(s, in, gi, s->graphs[gi].v[0]));
		*pass_ns = account_pass(s, in, PHASE_DECODE, real, gi, compile_ns, in->n_dec, nb,
					t, k);
		t += compile_ns + k * *pass_ns;
		in->step_k = k;
		if (!in->n_items && !s->p.step_by_step)
			in->itl_gi = gi;
	}
	return t;
}

/* Whether nothing waits where IN admits from (its queue, and the offline requests when
 * task-aware): admission would change nothing (an empty plain queue returns before any
 * effect; buckets may adjust on every attempt, so they always try). */
static bool nothing_queued(const struct sim *s, const struct lane *in)
{
	const struct waitq *off = &s->queue[Q_OFFLINE];
	return !in->q->bsm && !in->q->h.n &&
	       (in->role == ROLE_DECODE || !s->p.task_aware || in->q != &s->queue[Q_NEW] ||
		(!off->bsm && !off->h.n));
}

/* Schedules IN's next step at now (its passes submitted, the lane busy until *END); false when
 * it has nothing to run. */
static bool schedule(struct sim *s, struct lane *in, int64_t *end)
{
	if (pipe_lane_lost(in))
		return false; /* a microbatch slot the atomic loop lost */
	bool preempted = false;
	const int32_t B = s->p.block_size;

	/* 1. Decodes: each writes one KV slot; a request starting a new block allocates it. */
	while (in->cross_at.n && sq_top_key(&in->cross_at) <= in->G) {
		int32_t id = sq_top(&in->cross_at);
		if (!make_room(s, in, id, 1, &preempted))
			continue;
		kv_take(s, in, &s->r[id], 1);
		kv_ids_decode(s, in, id, 1, s->r[id].blocks - 1);
		in->dec_blocks++;
		int64_t next = sq_top_key(&in->cross_at) + B;
		if (needs_block(s, &s->r[id], id, next))
			sq_update(&in->cross_at, id, next);
		else
			sq_remove(&in->cross_at, id);
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
		in->items[in->n_items++] = (struct pre_item){id, chunk, 0};
		budget -= chunk;
		i++;
	}
	/* BUDGET is what is left of the step's tokens unless this step preempted (a decode
	 * preempted leaves more), and then nothing is admitted. */

	/* 3. Queued requests, unless this step preempted (as vLLM V1).  With async scheduling
	 * a request that arrived during the step just ended waits one step more, unless this
	 * step would otherwise be empty (sim/kernel_host.c). */
	in->lag_blocked = false;
	if (s->steps_told) { /* for steps_done */
		in->view_set = false;
		in->closed_by[0] = in->closed_by[1] = -1;
		in->seen_until = in->lag ? in->sched_cutoff : s->now;
	}
	if (!preempted && !nothing_queued(s, in)) {
		if (in->role == ROLE_DECODE)
			admit_transferred(s, in);
		else
			admit_waiting(s, in, budget);
		if (!in->n_items && !in->n_dec && in->lag_blocked) {
			in->lag = in->lag_blocked = false;
			admit_waiting(s, in, budget);
		}
	}
	if (s->p.pp_prefill_chunks) { /* 4. further chunks of prefills in flight elsewhere */
		budget = s->p.max_num_batched_tokens - in->n_dec;
		for (size_t i = 0; i < in->n_items; i++)
			budget -= in->items[i].chunk;
		pipe_take_chunks(s, in, budget);
	}
	in->lag = false;

	if (!in->n_items && !in->n_dec) {
		in->busy = false;
		pipe_after_schedule(s, in, 0);
		return false;
	}
	struct instance *grp = in->owner;
	if (grp->stages > 1) {
		cut_sibling_runs(s, in);
		pipe_begin(s, in);
	}
	int64_t t0 = s->now;
	if (grp->stages > 1 && grp->stage_free[0] > t0)
		t0 = grp->stage_free[0]; /* the microbatch enters the first stage when it frees */
	in->host_ns = step_host_ns(s, in);
	/* The defragmenter's swaps run first (sim/kernel_defrag.c); a step that swapped is not
	 * repeated as a run.  A pipelined instance swaps on every stage at once. */
	int64_t defrag_ns = kv_defrag(s, in);
	if (grp->stages > 1)
		in->mb_pre += defrag_ns;
	int64_t pass_ns = 0;
	int64_t t = submit(s, in, t0 + (grp->stages > 1 ? 0 : defrag_ns),
			   preempted || in->step_swaps, &pass_ns);
	if (s->p.pp_prefill_chunks)
		pipe_chunks_submitted(s, in);
	int64_t work = t - t0;
	int64_t k = in->step_k ? in->step_k : 1;
	if (grp->stages > 1) {
		/* Pipeline parallelism: through the stages (kernel_pipeline.c), the step's host
		 * time charged before the microbatch enters the first stage. */
		in->mb_pre += in->host_ns;
		t = pipe_walk(s, in, k, &work);
		in->step_dt = k == 1 ? t - s->now : (t - s->now) / k;
		/* One step of a run lasts step_dt; the whole event lasts step_dt * k. */
		if (in->step_dt * k != t - s->now)
			BUG("uneven decode run");
	} else {
		/* Each step is its device passes (starting at T0 = now) with its host time
		 * (sim/kernel_host.c); a run's passes are identical, without compile: the whole
		 * event lasts step_dt * k. */
		in->step_dt = step_span(s, in, k == 1 ? t - t0 : pass_ns);
		t = t0 + k * in->step_dt;
	}
	/* Busy time is the compute of the step (summed over stages, it is card time / stages). */
	in->busy_ns += work;
	s->m.busy_ns += work;
	s->m.steps += k;
	in->steps += k;
	/* The monitor window counts the first step now, the others of a run as they start
	 * (on_monitor, engine_update). */
	s->mon_step_ns += in->step_dt;
	s->mon_steps++;
	in->step_t0 = s->now;
	in->mon_counted = 1;
	in->busy = true;
	pipe_after_schedule(s, in, k);
	*end = t;
	return true;
}

/* Whether the step IN has in flight, ending at T, may end at once, without the event queue
 * (the fast path): nothing can happen before it ends, so that nothing sees the lane's state
 * meanwhile and what it does at T is what the event loop would do.  No event is queued at or
 * before T (another lane's step, a transfer, a monitor sample, a timer), the next arrival
 * comes later, the stop time is not passed, and the lane would schedule again as soon as its
 * step ends (an instance of one lane without pipeline stages: run_events). */
static bool ends_now(const struct sim *s, const struct lane *in, int64_t t)
{
	/* first_at() after every class: nothing is queued at or before T. */
	return in->chains && !s->stepping && !in->schedule_pending && t <= s->p.stop_ns &&
	       first_at(s, t, EVC_MONITOR);
}

void engine_schedule(struct sim *s, struct lane *in)
{
	int64_t t;
	if (!schedule(s, in, &t))
		return;
	/* Steps that end before anything else happens follow each other here, as the event loop
	 * would process them (run_events: the pass hook's passes before the time, the step's
	 * end, the lane's schedule at once unless something comes first), counted as its
	 * events. */
	while (ends_now(s, in, t)) {
		advance_to(s, t);
		s->work_ns = t;
		engine_update(s, in);
		if (!schedules_at_once(s, in)) {
			/* Its end let something in first (a closed-loop client's next request). */
			lane_kick(s, in);
			return;
		}
		assert(sim_check_invariants(s));
		s->events++;
		if (!schedule(s, in, &t))
			return;
	}
	push_pass_done(s, in, t);
}

/* ---- the engine: update ------------------------------------------------------------------ */

/* N inter-token gaps of GAP ns of IN's step.  The fast path counts those of a decode-only step
 * in its graph while they repeat (struct graph), the set of gaps being large and scattered in
 * memory when the graphs are many (no bucketing); the step-by-step reference adds each to the
 * metrics at once. */
static void count_gaps(struct sim *s, const struct lane *in, int64_t gap, int64_t n)
{
	if (in->itl_gi < 0) {
		metrics_itl(&s->m, gap, n);
		return;
	}
	struct graph *g = &s->graphs[in->itl_gi];
	if (g->itl_count && g->itl_gap != gap) {
		metrics_itl(&s->m, g->itl_gap, g->itl_count);
		g->itl_count = 0;
	}
	g->itl_gap = gap;
	g->itl_count += n;
}

static inline void finish(struct sim *s, struct lane *in, int32_t id)
{
	struct req *r = &s->r[id];
	const struct req_spec *q = &s->spec[id];
	r->generated = q->output_tokens;
	r->state = RS_DONE;
	run_remove(s, in, id);
	kv_release(s, in, r, id);
	in->kv->reserved -= r->reserved;
	r->reserved = 0;
	s->finished++;
	metrics_request(&s->m, q->arrival_ns, r->t_first, s->now, q->prompt_tokens,
			q->output_tokens);
	if (s->hooks.request_done)
		s->hooks.request_done(s->hooks.ctx, s, id);
	client_next(s); /* a closed-loop client sends its next request */
}

/* A prefill instance hands the request's KV cache to the decode instances. */
static void start_transfer(struct sim *s, struct lane *in, int32_t id)
{
	struct req *r = &s->r[id];
	run_remove(s, in, id);
	in->kv->reserved -= r->reserved;
	r->reserved = 0;
	r->state = RS_TRANSFER;
	int64_t dt = s->costs.transfer(s->costs.ctx, r->computed);
	s->transfer_ns_total += dt;
	r->transfer_ns += dt;
	r->prefill_inst = (int16_t)in->idx;
	s->transfers++;
	s->transferring++;
	evq_push(&s->q, s->now + dt, EVC_ARRIVAL, EV_TRANSFER, id);
}

/* The K steps IN just ran, as its batch controller saw them or would have: the first
 * step's view (or one as it started, when it admitted from no queue), each later step of a
 * run the view it would have had.  Each skipped step is checked against the policies'
 * contract (kernel_contract.c) before the controller's declared state learns of it.  Out
 * of line: the engine's update, on the hot path, calls it only when it has work. */
static __attribute__((noinline)) void steps_done(struct sim *s, struct lane *in, int64_t k)
{
	const struct batch_policy *ctl = s->p.batching;
	bool check = s->check_contract && k > 1 && contract_applies(s, in);
	if (!ctl->on_step_done && !check)
		return;
	for (int64_t j = 0; j < k; j++) {
		struct batch_view v = in->view;
		int64_t t = in->step_t0 + j * in->step_dt;
		if (j > 0 || !in->view_set)
			batch_view_set(s, in, t, in->steps - k + j,
				       j == 0 ? in->seen_until : host_lags(in) ? t - in->step_dt : t,
				       &v);
		if (j > 0 && check)
			contract_check_step(s, in, j, &v);
		if (ctl->on_step_done)
			ctl->on_step_done(in->ctl_state, &v);
	}
}

void engine_update(struct sim *s, struct lane *in)
{
	int64_t k = in->step_k;
	if (s->steps_told)
		steps_done(s, in, k ? k : 1);
	in->last_end = s->now;
	if (k > in->mon_counted)
		mon_count_steps(s, in, k);
	host_step_done(s, in);
	/* Decoders: k tokens each; each token's gap is one step. */
	if (k) {
		kv_decode_done(s, in, k);
		/* Each decoder's gap is one step, but a late joiner's first (in->late). */
		for (size_t i = 0; i < in->n_late; i++)
			metrics_itl(&s->m, in->late[i] + in->step_dt, 1);
		int64_t gaps = (int64_t)in->step_dec * k - (int64_t)in->n_late;
		in->n_late = 0;
		if (gaps > 0)
			count_gaps(s, in, in->step_dt, gaps);
		in->G += k;
		while (in->done_at.n && sq_top_key(&in->done_at) < in->G) {
			int32_t id = sq_top(&in->done_at);
			dec_leave(s, in, &s->r[id], id);
			finish(s, in, id);
		}
	} else if (in->n_late) {
		BUG("%zu requests joined a step without decodes", in->n_late);
	}
	/* Prefills: computed chunks; a completed prefill samples a token. */
	if (s->p.pp_prefill_chunks)
		pipe_chunks_returned(s, in);
	for (size_t i = 0; i < in->n_items; i++) {
		int32_t id = in->items[i].id;
		struct req *r = &s->r[id];
		r->computed += in->items[i].chunk;
		pc_donate(s, in, r, id);
		if (r->computed < r->target)
			continue;
		pre_remove(in, id);
		s->preempt_since_prefill = 0;
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
	in->returned = true;
}
