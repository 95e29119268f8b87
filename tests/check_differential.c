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
 * diverging, then a property test: random configurations for a bounded wall time.
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
};

static void sink_request(void *ctx, const struct sim *s, int32_t id)
{
	report_request_row(((struct sinks *)ctx)->f[OUT_REQ], s, id);
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

/* Liveness: a run that has no stop time ends with every request finished (one with a stop
 * time counts the rest as unfinished).  Checked when the events run out, before
 * sim_finish(), which stops the process at a BUG: a request nobody will ever take (an idle
 * instance never woken) fails here, naming the configuration. */
static void check_liveness(const struct sim *s, const struct run_ctx *x, bool jumps)
{
	if (x->sp.stop_ns != INT64_MAX)
		return;
	ck_assert_msg(sim_finished(s) == x->w.n,
		      "%s (%s): the events ran out with %zu of %zu requests finished", live_label,
		      jumps ? "fast path" : "reference", sim_finished(s), x->w.n);
}

/* Runs the configuration KV (NULL-terminated "key=value" list) with SEED, with every output
 * or (LEAN) without batches.csv and monitor.csv; false when the configuration check refuses
 * it. */
static bool run_one(const char *const *kv, uint64_t seed, bool jumps, bool lean,
		    struct output *o)
{
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	cli_config_init(&x.cc);
	x.cc.seed = seed;
	struct bs_err err = {0};
	for (size_t i = 0; kv[i]; i++)
		ck_assert_msg(!config_set_arg(&x.cc.cfg, kv[i], &err), "%s: %s", kv[i], err.msg);
	ck_assert(!config_set(&x.cc.cfg, "sim.decode_jumps", jumps ? "true" : "false",
			      CFG_ORIGIN_CMDLINE, NULL, 0, &err));
	if (lean)
		ck_assert(!config_set(&x.cc.cfg, "monitor.interval_s", "0", CFG_ORIGIN_CMDLINE,
				      NULL, 0, &err));
	if (run_setup(&x, run_default_trace(&x.cc.cfg, NULL), true, &err)) {
		run_teardown(&x);
		return false;
	}
	struct sinks k;
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
	sim_warmup(s);
	sim_run(s);
	check_liveness(s, &x, jumps);
	sim_finish(s);
	ck_assert_uint_eq(sim_finished(s), x.w.n);
	cJSON *m = run_metrics_json(&x, s);
	char *met = cJSON_PrintUnformatted(m);
	fputs(met, k.f[OUT_MET]);
	free(met);
	cJSON_Delete(m);
	sim_free(s);
	for (int i = 0; i < OUTS; i++)
		fclose(k.f[i]);
	run_teardown(&x);
	return true;
}

static void output_free(struct output *o)
{
	for (int i = 0; i < OUTS; i++)
		free(o->buf[i]);
}

/* Runs KV both ways (LEAN: run_one's); returns false when refused.  Fails on the first
 * differing byte. */
static bool same_both_ways(const char *const *kv, uint64_t seed, bool lean, const char *label)
{
	struct output a = {0}, b = {0};
	live_label = label;
	bool ok = run_one(kv, seed, true, lean, &a);
	if (!ok)
		return false;
	ck_assert_msg(run_one(kv, seed, false, lean, &b), "%s: reference refused", label);
	for (int i = 0; i < OUTS; i++)
		ck_assert_msg(a.len[i] == b.len[i] && !memcmp(a.buf[i], b.buf[i], a.len[i]),
			      "%s%s: %s differs between the fast path and the reference", label,
			      lean ? " (without batches.csv and monitor.csv)" : "", out_names[i]);
	output_free(&a);
	output_free(&b);
	return true;
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

static const char *pick(gsl_rng *r, const char *const *v, size_t n)
{
	return v[gsl_rng_uniform_int(r, n)];
}

START_TEST(random_configurations)
{
	/* Random policies, topology and server limits, for at most 4 s of wall time. */
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 7);
	static const char *const modes[] = {"cluster.mode=colocated", "cluster.mode=disaggregated"};
	static const char *const inst[] = {"cluster.instances=1", "cluster.instances=2"};
	static const char *const pp[] = {"cluster.pp=1", "cluster.pp=1", "cluster.pp=3"};
	static const char *const seqs[] = {"server.max_num_seqs=2", "server.max_num_seqs=8",
					   "server.max_num_seqs=64"};
	static const char *const tokens[] = {"server.max_num_batched_tokens=256",
					     "server.max_num_batched_tokens=2048"};
	static const char *const blocks[] = {"server.num_kv_blocks=12", "server.num_kv_blocks=40",
					     "server.num_kv_blocks=4000"};
	static const char *const chunked[] = {"server.chunked_prefill=true",
					      "server.chunked_prefill=false"};
	static const char *const prefill[] = {"server.max_num_prefill_seqs=1",
					      "server.max_num_prefill_seqs=4"};
	static const char *const task[] = {"scheduler.task_aware=false", "scheduler.task_aware=true"};
	static const char *const adjust[] = {"scheduler.adjust=arrival", "scheduler.adjust=batch",
					     "scheduler.adjust=period"};
	static const char *const rates[] = {"workload.rate=0.5", "workload.rate=5",
					    "workload.rate=50"};
	static const char *const strat[] = {"bucketing.strategy=exponential",
					    "bucketing.strategy=linear", "bucketing.strategy=none"};
	static const char *const host[] = {"sim.host_time=false", "sim.host_time=true"};
	static const char *const async[] = {"server.async_scheduling=true",
					    "server.async_scheduling=false"};
	/* liveness: offline requests, every request at time 0 */
	static const char *const tasks[] = {"workload.task=auto", "workload.task=random",
					    "workload.task=offline"};
	static const char *const arrivals[] = {"workload.arrival=poisson",
					       "workload.arrival=offline"};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t runs = 0, refused = 0;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > 4.0)
			break;
		const char *kv[48];
		char *own[8];
		size_t n = 0, no = 0;
		for (size_t j = 0; base_keys[j]; j++)
			kv[n++] = base_keys[j];
		kv[n - 2] = "server.max_model_len=1536"; /* 12 blocks of 128 */
		const char *mode = pick(r, modes, 2);
		kv[n++] = mode;
		kv[n++] = pick(r, inst, 2);
		/* pipeline parallelism is modelled for colocated instances */
		kv[n++] = strstr(mode, "disagg") ? pp[0] : pick(r, pp, 3);
		kv[n++] = pick(r, seqs, 3);
		const char *tok = pick(r, tokens, 2);
		kv[n++] = tok;
		kv[n++] = pick(r, blocks, 3);
		/* without chunked prefill vLLM needs a token budget of max_model_len */
		kv[n++] = strstr(tok, "=256") ? chunked[0] : pick(r, chunked, 2);
		kv[n++] = pick(r, prefill, 2);
		kv[n++] = pick(r, task, 2);
		kv[n++] = pick(r, adjust, 3);
		kv[n++] = pick(r, rates, 3);
		kv[n++] = pick(r, strat, 3);
		kv[n++] = pick(r, host, 2);
		kv[n++] = pick(r, async, 2);
		kv[n++] = pick(r, tasks, 3);
		kv[n++] = pick(r, arrivals, 2);
		for (size_t f = 0; policy_families[f]; f++) {
			const struct policy_family *fam = policy_families[f];
			size_t nm = 0;
			while (fam->members[nm])
				nm++;
			kv[n++] = own[no++] = member_arg(fam, fam->members[gsl_rng_uniform_int(r, nm)]);
		}
		kv[n] = NULL;
		uint64_t seed = 1 + gsl_rng_uniform_int(r, 1000);
		char label[2048];
		int at = snprintf(label, sizeof label, "random configuration %zu (seed %llu):",
				  runs + refused, (unsigned long long)seed);
		for (size_t j = 0; kv[j] && at > 0 && (size_t)at < sizeof label; j++)
			at += snprintf(label + at, sizeof label - (size_t)at, " --set %s", kv[j]);
		if (fast_equals_reference(kv, seed, label))
			runs++;
		else
			refused++;
		for (size_t j = 0; j < no; j++)
			free(own[j]);
	}
	gsl_rng_free(r);
	fprintf(stderr, "differential: %zu random configurations identical, %zu refused\n", runs,
		refused);
	ck_assert_uint_gt(runs, 0);
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
	Suite *s = suite_create("differential");
	TCase *tc = tcase_create("fast_vs_reference");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, pinned_configurations);
	tcase_add_test(tc, every_policy_every_topology);
	tcase_add_test(tc, every_policy_own_key_values);
	tcase_add_test(tc, random_configurations);
	suite_add_tcase(s, tc);
	TCase *tl = tcase_create("preempting_disaggregated");
	tcase_set_timeout(tl, 600);
	tcase_add_test(tl, every_policy_preempting_disaggregated);
	suite_add_tcase(s, tl);
	int rc = check_run(s);
	unlink(path);
	unlink(lpath);
	return rc;
}
