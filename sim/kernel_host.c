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
