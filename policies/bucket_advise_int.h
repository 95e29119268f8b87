/*
 * bucket_advise_int: what the advisor's run (policies/bucket_advise_run.c) shares with its
 * --budgets table (policies/bucket_advise_budgets.c): the shapes a run collects, one
 * simulation's metrics, a report row, and the simulation, advice and evaluation every row goes
 * through.  Internal to `bucketsim buckets --advise`.
 */
#ifndef BS_BUCKET_ADVISE_INT_H
#define BS_BUCKET_ADVISE_INT_H

#include <stdbool.h>
#include <stdio.h>

#include "policies/bucket_advise.h"

/* The real shapes of a run's passes, per phase (owned arrays). */
struct advise_collect {
	struct adv_shape *a[2];
	size_t n[2], cap[2];
};

/* What the advisor reports of one simulation. */
struct advise_metrics {
	double ttft_p50, ttft_p99, tpot_p50, tpot_p99, tput, waste, warmup_s, runtime_s;
	int64_t compiles_warmup, compiles_runtime;
};

/* One set of buckets as reported: its size, its expected padding cost, its simulation. */
struct advise_row {
	char name[48];
	size_t buckets[2];
	int64_t cost[2];       /* expected padding cost on the fitted shapes, ns */
	int64_t cost_eval[2];  /* on the evaluation shapes (holdout) */
	struct advise_metrics m;
};

/* Runs requests REQ[0..N) of X's configuration with strategy ST (FILE for strategy file; CFG:
 * another configuration, or NULL for X's): collects the real shapes into COL when not NULL, the
 * metrics into OUT when not NULL; the bucket lists into LISTS when not NULL. */
int advise_simulate(struct run_ctx *x, const struct req_spec *req, size_t n, const char *st,
		    const char *file, const struct config *cfg, struct advise_collect *col,
		    struct advise_metrics *out, struct blist *lists, struct bs_err *err);
/* The advised product for budget KS[ph] per phase, from INIT (may be NULL); with PTS (not
 * NULL), also the free set of points the heuristic reaches from it. */
void advise_product(struct adv_shape **sh, const size_t *n, const size_t *ks,
		    const struct blist *init, const struct adv_cost *c, struct adv_set *out,
		    struct blist *pts);
/* Evaluates the product SET (with PTS: the free set) through its bucket file TMP: the lists
 * the file strategy warms (into LISTS), their expected costs on FIT and EV, and a
 * re-simulation of REQ[0..N), into R. */
int advise_evaluate(struct run_ctx *x, const struct adv_set *set, const struct blist *pts,
		    const char *tmp, struct adv_shape **fit, const size_t *nfit,
		    struct adv_shape **ev, const size_t *nev, const struct req_spec *req, size_t n,
		    const struct adv_cost *c, struct advise_row *r, struct blist *lists,
		    struct bs_err *err);
/* Whether variable N is a bucket knob (VLLM_PROMPT_*_BUCKET_*, VLLM_DECODE_*_BUCKET_*). */
bool advise_is_bucket_knob(const char *n);
/* The --budgets table (policies/bucket_advise_budgets.c) onto OUT, for the shapes CF fitted,
 * the costs C, the temporary bucket file TMP. */
int advise_budget_curve(struct run_ctx *x, const struct advise_opts *o, struct advise_collect *cf,
			const struct adv_cost *c, const char *tmp, FILE *out, struct bs_err *err);

#endif
