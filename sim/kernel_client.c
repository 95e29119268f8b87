/*
 * kernel_client: when requests are sent.  Open loop (the default): each at its workload
 * arrival time.  Closed loop (workload.concurrency = N), as `vllm bench serve
 * --max-concurrency N` runs it (vllm/benchmarks/serve.py, benchmark(): each request from
 * get_request() waits for its arrival time, then for a slot of an asyncio.Semaphore(N) held
 * until its response is complete): request i is sent at max(its arrival time, the moment a
 * request in flight finishes and frees a slot), in id order.  With every arrival at 0 (an
 * infinite request rate) that is a pure closed loop; a rate limit keeps its arrival times.
 * A request's arrival_ns becomes its send time: TTFT and E2E count from it, as the client
 * measures them.  client_sent() and client_next(), run at every arrival and completion, are
 * inline in kernel_client.h.
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
