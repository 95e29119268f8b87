/*
 * kernel_passes: forward passes: their accounting, the order batches.csv sees them in, and
 * the decode-run fast path (how many identical decode steps one event may cover, and cutting a
 * run short when an event could change its next step).
 */
#include "sim/kernel_int.h"

#include "policies/grouping.h"

#include <stdlib.h>

/* ---- the engine: schedule, submit ----------------------------------------------------------- */

/* ---- batches.csv order: passes are reported in (start, instance) order ---------------------
 *
 * A step's passes are known when it is submitted, a run of identical decode steps all at once;
 * the reference (one event per step) submits them one at a time.  So that the pass hook sees
 * the same passes in the same order either way, submitted passes wait in a heap of pending
 * runs keyed by (start of the next pass, instance) and are reported once simulated time has
 * passed their start: nothing submitted later can start earlier (a step starts at the time it
 * is submitted or later). */

static bool pend_less(const struct pass_pending *a, const struct pass_pending *b)
{
	return a->rec.start_ns < b->rec.start_ns ||
	       (a->rec.start_ns == b->rec.start_ns && a->rec.instance < b->rec.instance);
}

static void pend_push(struct sim *s, const struct pass_pending *pp)
{
	if (s->n_pend == s->cap_pend) {
		s->cap_pend = s->cap_pend ? 2 * s->cap_pend : 16;
		s->pend = xrealloc(s->pend, s->cap_pend * sizeof *s->pend);
	}
	size_t i = s->n_pend++;
	while (i > 0 && pend_less(pp, &s->pend[(i - 1) / 2])) {
		s->pend[i] = s->pend[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->pend[i] = *pp;
}

/* Puts X at position I of the pending heap and sifts it down. */
static void pend_sift_down(struct sim *s, size_t i, const struct pass_pending *x)
{
	for (;;) {
		size_t l = 2 * i + 1, m = l;
		if (l >= s->n_pend)
			break;
		if (l + 1 < s->n_pend && pend_less(&s->pend[l + 1], &s->pend[l]))
			m = l + 1;
		if (!pend_less(&s->pend[m], x))
			break;
		s->pend[i] = s->pend[m];
		i = m;
	}
	s->pend[i] = *x;
}

static void pend_pop(struct sim *s)
{
	if (--s->n_pend)
		pend_sift_down(s, 0, &s->pend[s->n_pend]);
}

/* Reports every pending pass that starts before T.  The order is total: a lane's passes
 * start one after the other, so no two pending entries share (start, instance). */
void pend_flush(struct sim *s, int64_t t)
{
	while (s->n_pend && s->pend[0].rec.start_ns < t) {
		struct pass_pending *top = &s->pend[0];
		if (top->left < 0) /* would report passes without end */
			BUG("pending run of instance %d with %lld passes left", top->rec.instance,
			    (long long)top->left);
		if (top->left == 0) { /* a run cut short before this pass */
			pend_pop(s);
			continue;
		}
		top->rec.index = s->pass_index++;
		s->hooks.pass(s->hooks.ctx, s, &top->rec);
		if (--top->left == 0) {
			pend_pop(s);
			continue;
		}
		/* The next pass of the run: no compile, starts when this one ends (or a pipelined
		 * step later); it goes down the heap from the top. */
		struct pass_pending next = *top;
		next.rec.start_ns += next.rec.compile_ns + next.period_ns;
		next.rec.end_ns = next.rec.start_ns + next.cost_ns;
		next.rec.compile_ns = 0;
		pend_sift_down(s, 0, &next);
	}
}

/* account_pass()'s queueing of the passes for the pass hook (kernel_passes.h). */
void pass_queue(struct sim *s, struct lane *in, int phase, const int32_t real[4], int32_t gi,
		int64_t compile_ns, int64_t real_tokens, int64_t padded_tokens, int64_t start,
		int64_t times, uint64_t run)
{
	const struct graph *g = &s->graphs[gi];
	struct pass_pending pp = {{0, start, start + compile_ns + g->cost_ns, compile_ns, phase,
				   in->idx, {real[0], real[1], real[2], real[3]},
				   {g->v[0], g->v[1], g->v[2], g->v[3]}, real_tokens,
				   padded_tokens, 0, 0},
				  g->cost_ns, times,
				  /* a run's steps follow each other (sim/kernel_host.c); a
				   * pipelined run's through every stage (kernel_pipeline.c) */
				  times <= 1 ? g->cost_ns
				  : in->owner->stages > 1 ? pipe_step_dt(s, in, gi, padded_tokens)
							  : step_span(s, in, g->cost_ns),
				  run};
	if (phase == PHASE_UNIFIED) { /* its logits, padded to max_num_seqs (kernel_unified.c) */
		pp.rec.logits = in->ua_logits;
		/* a GPU forward computes the logits it samples (no padding) */
		pp.rec.bucket_logits = s->p.one_forward ? in->ua_logits : s->p.max_num_seqs;
	}
	pend_push(s, &pp);
}

/* Whether an arrival during a run of decode steps could change what the next step does, as
 * the policies declare it: not when every sequence slot is taken, nor while a batch
 * controller that forms batches only on an idle instance runs one, nor behind a blocked queue
 * whose order serves arrivals after every waiting request, unless the batch controller reads
 * the waiting queue (BV_WAITING: the arrival changes its view). */
static inline bool arrivals_matter(const struct sim *s, const struct lane *in)
{
	/* A pipelined lane runs alone (pipe_jumps_ok): an arrival may start a microbatch in an
	 * idle sibling lane, which shares the stages. */
	if (in->owner->stages > 1)
		return true;
	if (s->p.batching->idle_only && in->n_run > 0)
		return false;
	size_t queued = wq_len(in->q) + (s->p.task_aware ? wq_len(&s->queue[Q_OFFLINE]) : 0);
	return lane_has_slot(s, in) && !(in->fifo_closed && queued > 0);
}

/* Whether a queue head that cannot join IN keeps IN's queue closed to later arrivals (struct
 * lane's fifo_closed): a blocked head stays blocked while the instance runs identical steps,
 * when every queue it admits from serves arrivals after every waiting request (a FIFO
 * order), no other instance drains the queue meanwhile, and the batch controller does not
 * read the waiting queue. */
static bool fifo_closed(const struct sim *s, const struct lane *in)
{
	return in->q->order->fifo && (!s->p.task_aware || s->queue[Q_OFFLINE].order->fifo) &&
	       in->q->consumers == 1 && !(s->p.batching->reads & BV_WAITING);
}

/* Whether a request entering the transferred requests' queue could join IN at its next step:
 * IN has a free slot and the queue is empty, or other decode instances may have drained it
 * (a blocked head stays blocked for IN alone: its free blocks change only at completions and
 * block boundaries, which end a run). */
static bool transfers_matter(const struct sim *s, const struct lane *in)
{
	return lane_has_slot(s, in) && (s->queue[Q_TRANSFERRED].h.n == 0 || s->queue[Q_TRANSFERRED].consumers > 1);
}

/* The earliest time after which an arrival could change what IN's next decode step does, or
 * the stop time (INT64_MAX: none).  Events that cannot be foreseen when the run starts (a
 * transfer's end, a request preempted by another instance, a bucket adjustment) cut the run
 * short when they happen (cut_run). */
static int64_t next_outside_change(const struct sim *s, const struct lane *in, bool *arrival)
{
	int64_t limit = s->p.stop_ns;
	int64_t next = client_next_arrival_ns(s); /* closed loop: maybe only at a completion */
	*arrival = false;
	if (in->role != ROLE_DECODE && next < limit && arrivals_matter(s, in)) {
		limit = next;
		*arrival = true;
	}
	return limit;
}

/* Whether every step of IN adjusts the buckets it admits from, so that no two of its steps
 * are identical: a grouping that adjusts (its `adjusts` declaration) before each batch, on a
 * lane that attempts a batch at every step (not a controller that forms batches only on an
 * idle instance; not a decode instance, which admits transferred requests unadjusted). */
static bool adjusts_every_step(const struct sim *s, const struct lane *in)
{
	return s->p.grouping->adjust && in->q->bsm && in->q->bc.adjust == BUCKETSERVE_ADJUST_BATCH &&
	       !s->p.batching->idle_only && in->role != ROLE_DECODE;
}

/* Whether the batch controller's view changes at every step of IN (it reads the clock or the
 * step index, or keeps a state told of every step: policies/batching.h) while it could be
 * asked: a request waits, a sequence slot is free, and the controller forms batches on a busy
 * instance. */
static bool controller_varies(const struct sim *s, const struct lane *in)
{
	const struct batch_policy *ctl = s->p.batching;
	if (!s->ctl_varies) /* a take() reading BV_CLOCK or BV_STEP, or on_step_done */
		return false;
	size_t queued = wq_len(in->q) + (s->p.task_aware ? wq_len(&s->queue[Q_OFFLINE]) : 0);
	return in->role != ROLE_DECODE && queued > 0 && lane_has_slot(s, in) &&
	       !(ctl->idle_only && in->n_run > 0);
}

/* How many identical decode-only steps of DT, starting at T, can run as one event: up to the
 * next completion (included), the next KV-block boundary (excluded), the first step that
 * could admit an arrival (with async scheduling's lag, the step after the one it arrives in),
 * and the stop time.  1 in the step-by-step reference mode
 * (sim.decode_jumps = false), when every step adjusts the buckets, and while the batch
 * controller's view changes at every step. */
int64_t decode_run_length(const struct sim *s, const struct lane *in, int64_t t, int64_t dt)
{
	if (in->no_runs || controller_varies(s, in))
		return 1;
	int32_t x = sq_top(&in->cross_at);
	int64_t k = sq_top_key(&in->done_at) - in->G + 1;
	if (x >= 0 && sq_top_key(&in->cross_at) - in->G < k)
		k = sq_top_key(&in->cross_at) - in->G;
	if (k < 1)
		BUG("decode run of %lld steps", (long long)k);
	bool arrival;
	int64_t limit = next_outside_change(s, in, &arrival);
	if (limit != INT64_MAX) {
		int64_t kk = limit <= t ? 1 : (limit - t + dt - 1) / dt;
		/* An arrival during the run's last step, under async scheduling's lag, is first
		 * scheduled a step later (sim/kernel_host.c): that step is one more of the run. */
		if (arrival && limit > t && host_lags(in))
			kk++;
		if (kk < k)
			k = kk;
	}
	return k < 1 ? 1 : k;
}

void runs_setup(struct sim *s)
{
	for (int i = 0; i < s->n_lanes; i++) {
		struct lane *in = &s->lanes[i];
		in->no_runs = s->p.step_by_step || adjusts_every_step(s, in);
		in->fifo_closed = fifo_closed(s, in);
	}
}

/* Ends IN's run of identical decode steps (if it is in one) at the first step boundary at or
 * after now, as if it had been submitted one step at a time: something happened that could
 * change what its next step does.  The steps taken back are unaccounted and the run's
 * completion event is replaced (the old one is recognised as stale by its generation). */
static void cut_run(struct sim *s, struct lane *in)
{
	const struct step_run *run = &in->last_pass;
	int64_t k = in->step_k, dt = in->step_dt;
	bool piped = in->owner->stages > 1; /* a sibling's microbatch may join at the run's start */
	if (!in->busy || k <= 1 || s->now < run->t0 || (s->now == run->t0 && !piped))
		return;
	int64_t kept = (s->now - run->t0 + dt - 1) / dt;
	if (kept < 1)
		kept = 1;
	if (kept >= k)
		return;
	int64_t d = k - kept;
	struct graph *g = &s->graphs[run->gi];
	g->uses -= d;
	g->real_tokens -= run->real_tokens * d;
	g->padded_tokens -= run->padded_tokens * d;
	s->m.passes[run->phase] -= d;
	s->m.real_tokens -= run->real_tokens * d;
	s->m.padded_tokens -= run->padded_tokens * d;
	s->m.real_blocks -= run->real_blocks * d;
	s->m.padded_blocks -= run->padded_blocks * d;
	if (s->hooks.pass) {
		/* Only this run's entry: the lane's other pending passes (a pipelined lane's
		 * earlier steps, not reported yet) keep their counts. */
		for (size_t i = 0; i < s->n_pend; i++)
			if (s->pend[i].run == run->run) {
				s->pend[i].left -= d;
				if (s->pend[i].left < 0)
					BUG("cut run %llu below the passes reported",
					    (unsigned long long)run->run);
			}
	} else {
		s->pass_index -= d;
	}
	/* Busy time is device time: a step of the run is one pass of the graph (its host time is
	 * not busy time); a pipelined step's compute is given back by pipe_cut. */
	int64_t busy = in->owner->stages > 1 ? dt : g->cost_ns;
	in->busy_ns -= d * busy;
	s->m.busy_ns -= d * busy;
	if (in->owner->stages > 1)
		pipe_cut(s, in, d);
	s->m.steps -= d;
	in->steps -= d;
	in->step_k = kept;
	in->gen++;
	push_pass_done(s, in, run->t0 + kept * dt);
}

void cut_sibling_runs(struct sim *s, const struct lane *in)
{
	const struct instance *grp = in->owner;
	for (int l = 0; l < grp->lanes; l++) {
		struct lane *o = &s->lanes[grp->first + l];
		if (o != in && o->busy && o->step_k > 1)
			cut_run(s, o);
	}
}

/* cut_consumers() (kernel_passes.h) for the lanes admitting from Q. */
void cut_consumers_of(struct sim *s, const struct waitq *q, bool front)
{
	for (int i = 0; i < s->n_lanes; i++) {
		struct lane *in = &s->lanes[i];
		if (!lane_admits_from(s, in, q) || !in->busy || in->step_k <= 1)
			continue;
		bool matters = in->role == ROLE_DECODE ? transfers_matter(s, in)
			       : front		       ? lane_has_slot(s, in) &&
						    !(s->p.batching->idle_only && in->n_run > 0)
						      : arrivals_matter(s, in);
		matters |= in->owner->stages > 1; /* an idle sibling lane may take it */
		if (matters)
			cut_run(s, in);
	}
}
