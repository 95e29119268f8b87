/*
 * kernel_contract: the policies' contract with the decode-run fast path, checked.
 *
 * The fast path runs identical decode-only steps as one event (kernel_passes.c), trusting
 * what the policies declare: a FIFO order (order_policy.fifo) serves an arrival after every
 * waiting request, so a queue head that cannot join keeps the queue closed; a batch
 * controller's take() depends on the inputs of its view it declares (batch_policy.reads,
 * policies/batching.h) and on nothing else.  The step-by-step reference trusts nothing.  In
 * builds without NDEBUG (the sanitizer pass of make check), every step a run skipped is
 * replayed here when the run ends, before anything else changes: the request the step would
 * have offered first from each queue (the one that closed the batch at the run's first step,
 * or an arrival seen since that the queue's order puts before it), the kernel's own checks,
 * then take() on the view the step would have had.  If the step would have admitted a
 * request, the run was wrong: a BUG names the policy whose declaration allowed it.
 *
 * Checked on instances of one lane (the lanes of a pipeline-parallel instance share their
 * stages and run alone: pipe_jumps_ok), on the queues of new requests (a decode instance
 * admits transferred requests without a controller); the order of buckets is the bucket
 * manager's, so there only the controller is checked.
 */
#include "sim/kernel_int.h"

#include <inttypes.h>

/* The request the skipped step with arrival cutoff CUTOFF would offer first from queue Q:
 * HEAD (the one that closed the batch at the run's first step, -1: none), unless an arrival
 * the run's first step did not see (after SEEN_UNTIL), seen by the skipped step, comes first
 * in Q's heap.  Bucketed queues: HEAD. */
static int32_t first_offered(const struct sim *s, const struct waitq *q, int32_t head,
			     int64_t seen_until, int64_t cutoff)
{
	if (q->bsm)
		return head;
	const struct iheap *h = &q->h;
	struct ih_ent best = {INT64_MAX, INT32_MAX};
	if (head >= 0) {
		int32_t i = h->pos[head];
		if (i < 0 || (size_t)i >= h->n || h->e[i].id != head)
			return -1; /* taken meanwhile (such a change cuts the run) */
		best = h->e[i];
	}
	for (int64_t id = (int64_t)s->next_arrival - 1;
	     id >= 0 && s->spec[id].arrival_ns > seen_until; id--) {
		int32_t i = h->pos[id];
		if (i < 0 || (size_t)i >= h->n || h->e[i].id != (int32_t)id ||
		    !host_sees(s, (int32_t)id, cutoff))
			continue;
		if (ih_less(h->e[i], best))
			best = h->e[i];
	}
	return best.id == INT32_MAX ? -1 : best.id;
}

bool contract_applies(const struct sim *s, const struct lane *in)
{
	const struct batch_policy *ctl = s->p.batching;
	if (in->owner->lanes > 1 || in->role == ROLE_DECODE || in->n_items)
		return false;
	/* The skipped steps' views are rebuilt from the queue as it is when the run ends: a queue
	 * other instances also admit from (and preempt into) may have changed under the run
	 * before it was cut, so those instances are not checked (the differential test is). */
	if (in->q->consumers > 1 ||
	    (s->p.task_aware && in->q == &s->queue[Q_NEW] && s->queue[Q_OFFLINE].consumers > 1))
		return false;
	/* The kernel's own reasons for a step to admit nothing (schedule, admit_from). */
	if ((ctl->idle_only && in->n_run > 0) || !lane_has_slot(s, in))
		return false;
	if (!budget_admits(s, step_budget(s, s->p.max_num_batched_tokens - in->n_dec)))
		return false;
	/* Something to offer: a request that closed a batch, or one that arrived since. */
	return in->closed_by[0] >= 0 || in->closed_by[1] >= 0 ||
	       (s->next_arrival > 0 && s->spec[s->next_arrival - 1].arrival_ns > in->seen_until);
}

void contract_check_step(const struct sim *s, const struct lane *in, int64_t j,
			 const struct batch_view *v)
{
	const struct batch_policy *ctl = s->p.batching;
	/* A decode-only step's budget (no prefill runs: contract_applies), as admit_from's. */
	int64_t budget = step_budget(s, s->p.max_num_batched_tokens - in->n_dec);
	int64_t t = v->now_ns;
	int64_t cutoff = host_lags(in) ? t - in->step_dt : t;
	const struct waitq *qs[2] = {in->q, NULL};
	if (s->p.task_aware && in->q == &s->queue[Q_NEW])
		qs[1] = &s->queue[Q_OFFLINE];
	for (int qi = 0; qi < 2 && qs[qi]; qi++) {
		const struct waitq *q = qs[qi];
		int32_t head = in->closed_by[qi];
		int32_t id = first_offered(s, q, head, in->seen_until, cutoff);
		if (id < 0 || !host_sees(s, id, cutoff))
			continue;
		struct admit_offer o;
		if (!admit_offer(s, in, id, budget, &o))
			continue; /* the kernel's checks close the batch: nothing joins */
		struct batch_view w = *v;
		struct batch_cand c = offer_cand(s, id, &o);
		if (ctl->take && !ctl->take(&w, &c))
			continue; /* the controller closes the batch, as at the run's first step */
		if (head < 0)
			BUG("policy contract: at step %" PRId64 " of a decode run of instance %d "
			    "(t = %" PRId64 " ns), which the fast path skipped, request %d (arrived "
			    "at %" PRId64 " ns) would have joined: the run did not end at its arrival",
			    j, in->idx, t, id, s->spec[id].arrival_ns);
		if (id != head)
			BUG("policy contract: at step %" PRId64 " of a decode run of instance %d "
			    "(t = %" PRId64 " ns), which the fast path skipped, request %d (arrived "
			    "at %" PRId64 " ns) would have been offered before request %d and would "
			    "have joined: order '%s' declares fifo = %d, but it put a later arrival "
			    "first", j, in->idx, t, id, s->spec[id].arrival_ns, head,
			    q->order->info.name, (int)q->order->fifo);
		if (!ctl->take)
			BUG("policy contract: request %d would have joined step %" PRId64 " of a "
			    "decode run of instance %d that the fast path skipped", id, j, in->idx);
		BUG("policy contract: batch controller '%s' takes request %d at step %" PRId64
		    " of a decode run of instance %d (t = %" PRId64 " ns, %" PRId64 " waiting), "
		    "which the fast path skipped, having refused it at the run's first step: the "
		    "run assumed its answer could not change, so its take() reads an input of "
		    "the view it does not declare (reads = 0x%x; policies/batching.h, enum "
		    "batch_input) or the kernel does not end runs where that input changes",
		    ctl->info.name, id, j, in->idx, t, v->waiting, ctl->reads);
	}
}
