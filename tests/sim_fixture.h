/*
 * sim_fixture: the kernel parameters the unit suites start from (check_kernel, check_kv,
 * check_pipeline, check_capacity): one instance, no pipeline, the async loop, no grouping,
 * continuous batching, FCFS, a 2048-token budget with chunked prefill and one prefill per pass,
 * 128-token blocks, max_model_len 4096, 100,000 blocks, 256 sequences, no stop time, SLOs of
 * 1 s TTFT and 100 ms TPOT.  Each suite changes what its cases need.  Also a pass hook that
 * logs the passes a hand-worked scenario checks.
 */
#ifndef BS_SIM_FIXTURE_H
#define BS_SIM_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "policies/batching.h"
#include "policies/grouping.h"
#include "policies/loop.h"
#include "policies/order.h"
#include "sim/kernel.h"

static inline struct sim_params fixture_params(void)
{
	struct sim_params p;
	memset(&p, 0, sizeof p);
	p.max_num_seqs = 256;
	p.instances = 1;
	p.pp = 1;
	p.loop = loop_policy("async");
	p.grouping = grouping_policy("none");
	p.batching = batch_policy("continuous");
	p.order = order_policy("fcfs");
	p.max_num_batched_tokens = 2048;
	p.max_num_prefill_seqs = 1;
	p.block_size = 128;
	p.max_model_len = 4096;
	p.num_kv_blocks = 100000;
	p.chunked_prefill = true;
	p.stop_ns = INT64_MAX;
	p.slo_ttft_ms = 1000;
	p.slo_tpot_ms = 100;
	return p;
}

/* A pass hook that keeps the first 64 passes (and counts all). */
struct passlog {
	struct pass_rec p[64];
	int n;
};

static inline void log_pass(void *ctx, const struct sim *s, const struct pass_rec *p)
{
	struct passlog *l = ctx;
	(void)s;
	if (l->n < 64)
		l->p[l->n] = *p;
	l->n++;
}

#endif
