/*
 * evq: the event queue, a binary min-heap of events keyed by (t_ns, class, seq).
 *
 * Ordering rule for events at the same time: lower `class` first (see enum ev_class in
 * sim/kernel.h: arrivals before pass completions before the engine's schedule), then lower
 * `seq`.  `seq` is stamped at insertion from a per-queue counter, so ties within a class are
 * FIFO and never depend on heap layout.  Time never decreases: evq_pop() returns events in
 * non-decreasing t_ns, and pushing an event earlier than the last popped one is a bug.
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
/* Pushes an event; returns its seq. */
uint64_t evq_push(struct evq *q, int64_t t_ns, int32_t cls, int32_t kind, int64_t arg);
/* Pops the earliest event into *out; returns 0, or -1 when empty. */
int evq_pop(struct evq *q, struct event *out);
/* The earliest event without removing it, or NULL. */
static inline const struct event *evq_peek(const struct evq *q)
{
	return q->n ? &q->h[0] : NULL;
}
static inline size_t evq_size(const struct evq *q) { return q->n; }

#endif
