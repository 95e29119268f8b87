/*
 * cmd_capacity: `bucketsim capacity`, the highest Poisson arrival rate at which each system
 * keeps its SLO attainment at or above a target (sim/capacity.h), on one workload.
 *
 * A system is a preset name or a config file (--system, repeatable) applied over the shared
 * configuration options: a key both set takes the system's value (layer_under()).  Every probe is one in-process simulation of the configuration with
 * workload.arrival=poisson and workload.rate set; the same seed at every rate of one search
 * (common random numbers).  --seeds K repeats the search with seeds S..S+K-1 and reports the
 * mean capacity with a 95 % Student-t interval.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "policies/presets.h"
#include "sim/capacity.h"
#include "sim/csv_cell.h"
#include "sim/commands.h"
#include "sim/run_int.h"

enum {
	OPT_TRACE = 't',
	OPT_OUT = 'o',
	OPT_SYSTEM = CLI_OPT_FIRST_FREE,
	OPT_TARGET,
	OPT_SEEDS,
	OPT_RATE,
	OPT_RATE_MAX,
	OPT_TOL,
	OPT_JSON,
};

static const struct cli_opt opts[] = {
	{"trace", OPT_TRACE, 1, "FILE|NAME", "trace whose lengths are replayed (as for run)",
	 "Input"},
	CLI_CONFIG_OPTS,
	{"system", OPT_SYSTEM, 1 | CLI_REPEAT, "PRESET|FILE.json",
	 "a system to measure: a preset name or a config file, applied over the shared options "
	 "(a key both set takes the system's value); repeatable (default: the shared options "
	 "alone)", "Capacity"},
	{"target", OPT_TARGET, 1, "A", "SLO attainment to keep, in (0, 1] (default 0.9)",
	 "Capacity"},
	{"seeds", OPT_SEEDS, 1, "K", "searches with seeds S..S+K-1 (default 1)", "Capacity"},
	{"rate", OPT_RATE, 1, "R", "first probe, requests/s (default 1)", "Capacity"},
	{"rate-max", OPT_RATE_MAX, 1, "R", "give up above this rate, requests/s (default 1e6)",
	 "Capacity"},
	{"tol", OPT_TOL, 1, "F",
	 "stop when the bracket is narrower than F times its upper end (default 0.01)",
	 "Capacity"},
	{"output", OPT_OUT, 1, "DIR", "write capacity.json and capacity_curve.csv into DIR",
	 "Output"},
	{"json", OPT_JSON, 0, NULL, "print capacity.json to stdout instead of the table",
	 "Output"},
	CLI_HELP_OPT,
	{0},
};

struct saved_opt {
	int key;
	const char *arg;
};

struct probe_ctx {
	const struct saved_opt *so;
	size_t nso;
	const char *system;   /* preset name, config path, or NULL */
	const char *trace;
	uint64_t seed;
	int64_t num_requests; /* > 0: workload.num_requests for the probe (the request-count check) */
};

/* A --system naming a file (a '/' in it or a .json ending, as hardware and model files are
 * told from names); anything else is a preset's name. */
static bool is_config_file(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json"));
}

/* Copies into DST every key and --env variable that SRC's options set and DST's do not, with
 * its origin: SRC's settings under DST's. */
static void layer_under(struct config *dst, const struct config *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct cfg_entry *e = &src->e[i];
		const struct cfg_entry *d = config_find(dst, e->def->key);
		if (!e->text || e->origin == CFG_ORIGIN_DEFAULT || d->origin != CFG_ORIGIN_DEFAULT)
			continue;
		struct bs_err err = {0};
		if (config_set(dst, e->def->key, e->text, e->origin,
			       e->origin == CFG_ORIGIN_FILE ? src->file : NULL, e->line, &err))
			BUG("layering '%s': %s", e->def->key, err.msg);
	}
	for (size_t i = 0; i < src->nenv; i++) {
		if (config_env(dst, src->env[i].name))
			continue;
		char *arg = xasprintf("%s=%s", src->env[i].name, src->env[i].value);
		struct bs_err err = {0};
		if (config_set_env_arg(dst, arg, src->env[i].origin, &err))
			BUG("layering --env %s: %s", arg, err.msg);
		free(arg);
	}
	if (!dst->file && src->file)
		dst->file = xstrdup(src->file);
}

/* A key of the search's that the configuration must leave alone: an error naming KEY, where it
 * was set (exit 2 on the command line, 3 in a file or preset). */
static int refused(const struct config *c, const char *key, struct bs_err *err, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));
static int refused(const struct config *c, const char *key, struct bs_err *err, const char *fmt,
		   ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	bool cmdline = config_find(c, key)->origin == CFG_ORIGIN_CMDLINE;
	bs_errf(err, cmdline ? BS_EXIT_USAGE : BS_EXIT_INPUT, cmdline ? NULL : c->file, 0, key,
		"%s", why);
	config_locate(c, err);
	return -1;
}

/* A fresh configuration of one system at RATE (RATE <= 0: the configuration alone): the system
 * (a config file or preset) over the shared options, so a key both set is the system's. */
static int build(const struct probe_ctx *p, double rate, struct run_ctx *x, const char **trace,
		 bool load, struct bs_err *err)
{
	memset(x, 0, sizeof *x);
	cli_config_init(&x->cc);
	struct cli_config shared;
	cli_config_init(&shared);
	int rc = 0;
	for (size_t i = 0; i < p->nso && !rc; i++)
		rc = cli_config_opt(&shared, p->so[i].key, p->so[i].arg, err) < 0 ? -1 : 0;
	if (!rc && p->system)
		rc = is_config_file(p->system) ? config_load_json(&x->cc.cfg, p->system, err)
					       : preset_apply(&x->cc.cfg, p->system, err);
	if (!rc)
		layer_under(&x->cc.cfg, &shared.cfg);
	cli_config_release(&shared);
	const struct config *c = &x->cc.cfg;
	const char *arr = config_str(c, "workload.arrival");
	if (!rc && arr && strcmp(arr, "auto") && strcmp(arr, "poisson"))
		rc = refused(c, "workload.arrival", err,
			     "capacity varies the rate of Poisson arrivals; '%s' is not poisson",
			     arr);
	if (!rc && config_find(c, "workload.rate")->origin != CFG_ORIGIN_DEFAULT)
		rc = refused(c, "workload.rate", err,
			     "capacity chooses the rate; give the first probe with --rate");
	if (!rc && config_is_set(c, "workload.concurrency"))
		rc = refused(c, "workload.concurrency", err,
			     "a closed-loop client keeps at most %lld requests in flight whatever "
			     "the arrival rate; capacity varies the rate of open-loop Poisson "
			     "arrivals (leave workload.concurrency unset)",
			     (long long)config_int(c, "workload.concurrency"));
	if (!rc)
		rc = config_set(&x->cc.cfg, "workload.arrival", "poisson", CFG_ORIGIN_CMDLINE, NULL,
				0, err);
	if (!rc && p->num_requests > 0) {
		char buf[32];
		snprintf(buf, sizeof buf, "%lld", (long long)p->num_requests);
		rc = config_set(&x->cc.cfg, "workload.num_requests", buf, CFG_ORIGIN_CMDLINE, NULL,
				0, err);
	}
	if (!rc && rate > 0) {
		char buf[64];
		snprintf(buf, sizeof buf, "%.17g", rate);
		rc = config_set(&x->cc.cfg, "workload.rate", buf, CFG_ORIGIN_CMDLINE, NULL, 0, err);
	}
	x->cc.seed = p->seed;
	*trace = rc ? NULL : run_default_trace(&x->cc.cfg, p->trace);
	if (!rc)
		rc = run_setup(x, *trace, load, err);
	return rc;
}

static int attainment(void *ctx, double rate, double *a, struct bs_err *err)
{
	const struct probe_ctx *p = ctx;
	struct run_ctx x;
	const char *trace;
	int rc = build(p, rate, &x, &trace, true, err);
	if (!rc) {
		struct sim_costs costs;
		sim_costs_from_model(&costs, x.cm);
		struct sim *s = sim_new(&x.sp, x.w.req, x.w.n, x.b, x.have_bsc ? &x.bsc : NULL,
					&costs, NULL);
		sim_warmup(s);
		sim_run(s);
		sim_finish(s);
		*a = metrics_slo_attainment(sim_metrics(s));
		sim_free(s);
	}
	run_teardown(&x);
	return rc;
}

/* Low load, for the attainment ceiling: the capacity found divided by this (the same requests
 * and seed arriving this many times slower). */
#define LOW_LOAD_DIVISOR 16
/* The request-count check's tolerance: the capacity with twice the requests must stay within
 * [lo (1 - MOVE_TOL), hi (1 + MOVE_TOL)] of the bracket found. */
#define MOVE_TOL 0.05

/* The checks of one search's result R (seed P->seed, N requests), recorded in O's "checks" and
 * warned about on stderr (sim/README.md, "capacity"):
 *  - the low-load ceiling: the attainment at R->lo / LOW_LOAD_DIVISOR; when the requests
 *    failing there are a third or more of the failures the target allows (ceiling - target
 *    <= 2/3 (1 - target): target 0.8 warns at a ceiling of 0.933 and below, 0.9 at 0.967),
 *    the capacity measures requests that fail unloaded more than the load;
 *  - the request count: with 2N requests, a probe at lo (1 - MOVE_TOL) and one at
 *    hi (1 + MOVE_TOL); the capacity moves (by more than MOVE_TOL) when the first then misses
 *    the target or the second meets it.  Two probes, where a second search would take a
 *    dozen. */
static int check_result(const struct cap_opts *co, const struct probe_ctx *p0,
			const struct cap_result *r, int64_t n, cJSON *o, const char *name,
			struct bs_err *err)
{
	struct probe_ctx p = *p0;
	double low = r->lo / LOW_LOAD_DIVISOR, ceiling, a_lo = NAN, a_hi = NAN;
	if (attainment(&p, low, &ceiling, err))
		return -1;
	/* workload.num_requests' largest value (workloads/workload_cfg.c) */
	bool doubled = n <= 50000000;
	p.num_requests = 2 * n;
	double r_lo = r->lo * (1 - MOVE_TOL), r_hi = r->hi * (1 + MOVE_TOL);
	if (doubled && (attainment(&p, r_lo, &a_lo, err) || attainment(&p, r_hi, &a_hi, err)))
		return -1;
	cJSON *c = cJSON_AddObjectToObject(o, "checks");
	json_add_num(c, "low_load_rate_req_s", low);
	json_add_num(c, "low_load_attainment", ceiling);
	bool near = ceiling - co->target <= 2 * (1 - co->target) / 3 + 1e-12;
	cJSON_AddBoolToObject(c, "ceiling_near_target", near);
	json_add_int(c, "requests", n);
	bool moves = doubled && (a_lo < co->target || a_hi >= co->target);
	if (doubled) {
		json_add_int(c, "doubled_requests", 2 * n);
		json_add_num(c, "doubled_lo_rate_req_s", r_lo);
		json_add_num(c, "doubled_lo_attainment", a_lo);
		json_add_num(c, "doubled_hi_rate_req_s", r_hi);
		json_add_num(c, "doubled_hi_attainment", a_hi);
		cJSON_AddBoolToObject(c, "moves_with_requests", moves);
	} else {
		bs_warn("system %s: %lld requests: not checked at twice as many (more than "
			"workload.num_requests allows)", name, (long long)n);
	}
	if (near)
		bs_warn("system %s: SLO attainment at low load (%.4g requests/s, 1/%d of the "
			"capacity) is already %.4g: a third or more of the failures --target %g allows happen "
			"unloaded, so "
			"the capacity measures those requests more than the load (loosen the SLO or "
			"lower --target)", name, low, LOW_LOAD_DIVISOR, ceiling,
			co->target);
	if (moves)
		bs_warn("system %s: the capacity moves by more than %g%% when the request count "
			"doubles: with %lld requests, attainment %.4g at %.4g requests/s and %.4g at "
			"%.4g (target %g); give the search more requests (workload.num_requests)",
			name, MOVE_TOL * 100, (long long)(2 * n), a_lo, r_lo, a_hi, r_hi,
			co->target);
	return 0;
}

static double parse_num(const struct cli_cmd *self, const char *name, const char *s, double min,
			double max, int *rc)
{
	double v;
	char why[256];
	if (parse_f64(s, min, max, &v, why, sizeof why)) {
		*rc = cli_usage(self, "--%s: %s", name, why);
		return NAN;
	}
	return v;
}

static const char *system_name(const char *sys)
{
	if (!sys)
		return "config";
	const char *b = strrchr(sys, '/');
	return b ? b + 1 : sys;
}

/* Every file `capacity -o DIR` writes: one set, committed as run -o's (sim/outset.h). */
static const char *const capacity_outputs[] = {"capacity.json", "capacity_curve.csv", NULL};

static int capacity(const struct cli_cmd *self, int argc, char **argv)
{
	struct saved_opt *so = xmalloc((size_t)argc * sizeof *so);
	const char **sys = xmalloc((size_t)(argc + 1) * sizeof *sys);
	size_t nso = 0, nsys = 0;
	const char *trace = NULL, *out = NULL;
	bool json = false;
	int64_t seeds = 1;
	struct cap_opts co = {0.9, 1, 0.01, 1e-6, 1e6};
	struct cli_config probe;
	cli_config_init(&probe);
	struct bs_err err = {0};
	struct cli_state st = {0};
	int c, rc = 0;
	cJSON *root = NULL, **cfgs = NULL;
	int64_t *cards = NULL, *nreq = NULL;
	char *csv = NULL;
	struct outset os;
	outset_init(&os);
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		int r = cli_config_step(&probe, c, st.optarg, &rc);
		if (r < 0)
			goto done;
		if (r) {
			if (c == CLI_OPT_PRINT_CONFIG) {
				rc = cli_usage(self, "--print-config is for run");
				goto done;
			}
			if (c != CLI_OPT_SEED)
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
		case OPT_JSON:
			json = true;
			break;
		case OPT_SYSTEM:
			sys[nsys++] = st.optarg;
			break;
		case OPT_TARGET:
			co.target = parse_num(self, "target", st.optarg, 1e-9, 1, &rc);
			break;
		case OPT_RATE:
			co.rate0 = parse_num(self, "rate", st.optarg, 1e-6, 1e9, &rc);
			break;
		case OPT_RATE_MAX:
			co.rate_max = parse_num(self, "rate-max", st.optarg, 1e-6, 1e9, &rc);
			break;
		case OPT_TOL:
			co.rel_tol = parse_num(self, "tol", st.optarg, 1e-9, 0.5, &rc);
			break;
		case OPT_SEEDS:
			if (parse_i64(st.optarg, 1, 10000, &seeds, why, sizeof why))
				rc = cli_usage(self, "--seeds: %s", why);
			break;
		default:
			rc = cli_usage(self, "unexpected option");
		}
		if (rc)
			goto done;
	}
	if (st.optind < argc) {
		rc = cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
		goto done;
	}
	if (co.rate0 > co.rate_max) {
		rc = cli_usage(self, "--rate %g is above --rate-max %g", co.rate0, co.rate_max);
		goto done;
	}
	for (size_t i = 0; i < nso; i++)
		for (size_t k = 0; k < nsys; k++)
			if (so[i].key == CLI_OPT_PRESET && !is_config_file(sys[k])) {
				rc = cli_usage(self, "--system %s is a preset: a shared --preset does "
						     "not apply (presets do not stack)", sys[k]);
				goto done;
			}
	if (!nsys)
		sys[nsys++] = NULL;
	/* Every system's configuration is checked before the first probe, as a probe at the
	 * first rate builds it, with run's check of the keys set but never read (once per
	 * system, not per probe), and recorded (the rate is the search's). */
	cfgs = xcalloc(nsys, sizeof *cfgs);
	cards = xcalloc(nsys, sizeof *cards);
	nreq = xcalloc(nsys, sizeof *nreq);
	for (size_t i = 0; i < nsys; i++) {
		struct probe_ctx p = {so, nso, sys[i], trace, probe.seed, 0};
		struct run_ctx x;
		const char *t;
		int r = build(&p, co.rate0, &x, &t, true, &err);
		if (!r)
			r = run_check_unread(&x, &err);
		if (!r) {
			cards[i] = cluster_cards(&x.cc.cfg);
			nreq[i] = (int64_t)x.w.n;
			cfgs[i] = config_to_json(&x.cc.cfg);
			cJSON_ReplaceItemInObjectCaseSensitive(cfgs[i], "workload.rate",
							       cJSON_CreateNull());
		} else {
			config_locate(&x.cc.cfg, &err);
			/* Named unless the error already names the system's own file. */
			if (sys[i] && strcmp(err.file, sys[i])) {
				char *m = xasprintf("system %s: %s", system_name(sys[i]), err.msg);
				snprintf(err.msg, sizeof err.msg, "%s", m);
				free(m);
			}
		}
		run_teardown(&x);
		if (r) {
			rc = cli_fail(&err);
			goto done;
		}
	}
	/* Capacities on different numbers of cards are not comparable (README, "How to compare
	 * systems fairly"). */
	for (size_t i = 1; i < nsys; i++)
		if (cards[i] != cards[0]) {
			char list[512];
			size_t n = 0;
			for (size_t k = 0; k < nsys && n < sizeof list; k++)
				n += (size_t)snprintf(list + n, sizeof list - n, "%s%s %lld",
						      k ? ", " : "", system_name(sys[k]),
						      (long long)cards[k]);
			bs_warn("the systems run on different numbers of cards (%s): their capacities "
				"are not comparable; give them equal cards with --set cluster.cards=N",
				list);
			break;
		}
	/* The output directory is made ready before the search (an -o that cannot be written
	 * fails now, not after it); its two files are one set, as run -o's. */
	if (out && outset_init_dir(&os, out, capacity_outputs, &err)) {
		rc = cli_fail(&err);
		goto done;
	}
	root = cJSON_CreateObject();
	json_add_num(root, "target", co.target);
	json_add_num(root, "rel_tol", co.rel_tol);
	json_add_int(root, "seed", (int64_t)probe.seed);
	json_add_int(root, "seeds", seeds);
	cJSON *arr = cJSON_AddArrayToObject(root, "systems");
	size_t clen = 0;
	FILE *cf = open_memstream(&csv, &clen);
	fputs("system,seed,rate,slo_attainment,meets_target\n", cf);
	double *caps = xmalloc((size_t)seeds * sizeof *caps);
	for (size_t i = 0; i < nsys; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "system", system_name(sys[i]));
		json_add_int(o, "cards", cards[i]);
		cJSON *per = cJSON_CreateArray();
		for (int64_t k = 0; k < seeds; k++) {
			struct probe_ctx p = {so, nso, sys[i], trace, probe.seed + (uint64_t)k, 0};
			struct cap_result res;
			/* The search, then (first seed) the doubling check: a failure of either is
			 * named by the system and the step that failed. */
			char *step = NULL;
			if (capacity_search(&co, attainment, &p, &res, &err))
				step = xasprintf("seed %llu", (unsigned long long)p.seed);
			else if (k == 0 && check_result(&co, &p, &res, nreq[i], o, system_name(sys[i]),
							&err))
				step = xstrdup("checking its capacity");
			if (step) {
				cap_result_release(&res);
				char *m = xasprintf("system %s, %s: %s", system_name(sys[i]), step,
						    err.msg);
				snprintf(err.msg, sizeof err.msg, "%s", m);
				free(m);
				free(step);
				cJSON_Delete(o);
				cJSON_Delete(per);
				fclose(cf);
				free(caps);
				rc = cli_fail(&err);
				goto done;
			}
			caps[k] = res.rate;
			cJSON *q = cJSON_CreateObject();
			json_add_int(q, "seed", (int64_t)p.seed);
			json_add_num(q, "capacity_req_s", res.rate);
			json_add_num(q, "bracket_lo_req_s", res.lo);
			json_add_num(q, "bracket_hi_req_s", res.hi);
			cJSON *cv = cJSON_AddArrayToObject(q, "curve");
			for (size_t j = 0; j < res.n; j++) {
				cJSON *pt = cJSON_CreateObject();
				json_add_num(pt, "rate", res.curve[j].rate);
				json_add_num(pt, "slo_attainment", res.curve[j].attainment);
				cJSON_AddItemToArray(cv, pt);
				csv_cell(cf, system_name(sys[i]));
				fprintf(cf, ",%llu,%.17g,%.17g,%d\n",
					(unsigned long long)p.seed, res.curve[j].rate,
					res.curve[j].attainment, res.curve[j].attainment >= co.target);
			}
			cJSON_AddItemToArray(per, q);
			cap_result_release(&res);
		}
		double mean, half;
		capacity_mean_ci(caps, (size_t)seeds, &mean, &half);
		json_add_num(o, "capacity_req_s", mean);
		json_add_num(o, "ci95_lo_req_s", mean - half);
		json_add_num(o, "ci95_hi_req_s", mean + half);
		cJSON_AddItemToObject(o, "seeds", per);
		cJSON_AddItemToObject(o, "config", cfgs[i]);
		cfgs[i] = NULL;
		cJSON_AddItemToArray(arr, o);
	}
	free(caps);
	fclose(cf);
	char *txt = cJSON_Print(root);
	if (out) {
		FILE *f1 = NULL, *f2 = NULL;
		if ((f1 = outset_open_in(&os, "capacity.json", &err)) &&
		    (f2 = outset_open_in(&os, "capacity_curve.csv", &err))) {
			fprintf(f1, "%s\n", txt);
			fputs(csv, f2);
			outset_commit(&os, &err);
		}
		outset_abort(&os);   /* nothing left to abort after a commit */
		if (err.code) {
			cJSON_free(txt);
			rc = cli_fail(&err);
			goto done;
		}
	}
	if (json) {
		printf("%s\n", txt);
	} else {
		printf("capacity: highest Poisson rate with SLO attainment >= %g (bracket to %g)\n",
		       co.target, co.rel_tol);
		printf("%-22s %5s %14s  %s\n", "system", "cards", "capacity req/s",
		       seeds > 1 ? "95% interval of the mean, req/s" : "bracket, req/s");
		const cJSON *o;
		size_t row = 0;
		cJSON_ArrayForEach(o, arr) {
			const cJSON *per = cJSON_GetObjectItemCaseSensitive(o, "seeds");
			const cJSON *f0 = cJSON_GetArrayItem(per, 0);
			double lo = seeds > 1 ? cJSON_GetObjectItem(o, "ci95_lo_req_s")->valuedouble
					      : cJSON_GetObjectItem(f0, "bracket_lo_req_s")->valuedouble;
			double hi = seeds > 1 ? cJSON_GetObjectItem(o, "ci95_hi_req_s")->valuedouble
					      : cJSON_GetObjectItem(f0, "bracket_hi_req_s")->valuedouble;
			printf("%-22s %5d %14.4g  [%.4g, %.4g]\n",
			       cJSON_GetObjectItem(o, "system")->valuestring,
			       (int)cards[row++],
			       cJSON_GetObjectItem(o, "capacity_req_s")->valuedouble, lo, hi);
		}
	}
	cJSON_free(txt);
done:
	outset_abort(&os);
	for (size_t i = 0; cfgs && i < nsys; i++)
		cJSON_Delete(cfgs[i]);
	free(cfgs);
	free(cards);
	free(nreq);
	cJSON_Delete(root);
	free(csv);
	free(so);
	free(sys);
	cli_config_release(&probe);
	return rc;
}

const struct cli_cmd cmd_capacity = {
	"capacity",
	"bucketsim capacity [--trace T] [config options] [--system PRESET|FILE.json ...] "
	"[--target A] [--seeds K] [-o DIR]",
	"find the highest Poisson request rate each system serves within its SLO",
	"For each system, searches the Poisson arrival rate (workload.rate) for the highest one at\n"
	"which SLO attainment (slo.ttft_ms, slo.tpot_ms, slo.e2e_ms; unfinished requests fail) is\n"
	"at least --target: doubling or halving from --rate until the target is bracketed, then\n"
	"bisection until the bracket is narrower than --tol of its upper end.  Every probe of one\n"
	"search uses the same seed (common random numbers).  Prints the capacity and its bracket\n"
	"(with --seeds K: the mean over K searches and its 95% t interval); -o DIR writes\n"
	"capacity.json (with each system's configuration) and capacity_curve.csv, the measured\n"
	"attainment curve (see analysis/README.md).  A system (--system) applies over the shared\n"
	"options: where both set a key, the system's value holds.  The search owns the arrival\n"
	"process: workload.rate set anywhere, an arrival other than poisson, or a closed-loop\n"
	"client (workload.concurrency) is an error.  Each system's configuration is checked before\n"
	"the first probe, with one warning per key set but never read (errors with --strict), as\n"
	"run reports them.  The table and capacity.json give each system's cards; systems on\n"
	"different numbers of cards are a warning (--set cluster.cards=N fixes the total).\n"
	"After the first seed's search, three more probes check it (warnings, and \"checks\" in\n"
	"capacity.json): the attainment at 1/16 of the capacity (low load; a warning when the\n"
	"requests failing there are a third or more of those the target allows), and, with twice\n"
	"the requests, at 5% below and above the bracket (a warning when the capacity moves by\n"
	"more than 5%: give it more requests).  See sim/README.md.",
	"  bucketsim capacity --trace alpaca --set workload.num_requests=20000 \\\n"
	"      --set cluster.cards=2 --system vllm --system distserve --system bucketserve \\\n"
	"      --target 0.8\n"
	"  bucketsim capacity -c exp.json --set slo.e2e_ms=2000 --seeds 5 -o out/cap\n",
	opts, capacity,
};
