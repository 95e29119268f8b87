/*
 * batching: the batch-controller family (scheduler.batching): which waiting requests join the
 * batch an engine step forms.  See policies/policy.h and policies/README.md, "Adding a policy".
 *
 * The kernel forms a batch by offering the waiting requests one by one, in the queue's order,
 * after its own checks (a sequence slot, the step's token budget, free KV blocks for the
 * step's chunk); the controller's take() says whether the candidate joins or the batch closes
 * there.  take() sees the step through a view the kernel builds once per step of each
 * scheduler (an instance, or a virtual engine): the waiting queue as the scheduler sees it,
 * the running requests, the KV cache, the clock, the step's index, and the batch so far.
 *
 * The contract: a controller declares in `reads` which inputs of the view its decisions
 * depend on (enum batch_input).  The kernel's fast path runs identical decode-only steps as
 * one event; it ends such a run at every event that changes a declared input, and trusts that
 * nothing undeclared changes take()'s answer.  Builds without NDEBUG (the sanitizer pass of
 * make check) check it: at every step a run skips, the kernel asks take() what it would have
 * decided on that step's view, and stops with a BUG naming the controller if the answer
 * differs from the run's assumption (sim/kernel_contract.c).  A controller that keeps history
 * declares its state (state_size, init, on_step_done): the kernel allocates it per scheduler
 * and calls on_step_done after every step, the steps of a run included; no mutable statics.
 *
 * Ownership: the ops struct is static, read-only data; the view, the candidate and the state
 * are the kernel's.
 */
#ifndef BS_BATCHING_H
#define BS_BATCHING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/bucketserve.h"
#include "policies/policy.h"
#include "workloads/workload.h"

/* The inputs of struct batch_view a controller may declare in batch_policy.reads, and the
 * events at which the kernel's fast path ends a run of decode steps for each (the events that
 * end every run, a completion or a KV-block boundary, are not repeated). */
enum batch_input {
	BV_WAITING = 1u << 0, /* waiting, waiting_tokens: every arrival the scheduler will see,
			       * even behind a queue head that blocks a FIFO order */
	BV_RUNNING = 1u << 1, /* running, idle: nothing more (they change at completions) */
	BV_KV = 1u << 2,      /* kv_free, kv_tokens, kv_reserved: nothing more (completions,
			       * block boundaries) */
	BV_CLOCK = 1u << 3,   /* now_ns: every step (no run while a request could be offered) */
	BV_STEP = 1u << 4,    /* step: every step, likewise */
};

/* One step of one scheduler as a batch controller sees it.  The step's inputs are set by the
 * kernel before the first candidate and read-only for take(); the batch so far is take()'s
 * to update. */
struct batch_view {
	/* The step. */
	int64_t now_ns;                 /* BV_CLOCK: simulated time of the schedule [ns] */
	int64_t step;                   /* BV_STEP: engine steps this scheduler ran before */
	int64_t waiting;                /* BV_WAITING: requests waiting where it admits from (its
					 * queue; the offline requests too when task-aware) that it
					 * sees: with async scheduling, not those that arrived after
					 * the step before started (sim/kernel_host.c); the
					 * candidates included */
	int64_t waiting_tokens;         /* BV_WAITING: their prompt tokens */
	int32_t running;                /* BV_RUNNING: requests it runs (over its lanes when they
					 * share one scheduler) */
	bool idle;                      /* BV_RUNNING: it runs nothing */
	int64_t kv_free;                /* BV_KV: free KV blocks (the earlier candidates' blocks
					 * taken) */
	int64_t kv_tokens;              /* BV_KV: KV capacity of the instance in tokens */
	int64_t kv_reserved;            /* BV_KV: tokens reserved by the requests it runs */
	/* Constants of the run: always readable, nothing to declare. */
	int32_t max_running;            /* server.max_num_seqs */
	int64_t step_tokens;            /* server.max_num_batched_tokens */
	const double *par;              /* the controller's own keys' values, par[ROW] for row
					 * ROW of its policy_info.keys (struct policy_params) */
	const struct bucketserve_cfg *bsc; /* NULL unless requests are in buckets */
	void *state;                    /* its declared state (state_size bytes), or NULL */
	/* The batch so far (take() updates the fields it uses but n and lens, which the kernel
	 * sets: lens[0..n) are the prompt lengths of the requests taken, with room for one
	 * more). */
	size_t n;
	uint32_t *lens;
	int64_t deferred_blocks;        /* blocks the taken requests' deferred prefills will take */
	uint64_t charged, longest;      /* sum and longest of the charges of the batch */
};

/* The next waiting request offered to the batch. */
struct batch_cand {
	const struct req_spec *q;
	int64_t need_blocks;            /* blocks its chunk in this step takes */
	int64_t full_blocks;            /* blocks its whole prompt takes */
	int64_t revive_blocks;          /* cached prefix blocks it brings back into use */
	int32_t reserve;                /* out: tokens it reserves until it leaves (0) */
};

/* What a controller's set-up (batch_policy.setup) is given of the run. */
struct batch_setup {
	/* The prompt bucket grid the server warms, to which prompt passes are padded (Gaudi:
	 * sim_params.prompt_grid; borrowed for the run), or NULL: passes run at their own shape. */
	const struct bucketer *prompt_grid;
	/* The BucketServe settings the kernel runs with, NULL unless requests are in buckets. */
	struct bucketserve_cfg *bsc;
};

struct batch_policy {
	struct policy_info info;
	bool buckets;                   /* draws batches from BucketServe buckets */
	bool unified;                   /* one mixed pass of every token per step */
	/* Takes requests past the step's token budget (their prefill waits for a later step). */
	bool beyond_budget;
	/* Fast-path hook: forms a batch only while the instance runs nothing, so nothing that
	 * arrives can change the next step of a running instance. */
	bool idle_only;
	/* A step's new prompts run whole (no token budget: take() bounds the batch by memory)
	 * and together as one prompt pass padded to N x S_max (sim/kernel_prefill.c), not in
	 * vllm-gaudi's groups of server.max_num_prefill_seqs within the token budget. */
	bool padded_pass;
	/* Set-up for one run, or NULL: none.  The run's set-up (run_setup, sim/run.c) calls it
	 * once, when the kernel's parameters, the bucket grid and the BucketServe settings are
	 * built and before the workload is checked against take() and the kernel starts.  It
	 * returns the record that runs: this one, or a variant of it for that server (the same
	 * name, keys and take(); other flags, such as padded_pass), and may complete the
	 * settings of SU->bsc that concern its batches (policies/batching_prefill_batch.c).
	 * buckets --advise calls it again, on the record it returned, for each bucket set it
	 * simulates: a variant carries the same hook, which sets every field it owns. */
	const struct batch_policy *(*setup)(const struct batch_setup *su);
	/* The inputs of the view take() depends on (enum batch_input, or-ed). */
	unsigned reads;
	/* Whether candidate C joins the batch of view V (then V's batch so far is updated);
	 * false closes the batch.  NULL: every candidate that passed the kernel's checks joins. */
	bool (*take)(struct batch_view *v, struct batch_cand *c);
	/* Declared state, for a controller that keeps history: STATE_SIZE bytes per scheduler,
	 * set up by init() (NULL: zeroed) with the controller's keys' values, and told of every
	 * step after it ran by on_step_done() (V as the step saw it, V->n the requests it
	 * admitted).  0 and NULLs: stateless.  A state that on_step_done() updates may change
	 * at every step, like BV_STEP: no run while a request could be offered. */
	size_t state_size;
	void (*init)(void *state, const double *par);
	void (*on_step_done)(void *state, const struct batch_view *v);
};

extern const struct policy_family batching_family;
const struct batch_policy *batch_policy(const char *name);

#endif
