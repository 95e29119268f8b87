/*
 * The kernel's state: the events' classes, the queues' roles and the structures of a
 * simulation (struct sim, its lanes, instances, KV pools and waiting queues).  The functions
 * and inline rules of each kernel file are in the header of its name (sim/kernel_int.h).
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_STATE_H
#define BS_KERNEL_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "policies/loop.h"
#include "sim/evq.h"
#include "sim/kernel.h"
#include "sim/kernel_heap.h"
#include "sim/kernel_stepq.h"
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

#endif
