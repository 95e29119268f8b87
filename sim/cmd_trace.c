/*
 * cmd_trace: `bucketsim trace synth` (write a generated workload as a CSV trace) and
 * `bucketsim trace stats` (describe a trace).  `trace` dispatches on its first argument; each
 * sub-subcommand has its own option table and --help.
 */
#include <cjson/cJSON.h>
#include <gsl/gsl_histogram.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/cost.h"
#include "sim/commands.h"
#include "policies/bucketing.h"
#include "sim/resolve.h"
#include "sim/run_int.h"
#include "workloads/trace_int.h"
#include "workloads/workload.h"

enum { OPT_RATE = CLI_OPT_FIRST_FREE, OPT_FORMAT };

/* ---- trace synth ---- */

static const struct cli_opt synth_opts[] = {
	{"trace", 't', 1, "NAME|FILE",
	 "base trace: lengths (and timestamps) come from it; default none (generated lengths)",
	 "Workload"},
	{"num-requests", 'n', 1, "N", "requests to write (same as --set workload.num_requests=N)",
	 "Workload"},
	{"rate", OPT_RATE, 1, "R", "arrival rate in requests/s (same as --set workload.rate=R)",
	 "Workload"},
	CLI_CONFIG_OPTS,
	{"output", 'o', 1, "FILE", "write the trace to FILE (required; '-' = standard output); "
	 "written atomically", "Output"},
	{"verbose", 'v', 0, NULL, "report the arrival process, streams and what the length rules "
	 "changed on standard error", "Output"},
	CLI_HELP_OPT,
	{0},
};

static int synth_run(const struct cli_cmd *self, int argc, char **argv);

static const struct cli_cmd cmd_trace_synth = {
	"trace synth", "bucketsim trace synth [--trace NAME|FILE] [config options] -o FILE.csv",
	"write a generated workload as a CSV trace",
	"Builds the workload exactly as 'bucketsim run' would (the same workload.* keys, seed and\n"
	"server.max_model_len rules) and writes it as a CSV trace with the columns\n"
	"arrival_time_s,prompt_tokens,output_tokens,priority,task,prefix_group,prefix_tokens\n"
	"(seconds with 9 decimals, C locale), so it can be inspected, shared and replayed with\n"
	"--trace FILE.  The same options and seed give a byte-identical file.  A workload key set\n"
	"but never read (workload.rate with a trace's own timestamps, ...) warns as for run, an\n"
	"error with --strict.",
	"  bucketsim trace synth --trace alpaca --rate 4 -n 2000 -o alpaca_4rps.csv\n"
	"  bucketsim trace synth --set workload.mix=alpaca:0.8,longbench:0.2 "
	"--set workload.truncate=true --set server.max_model_len=4096 -o mixed.csv\n"
	"  bucketsim trace synth --set workload.lengths=lognormal --set workload.arrival=gamma "
	"--set workload.cv=3 --seed 7 -o bursty.csv\n",
	synth_opts, synth_run,
};

static int write_csv(FILE *f, const struct workload *w)
{
	static const char *const cols[] = {"arrival_time_s", "prompt_tokens", "output_tokens",
					   "priority", "task", "prefix_group", "prefix_tokens"};
	/* Names and values never need quoting, so none is written (csv_fwrite always quotes). */
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
		fprintf(f, "%s%s", i ? "," : "", cols[i]);
	fputc('\n', f);
	for (size_t i = 0; i < w->n; i++) {
		const struct req_spec *q = &w->req[i];
		fprintf(f, "%lld.%09lld,%d,%d,%u,%s,%d,%d\n",
			(long long)(q->arrival_ns / 1000000000), (long long)(q->arrival_ns % 1000000000),
			(int)q->prompt_tokens, (int)q->output_tokens, (unsigned)q->priority,
			q->task == TASK_OFFLINE ? "offline" : "online", (int)q->prefix_group,
			(int)q->prefix_tokens);
	}
	return ferror(f) ? -1 : 0;
}

static void report(const struct workload *w, uint64_t seed)
{
	fprintf(stderr, "bucketsim: %zu requests from %s; lengths %s; arrivals %s\n", w->n,
		w->source, w->lengths, w->arrival);
	fprintf(stderr, "bucketsim: seed %llu; streams:", (unsigned long long)seed);
	for (size_t i = 0; i < w->nstreams; i++)
		fprintf(stderr, " %s=%llu", w->streams[i].name,
			(unsigned long long)w->streams[i].seed);
	fprintf(stderr, "\nbucketsim: prompts truncated %zu, outputs capped %zu, outputs raised "
		"0->1 %zu, outputs eval-capped %zu, prompts raised %zu\n", w->prompts_truncated,
		w->outputs_capped, w->outputs_raised, w->outputs_eval_capped, w->prompts_raised);
}

static int synth_run(const struct cli_cmd *self, int argc, char **argv)
{
	struct cli_config cc;
	struct cli_state st = {0};
	struct bs_err err = {0};
	const char *trace = NULL, *out = NULL;
	bool verbose = false;
	int c, rc = 0;
	cli_config_init(&cc);
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		int k = cli_config_step(&cc, c, st.optarg, &rc);
		if (k < 0) {
			cli_config_release(&cc);
			return rc;
		}
		if (k)
			continue;
		switch (c) {
		case 't':
			trace = st.optarg;
			break;
		case 'n':
			if (config_set(&cc.cfg, "workload.num_requests", st.optarg,
				       CFG_ORIGIN_CMDLINE, NULL, 0, &err))
				goto fail;
			break;
		case OPT_RATE:
			if (config_set(&cc.cfg, "workload.rate", st.optarg, CFG_ORIGIN_CMDLINE, NULL,
				       0, &err))
				goto fail;
			break;
		case 'o':
			out = st.optarg;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			BUG("unhandled option %d", c);
		}
	}
	if (st.optind != argc) {
		cli_config_release(&cc);
		return cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
	}
	struct cost_model *cm = NULL;
	if (sim_resolve_config(&cc.cfg, &cm, &err))
		goto fail;
	cost_model_free(cm);
	/* An --env name bucketsim does not know warns (an error with --strict), as for run. */
	if (env_var_check_names(&cc.cfg, &err))
		goto fail;
	if (cc.print_config) {
		config_print(&cc.cfg, stdout);
		cli_config_release(&cc);
		return 0;
	}
	if (!out || !*out) {
		cli_config_release(&cc);
		return cli_usage(self, "%s -o FILE (use '-o -' for standard output)",
				 out ? "empty" : "missing");
	}
	struct workload w;
	if (workload_build(&cc.cfg, trace, cc.seed, &w, &err))
		goto fail;
	/* Run's check of the workload keys set but never read (a warning each, errors with
	 * --strict); the tasks and priorities are written, whatever policy reads them. */
	if (run_check_unread_workload(&cc.cfg, &w, NULL, &err)) {
		config_locate(&cc.cfg, &err);
		workload_release(&w);
		goto fail;
	}
	if (verbose)
		report(&w, cc.seed);
	struct outset os;
	outset_init(&os);
	FILE *f = outset_open(&os, out, &err);
	if (!f || write_csv(f, &w) || outset_commit(&os, &err)) {
		if (!err.code)
			bs_errf(&err, BS_EXIT_RUNTIME, out, 0, NULL, "write error");
		outset_abort(&os);
		workload_release(&w);
		goto fail;
	}
	workload_release(&w);
	cli_config_release(&cc);
	return rc;
fail:
	cli_config_release(&cc);
	return cli_fail(&err);
}

/* ---- trace stats ---- */

static const struct cli_opt stats_opts[] = {
	{"format", OPT_FORMAT, 1, "FMT", "text (default) or json", "Output"},
	{"output", 'o', 1, "FILE", "write to FILE instead of standard output (atomically)",
	 "Output"},
	CLI_HELP_OPT,
	{0},
};

static int stats_run(const struct cli_cmd *self, int argc, char **argv);

static const struct cli_cmd cmd_trace_stats = {
	"trace stats", "bucketsim trace stats NAME|FILE [--format text|json] [-o FILE]",
	"describe a trace: per-column statistics and a length histogram",
	"Reads a trace (a bundled name or a CSV / JSON Lines file, validated as 'run' would) and\n"
	"prints count, min, p50, mean, p90, p99 and max of prompt_tokens, output_tokens,\n"
	"total_tokens and, when the trace has timestamps, arrival_time_s and inter_arrival_s\n"
	"(percentiles interpolated linearly), then a histogram of prompt and output lengths in\n"
	"power-of-two bins [lo, hi).  Values are as in the file: the max_model_len rules are not\n"
	"applied.",
	"  bucketsim trace stats alpaca\n"
	"  bucketsim trace stats azure-conv --format json\n"
	"  bucketsim trace stats my_trace.csv -o my_trace_stats.txt\n",
	stats_opts, stats_run,
};

struct named_stats {
	const char *name;
	struct col_stats s;
};

static size_t compute(const struct trace *t, struct named_stats *ns)
{
	size_t k = 0, n = t->n;
	double *d = xmalloc((n ? n : 1) * sizeof *d);
	if (t->prompt) {
		for (size_t i = 0; i < n; i++)
			d[i] = t->prompt[i];
		ns[k].name = "prompt_tokens";
		col_stats_compute(d, n, &ns[k++].s);
	}
	for (size_t i = 0; i < n; i++)
		d[i] = t->output[i];
	ns[k].name = "output_tokens";
	col_stats_compute(d, n, &ns[k++].s);
	if (t->prompt) {
		for (size_t i = 0; i < n; i++)
			d[i] = (double)t->prompt[i] + t->output[i];
		ns[k].name = "total_tokens";
		col_stats_compute(d, n, &ns[k++].s);
	}
	if (t->arrival_s) {
		for (size_t i = 0; i < n; i++)
			d[i] = t->arrival_s[i];
		ns[k].name = "arrival_time_s";
		col_stats_compute(d, n, &ns[k++].s);
		for (size_t i = 1; i < n; i++)
			d[i - 1] = t->arrival_s[i] - t->arrival_s[i - 1];
		ns[k].name = "inter_arrival_s";
		col_stats_compute(d, n - 1, &ns[k++].s);
	}
	free(d);
	return k;
}

/* Power-of-two bins [0,1), [1,2), [2,4), ... up past the largest length. */
static gsl_histogram *histogram(const int32_t *v, size_t n, double *edges, size_t nedges)
{
	gsl_histogram *h = gsl_histogram_alloc(nedges - 1);
	if (!h || gsl_histogram_set_ranges(h, edges, nedges))
		BUG("gsl_histogram setup failed");
	for (size_t i = 0; v && i < n; i++)
		gsl_histogram_increment(h, v[i]);
	return h;
}

static void print_text(FILE *f, const struct trace *t, const struct named_stats *ns, size_t k,
		       gsl_histogram *hp, gsl_histogram *ho)
{
	fprintf(f, "trace: %s\nrows: %zu\ntimestamps: %s\n\n", t->name, t->n,
		t->arrival_s ? "yes" : "no");
	fprintf(f, "%-16s %8s %12s %12s %12s %12s %12s %12s\n", "column", "count", "min", "p50",
		"mean", "p90", "p99", "max");
	for (size_t i = 0; i < k; i++) {
		const struct col_stats *s = &ns[i].s;
		if (!s->count) {
			fprintf(f, "%-16s %8zu %12s %12s %12s %12s %12s %12s\n", ns[i].name, s->count,
				"-", "-", "-", "-", "-", "-");
			continue;
		}
		fprintf(f, "%-16s %8zu %12.7g %12.7g %12.7g %12.7g %12.7g %12.7g\n", ns[i].name,
			s->count, s->min, s->p50, s->mean, s->p90, s->p99, s->max);
	}
	fprintf(f, "\nlength histogram (tokens, bins [lo, hi)):\n%10s %10s %14s %14s\n", "lo", "hi",
		"prompt_tokens", "output_tokens");
	for (size_t b = 0; b < gsl_histogram_bins(ho); b++) {
		double lo, hi;
		gsl_histogram_get_range(ho, b, &lo, &hi);
		fprintf(f, "%10.0f %10.0f %14.0f %14.0f\n", lo, hi,
			t->prompt ? gsl_histogram_get(hp, b) : 0.0, gsl_histogram_get(ho, b));
	}
}

static cJSON *json_doc(const struct trace *t, const struct named_stats *ns, size_t k,
		       gsl_histogram *hp, gsl_histogram *ho)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "trace", t->name);
	cJSON_AddNumberToObject(root, "rows", (double)t->n);
	cJSON_AddBoolToObject(root, "has_timestamps", t->arrival_s != NULL);
	cJSON *cols = cJSON_AddObjectToObject(root, "columns");
	for (size_t i = 0; i < k; i++) {
		const struct col_stats *s = &ns[i].s;
		cJSON *o = cJSON_AddObjectToObject(cols, ns[i].name);
		cJSON_AddNumberToObject(o, "count", (double)s->count);
		cJSON_AddNumberToObject(o, "min", s->min);
		cJSON_AddNumberToObject(o, "p50", s->p50);
		cJSON_AddNumberToObject(o, "mean", s->mean);
		cJSON_AddNumberToObject(o, "p90", s->p90);
		cJSON_AddNumberToObject(o, "p99", s->p99);
		cJSON_AddNumberToObject(o, "max", s->max);
	}
	cJSON *h = cJSON_AddObjectToObject(root, "histogram");
	size_t nb = gsl_histogram_bins(ho);
	cJSON *edges = cJSON_AddArrayToObject(h, "edges");
	cJSON *pc = t->prompt ? cJSON_AddArrayToObject(h, "prompt_tokens") : NULL;
	cJSON *oc = cJSON_AddArrayToObject(h, "output_tokens");
	for (size_t b = 0; b <= nb; b++) {
		double lo, hi;
		gsl_histogram_get_range(ho, b < nb ? b : nb - 1, &lo, &hi);
		cJSON_AddItemToArray(edges, cJSON_CreateNumber(b < nb ? lo : hi));
	}
	for (size_t b = 0; b < nb; b++) {
		if (pc)
			cJSON_AddItemToArray(pc, cJSON_CreateNumber(gsl_histogram_get(hp, b)));
		cJSON_AddItemToArray(oc, cJSON_CreateNumber(gsl_histogram_get(ho, b)));
	}
	return root;
}

static int stats_run(const struct cli_cmd *self, int argc, char **argv)
{
	struct cli_state st = {0};
	struct bs_err err = {0};
	const char *out = "-";
	bool json = false;
	const char *spec = NULL;
	int c, npos = 0;
	/* Options may come before or after the trace argument. */
	while ((c = cli_next(self, argc, argv, &st)) != -1 || st.optind < argc) {
		if (c == -1) {
			spec = argv[st.optind++];
			npos++;
			continue;
		}
		if (c == -3)
			return 0;
		if (c == -2)
			return BS_EXIT_USAGE;
		if (c == 'o') {
			out = st.optarg;
		} else if (c == OPT_FORMAT) {
			if (!strcmp(st.optarg, "json"))
				json = true;
			else if (strcmp(st.optarg, "text"))
				return cli_usage(self, "unknown format '%s' (text, json)", st.optarg);
		}
	}
	if (npos != 1)
		return cli_usage(self, "trace stats takes one trace (a bundled name or a file)");
	struct trace t;
	if (trace_load(spec, false, true, &t, &err))
		return cli_fail(&err);
	struct named_stats ns[8];
	size_t k = compute(&t, ns);
	int32_t maxlen = 0;
	for (size_t i = 0; i < t.n; i++) {
		if (t.prompt && t.prompt[i] > maxlen)
			maxlen = t.prompt[i];
		if (t.output[i] > maxlen)
			maxlen = t.output[i];
	}
	double edges[40];
	size_t ne = 0;
	edges[ne++] = 0;
	for (double e = 1; ; e *= 2) {
		edges[ne++] = e;
		if (e > maxlen)
			break;
	}
	gsl_histogram *hp = histogram(t.prompt, t.n, edges, ne);
	gsl_histogram *ho = histogram(t.output, t.n, edges, ne);
	struct outset os;
	outset_init(&os);
	FILE *f = outset_open(&os, out, &err);
	int rc = 0;
	if (f) {
		if (json) {
			cJSON *doc = json_doc(&t, ns, k, hp, ho);
			char *s = cJSON_Print(doc);
			fprintf(f, "%s\n", s);
			cJSON_free(s);
			cJSON_Delete(doc);
		} else {
			print_text(f, &t, ns, k, hp, ho);
		}
		rc = outset_commit(&os, &err);
	} else {
		rc = -1;
	}
	gsl_histogram_free(hp);
	gsl_histogram_free(ho);
	trace_release(&t);
	return rc ? cli_fail(&err) : 0;
}

/* ---- trace ---- */

static int run(const struct cli_cmd *self, int argc, char **argv)
{
	if (argc < 2)
		return cli_usage(self, "trace needs a subcommand: synth or stats");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		cli_help(self, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "synth"))
		return synth_run(&cmd_trace_synth, argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return stats_run(&cmd_trace_stats, argc - 1, argv + 1);
	return cli_usage(self, "unknown trace subcommand '%s' (synth, stats)", argv[1]);
}

static const struct cli_opt opts[] = {CLI_HELP_OPT, {0}};

const struct cli_cmd cmd_trace = {
	"trace", "bucketsim trace synth|stats [options]",
	"synthesize a trace (synth) or describe one (stats)",
	"Works with request traces.  'trace synth' writes the workload that the workload.* keys\n"
	"describe (generated, resampled or mixed from bundled traces) as a CSV trace; 'trace stats'\n"
	"prints length and arrival statistics of a trace.  See 'bucketsim trace synth --help' and\n"
	"'bucketsim trace stats --help'.",
	"  bucketsim trace synth --trace alpaca --rate 4 -o alpaca_4rps.csv\n"
	"  bucketsim trace stats longbench\n",
	opts, run,
};
