/*
 * kernel_pipeline: pipeline parallelism inside one serving instance (cluster.pp > 1): the
 * microbatch's path through the stages, per-stage busy time, the atomic loop's empty
 * microbatches, the virtual engines' KV fragmentation, and the decode-run fast path for a
 * pipeline that runs one microbatch alone.
 *
 * A step of a lane is one microbatch.  Its passes are noted as they are accounted
 * (pipe_note_pass): each stage's share of every pass (costs.stage, cached per graph), the
 * per-pass overhead and compiles (charged once per microbatch, on the host before the first
 * stage: not split over the stages), and the padded tokens whose activations go from stage to
 * stage.  pipe_walk then moves the microbatch through the stages: stage j starts when the
 * microbatch has arrived and the stage has finished the previous microbatch, and the
 * activations take costs.activation to reach stage j + 1.
 *
 * Without costs.stage (unit tests with ad-hoc costs) a pass's time is split evenly over the
 * stages (the remainder on the last), with no overhead apart and no transfer.
 */
#include "sim/kernel_int.h"

#include <stdlib.h>
#include <string.h>

#include "policies/loop.h"

void pipe_init(struct sim *s)
{
	for (int g = 0; g < s->n_instances; g++) {
		struct instance *grp = &s->instances[g];
		grp->stage_busy = xcalloc((size_t)grp->stages, sizeof *grp->stage_busy);
		grp->active_since = -1;
	}
	for (int i = 0; i < s->n_lanes; i++) {
		struct lane *in = &s->lanes[i];
		in->mb_stage = xcalloc((size_t)in->owner->stages, sizeof *in->mb_stage);
	}
	if (s->p.pp_prefill_chunks)
		s->inflight = xcalloc(s->n ? s->n : 1, sizeof *s->inflight);
}

void pipe_release(struct sim *s)
{
	for (int g = 0; g < s->n_instances; g++)
		free(s->instances[g].stage_busy);
	for (int i = 0; i < s->n_lanes; i++)
		free(s->lanes[i].mb_stage);
	free(s->stage_cost);
	free(s->inflight);
}

/* Stage J's share of graph GI (cached: -1 = not computed yet). */
static int64_t stage_cost(struct sim *s, int32_t gi, int j)
{
	int pp = s->instances[0].stages;
	if ((size_t)gi >= s->stage_cost_n) {
		size_t n = s->n_graphs > (size_t)gi + 1 ? s->n_graphs : (size_t)gi + 1;
		s->stage_cost = xrealloc(s->stage_cost, n * (size_t)pp * sizeof *s->stage_cost);
		for (size_t k = s->stage_cost_n * (size_t)pp; k < n * (size_t)pp; k++)
			s->stage_cost[k] = -1;
		s->stage_cost_n = n;
	}
	int64_t *c = &s->stage_cost[(size_t)gi * (size_t)pp + (size_t)j];
	if (*c < 0) {
		const struct graph *g = &s->graphs[gi];
		if (s->costs.stage)
			*c = s->costs.stage(s->costs.ctx, g->phase, g->v, j);
		else
			*c = g->cost_ns / pp + (j == pp - 1 ? g->cost_ns % pp : 0);
	}
	return *c;
}

static int64_t activation(const struct sim *s, int64_t tokens)
{
	return s->costs.activation ? s->costs.activation(s->costs.ctx, tokens) : 0;
}

static int64_t overhead(const struct sim *s)
{
	return s->costs.stage && s->costs.overhead ? s->costs.overhead(s->costs.ctx) : 0;
}

void pipe_begin(struct sim *s, struct lane *in)
{
	(void)s;
	memset(in->mb_stage, 0, (size_t)in->owner->stages * sizeof *in->mb_stage);
	in->mb_pre = in->mb_tokens = 0;
}

void pipe_note_pass(struct sim *s, struct lane *in, int32_t gi, int64_t compile_ns,
		    int64_t padded_tokens)
{
	for (int j = 0; j < in->owner->stages; j++)
		in->mb_stage[j] += stage_cost(s, gi, j);
	in->mb_pre += compile_ns + overhead(s);
	in->mb_tokens += padded_tokens;
}

/* The latency of one microbatch through an empty pipeline, and each stage's end offset. */
static int64_t latency_alone(const struct sim *s, const struct lane *in, int64_t *end_off)
{
	int64_t at = in->mb_pre, x = activation(s, in->mb_tokens);
	int pp = in->owner->stages;
	for (int j = 0; j < pp; j++) {
		at += in->mb_stage[j];
		if (end_off)
			end_off[j] = at;
		if (j < pp - 1)
			at += x;
	}
	return at;
}

int64_t pipe_walk(struct sim *s, struct lane *in, int64_t k, int64_t *work)
{
	struct instance *grp = in->owner;
	int pp = grp->stages;
	int64_t x = activation(s, in->mb_tokens);
	int64_t at = s->now + in->mb_pre;
	*work = in->mb_pre;
	if (k > 1) {
		/* A run of identical steps through an empty pipeline (pipe_jumps_ok). */
		int64_t off[PIPE_MAX_STAGES];
		int64_t L = latency_alone(s, in, off);
		for (int j = 0; j < pp; j++) {
			grp->stage_free[j] = s->now + (k - 1) * L + off[j];
			grp->stage_busy[j] += k * in->mb_stage[j];
			*work += in->mb_stage[j];
		}
		*work *= k;
		return s->now + k * L;
	}
	for (int j = 0; j < pp; j++) {
		if (grp->stage_free[j] > at)
			at = grp->stage_free[j];
		at += in->mb_stage[j];
		grp->stage_free[j] = at;
		grp->stage_busy[j] += in->mb_stage[j];
		*work += in->mb_stage[j];
		if (j < pp - 1)
			at += x;
	}
	return at;
}

/* Whether IN runs alone in its pipeline until its run ends: the other lanes hold no request
 * and no microbatch, and every stage is free, so each step of a decode run takes the same
 * time and nothing else enters the stages unless an event cuts the run (an arrival or a
 * preempted request entering the shared queue: cut_consumers). */
bool pipe_jumps_ok_(const struct sim *s, const struct lane *in)
{
	const struct instance *grp = in->owner;
	for (int l = 0; l < grp->lanes; l++) {
		const struct lane *o = &s->lanes[grp->first + l];
		if (o != in && (o->busy || o->n_run))
			return false;
	}
	for (int j = 0; j < grp->stages; j++)
		if (grp->stage_free[j] > s->now)
			return false;
	return true;
}

int64_t pipe_step_dt(struct sim *s, struct lane *in, int32_t gi, int64_t padded_tokens)
{
	/* One decode-only step of graph GI through an empty pipeline (its passes are noted once
	 * more by account_pass; this only looks). */
	int64_t t = overhead(s) + in->host_ns + activation(s, padded_tokens) * (in->owner->stages - 1);
	for (int j = 0; j < in->owner->stages; j++)
		t += stage_cost(s, gi, j);
	return t;
}

void pipe_cut(struct sim *s, struct lane *in, int64_t d)
{
	struct instance *grp = in->owner;
	int64_t L = in->step_dt, per_step = in->mb_pre;
	for (int j = 0; j < grp->stages; j++) {
		grp->stage_free[j] -= d * L;
		grp->stage_busy[j] -= d * in->mb_stage[j];
		per_step += in->mb_stage[j];
	}
	/* cut_run took back d steps of step_dt; a step's busy time is its compute. */
	in->busy_ns += d * (L - per_step);
	s->m.busy_ns += d * (L - per_step);
	s->empty_microbatches -= d * in->mb_empties;
}

void pipe_after_schedule_(struct sim *s, struct lane *in, int64_t k, bool returned)
{
	struct instance *grp = in->owner;
	/* The atomic loop's executor queue holds pp microbatches: when one returns, the slots
	 * not refilled with real work are filled with empty ones (the RFC's Option 1).  Every
	 * step of a decode run after its first returns a microbatch too. */
	int busy = 0;
	for (int l = 0; l < grp->lanes; l++)
		busy += s->lanes[grp->first + l].busy;
	if (busy == 0)
		return; /* nothing in flight: the instance is idle, its loop waits for requests */
	int64_t e = grp->stages - busy;
	int64_t steps = in->busy ? (returned ? k : k - 1) : returned;
	if (s->p.pp_lose_empty_slots) {
		/* No empty microbatch is pushed: the executor queue shrinks by the slots that
		 * stay empty now, and nothing refills them. */
		if (steps)
			for (int l = 0; l < grp->lanes; l++) {
				struct lane *o = &s->lanes[grp->first + l];
				if (!o->busy && !o->n_run && !o->lost) {
					o->lost = true;
					s->lost_slots++;
				}
			}
		return;
	}
	in->mb_empties = in->busy ? e : 0;
	s->empty_microbatches += steps * e;
}

/* ---- the async loop's prefill chunks in several microbatches ------------------------------
 *
 * The RFC's last milestone: a request in its prefill may have chunks in several in-flight
 * microbatches, because a later stage does not need the whole chunk first: the next chunk's
 * stage j needs only the previous chunk's stage j (its KV), and stages take microbatches in
 * order.  A lane that schedules takes further chunks of the prefills its busy sibling lanes
 * run, in lane then admission order, within its token budget and the free KV blocks (never
 * preempting for them); the request moves to it (its running and prefill lists), so that its
 * last chunk, which returns last, completes it where it runs.  A decode request stays in one
 * microbatch. */

int64_t pipe_take_chunks(struct sim *s, struct lane *in, int64_t budget)
{
	const struct instance *grp = in->owner;
	for (int l = 0; l < grp->lanes && budget > 0; l++) {
		struct lane *o = &s->lanes[grp->first + l];
		if (o == in || !o->busy)
			continue;
		for (size_t i = 0; i < o->n_pre && budget > 0;) {
			int32_t id = o->pre[i];
			struct req *r = &s->r[id];
			int64_t start = (int64_t)r->computed + s->inflight[id];
			int64_t chunk = r->target - start;
			if (chunk > budget)
				chunk = budget;
			int32_t need = blocks_for(s, start + chunk) - r->shared - r->blocks;
			if (chunk <= 0 || need > in->kv->free || in->n_items == (size_t)s->p.max_num_seqs) {
				i++;
				continue;
			}
			if (need > 0)
				kv_take(s, in, r, need);
			/* the request moves to IN: out of O's lists (pre keeps admission order) */
			run_del(s, o, id);
			memmove(&o->pre[i], &o->pre[i + 1], (o->n_pre - i - 1) * sizeof *o->pre);
			o->n_pre--;
			run_add(s, in, id);
			in->pre[in->n_pre++] = id;
			r->lane = (int16_t)in->idx;
			in->items[in->n_items++] =
				(struct pre_item){id, (int32_t)chunk, s->inflight[id]};
			budget -= chunk;
		}
	}
	return budget;
}

void pipe_chunks_submitted(struct sim *s, struct lane *in)
{
	bool more = false;
	for (size_t i = 0; i < in->n_items; i++) {
		int32_t id = in->items[i].id;
		s->inflight[id] += in->items[i].chunk;
		more |= s->r[id].computed + s->inflight[id] < s->r[id].target;
	}
	if (!more)
		return;
	/* a prefill with tokens left: the idle slots may take its next chunk now */
	const struct instance *grp = in->owner;
	for (int l = 0; l < grp->lanes; l++)
		lane_kick(s, &s->lanes[grp->first + l]);
}

void pipe_chunks_returned(struct sim *s, struct lane *in)
{
	for (size_t i = 0; i < in->n_items; i++)
		s->inflight[in->items[i].id] -= in->items[i].chunk;
}

void pipe_preempt(struct sim *s, const struct lane *in, int32_t need)
{
	if (!s->lane_q)
		return;
	/* Virtual engines: blocks another engine has free while this one preempts. */
	int64_t elsewhere = 0;
	bool fits = false;
	for (int i = 0; i < s->n_lanes; i++)
		if (s->lanes[i].kv != in->kv) {
			elsewhere += s->lanes[i].kv->free;
			fits |= s->lanes[i].kv->free >= need;
		}
	s->frag_free_blocks += elsewhere;
	s->frag_preemptions += fits;
}

size_t pipe_in_flight(const struct sim *s)
{
	size_t n = 0;
	for (int i = 0; i < s->n_lanes; i++)
		n += s->lanes[i].busy;
	return n;
}

void pipe_finish(struct sim *s)
{
	const struct instance *g0 = &s->instances[0];
	if (g0->stages == 1)
		return;
	struct metrics *m = &s->m;
	m->pp_stages = g0->stages;
	m->stage_busy_ns = xcalloc((size_t)g0->stages, sizeof *m->stage_busy_ns);
	m->stage_active_ns = 0;
	for (int g = 0; g < s->n_instances; g++) {
		const struct instance *grp = &s->instances[g];
		for (int j = 0; j < grp->stages; j++)
			m->stage_busy_ns[j] += grp->stage_busy[j];
		m->stage_active_ns += grp->active_ns +
				      (grp->active_since >= 0 ? s->now - grp->active_since : 0);
	}
	m->pp_instances = s->n_instances;
	m->empty_microbatches = s->empty_microbatches;
	m->lost_slots = s->lost_slots;
	m->frag_preemptions = s->frag_preemptions;
	m->frag_free_blocks = s->frag_free_blocks;
}
