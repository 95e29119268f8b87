/*
 * kernel_int: the kernel's internal interface: its state (sim/kernel_state.h), and for each
 * kernel file the functions it offers the others and its rules that the hot path inlines, in
 * the header of the file's name (sim/kernel_X.h beside sim/kernel_X.c), all included here;
 * the event loop's own rules (kernel.c) follow.  Nothing outside sim/kernel*.c includes it
 * except the kernel's white-box unit tests (tests/check_kernel.c, tests/check_contract.c).
 *
 * The kernel's files, one job each:
 *   kernel.c          the event loop: events, transfers, monitor samples, invariants, accessors
 *   kernel_cluster.c  the topology: instances, their lanes, KV pools and queues; kicking lanes
 *   kernel_engine.c   the engine step: schedule (admission, preemption), submit, update
 *   kernel_passes.c   passes: accounting, batches.csv order, the decode-run fast path
 *   kernel_queue.c    the waiting queues (an ordered heap or BucketServe buckets)
 *   kernel_kv.c       the paged KV block pool and the automatic prefix cache
 *   kernel_defrag.c   block ids of a KV pool (contiguous PA) and the online defragmenter
 *   kernel_client.c   when requests are sent: open loop, or a closed loop of N in flight
 *   kernel_unified.c  the shape of a unified-attention pass (create_unified_batch)
 *   kernel_graph.c    the compiled-graph set: padded shapes, their cost and compile state
 *   kernel_heap.c     indexed 4-ary heaps of request ids (sim/kernel_heap.h)
 *   kernel_stepq.c    step queues: a timing wheel of request ids by step (sim/kernel_stepq.h)
 *   kernel_params.c   kernel parameters from the configuration; the cost-model adapter
 *   kernel_pipeline.c pipeline parallelism: microbatches through the stages, their metrics
 *   kernel_host.c     the host side of an engine step: host time, async scheduling's lag
 *   kernel_prefill.c  a step's prefill chunks grouped into passes (upstream's merge rule)
 *   kernel_contract.c the batch controller's and the order's contract with the fast path,
 *                     checked at every step a decode run skips (builds without NDEBUG)
 *
 * Names: a serving instance (struct instance) has one lane (struct lane), or cluster.pp lanes
 * with pipeline parallelism (its microbatch slots, or its virtual engines); the waiting
 * queues are named by role (enum queue_role).
 */
#ifndef BS_KERNEL_INT_H
#define BS_KERNEL_INT_H

#include <assert.h>
#include <string.h>

#include "sim/kernel_state.h"

#include "sim/kernel_client.h"
#include "sim/kernel_cluster.h"
#include "sim/kernel_contract.h"
#include "sim/kernel_defrag.h"
#include "sim/kernel_engine.h"
#include "sim/kernel_graph.h"
#include "sim/kernel_host.h"
#include "sim/kernel_kv.h"
#include "sim/kernel_passes.h"
#include "sim/kernel_pipeline.h"
#include "sim/kernel_prefill.h"
#include "sim/kernel_queue.h"
#include "sim/kernel_unified.h"

/* ---- the event loop's rules (kernel.c) ---- */

/* The fast path: whether an event queued at T in class CLS would be the next one taken (none
 * queued comes first), so that it may be handled without the queue.  Never in the
 * step-by-step reference. */
static inline bool first_at(const struct sim *s, int64_t t, int cls)
{
	const struct event *top = evq_peek(&s->q);
	return !s->p.step_by_step &&
	       (!top || top->t_ns > t || (top->t_ns == t && top->cls > cls)) &&
	       (!s->arrival_held || s->arrival_t > t);
}

/* The same for an event queued now. */
static inline bool next_now(const struct sim *s, int cls)
{
	return first_at(s, s->now, cls);
}

/* Whether IN, its step just ended, schedules at once (in the same event) rather than through
 * a schedule event: an instance of one lane not yet asked to, when nothing queued comes
 * first. */
static inline bool schedules_at_once(const struct sim *s, const struct lane *in)
{
	return in->owner->lanes == 1 && !in->schedule_pending && next_now(s, EVC_SCHEDULE);
}

/* Time moves to the event at T: the pass hook's passes starting before it are reported. */
static inline void advance_to(struct sim *s, int64_t t)
{
	if (s->n_pend)
		pend_flush(s, t);
	s->now = t;
	s->events++;
}

#endif
