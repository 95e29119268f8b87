/*
 * run: see run_int.h.
 */
#include "sim/run_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "policies/presets.h"
#include "policies/grouping.h"
#include "policies/policy.h"

#include "sim/resolve.h"

/* server.contiguous_pa and server.defrag as they run (environment and unified attention
 * included), for --print-config and summary.json; a value the user set is never changed (a
 * conflict is an error of sim_params_from_config). */
void run_report_contiguous_pa(struct run_ctx *x)
{
	config_set_derived(&x->cc.cfg, "server.contiguous_pa", x->sp.contiguous_pa ? "true" : "false");
	config_set_derived(&x->cc.cfg, "server.defrag", x->sp.defrag ? "true" : "false");
}

/* Everything up to a built workload and bucketer. */
int run_setup(struct run_ctx *x, const char *trace, bool load_workload, struct bs_err *err)
{
	if (sim_resolve_config(&x->cc.cfg, &x->cm, err))
		return -1;
	if (bucket_params_resolve(&x->cc.cfg, &x->bp, err))
		return -1;
	if (sim_params_from_config(&x->cc.cfg, &x->bp, &x->sp, err))
		return -1;
	run_report_contiguous_pa(x);
	/* The engine charges host time per step: the passes then leave out the fixed per-pass
	 * cost that stood for it (models/cost.h). */
	cost_model_set_host_separate(x->cm, x->sp.host_time);
	if (load_workload && workload_build(&x->cc.cfg, trace, x->cc.seed, &x->w, err))
		return -1;
	if (bucketer_new(&x->bp, &x->b, err))
		return -1;
	if (x->sp.grouped) {
		if (bucketserve_cfg_resolve(&x->cc.cfg, &x->bsc, err))
			return -1;
		x->have_bsc = true;
		for (size_t i = 0; i < x->w.n; i++)
			if ((uint32_t)x->w.req[i].prompt_tokens > x->bsc.bsm.l_max)
				return bs_errf(err, BS_EXIT_INPUT, x->cc.cfg.file, 0, "scheduler.l_max",
					       "request %zu has %d prompt tokens, more than the "
					       "bucket range's L_max %u", i, x->w.req[i].prompt_tokens,
					       x->bsc.bsm.l_max);
	}
	if (load_workload && sim_check_workload(&x->sp, x->have_bsc ? &x->bsc : NULL, x->w.req,
						x->w.n, x->cc.cfg.file, err))
		return -1;
	return 0;
}

/* Set by the user: in a config file or on the command line (not a default, preset or derived
 * value). */
static bool user_set(const struct config *c, const char *key)
{
	const struct cfg_entry *e = config_find(c, key);
	return e && e->text && (e->origin == CFG_ORIGIN_FILE || e->origin == CFG_ORIGIN_CMDLINE);
}

/* Reports KEY, set by the user but not read: a warning, or an error under sim.strict. */
static int unread(const struct config *c, const char *key, struct bs_err *err, const char *fmt,
		  ...) __attribute__((format(printf, 4, 5)));
static int unread(const struct config *c, const char *key, struct bs_err *err, const char *fmt,
		  ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (config_bool(c, "sim.strict"))
		return bs_errf(err, BS_EXIT_INPUT, c->file, 0, key, "set but never read: %s (--strict)",
			       why);
	fprintf(stderr, "bucketsim: warning: field '%s': set but never read: %s\n", key, why);
	return 0;
}

int run_check_unread(const struct run_ctx *x, struct bs_err *err)
{
	const struct config *c = &x->cc.cfg;
	const struct sim_params *p = &x->sp;
	/* A policy's own keys are read only when it is chosen. */
	for (size_t f = 0; policy_families[f]; f++) {
		const struct policy_family *fam = policy_families[f];
		const char *chosen = config_str(c, fam->key);
		for (size_t m = 0; fam->members[m]; m++) {
			const struct policy_info *pi = fam->members[m];
			if (!strcmp(pi->name, chosen))
				continue;
			for (const struct cfg_def *d = pi->keys; d && d->key; d++)
				if (user_set(c, d->key) &&
				    unread(c, d->key, err, "only %s '%s' reads it, and %s is '%s'",
					   fam->name, pi->name, fam->key, chosen))
					return -1;
		}
	}
	/* Keys of the topology and of the bucket machinery. */
	bool nmax_auto = p->grouping->adjusts && !config_is_set(c, "scheduler.n_max");
	const struct {
		const char *key;
		bool unread;
		const char *why;
	} rules[] = {
		{"cluster.instances", p->disaggregated,
		 "cluster.mode is disaggregated: cluster.prefill_instances and "
		 "cluster.decode_instances count its instances"},
		{"cluster.prefill_instances", !p->disaggregated,
		 "only cluster.mode=disaggregated reads it"},
		{"cluster.decode_instances", !p->disaggregated,
		 "only cluster.mode=disaggregated reads it"},
		{"cluster.engine_loop", p->pp == 1, "only pipeline parallelism (cluster.pp > 1) reads it"},
		{"scheduler.l_max", !p->grouped,
		 "no policy groups requests into buckets (scheduler.grouping none, no "
		 "earliest_bucket order, no memory_safe batching)"},
		{"scheduler.mem_safe_fraction",
		 !(p->grouped && (p->batching->buckets || nmax_auto)),
		 "only memory_safe batching and adaptive grouping with an automatic "
		 "scheduler.n_max read it"},
	};
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		if (rules[i].unread && user_set(c, rules[i].key) &&
		    unread(c, rules[i].key, err, "%s", rules[i].why))
			return -1;
	return 0;
}

void run_teardown(struct run_ctx *x)
{
	if (x->have_bsc)
		bucketserve_cfg_release(&x->bsc);
	if (x->b)
		bucketer_free(x->b);
	workload_release(&x->w);
	if (x->cm)
		cost_model_free(x->cm);
	cli_config_release(&x->cc);
}

/* Without --trace, the bundled Alpaca trace is the default input, unless the workload is
 * entirely generated (a mix of named traces, or lengths from a distribution). */
const char *run_default_trace(const struct config *cfg, const char *given)
{
	if (given)
		return given;
	const char *l = config_str(cfg, "workload.lengths");
	bool generated = config_is_set(cfg, "workload.mix") ||
			 (l && (!strcmp(l, "lognormal") || !strcmp(l, "uniform") ||
				!strcmp(l, "constant")));
	return generated ? NULL : "alpaca";
}

/* BucketServe and topology metrics added to "metrics". */
static void add_policy_metrics(cJSON *m, const struct run_ctx *x, const struct sim *s)
{
	struct sim_stats st;
	sim_stats(s, &st);
	json_add_int(m, "bucket_splits", st.splits);
	json_add_int(m, "bucket_merges", st.merges);
	json_add_num(m, "batch_waste_ratio_mean", waste_acc_mean(st.batch_waste));
	json_add_num(m, "batch_waste_ratio_weighted", waste_acc_weighted(st.batch_waste));
	/* Eq. 3 and Eq. 4 over the trace's prompt lengths, for the grouping's boundaries at the
	 * end of the run (one bucket [0, max_model_len] without grouping). */
	uint32_t b0[2] = {0, (uint32_t)x->sp.max_model_len}, *b = b0, bb[1024];
	size_t nb = 2;
	const struct bsm *mgr = st.buckets;
	if (mgr) {
		nb = bsm_boundaries(mgr, bb, 1024);
		b = bb;
	}
	uint32_t *lens = xmalloc((x->w.n ? x->w.n : 1) * sizeof *lens);
	for (size_t i = 0; i < x->w.n; i++)
		lens[i] = (uint32_t)x->w.req[i].prompt_tokens;
	double ew = 0;
	struct bs_err err = {0};
	cJSON *bnd = cJSON_CreateArray(), *cm = cJSON_CreateArray();
	if (!waste_expected(b, nb, lens, x->w.n, &ew, &err)) {
		double *c = xmalloc(nb * sizeof *c);
		waste_cond_mean(b, nb, lens, x->w.n, c, NULL, &err);
		for (size_t i = 0; i + 1 < nb; i++)
			cJSON_AddItemToArray(cm, c[i] == c[i] ? cJSON_CreateNumber(c[i]) : cJSON_CreateNull());
		free(c);
	} else {
		ew = NAN;
	}
	for (size_t i = 0; i < nb; i++)
		cJSON_AddItemToArray(bnd, cJSON_CreateNumber(b[i]));
	free(lens);
	json_add_num(m, "expected_waste_eq3", ew);
	cJSON_AddItemToObject(m, "bucket_boundaries", bnd);
	cJSON_AddItemToObject(m, "bucket_mean_prompt_tokens_eq4", cm);
	json_add_int(m, "kv_transfers", st.transfers);
	json_add_num(m, "mean_kv_transfer_ms",
		     st.transfers ? (double)st.transfer_ns_total / 1e6 / (double)st.transfers : NAN);
	json_add_int(m, "instances", st.instances);
	json_add_int(m, "cards", cluster_cards(&x->cc.cfg));
	json_add_int(m, "pipeline_stages", st.pipeline_stages);
	json_add_int(m, "prefix_cache_hit_tokens", st.prefix_hit_tokens);
}

cJSON *run_metrics_json(const struct run_ctx *x, struct sim *s)
{
	cJSON *m = metrics_to_json(sim_metrics(s));
	add_policy_metrics(m, x, s);
	return m;
}
