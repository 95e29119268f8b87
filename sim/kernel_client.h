/*
 * sim/kernel_client.c's interface and its rules, inline: when requests are sent (an open
 * loop, or a closed loop of N in flight).
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_CLIENT_H
#define BS_KERNEL_CLIENT_H

#include "sim/kernel_state.h"

void client_init(struct sim *s);

/* Whether the client may send one more request now. */
static inline bool client_slot(const struct sim *s)
{
	return !s->p.concurrency || s->arrived - s->finished < (size_t)s->p.concurrency;
}

/* When the next request arrives, if it is already known (INT64_MAX: not before a completion,
 * or none left). */
static inline int64_t client_next_arrival_ns(const struct sim *s)
{
	if (s->next_arrival >= s->n || (!s->arrival_pending && !client_slot(s)))
		return INT64_MAX; /* none, or at a completion (which ends or cuts a run) */
	int64_t t = s->spec[s->next_arrival].arrival_ns;
	return t < s->now ? s->now : t;
}

/* Schedules the next request's arrival event (kept out of the queue by the fast path) if it is not scheduled yet and a slot is free
 * (after an arrival, and after a completion in a closed loop). */
static inline void client_next(struct sim *s)
{
	if (s->arrival_pending || s->next_arrival >= s->n || !client_slot(s))
		return;
	int64_t t = s->spec[s->next_arrival].arrival_ns;
	if (t < s->now)
		t = s->now;
	if (s->p.step_by_step) {
		evq_push(&s->q, t, EVC_ARRIVAL, EV_ARRIVAL, (int64_t)s->next_arrival);
	} else {
		s->arrival_held = true;
		s->arrival_t = t;
		s->arrival_seq = s->q.next_seq++; /* as evq_push() would stamp it */
	}
	s->arrival_pending = true;
}

/* Request ID was sent (its arrival event). */
static inline void client_sent(struct sim *s, int32_t id)
{
	s->arrival_pending = false;
	s->next_arrival = (size_t)id + 1;
	client_next(s);
}

#endif
