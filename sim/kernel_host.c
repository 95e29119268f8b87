/*
 * kernel_host: the host side of an engine step (sim/README.md, "Engine step").
 *
 * A step of vLLM's EngineCore is a schedule() (with input preparation) and an execute_model()
 * whose outputs are sampled and processed.  Its host time is sim_costs.host (models/cost.h,
 * cost_host_ns) of the step's decodes and prefill chunks, charged when sim.host_time is on.
 *
 * sim.host_time=false (on by default) leaves the host side out (device time only, each pass
 * with its fixed per-pass cost, no lag): the model before host time, kept as a reference.
 *
 * Without async scheduling (EngineCore.step) the host work and the device passes run one after
 * the other: a step takes host + device.  With it (EngineCore.step_with_batch_queue, vLLM's
 * default), the scheduler prepares step n+1 while step n runs on the device: a step takes
 * max(host, device), and step n+1 is scheduled when step n starts, so a request that arrives
 * while step n runs is first scheduled at the end of step n, into step n+2, one step later than
 * without async scheduling.  When the step already scheduled is empty (an idle engine), nothing
 * waits behind it and the request runs at once.  Decodes are not delayed: the scheduler of
 * step n+1 counts the tokens step n is producing (placeholders) before it has them.
 */
#include "sim/kernel_int.h"

int64_t host_ns_of(struct sim *s, int32_t dec, int32_t pre)
{
	int64_t ns = s->costs.host(s->costs.ctx, dec, pre);
	if (!s->p.step_by_step)
		*host_slot_of(s, dec, pre) = (struct host_slot){dec, pre, ns};
	return ns;
}

/* Async scheduling's lag hides from a schedule the requests that arrived after its cutoff
 * (host_cutoff): they are the latest arrivals, so the count walks back from the last one
 * (ids arrive in order: kernel_client.c).  Whether request ID waits in Q: Q's heap holds it,
 * or, bucketed, it waits in the queue of its role (a preempted request went back with its
 * old arrival time). */
static bool waits_in(const struct sim *s, const struct waitq *q, int32_t id)
{
	if (!q->bsm) {
		int32_t i = q->h.pos[id];
		return i >= 0 && (size_t)i < q->h.n && q->h.e[i].id == id;
	}
	return s->r[id].state == RS_WAITING && &s->queue[wq_role_for(s, id)] == q;
}

bool host_waiting(const struct sim *s, const struct lane *in, int64_t cutoff, int64_t *n,
		  int64_t *tokens)
{
	const struct waitq *qs[2] = {in->q, NULL};
	if (s->p.task_aware && in->q == &s->queue[Q_NEW])
		qs[1] = &s->queue[Q_OFFLINE];
	*n = (int64_t)wq_len(qs[0]) + (qs[1] ? (int64_t)wq_len(qs[1]) : 0);
	/* Every queue of new requests but the virtual engines' own is queue[Q_NEW] or
	 * queue[Q_OFFLINE] (which holds requests only when task-aware, when a lane of Q_NEW
	 * admits from both): their prompt tokens are the kernel's running sum.  A virtual
	 * engine's queue (a plain heap) is summed. */
	if (!s->lane_q) {
		*tokens = s->wait_prompt_tokens;
	} else {
		*tokens = 0;
		for (size_t i = 0; i < in->q->h.n; i++)
			*tokens += s->spec[in->q->h.e[i].id].prompt_tokens;
	}
	bool hid = false;
	if (cutoff == INT64_MAX)
		return hid;
	for (int64_t id = (int64_t)s->next_arrival - 1;
	     id >= 0 && !host_sees(s, (int32_t)id, cutoff); id--)
		for (int i = 0; i < 2 && qs[i]; i++)
			if (waits_in(s, qs[i], (int32_t)id)) {
				(*n)--;
				*tokens -= s->spec[id].prompt_tokens;
				hid = true;
			}
	return hid;
}
