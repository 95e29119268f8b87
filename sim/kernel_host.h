/*
 * sim/kernel_host.c's interface and its small rules, inline: host time and async
 * scheduling's lag (the one rule of what a schedule sees of the waiting requests).
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_HOST_H
#define BS_KERNEL_HOST_H

#include "sim/kernel_state.h"

/* The host time of DECODES decode and PREFILLS prefill chunks in one step (the cost model's,
 * past the fast path's cache). */
int64_t host_ns_of(struct sim *s, int32_t decodes, int32_t prefills);

/* The fast path's cache slot of (DECODES, PREFILLS) (struct host_slot). */
static inline struct host_slot *host_slot_of(struct sim *s, int32_t decodes, int32_t prefills)
{
	uint32_t h = (uint32_t)decodes * 0x9E3779B1u + (uint32_t)prefills * 0x85EBCA77u;
	return &s->host_cache[h >> (32 - HOST_CACHE_BITS)];
}

/* The host time of the step IN is about to submit (its decodes and prefill chunks). */
static inline int64_t step_host_ns(struct sim *s, const struct lane *in)
{
	if (!s->p.host_time || !s->costs.host)
		return 0;
	int32_t dec = in->n_dec, pre = (int32_t)in->n_items;
	if (!s->p.step_by_step) { /* the fast path remembers recent answers (struct host_slot) */
		const struct host_slot *c = host_slot_of(s, dec, pre);
		if (c->ns && c->decodes == dec && c->prefills == pre)
			return c->ns;
	}
	return host_ns_of(s, dec, pre);
}

/* The wall time of one engine step of IN whose passes take DEVICE_NS: max(host, device) with
 * async scheduling, host + device without. */
static inline int64_t step_span(const struct sim *s, const struct lane *in, int64_t device_ns)
{
	if (s->p.async_scheduling)
		return in->host_ns > device_ns ? in->host_ns : device_ns;
	return in->host_ns + device_ns;
}

/* Whether IN's schedule after a step lags (async scheduling): a request arriving after the
 * step started waits one step more.  The lag is modelled for an instance with one lane; the
 * lanes of a pipeline-parallel instance schedule by their engine loop (policies/loop.h). */
static inline bool host_lags_at_setup(const struct sim_params *p, const struct instance *grp)
{
	return p->host_time && p->async_scheduling && grp->lanes == 1;
}

/* The same, kept by the lane (asked at every step). */
static inline bool host_lags(const struct lane *in)
{
	return in->lags;
}

/* Async scheduling: called when IN's step ends; the next schedule sees only the requests that
 * had arrived when the step started. */
static inline void host_step_done(const struct sim *s, struct lane *in)
{
	if (host_lags(in)) {
		in->lag = true;
		in->sched_cutoff = s->now - in->step_dt;
	}
}

/* The one rule of what a schedule sees of the waiting requests: with async scheduling's lag,
 * a schedule of IN after a step sees the requests that arrived by the start of that step, its
 * cutoff (INT64_MAX: every request that arrived). */
static inline int64_t host_cutoff(const struct lane *in)
{
	return in->lag ? in->sched_cutoff : INT64_MAX;
}

static inline bool host_sees(const struct sim *s, int32_t id, int64_t cutoff)
{
	return s->spec[id].arrival_ns <= cutoff;
}

/* Whether request ID may be admitted now (async scheduling's lag); records a refusal. */
static inline bool host_may_admit(const struct sim *s, struct lane *in, int32_t id)
{
	if (host_sees(s, id, host_cutoff(in)))
		return true;
	in->lag_blocked = true;
	return false;
}

/* The requests waiting where IN admits from that a schedule with CUTOFF sees, and their
 * prompt tokens (struct batch_view's waiting, waiting_tokens); returns whether the cutoff
 * hid any. */
bool host_waiting(const struct sim *s, const struct lane *in, int64_t cutoff, int64_t *n,
		  int64_t *tokens);

#endif
