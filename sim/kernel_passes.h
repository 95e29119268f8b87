/*
 * sim/kernel_passes.c's interface and its rules, inline: a pass accounted and queued for the
 * pass hook, the monitor window's steps, the decode-run fast path's cuts.
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_PASSES_H
#define BS_KERNEL_PASSES_H

#include "sim/kernel_pipeline.h"
#include "sim/kernel_state.h"

/* account_pass()'s part for the pass hook: queues the passes (batches.csv order). */
void pass_queue(struct sim *s, struct lane *in, int phase, const int32_t real[4], int32_t gi,
		int64_t compile_ns, int64_t real_tokens, int64_t padded_tokens, int64_t start,
		int64_t times, uint64_t run);
void cut_consumers_of(struct sim *s, const struct waitq *q, bool front);

/* IN submits a microbatch into its pipeline: a sibling lane's decode run (which ran alone)
 * ends at the step in progress. */
void cut_sibling_runs(struct sim *s, const struct lane *in);
int64_t decode_run_length(const struct sim *s, const struct lane *in, int64_t t, int64_t dt);

/* Sets each lane's no_runs and fifo_closed (at set-up, once the queues are built). */
void runs_setup(struct sim *s);
void pend_flush(struct sim *s, int64_t t);

/* A request is about to enter queue Q (FRONT: ahead of the others), or Q's buckets are about
 * to change (FRONT too: any waiting request may become the next): cuts the run of every busy
 * lane admitting from Q whose next step could take it.  An arrival into the queue of a single
 * lane was foreseen when its run started (next_outside_change): nothing else changes that
 * queue during the run. */
static inline void cut_consumers(struct sim *s, const struct waitq *q, bool front)
{
	if (!front && q->consumers == 1 && q != &s->queue[Q_TRANSFERRED])
		return;
	cut_consumers_of(s, q, front);
}

/* The payload of IN's pass-done event: its index and its run generation. */
static inline int64_t pass_done_arg(const struct lane *in)
{
	return (int64_t)in->idx | in->gen << 20;
}

/* Queues the end of IN's step (or run) at T.  Its sequence number is the lane's index: steps
 * of several lanes ending at the same time end in lane order, whenever their events were
 * queued (the fast path queues a run's end when the run starts, the reference at its last
 * step). */
static inline void push_pass_done(struct sim *s, const struct lane *in, int64_t t)
{
	evq_push_seq(&s->q, t, EVC_PASS_DONE, EV_PASS_DONE, pass_done_arg(in), (uint64_t)in->idx);
}

/* Accounts TIMES identical passes of graph GI starting at START, the first carrying
 * COMPILE_NS, and queues them for the pass hook (kernel_passes.c).  Returns one pass's
 * duration without the compile. */
static inline int64_t account_pass(struct sim *s, struct lane *in, int phase,
				   const int32_t real[4], int32_t gi, int64_t compile_ns,
				   int64_t real_tokens, int64_t real_blocks, int64_t start,
				   int64_t times)
{
	struct graph *g = &s->graphs[gi];
	int64_t padded_tokens = phase == PHASE_PROMPT ? (int64_t)g->v[0] * g->v[1] : g->v[0];
	int64_t padded_blocks = phase == PHASE_DECODE ? g->v[2] : 0;
	uint64_t run = 0;
	if (times > 1) { /* a run that cut_run may shorten */
		run = ++s->n_runs;
		in->last_pass = (struct step_run){gi, phase, start, real_tokens, padded_tokens,
						  real_blocks, padded_blocks, run};
	}
	g->uses += times;
	g->real_tokens += real_tokens * times;
	g->padded_tokens += padded_tokens * times;
	s->m.passes[phase] += times;
	s->m.real_tokens += real_tokens * times;
	s->m.padded_tokens += padded_tokens * times;
	s->m.real_blocks += real_blocks * times;
	s->m.padded_blocks += padded_blocks * times;
	if (in->owner->stages > 1) /* one step's microbatch (kernel_pipeline.c) */
		pipe_note_pass(s, in, gi, compile_ns, padded_tokens);
	if (s->hooks.pass)
		pass_queue(s, in, phase, real, gi, compile_ns, real_tokens, padded_tokens, start,
			   times, run);
	else
		s->pass_index += times;
	return g->cost_ns;
}

/* Counts in the monitor window the steps of IN's run in flight up to STARTED of them (capped at
 * the run's length) not counted yet. */
static inline void mon_count_steps(struct sim *s, struct lane *in, int64_t started)
{
	if (started > in->step_k)
		started = in->step_k;
	int64_t d = started - in->mon_counted;
	if (d <= 0)
		return;
	s->mon_step_ns += d * in->step_dt;
	s->mon_steps += d;
	in->mon_counted = started;
}

#endif
