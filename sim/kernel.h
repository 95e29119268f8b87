/*
 * kernel: the discrete-event simulation of one vLLM V1 serving instance as run on Gaudi.
 *
 * Owns: the runtime state of every request (an array parallel to the workload's), the waiting
 * queue, the running set, the paged KV-cache block pool, the graph cache (which padded shapes
 * are compiled) and the event queue.  Borrows: the workload's requests, the bucketer and the
 * cost functions, which must outlive the simulation.
 *
 * Request lifecycle (state -> transition -> function):
 *   PENDING --arrival event--> WAITING                       (on_arrival)
 *   WAITING --admitted by schedule()--> RUNNING/prefill      (admit)
 *   RUNNING/prefill --last chunk computed--> RUNNING/decode  (update; first token)
 *   RUNNING --no free KV block--> WAITING (recompute)        (preempt)
 *   RUNNING --last token--> DONE                             (finish)
 *
 * The engine loop is vLLM's: schedule (decodes first, then running prefill chunks, then
 * waiting requests, within max_num_batched_tokens and max_num_seqs), submit (the step's
 * forward passes: prefills in groups of max_num_prefill_seqs, then one decode pass; each pass
 * padded to its bucket and charged at the padded shape, plus a compile the first time a
 * padded shape is seen), finish (the pass-done event), update (tokens, first tokens,
 * completions).  One step is in flight at a time.
 *
 * Speed: decoding requests advance lazily.  A global decode-step counter G and each request's
 * join step give its token count; two indexed heaps hold the step of each request's next
 * completion and next KV-block boundary.  A step that is decode-only and whose successors
 * would be identical (same padded shape: no completion, block boundary, admissible arrival
 * or stop in between) is submitted as a run of k identical steps in one event.
 *
 * Invariants (sim_check_invariants, asserted in debug builds): arrived = done + waiting +
 * running; free + used KV blocks = total; used = sum of blocks held; time never decreases.
 */
#ifndef BS_KERNEL_H
#define BS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/metrics.h"
#include "policies/bucketing.h"
#include "sim/config.h"
#include "sim/evq.h"
#include "sim/shapemap.h"
#include "workloads/workload.h"

struct cost_model;
struct sim;

/* Event classes: at equal times, arrivals are seen before pass completions, and both before
 * the engine schedules (so requests arriving together are scheduled together). */
enum ev_class { EVC_ARRIVAL = 0, EVC_PASS_DONE = 1, EVC_SCHEDULE = 2 };
enum ev_kind { EV_ARRIVAL, EV_PASS_DONE, EV_SCHEDULE };

enum req_state { RS_PENDING, RS_WAITING, RS_PREFILL, RS_DECODE, RS_DONE };

enum wait_order { WO_FCFS, WO_SJF, WO_LJF, WO_SJF_TOTAL, WO_LJF_TOTAL, WO_PRIORITY };

/* The cost of passes, as function pointers so tests can plug in exact service times. */
struct sim_costs {
	void *ctx;
	int64_t (*prefill)(void *ctx, int32_t bs, int32_t query, int32_t ctx_blocks);
	int64_t (*decode)(void *ctx, int32_t bs, int32_t num_blocks);
	int64_t (*compile)(void *ctx, int phase, const int32_t v[4], bool runtime);
};
/* Adapter to models/cost.h. */
void sim_costs_from_model(struct sim_costs *c, struct cost_model *cm);

struct sim_params {
	int32_t max_num_seqs, max_num_batched_tokens, max_num_prefill_seqs;
	int32_t block_size, max_model_len;
	int64_t num_kv_blocks;
	bool chunked_prefill, contiguous_pa, skip_warmup;
	enum wait_order order;
	int64_t stop_ns;               /* INT64_MAX = run to completion */
	double slo_ttft_ms, slo_tpot_ms;
};
/* Reads server.*, scheduler.order, sim.stop_s, slo.* (resolved) and the bucketing params'
 * max_num_prefill_seqs / contiguous_pa; checks vLLM's own config rules. */
int sim_params_from_config(const struct config *cfg, const struct bucket_params *bp,
			   struct sim_params *p, struct bs_err *err);

struct req {
	int64_t t_sched, t_first, t_last_tok, join;
	int32_t computed, generated, target, blocks, g0, admit;
	int16_t preemptions;
	uint8_t state, pad_;
};

/* One forward pass, as written to batches.csv. */
struct pass_rec {
	int64_t index;                 /* 0-based pass number */
	int64_t start_ns, end_ns;
	int64_t compile_ns;            /* runtime compile charged before this pass */
	int phase;                     /* enum phase */
	int32_t real[4], bucket[4];
	int64_t real_tokens, padded_tokens;
};

struct sim_hooks {
	void *ctx;
	void (*request_done)(void *ctx, const struct sim *s, int32_t id);
	void (*pass)(void *ctx, const struct sim *s, const struct pass_rec *p);
};

/* A compiled graph (a padded shape) and how it was used. */
struct graph {
	int phase;
	int32_t v[4];
	int64_t cost_ns, compile_ns;
	bool warm, compiled, fallback;
	int64_t uses, real_tokens, padded_tokens;
};

struct pre_item {
	int32_t id, chunk;
};

struct iheap {
	int32_t *ids;
	size_t n;
	int64_t *key;                  /* by request id */
	int32_t *pos;                  /* by request id; -1 = absent */
};

struct sim {
	struct sim_params p;
	const struct req_spec *spec;
	size_t n;
	struct req *r;
	struct bucketer *bucketer;     /* NULL = no bucketing */
	struct sim_costs costs;
	struct sim_hooks hooks;

	struct evq q;
	int64_t now;
	size_t next_arrival;
	bool schedule_pending, busy;

	struct iheap wait;             /* waiting queue */
	int64_t front_key;             /* decreasing key for preempted requests (front) */
	int32_t *run;                  /* running ids */
	size_t n_run;
	int32_t next_admit;
	int32_t *pre;                  /* running requests still in prefill, admission order */
	size_t n_pre;
	struct iheap done_at, cross_at;/* decoding requests: step of completion / next block */
	int32_t n_dec;
	int64_t dec_blocks;            /* blocks held by decoding requests */
	int64_t G;                     /* decode steps executed */

	int64_t kv_free, kv_used;

	/* The step in flight. */
	struct pre_item *items;
	size_t n_items;
	int32_t step_dec;              /* decoders in the step */
	int64_t step_k;                /* identical decode steps in the step */
	int64_t step_dt;               /* duration of one of them (the whole step when k = 1) */
	int64_t step_start, last_end;

	struct shapemap lookup;        /* (phase, real shape) -> graph */
	struct shapemap graphs_by_shape;
	struct graph *graphs;
	size_t n_graphs, cap_graphs;

	int64_t pass_index;
	int64_t events;
	size_t arrived, finished;
	struct metrics m;
};

/* Builds the simulation; REQ must be sorted by arrival.  BUCKETER may be NULL. */
void sim_init(struct sim *s, const struct sim_params *p, const struct req_spec *req, size_t n,
	      struct bucketer *bucketer, const struct sim_costs *costs,
	      const struct sim_hooks *hooks);
void sim_release(struct sim *s);
/* Compiles the warm-up buckets (before time 0; counted in compiles_warmup and warmup_s). */
void sim_warmup(struct sim *s);
/* Processes one event; returns false when nothing is left (or the stop time is reached). */
bool sim_step(struct sim *s);
void sim_run(struct sim *s);
/* Closes the run: final metrics and the conservation checks (a failure is a BUG). */
void sim_finish(struct sim *s);
bool sim_check_invariants(const struct sim *s);

#endif
