/*
 * kernel: the discrete-event simulation of vLLM V1 serving instances as run on Gaudi.
 *
 * Owns: the runtime state of every request (an array parallel to the workload's), the waiting
 * queues, the instances (each with its lanes, running sets, paged KV-cache block pools and
 * engines), the graph cache (padded shapes, their cost and which instance compiled them) and
 * the event queue.  struct sim is opaque: read it through the accessors below; its files and
 * state are described in sim/kernel_int.h and sim/kernel_state.h.  Borrows: the workload's requests, the bucketer, the BucketServe configuration and
 * the cost functions, which must outlive the simulation.
 *
 * Topologies: one colocated instance (prefill and decode, the default); or prefill/decode
 * disaggregation: P prefill instances drawing from one shared queue (an FCFS worker queue), a
 * KV transfer (cost model) after each prefill, and D decode instances running continuous
 * batching on the transferred requests.
 *
 * Request lifecycle (state -> transition -> function):
 *   PENDING --arrival event--> WAITING                          (sim_step: EV_ARRIVAL)
 *   WAITING --admitted by engine_schedule()--> PREFILL          (admit)
 *   PREFILL --last chunk computed--> DECODE | TRANSFER          (engine_update: first token)
 *   TRANSFER --transfer event--> XFER_WAIT --admitted--> DECODE (disaggregated only)
 *   PREFILL/DECODE --no free KV block--> WAITING (recompute)    (preempt)
 *   PREFILL/DECODE --last token--> DONE                         (finish)
 *
 * The engine loop of each instance is vLLM's: schedule (decodes first, then running prefill
 * chunks, then waiting requests, within max_num_batched_tokens and max_num_seqs), submit (the
 * step's forward passes: prefills in groups of max_num_prefill_seqs, then one decode pass; or
 * one unified pass of every token with unified attention; each padded to its bucket, charged
 * at the padded shape, plus a compile the first time the instance sees the shape), finish (the
 * pass-done event), update (tokens, first tokens, completions).  One step is in flight per
 * instance.
 *
 * Speed: decoding requests advance lazily.  Each lane's decode-step counter G and each
 * request's join step give its token count; two indexed heaps hold the step of each request's
 * next completion and next KV-block boundary.  A decode-only step whose successors would be
 * identical (same padded shape: no completion or block boundary in between) is submitted as a
 * run of k identical steps in one event, bounded by the stop time and by the next arrival when
 * the policies say an arrival could join (order fifo, batch controller idle_only), and cut
 * short at the next step boundary when an unforeseeable event could change the next step (a
 * transfer completes, another instance preempts into or takes from a shared queue, buckets are
 * adjusted).  Pipelined lanes (cluster.pp > 1), lanes whose every step adjusts the buckets
 * (a grouping that declares `adjusts`, with scheduler.adjust=batch) and the step-by-step
 * reference (sim.decode_jumps = false) run one step per event; tests/check_differential.c
 * proves the fast path byte-identical to the reference (requests.csv, batches.csv,
 * monitor.csv, boundaries.csv) for every registered policy and topology.
 * Passes reach the pass hook in (start, lane) order either way.
 *
 * Invariants (sim_check_invariants, asserted in debug builds): arrived = done + queued +
 * running + in transfer; per instance free + used KV blocks = total and used = sum of blocks
 * held; time never decreases.
 */
#ifndef BS_KERNEL_H
#define BS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/metrics.h"
#include "analysis/waste.h"
#include "policies/batching.h"
#include "policies/bucketing.h"
#include "policies/bucketserve.h"
#include "policies/order.h"
#include "policies/mode.h"
#include "sim/config.h"
#include "workloads/workload.h"

struct cost_model;
struct sim;


enum req_state { RS_PENDING, RS_WAITING, RS_PREFILL, RS_DECODE, RS_TRANSFER, RS_XFER_WAIT,
		 RS_DONE };


/* The cost of passes, as function pointers so tests can plug in exact service times. */
struct sim_costs {
	void *ctx;
	int64_t (*prefill)(void *ctx, int32_t bs, int32_t query, int32_t ctx_blocks);
	int64_t (*decode)(void *ctx, int32_t bs, int32_t num_blocks);
	int64_t (*unified)(void *ctx, int32_t query, int32_t shared, int32_t unique, bool causal);
	int64_t (*compile)(void *ctx, int phase, const int32_t v[4], bool runtime);
	int64_t (*transfer)(void *ctx, int64_t tokens);
	/* Pipeline parallelism (cluster.pp > 1, sim/kernel_pipeline.c): stage STAGE's share of a
	 * pass at padded shape V of PHASE without the per-pass overhead; that overhead (charged
	 * once per microbatch); the activations of TOKENS tokens sent to the next stage.  NULL
	 * stage: a pass's time split evenly over the stages, no overhead apart, no transfer. */
	int64_t (*stage)(void *ctx, int phase, const int32_t v[4], int stage);
	int64_t (*overhead)(void *ctx);
	int64_t (*activation)(void *ctx, int64_t tokens);
	/* Host time of one engine step running NUM_DECODES decodes and NUM_PREFILLS prefill
	 * chunks (models/cost.h, cost_host_ns); NULL = none.  Charged when sim_params.host_time. */
	int64_t (*host)(void *ctx, int32_t num_decodes, int32_t num_prefills);
	/* The decode pass of `decode` through non-contiguous paged attention (blocks gathered by
	 * index: cost_decode_gather_ns); NULL = the same as `decode`.  Used without contiguous
	 * PA. */
	int64_t (*decode_gather)(void *ctx, int32_t bs, int32_t num_blocks);
	/* Extra host time of one pass run without its HPU graph (cost_eager_extra_ns); NULL =
	 * none.  Charged when sim_params.host_time. */
	int64_t (*eager)(void *ctx);
	/* One swap graph of the online defragmenter moving BLOCKS padded blocks on an instance of
	 * PP stages (cost_kv_swap_ns); NULL = free. */
	int64_t (*kv_swap)(void *ctx, int32_t blocks, int32_t pp);
	/* One GPU forward (execution mode cuda_graphs) at padded shape V = (tokens, prefill
	 * context blocks, decode blocks, prefill tokens): cost_forward_ns.  LAUNCH: the host
	 * time of launching it as KIND (enum forward_kind: a FULL graph, a PIECEWISE graph, eager),
	 * cost_launch_ns; the forward takes max(device, launch).  NULL launch: none. */
	int64_t (*forward)(void *ctx, const int32_t v[4]);
	int64_t (*launch)(void *ctx, int kind);
	/* Start-up time of CAPTURES CUDA-graph captures (cost_capture_ns); NULL = none. */
	int64_t (*capture)(void *ctx, int32_t captures);
};
/* How a GPU forward runs (execution mode cuda_graphs, kernel_graph.c). */
enum forward_kind { FWD_FULL, FWD_PIECEWISE, FWD_EAGER, FWD_HPU_GRAPH };
/* Adapter to models/cost.h. */
void sim_costs_from_model(struct sim_costs *c, struct cost_model *cm);

struct sim_params {
	int32_t max_num_seqs, max_num_batched_tokens, max_num_prefill_seqs;
	int32_t block_size, max_model_len;
	int64_t num_kv_blocks;          /* per instance */
	bool chunked_prefill, contiguous_pa, skip_warmup;
	bool prefix_caching;            /* requests of a prefix group share its cached blocks */
	bool unified;                   /* unified attention: one mixed pass per step */
	/* The chosen policies (policies/registry.c). */
	const struct order_policy *order;
	const struct grouping_policy *grouping;
	const struct batch_policy *batching; /* the record its setup() returned when it has one
					      * (run_setup, sim/run.c) */
	const struct loop_policy *loop;
	bool grouped;                   /* waiting requests in BucketServe buckets (asked for by
					 * the grouping, the order or the batch controller) */
	struct policy_params order_par;    /* the chosen order's own keys (policies/policy.h) */
	struct policy_params batching_par; /* the batch controller's */
	bool task_aware;                /* online requests first (earliest arrival), offline ones
					 * in `order` after them */
	bool disaggregated;
	int32_t instances;              /* colocated instances */
	int32_t pp;                     /* pipeline stages (lanes) per colocated instance */
	int32_t prefill_instances, decode_instances;
	int64_t stop_ns;                /* INT64_MAX = run to completion */
	bool step_by_step;              /* every decode step its own event (sim.decode_jumps =
					 * false): the reference of the run-length fast path */
	int64_t monitor_ns;             /* 0 = no monitor samples */
	double slo_ttft_ms, slo_tpot_ms;
	double slo_e2e_ms;              /* 0 = no end-to-end objective */
	int32_t concurrency;            /* closed-loop client: requests in flight (0 = open
					 * loop; kernel_client.c) */
	/* The atomic loop without empty microbatches (cluster.atomic_empty_microbatches = false):
	 * a microbatch slot left empty is lost (sim/kernel_pipeline.c). */
	bool pp_lose_empty_slots;
	/* The async loop's prefill chunks in several in-flight microbatches
	 * (cluster.async_prefill_chunks; sim/kernel_pipeline.c). */
	bool pp_prefill_chunks;
	bool host_time;                 /* charge sim_costs.host per engine step (sim.host_time) */
	bool async_scheduling;          /* server.async_scheduling: a step takes max(host,
					 * device), and new requests join one step later
					 * (sim/README.md, "Engine step") */
	bool enforce_eager;             /* server.enforce_eager: no pass uses HPU graphs */
	/* The execution mode (server.execution_mode, policies/mode.h) and what it implies. */
	const struct exec_mode *mode;
	bool one_forward;               /* one forward per step of every scheduled token (the
					 * unified path with the GPU forward's shape) */
	int64_t capture_bound;          /* cuda_graphs: max_cudagraph_capture_size as bounded by
					 * max_num_batched_tokens (_set_cudagraph_sizes) */
	int32_t capture_max;            /* cuda_graphs: the largest capture size (0: none) */
	int32_t captures;               /* cuda_graphs: graphs captured at start-up */
	int64_t max_capture;            /* server.max_cudagraph_capture_size: prompt passes of
					 * more tokens run eagerly (cost_prompt_uses_graphs) */
	bool merged_prefill;            /* server.merged_prefill: a step's fresh prefills run as
					 * one sequence (sim/kernel_prefill.c) */
	bool ideal;                     /* bucketing.strategy=ideal: no padding, no compile */
	bool prompt_grid;               /* prompt passes are padded to the Gaudi prompt buckets
					 * the server warms (execution mode padding to buckets,
					 * a strategy with prompt buckets, not ideal) */
	/* vllm-gaudi's online defragmenter (server.defrag, with contiguous PA): it swaps blocks
	 * when the highest id in use exceeds the blocks in use by more than defrag_threshold
	 * (sim/kernel_defrag.c). */
	bool defrag;
	int32_t defrag_threshold;
};
/* Reads server.*, scheduler.*, cluster.*, monitor.*, sim.stop_s, slo.* (resolved) and the
 * bucketing params' max_num_prefill_seqs / contiguous_pa / strategy; checks vLLM's own config
 * rules. */
int sim_params_from_config(const struct config *cfg, const struct bucket_params *bp,
			   struct sim_params *p, struct bs_err *err);

/* Whether P's prompt passes, with the bucketing BP, are padded to a warmed prompt grid
 * (sim_params.prompt_grid): the execution mode pads to buckets and BP's strategy has prompt
 * buckets and is neither ideal nor unified.  P's mode and unified flag are read. */
bool sim_prompt_grid(const struct sim_params *p, const struct bucket_params *bp);

/* Refuses (code 3, naming scheduler.batching) a workload with a request that the batch
 * controller would not take even into an empty batch on an idle instance (it would wait
 * forever), e.g. a request whose memory-safe charge exceeds M_safe of an empty KV cache.
 * BSC may be NULL unless the controller draws from buckets. */
int sim_check_workload(const struct sim_params *p, const struct bucketserve_cfg *bsc,
		       const struct req_spec *req, size_t n, const char *file, struct bs_err *err);


struct req {
	int64_t t_sched, t_first, t_last_tok, join;
	int32_t computed, generated, target, blocks, g0, admit;
	int32_t reserved;               /* memory-safe batching: tokens charged to the budget */
	int32_t shared;                 /* blocks referenced from its prefix group's cache */
	int16_t preemptions;
	int16_t lane;                   /* the lane running it, or -1 */
	uint8_t state, pad_;
	int16_t prefill_inst;           /* disaggregated: the prefill instance that last handed
					 * its KV cache over (-1 = none) */
	int64_t transfer_ns;            /* disaggregated: total KV-transfer time */
};


/* One forward pass, as written to batches.csv. */
struct pass_rec {
	int64_t index;                  /* 0-based pass number */
	int64_t start_ns, end_ns;
	int64_t compile_ns;             /* runtime compile charged before this pass */
	int phase;                      /* enum phase */
	int instance;
	int32_t real[4], bucket[4];
	int64_t real_tokens, padded_tokens;
	int32_t logits, bucket_logits;  /* unified passes: logits fetched (real, padded to
					 * max_num_seqs); 0 otherwise */
};

/* One monitor sample, as written to monitor.csv. */
struct monitor_rec {
	int64_t t_ns;
	size_t waiting, running, transferring;
	int64_t kv_used, kv_total;
	int64_t kv_max_id;              /* highest block id in use, summed over the KV pools (0
					 * without contiguous PA: ids not modelled) */
	double arrival_rate;            /* arrivals per second over the last interval */
	double mean_waiting_len;        /* mean prompt length of waiting requests */
	double batch_latency_ms;        /* mean step duration over the last interval */
	size_t buckets;
	size_t microbatches;            /* steps (microbatches) in flight over every lane */
};


struct sim_hooks {
	void *ctx;
	void (*request_done)(void *ctx, const struct sim *s, int32_t id);
	void (*pass)(void *ctx, const struct sim *s, const struct pass_rec *p);
	void (*monitor)(void *ctx, const struct sim *s, const struct monitor_rec *m);
	/* Bucket boundaries changed (adaptive grouping): called with the new boundaries of the
	 * queue's buckets (OFFLINE: the task-aware offline queue). */
	void (*boundaries)(void *ctx, const struct sim *s, bool offline, const uint32_t *b,
			   size_t nb, size_t splits, size_t merged);
};


/* A compiled graph (a padded shape) and how it was used. */
struct graph {
	int phase;
	int32_t v[4];
	int64_t cost_ns, compile_ns;
	bool warm, fallback, runtime;
	int64_t uses, real_tokens, padded_tokens;
	/* The fast path's inter-token gaps of decode-only steps of this graph not yet in the
	 * metrics: ITL_COUNT gaps of ITL_GAP ns (engine_update; sim_finish adds them). */
	int64_t itl_gap, itl_count;
};


/* Builds the simulation; REQ must be sorted by arrival.  BUCKETER and BSC may be NULL.  Every
 * argument must outlive it (the parameters and hooks are copied). */
struct sim *sim_new(const struct sim_params *p, const struct req_spec *req, size_t n,
		    struct bucketer *bucketer, const struct bucketserve_cfg *bsc,
		    const struct sim_costs *costs, const struct sim_hooks *hooks);
void sim_free(struct sim *s);
/* Switches the policies' contract check (sim/kernel_contract.c) on or off; it is on by
 * default in builds without NDEBUG.  Off: a policy that breaks its contract is left for the
 * differential test to find (tests/check_differential.c's seeded bugs). */
void sim_check_contract(struct sim *s, bool on);
/* Compiles the warm-up buckets of every instance (before time 0; counted in compiles_warmup
 * and warmup_s). */
void sim_warmup(struct sim *s);
/* Processes one event (each step's end is one: without the fast path's steps that end at
 * once, engine_schedule); returns false when nothing is left (or the stop time is reached). */
bool sim_step(struct sim *s);
void sim_run(struct sim *s);
/* Closes the run: final metrics and the conservation checks (a failure is a BUG). */
void sim_finish(struct sim *s);
bool sim_check_invariants(const struct sim *s);
/* Times the grouping and ordering code in wall-clock seconds (--perf). */
void sim_time_bucketing(struct sim *s, bool on);

/* ---- read access (reports, run.c) ---- */
/* Requests queued (waiting or waiting for a decode slot) and running, over all instances. */
size_t sim_waiting(const struct sim *s);
size_t sim_running(const struct sim *s);
/* Requests finished so far. */
size_t sim_finished(const struct sim *s);
/* Whether the run stopped because its requests only preempted each other (a livelock: more
 * than LIVELOCK_PREEMPTIONS preemptions without a prefill completing); the rest are unfinished. */
bool sim_livelocked(const struct sim *s);
#define LIVELOCK_PREEMPTIONS 100000
/* The simulated time now, ns. */
int64_t sim_now(const struct sim *s);
/* The runtime state and the input of request ID. */
const struct req *sim_req(const struct sim *s, int32_t id);
const struct req_spec *sim_spec(const struct sim *s, int32_t id);
/* The compiled graphs (padded shapes) used or warmed; *N is their count. */
const struct graph *sim_graphs(const struct sim *s, size_t *n);
/* The run's metrics (final after sim_finish; metrics_to_json() sorts its samples). */
struct metrics *sim_metrics(struct sim *s);

/* Counters of the policies and the topology, for the summary. */
struct sim_stats {
	size_t requests;                /* requests simulated */
	int64_t events, passes;         /* events processed, forward passes */
	uint64_t splits, merges;        /* BucketServe bucket splits and merges */
	const struct waste_acc *batch_waste; /* Eq. 2 over admitted batches */
	/* The bucket manager that adjusted most (the offline one when a task-aware run had only
	 * offline work), or NULL without grouping. */
	const struct bsm *buckets;
	int64_t transfers, transfer_ns_total; /* KV transfers (disaggregated) */
	int instances, pipeline_stages;
	int64_t prefix_hit_tokens;      /* prompt tokens served from the prefix cache */
	double bucketing_wall_s;        /* wall time in grouping/ordering code (--perf) */
	/* Algorithm 1's N_max over every AdjustBuckets call (adaptive grouping): calls with a
	 * bounded N_max (an empty queue's is unbounded), their N_max's sum, least and most. */
	uint64_t nmax_calls;
	double nmax_sum;
	uint64_t nmax_min, nmax_max;
};
void sim_stats(const struct sim *s, struct sim_stats *out);
/* The N_max of the last AdjustBuckets call (UINT64_MAX: unbounded, or none yet); the
 * boundaries hook reads it for the change it reports. */
uint64_t sim_last_nmax(const struct sim *s);

#endif
