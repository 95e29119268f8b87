/*
 * cmd_run: `bucketsim run` (one simulation) and `bucketsim validate` (check a config and,
 * optionally, a trace, without simulating).
 *
 * Order of set-up: config (defaults < file < command line), the cost model and the derived
 * keys (sim/resolve.h), bucketing parameters, kernel parameters, the workload, the bucket
 * lists.  Output files are opened under temporary names before the run, streamed during it and
 * renamed into place only when everything succeeded.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "analysis/report.h"
#include "sim/commands.h"
#include "sim/kernel.h"
#include "sim/resolve.h"
#include "sim/run_int.h"

enum {
	OPT_TRACE = 't',
	OPT_OUT = 'o',
	OPT_QUIET = 'q',
	OPT_NO_BATCHES = CLI_OPT_FIRST_FREE,
	OPT_JSON,
	OPT_PERF,
};

static const struct cli_opt run_opts[] = {
	{"trace", OPT_TRACE, 1, "FILE|NAME",
	 "trace CSV/JSONL path or bundled name (bucketsim list workloads); default alpaca", "Input"},
	CLI_CONFIG_OPTS,
	{"output", OPT_OUT, 1, "DIR",
	 "write summary.json, requests.csv, batches.csv, buckets.csv (+ monitor.csv, boundaries.csv) into DIR", "Output"},
	{"no-batches", OPT_NO_BATCHES, 0, NULL, "do not write batches.csv (large runs)", "Output"},
	{"json", OPT_JSON, 0, NULL, "print summary.json to stdout instead of the readable summary "
	 "(not with --quiet)", "Output"},
	{"quiet", OPT_QUIET, 0, NULL, "print nothing to stdout (not with --json)", "Output"},
	{"perf", OPT_PERF, 0, NULL,
	 "print wall time, simulated requests/s, events/s and peak memory to stderr", "Output"},
	CLI_HELP_OPT,
	{0},
};

struct run_opts {
	const char *trace, *out;
	bool json, quiet, perf;
};

static int parse(const struct cli_cmd *self, int argc, char **argv, struct run_ctx *x,
		 struct run_opts *o, struct bs_err *err)
{
	struct cli_state st = {0};
	int c;
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		if (c == -2)
			return BS_EXIT_USAGE;
		if (c == -3)
			return -3;
		int r = cli_config_opt(&x->cc, c, st.optarg, err);
		if (r < 0)
			return cli_fail(err);
		if (r)
			continue;
		switch (c) {
		case OPT_TRACE:
			o->trace = st.optarg;
			break;
		case OPT_OUT:
			o->out = st.optarg;
			break;
		case OPT_NO_BATCHES:
			if (config_set(&x->cc.cfg, "output.batches", "false", CFG_ORIGIN_CMDLINE, NULL,
				       0, err))
				return cli_fail(err);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_PERF:
			o->perf = true;
			break;
		default:
			return cli_usage(self, "unexpected option");
		}
	}
	if (st.optind < argc)
		return cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
	if (o->json && o->quiet)
		return cli_usage(self, "--json prints the summary and --quiet prints nothing: give "
				 "one of them");
	o->trace = run_default_trace(&x->cc.cfg, o->trace);
	return 0;
}

/* Every file `run -o DIR` may write: a rerun removes those it did not write this time, so DIR
 * always describes one run (sim/outset.h, directory mode). */
static const char *const run_outputs[] = {"summary.json", "requests.csv", "batches.csv",
					  "monitor.csv", "boundaries.csv", "buckets.csv", NULL};

struct sinks {
	FILE *req, *bat, *mon, *bnd;
	uint64_t mon_rows, mon_cap;   /* monitor.csv rows written, and the most allowed */
	struct report_writer *rows;   /* requests.csv and batches.csv */
};

/* Every output is bounded by the work: requests.csv by the requests, batches.csv by the passes
 * (each serves at least one token), buckets.csv by the bucket lists (capped where they are
 * built), monitor.csv by this: at most 10^6 + 1000 rows per request. */
static uint64_t monitor_cap(const struct workload *w)
{
	return 1000000 + 1000 * (uint64_t)w->n;
}

/* The rows monitor.csv needs until the last arrival must fit monitor_cap(): checked before the
 * run (run and validate alike); the rows of the drain after the last arrival are checked while
 * writing. */
static int check_monitor_rows(const struct run_ctx *x, struct bs_err *err)
{
	if (x->sp.monitor_ns <= 0)
		return 0;
	int64_t last = 0;
	for (size_t i = 0; i < x->w.n; i++)
		if (x->w.req[i].arrival_ns > last)
			last = x->w.req[i].arrival_ns;
	uint64_t rows = (uint64_t)(last / x->sp.monitor_ns);
	if (rows > monitor_cap(&x->w))
		return bs_errf(err, BS_EXIT_INPUT, x->cc.cfg.file, 0, "monitor.interval_s",
			       "%llu monitor rows for %zu requests arriving over %.9g s, more than "
			       "the %llu allowed (10^6 + 1000 per request): raise the interval",
			       (unsigned long long)rows, x->w.n, (double)last / 1e9,
			       (unsigned long long)monitor_cap(&x->w));
	return 0;
}

static void sink_request(void *ctx, const struct sim *s, int32_t id)
{
	struct sinks *k = ctx;
	report_writer_request(k->rows, s, id);
}

static void sink_pass(void *ctx, const struct sim *s, const struct pass_rec *p)
{
	struct sinks *k = ctx;
	(void)s;
	report_writer_pass(k->rows, p);
}

static void sink_monitor(void *ctx, const struct sim *s, const struct monitor_rec *m)
{
	struct sinks *k = ctx;
	(void)s;
	if (++k->mon_rows <= k->mon_cap)
		report_monitor_row(k->mon, m);
}

static void sink_boundaries(void *ctx, const struct sim *s, bool offline, const uint32_t *b,
			    size_t nb, size_t splits, size_t merged)
{
	struct sinks *k = ctx;
	report_boundaries_row(k->bnd, sim_now(s), offline, b, nb, splits, merged, sim_last_nmax(s));
}

static cJSON *build_summary(const struct run_ctx *x, struct sim *s, int argc, char **argv,
			    const char *trace)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *meta = cJSON_CreateObject();
	cJSON_AddStringToObject(meta, "version", BUCKETSIM_VERSION);
	char buf[64];
	json_add_int(meta, "seed", (int64_t)x->cc.seed);
	snprintf(buf, sizeof buf, "%016llx", (unsigned long long)config_hash(&x->cc.cfg));
	cJSON_AddStringToObject(meta, "config_hash", buf);
	cJSON *av = cJSON_CreateArray();
	cJSON_AddItemToArray(av, cJSON_CreateString("bucketsim"));
	for (int i = 0; i < argc; i++)
		cJSON_AddItemToArray(av, cJSON_CreateString(argv[i]));
	cJSON_AddItemToObject(meta, "argv", av);
	cJSON_AddStringToObject(meta, "config_file", x->cc.cfg.file ? x->cc.cfg.file : "");
	cJSON_AddStringToObject(meta, "trace", trace ? trace : "");
	cJSON_AddItemToObject(meta, "inputs", run_inputs_json(x, argc, argv));
	cJSON *wl = cJSON_CreateObject();
	cJSON_AddStringToObject(wl, "source", x->w.source);
	json_add_int(wl, "requests", (int64_t)x->w.n);
	json_add_int(wl, "prompts_truncated", (int64_t)x->w.prompts_truncated);
	json_add_int(wl, "outputs_capped", (int64_t)x->w.outputs_capped);
	json_add_int(wl, "outputs_raised", (int64_t)x->w.outputs_raised);
	cJSON *streams = cJSON_CreateObject();
	for (size_t i = 0; i < x->w.nstreams; i++)
		json_add_int(streams, x->w.streams[i].name, (int64_t)x->w.streams[i].seed);
	cJSON_AddItemToObject(wl, "stream_seeds", streams);
	cJSON_AddItemToObject(meta, "workload", wl);
	cJSON_AddStringToObject(meta, "hardware", cost_model_hardware(x->cm));
	cJSON_AddStringToObject(meta, "model", cost_model_name(x->cm));
	/* The bucketing that ran: the VLLM_* environment may choose another strategy than the
	 * key bucketing.strategy of "config" (bucket_params_resolve). */
	cJSON *bk = cJSON_CreateObject();
	cJSON_AddStringToObject(bk, "strategy", x->bp.strategy->info.name);
	cJSON_AddStringToObject(bk, "version", bucket_version_name(x->bp.version));
	cJSON_AddBoolToObject(bk, "enabled", x->bp.enabled);
	cJSON_AddItemToObject(meta, "bucketing", bk);
	cJSON_AddItemToObject(root, "meta", meta);
	cJSON_AddItemToObject(root, "config", config_to_json(&x->cc.cfg));
	cJSON_AddItemToObject(root, "metrics", run_metrics_json(x, s));
	return root;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(const struct cli_cmd *self, int argc, char **argv)
{
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	cli_config_init(&x.cc);
	struct run_opts o = {0};
	struct bs_err err = {0};
	int rc = parse(self, argc, argv, &x, &o, &err);
	if (rc) {
		cli_config_release(&x.cc);
		return rc == -3 ? 0 : rc;
	}
	if (x.cc.print_config) {
		/* The kernel's parameters too: contiguous PA as it runs. */
		if (!sim_resolve_config(&x.cc.cfg, &x.cm, &err) &&
		    !bucket_params_resolve(&x.cc.cfg, &x.bp, &err) &&
		    !sim_params_from_config(&x.cc.cfg, &x.bp, &x.sp, &err)) {
			run_report_contiguous_pa(&x);
			config_print(&x.cc.cfg, stdout);
		}
		config_locate(&x.cc.cfg, &err);
		rc = err.code ? cli_fail(&err) : 0;
		run_teardown(&x);
		return rc;
	}
	double t0 = now_s();
	if (run_setup(&x, o.trace, true, &err) || check_monitor_rows(&x, &err) ||
	    run_check_unread(&x, &err)) {
		config_locate(&x.cc.cfg, &err);
		rc = cli_fail(&err);
		run_teardown(&x);
		return rc;
	}
	struct outset os;
	outset_init(&os);
	struct sinks k = {NULL, NULL, NULL, NULL, 0, monitor_cap(&x.w), NULL};
	FILE *fsum = NULL, *fbuck = NULL;
	if (o.out) {
		if (outset_init_dir(&os, o.out, run_outputs, &err))
			goto fail;
		fsum = outset_open_in(&os, "summary.json", &err);
		if (!fsum)
			goto fail;
		if (config_bool(&x.cc.cfg, "output.requests")) {
			if (!(k.req = outset_open_in(&os, "requests.csv", &err)))
				goto fail;
			setvbuf(k.req, NULL, _IONBF, 0); /* see the row writer below */
			report_requests_header(k.req);
		}
		if (config_bool(&x.cc.cfg, "output.batches")) {
			if (!(k.bat = outset_open_in(&os, "batches.csv", &err)))
				goto fail;
			setvbuf(k.bat, NULL, _IONBF, 0);
			report_batches_header(k.bat);
		}
		if (x.sp.monitor_ns > 0) {
			if (!(k.mon = outset_open_in(&os, "monitor.csv", &err)))
				goto fail;
			report_monitor_header(k.mon);
		}
		if (x.sp.grouped && x.bsc.grouping->adjust) {
			if (!(k.bnd = outset_open_in(&os, "boundaries.csv", &err)))
				goto fail;
			report_boundaries_header(k.bnd);
		}
		if (!(fbuck = outset_open_in(&os, "buckets.csv", &err)))
			goto fail;
		/* Its rows in writes of 64 KiB rather than 4 KiB (the buffer must be given: glibc
		 * ignores the size without one; the stream is closed before run returns). */
		static char buck_buf[1 << 16];
		setvbuf(fbuck, buck_buf, _IOFBF, sizeof buck_buf);
	}
	struct sim_costs costs;
	sim_costs_from_model(&costs, x.cm);
	/* The rows are formatted and written on a thread of their own, overlapping the run, in
	 * chunks of about 128 KiB: the streams are unbuffered, so each chunk is one write, not a
	 * copy into the stream's buffer and two writes. */
	if (k.req || k.bat)
		k.rows = report_writer_new(k.req, k.bat, true);
	struct sim_hooks hooks = {&k, k.req ? sink_request : NULL, k.bat ? sink_pass : NULL,
				  k.mon ? sink_monitor : NULL, k.bnd ? sink_boundaries : NULL};
	struct sim *s = sim_new(&x.sp, x.w.req, x.w.n, x.b, x.have_bsc ? &x.bsc : NULL, &costs,
				&hooks);
	sim_time_bucketing(s, o.perf);
	double t1 = now_s();
	sim_warmup(s);
	sim_run(s);
	sim_finish(s);
	double t2 = now_s();
	/* The summary (sorting the latencies) while the row writer finishes its last blocks and
	 * writes buckets.csv. */
	if (fbuck)
		report_writer_buckets(k.rows, fbuck, s);
	cJSON *sum = build_summary(&x, s, argc, argv, o.trace);
	if (fsum) {
		char *txt = cJSON_Print(sum);
		fputs(txt, fsum);
		fputc('\n', fsum);
		free(txt);
	}
	report_writer_close(k.rows);
	if (k.mon_rows > k.mon_cap) {
		bs_errf(&err, BS_EXIT_INPUT, x.cc.cfg.file, 0, "monitor.interval_s",
			"the run needed %llu monitor rows, more than the %llu allowed (10^6 + 1000 "
			"per request): raise the interval", (unsigned long long)k.mon_rows,
			(unsigned long long)k.mon_cap);
		config_locate(&x.cc.cfg, &err);
		outset_abort(&os);
		cJSON_Delete(sum);
		sim_free(s);
		rc = cli_fail(&err);
		run_teardown(&x);
		return rc;
	}
	if (outset_commit(&os, &err)) {
		cJSON_Delete(sum);
		sim_free(s);
		rc = cli_fail(&err);
		run_teardown(&x);
		return rc;
	}
	if (o.json) {
		char *txt = cJSON_Print(sum);
		puts(txt);
		free(txt);
	} else if (!o.quiet) {
		report_human(stdout, sum);
	}
	if (o.perf) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		double wall = t2 - t1;
		struct sim_stats st;
		sim_stats(s, &st);
		fprintf(stderr,
			"perf: setup %.3f s, simulate %.3f s, %zu requests, %.0f requests/s, "
			"%lld events, %.0f events/s, %lld passes, peak RSS %ld KiB, %.1f bytes/request\n",
			t1 - t0, wall, st.requests, st.requests / wall, (long long)st.events,
			st.events / wall, (long long)st.passes, ru.ru_maxrss,
			st.requests ? ru.ru_maxrss * 1024.0 / (double)st.requests : 0.0);
		if (x.sp.grouped)
			fprintf(stderr, "perf: bucketing overhead %.6f s in grouping/ordering code, "
				"%.3f%% of the simulation's wall time\n", st.bucketing_wall_s,
				100 * st.bucketing_wall_s / wall);
	}
	cJSON_Delete(sum);
	sim_free(s);
	run_teardown(&x);
	return 0;
fail:
	outset_abort(&os);
	rc = cli_fail(&err);
	run_teardown(&x);
	return rc;
}

const struct cli_cmd cmd_run = {
	"run",
	"bucketsim run [--trace FILE|NAME] [-c CONFIG.json] [--set KEY=VALUE ...] [--seed N] [-o DIR]",
	"replay a trace through one simulated server and report what happened",
	"Replays the requests of a trace (or a generated workload) through one simulated vLLM V1\n"
	"server on Gaudi: continuous batching within the token budget, chunked prefill, a paged\n"
	"KV cache with preemption, every forward pass padded to its bucket and charged by the\n"
	"cost model, graph compiles at warm-up and on shape misses (on an NVIDIA profile,\n"
	"hardware=a100 or h100, vLLM's CUDA-graph semantics instead: server.execution_mode).\n"
	"Prints a readable summary; with -o writes summary.json, requests.csv, batches.csv and\n"
	"buckets.csv, plus monitor.csv when monitor.interval_s > 0 and boundaries.csv with\n"
	"adaptive grouping (every file and column: analysis/README.md), atomically: after an\n"
	"error no file is left behind.",
	"  bucketsim run --trace alpaca -o out/alpaca\n"
	"  bucketsim run --trace azure-conv --set bucketing.strategy=linear --seed 7 -o out/lin\n"
	"  bucketsim run -c exp.json --trace my.csv --env VLLM_BUCKETING_STRATEGY=pad --json\n",
	run_opts, run,
};

static const struct cli_opt validate_opts[] = {
	{"trace", OPT_TRACE, 1, "FILE|NAME", "the trace to check (default: the one run would use)", "Input"},
	CLI_CONFIG_OPTS,
	CLI_HELP_OPT,
	{0},
};

static int validate(const struct cli_cmd *self, int argc, char **argv)
{
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	cli_config_init(&x.cc);
	struct run_opts o = {0};
	struct bs_err err = {0};
	struct cli_state st = {0};
	int c, rc = 0;
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		int r = cli_config_step(&x.cc, c, st.optarg, &rc);
		if (r < 0) {
			cli_config_release(&x.cc);
			return rc;
		}
		if (!r && c == OPT_TRACE)
			o.trace = st.optarg;
	}
	if (st.optind < argc) {
		cli_config_release(&x.cc);
		return cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
	}
	/* Exactly what `run` does, the default trace and the workload included. */
	o.trace = run_default_trace(&x.cc.cfg, o.trace);
	if (run_setup(&x, o.trace, true, &err) || check_monitor_rows(&x, &err) ||
	    run_check_unread(&x, &err)) {
		config_locate(&x.cc.cfg, &err);
		rc = cli_fail(&err);
	} else if (x.cc.print_config) { /* valid: every key as the run would use it */
		run_report_contiguous_pa(&x);
		config_print(&x.cc.cfg, stdout);
	}
	run_teardown(&x);
	return rc;
}

const struct cli_cmd cmd_validate = {
	"validate",
	"bucketsim validate -c CONFIG.json [--set KEY=VALUE ...] [--trace FILE|NAME]",
	"check a configuration (and a trace) without simulating",
	"Loads the configuration as `run` would (every key, the bucket file, the hardware and\n"
	"model profiles, vLLM's own configuration rules, the workload) and the trace (--trace, or\n"
	"the default trace `run` would use); it accepts exactly what `run` accepts.  Silent\n"
	"with exit status 0 when everything is valid, so it can be scripted (apart from one\n"
	"warning per key set but never read by the chosen policies; --strict makes those\n"
	"errors); otherwise one error line naming the file, line and field, and exit status 3\n"
	"(2 for a usage error).  With --print-config a valid configuration is printed, every key\n"
	"with its effective value and origin, as `run --print-config` prints it.",
	"  bucketsim validate -c exp.json\n"
	"  bucketsim validate -c exp.json --trace my_trace.csv\n",
	validate_opts, validate,
};
