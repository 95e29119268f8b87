/*
 * kernel_int: the kernel's own state and the functions its files share; nothing outside
 * sim/kernel*.c includes it except the kernel's white-box unit test (tests/check_kernel.c).
 *
 * The kernel's files, one job each:
 *   kernel.c          the event loop: events, transfers, monitor samples, invariants, accessors
 *   kernel_cluster.c  the topology: instances, their lanes, KV pools and queues; kicking lanes
 *   kernel_engine.c   the engine step: schedule (admission, preemption), submit, update
 *   kernel_passes.c   passes: accounting, batches.csv order, the decode-run fast path
 *   kernel_queue.c    the waiting queues (an ordered heap or BucketServe buckets)
 *   kernel_kv.c       the paged KV block pool and the automatic prefix cache
 *   kernel_defrag.c   block ids of a KV pool (contiguous PA) and the online defragmenter
 *   kernel_client.c   when requests are sent: open loop, or a closed loop of N in flight
 *   kernel_unified.c  the shape of a unified-attention pass (create_unified_batch)
 *   kernel_graph.c    the compiled-graph set: padded shapes, their cost and compile state
 *   kernel_heap.c     indexed 4-ary heaps of request ids (sim/kernel_heap.h)
 *   kernel_stepq.c    step queues: a timing wheel of request ids by step (sim/kernel_stepq.h)
 *   kernel_params.c   kernel parameters from the configuration; the cost-model adapter
 *   kernel_pipeline.c pipeline parallelism: microbatches through the stages, their metrics
 *   kernel_host.c     the host side of an engine step: host time, async scheduling's lag
 *   kernel_prefill.c  a step's prefill chunks grouped into passes (upstream's merge rule)
 *   kernel_contract.c the batch controller's and the order's contract with the fast path,
 *                     checked at every step a decode run skips (builds without NDEBUG)
 *
 * Names: a serving instance (struct instance) has one lane (struct lane), or cluster.pp lanes
 * with pipeline parallelism (its microbatch slots, or its virtual engines); the waiting
 * queues are named by role (enum queue_role).
 */
#ifndef BS_KERNEL_INT_H
#define BS_KERNEL_INT_H

#include <assert.h>
#include <string.h>

#include "policies/loop.h"
#include "sim/evq.h"
#include "sim/kernel_heap.h"
#include "sim/kernel_stepq.h"
#include "sim/kernel.h"
#include "sim/shapemap.h"

/* Event classes: at equal times, arrivals and transfers are seen before pass completions,
 * those before the engines schedule (so requests arriving together are scheduled together),
 * and monitor samples last.  Pass completions at equal times go in lane order (their
 * sequence number is their lane's index: evq_push_seq). */
enum ev_class { EVC_ARRIVAL = 0, EVC_PASS_DONE = 1, EVC_SCHEDULE = 2, EVC_MONITOR = 3 };
enum ev_kind { EV_ARRIVAL, EV_PASS_DONE, EV_SCHEDULE, EV_TRANSFER, EV_MONITOR, EV_ADJUST };

enum lane_role { ROLE_MIXED, ROLE_PREFILL, ROLE_DECODE };
/* The waiting queues by role: new requests (the online ones when task-aware), requests whose
 * KV cache was transferred (disaggregated), offline requests (task-aware). */
enum queue_role { Q_NEW, Q_TRANSFERRED, Q_OFFLINE, Q_ROLES };


/* The cached prefix of one prefix group on one instance (automatic prefix caching). */
struct pcache {
	int32_t blocks;                 /* cached blocks of the group's prefix (0 = none) */
	int32_t ref;                    /* running requests referencing them */
	int32_t prev, next;             /* LRU list of unreferenced cached groups (-1 = none) */
	int32_t base;                   /* a preempted request's entry: the group blocks its own
					 * blocks follow */
};


/* A run of TIMES identical passes not yet reported (the first is REC). */
struct pass_pending {
	struct pass_rec rec;
	int64_t cost_ns;                /* one pass without compile */
	int64_t left;                   /* passes of the run still to report */
	int64_t period_ns;              /* from one pass's start to the next one's: the engine
					 * step with its host time (sim/kernel_host.c), or for a
					 * pipelined run the step through every stage */
	uint64_t run;                   /* the run's number (step_run.run), 0 for one pass */
};


/* The fast path's caches in front of pure functions, direct-mapped and unused in the
 * step-by-step reference (sim.decode_jumps = false), which the differential test compares
 * with: a real shape's graph (shape_graph) and a step's host time (step_host_ns). */
#define SHAPE_CACHE_BITS 12
#define SHAPE_CACHE (1 << SHAPE_CACHE_BITS)
#define HOST_CACHE_BITS 10
#define HOST_CACHE (1 << HOST_CACHE_BITS)
struct shape_slot {
	struct shape_key k;
	int32_t gi1;                    /* graph + 1; 0 = empty */
};
struct host_slot {
	int32_t decodes, prefills;
	int64_t ns;                     /* 0 = empty */
};

struct pre_item {
	int32_t id, chunk;
	int32_t ahead;                  /* tokens of the request in flight in older microbatches
					 * (cluster.async_prefill_chunks), after `computed` */
};


/* A waiting queue: an ordered heap, or BucketServe buckets when grouped. */
struct waitq {
	struct iheap h;
	struct bsm *bsm;                /* NULL = plain heap */
	struct bucketserve_cfg bc;      /* its bucket choice and adjustment (grouped only) */
	const struct order_policy *order; /* heap only */
	const double *order_par;        /* its keys' values (struct policy_params) */
	int64_t front_key;              /* decreasing key for preempted requests (heap only) */
	int consumers;                  /* instances (lanes) admitting from it */
};

/* A set of ids 0..n-1: a bitmap with summary levels (bit i of level l + 1 is set when word i
 * of level l is not zero), so that inserting, erasing, the largest member and the smallest
 * member from x on each take O(log64 n). */
#define IDSET_LEVELS 6                  /* 64^6 = 2^36 ids */
struct idset {
	uint64_t *w[IDSET_LEVELS];
	int64_t nw[IDSET_LEVELS];       /* words of each level */
	int levels;
};

/* A list of block ids (a request's block table, a cached prefix). */
struct blist {
	int32_t *v;
	int32_t n, cap;
};

/* The block ids of a KV pool, modelled with contiguous PA (the decode pass reads the slice
 * cache[:highest id + 1]; sim/kernel_defrag.c).  Ids run 1..n: block 0 is vLLM's null block.
 * The scheduler's (logical) ids come from vLLM's free-block queue; the defragmenter maps them
 * to the (physical) ids the kernel reads. */
struct kvids {
	int32_t n;
	int32_t *fifo;                  /* free logical ids, a ring of n: FreeKVCacheBlockQueue */
	int64_t head, len;
	int32_t *fwd, *bwd;             /* the defragmenter's logical -> physical map and back
					 * (NULL: no defragmenter, physical = logical) */
	struct idset used, freeset;     /* physical ids in use, physical ids 1..n not in use */
	struct blist *pcl;              /* the logical ids of each prefix-cache entry (as pc) */
	int32_t npcl;
	int64_t n_used;                 /* ids in used */
};

/* A lane's decode batch's physical block ids (contiguous PA): references by its decoding
 * requests per id, and the set of ids referenced. */
struct lane_ids {
	int32_t *ref;
	struct idset set;
	int64_t distinct;               /* ids in set */
};

/* A paged KV-cache block pool, with the prefix cache kept in it.  Each instance has its own;
 * the lanes of a pipeline-parallel instance with the async or atomic loop share one. */
struct kvpool {
	int64_t total, free, used;
	int64_t t_used;                 /* when `used` last changed */
	int64_t cached_free;            /* free blocks still holding an unreferenced prefix */
	int64_t reserved;               /* memory-safe batching: tokens reserved by its requests */
	struct pcache *pc;              /* by prefix group; with prefix caching, then by request
					 * id (a preempted request's own cached blocks) */
	int32_t lru_head, lru_tail;     /* unreferenced cached groups, least recently used first */
	struct kvids *ids;              /* NULL: block ids not modelled (kernel_defrag.c) */
};

/* One serving instance: its lanes (1, or cluster.pp with pipeline parallelism) share the
 * pipeline stages, the compiled graphs and, with the async and atomic loops, the KV pool and
 * the max_num_seqs limit. */
struct instance {
	int first, lanes;
	int stages;
	int64_t *stage_free;            /* when each pipeline stage is next free */
	int32_t running;                /* running requests over its lanes */
	uint8_t *compiled;              /* by graph index */
	size_t compiled_cap;
	/* Pipeline parallelism (kernel_pipeline.c). */
	int64_t *stage_busy;            /* compute time of each stage */
	int64_t active_ns, active_since; /* time with a running request; since when (-1: none) */
};

/* The accounting of the last pass of a step, so that a run of identical decode steps can be
 * cut short (the kernel's cut_run). */
struct step_run {
	int32_t gi;                     /* graph */
	int phase;
	int64_t t0;                     /* start of the first pass */
	int64_t real_tokens, padded_tokens, real_blocks, padded_blocks; /* per pass */
	uint64_t run;                   /* its pending entry's number: a lane may have other
					 * passes pending (a pipelined lane's earlier steps) */
};

/* One lane of a serving instance: a scheduler with its running set and one step in flight
 * (the instance itself without pipeline parallelism; a microbatch slot or a virtual engine
 * with it).  Its role is the instance's: mixed (colocated), prefill or decode. */
struct lane {
	int idx;
	enum lane_role role;
	struct waitq *q;                /* where it admits from */
	struct kvpool *kv;
	struct instance *owner;         /* the serving instance it is a lane of */
	int32_t *run;                   /* running ids (unordered; admit order in req.admit) */
	size_t n_run;
	int32_t *pre;                   /* running requests still in prefill, admission order */
	size_t n_pre;
	struct stepq done_at, cross_at; /* decoding requests: step of completion / next block */
	int32_t n_dec;
	int64_t dec_blocks;             /* blocks held by decoding requests */
	int64_t G;                      /* decode steps executed */
	/* The step in flight. */
	struct pre_item *items;
	size_t n_items;
	int64_t *late;                  /* requests whose first token of the step does not follow
					 * their last one by one step (a transferred request joining
					 * a decode instance): the wait before the step, each */
	size_t n_late;
	int32_t step_dec;
	int32_t itl_gi;                 /* the step's graph when it is decode-only (the fast path
					 * counts its gaps there: struct graph), or -1 */
	int64_t step_k, step_dt, last_end;
	int64_t step_t0;                /* when the step in flight (its run) started */
	int64_t mon_counted;            /* steps of the run counted in the monitor window: a
					 * step counts in the window where it starts */
	struct step_run last_pass;      /* the last pass submitted (a run of step_k when
					 * decoding only) */
	int64_t gen;                    /* generation of its pass-done event (cut_run) */
	bool busy, schedule_pending;
	int64_t busy_ns;
	int32_t ua_logits;              /* unified: logits of the pass being accounted */
	/* Pipeline parallelism (kernel_pipeline.c): the microbatch of the step in flight. */
	int64_t *mb_stage;              /* each stage's compute of one step */
	int64_t mb_pre;                 /* per-pass overheads and compiles of one step */
	int64_t mb_tokens;              /* padded tokens whose activations go stage to stage */
	int64_t mb_empties;             /* atomic: empty microbatches pushed per step of its run */
	bool returned;                  /* its microbatch just returned (engine_update) */
	bool lost;                      /* atomic loop without empty microbatches: a slot lost */
	/* Host time and async scheduling (sim/kernel_host.c). */
	int64_t host_ns;                /* host time of each step in flight */
	int64_t sched_cutoff;           /* when lag: requests arriving after this time wait one
					 * step more (async scheduling) */
	bool lag;                       /* the next schedule follows a step (async scheduling) */
	bool lag_blocked;               /* the last schedule left a request for that reason */
	bool lags;                      /* host_lags(), fixed at set-up (kernel_cluster.c) */
	bool chains;                    /* the fast path may end its steps without the event
					 * queue when nothing comes first (engine_schedule): fixed at
					 * set-up (kernel_cluster.c) */
	/* The fast path's rules for its decode runs that do not change during the run
	 * (kernel_passes.c, runs_setup): */
	bool no_runs;                   /* every step its own event: the step-by-step reference,
					 * or every step adjusts its buckets (adjusts_every_step) */
	bool fifo_closed;               /* a waiting request that cannot join keeps its queue
					 * closed to later arrivals (arrivals_matter) */
	/* Contiguous PA (kernel_defrag.c): its decode batch's block ids (NULL: not modelled),
	 * and the step in flight's highest id + 1 and distinct ids read by its decode. */
	struct lane_ids *dids;
	int64_t step_span, step_distinct;
	int32_t step_swaps;             /* the defragmenter's swaps before the step in flight */
	/* The batch controller (policies/batching.h), last (the view is large and read only by
	 * controllers with a take()): the steps this lane ran, for the contract check the
	 * arrival cutoff of the step's admission and, by queue admitted from (its own, then the
	 * offline one), the request that closed the batch (-1: none); its declared state, and
	 * its view of the step in flight (valid when view_set). */
	int64_t steps;
	int64_t seen_until;
	int32_t closed_by[2];
	bool view_set;
	void *ctl_state;
	struct batch_view view;
};

struct sim {
	struct sim_params p;
	int block_shift;                /* log2(block_size) when a power of two, for blocks_for;
					 * -1: divide (always in the step-by-step reference) */
	const struct req_spec *spec;
	size_t n;
	struct req *r;
	struct bucketer *bucketer;      /* NULL = no bucketing */
	const struct bucketserve_cfg *bsc; /* NULL unless grouped or memory-safe */
	struct sim_costs costs;
	struct sim_hooks hooks;

	struct evq q;
	int64_t now;
	size_t ticks;                   /* periodic ticks (monitor, bucket adjustment) queued */
	int64_t work_ns;                /* time of the last event that is not a periodic tick (a
					 * monitor sample, a bucket adjustment): the run's end */
	size_t next_arrival;

	/* Heap positions by request id: in the waiting queues or done_at (a request is in one
	 * at most), and in cross_at; the step queues' entries by request id. */
	int32_t *wpos, *xpos;
	struct sq_node *dnode, *xnode;  /* done_at's, cross_at's */
	int32_t *rpos;                  /* a running request's index in its lane's run array */
	struct waitq queue[Q_ROLES];    /* by role */
	struct lane *lanes;             /* every lane of every instance, instance by instance */
	int n_lanes;
	struct kvpool *pools;
	int n_pools;
	struct instance *instances;     /* serving instances */
	int n_instances;
	struct waitq *lane_q;           /* virtual engines: one queue per lane */
	int32_t next_admit;

	struct shapemap lookup;         /* (phase, real shape) -> graph */
	struct shape_slot shape_cache[SHAPE_CACHE]; /* recent look-ups (kernel_graph.c) */
	struct host_slot host_cache[HOST_CACHE];    /* recent host times (kernel_host.c) */
	struct shapemap graphs_by_shape;
	struct graph *graphs;
	size_t n_graphs, cap_graphs;

	int64_t pass_index;
	struct pass_pending *pend;      /* passes not yet reported, a heap by (start, instance) */
	size_t n_pend, cap_pend;
	uint64_t n_runs;                /* runs numbered so far (pass_pending.run) */
	int64_t events;
	bool stepping;                  /* in sim_step(): one event at a time */
	/* Preemptions since a prefill last completed (kernel_engine.c): past LIVELOCK_PREEMPTIONS
	 * the requests only preempt each other, and the run stops (livelock) with them unfinished. */
	int64_t preempt_since_prefill;
	bool livelock;
	size_t arrived, finished, transferring;
	int32_t ngroups;                /* prefix groups (max prefix_group + 1) */
	int64_t prefix_hit_tokens;      /* prompt tokens served from the prefix cache */
	int64_t kv_used_all;            /* KV blocks in use over every pool */
	/* Monitor window. */
	size_t mon_arrivals;
	int64_t wait_prompt_tokens;     /* prompt tokens of the requests in queue[Q_NEW] and queue[Q_OFFLINE] */
	int64_t mon_step_ns, mon_steps; /* steps started in the window and their duration */
	/* BucketServe. */
	uint64_t splits, merges;
	uint64_t nmax_last, nmax_calls, nmax_min, nmax_max; /* N_max of AdjustBuckets (sim_stats) */
	bool nmax_pending; /* nmax_last not yet counted: no request has left the queue since */
	double nmax_sum;
	struct waste_acc batch_waste;   /* Eq. 2 over admitted batches */
	uint32_t *batch_lens;
	double bucketing_wall_s;        /* wall time in grouping/ordering code (--perf) */
	bool time_bucketing;
	int64_t transfer_ns_total;
	int64_t transfers;
	struct metrics m;
	/* The client (kernel_client.c). */
	struct req_spec *spec_sent;     /* closed loop: the requests with their send times (spec
					 * points here); NULL in an open loop */
	bool arrival_pending;           /* the next request's arrival event is scheduled */
	/* The fast path keeps the scheduled arrival out of the event queue: its time and the
	 * queue sequence number it would have had; the event loop compares it with the queue's
	 * top.  The step-by-step reference queues it as an event. */
	bool arrival_held;
	int64_t arrival_t;
	uint64_t arrival_seq;
	/* Unified passes (kernel_unified.c): query tokens reading each prefix group's blocks in
	 * the pass being shaped (all 0 between passes), and the groups touched. */
	int64_t *ua_group_tokens;
	int32_t *ua_touched;
	/* Pipeline parallelism (kernel_pipeline.c). */
	int64_t *stage_cost;            /* by graph x stage; -1 = not computed */
	size_t stage_cost_n;            /* graphs covered */
	int64_t empty_microbatches;     /* atomic loop */
	int64_t frag_preemptions, frag_free_blocks; /* virtual engines: KV fragmentation */
	int64_t lost_slots;             /* atomic loop without empty microbatches */
	int32_t *inflight;              /* async prefill chunks: tokens in flight by request */
	struct blist *rids;             /* block ids: each request's block table (its own
					 * blocks, logical ids); NULL when not modelled */
	unsigned char *ctl_states;      /* the batch controller's state, state_size per lane */
	bool check_contract;            /* check the policies' contract (kernel_contract.c): on
					 * unless NDEBUG; set with sim_check_contract() */
	/* What the engine does for the batch controller, from its declaration and the contract
	 * switch (engine_controller_setup): */
	bool view_waiting;              /* its view counts the waiting requests (host_waiting):
					 * it reads them (BV_WAITING), or the step-by-step
					 * reference or the contract check builds every input */
	bool steps_told;                /* its steps are replayed after they ran (steps_done):
					 * it has on_step_done, or the contract check is on */
	bool ctl_varies;                /* its view may change at every step (controller_varies):
					 * a take() reading BV_CLOCK or BV_STEP, or on_step_done */
};


/* ---- kernel_host.c: host time and async scheduling (the small rules inline here) ---- */
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

/* For the white-box test: a simulation in caller-owned storage (sim_new() allocates it). */
void sim_init(struct sim *s, const struct sim_params *p, const struct req_spec *req, size_t n,
	      struct bucketer *bucketer, const struct bucketserve_cfg *bsc,
	      const struct sim_costs *costs, const struct sim_hooks *hooks);
void sim_release(struct sim *s);

/* kernel_queue.c */
void wq_adjust(struct sim *s, struct waitq *q);
int64_t wq_pick_bucketed(struct sim *s, struct waitq *q);
/* The bucket admission draws from next, or -1 (plain heap: 0). */
static inline int64_t wq_pick(struct sim *s, struct waitq *q)
{
	if (!q->bsm)
		return q->h.n ? 0 : -1;
	return wq_pick_bucketed(s, q);
}
/* wq_push() (below) into a bucketed queue. */
void wq_push_bucketed(struct sim *s, struct waitq *q, int32_t id);
void wq_remove_bucketed(struct sim *s, struct waitq *q, int32_t id);

/* kernel_cluster.c */
/* wq_kick() (below) with several lanes. */
void wq_kick_lanes(struct sim *s, const struct waitq *q);

/* kernel_graph.c */
/* pad_shape() (below) past the fast path: look-up, graph and compile. */
int32_t pad_shape_(struct sim *s, struct lane *in, int phase, const int32_t real[4],
		   int64_t *compile_ns);
/* pad_shape's look-up, without compiling: the graph REAL pads to, its padded shape in PADDED
 * (may be NULL).  Without MAKE no graph is created unless the look-up added a fallback bucket
 * (returns -1 then). */
int32_t shape_graph(struct sim *s, int phase, const int32_t real[4], bool make, int32_t padded[4]);

/* kernel_prefill.c: the pass of the step's prefill items from I on (upstream's grouping);
 * returns the end of its items and its real shape.  prefill_group() (inline, below) answers
 * for the step's last item, which has nothing to merge with. */
size_t prefill_group_(struct sim *s, const struct lane *in, size_t i, int32_t real[4]);

/* kernel_kv.c */
/* Request R (ID), holding a share of its group's cached prefix, drops it (kv_release()). */
void pc_unref_(struct sim *s, struct lane *in, struct req *r, int32_t id);
void pc_donate_(struct sim *s, struct lane *in, struct req *r, int32_t id);
/* After a prefill chunk of request ID: it may give its group's prefix to the cache. */
static inline void pc_donate(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	if (s->p.prefix_caching && s->spec[id].prefix_group >= 0) /* else nothing to share */
		pc_donate_(s, in, r, id);
}
void pc_ref(struct sim *s, struct lane *in, struct req *r, int32_t g, int32_t share);
/* Evicts unreferenced cached blocks until NB blocks can be taken without touching one: a
 * group's prefix as a whole, a preempted request's blocks from their tail, as many as needed. */
void pc_evict_for(struct sim *s, struct lane *in, int64_t nb);
void kv_preempt(struct sim *s, struct lane *in, struct req *r, int32_t id, int64_t kv_tokens);
int32_t kv_resume_blocks(const struct sim *s, const struct lane *in, int32_t id, int32_t hit,
			 int32_t max_blocks);
void kv_resume(struct sim *s, struct lane *in, struct req *r, int32_t id, int32_t own);

/* kernel_defrag.c: block ids (with contiguous PA, outside unified attention) and the online
 * defragmenter.  kv_ids_* keep the ids in step with kernel_kv.c's block counts. */
void idset_init(struct idset *t, int64_t n);
void idset_release(struct idset *t);
void idset_insert(struct idset *t, int64_t x);
void idset_erase(struct idset *t, int64_t x);
bool idset_has(const struct idset *t, int64_t x);
int64_t idset_max(const struct idset *t);          /* -1: empty */
int64_t idset_next(const struct idset *t, int64_t x); /* smallest member >= x, -1: none */
void kv_ids_init(struct sim *s);
void kv_ids_release(struct sim *s);
/* Takes NB ids from the free queue for request ID (appended to its block table). */
void kv_ids_take_(struct sim *s, struct kvpool *kv, int32_t id, int32_t nb);
static inline void kv_ids_take(struct sim *s, struct kvpool *kv, int32_t id, int32_t nb)
{
	if (kv->ids)
		kv_ids_take_(s, kv, id, nb);
}
/* Frees request ID's whole block table (tail first, as vLLM frees a request's blocks). */
void kv_ids_free_request(struct sim *s, struct kvpool *kv, int32_t id);
/* Moves prefix-cache entry E's ids: into / out of the blocks in use (referenced or not). */
void kv_ids_entry_use(struct kvpool *kv, int32_t e, bool used);
/* Evicts the last N ids of entry E into the free queue. */
void kv_ids_entry_evict(struct kvpool *kv, int32_t e, int32_t n);
/* Request ID's first N ids become entry E's (they stay in use). */
void kv_ids_donate(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t n);
/* Preemption: request ID's first KEPT ids become entry E's (no longer in use), the rest are
 * freed. */
void kv_ids_preempt(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t kept);
/* Resume: entry E's ids from FROM on, OWN of them, become request ID's (in use); the others
 * are freed. */
void kv_ids_resume(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t from,
		   int32_t own);
/* Request ID joins (SIGN 1) or leaves (-1) IN's decode batch: its block table (from FROM on)
 * and its group's shared blocks enter or leave the lane's set. */
void kv_ids_decode_(struct sim *s, struct lane *in, int32_t id, int sign, int32_t from);
static inline void kv_ids_decode(struct sim *s, struct lane *in, int32_t id, int sign,
				 int32_t from)
{
	if (in->dids)
		kv_ids_decode_(s, in, id, sign, from);
}
/* The online defragmenter of IN's pool before its step (OnlineDefragmenter.defragment):
 * returns the device time of its swaps (0: none), their number in in->step_swaps. */
int64_t kv_defrag_(struct sim *s, struct lane *in);
static inline int64_t kv_defrag(struct sim *s, struct lane *in)
{
	if (!s->p.defrag)
		return 0; /* in->step_swaps stays 0 */
	return kv_defrag_(s, in);
}
/* The decode shape of IN's step with contiguous PA: the highest physical id its decode
 * batch reads + 1; records it for the fragmentation metric. */
int32_t kv_decode_span(struct lane *in);
/* IN's step ended after K decode steps: the fragmentation metric counts them. */
static inline void kv_decode_done(struct sim *s, const struct lane *in, int64_t k)
{
	if (!in->dids)
		return;
	s->m.kv_span_blocks += k * in->step_span;
	s->m.kv_read_blocks += k * in->step_distinct;
}
/* KV's ids agree with its counts: as many in use, the free queue holds its uncached free
 * blocks. */
bool kv_ids_consistent(const struct kvpool *kv);
/* The highest physical id in use in KV (0: none, or ids not modelled). */
int64_t kv_max_id(const struct kvpool *kv);

/* kernel_client.c */
void client_init(struct sim *s);
/* Whether the client may send one more request now. */
static inline bool client_slot(const struct sim *s)
{
	return !s->p.concurrency || s->arrived - s->finished < (size_t)s->p.concurrency;
}
/* When the next request arrives, if it is already known (INT64_MAX: not before a completion,
 * or none left). */
static inline int64_t client_next_arrival_ns(const struct sim *s)
{
	if (s->next_arrival >= s->n || (!s->arrival_pending && !client_slot(s)))
		return INT64_MAX; /* none, or at a completion (which ends or cuts a run) */
	int64_t t = s->spec[s->next_arrival].arrival_ns;
	return t < s->now ? s->now : t;
}

/* kernel_unified.c */
/* The unified shape (query tokens, shared blocks, unique blocks, causal) of IN's step and its
 * logits. */
void unified_shape(struct sim *s, struct lane *in, int32_t real[4], int32_t *logits);
/* The same as one GPU forward (execution mode cuda_graphs): (tokens, prefill context blocks,
 * decode blocks, prefill tokens). */
void forward_shape(struct sim *s, struct lane *in, int32_t real[4], int32_t *logits);

/* kernel_engine.c */
void engine_schedule(struct sim *s, struct lane *in);
void engine_update(struct sim *s, struct lane *in);
/* Sets the engine's facts about the batch controller (struct sim's view_waiting, steps_told,
 * ctl_varies) and each lane's view's constants; again when the contract switch changes. */
void engine_controller_setup(struct sim *s);

/* kernel_contract.c: step J (> 0) of the run of identical decode steps IN just ran, which
 * the fast path skipped, checked against what the policies would have done on it, V being
 * the step's view (struct sim's check_contract); a violation is a BUG naming the policy. */
void contract_check_step(const struct sim *s, const struct lane *in, int64_t j,
			 const struct batch_view *v);
/* Whether the steps of IN's run could have admitted anything at all (contract_check_step
 * has something to check). */
bool contract_applies(const struct sim *s, const struct lane *in);

/* kernel_passes.c */
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

/* kernel_pipeline.c */
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

/* Small helpers used by several files. */

static inline int32_t blocks_for(const struct sim *s, int64_t tokens)
{
	if (s->block_shift >= 0 && tokens >= 0) /* the same quotient, without a division */
		return (int32_t)((tokens + s->p.block_size - 1) >> s->block_shift);
	return (int32_t)((tokens + s->p.block_size - 1) / s->p.block_size);
}

/* kernel_prefill.c's rules, inline: an item's context (the request's computed tokens plus
 * its chunks still in older microbatches, cluster.async_prefill_chunks), and the real shape
 * of a pass of item I alone, the same merged or not. */
static inline int64_t prefill_item_context(const struct sim *s, const struct lane *in, size_t j)
{
	return (int64_t)s->r[in->items[j].id].computed + in->items[j].ahead;
}

static inline void prefill_item_shape(const struct sim *s, const struct lane *in, size_t i,
				      bool with_ctx, int32_t real[4])
{
	real[0] = 1;
	real[1] = in->items[i].chunk;
	real[2] = with_ctx ? blocks_for(s, prefill_item_context(s, in, i)) : 0;
	real[3] = 0;
}

static inline size_t prefill_group(struct sim *s, const struct lane *in, size_t i,
				   int32_t real[4])
{
	if (i + 1 < in->n_items)
		return prefill_group_(s, in, i, real);
	/* The step's last item (every pass, with one prefill per step): a pass of its own. */
	prefill_item_shape(s, in, i, true, real);
	return i + 1;
}

static inline int32_t ih_top(const struct iheap *h)
{
	return h->n ? h->e[0].id : -1;
}

/* The key of the heap's top (not empty). */
static inline int64_t ih_top_key(const struct iheap *h)
{
	return h->e[0].key;
}

static inline size_t wq_len(const struct waitq *q)
{
	return q->bsm ? bsm_total(q->bsm) : q->h.n;
}

/* Whether IN may run one more request: max_num_seqs bounds an instance, over its lanes when
 * they share one scheduler (async and atomic loops) and per lane for virtual engines. */
static inline bool lane_has_slot(const struct sim *s, const struct lane *in)
{
	if (in->owner->lanes > 1 && !s->p.loop->virtual_engines)
		return in->owner->running < s->p.max_num_seqs;
	return in->n_run < (size_t)s->p.max_num_seqs;
}

/* The request admission draws from next in Q (bucket K when grouped), or -1. */
static inline int32_t wq_peek(struct sim *s, struct waitq *q, int64_t k)
{
	(void)s;
	if (k < 0)
		return -1;
	if (!q->bsm)
		return ih_top(&q->h);
	return (int32_t)bsm_peek(q->bsm, (size_t)k);
}

/* Whether Q holds new requests (not the transferred ones, whose prompts are computed). */
static inline bool wq_is_new(const struct sim *s, const struct waitq *q)
{
	return q != &s->queue[Q_TRANSFERRED];
}

/* Queues ID in Q; FRONT puts a preempted request ahead of the others (vLLM prepends it). */
static inline void wq_push(struct sim *s, struct waitq *q, int32_t id, bool front)
{
	if (wq_is_new(s, q))
		s->wait_prompt_tokens += s->spec[id].prompt_tokens;
	if (q->bsm)
		wq_push_bucketed(s, q, id);
	else
		ih_push(&q->h, id, front ? q->front_key-- : q->order->key(&s->spec[id], id, q->order_par));
}

/* Takes request ID out of Q. */
static inline void wq_remove(struct sim *s, struct waitq *q, int32_t id)
{
	if (wq_is_new(s, q))
		s->wait_prompt_tokens -= s->spec[id].prompt_tokens;
	if (!q->bsm)
		ih_remove(&q->h, id);
	else
		wq_remove_bucketed(s, q, id);
}

/* Whole blocks of request ID's prompt that its prefix group can share. */
static inline int32_t prefix_blocks(const struct sim *s, int32_t id)
{
	const struct req_spec *q = &s->spec[id];
	if (!s->p.prefix_caching || q->prefix_group < 0 || q->prefix_tokens <= 0)
		return 0;
	int32_t p = q->prefix_tokens < q->prompt_tokens ? q->prefix_tokens : q->prompt_tokens - 1;
	return p / s->p.block_size;
}

/* kernel_engine.c's budget rule: the token budget for new prompts in a step of which LEFT
 * tokens of max_num_batched_tokens are left (after its decodes and running prefills): LEFT,
 * or none (INT32_MAX) under a controller whose batch is one padded pass (padded_pass: whole
 * prompts, the controller bounds the batch by memory; sim/kernel_prefill.c runs them as one
 * pass).  Admission goes on while some budget is left, or past it for a controller that
 * takes requests beyond it (their prefills wait).  admit_from and the contract check
 * (kernel_contract.c) both use it. */
static inline int64_t step_budget(const struct sim *s, int64_t left)
{
	return s->p.batching->padded_pass ? INT32_MAX : left;
}
static inline bool budget_admits(const struct sim *s, int64_t budget)
{
	return budget > 0 || s->p.batching->beyond_budget;
}

/* kernel_engine.c's admission rule for one candidate, without effects: whether the kernel's
 * checks let waiting request ID join IN's step within BUDGET tokens (the step's token budget,
 * unless the controller takes requests beyond it; free KV blocks for the step's chunk).  Its
 * cached blocks and chunk go to *O; offer_cand() is the candidate a controller's take() is
 * offered. */
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

/* The queue a new (or preempted) request waits in: its role, and the queue. */
static inline enum queue_role wq_role_for(const struct sim *s, int32_t id)
{
	return s->p.task_aware && s->spec[id].task == TASK_OFFLINE ? Q_OFFLINE : Q_NEW;
}
static inline struct waitq *wq_for(struct sim *s, int32_t id)
{
	return wq_role_for(s, id) == Q_OFFLINE ? &s->queue[Q_OFFLINE] : &s->queue[Q_NEW];
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

/* The fast path: whether an event queued at T in class CLS would be the next one taken (none
 * queued comes first), so that it may be handled without the queue.  Never in the
 * step-by-step reference. */
static inline bool first_at(const struct sim *s, int64_t t, int cls)
{
	const struct event *top = evq_peek(&s->q);
	return !s->p.step_by_step &&
	       (!top || top->t_ns > t || (top->t_ns == t && top->cls > cls)) &&
	       (!s->arrival_held || s->arrival_t > t);
}

/* The same for an event queued now. */
static inline bool next_now(const struct sim *s, int cls)
{
	return first_at(s, s->now, cls);
}

/* Whether IN, its step just ended, schedules at once (in the same event) rather than through
 * a schedule event: an instance of one lane not yet asked to, when nothing queued comes
 * first. */
static inline bool schedules_at_once(const struct sim *s, const struct lane *in)
{
	return in->owner->lanes == 1 && !in->schedule_pending && next_now(s, EVC_SCHEDULE);
}

/* Time moves to the event at T: the pass hook's passes starting before it are reported. */
static inline void advance_to(struct sim *s, int64_t t)
{
	if (s->n_pend)
		pend_flush(s, t);
	s->now = t;
	s->events++;
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

/* A shape's four sizes as two 64-bit words, so that hashing and comparing take them two at
 * a time (the cache's slots depend on the byte order, its answers do not). */
static inline void shape_words(const struct shape_key *k, uint64_t w[2])
{
	memcpy(w, k->v, 2 * sizeof *w);
}

/* The fast path's cache slot of a real shape (struct shape_slot): multiplicative hashing, the
 * slot from the product's high bits. */
static inline struct shape_slot *shape_slot(struct sim *s, const struct shape_key *k)
{
	uint64_t w[2];
	shape_words(k, w);
	uint64_t h = (w[0] + (uint64_t)k->phase) * 0x9E3779B97F4A7C15ull ^
		     w[1] * 0xC2B2AE3D27D4EB4Full;
	return &s->shape_cache[h >> (64 - SHAPE_CACHE_BITS)];
}

static inline bool same_shape(const struct shape_key *a, const struct shape_key *b)
{
	uint64_t x[2], y[2];
	shape_words(a, x);
	shape_words(b, y);
	return a->phase == b->phase && ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/* Pads real shape REAL of PHASE to its graph on IN's instance, *COMPILE_NS the runtime
 * compile charged now (kernel_graph.c).  The fast path answers a recent look-up of a graph
 * compiled there at once. */
static inline int32_t pad_shape(struct sim *s, struct lane *in, int phase, const int32_t real[4],
				int64_t *compile_ns)
{
	if (!s->p.step_by_step) {
		struct shape_key k = {phase, {real[0], real[1], real[2], real[3]}};
		const struct shape_slot *c = shape_slot(s, &k);
		const struct instance *grp = in->owner;
		if (c->gi1 && same_shape(&c->k, &k) && (size_t)(c->gi1 - 1) < grp->compiled_cap &&
		    grp->compiled[c->gi1 - 1]) {
			*compile_ns = 0;
			return c->gi1 - 1;
		}
	}
	return pad_shape_(s, in, phase, real, compile_ns);
}

/* Changes the blocks in use of KV, integrating blocks x time for kv_utilization_mean
 * (kernel_kv.c). */
static inline void pool_used_add(struct sim *s, struct kvpool *kv, int64_t delta)
{
	s->m.kv_block_ns += (double)kv->used * (double)(s->now - kv->t_used);
	kv->t_used = s->now;
	kv->used += delta;
	kv->free -= delta;
	s->kv_used_all += delta;
	if (s->kv_used_all > s->m.kv_blocks_peak)
		s->m.kv_blocks_peak = s->kv_used_all;
}

/* Request R takes NB free blocks of IN's pool (kernel_kv.c), evicting cached ones first when
 * the uncached free blocks do not suffice. */
static inline void kv_take(struct sim *s, struct lane *in, struct req *r, int32_t nb)
{
	struct kvpool *kv = in->kv;
	assert(kv->free >= nb);
	if (kv->free - nb < kv->cached_free && kv->lru_head >= 0)
		pc_evict_for(s, in, nb);
	pool_used_add(s, kv, nb);
	kv_ids_take(s, kv, (int32_t)(r - s->r), nb);
	r->blocks += nb;
}

/* kernel_passes.c's monitor rule, inline: counts in the monitor window the steps of IN's run
 * in flight up to STARTED of them (capped at the run's length) not counted yet. */
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

/* Frees the blocks request ID owns and drops its reference to its group's prefix
 * (kernel_kv.c). */
static inline void kv_release(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	pool_used_add(s, in->kv, -r->blocks);
	if (in->kv->ids)
		kv_ids_free_request(s, in->kv, id);
	r->blocks = 0;
	if (r->shared)
		pc_unref_(s, in, r, id);
}

/* kernel_client.c, inline: */
/* Schedules the next request's arrival event (kept out of the queue by the fast path) if it is not scheduled yet and a slot is free
 * (after an arrival, and after a completion in a closed loop). */
static inline void client_next(struct sim *s)
{
	if (s->arrival_pending || s->next_arrival >= s->n || !client_slot(s))
		return;
	int64_t t = s->spec[s->next_arrival].arrival_ns;
	if (t < s->now)
		t = s->now;
	if (s->p.step_by_step) {
		evq_push(&s->q, t, EVC_ARRIVAL, EV_ARRIVAL, (int64_t)s->next_arrival);
	} else {
		s->arrival_held = true;
		s->arrival_t = t;
		s->arrival_seq = s->q.next_seq++; /* as evq_push() would stamp it */
	}
	s->arrival_pending = true;
}

/* Request ID was sent (its arrival event). */
static inline void client_sent(struct sim *s, int32_t id)
{
	s->arrival_pending = false;
	s->next_arrival = (size_t)id + 1;
	client_next(s);
}

#endif
