/*
 * run: see run_int.h.
 */
#include "sim/run_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "policies/presets.h"
#include "policies/batching.h"
#include "policies/grouping.h"
#include "policies/mode.h"
#include "policies/order.h"
#include "policies/policy.h"

#include "sim/resolve.h"

/* server.contiguous_pa and server.defrag as they run (environment and unified attention
 * included), for --print-config and summary.json; a value the user set is never changed (a
 * conflict is an error of sim_params_from_config). */
void run_report_contiguous_pa(struct run_ctx *x)
{
	config_set_derived(&x->cc.cfg, "server.contiguous_pa", x->sp.contiguous_pa ? "true" : "false");
	config_set_derived(&x->cc.cfg, "server.defrag", x->sp.defrag ? "true" : "false");
	/* contiguous PA turns prefix caching off (bucket_params_resolve): over the default */
	if (!x->sp.prefix_caching && config_bool(&x->cc.cfg, "server.prefix_caching")) {
		struct bs_err err = {0};
		if (config_set(&x->cc.cfg, "server.prefix_caching", "false", CFG_ORIGIN_DERIVED, NULL,
			       0, &err))
			BUG("server.prefix_caching: %s", err.msg);
	}
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
	x->have_w = load_workload;
	/* A mode that pads to CUDA-graph capture sizes runs no Gaudi buckets. */
	if (x->sp.mode->padding == MODE_PAD_BUCKETS && bucketer_new(&x->bp, &x->b, err))
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
	/* The batch controller's own set-up for this server (policies/batching.h): the record
	 * that runs, and its part of the BucketServe settings. */
	if (x->sp.batching->setup) {
		struct batch_setup su = {x->sp.prompt_grid ? x->b : NULL,
					 x->have_bsc ? &x->bsc : NULL};
		x->sp.batching = x->sp.batching->setup(&su);
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

/* Reports KEY (or, when ENV, the --env variable KEY), set by the user but not read: a
 * warning, or an error under sim.strict. */
static int unread(const struct config *c, const char *key, bool env, struct bs_err *err,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int unread(const struct config *c, const char *key, bool env, struct bs_err *err,
		  const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	const char *what = env ? "given" : "set";
	if (env) {
		char *n = xasprintf("env.%s", key);
		bs_unread_note(n);
		free(n);
	} else {
		bs_unread_note(key);
	}
	if (config_bool(c, "sim.strict"))
		return bs_errf(err, BS_EXIT_INPUT, c->file, 0, key, "%s but never read: %s (--strict)",
			       what, why);
	bs_warn("field '%s': %s but never read: %s", key, what, why);
	return 0;
}

/* The orders whose key reads the requests' priority, "a, b" (the registry's). */
static void priority_orders(char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t m = 0; order_family.members[m]; m++) {
		const struct order_policy *o = order_policy(order_family.members[m]->name);
		if (o && o->reads_priority && n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", o->info.name);
	}
}

static const char *arrival_name(enum arrival_mode m)
{
	return m == ARR_TRACE ? "the trace's timestamps" : m == ARR_POISSON ? "poisson"
	       : m == ARR_GAMMA ? "gamma" : "offline (every request at 0 s)";
}

int run_check_unread(const struct run_ctx *x, struct bs_err *err)
{
	return run_check_unread_params(&x->cc.cfg, &x->bp, &x->sp, x->have_w ? &x->w : NULL, err);
}

int run_check_unread_params(const struct config *c, const struct bucket_params *bp,
			    const struct sim_params *p, const struct workload *w,
			    struct bs_err *err)
{
	/* A policy's own keys are read only when it is chosen. */
	for (size_t f = 0; policy_families[f]; f++) {
		const struct policy_family *fam = policy_families[f];
		const char *chosen = config_str(c, fam->key);
		if (!chosen)
			continue; /* an auto key not resolved (no simulation) */
		for (size_t m = 0; fam->members[m]; m++) {
			const struct policy_info *pi = fam->members[m];
			if (!strcmp(pi->name, chosen))
				continue;
			for (const struct cfg_def *d = pi->keys; d && d->key; d++)
				if (d->type != CFG_READS && user_set(c, d->key) &&
				    unread(c, d->key, false, err, "only %s '%s' reads it, and %s is "
					   "'%s'", fam->name, pi->name, fam->key, chosen))
					return -1;
		}
	}
	/* Keys of the topology and of the bucket machinery. */
	bool nmax_auto = p->grouping->adjust && !config_is_set(c, "scheduler.n_max");
	const char *adjust = config_str(c, "scheduler.adjust");
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
		{"scheduler.adjust_period_s", p->grouping->adjust && strcmp(adjust, "period"),
		 "only scheduler.adjust=period reads it"},
		/* The host-time model (sim/kernel_host.c, sim/kernel_graph.c eager_ns). */
		{"server.async_scheduling", !p->host_time,
		 "only the host-time model reads it, and sim.host_time is false"},
		{"server.max_cudagraph_capture_size",
		 !p->one_forward && (!p->host_time || p->enforce_eager || !p->mode->hpu_graphs),
		 "on Gaudi only the host time of passes run without their HPU graph reads it "
		 "(execution mode hpu_graphs, sim.host_time true, server.enforce_eager false)"},
		/* Execution mode cuda_graphs: one forward per step, padded to capture sizes. */
		{"bucketing.strategy", p->mode->padding != MODE_PAD_BUCKETS,
		 "the execution mode pads to CUDA-graph capture sizes, not Gaudi buckets"},
		{"server.max_num_prefill_seqs", p->one_forward,
		 "the execution mode runs one forward of every scheduled token per step"},
		{"server.merged_prefill", p->one_forward,
		 "the execution mode runs one forward of every scheduled token per step"},
		/* The link of KV transfers and of the activations between pipeline stages. */
		{"hardware.kv_link_gb_s", !p->disaggregated && p->pp == 1,
		 "only KV transfers between disaggregated instances and the activations between "
		 "pipeline stages (cluster.pp > 1) use the link"},
	};
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		if (rules[i].unread && user_set(c, rules[i].key) &&
		    unread(c, rules[i].key, false, err, "%s", rules[i].why))
			return -1;

	/* The defragmenter's threshold, as a key and as a variable (sim/kernel_params.c). */
	static const char defrag_off[] = "the defragmenter is off (server.defrag: on by default "
					 "with contiguous PA outside unified attention)";
	if (!p->defrag && user_set(c, "server.defrag_threshold") &&
	    unread(c, "server.defrag_threshold", false, err, "%s", defrag_off))
		return -1;
	if (!p->defrag && config_env(c, "VLLM_DEFRAG_THRESHOLD") &&
	    unread(c, "VLLM_DEFRAG_THRESHOLD", true, err, "%s", defrag_off))
		return -1;
	/* INC's runtime scale patching: read for fp8 weights only (models/cost.c). */
	if (config_env(c, "RUNTIME_SCALE_PATCHING") && strcmp(config_str(c, "model.precision"), "fp8") &&
	    unread(c, "RUNTIME_SCALE_PATCHING", true, err, "only fp8 weights (model.precision fp8) "
		   "compile with or without it"))
		return -1;
	/* The bucket file: read by strategy file with bucketing on, unless
	 * VLLM_BUCKETING_FROM_FILE names it (the two must then agree: bucket_params_resolve). */
	if (user_set(c, "bucketing.file") && !config_env(c, "VLLM_BUCKETING_FROM_FILE")) {
		const char *st = bp->strategy->info.name;
		if (strcmp(st, "file") &&
		    unread(c, "bucketing.file", false, err, "only bucketing strategy file reads it, "
			   "and the strategy is '%s'%s", st, strcmp(st, config_str(c,
			   "bucketing.strategy")) ? " (chosen by the VLLM_* environment)" : ""))
			return -1;
		if (!strcmp(st, "file") && !bp->enabled &&
		    unread(c, "bucketing.file", false, err, "bucketing is off "
			   "(VLLM_ENABLE_BUCKETING=false)"))
			return -1;
	}
	/* The server's log: read by strategy log (policies/bucket_log.c) with bucketing on. */
	if (user_set(c, "bucketing.log") && (strcmp(bp->strategy->info.name, "log") || !bp->enabled) &&
	    unread(c, "bucketing.log", false, err, "only bucketing strategy log reads it, and the "
		   "strategy is '%s'%s", bp->strategy->info.name, bp->enabled ? "" : " with bucketing off"))
		return -1;
	return run_check_unread_workload(c, w, p, err);
}

int run_check_unread_workload(const struct config *c, const struct workload *w,
			      const struct sim_params *p, struct bs_err *err)
{
	/* The random dataset's keys (workloads/random_dataset.c). */
	static const char *const random_keys[] = {"workload.random_input_len",
		"workload.random_output_len", "workload.random_range_ratio",
		"workload.random_prefix_len", NULL};
	const char *lengths = config_str(c, "workload.lengths");
	for (size_t i = 0; random_keys[i]; i++)
		if (strcmp(lengths, "random") && user_set(c, random_keys[i]) &&
		    unread(c, random_keys[i], false, err, "only workload.lengths=random reads it, "
			   "and workload.lengths is '%s'", lengths))
			return -1;
	/* Tasks and priorities the generator draws (workloads/workload.c), and whether the
	 * simulation reads them. */
	const char *task = config_str(c, "workload.task");
	if (user_set(c, "workload.offline_fraction")) {
		if (strcmp(task, "random")) {
			if (unread(c, "workload.offline_fraction", false, err, "only "
				   "workload.task=random reads it, and workload.task is '%s'", task))
				return -1;
		} else if (p && !p->task_aware &&
			   unread(c, "workload.offline_fraction", false, err, "no policy reads the "
				  "tasks it draws: only scheduler.task_aware=true does")) {
			return -1;
		}
	}
	const char *prio = config_str(c, "workload.priority");
	if (user_set(c, "workload.priority_weights")) {
		char orders[128];
		priority_orders(orders, sizeof orders);
		if (strcmp(prio, "random")) {
			if (unread(c, "workload.priority_weights", false, err, "only "
				   "workload.priority=random reads it, and workload.priority is '%s'",
				   prio))
				return -1;
		} else if (p && !p->order->reads_priority &&
			   unread(c, "workload.priority_weights", false, err, "no policy reads the "
				  "priorities it draws: scheduler.order is '%s' (only %s read "
				  "priorities)", p->order->info.name, orders)) {
			return -1;
		}
	}
	/* The arrival keys, by the process workload.arrival resolved to (it replays a trace's
	 * timestamps when the trace has them and workload.arrival is auto). */
	if (!w)
		return 0;
	/* The generated lengths' keys, by the length source resolved (workloads/workload.c
	 * dist_init, dist_draw): lognormal reads the means and cvs, constant the means, uniform
	 * the bounds; workload.output_trace replaces every output draw. */
	const char *out_trace = config_str(c, "workload.output_trace");
	bool logn = !strcmp(w->lengths, "lognormal"), cons = !strcmp(w->lengths, "constant"),
	     unif = !strcmp(w->lengths, "uniform");
	static const char *const sides[] = {"prompt", "output"};
	for (int k = 0; k < 2; k++) {
		bool replaced = k == 1 && out_trace && *out_trace;
		const struct {
			const char *suffix;
			bool read;
			const char *by;
		} len_keys[] = {{"mean", logn || cons, "lognormal and constant lengths"},
				{"cv", logn, "lognormal lengths"},
				{"min", unif, "uniform lengths"},
				{"max", unif, "uniform lengths"}};
		for (size_t i = 0; i < sizeof len_keys / sizeof *len_keys; i++) {
			char key[64];
			snprintf(key, sizeof key, "workload.%s_%s", sides[k], len_keys[i].suffix);
			if (!user_set(c, key) || (len_keys[i].read && !replaced))
				continue;
			if (replaced ? unread(c, key, false, err, "workload.output_trace draws every "
					      "output length")
				     : unread(c, key, false, err, "only %s read it, and the lengths "
					      "are %s", len_keys[i].by, w->lengths))
				return -1;
		}
	}
	enum arrival_mode am = w->arrival_mode;
	if (am != ARR_POISSON && am != ARR_GAMMA && user_set(c, "workload.rate") &&
	    unread(c, "workload.rate", false, err, "only poisson and gamma arrivals read it, and "
		   "the arrivals are %s%s", arrival_name(am), am == ARR_TRACE ? " (workload.arrival "
		   "poisson or gamma draws them at a rate; workload.target_rate scales the "
		   "timestamps)" : ""))
		return -1;
	if (am != ARR_GAMMA && user_set(c, "workload.cv") &&
	    unread(c, "workload.cv", false, err, "only gamma arrivals read it, and the arrivals "
		   "are %s", arrival_name(am)))
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

int run_file_hash(const char *path, char buf[17])
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	uint64_t h = FNV1A_BASIS;
	char chunk[1 << 16];
	for (size_t r; (r = fread(chunk, 1, sizeof chunk, f)) > 0;)
		h = fnv1a(h, chunk, r);
	bool bad = ferror(f);
	fclose(f);
	if (bad)
		return -1;
	snprintf(buf, 17, "%016llx", (unsigned long long)h);
	return 0;
}

/* Adds the file WORD names, if it names a regular file, to INPUTS. */
static void input_add(cJSON *inputs, const char *word)
{
	char *abs = abs_file_path(word), buf[17];
	if (abs && !cJSON_GetObjectItemCaseSensitive(inputs, abs) && !run_file_hash(abs, buf))
		cJSON_AddStringToObject(inputs, abs, buf);
	free(abs);
}

static void input_files(void *ctx, bool env, const char *key, const char *abs_value,
			char *const *files, size_t nfiles)
{
	(void)env;
	(void)key;
	(void)abs_value;
	for (size_t i = 0; i < nfiles; i++)
		input_add(ctx, files[i]);
}

cJSON *run_inputs_json(const struct run_ctx *x, int argc, char **argv)
{
	cJSON *inputs = cJSON_CreateObject();
	for (int i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		input_add(inputs, argv[i]);
		if (eq)
			input_add(inputs, eq + 1);
	}
	config_files(&x->cc.cfg, input_files, inputs);
	return inputs;
}

/* Without --trace, the bundled Alpaca trace is the default input, unless the workload is
 * entirely generated (a mix of named traces, lengths from a distribution, or vLLM's random
 * dataset). */
const char *run_default_trace(const struct config *cfg, const char *given)
{
	if (given)
		return given;
	const char *l = config_str(cfg, "workload.lengths");
	bool generated = config_is_set(cfg, "workload.mix") ||
			 (l && (!strcmp(l, "lognormal") || !strcmp(l, "uniform") ||
				!strcmp(l, "constant") || !strcmp(l, "random")));
	return generated ? NULL : "alpaca";
}

/* BucketServe and topology metrics added to "metrics". */
static void add_policy_metrics(cJSON *m, const struct run_ctx *x, const struct sim *s)
{
	struct sim_stats st;
	sim_stats(s, &st);
	json_add_int(m, "bucket_splits", st.splits);
	json_add_int(m, "bucket_merges", st.merges);
	if (x->have_bsc && x->bsc.grouping->adjust) {
		json_add_int(m, "n_max_adjustments", (int64_t)st.nmax_calls);
		json_add_num(m, "n_max_mean", st.nmax_calls ? st.nmax_sum / (double)st.nmax_calls : NAN);
		json_add_num(m, "n_max_min", st.nmax_calls ? (double)st.nmax_min : NAN);
		json_add_num(m, "n_max_max", st.nmax_calls ? (double)st.nmax_max : NAN);
	}
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
