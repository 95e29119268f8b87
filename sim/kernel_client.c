/*
 * kernel_client: when requests are sent.  Open loop (the default): each at its workload
 * arrival time.  Closed loop (workload.concurrency = N), as `vllm bench serve
 * --max-concurrency N` runs it (vllm/benchmarks/serve.py, benchmark(): each request from
 * get_request() waits for its arrival time, then for a slot of an asyncio.Semaphore(N) held
 * until its response is complete): request i is sent at max(its arrival time, the moment a
 * request in flight finishes and frees a slot), in id order.  With every arrival at 0 (an
 * infinite request rate) that is a pure closed loop; a rate limit keeps its arrival times.
 * A request's arrival_ns becomes its send time: TTFT and E2E count from it, as the client
 * measures them.
 */
#include "sim/kernel_int.h"

#include <string.h>

void client_init(struct sim *s)
{
	if (!s->p.concurrency)
		return;
	/* The send times are only known as the run goes: the kernel's own copy of the
	 * requests. */
	s->spec_sent = xmalloc((s->n ? s->n : 1) * sizeof *s->spec_sent);
	if (s->n)
		memcpy(s->spec_sent, s->spec, s->n * sizeof *s->spec_sent);
	s->spec = s->spec_sent;
}

/* Request ID was sent (its arrival event). */
void client_sent(struct sim *s, int32_t id)
{
	s->arrival_pending = false;
	s->next_arrival = (size_t)id + 1;
	client_next(s);
}

/* Schedules the next request's arrival event (kept out of the queue by the fast path) if it is not scheduled yet and a slot is free
 * (after an arrival, and after a completion in a closed loop). */
void client_next(struct sim *s)
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
