/*
 * workload: the requests a simulation replays, built from a trace file, a bundled trace name
 * or a generator, as the config's workload.* keys say.
 *
 * Owns: the request array (sorted by arrival time, ties in input order; ids are 0..n-1 in that
 * order) and the statistics of what was done to it (truncations, caps).  Every stochastic
 * stream (arrivals, prompt lengths, output lengths, mix choice, priorities, ...) has its own
 * gsl_rng seeded from the master seed and the stream's name, so changing one stream's
 * parameters or a policy never shifts another stream.
 *
 * Length rules against server.max_model_len (mml), as vLLM applies them:
 *  - a prompt longer than mml is an error naming the file and record, unless
 *    workload.truncate = true, which cuts the prompt so prompt + output fit (counted);
 *  - prompt + output > mml: the output is capped at mml - prompt (vLLM stops at the model
 *    length; counted as output_capped).
 */
#ifndef BS_WORKLOAD_H
#define BS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/config.h"
#include "sim/util.h"

enum task_type { TASK_ONLINE = 0, TASK_OFFLINE = 1 };

/* The arrival process workload.arrival resolved to: the trace's timestamps, generated gaps
 * (poisson reads workload.rate, gamma also workload.cv), or every request at 0. */
enum arrival_mode { ARR_TRACE, ARR_POISSON, ARR_GAMMA, ARR_OFFLINE };

/* One request as the workload gives it.  32 bytes. */
struct req_spec {
	int64_t arrival_ns;      /* >= 0, non-decreasing over the array */
	int32_t prompt_tokens;   /* >= 1 */
	int32_t output_tokens;   /* >= 1 (0 in a trace is raised to 1 and counted: vLLM generates
				    at least one token) */
	int32_t prefix_tokens;   /* leading prompt tokens shared within prefix_group; 0 = none */
	int32_t prefix_group;    /* -1 = none */
	uint8_t priority;        /* 0 = highest */
	uint8_t task;            /* enum task_type */
	uint8_t pad_[6];
};

struct workload_stream {
	char name[24];
	uint64_t seed;
};

struct workload {
	struct req_spec *req;
	size_t n;
	char source[256];        /* the trace's name or path, or the generator's description */
	size_t prompts_truncated;
	size_t outputs_capped;
	size_t outputs_raised;   /* output 0 raised to 1 */
	struct workload_stream streams[8];
	size_t nstreams;
	/* Added by the workloads module (all counts are of requests). */
	size_t prompts_raised;   /* a generated prompt length that rounded to 0, raised to 1 */
	size_t outputs_eval_capped; /* output cut to the row's max_new_tokens (workload.eval_cap) */
	char arrival[96];        /* the arrival process, e.g. "poisson rate=2 req/s" */
	char lengths[32];        /* the length source: trace, empirical, lognormal, ... */
	enum arrival_mode arrival_mode; /* the process of `arrival` (which keys it read) */
};

/* sizeof(struct req_spec) is part of the contract. */
_Static_assert(sizeof(struct req_spec) == 32, "struct req_spec must stay 32 bytes");

/* Builds the workload.  TRACE is a path, a bundled name ("alpaca", ...) or NULL (generator
 * only).  Reads server.max_model_len (must be resolved) and the workload.* keys.  On success
 * OUT owns its request array (free it with workload_release); on failure OUT is left empty
 * and ERR says why (BS_EXIT_INPUT for a bad trace or workload.* value). */
int workload_build(const struct config *cfg, const char *trace, uint64_t seed,
		   struct workload *out, struct bs_err *err);
void workload_release(struct workload *w);

/* Derives a stream's seed from the master seed and the stream's name (stable across
 * machines). */
uint64_t workload_stream_seed(uint64_t master, const char *stream);

/* `bucketsim list workloads`: the bundled traces with row counts and length statistics. */
void workload_list_print(FILE *out);

#endif
