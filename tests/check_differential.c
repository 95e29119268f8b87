/*
 * check_differential: the decode-jump fast path against the step-by-step reference
 * (sim.decode_jumps = false).  For every registered policy of every family (policies/
 * registry.c, walked here, so a new policy is covered without a test edit), on every topology
 * (colocated with 1 and 3 instances, disaggregated, pipeline-parallel with each registered
 * engine loop, unified batching; every execution mode, policies/mode.h, is a family too), at a low load, near saturation and in overload, with several
 * seeds on small random traces, requests.csv, batches.csv, monitor.csv and boundaries.csv
 * must be byte-identical; and again without the per-pass and monitor outputs (as large runs
 * are made: the kernel's fast path then ends more steps without the event queue),
 * requests.csv, boundaries.csv and the summary's metrics.  A combination the configuration
 * check refuses is skipped, but
 * every policy must run in at least one.  Pinned configurations the random test once found
 * diverging, then a property test: a fixed number of random configurations (priorities,
 * offline tasks with and without task-aware queues, prefix groups, prompts longer than the
 * token budget, every topology above and one random member of every family).  Every run
 * ends with every request finished once with its output length (liveness and conservation).
 * The test tests itself: policies with seeded bugs, defined here and substituted for the
 * configured ones, must be caught (an order with a wrong `fifo` flag, a controller reading
 * state the kernel does not know of, policies keeping state between runs); and each
 * registered policy runs in a fresh process and twice in one that ran another configuration,
 * with the same bytes (state kept in a static variable shows there, not between the fast path
 * and the reference, which share the process).
 *
 * Both runs go through run_setup() (the code `bucketsim run` uses) and the report writers.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/report.h"
#include "policies/policy.h"
#include "sim/run_int.h"
#include "tests/check_main.h"

/* A bucket file for bucketing.strategy=file (written by main; unread elsewhere). */
static char bucket_file_arg[64] = "bucketing.file=";
static const char bucket_file_text[] =
	"(1, [128, 256, 512, 1024], [0, 2, 4, 8])\n"
	"([1, 2, 4, 8], 1, [8, 16, 24, 32, 64])\n";

/* A server log for bucketing.strategy=log: the same buckets as its start-up lines. */
static char bucket_log_arg[64] = "bucketing.log=";
static const char bucket_log_text[] =
	"INFO [common.py:250] Generated 16 prompt buckets [bs, query, num_blocks]: [(1, 128, 0), "
	"(1, 128, 2), (1, 128, 4), (1, 128, 8), (1, 256, 0), (1, 256, 2), (1, 256, 4), (1, 256, 8), "
	"(1, 512, 0), (1, 512, 2), (1, 512, 4), (1, 512, 8), (1, 1024, 0), (1, 1024, 2), "
	"(1, 1024, 4), (1, 1024, 8)]\n"
	"INFO [common.py:250] Generated 5 decode buckets [bs, query, num_blocks]: [(1, 1, 8), "
	"(2, 1, 16), (4, 1, 24), (8, 1, 32), (8, 1, 64)]\n";

/* A small random workload on a server small enough to queue and preempt. */
static const char *const base_keys[] = {
	bucket_file_arg, bucket_log_arg,
	"workload.lengths=uniform", "workload.prompt_max=600", "workload.output_max=200",
	"workload.num_requests=40", "workload.arrival=poisson", "server.max_num_seqs=8",
	"server.num_kv_blocks=24", "server.max_model_len=1024",
	/* grouping=fixed needs boundaries; unread (and harmless) elsewhere */
	"scheduler.boundaries=0,128,384,max",
	/* monitor.csv: windows shorter than most decode runs */
	"monitor.interval_s=0.05", NULL,
};

/* The topologies; "loop" stands for each registered engine loop with cluster.pp = 2. */
static const char *const topologies[][5] = {
	{NULL},
	{"cluster.instances=3", NULL},
	/* every request at time 0: instances whose steps end at the same time */
	{"cluster.instances=3", "workload.arrival=offline", NULL},
	{"cluster.mode=disaggregated", "cluster.prefill_instances=2", "cluster.decode_instances=2",
	 NULL},
	{"cluster.pp=2", "loop", NULL},
	{"cluster.pp=4", "loop", "server.num_kv_blocks=32", NULL}, /* 8 blocks per virtual engine */
	{"cluster.pp=2", "cluster.engine_loop=atomic", "cluster.atomic_empty_microbatches=false",
	 NULL},
	{"cluster.pp=3", "cluster.engine_loop=async", "cluster.async_prefill_chunks=true", NULL},
	{"scheduler.batching=unified", "bucketing.strategy=unified", NULL},
		{"workload.concurrency=3", NULL}, /* a closed-loop client behind the load's rate */
	{"bucketing.version=docs", NULL}, /* the default is current */
	/* host time per step (the default) without async scheduling, and the device-only model
	 * (sim/kernel_host.c) */
	{"server.async_scheduling=false", NULL},
	{"sim.host_time=false", NULL},
	/* eager prompt passes above the capture size; gathered decode KV (Gaudi 3) */
	{"sim.host_time=true", "server.max_cudagraph_capture_size=512", "hardware=gaudi3", NULL},
	/* upstream prefill grouping with batched and merged prefills */
	{"server.max_num_prefill_seqs=4", NULL},
	{"server.merged_prefill=true", NULL},
	/* contiguous PA (VLLM_CONTIGUOUS_PA=true: prefix caching off): block ids and the online
	 * defragmenter, at its default threshold, at 0 (it swaps at every gap), off; and on a
	 * shared pipelined pool */
	{"server.prefix_caching=false", "server.contiguous_pa=true", NULL},
	{"server.prefix_caching=false", "server.contiguous_pa=true", "server.defrag_threshold=0",
	 NULL},
	{"server.prefix_caching=false", "server.contiguous_pa=true", "server.defrag=false", NULL},
	{"cluster.pp=2", "loop", "server.prefix_caching=false", "server.contiguous_pa=true", NULL},
	{"cluster.instances=2", "server.contiguous_pa=true", "server.defrag_threshold=1", NULL},
	/* enough blocks of 16 tokens (execution mode cuda_graphs) for max_model_len, on one and
	 * three instances, on a GPU, pipelined with each loop, and with few capture sizes (eager
	 * forwards above 16 tokens) */
	{"server.num_kv_blocks=192", NULL},
	{"cluster.instances=3", "server.num_kv_blocks=192", NULL},
	{"hardware=a100", "server.num_kv_blocks=192", NULL},
	{"cluster.pp=2", "loop", "server.num_kv_blocks=192", NULL},
	{"server.num_kv_blocks=192", "server.max_cudagraph_capture_size=16", NULL},
};

/* requests per second: low, near saturation, overload (8 sequences of up to 800 tokens) */
static const char *const loads[] = {"workload.rate=1", "workload.rate=8", "workload.rate=100"};

/* The outputs compared: requests.csv, batches.csv, monitor.csv, boundaries.csv and the
 * summary's metrics. */
enum { OUT_REQ, OUT_BAT, OUT_MON, OUT_BND, OUT_MET, OUTS };
static const char *const out_names[OUTS] = {"requests.csv", "batches.csv", "monitor.csv",
					    "boundaries.csv", "the summary metrics"};

struct output {
	char *buf[OUTS];
	size_t len[OUTS];
};

struct sinks {
	FILE *f[OUTS];
	unsigned char *done;            /* by request: finished (conservation) */
	size_t twice, tokens_wrong;     /* requests finished twice, or with tokens not theirs */
};

/* Writes the request's row, and counts a request finished twice or with another number of
 * generated tokens than its output length (token conservation). */
static void sink_request(void *ctx, const struct sim *s, int32_t id)
{
	struct sinks *k = ctx;
	report_request_row(k->f[OUT_REQ], s, id);
	k->twice += k->done[id];
	k->done[id] = 1;
	k->tokens_wrong += sim_req(s, id)->generated != sim_spec(s, id)->output_tokens;
}

static void sink_pass(void *ctx, const struct sim *s, const struct pass_rec *p)
{
	(void)s;
	report_batch_row(((struct sinks *)ctx)->f[OUT_BAT], p);
}

static void sink_monitor(void *ctx, const struct sim *s, const struct monitor_rec *m)
{
	(void)s;
	report_monitor_row(((struct sinks *)ctx)->f[OUT_MON], m);
}

static void sink_boundaries(void *ctx, const struct sim *s, bool offline, const uint32_t *b,
			    size_t nb, size_t splits, size_t merged)
{
	report_boundaries_row(((struct sinks *)ctx)->f[OUT_BND], sim_now(s), offline, b, nb, splits,
			      merged, sim_last_nmax(s));
}

/* The configuration being run, named in a liveness failure (run_one's callers set it). */
static const char *live_label = "";

/* Seeded bugs (the test of this test): when set, the policies the simulation runs instead of
 * the configured ones, substituted after the configuration check (test_catches_*). */
static const struct order_policy *subst_order;
static const struct batch_policy *subst_batching;

/* Liveness and conservation: a run that has no stop time ends with every request finished
 * (one with a stop time counts the rest as unfinished), each once, each with as many
 * generated tokens as its output length.  Checked when the events run out, before
 * sim_finish(), which stops the process at a BUG: a request nobody will ever take (an idle
 * instance never woken) fails here, naming the configuration. */
static void check_liveness(const struct sim *s, const struct run_ctx *x, const struct sinks *k,
			   bool jumps)
{
	const char *way = jumps ? "fast path" : "reference";
	ck_assert_msg(k->twice == 0, "%s (%s): %zu requests finished twice", live_label, way,
		      k->twice);
	ck_assert_msg(k->tokens_wrong == 0,
		      "%s (%s): %zu requests finished with another number of tokens than their "
		      "output length", live_label, way, k->tokens_wrong);
	size_t done = 0;
	for (size_t i = 0; i < x->w.n; i++)
		done += k->done[i];
	ck_assert_msg(done == sim_finished(s), "%s (%s): %zu requests reported finished, %zu counted",
		      live_label, way, done, sim_finished(s));
	if (x->sp.stop_ns != INT64_MAX || sim_livelocked(s))
		return; /* the rest are counted unfinished (compared across the paths) */
	ck_assert_msg(sim_finished(s) == x->w.n,
		      "%s (%s): the events ran out with %zu of %zu requests finished", live_label,
		      way, sim_finished(s), x->w.n);
}

/* A run that never ends (requests preempting each other for ever) stops the test after 30 s
 * of CPU time, naming its configuration (live_label) instead of running into the case's
 * timeout. */
static void stuck(int sig)
{
	(void)sig;
	static const char head[] = "differential: a run took 30 s of CPU time, stuck: ";
	ssize_t w = write(2, head, sizeof head - 1);
	w += write(2, live_label, strlen(live_label));
	w += write(2, "\n", 1);
	_exit(w > 0 ? 2 : 3);
}

static void guard(bool on)
{
	struct itimerval it = {{0, 0}, {on ? 30 : 0, 0}};
	signal(SIGVTALRM, stuck);
	setitimer(ITIMER_VIRTUAL, &it, NULL);
}

/* Runs the configuration KV (NULL-terminated "key=value" list; "trace=FILE" names the trace)
 * with SEED, with every output or (LEAN) without batches.csv and monitor.csv; false when the
 * configuration check refuses it. */
static bool run_one(const char *const *kv, uint64_t seed, bool jumps, bool lean,
		    struct output *o)
{
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	cli_config_init(&x.cc);
	x.cc.seed = seed;
	struct bs_err err = {0};
	const char *trace = NULL;
	for (size_t i = 0; kv[i]; i++)
		if (!strncmp(kv[i], "trace=", 6))
			trace = kv[i] + 6;
		else
			ck_assert_msg(!config_set_arg(&x.cc.cfg, kv[i], &err), "%s: %s", kv[i],
				      err.msg);
	ck_assert(!config_set(&x.cc.cfg, "sim.decode_jumps", jumps ? "true" : "false",
			      CFG_ORIGIN_CMDLINE, NULL, 0, &err));
	if (lean)
		ck_assert(!config_set(&x.cc.cfg, "monitor.interval_s", "0", CFG_ORIGIN_CMDLINE,
				      NULL, 0, &err));
	if (run_setup(&x, run_default_trace(&x.cc.cfg, trace), true, &err)) {
		run_teardown(&x);
		return false;
	}
	if (subst_order)
		x.sp.order = subst_order;
	if (subst_batching)
		x.sp.batching = subst_batching;
	struct sinks k = {.done = xcalloc(x.w.n ? x.w.n : 1, 1)};
	for (int i = 0; i < OUTS; i++)
		k.f[i] = open_memstream(&o->buf[i], &o->len[i]);
	report_requests_header(k.f[OUT_REQ]);
	report_batches_header(k.f[OUT_BAT]);
	report_monitor_header(k.f[OUT_MON]);
	report_boundaries_header(k.f[OUT_BND]);
	struct sim_costs costs;
	sim_costs_from_model(&costs, x.cm);
	struct sim_hooks hooks = {&k, sink_request, lean ? NULL : sink_pass,
				  lean ? NULL : sink_monitor, sink_boundaries};
	struct sim *s = sim_new(&x.sp, x.w.req, x.w.n, x.b, x.have_bsc ? &x.bsc : NULL, &costs,
				&hooks);
	if (subst_order || subst_batching)
		sim_check_contract(s, false); /* seeded bugs: what this test alone finds */
	sim_warmup(s);
	guard(true);
	sim_run(s);
	guard(false);
	check_liveness(s, &x, &k, jumps);
	sim_finish(s);
	if (!sim_livelocked(s))
		ck_assert_uint_eq(sim_finished(s), x.w.n);
	cJSON *m = run_metrics_json(&x, s);
	char *met = cJSON_PrintUnformatted(m);
	fputs(met, k.f[OUT_MET]);
	free(met);
	cJSON_Delete(m);
	sim_free(s);
	for (int i = 0; i < OUTS; i++)
		fclose(k.f[i]);
	free(k.done);
	run_teardown(&x);
	return true;
}

static void output_free(struct output *o)
{
	for (int i = 0; i < OUTS; i++)
		free(o->buf[i]);
}

/* The first output in which A and B differ, or OUTS when they are byte-identical. */
static int first_difference(const struct output *a, const struct output *b)
{
	for (int i = 0; i < OUTS; i++)
		if (a->len[i] != b->len[i] || memcmp(a->buf[i], b->buf[i], a->len[i]))
			return i;
	return OUTS;
}

/* What comparing the fast path with the reference found. */
enum verdict { REFUSED = -1, IDENTICAL = OUTS /* else the first differing output */ };

/* Runs KV both ways (LEAN: run_one's): REFUSED when the configuration check refuses it,
 * else the first output that differs (IDENTICAL: none). */
static int compare_both_ways(const char *const *kv, uint64_t seed, bool lean, const char *label)
{
	struct output a = {0}, b = {0};
	live_label = label;
	if (!run_one(kv, seed, true, lean, &a))
		return REFUSED;
	ck_assert_msg(run_one(kv, seed, false, lean, &b), "%s: reference refused", label);
	int d = first_difference(&a, &b);
	output_free(&a);
	output_free(&b);
	return d;
}

/* Runs KV both ways; returns false when refused.  Fails on the first differing output. */
static bool same_both_ways(const char *const *kv, uint64_t seed, bool lean, const char *label)
{
	int d = compare_both_ways(kv, seed, lean, label);
	ck_assert_msg(d == REFUSED || d == IDENTICAL,
		      "%s%s: %s differs between the fast path and the reference", label,
		      lean ? " (without batches.csv and monitor.csv)" : "", out_names[d]);
	return d != REFUSED;
}

/* Runs KV both ways with every output, then without the per-pass and monitor outputs. */
static bool fast_equals_reference(const char *const *kv, uint64_t seed, const char *label)
{
	if (!same_both_ways(kv, seed, false, label))
		return false;
	ck_assert_msg(same_both_ways(kv, seed, true, label), "%s: refused without outputs", label);
	return true;
}
/* Appends "key=value" for the key of family F and its member M. */
static char *member_arg(const struct policy_family *f, const struct policy_info *m)
{
	return xasprintf("%s=%s", f->key, m->name);
}

START_TEST(every_policy_every_topology)
{
	const struct policy_family *loops = policy_family_by_key("cluster.engine_loop");
	ck_assert_ptr_nonnull(loops);
	size_t cases = 0, refused = 0;
	for (size_t f = 0; policy_families[f]; f++) {
		const struct policy_family *fam = policy_families[f];
		for (size_t m = 0; fam->members[m]; m++) {
			size_t served = 0;
			char *marg = member_arg(fam, fam->members[m]);
			for (size_t t = 0; t < sizeof topologies / sizeof *topologies; t++) {
				bool has_loop = false;
				for (size_t j = 0; topologies[t][j]; j++)
					has_loop |= !strcmp(topologies[t][j], "loop");
				for (size_t l = 0; has_loop ? loops->members[l] != NULL : l == 0; l++) {
					const char *kv[32];
					size_t n = 0;
					for (size_t j = 0; base_keys[j]; j++)
						kv[n++] = base_keys[j];
					char *larg = has_loop ? member_arg(loops, loops->members[l]) : NULL;
					for (size_t j = 0; topologies[t][j]; j++)
						kv[n++] = strcmp(topologies[t][j], "loop") ? topologies[t][j]
											   : larg;
					size_t at_load = n++;
					kv[n++] = marg; /* the member under test wins */
					kv[n] = NULL;
					for (size_t ld = 0; ld < sizeof loads / sizeof *loads; ld++) {
						kv[at_load] = loads[ld];
						for (uint64_t seed = 1; seed <= 3; seed++) {
							char label[256];
							snprintf(label, sizeof label,
								 "%s topology %zu loop %zu load %zu seed %llu",
								 marg, t, l, ld, (unsigned long long)seed);
							if (fast_equals_reference(kv, seed, label)) {
								cases++;
								served++;
							} else {
								refused++;
							}
						}
					}
					free(larg);
				}
			}
			ck_assert_msg(served > 0, "%s runs in no topology of this test", marg);
			free(marg);
		}
	}
	fprintf(stderr, "differential: %zu cases identical, %zu refused by the config check\n",
		cases, refused);
}
END_TEST

/* Offline arrivals, task-aware queues and preemption under disaggregation, which the
 * topologies above do not combine: a preempted request returns to the queue of the prefill
 * instances (the offline queue when task-aware), and only a wake-up of the instances that
 * admit from that queue lets the run end.  Each with its load; every policy, two seeds. */
static const char *const preempting_disaggregated[][8] = {
	/* every request offline at time 0, one prefill and one decode instance, 12 blocks */
	{"cluster.mode=disaggregated", "scheduler.task_aware=true", "workload.task=offline",
	 "workload.arrival=offline", "server.num_kv_blocks=12", NULL},
	/* online and offline mixed, two of each instance, near saturation and in overload */
	{"cluster.mode=disaggregated", "cluster.prefill_instances=2", "cluster.decode_instances=2",
	 "scheduler.task_aware=true", "workload.task=random", "workload.rate=8",
	 "server.num_kv_blocks=12", NULL},
	{"cluster.mode=disaggregated", "scheduler.task_aware=true", "workload.task=random",
	 "workload.rate=100", "server.num_kv_blocks=12", NULL},
	/* offline requests not task-aware (one queue), all at time 0 */
	{"cluster.mode=disaggregated", "cluster.prefill_instances=2", "workload.task=offline",
	 "workload.arrival=offline", "server.num_kv_blocks=12", NULL},
	/* task-aware colocated instances preempting offline requests */
	{"cluster.instances=2", "scheduler.task_aware=true", "workload.task=random",
	 "workload.arrival=offline", "server.num_kv_blocks=12", NULL},
};

START_TEST(every_policy_preempting_disaggregated)
{
	enum { NT = sizeof preempting_disaggregated / sizeof *preempting_disaggregated };
	size_t cases = 0, served[NT] = {0};
	for (size_t f = 0; policy_families[f]; f++) {
		const struct policy_family *fam = policy_families[f];
		for (size_t m = 0; fam->members[m]; m++) {
			char *marg = member_arg(fam, fam->members[m]);
			for (size_t t = 0; t < NT; t++) {
				const char *kv[32];
				size_t n = 0;
				for (size_t j = 0; base_keys[j]; j++)
					kv[n++] = base_keys[j];
				for (size_t j = 0; preempting_disaggregated[t][j]; j++)
					kv[n++] = preempting_disaggregated[t][j];
				kv[n++] = marg;
				kv[n] = NULL;
				for (uint64_t seed = 1; seed <= 2; seed++) {
					char label[256];
					snprintf(label, sizeof label,
						 "%s preempting disaggregated configuration %zu seed %llu",
						 marg, t, (unsigned long long)seed);
					if (fast_equals_reference(kv, seed, label)) {
						cases++;
						served[t]++;
					}
				}
			}
			free(marg);
		}
	}
	/* A policy another topology needs (unified batching) may be refused here; every
	 * configuration runs with most. */
	for (size_t t = 0; t < NT; t++)
		ck_assert_msg(served[t] > 20, "preempting configuration %zu ran only %zu times", t,
			      served[t]);
	fprintf(stderr, "differential: %zu offline, task-aware or preempting disaggregated cases "
		"identical\n", cases);
}
END_TEST

/* The values probed for a policy's own key D: both booleans, every choice, and for a number
 * its bounds, its default and the default scaled by 10^-3 and 10^3 (kept within the bounds),
 * written into V (at most 8); text keys have no generic values (none). */
static size_t key_probes(const struct cfg_def *d, char v[8][64])
{
	size_t n = 0;
	if (d->type == CFG_BOOL) {
		snprintf(v[n++], 64, "%s=true", d->key);
		snprintf(v[n++], 64, "%s=false", d->key);
	} else if (d->type == CFG_CHOICE) {
		const char *c = d->choices;
		while (c && *c && n < 8) {
			size_t len = strcspn(c, "|");
			snprintf(v[n++], 64, "%s=%.*s", d->key, (int)len, c);
			c += len + (c[len] == '|');
		}
	} else if (d->type == CFG_INT || d->type == CFG_DOUBLE) {
		double def = d->def ? strtod(d->def, NULL) : sqrt(fmax(d->min, 1) * fmax(d->max, 1));
		double x[5] = {d->min, d->max, def, def * 1e-3, def * 1e3};
		for (size_t i = 0; i < 5; i++) {
			double y = fmin(fmax(x[i], d->min), d->max);
			if (d->type == CFG_INT)
				y = round(y);
			bool dup = false;
			char t[64];
			snprintf(t, sizeof t, "%s=%.17g", d->key, y);
			for (size_t j = 0; j < n; j++)
				dup |= !strcmp(v[j], t);
			if (!dup)
				memcpy(v[n++], t, sizeof t);
		}
	}
	return n;
}

/* Every policy's own keys across their range (the test above runs them at their defaults
 * only: a policy whose flags the fast path trusts, e.g. an order declared `fifo`, may agree
 * with the reference at its default and not at another value), one key at a time, on one
 * and three colocated instances, disaggregated, and a pipeline with the policy's own loop, at
 * every load, two seeds. */
START_TEST(every_policy_own_key_values)
{
	static const char *const topo[][4] = {
		{NULL},
		{"cluster.instances=3", NULL},
		{"cluster.mode=disaggregated", "cluster.prefill_instances=2",
		 "cluster.decode_instances=2", NULL},
		{"cluster.pp=2", NULL},
	};
	size_t cases = 0, keys = 0;
	for (size_t f = 0; policy_families[f]; f++) {
		const struct policy_family *fam = policy_families[f];
		for (size_t m = 0; fam->members[m]; m++) {
			const struct policy_info *pi = fam->members[m];
			char *marg = member_arg(fam, pi);
			for (const struct cfg_def *d = pi->keys; d && d->key; d++) {
				char v[8][64];
				size_t nv = key_probes(d, v);
				keys += nv > 0;
				for (size_t i = 0; i < nv; i++) {
					size_t served = 0;
					for (size_t t = 0; t < sizeof topo / sizeof *topo; t++) {
						const char *kv[32];
						size_t n = 0;
						for (size_t j = 0; base_keys[j]; j++)
							kv[n++] = base_keys[j];
						for (size_t j = 0; topo[t][j]; j++)
							kv[n++] = topo[t][j];
						size_t at_load = n++;
						kv[n++] = marg;
						kv[n++] = v[i];
						kv[n] = NULL;
						for (size_t ld = 0; ld < sizeof loads / sizeof *loads; ld++) {
							kv[at_load] = loads[ld];
							for (uint64_t seed = 1; seed <= 2; seed++) {
								char label[256];
								snprintf(label, sizeof label,
									 "%s %s topology %zu load %zu "
									 "seed %llu", marg, v[i], t, ld,
									 (unsigned long long)seed);
								if (fast_equals_reference(kv, seed, label)) {
									cases++;
									served++;
								}
							}
						}
					}
					ck_assert_msg(served > 0, "%s %s runs in no topology of this test",
						      marg, v[i]);
				}
			}
			free(marg);
		}
	}
	fprintf(stderr, "differential: %zu policy keys probed, %zu cases identical\n", keys, cases);
	ck_assert_uint_gt(keys, 5);
}
END_TEST

/* Configurations the random test once found diverging, pinned with their seed. */
START_TEST(pinned_configurations)
{
	/* Overload on a 12-block KV cache with AdjustBuckets before each batch: the queue's
	 * head cannot fit while 4 decodes hold every block, and each step's adjustment splits
	 * the buckets once more, so the bucket picked when blocks free depends on how many
	 * steps ran in between. */
	static const char *const adjust_per_batch[] = {
		"workload.lengths=uniform", "workload.prompt_max=600", "workload.output_max=200",
		"workload.num_requests=40", "workload.arrival=poisson", "workload.rate=50",
		"server.max_num_seqs=8", "server.max_model_len=1536",
		"server.max_num_batched_tokens=2048", "server.num_kv_blocks=12",
		"scheduler.grouping=adaptive", "scheduler.adjust=batch",
		"scheduler.batching=continuous", NULL,
	};
	ck_assert(fast_equals_reference(adjust_per_batch, 369, "adaptive grouping, adjust=batch"));
	/* Static batches on three pipelined stages with AdjustBuckets before each batch: the
	 * queue waits while each batch runs, the reference adjusts at every step of the run and
	 * the fast path once, so N_max statistics over every call differed (446 against 82);
	 * they count the adjustments a batch was formed under. */
	static const char *const nmax_per_batch[] = {
		"workload.lengths=uniform", "workload.num_requests=40", "workload.arrival=offline",
		"server.max_num_seqs=8", "cluster.pp=3", "scheduler.order=ljf",
		"scheduler.grouping=adaptive", "scheduler.adjust=batch", "scheduler.batching=static",
		NULL,
	};
	ck_assert(fast_equals_reference(nmax_per_batch, 780, "N_max statistics, adjust=batch"));
	/* Host time without async scheduling: a step lasts host + device, and a run cut short
	 * must give back the device time of its steps, not their whole length (utilisation). */
	static const char *const host_then_device[] = {
		"workload.lengths=uniform", "workload.prompt_max=600", "workload.output_max=200",
		"workload.num_requests=40", "workload.arrival=poisson", "workload.rate=0.5",
		"server.max_num_seqs=64", "server.max_model_len=1536", "server.num_kv_blocks=40",
		"cluster.mode=disaggregated", "server.chunked_prefill=false",
		"server.max_num_prefill_seqs=4", "sim.host_time=true", "server.async_scheduling=false",
		"scheduler.order=sjf", "scheduler.grouping=adaptive", "scheduler.batching=token_budget",
		"bucketing.strategy=ideal", NULL,
	};
	ck_assert(fast_equals_reference(host_then_device, 448, "host + device, a cut run"));
	/* Pipelined lanes (pp 3, two instances) under static batching on a 12-block cache: a
	 * lane has earlier steps' passes pending in batches.csv order when its decode run is cut,
	 * and only the run's own entry may be shortened (shortening every pending entry of the
	 * lane left one with a negative count, and the fast path wrote rows without end). */
	static const char *const pipelined_cut[] = {
		"workload.lengths=uniform", "workload.prompt_max=600", "workload.output_max=200",
		"workload.num_requests=40", "workload.arrival=poisson", "workload.rate=5",
		"server.max_num_seqs=8", "server.max_model_len=1536", "server.num_kv_blocks=12",
		"cluster.instances=2", "cluster.pp=3", "scheduler.batching=static", NULL,
	};
	ck_assert(fast_equals_reference(pipelined_cut, 726, "pipelined lanes, a cut run"));
}
END_TEST

/* ---- random configurations ------------------------------------------------------------- */

/* How many random configurations the configuration check accepts are compared (a fixed
 * number, so that what is covered does not depend on the machine's speed): about 4 s of
 * the normal build on a loaded two-core machine, 25 s under the sanitizers. */
enum { RANDOM_CONFIGS = 300 };

/* A trace with prefix groups, priorities and tasks, written by main for the random
 * configurations (trace=FILE). */
static char prefix_trace_arg[64] = "trace=";

#define PICK(r, v) ((v)[gsl_rng_uniform_int((r), sizeof(v) / sizeof *(v))])

/* One random configuration: its keys, the member arguments it owns, its seed and its label
 * (the command line that reproduces it). */
struct rconf {
	const char *kv[64];
	char *own[16];
	size_t no;
	uint64_t seed;
	char label[2560];
};

/* Draws configuration INDEX from R: the topology and server limits, the workload (lengths
 * short, long enough to bind the token budget, the random dataset's shared prefix, or a
 * trace of prefix groups; priorities; online and offline tasks, task-aware or not), and one
 * registered member of every family; then EXTRA (which wins).  The draws do not depend on
 * EXTRA, so a seeded bug is tried on the configurations the random test runs. */
static void random_config(gsl_rng *r, size_t index, const char *const *extra, struct rconf *c)
{
	static const char *const modes[] = {"cluster.mode=colocated", "cluster.mode=disaggregated"};
	static const char *const inst[] = {"cluster.instances=1", "cluster.instances=2"};
	static const char *const pp[] = {"cluster.pp=1", "cluster.pp=1", "cluster.pp=3"};
	static const char *const seqs[] = {"server.max_num_seqs=2", "server.max_num_seqs=8",
					   "server.max_num_seqs=64"};
	/* below max_model_len, the token budget binds the long prompts (chunked) */
	static const char *const tokens[] = {"server.max_num_batched_tokens=256",
					     "server.max_num_batched_tokens=512",
					     "server.max_num_batched_tokens=2048"};
	static const char *const blocks[] = {"server.num_kv_blocks=12", "server.num_kv_blocks=40",
					     "server.num_kv_blocks=4000"};
	static const char *const chunked[] = {"server.chunked_prefill=true",
					      "server.chunked_prefill=false"};
	static const char *const prefill[] = {"server.max_num_prefill_seqs=1",
					      "server.max_num_prefill_seqs=4"};
	static const char *const caching[] = {"server.prefix_caching=true",
					      "server.prefix_caching=true",
					      "server.prefix_caching=false"};
	static const char *const task[] = {"scheduler.task_aware=false", "scheduler.task_aware=true"};
	static const char *const adjust[] = {"scheduler.adjust=arrival", "scheduler.adjust=batch",
					     "scheduler.adjust=period"};
	static const char *const rates[] = {"workload.rate=0.5", "workload.rate=5",
					    "workload.rate=50"};
	static const char *const host[] = {"sim.host_time=false", "sim.host_time=true"};
	static const char *const async[] = {"server.async_scheduling=true",
					    "server.async_scheduling=false"};
	/* liveness: offline requests, every request at time 0 */
	static const char *const tasks[] = {"workload.task=auto", "workload.task=random",
					    "workload.task=offline"};
	static const char *const fraction[] = {"workload.offline_fraction=0.2",
					       "workload.offline_fraction=0.7"};
	static const char *const arrivals[] = {"workload.arrival=poisson",
					       "workload.arrival=offline"};
	/* priorities: none (or the trace's), three levels drawn 1:2:1, online 0 / offline 1 */
	static const char *const priority[] = {"workload.priority=auto", "workload.priority=random",
					       "workload.priority=random", "workload.priority=task"};
	/* the lengths: uniform up to 600 + 200 tokens, prompts up to 1300 (over the budgets of
	 * 256 and 512 tokens), the random dataset with one 300-token prefix shared by every
	 * request, the trace of prefix groups */
	static const char *const lengths[][6] = {
		{NULL},
		{"workload.prompt_max=1300", NULL},
		{"workload.lengths=random", "workload.random_prefix_len=300",
		 "workload.random_input_len=400", "workload.random_range_ratio=0.9",
		 "workload.random_output_len=100", NULL},
		{prefix_trace_arg, "workload.lengths=trace", NULL},
	};
	size_t n = 0;
	c->no = 0;
	for (size_t j = 0; base_keys[j]; j++)
		c->kv[n++] = base_keys[j];
	c->kv[n++] = "server.max_model_len=1536"; /* 12 blocks of 128 */
	const char *mode = PICK(r, modes);
	c->kv[n++] = mode;
	c->kv[n++] = PICK(r, inst);
	/* pipeline parallelism is modelled for colocated instances */
	const char *p = PICK(r, pp);
	c->kv[n++] = strstr(mode, "disagg") ? pp[0] : p;
	c->kv[n++] = PICK(r, seqs);
	const char *tok = PICK(r, tokens);
	c->kv[n++] = tok;
	c->kv[n++] = PICK(r, blocks);
	/* without chunked prefill vLLM needs a token budget of max_model_len */
	const char *ch = PICK(r, chunked);
	c->kv[n++] = strstr(tok, "=2048") ? ch : chunked[0];
	c->kv[n++] = PICK(r, prefill);
	c->kv[n++] = PICK(r, caching);
	c->kv[n++] = PICK(r, task);
	c->kv[n++] = PICK(r, adjust);
	c->kv[n++] = PICK(r, rates);
	c->kv[n++] = PICK(r, host);
	c->kv[n++] = PICK(r, async);
	c->kv[n++] = PICK(r, tasks);
	c->kv[n++] = PICK(r, fraction);
	c->kv[n++] = PICK(r, arrivals);
	c->kv[n++] = PICK(r, priority);
	c->kv[n++] = "workload.priority_weights=1,2,1";
	size_t l = gsl_rng_uniform_int(r, sizeof lengths / sizeof *lengths);
	for (size_t j = 0; lengths[l][j]; j++)
		c->kv[n++] = lengths[l][j];
	for (size_t f = 0; policy_families[f]; f++) {
		const struct policy_family *fam = policy_families[f];
		size_t nm = 0;
		while (fam->members[nm])
			nm++;
		c->kv[n++] = c->own[c->no++] =
			member_arg(fam, fam->members[gsl_rng_uniform_int(r, nm)]);
	}
	for (size_t j = 0; extra && extra[j]; j++)
		c->kv[n++] = extra[j];
	c->kv[n] = NULL;
	c->seed = 1 + gsl_rng_uniform_int(r, 1000);
	int at = snprintf(c->label, sizeof c->label, "random configuration %zu (seed %llu):",
			  index, (unsigned long long)c->seed);
	for (size_t j = 0; c->kv[j] && at > 0 && (size_t)at < sizeof c->label; j++)
		at += snprintf(c->label + at, sizeof c->label - (size_t)at,
			       strncmp(c->kv[j], "trace=", 6) ? " --set %s" : " --trace %s",
			       strncmp(c->kv[j], "trace=", 6) ? c->kv[j] : c->kv[j] + 6);
}

/* The trace of prefix groups: 60 requests, each in one of four groups (prefixes of 200, 384,
 * 512 and 700 tokens) or none, its prompt its prefix and 1 to 700 more tokens, 1 to 100
 * output tokens, priority 0 to 2, online or offline. */
static int write_prefix_trace(FILE *f)
{
	static const int prefix[] = {200, 384, 512, 700};
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 11);
	fputs("prompt_tokens,output_tokens,priority,task,prefix_group,prefix_tokens\n", f);
	for (int i = 0; i < 60; i++) {
		int g = (int)gsl_rng_uniform_int(r, 5) - 1;
		int pre = g < 0 ? 0 : prefix[g];
		int prompt = pre + 1 + (int)gsl_rng_uniform_int(r, 700);
		int out = 1 + (int)gsl_rng_uniform_int(r, 100);
		int pri = (int)gsl_rng_uniform_int(r, 3);
		fprintf(f, "%d,%d,%d,%s,%d,%d\n", prompt, out, pri,
			gsl_rng_uniform_int(r, 2) ? "offline" : "online", g, pre);
	}
	gsl_rng_free(r);
	return ferror(f);
}

static void rconf_free(struct rconf *c)
{
	for (size_t j = 0; j < c->no; j++)
		free(c->own[j]);
}

START_TEST(random_configurations)
{
	/* RANDOM_CONFIGS accepted configurations (at most 20 times as many drawn). */
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 7);
	size_t runs = 0, refused = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_t c0 = clock();
	while (runs < RANDOM_CONFIGS) {
		ck_assert_msg(refused < 20 * RANDOM_CONFIGS,
			      "%zu random configurations refused for %zu accepted", refused, runs);
		struct rconf c;
		random_config(r, runs + refused, NULL, &c);
		if (fast_equals_reference(c.kv, c.seed, c.label))
			runs++;
		else
			refused++;
		rconf_free(&c);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	gsl_rng_free(r);
	fprintf(stderr, "differential: %zu random configurations identical, %zu refused (%.1f s, "
		"%.1f s of CPU)\n", runs, refused,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		(double)(clock() - c0) / CLOCKS_PER_SEC);
}
END_TEST

/* ---- the tests of this test: seeded bugs -------------------------------------------------- */

/* The first of the random configurations (random_config's, with EXTRA; those with the key
 * SKIP left out) in which the fast path and the reference differ, or RANDOM_CONFIGS when
 * none of the first RANDOM_CONFIGS accepted does; *WHAT: the output that differs. */
static size_t first_differing_random(const char *const *extra, const char *skip, size_t max,
				     int *what, char *label, size_t label_size)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 7);
	size_t runs = 0, refused = 0, found = max;
	while (runs < max && refused < 20 * max) {
		struct rconf c;
		random_config(r, runs + refused, extra, &c);
		bool skipped = false;
		for (size_t j = 0; skip && c.kv[j]; j++)
			skipped |= !strcmp(c.kv[j], skip);
		int d = skipped ? REFUSED : compare_both_ways(c.kv, c.seed, false, c.label);
		if (d == IDENTICAL)
			d = compare_both_ways(c.kv, c.seed, true, c.label);
		rconf_free(&c);
		if (d != REFUSED && d != IDENTICAL && label)
			snprintf(label, label_size, "%s", c.label);
		if (d == REFUSED) {
			refused++;
			continue;
		}
		if (d != IDENTICAL) {
			found = runs;
			*what = d;
			break;
		}
		runs++;
	}
	gsl_rng_free(r);
	return found;
}

/* An order declared `fifo` that is not: priority's key (priority, then arrival) with the
 * flag of FCFS.  The fast path then lets a decode run pass arrivals while the queue's head
 * waits, though a later arrival of a higher priority would be served first at the next
 * step.  Only a workload with several priorities tells (the bug a workload without them
 * missed). */
START_TEST(catches_wrong_fifo_flag)
{
	struct order_policy bad = *order_policy("priority");
	ck_assert(!bad.fifo);
	bad.fifo = true;
	subst_order = &bad;
	static const char *const extra[] = {"scheduler.order=priority", NULL};
	int what = IDENTICAL;
	/* an arrival may start a microbatch on a pipelined instance whatever the order says
	 * (the flag is not read there) */
	size_t i = first_differing_random(extra, "cluster.pp=3", RANDOM_CONFIGS, &what, NULL, 0);
	subst_order = NULL;
	ck_assert_msg(i < RANDOM_CONFIGS, "an order declared fifo that is not (priority) agrees "
		      "with the reference over %d random configurations", RANDOM_CONFIGS);
	fprintf(stderr, "differential: an order declared fifo that is not: %s differs at random "
		"configuration %zu\n", out_names[what], i);
}
END_TEST

/* A controller that reads state the kernel does not know of: continuous batching whose
 * token budget for new prompts is halved at about every other batch it is asked to form,
 * counted in a static variable.  The reference asks at every step, the fast path once for a run of
 * identical steps, so their batches differ once the halved budget binds (long prompts). */
static unsigned undeclared_batches;

static bool take_undeclared(struct batch_view *d, struct batch_cand *c)
{
	if (d->n == 0)
		undeclared_batches++;
	uint64_t taken = 0;
	for (size_t i = 0; i < d->n; i++)
		taken += d->lens[i];
	/* halved at about every other batch: those whose count a multiplicative hash sends to
	 * the upper half */
	bool half = (uint32_t)(undeclared_batches * 2654435761u) >> 31;
	int64_t budget = half ? d->step_tokens / 2 : d->step_tokens;
	return (d->idle && d->n == 0) ||
	       (int64_t)(taken + (uint64_t)c->q->prompt_tokens) <= budget;
}

START_TEST(catches_undeclared_controller_state)
{
	struct batch_policy bad = *batch_policy("continuous");
	ck_assert_ptr_null(bad.take);
	bad.take = take_undeclared;
	subst_batching = &bad;
	static const char *const extra[] = {"scheduler.batching=continuous", NULL};
	int what = IDENTICAL;
	size_t i = first_differing_random(extra, NULL, RANDOM_CONFIGS, &what, NULL, 0);
	subst_batching = NULL;
	ck_assert_msg(i < RANDOM_CONFIGS, "a controller reading undeclared state agrees with the "
		      "reference over %d random configurations", RANDOM_CONFIGS);
	fprintf(stderr, "differential: a controller reading undeclared state: %s differs at random "
		"configuration %zu\n", out_names[what], i);
}
END_TEST

/* Every order and every batch controller on the first 40 random configurations (without
 * pipelines, where arrivals matter whatever the policy declares) with that policy in place
 * of the random one: the random test draws each in about one configuration in 9 or 5, too
 * few to catch a flag the fast path trusts (priority declared fifo differs at the 22nd). */
START_TEST(every_order_and_controller_on_random_configurations)
{
	static const char *const families[] = {"scheduler.order", "scheduler.batching"};
	size_t tried = 0;
	for (size_t f = 0; f < 2; f++) {
		const struct policy_family *fam = policy_family_by_key(families[f]);
		ck_assert_ptr_nonnull(fam);
		for (size_t m = 0; fam->members[m]; m++) {
			char *marg = member_arg(fam, fam->members[m]);
			const char *extra[] = {marg, NULL};
			int what = IDENTICAL;
			char label[2560] = "";
			size_t i = first_differing_random(extra, "cluster.pp=3", 40, &what, label,
							  sizeof label);
			ck_assert_msg(i == 40, "%s: %s differs between the fast path and the reference",
				      label, out_names[what]);
			free(marg);
			tried++;
		}
	}
	fprintf(stderr, "differential: %zu orders and controllers identical on 40 random "
		"configurations each\n", tried);
}
END_TEST

/* ---- state kept between runs ------------------------------------------------------------- */

/* The fast path and the reference run in one process, so a policy that keeps state in a
 * static variable between runs agrees with itself there.  Each policy is run (A) in a child
 * process forked before this process ran anything, then here after a run of another
 * configuration (B: other server limits, load and seed), then here again: the three must
 * give the same bytes.  (With CK_FORK=no the earlier tests have run in this process too.) */

/* The configuration of policy argument MARG: base_keys, topology T, near saturation, MARG;
 * with OTHER, B's limits on top.  KV holds 32. */
static void twice_config(const char **kv, size_t t, const char *marg, bool other)
{
	static const char *const b_keys[] = {"server.max_num_seqs=3",
					     "server.max_num_batched_tokens=256",
					     "workload.rate=100", NULL};
	size_t n = 0;
	for (size_t j = 0; base_keys[j]; j++)
		kv[n++] = base_keys[j];
	kv[n++] = "server.max_num_batched_tokens=512"; /* below the longest prompts */
	for (size_t j = 0; topologies[t][j]; j++)
		/* "loop": the default loop, or the policy when it is one */
		kv[n++] = strcmp(topologies[t][j], "loop") ? topologies[t][j] : marg;
	kv[n++] = "workload.rate=8";
	for (size_t j = 0; other && b_keys[j]; j++)
		kv[n++] = b_keys[j];
	kv[n++] = marg;
	kv[n] = NULL;
}

enum { NTOPO = sizeof topologies / sizeof *topologies };

/* In a child process: for each of the N policy arguments MARG, the first topology that
 * accepts it (*T, NTOPO: none) and its outputs (seed 1). */
static void fresh_runs(size_t n, char *const *marg, size_t *t, struct output *out)
{
	FILE *f = tmpfile();
	ck_assert_ptr_nonnull(f);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (size_t i = 0; i < n; i++) {
			struct output o = {0};
			size_t k = 0;
			for (; k < NTOPO; k++) {
				const char *kv[32];
				twice_config(kv, k, marg[i], false);
				if (run_one(kv, 1, true, false, &o))
					break;
			}
			fwrite(&k, sizeof k, 1, f);
			for (int j = 0; k < NTOPO && j < OUTS; j++) {
				fwrite(&o.len[j], sizeof o.len[j], 1, f);
				fwrite(o.buf[j], 1, o.len[j], f);
			}
			output_free(&o);
		}
		_exit(fflush(f) || ferror(f) ? 1 : 0);
	}
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child process failed (%d)", st);
	rewind(f);
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		ck_assert_uint_eq(fread(&t[i], sizeof t[i], 1, f), 1);
		for (int j = 0; t[i] < NTOPO && j < OUTS; j++) {
			ck_assert_uint_eq(fread(&out[i].len[j], sizeof out[i].len[j], 1, f), 1);
			out[i].buf[j] = xmalloc(out[i].len[j] + 1);
			ck_assert_uint_eq(fread(out[i].buf[j], 1, out[i].len[j], f), out[i].len[j]);
		}
	}
	fclose(f);
}

/* Runs B then A twice here for each policy argument of fresh_runs; the first policy whose
 * runs of A differ (its index, *WHAT the output and *WHICH 0: the fresh run against the
 * first here, 1: the two here), or N. */
static size_t first_changed_by_state(size_t n, char *const *marg, const size_t *t,
				     struct output *fresh, int *what, int *which)
{
	for (size_t i = 0; i < n; i++) {
		if (t[i] == NTOPO)
			continue;
		const char *a[32], *b[32];
		twice_config(a, t[i], marg[i], false);
		twice_config(b, t[i], marg[i], true);
		live_label = marg[i];
		struct output ob = {0}, o1 = {0}, o2 = {0};
		if (run_one(b, 2, true, false, &ob))
			output_free(&ob);
		ck_assert(run_one(a, 1, true, false, &o1));
		ck_assert(run_one(a, 1, true, false, &o2));
		int d1 = first_difference(&fresh[i], &o1), d2 = first_difference(&o1, &o2);
		output_free(&o1);
		output_free(&o2);
		if (d1 != IDENTICAL || d2 != IDENTICAL) {
			*what = d1 != IDENTICAL ? d1 : d2;
			*which = d1 == IDENTICAL;
			return i;
		}
	}
	return n;
}

START_TEST(every_policy_twice_in_one_process)
{
	char *marg[128] = {0};
	size_t n = 0;
	for (size_t f = 0; policy_families[f]; f++)
		for (size_t m = 0; policy_families[f]->members[m]; m++) {
			ck_assert_uint_lt(n, 128);
			marg[n++] = member_arg(policy_families[f], policy_families[f]->members[m]);
		}
	size_t t[128];
	struct output fresh[128];
	fresh_runs(n, marg, t, fresh);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(t[i] < NTOPO, "%s runs in no topology of this test", marg[i]);
	int what = IDENTICAL, which = 0;
	size_t i = first_changed_by_state(n, marg, t, fresh, &what, &which);
	ck_assert_msg(i == n, "%s (topology %zu): %s differs between %s", i < n ? marg[i] : "",
		      i < n ? t[i] : 0, out_names[what],
		      which ? "two runs in one process" : "a fresh process and one that ran "
		      "another configuration before");
	for (size_t j = 0; j < n; j++) {
		output_free(&fresh[j]);
		free(marg[j]);
	}
	fprintf(stderr, "differential: %zu policies give the same bytes in a fresh process and "
		"twice in one that ran another configuration\n", n);
}
END_TEST

/* A controller that keeps its configuration from the first run of the process: continuous
 * batching that takes at most half of max_num_seqs + 1 requests running, read once into a
 * static variable.  Its runs agree with the reference (both share the value); a run after
 * one of another max_num_seqs does not agree with a fresh process. */
static int32_t remembered_cap;

static bool take_remembered(struct batch_view *d, struct batch_cand *c)
{
	(void)c;
	if (!remembered_cap)
		remembered_cap = d->max_running / 2 + 1;
	return d->running + (int32_t)d->n < remembered_cap;
}

/* Both seeded controllers (the one above, and the counting one of
 * catches_undeclared_controller_state), run as scheduler.batching=continuous. */
START_TEST(catches_static_state)
{
	bool (*const takes[])(struct batch_view *, struct batch_cand *) = {take_remembered,
									    take_undeclared};
	static const char *const names[] = {"a configuration kept from the first run",
					    "a count of batches kept between runs"};
	for (size_t k = 0; k < 2; k++) {
		struct batch_policy bad = *batch_policy("continuous");
		bad.take = takes[k];
		subst_batching = &bad;
		char *marg[1] = {xstrdup("scheduler.batching=continuous")};
		size_t t[1];
		struct output fresh[1];
		fresh_runs(1, marg, t, fresh);
		ck_assert_uint_lt(t[0], NTOPO);
		int what = IDENTICAL, which = 0;
		size_t i = first_changed_by_state(1, marg, t, fresh, &what, &which);
		subst_batching = NULL;
		ck_assert_msg(i == 0, "a controller with %s gives the same bytes in a fresh process "
			      "and twice after another configuration", names[k]);
		fprintf(stderr, "differential: a controller with %s: %s differs between %s\n",
			names[k], out_names[what], which ? "two runs in one process"
			: "a fresh process and one that ran another configuration before");
		output_free(&fresh[0]);
		free(marg[0]);
	}
}
END_TEST

int main(void)
{
	char path[] = "/tmp/bucketsim-diff-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, bucket_file_text, sizeof bucket_file_text - 1) < 0 || close(fd))
		return 1;
	strncat(bucket_file_arg, path, sizeof bucket_file_arg - strlen(bucket_file_arg) - 1);
	char lpath[] = "/tmp/bucketsim-difflog-XXXXXX";
	fd = mkstemp(lpath);
	if (fd < 0 || write(fd, bucket_log_text, sizeof bucket_log_text - 1) < 0 || close(fd))
		return 1;
	strncat(bucket_log_arg, lpath, sizeof bucket_log_arg - strlen(bucket_log_arg) - 1);
	char tpath[] = "/tmp/bucketsim-difftrace-XXXXXX";
	fd = mkstemp(tpath);
	FILE *tf = fd < 0 ? NULL : fdopen(fd, "w");
	if (!tf || write_prefix_trace(tf) || fclose(tf))
		return 1;
	strncat(prefix_trace_arg, tpath, sizeof prefix_trace_arg - strlen(prefix_trace_arg) - 1);
	Suite *s = suite_create("differential");
	TCase *tc = tcase_create("fast_vs_reference");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, pinned_configurations);
	tcase_add_test(tc, every_policy_every_topology);
	tcase_add_test(tc, every_policy_own_key_values);
	suite_add_tcase(s, tc);
	TCase *tr = tcase_create("random");
	tcase_set_timeout(tr, 600);
	tcase_add_test(tr, random_configurations);
	tcase_add_test(tr, every_order_and_controller_on_random_configurations);
	suite_add_tcase(s, tr);
	/* the tests of this test: bugs seeded in test-only policies are caught */
	TCase *tb = tcase_create("seeded_bugs");
	tcase_set_timeout(tb, 600);
	tcase_add_test(tb, catches_wrong_fifo_flag);
	tcase_add_test(tb, catches_undeclared_controller_state);
	tcase_add_test(tb, catches_static_state);
	suite_add_tcase(s, tb);
	TCase *tt = tcase_create("twice");
	tcase_set_timeout(tt, 600);
	tcase_add_test(tt, every_policy_twice_in_one_process);
	suite_add_tcase(s, tt);
	TCase *tl = tcase_create("preempting_disaggregated");
	tcase_set_timeout(tl, 600);
	tcase_add_test(tl, every_policy_preempting_disaggregated);
	suite_add_tcase(s, tl);
	int rc = check_run(s);
	unlink(path);
	unlink(lpath);
	unlink(tpath);
	return rc;
}
