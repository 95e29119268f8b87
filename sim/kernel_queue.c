/*
 * kernel_queue: the waiting queues: an ordered heap (the order policy's key) or BucketServe
 * buckets (the bucket manager), with the adjustment of the buckets.
 */
#include "sim/kernel_int.h"

#include <time.h>

/* ---- waiting queues ---------------------------------------------------------------------- */

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


/* The KV budget in tokens for Algorithm 1's N_max (Eq. 5/6): M_safe = the safe fraction of
 * M_remain, the free KV memory of one instance that admits from queue Q (the freest: a batch
 * runs on one instance), or, with scheduler.nmax_memory=sum, of all of them together. */
static uint64_t nmax_budget(const struct sim *s, const struct waitq *q)
{
	int64_t free_blocks = 0;
	for (int k = 0; k < s->n_pools; k++)
		for (int i = 0; i < s->n_lanes; i++)
			if (s->lanes[i].kv == &s->pools[k] && lane_admits_from(s, &s->lanes[i], q)) {
				int64_t f = s->pools[k].free;
				if (s->bsc->nmax_sum)
					free_blocks += f;
				else if (f > free_blocks)
					free_blocks = f;
				break;
			}
	return (uint64_t)(s->bsc->mem_safe_fraction * (double)(free_blocks * s->p.block_size));
}

void wq_adjust(struct sim *s, struct waitq *q)
{
	struct bsm_adjust_result res = {0, false};
	double t0 = s->time_bucketing ? wall_now() : 0;
	uint64_t nmax = bucketserve_nmax(&q->bc, q->bsm, nmax_budget(s, q));
	bucketserve_adjust_with(&q->bc, q->bsm, nmax, &res);
	if (s->time_bucketing)
		s->bucketing_wall_s += wall_now() - t0;
	s->nmax_last = nmax;
	s->nmax_pending = nmax != UINT64_MAX;
	if (res.splits || res.merged) {
		s->splits += res.splits;
		s->merges += res.merged;
		if (s->hooks.boundaries) {
			uint32_t b[1024];
			size_t nb = bsm_boundaries(q->bsm, b, 1024);
			s->hooks.boundaries(s->hooks.ctx, s, q == &s->queue[Q_OFFLINE], b, nb < 1024 ? nb : 1024,
					    res.splits, res.merged);
		}
	}
}

/* wq_push() (kernel_queue.h) into a bucketed queue (FRONT does not apply: inside a bucket the
 * queue's order ranks a preempted request by its key like any other). */
void wq_push_bucketed(struct sim *s, struct waitq *q, int32_t id)
{
	const struct req_spec *r = &s->spec[id];
	struct bsm_req br = {r->arrival_ns, (uint32_t)r->prompt_tokens,
			     (uint32_t)(r->prompt_tokens + r->output_tokens),
			     q->order->key(r, id, q->order_par)};
	struct bs_err err = {0};
	double t0 = s->time_bucketing ? wall_now() : 0;
	if (bsm_insert(q->bsm, (uint32_t)id, &br, &err))
		BUG("bucket insert: %s", err.msg); /* lengths are checked at set-up */
	if (s->time_bucketing)
		s->bucketing_wall_s += wall_now() - t0;
	if (q->bc.adjust == BUCKETSERVE_ADJUST_ARRIVAL && wq_is_new(s, q))
		wq_adjust(s, q);
}

/* wq_pick() (kernel_queue.h) from a bucketed queue. */
int64_t wq_pick_bucketed(struct sim *s, struct waitq *q)
{
	double t0 = s->time_bucketing ? wall_now() : 0;
	int64_t k = bucketserve_pick(&q->bc, q->bsm);
	if (s->time_bucketing)
		s->bucketing_wall_s += wall_now() - t0;
	return k;
}

/* N_max's statistics (sim_stats) count the adjustments a batch was formed under: the last
 * AdjustBuckets before a request leaves the queue, once.  An adjustment no request left the
 * queue after is not counted: how many of those there are depends on how the engine steps
 * (scheduler.adjust=batch adjusts at every step, and a decode run stands for many steps), so
 * counting them would make the statistics differ between the fast path and the step-by-step
 * reference. */
static void nmax_record(struct sim *s)
{
	if (!s->nmax_pending)
		return;
	s->nmax_pending = false;
	uint64_t nmax = s->nmax_last;
	if (!s->nmax_calls || nmax < s->nmax_min)
		s->nmax_min = nmax;
	if (nmax > s->nmax_max)
		s->nmax_max = nmax;
	s->nmax_calls++;
	s->nmax_sum += (double)nmax;
}

/* wq_remove() (kernel_queue.h) from a bucketed queue. */
void wq_remove_bucketed(struct sim *s, struct waitq *q, int32_t id)
{
	nmax_record(s);
	double t0 = s->time_bucketing ? wall_now() : 0;
	bsm_remove(q->bsm, (uint32_t)id);
	if (s->time_bucketing)
		s->bucketing_wall_s += wall_now() - t0;
}
