/*
 * evq: the event queue, a binary min-heap of events keyed by (t_ns, class, seq).
 *
 * Ordering rule for events at the same time: lower `class` first (see enum ev_class in
 * sim/kernel.h: arrivals before pass completions before the engine's schedule), then lower
 * `seq`.  `seq` is stamped at insertion from a per-queue counter, so ties within a class are
 * FIFO and never depend on heap layout; an owner may give the events of a class its own
 * sequence (evq_push_seq: the kernel's pass completions carry their lane's index, so that
 * lanes whose steps end at the same time go in lane order however their events were pushed).
 * Time never decreases: evq_pop() returns events in non-decreasing t_ns, and pushing an event
 * earlier than the last popped one is a bug.
 *
 * Cancellation: mark the event's payload cancelled in its owner and skip it on pop (lazy
 * deletion), as the kernel does.  The queue owns its array (evq_init/evq_release); events are
 * copied in and out by value.
 */
#ifndef BS_EVQ_H
#define BS_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct event {
	int64_t t_ns;
	uint64_t seq;
	int32_t cls;     /* tie-break class, lower first */
	int32_t kind;    /* owner-defined */
	int64_t arg;     /* owner-defined payload */
};

struct evq {
	struct event *h;
	size_t n, cap;
	uint64_t next_seq;
	int64_t last_t;  /* time of the last popped event */
};

void evq_init(struct evq *q);
void evq_release(struct evq *q);
/* Out of line parts of evq_push: growing the array, and the bug of an event in the past. */
void evq_grow(struct evq *q);
void evq_bug_past(const struct evq *q, int64_t t_ns);

/* Whether A comes before B (the ordering rule above). */
static inline int evq_before(const struct event *a, const struct event *b)
{
	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns;
	if (a->cls != b->cls)
		return a->cls < b->cls;
	return a->seq < b->seq;
}

/* Pushes an event with sequence number SEQ (evq_push stamps the queue's next). */
static inline void evq_push_seq(struct evq *q, int64_t t_ns, int32_t cls, int32_t kind,
				int64_t arg, uint64_t seq)
{
	if (t_ns < q->last_t)
		evq_bug_past(q, t_ns);
	if (q->n == q->cap)
		evq_grow(q);
	struct event e = {t_ns, seq, cls, kind, arg};
	size_t i = q->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!evq_before(&e, &q->h[p]))
			break;
		q->h[i] = q->h[p];
		i = p;
	}
	q->h[i] = e;
}

/* Pushes an event; returns its seq. */
static inline uint64_t evq_push(struct evq *q, int64_t t_ns, int32_t cls, int32_t kind,
				int64_t arg)
{
	uint64_t seq = q->next_seq++;
	evq_push_seq(q, t_ns, cls, kind, arg, seq);
	return seq;
}

/* Pops the earliest event into *out; returns 0, or -1 when empty. */
static inline int evq_pop(struct evq *q, struct event *out)
{
	if (!q->n)
		return -1;
	*out = q->h[0];
	q->last_t = out->t_ns;
	size_t i = 0, n = --q->n;
	if (!n)
		return 0; /* it was the only one (often: a lone engine's next step) */
	struct event last = q->h[n];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		const struct event *best = &last;
		if (l < n && evq_before(&q->h[l], best)) {
			m = l;
			best = &q->h[l];
		}
		if (l + 1 < n && evq_before(&q->h[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		q->h[i] = q->h[m];
		i = m;
	}
	q->h[i] = last;
	return 0;
}

/* The earliest event without removing it, or NULL. */
static inline const struct event *evq_peek(const struct evq *q)
{
	return q->n ? &q->h[0] : NULL;
}
static inline size_t evq_size(const struct evq *q) { return q->n; }

#endif
