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

int64_t step_host_ns(struct sim *s, const struct lane *in)
{
	if (!s->p.host_time || !s->costs.host)
		return 0;
	int32_t dec = in->n_dec, pre = (int32_t)in->n_items;
	if (s->p.step_by_step)
		return s->costs.host(s->costs.ctx, dec, pre);
	/* The fast path remembers recent answers (kernel_int.h, struct host_slot). */
	uint32_t h = (uint32_t)dec * 0x9E3779B1u + (uint32_t)pre * 0x85EBCA77u;
	struct host_slot *c = &s->host_cache[h >> (32 - HOST_CACHE_BITS)];
	if (!c->ns || c->decodes != dec || c->prefills != pre)
		*c = (struct host_slot){dec, pre, s->costs.host(s->costs.ctx, dec, pre)};
	return c->ns;
}

int64_t step_span(const struct sim *s, const struct lane *in, int64_t device_ns)
{
	if (s->p.async_scheduling)
		return in->host_ns > device_ns ? in->host_ns : device_ns;
	return in->host_ns + device_ns;
}

bool host_lags(const struct sim *s, const struct lane *in)
{
	/* The lag is modelled for an instance with one lane; the lanes of a pipeline-parallel
	 * instance schedule by their engine loop (policies/loop.h). */
	return s->p.host_time && s->p.async_scheduling && in->owner->lanes == 1;
}

void host_step_done(const struct sim *s, struct lane *in)
{
	if (host_lags(s, in)) {
		in->lag = true;
		in->sched_cutoff = s->now - in->step_dt;
	}
}

bool host_may_admit(const struct sim *s, struct lane *in, int32_t id)
{
	if (!in->lag || s->spec[id].arrival_ns <= in->sched_cutoff)
		return true;
	in->lag_blocked = true;
	return false;
}
