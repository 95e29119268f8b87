/*
 * cmd_sweep: `bucketsim sweep`, a grid of configurations and seeds run one after another in
 * this process, one CSV row per run, in grid order (the first --grid varies slowest, seeds
 * fastest), whatever happens: the output does not depend on timing.
 *
 * Each run starts from a fresh configuration: the shared options (-c, --preset, --set, --env)
 * re-applied in the order given, then the grid point's values with the command line's origin,
 * then the seed.
 */
#include <cjson/cJSON.h>
#include <csv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/commands.h"
#include "sim/run_int.h"

enum {
	OPT_TRACE = 't',
	OPT_OUT = 'o',
	OPT_GRID = 'g',
	OPT_SEEDS = CLI_OPT_FIRST_FREE,
	OPT_METRICS,
	OPT_PROGRESS,
};

static const struct cli_opt opts[] = {
	{"trace", OPT_TRACE, 1, "FILE|NAME", "trace path or bundled name (as for run)", "Input"},
	CLI_CONFIG_OPTS,
	{"grid", OPT_GRID, 1, "KEY=V1,V2,...",
	 "a config key and its values; repeatable: the runs are the product, the first --grid "
	 "varying slowest", "Sweep"},
	{"seeds", OPT_SEEDS, 1, "N",
	 "replications: seeds S, S+1, ..., S+N-1 with S from --seed (default 1 replication)",
	 "Sweep"},
	{"metrics", OPT_METRICS, 1, "LIST",
	 "comma-separated summary metrics to write (default: a standard set; see README)",
	 "Output"},
	{"output", OPT_OUT, 1, "FILE", "write the CSV to FILE (atomically; default stdout)",
	 "Output"},
	{"progress", OPT_PROGRESS, 0, NULL, "print one line per run to stderr", "Output"},
	CLI_HELP_OPT,
	{0},
};

static const char *const default_metrics[] = {
	"completed", "request_throughput", "output_throughput", "total_token_throughput",
	"mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "mean_e2el_ms",
	"slo_attainment", "padding_waste_ratio", "compiles_warmup", "compiles_runtime",
	"preemptions", "utilization", "simulated_s", NULL};

struct saved_opt {
	int key;
	const char *arg;
};

struct grid {
	char *key;
	char **vals;
	size_t n;
};

static void grid_free(struct grid *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < g[i].n; k++)
			free(g[i].vals[k]);
		free(g[i].vals);
		free(g[i].key);
	}
	free(g);
}

/* Splits "a,b,c" into owned strings. */
static char **split(const char *s, size_t *n)
{
	char **v = NULL;
	*n = 0;
	const char *p = s;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		v = xrealloc(v, (*n + 1) * sizeof *v);
		v[*n] = xmalloc(len + 1);
		memcpy(v[*n], p, len);
		v[*n][len] = 0;
		(*n)++;
		if (!c)
			break;
		p = c + 1;
	}
	return v;
}

static void csv_field(FILE *f, const char *s, bool first)
{
	if (!first)
		fputc(',', f);
	/* Quote only what needs it (values with a comma, quote or newline). */
	if (strpbrk(s, ",\"\n\r"))
		csv_fwrite(f, s, strlen(s));
	else
		fputs(s, f);
}

static void metric_text(const cJSON *m, const char *k, char *buf, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, k);
	if (cJSON_IsRaw(v))
		snprintf(buf, n, "%s", v->valuestring);
	else if (cJSON_IsNumber(v))
		snprintf(buf, n, "%.9g", v->valuedouble);
	else
		buf[0] = 0; /* null (an empty sample) */
}

/* One run: a fresh config from the saved options and the grid point. */
static int run_point(const struct saved_opt *so, size_t nso, const struct grid *g, size_t ng,
		     const size_t *idx, uint64_t seed, const char *trace_arg, cJSON **metrics,
		     struct bs_err *err)
{
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	cli_config_init(&x.cc);
	int rc = 0;
	for (size_t i = 0; i < nso && !rc; i++)
		rc = cli_config_opt(&x.cc, so[i].key, so[i].arg, err) < 0 ? -1 : 0;
	for (size_t i = 0; i < ng && !rc; i++)
		rc = config_set(&x.cc.cfg, g[i].key, g[i].vals[idx[i]], CFG_ORIGIN_CMDLINE, NULL, 0,
				err);
	x.cc.seed = seed;
	const char *trace = rc ? NULL : run_default_trace(&x.cc.cfg, trace_arg);
	if (!rc)
		rc = run_setup(&x, trace, true, err);
	if (!rc) {
		struct sim_costs costs;
		sim_costs_from_model(&costs, x.cm);
		struct sim *s = sim_new(&x.sp, x.w.req, x.w.n, x.b, x.have_bsc ? &x.bsc : NULL,
					&costs, NULL);
		sim_warmup(s);
		sim_run(s);
		sim_finish(s);
		*metrics = run_metrics_json(&x, s);
		sim_free(s);
	}
	run_teardown(&x);
	return rc;
}

static int sweep(const struct cli_cmd *self, int argc, char **argv)
{
	struct saved_opt *so = xmalloc((size_t)argc * sizeof *so);
	size_t nso = 0, ng = 0, nm = 0;
	struct grid *g = NULL;
	const char *trace = NULL, *out = NULL, *mlist = NULL;
	int64_t seeds = 1;
	bool progress = false;
	struct cli_config probe;
	cli_config_init(&probe);
	struct bs_err err = {0};
	struct cli_state st = {0};
	int c, rc = 0;
	char **metrics = NULL;
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		if (c == -2 || c == -3) {
			rc = c == -2 ? BS_EXIT_USAGE : 0;
			goto done;
		}
		/* Shared options are checked now (a bad key fails before any run) and replayed
		 * for every run. */
		int r = cli_config_opt(&probe, c, st.optarg, &err);
		if (r < 0) {
			rc = cli_fail(&err);
			goto done;
		}
		if (r) {
			if (c == CLI_OPT_PRINT_CONFIG) {
				rc = cli_usage(self, "--print-config is for run; sweep prints its grid");
				goto done;
			}
			so[nso++] = (struct saved_opt){c, st.optarg};
			continue;
		}
		char why[256];
		switch (c) {
		case OPT_TRACE:
			trace = st.optarg;
			break;
		case OPT_OUT:
			out = st.optarg;
			break;
		case OPT_METRICS:
			mlist = st.optarg;
			break;
		case OPT_PROGRESS:
			progress = true;
			break;
		case OPT_SEEDS:
			if (parse_i64(st.optarg, 1, 1000000, &seeds, why, sizeof why)) {
				rc = cli_usage(self, "--seeds: %s", why);
				goto done;
			}
			break;
		case OPT_GRID: {
			const char *eq = strchr(st.optarg, '=');
			if (!eq || eq == st.optarg || !eq[1]) {
				rc = cli_usage(self, "--grid takes KEY=V1,V2,..., got '%s'", st.optarg);
				goto done;
			}
			g = xrealloc(g, (ng + 1) * sizeof *g);
			g[ng].key = xstrdup(st.optarg);
			g[ng].key[eq - st.optarg] = 0;
			g[ng].vals = split(eq + 1, &g[ng].n);
			ng++;
			/* Every value must be valid for its key before anything runs. */
			for (size_t k = 0; k < g[ng - 1].n; k++)
				if (config_set(&probe.cfg, g[ng - 1].key, g[ng - 1].vals[k],
					       CFG_ORIGIN_CMDLINE, NULL, 0, &err)) {
					rc = cli_fail(&err);
					goto done;
				}
			break;
		}
		default:
			rc = cli_usage(self, "unexpected option");
			goto done;
		}
	}
	if (st.optind < argc) {
		rc = cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
		goto done;
	}
	if (mlist) {
		metrics = split(mlist, &nm);
	} else {
		while (default_metrics[nm])
			nm++;
		metrics = xmalloc(nm * sizeof *metrics);
		for (size_t i = 0; i < nm; i++)
			metrics[i] = xstrdup(default_metrics[i]);
	}

	struct outset os;
	outset_init(&os);
	FILE *f = outset_open(&os, out ? out : "-", &err);
	if (!f) {
		rc = cli_fail(&err);
		goto done;
	}
	size_t *idx = xcalloc(ng ? ng : 1, sizeof *idx);
	size_t run_no = 0;
	for (bool more = true; more;) {
		for (int64_t r = 0; r < seeds; r++) {
			uint64_t seed = probe.seed + (uint64_t)r;
			cJSON *m = NULL;
			if (run_point(so, nso, g, ng, idx, seed, trace, &m, &err)) {
				outset_abort(&os);
				free(idx);
				fprintf(stderr, "bucketsim: error: in run %zu of the sweep:\n", run_no + 1);
				rc = cli_fail(&err);
				goto done;
			}
			for (size_t i = 0; i < nm; i++)
				if (!cJSON_GetObjectItemCaseSensitive(m, metrics[i])) {
					outset_abort(&os);
					free(idx);
					cJSON_Delete(m);
					rc = cli_usage(self, "unknown metric '%s' (see the README's "
							     "summary.json table)", metrics[i]);
					goto done;
				}
			if (run_no == 0) {
				/* The header, once the metric names are known to exist. */
				for (size_t i = 0; i < ng; i++)
					csv_field(f, g[i].key, i == 0);
				csv_field(f, "seed", ng == 0);
				for (size_t i = 0; i < nm; i++)
					csv_field(f, metrics[i], false);
				fputc('\n', f);
			}
			for (size_t i = 0; i < ng; i++)
				csv_field(f, g[i].vals[idx[i]], i == 0);
			char buf[64];
			snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
			csv_field(f, buf, ng == 0);
			for (size_t i = 0; i < nm; i++) {
				metric_text(m, metrics[i], buf, sizeof buf);
				csv_field(f, buf, false);
			}
			fputc('\n', f);
			cJSON_Delete(m);
			run_no++;
			if (progress)
				fprintf(stderr, "sweep: run %zu done\n", run_no);
		}
		/* Next grid point: the last --grid varies fastest. */
		more = false;
		for (size_t i = ng; i-- > 0;) {
			if (++idx[i] < g[i].n) {
				more = true;
				break;
			}
			idx[i] = 0;
		}
	}
	free(idx);
	if (outset_commit(&os, &err))
		rc = cli_fail(&err);
done:
	if (metrics)
		for (size_t i = 0; i < nm; i++)
			free(metrics[i]);
	free(metrics);
	grid_free(g, ng);
	free(so);
	cli_config_release(&probe);
	return rc;
}

const struct cli_cmd cmd_sweep = {
	"sweep",
	"bucketsim sweep [--trace T] [config options] --grid KEY=V1,V2,... [--grid ...] "
	"[--seeds N] [-o FILE.csv]",
	"run a grid of configurations and seeds, one CSV row per run",
	"Runs every combination of the --grid values (the first --grid varies slowest) for each\n"
	"of --seeds replications (seeds --seed, --seed+1, ...), one after another, and writes one\n"
	"CSV row per run: the grid keys, the seed, then the chosen summary metrics (names and\n"
	"units as in summary.json).  Rows come in grid order; the same command gives the same\n"
	"bytes.  Every value is checked before the first run; a failing run stops the sweep with\n"
	"its error and nothing is written.",
	"  bucketsim sweep --trace alpaca --grid bucketing.strategy=exponential,linear,none\n"
	"  bucketsim sweep --grid workload.rate=5,10,20,40 --grid server.max_num_seqs=64,256 \\\n"
	"      --seeds 3 -o rate.csv\n"
	"  bucketsim sweep --preset bucketserve --grid scheduler.theta=0.3,0.5,0.7 \\\n"
	"      --metrics slo_attainment,bucket_splits\n",
	opts, sweep,
};
