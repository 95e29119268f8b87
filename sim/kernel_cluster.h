/*
 * sim/kernel_cluster.c's interface and its rules, inline: set-up and release, the sequence
 * limit of a lane, who takes work from a queue, and kicking idle lanes.
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_CLUSTER_H
#define BS_KERNEL_CLUSTER_H

#include "sim/kernel_state.h"

/* For the white-box test: a simulation in caller-owned storage (sim_new() allocates it). */
void sim_init(struct sim *s, const struct sim_params *p, const struct req_spec *req, size_t n,
	      struct bucketer *bucketer, const struct bucketserve_cfg *bsc,
	      const struct sim_costs *costs, const struct sim_hooks *hooks);
void sim_release(struct sim *s);

/* wq_kick() (below) with several lanes. */
void wq_kick_lanes(struct sim *s, const struct waitq *q);

/* Whether IN may run one more request: max_num_seqs bounds an instance, over its lanes when
 * they share one scheduler (async and atomic loops) and per lane for virtual engines. */
static inline bool lane_has_slot(const struct sim *s, const struct lane *in)
{
	if (in->owner->lanes > 1 && !s->p.loop->virtual_engines)
		return in->owner->running < s->p.max_num_seqs;
	return in->n_run < (size_t)s->p.max_num_seqs;
}

/* Asks IN to schedule now, unless it is busy or already asked. */
static inline void lane_kick(struct sim *s, struct lane *in)
{
	if (!in->schedule_pending && !in->busy) {
		in->schedule_pending = true;
		evq_push(&s->q, s->now, EVC_SCHEDULE, EV_SCHEDULE, in->idx);
	}
}

/* Whether lane IN admits from queue Q: its own queue, and, when task-aware, the offline
 * requests, which a lane of queue[Q_NEW] admits after the online ones (admit_waiting).  The
 * one rule of who takes work from a queue: every wake-up (wq_kick), every cut of a run
 * (cut_consumers) and the count of a queue's consumers use it. */
static inline bool lane_admits_from(const struct sim *s, const struct lane *in,
				    const struct waitq *q)
{
	return in->q == q ||
	       (q == &s->queue[Q_OFFLINE] && s->p.task_aware && in->q == &s->queue[Q_NEW]);
}

/* Kicks every idle instance that admits from Q (lane_admits_from), the least loaded first
 * (fewest running requests, then lowest index), so that simultaneous work spreads over the
 * instances (kernel_cluster.c); a single lane at once. */
static inline void wq_kick(struct sim *s, const struct waitq *q)
{
	if (s->n_lanes > 1)
		wq_kick_lanes(s, q);
	else if (lane_admits_from(s, &s->lanes[0], q))
		lane_kick(s, &s->lanes[0]);
}

#endif
