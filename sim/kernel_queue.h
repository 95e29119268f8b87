/*
 * sim/kernel_queue.c's interface and its rules, inline: the waiting queues (an ordered heap,
 * or BucketServe buckets), the queue a request waits in, pushing and taking requests.
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_QUEUE_H
#define BS_KERNEL_QUEUE_H

#include "sim/kernel_state.h"

void wq_adjust(struct sim *s, struct waitq *q);
int64_t wq_pick_bucketed(struct sim *s, struct waitq *q);

/* The bucket admission draws from next, or -1 (plain heap: 0). */
static inline int64_t wq_pick(struct sim *s, struct waitq *q)
{
	if (!q->bsm)
		return q->h.n ? 0 : -1;
	return wq_pick_bucketed(s, q);
}

/* wq_push() (below) into a bucketed queue. */
void wq_push_bucketed(struct sim *s, struct waitq *q, int32_t id);
void wq_remove_bucketed(struct sim *s, struct waitq *q, int32_t id);

static inline int32_t ih_top(const struct iheap *h)
{
	return h->n ? h->e[0].id : -1;
}

/* The key of the heap's top (not empty). */
static inline int64_t ih_top_key(const struct iheap *h)
{
	return h->e[0].key;
}

static inline size_t wq_len(const struct waitq *q)
{
	return q->bsm ? bsm_total(q->bsm) : q->h.n;
}

/* The request admission draws from next in Q (bucket K when grouped), or -1. */
static inline int32_t wq_peek(struct sim *s, struct waitq *q, int64_t k)
{
	(void)s;
	if (k < 0)
		return -1;
	if (!q->bsm)
		return ih_top(&q->h);
	return (int32_t)bsm_peek(q->bsm, (size_t)k);
}

/* Whether Q holds new requests (not the transferred ones, whose prompts are computed). */
static inline bool wq_is_new(const struct sim *s, const struct waitq *q)
{
	return q != &s->queue[Q_TRANSFERRED];
}

/* Queues ID in Q; FRONT puts a preempted request ahead of the others (vLLM prepends it). */
static inline void wq_push(struct sim *s, struct waitq *q, int32_t id, bool front)
{
	if (wq_is_new(s, q))
		s->wait_prompt_tokens += s->spec[id].prompt_tokens;
	if (q->bsm)
		wq_push_bucketed(s, q, id);
	else
		ih_push(&q->h, id, front ? q->front_key-- : q->order->key(&s->spec[id], id, q->order_par));
}

/* Takes request ID out of Q. */
static inline void wq_remove(struct sim *s, struct waitq *q, int32_t id)
{
	if (wq_is_new(s, q))
		s->wait_prompt_tokens -= s->spec[id].prompt_tokens;
	if (!q->bsm)
		ih_remove(&q->h, id);
	else
		wq_remove_bucketed(s, q, id);
}

/* The queue a new (or preempted) request waits in: its role, and the queue. */
static inline enum queue_role wq_role_for(const struct sim *s, int32_t id)
{
	return s->p.task_aware && s->spec[id].task == TASK_OFFLINE ? Q_OFFLINE : Q_NEW;
}

static inline struct waitq *wq_for(struct sim *s, int32_t id)
{
	return wq_role_for(s, id) == Q_OFFLINE ? &s->queue[Q_OFFLINE] : &s->queue[Q_NEW];
}

#endif
