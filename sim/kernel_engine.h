/*
 * sim/kernel_engine.c's interface and its rules, inline: the engine step, the token budget
 * of a step's new prompts and the admission rule for one candidate (which the contract check
 * replays), the running set.
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_ENGINE_H
#define BS_KERNEL_ENGINE_H

#include "sim/kernel_kv.h"
#include "sim/kernel_state.h"

void engine_schedule(struct sim *s, struct lane *in);
void engine_update(struct sim *s, struct lane *in);

/* Sets the engine's facts about the batch controller (struct sim's view_waiting, steps_told,
 * ctl_varies) and each lane's view's constants; again when the contract switch changes. */
void engine_controller_setup(struct sim *s);

/* The token budget for new prompts in a step of which LEFT tokens of max_num_batched_tokens are
 * left (after its decodes and running prefills): LEFT, or none (INT32_MAX) under a controller
 * whose batch is one padded pass (padded_pass: whole prompts, the controller bounds the batch
 * by memory; sim/kernel_prefill.c runs them as one pass).  Admission goes on while some budget
 * is left, or past it for a controller that takes requests beyond it (their prefills wait).
 * admit_from and the contract check (kernel_contract.c) both use it. */
static inline int64_t step_budget(const struct sim *s, int64_t left)
{
	return s->p.batching->padded_pass ? INT32_MAX : left;
}

static inline bool budget_admits(const struct sim *s, int64_t budget)
{
	return budget > 0 || s->p.batching->beyond_budget;
}

/* Whether the kernel's checks let waiting request ID join IN's step within BUDGET tokens (the
 * step's token budget, unless the controller takes requests beyond it; free KV blocks for the
 * step's chunk).  Its cached blocks and chunk go to *O; offer_cand() is the candidate a
 * controller's take() is offered. */
struct admit_offer {
	int32_t hit, own, g, chunk, need, revive;
	int64_t computed;
};

static inline bool admit_offer(const struct sim *s, const struct lane *in, int32_t id,
			       int64_t budget, struct admit_offer *o)
{
	const struct req *r = &s->r[id];
	/* A cached prefix of its group is not computed again. */
	int32_t hit = prefix_blocks(s, id), g = s->spec[id].prefix_group;
	if (hit && hit > in->kv->pc[g].blocks)
		hit = in->kv->pc[g].blocks;
	/* A preempted request's own blocks still cached (prefix caching). */
	int32_t own = r->preemptions
			      ? kv_resume_blocks(s, in, id, hit, (r->target - 1) / s->p.block_size)
			      : 0;
	int64_t computed = (int64_t)(hit + own) * s->p.block_size;
	int64_t remaining = r->target - computed;
	if (!s->p.chunked_prefill && remaining > budget && !s->p.batching->beyond_budget)
		return false;
	int32_t chunk = (int32_t)(remaining < budget ? remaining : budget);
	if (!s->p.chunked_prefill && remaining > budget)
		chunk = 0; /* a member whose prefill waits for a later step */
	int32_t need = blocks_for(s, computed + chunk) - hit - own;
	int32_t revive = (hit && in->kv->pc[g].ref == 0 ? in->kv->pc[g].blocks : 0) + own;
	if (need + revive > in->kv->free)
		return false;
	*o = (struct admit_offer){hit, own, g, chunk, need, revive, computed};
	return true;
}

static inline struct batch_cand offer_cand(const struct sim *s, int32_t id,
					   const struct admit_offer *o)
{
	return (struct batch_cand){&s->spec[id], o->need,
				   blocks_for(s, s->r[id].target) - o->hit - o->own, o->revive, 0};
}

/* Request ID joins IN's running set. */
static inline void run_add(struct sim *s, struct lane *in, int32_t id)
{
	s->rpos[id] = (int32_t)in->n_run;
	in->run[in->n_run++] = id;
}

/* Request ID leaves IN's running set: the last one takes its place. */
static inline void run_del(struct sim *s, struct lane *in, int32_t id)
{
	size_t i = (size_t)s->rpos[id];
	if (i >= in->n_run || in->run[i] != id)
		BUG("request %d not running", id);
	int32_t last = in->run[--in->n_run];
	in->run[i] = last;
	s->rpos[last] = (int32_t)i;
}

#endif
