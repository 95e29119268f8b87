/*
 * kernel: the event loop (arrivals, pass completions, schedules, transfers, monitor samples,
 * bucket adjustments), the end-of-run checks and read access to the state.  See kernel.h for
 * the model and kernel_int.h for the files of the kernel.
 */
#include "sim/kernel_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "policies/loop.h"

static void on_transfer(struct sim *s, int32_t id)
{
	struct req *r = &s->r[id];
	struct lane *from = &s->lanes[r->lane];
	kv_release(s, from, r, id);
	r->lane = -1;
	r->state = RS_XFER_WAIT;
	s->transferring--;
	/* Decode instances take transferred requests first come, first served. */
	cut_consumers(s, &s->queue[Q_TRANSFERRED], false);
	ih_push(&s->queue[Q_TRANSFERRED].h, id, s->now);
	lane_kick(s, from);
	wq_kick(s, &s->queue[Q_TRANSFERRED]);
}

static void on_monitor(struct sim *s)
{
	/* The steps of runs in flight that have started by now (as the reference submits
	 * them one by one, a step starting now included). */
	for (int i = 0; i < s->n_lanes; i++) {
		struct lane *in = &s->lanes[i];
		if (in->busy && in->step_k > in->mon_counted)
			mon_count_steps(s, in, (s->now - in->step_t0) / in->step_dt + 1);
	}
	struct monitor_rec m = {0};
	m.t_ns = s->now;
	m.waiting = sim_waiting(s);
	m.running = sim_running(s);
	m.transferring = s->transferring;
	for (int k = 0; k < s->n_pools; k++) {
		m.kv_used += s->pools[k].used;
		m.kv_total += s->pools[k].total;
		m.kv_max_id += kv_max_id(&s->pools[k]);
	}
	double iv = (double)s->p.monitor_ns / 1e9;
	m.arrival_rate = (double)s->mon_arrivals / iv;
	size_t nw = sim_waiting(s) - s->queue[Q_TRANSFERRED].h.n;
	m.mean_waiting_len = nw ? (double)s->wait_prompt_tokens / (double)nw : 0;
	m.batch_latency_ms = s->mon_steps ? (double)s->mon_step_ns / 1e6 / (double)s->mon_steps : 0;
	m.buckets = s->queue[Q_NEW].bsm ? bsm_nbuckets(s->queue[Q_NEW].bsm) : 1;
	m.microbatches = pipe_in_flight(s);
	if (s->hooks.monitor)
		s->hooks.monitor(s->hooks.ctx, s, &m);
	s->mon_arrivals = 0;
	s->mon_step_ns = s->mon_steps = 0;
}

/* Whether the periodic ticks go on: while requests are unfinished and something besides the
 * ticks is left to happen (an event, an arrival to come).  A run stuck with unfinished
 * requests and nothing else to happen ends, and sim_finish() reports it, instead of ticking
 * for ever. */
static bool work_left(const struct sim *s)
{
	return s->finished < s->n && (s->q.n > s->ticks || s->arrival_held);
}

/* Whether the held arrival (kernel_client.c) comes before the queue's top TOP, in the
 * queue's order (time, class, sequence). */
static bool arrival_first(const struct sim *s, const struct event *top)
{
	if (!s->arrival_held)
		return false;
	if (!top || s->arrival_t != top->t_ns)
		return !top || s->arrival_t < top->t_ns;
	return top->cls != EVC_ARRIVAL ? top->cls > EVC_ARRIVAL : s->arrival_seq < top->seq;
}

/* An engine's schedule found a livelock (kernel_engine.c): the run stops after the event
 * (ONE: it was processed; a later call finds the run stopped). */
static bool stop_livelocked(struct sim *s, bool one)
{
	s->work_ns = s->now;
	assert(sim_check_invariants(s));
	return one;
}

/* Processes the next event (ONE), or every event until none is left before the stop time;
 * returns whether an event was processed (ONE).  One loop for both: sim_run() makes no call
 * per event. */
static bool run_events(struct sim *s, bool one)
{
	if (s->livelock)
		return false; /* stopped: requests only preempt each other */
	for (;;) {
		struct event e;
		const struct event *top = evq_peek(&s->q);
		if (arrival_first(s, top)) {
			if (s->arrival_t > s->p.stop_ns)
				return false;
			e = (struct event){.t_ns = s->arrival_t, .seq = s->arrival_seq,
					   .cls = EVC_ARRIVAL, .kind = EV_ARRIVAL,
					   .arg = (int64_t)s->next_arrival};
			s->arrival_held = false;
		} else {
			if (!top || top->t_ns > s->p.stop_ns)
				return false;
			evq_pop(&s->q, &e);
		}
		if (e.t_ns < s->now)
			BUG("time went backwards");
		if (e.kind == EV_PASS_DONE && e.arg >> 20 != s->lanes[e.arg & 0xfffff].gen) {
			if (one) /* the end of a run that was cut short */
				return true;
			continue;
		}
		advance_to(s, e.t_ns);
		switch (e.kind) {
		case EV_ARRIVAL: {
			int32_t id = (int32_t)e.arg;
			s->r[id].state = RS_WAITING;
			if (s->spec_sent)
				s->spec_sent[id].arrival_ns = s->now; /* its send time (closed loop) */
			if (s->lane_q) {
				/* Virtual engines: the one with the fewest unfinished requests takes it. */
				struct lane *best = NULL;
				for (int i = 0; i < s->n_lanes; i++) {
					struct lane *c = &s->lanes[i];
					if (!best || c->n_run + c->q->h.n < best->n_run + best->q->h.n)
						best = c;
				}
				wq_push(s, best->q, id, false);
				lane_kick(s, best);
			} else {
				struct waitq *q = wq_for(s, id);
				cut_consumers(s, q, false);
				wq_push(s, q, id, false);
			}
			s->arrived++;
			s->mon_arrivals++;
			client_sent(s, id); /* schedules the next arrival (kernel_client.c) */
			if (!s->lane_q)
				wq_kick(s, wq_for(s, id));
			break;
		}
		case EV_PASS_DONE: {
			struct lane *in = &s->lanes[e.arg & 0xfffff];
			engine_update(s, in);
			if (schedules_at_once(s, in)) {
				/* Its schedule event would be the next event: it is processed now. */
				assert(sim_check_invariants(s));
				s->events++;
				engine_schedule(s, in);
				if (s->livelock) /* only a schedule preempts */
					return stop_livelocked(s, one);
				break;
			}
			/* The lane schedules its returned requests again; its idle sibling lanes (empty
			 * microbatch slots) may take waiting work.  The atomic loop builds the next
			 * microbatch before it processes the returned one, so the idle lanes go first
			 * there; the async loop processes the returned microbatch first. */
			bool atomic = s->p.loop->waits_for_oldest && in->owner->lanes > 1;
			if (!atomic)
				lane_kick(s, in);
			for (int l = 0; l < in->owner->lanes; l++)
				if (&s->lanes[in->owner->first + l] != in)
					lane_kick(s, &s->lanes[in->owner->first + l]);
			lane_kick(s, in);
			break;
		}
		case EV_SCHEDULE: {
			struct lane *in = &s->lanes[e.arg];
			in->schedule_pending = false;
			if (!in->busy)
				engine_schedule(s, in);
			if (s->livelock)
				return stop_livelocked(s, one);
			break;
		}
		case EV_TRANSFER:
			on_transfer(s, (int32_t)e.arg);
			break;
		case EV_MONITOR:
			s->ticks--;
			on_monitor(s);
			if (work_left(s)) {
				evq_push(&s->q, s->now + s->p.monitor_ns, EVC_MONITOR, EV_MONITOR, 0);
				s->ticks++;
			}
			break;
		case EV_ADJUST:
			s->ticks--;
			cut_consumers(s, &s->queue[Q_NEW], true);
			wq_adjust(s, &s->queue[Q_NEW]);
			if (s->queue[Q_OFFLINE].bsm)
				wq_adjust(s, &s->queue[Q_OFFLINE]);
			wq_kick(s, &s->queue[Q_NEW]);
			if (work_left(s)) {
				evq_push(&s->q, s->now + s->bsc->adjust_period_ns, EVC_MONITOR, EV_ADJUST, 0);
				s->ticks++;
			}
			break;
		default:
			BUG("unknown event kind %d", e.kind);
		}
		if (e.kind != EV_MONITOR && e.kind != EV_ADJUST)
			s->work_ns = s->now; /* a tick after the last work does not lengthen the run */
		assert(sim_check_invariants(s));
		if (one)
			return true;
	}
}

bool sim_step(struct sim *s)
{
	s->stepping = true; /* one event: no step ends without the queue (engine_schedule) */
	bool more = run_events(s, true);
	s->stepping = false;
	return more;
}

void sim_run(struct sim *s)
{
	run_events(s, false);
}

size_t sim_waiting(const struct sim *s)
{
	size_t n = wq_len(&s->queue[Q_NEW]) + s->queue[Q_TRANSFERRED].h.n + wq_len(&s->queue[Q_OFFLINE]);
	if (s->lane_q)
		for (int i = 0; i < s->n_lanes; i++)
			n += s->lane_q[i].h.n;
	return n;
}

size_t sim_finished(const struct sim *s)
{
	return s->finished;
}

bool sim_livelocked(const struct sim *s)
{
	return s->livelock;
}

size_t sim_running(const struct sim *s)
{
	size_t n = 0;
	for (int i = 0; i < s->n_lanes; i++)
		n += s->lanes[i].n_run;
	return n;
}

bool sim_check_invariants(const struct sim *s)
{
	if (s->arrived != s->finished + sim_waiting(s) + sim_running(s) + s->transferring)
		return false;
	for (int k = 0; k < s->n_pools; k++) {
		const struct kvpool *kv = &s->pools[k];
		if (kv->free + kv->used != kv->total || kv->free < 0 || kv->reserved < 0 ||
		    kv->cached_free > kv->free || kv->cached_free < 0 || !kv_ids_consistent(kv))
			return false;
	}
	for (int i = 0; i < s->n_lanes; i++) {
		const struct lane *in = &s->lanes[i];
		if ((size_t)in->n_dec + in->n_pre != in->n_run)
			return false;
	}
	return true;
}

void sim_finish(struct sim *s)
{
	if (s->n_pend)
		pend_flush(s, INT64_MAX);
	for (size_t i = 0; i < s->n_graphs; i++) /* gaps counted in the graphs (engine_update) */
		if (s->graphs[i].itl_count) {
			metrics_itl(&s->m, s->graphs[i].itl_gap, s->graphs[i].itl_count);
			s->graphs[i].itl_count = 0;
		}
	/* The run ends with its last work, not with the monitor's or the bucket adjustment's
	 * next tick: observing a run does not change its simulated time. */
	s->m.end_ns = s->work_ns;
	if (s->m.end_ns < s->m.last_finish_ns)
		s->m.end_ns = s->m.last_finish_ns;
	s->now = s->m.end_ns; /* the integrals below end there too (sim_now() after the run) */
	/* Utilization is per instance: busy time over instances x simulated time. */
	s->m.busy_ns = 0;
	for (int i = 0; i < s->n_lanes; i++)
		s->m.busy_ns += s->lanes[i].busy_ns;
	s->m.instances = s->n_lanes;
	pipe_finish(s);
	for (int k = 0; k < s->n_pools; k++)  /* the tail of the blocks x time integral */
		pool_used_add(s, &s->pools[k], 0);
	if (!sim_check_invariants(s))
		BUG("conservation violated at the end of the run");
	if (s->livelock)
		bs_warn("the run stopped at %.3f s: %lld preemptions without a prefill completing (the "
			"requests only take each other's KV blocks); %zu of %zu requests unfinished",
			(double)s->now / 1e9, (long long)s->preempt_since_prefill,
			s->n - s->finished, s->n);
	else if (s->p.stop_ns == INT64_MAX) {
		if (s->finished != s->n)
			BUG("%zu of %zu requests finished", s->finished, s->n);
		for (int k = 0; k < s->n_pools; k++)
			if (s->pools[k].used != 0)
				BUG("%lld KV blocks not returned to pool %d",
				    (long long)s->pools[k].used, k);
	}
}

struct sim *sim_new(const struct sim_params *p, const struct req_spec *req, size_t n,
		    struct bucketer *bucketer, const struct bucketserve_cfg *bsc,
		    const struct sim_costs *costs, const struct sim_hooks *hooks)
{
	struct sim *s = xmalloc(sizeof *s);
	sim_init(s, p, req, n, bucketer, bsc, costs, hooks);
	return s;
}

void sim_free(struct sim *s)
{
	if (!s)
		return;
	sim_release(s);
	free(s);
}

void sim_check_contract(struct sim *s, bool on)
{
	s->check_contract = on;
	engine_controller_setup(s);
}

void sim_time_bucketing(struct sim *s, bool on)
{
	s->time_bucketing = on;
}

int64_t sim_now(const struct sim *s)
{
	return s->now;
}

const struct req *sim_req(const struct sim *s, int32_t id)
{
	return &s->r[id];
}

const struct req_spec *sim_spec(const struct sim *s, int32_t id)
{
	return &s->spec[id];
}

const struct graph *sim_graphs(const struct sim *s, size_t *n)
{
	*n = s->n_graphs;
	return s->graphs;
}

struct metrics *sim_metrics(struct sim *s)
{
	return &s->m;
}

void sim_stats(const struct sim *s, struct sim_stats *out)
{
	memset(out, 0, sizeof *out);
	out->requests = s->n;
	out->events = s->events;
	out->passes = s->pass_index;
	out->splits = s->splits;
	out->merges = s->merges;
	out->batch_waste = &s->batch_waste;
	const struct bsm *mgr = s->queue[Q_NEW].bsm, *off = s->queue[Q_OFFLINE].bsm;
	if (off && bsm_nsplits(off) + bsm_nmerges(off) > bsm_nsplits(mgr) + bsm_nmerges(mgr))
		mgr = off;
	out->buckets = mgr;
	out->transfers = s->transfers;
	out->transfer_ns_total = s->transfer_ns_total;
	out->instances = s->n_instances;
	out->pipeline_stages = s->instances[0].stages;
	out->prefix_hit_tokens = s->prefix_hit_tokens;
	out->bucketing_wall_s = s->bucketing_wall_s;
	out->nmax_calls = s->nmax_calls;
	out->nmax_sum = s->nmax_sum;
	out->nmax_min = s->nmax_min;
	out->nmax_max = s->nmax_max;
}

uint64_t sim_last_nmax(const struct sim *s)
{
	return s->nmax_last;
}
