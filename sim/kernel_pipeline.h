/*
 * sim/kernel_pipeline.c's interface and its rules, inline: pipeline parallelism, a step's
 * microbatch through the stages.
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_PIPELINE_H
#define BS_KERNEL_PIPELINE_H

#include "sim/kernel_state.h"

#define PIPE_MAX_STAGES 64              /* cluster.pp's maximum */
void pipe_init(struct sim *s);
void pipe_release(struct sim *s);

/* A step's microbatch: pipe_begin() before its passes, pipe_note_pass() for each (from
 * account_pass), then pipe_walk() moves it through the stages (K > 1: a decode run of K
 * steps, valid when pipe_jumps_ok()); returns its end, WORK its compute time. */
void pipe_begin(struct sim *s, struct lane *in);
void pipe_note_pass(struct sim *s, struct lane *in, int32_t gi, int64_t compile_ns,
		    int64_t padded_tokens);
int64_t pipe_walk(struct sim *s, struct lane *in, int64_t k, int64_t *work);
bool pipe_jumps_ok_(const struct sim *s, const struct lane *in);

static inline bool pipe_jumps_ok(const struct sim *s, const struct lane *in)
{
	return in->owner->stages == 1 || pipe_jumps_ok_(s, in);
}

/* The duration of one decode-only step of graph GI through an empty pipeline. */
int64_t pipe_step_dt(struct sim *s, struct lane *in, int32_t gi, int64_t padded_tokens);

/* cut_run took D steps back from IN's run. */
void pipe_cut(struct sim *s, struct lane *in, int64_t d);

/* After IN scheduled a step of K steps (or nothing): the atomic loop's empty microbatches. */
void pipe_after_schedule_(struct sim *s, struct lane *in, int64_t k, bool returned);

static inline void pipe_after_schedule(struct sim *s, struct lane *in, int64_t k)
{
	if (in->owner->stages == 1)
		return; /* returned and mb_empties are a pipelined lane's */
	bool returned = in->returned;
	in->returned = false;
	in->mb_empties = 0;
	if (s->p.loop->waits_for_oldest)
		pipe_after_schedule_(s, in, k, returned);
}

/* GRP's running count changed from BEFORE: the time it has a running request. */
static inline void pipe_running(struct sim *s, struct instance *grp, int32_t before)
{
	if (before == 0 && grp->running > 0)
		grp->active_since = s->now;
	else if (before > 0 && grp->running == 0) {
		grp->active_ns += s->now - grp->active_since;
		grp->active_since = -1;
	}
}

/* IN preempts to find NEED blocks (virtual engines: fragmentation). */
void pipe_preempt(struct sim *s, const struct lane *in, int32_t need);
size_t pipe_in_flight(const struct sim *s);

/* cluster.async_prefill_chunks: IN, scheduling, takes further chunks of prefills in flight in
 * its siblings' microbatches within BUDGET tokens (returns what is left); the tokens a step
 * puts in flight and brings back. */
int64_t pipe_take_chunks(struct sim *s, struct lane *in, int64_t budget);
void pipe_chunks_submitted(struct sim *s, struct lane *in);
void pipe_chunks_returned(struct sim *s, struct lane *in);

/* A microbatch slot the atomic loop lost (it never schedules again). */
static inline bool pipe_lane_lost(const struct lane *in)
{
	return in->lost;
}

void pipe_finish(struct sim *s);

#endif
