/*
 * kernel_cluster: the topology: serving instances, their lanes, KV pools and queues
 * (colocated, data parallel, pipeline parallel, disaggregated); set-up and release; waking
 * idle lanes when work arrives.
 */
#include "sim/kernel_int.h"

#include <stdlib.h>
#include <string.h>

#include "policies/loop.h"

/* ---- set-up ------------------------------------------------------------------------------ */

static void lane_init(struct sim *s, struct lane *in, int idx, enum lane_role role,
		      struct waitq *q, struct kvpool *kv, struct instance *grp)
{
	memset(in, 0, sizeof *in);
	in->idx = idx;
	in->role = role;
	in->q = q;
	in->kv = kv;
	in->owner = grp;
	in->lags = host_lags_at_setup(&s->p, grp);
	in->chains = !s->p.step_by_step && grp->lanes == 1 && grp->stages == 1;
	size_t mns = (size_t)s->p.max_num_seqs;
	in->run = xmalloc(mns * sizeof *in->run);
	in->pre = xmalloc(mns * sizeof *in->pre);
	in->items = xmalloc(mns * sizeof *in->items);
	in->late = xmalloc(mns * sizeof *in->late);
	sq_init(&in->done_at, s->wpos, s->dnode, mns, &in->G);
	sq_init(&in->cross_at, s->xpos, s->xnode, mns, &in->G);
}

static void lane_release(struct lane *in)
{
	free(in->run);
	free(in->pre);
	free(in->items);
	free(in->late);
	sq_release(&in->done_at);
	sq_release(&in->cross_at);
}

static void pool_init(struct sim *s, struct kvpool *kv, int64_t blocks)
{
	memset(kv, 0, sizeof *kv);
	kv->total = kv->free = blocks;
	/* Prefix groups, then (prefix caching) one entry per request for its blocks cached
	 * after a preemption. */
	size_t entries = (size_t)s->ngroups + (s->p.prefix_caching ? s->n : 0);
	kv->pc = xcalloc(entries ? entries : 1, sizeof *kv->pc);
	kv->lru_head = kv->lru_tail = -1;
}

/* Builds the instances: lanes, their groups (one per serving instance), KV pools, queues. */
static void build_instances(struct sim *s)
{
	const struct sim_params *p = &s->p;
	int lanes = p->disaggregated || p->pp < 1 ? 1 : p->pp;
	int ninst = p->disaggregated ? p->prefill_instances + p->decode_instances
				     : (p->instances > 0 ? p->instances : 1);
	bool shared_pool = lanes > 1 && !p->loop->virtual_engines;
	s->n_instances = ninst;
	s->instances = xcalloc((size_t)ninst, sizeof *s->instances);
	s->n_lanes = ninst * lanes;
	s->lanes = xcalloc((size_t)s->n_lanes, sizeof *s->lanes);
	s->n_pools = shared_pool ? ninst : s->n_lanes;
	s->pools = xcalloc((size_t)s->n_pools, sizeof *s->pools);
	/* Virtual engines split the instance's KV cache between them (vLLM V0). */
	int64_t blocks = p->num_kv_blocks / (shared_pool ? 1 : lanes);
	for (int k = 0; k < s->n_pools; k++)
		pool_init(s, &s->pools[k], blocks);
	if (lanes > 1 && p->loop->virtual_engines) {
		s->lane_q = xcalloc((size_t)s->n_lanes, sizeof *s->lane_q);
		for (int i = 0; i < s->n_lanes; i++) {
			ih_init(&s->lane_q[i].h, s->wpos, 64);
			s->lane_q[i].front_key = INT64_MIN / 2;
			s->lane_q[i].order = p->order;
			s->lane_q[i].order_par = s->p.order_par.v;
		}
	}
	for (int g = 0; g < ninst; g++) {
		struct instance *grp = &s->instances[g];
		grp->first = g * lanes;
		grp->lanes = lanes;
		grp->stages = lanes;
		grp->stage_free = xcalloc((size_t)lanes, sizeof *grp->stage_free);
		for (int l = 0; l < lanes; l++) {
			int i = g * lanes + l;
			enum lane_role role = !p->disaggregated ? ROLE_MIXED
					      : g < p->prefill_instances ? ROLE_PREFILL : ROLE_DECODE;
			struct waitq *q = role == ROLE_DECODE ? &s->queue[Q_TRANSFERRED]
					  : s->lane_q ? &s->lane_q[i] : &s->queue[Q_NEW];
			lane_init(s, &s->lanes[i], i, role, q, &s->pools[shared_pool ? g : i], grp);
		}
	}
	for (int i = 0; i < s->n_lanes; i++) {
		for (int k = 0; k < Q_ROLES; k++)
			s->queue[k].consumers += lane_admits_from(s, &s->lanes[i], &s->queue[k]);
		if (s->lane_q)
			s->lanes[i].q->consumers++; /* its own queue, a virtual engine's */
	}
}

void sim_init(struct sim *s, const struct sim_params *p, const struct req_spec *req, size_t n,
	      struct bucketer *bucketer, const struct bucketserve_cfg *bsc,
	      const struct sim_costs *costs, const struct sim_hooks *hooks)
{
	memset(s, 0, sizeof *s);
	s->p = *p;
	s->block_shift = -1;
	s->nmax_last = UINT64_MAX;
	for (int b = 0; b < 31 && !p->step_by_step; b++)
		if ((int64_t)1 << b == (int64_t)p->block_size)
			s->block_shift = b;
	s->spec = req;
	s->n = n;
	size_t nn = n ? n : 1;
	s->r = xcalloc(nn, sizeof *s->r);
	for (size_t i = 0; i < n; i++) {
		s->r[i].t_sched = s->r[i].t_first = s->r[i].t_last_tok = -1;
		s->r[i].target = req[i].prompt_tokens;
		s->r[i].lane = -1;
		s->r[i].prefill_inst = -1;
		if (req[i].prefix_group >= s->ngroups && req[i].prefix_tokens > 0)
			s->ngroups = req[i].prefix_group + 1;
	}
	s->bucketer = bucketer;
	s->bsc = bsc;
	s->costs = *costs;
	if (hooks)
		s->hooks = *hooks;
	evq_init(&s->q);
	s->wpos = xmalloc(nn * sizeof *s->wpos);
	s->xpos = xmalloc(nn * sizeof *s->xpos);
	s->dnode = xmalloc(nn * sizeof *s->dnode);
	s->xnode = xmalloc(nn * sizeof *s->xnode);
	s->rpos = xmalloc(nn * sizeof *s->rpos);
	for (int k = 0; k < Q_ROLES; k++) {
		ih_init(&s->queue[k].h, s->wpos, 1024);
		s->queue[k].front_key = INT64_MIN / 2;
		s->queue[k].order = p->order;
		s->queue[k].order_par = s->p.order_par.v;
	}
	/* Task-aware: online requests are served first, by earliest arrival (the earliest bucket
	 * when grouped); offline ones follow scheduler.order.  FCFS has no keys: its par[] is
	 * never read. */
	if (p->task_aware && !(s->queue[Q_NEW].order = order_policy("fcfs")))
		BUG("no fcfs order registered");
	if (p->task_aware && policy_nkeys(&s->queue[Q_NEW].order->info))
		BUG("the fcfs order has keys");
	if (p->grouped) {
		if (!bsc)
			BUG("grouped scheduling without its configuration");
		static const enum queue_role grouped_roles[] = {Q_NEW, Q_OFFLINE};
		for (size_t j = 0; j < 2; j++) {
			enum queue_role k = grouped_roles[j];
			if (k == Q_OFFLINE && !p->task_aware)
				break;
			struct waitq *q = &s->queue[k];
			q->bc = *bsc;
			if (k == Q_NEW && p->task_aware) {
				q->bc.pick = BUCKETSERVE_PICK_EARLIEST;
			}
			q->bsm = xmalloc(sizeof *q->bsm);
			struct bs_err err = {0};
			if (bsm_init(q->bsm, &q->bc.bsm, &err))
				BUG("bucket manager: %s", err.msg); /* validated at set-up */
			bsm_reserve(q->bsm, n);
		}
	}
	build_instances(s);
	pipe_init(s);
	s->batch_lens = xmalloc((size_t)p->max_num_seqs * sizeof *s->batch_lens);
	/* The batch controller's declared state, one per lane (policies/batching.h). */
	const struct batch_policy *ctl = p->batching;
	if (ctl->state_size) {
		s->ctl_states = xcalloc((size_t)s->n_lanes, ctl->state_size);
		for (int i = 0; i < s->n_lanes; i++) {
			s->lanes[i].ctl_state = s->ctl_states + (size_t)i * ctl->state_size;
			if (ctl->init)
				ctl->init(s->lanes[i].ctl_state, s->p.batching_par.v);
		}
	}
#ifdef NDEBUG
	s->check_contract = false;
#else
	s->check_contract = true; /* kernel_contract.c */
#endif
	engine_controller_setup(s);
	runs_setup(s);
	waste_acc_init(&s->batch_waste);
	shapemap_init(&s->lookup);
	shapemap_init(&s->graphs_by_shape);
	metrics_init(&s->m, n, p->slo_ttft_ms, p->slo_tpot_ms);
	s->m.slo_e2e_ms = p->slo_e2e_ms;
	kv_ids_init(s);
	s->m.kv_blocks_total = 0;
	for (int k = 0; k < s->n_pools; k++)
		s->m.kv_blocks_total += s->pools[k].total;
	s->ua_group_tokens = xcalloc((size_t)(s->ngroups ? s->ngroups : 1),
				     sizeof *s->ua_group_tokens);
	s->ua_touched = xcalloc((size_t)(s->ngroups ? s->ngroups : 1), sizeof *s->ua_touched);
	client_init(s);
	client_next(s); /* the first arrival */
	if (p->monitor_ns > 0 && n) {
		evq_push(&s->q, 0, EVC_MONITOR, EV_MONITOR, 0);
		s->ticks++;
	}
	if (p->grouped && bsc->adjust == BUCKETSERVE_ADJUST_PERIOD && n) {
		evq_push(&s->q, bsc->adjust_period_ns, EVC_MONITOR, EV_ADJUST, 0);
		s->ticks++;
	}
}

void sim_release(struct sim *s)
{
	kv_ids_release(s);
	pipe_release(s);
	evq_release(&s->q);
	for (int k = 0; k < Q_ROLES; k++) {
		ih_release(&s->queue[k].h);
		if (s->queue[k].bsm) {
			bsm_release(s->queue[k].bsm);
			free(s->queue[k].bsm);
		}
	}
	for (int i = 0; i < s->n_lanes; i++)
		lane_release(&s->lanes[i]);
	free(s->lanes);
	for (int k = 0; k < s->n_pools; k++)
		free(s->pools[k].pc);
	free(s->pools);
	for (int g = 0; g < s->n_instances; g++) {
		free(s->instances[g].stage_free);
		free(s->instances[g].compiled);
	}
	free(s->instances);
	if (s->lane_q) {
		for (int i = 0; i < s->n_lanes; i++)
			ih_release(&s->lane_q[i].h);
		free(s->lane_q);
	}
	free(s->r);
	free(s->spec_sent);
	free(s->ua_group_tokens);
	free(s->ua_touched);
	free(s->wpos);
	free(s->xpos);
	free(s->dnode);
	free(s->xnode);
	free(s->rpos);
	free(s->batch_lens);
	free(s->ctl_states);
	shapemap_release(&s->lookup);
	shapemap_release(&s->graphs_by_shape);
	free(s->graphs);
	free(s->pend);
	metrics_release(&s->m);
	memset(s, 0, sizeof *s);
}

/* Whether a lane of instance G is busy. */
static bool group_busy(const struct sim *s, const struct instance *g)
{
	for (int l = 0; l < g->lanes; l++)
		if (s->lanes[g->first + l].busy)
			return true;
	return false;
}

void wq_kick_lanes(struct sim *s, const struct waitq *q)
{
	for (;;) {
		struct lane *best = NULL;
		for (int i = 0; i < s->n_lanes; i++) {
			struct lane *in = &s->lanes[i];
			if (!lane_admits_from(s, in, q) || in->busy || in->schedule_pending)
				continue;
			/* The atomic loop schedules only when its oldest microbatch returns (or
			 * while the whole pipeline is idle): new work waits for that. */
			if (s->p.loop->waits_for_oldest && in->owner->lanes > 1 && group_busy(s, in->owner))
				continue;
			if (!best || in->n_run < best->n_run)
				best = in;
		}
		if (!best)
			return;
		lane_kick(s, best);
	}
}
