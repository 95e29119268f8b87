/*
 * workload: builds the request array from traces and generators (see workload.h and
 * README.md, "Workloads").
 *
 * Streams: every random choice comes from one of these gsl_rng (mt19937), each seeded with
 * workload_stream_seed(master, name) and created in this fixed order when used:
 *   arrival     inter-arrival times (poisson, gamma)
 *   mix         which trace of workload.mix a request comes from
 *   rows        which trace row a request takes (lengths=empirical)
 *   prompt_len  generated prompt lengths (lognormal, uniform)
 *   output_len  generated output lengths, or rows of workload.output_trace
 *   task        online/offline (task=random)
 *   priority    priority level (priority=random)
 * Each stream is consumed only for its own purpose, in request order, so changing one stream's
 * parameters (or a policy) never shifts another.
 */
#include "workloads/workload.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/random_dataset.h"
#include "workloads/trace_int.h"

#define MAX_MIX 16

enum lengths_mode { LEN_TRACE, LEN_EMPIRICAL, LEN_LOGNORMAL, LEN_UNIFORM, LEN_CONSTANT,
		   LEN_RANDOM };
static const char *const lengths_names[] = {"trace", "empirical", "lognormal", "uniform",
					    "constant", "random"};

struct source {
	char spec[256];
	double weight;
	int task;             /* -1 = not given in the mix entry */
	struct trace t;
	size_t next;          /* next row for lengths=trace */
};

struct dist {
	enum lengths_mode mode;
	double mean, cv, mu, sigma;
	int64_t min, max;
};

struct build {
	const struct config *cfg;
	struct bs_err *err;
	struct workload *w;
	uint64_t seed;
	int32_t mml;
	bool truncate, eval_cap;
	struct source src[MAX_MIX];
	size_t nsrc;
	bool mix;
	struct trace out_trace;
	bool has_out_trace;
	struct trace arr_trace;        /* with a mix: the trace given, for its timestamps only */
	const struct trace *ts_trace;  /* the trace whose timestamps can be replayed, or NULL */
};

uint64_t workload_stream_seed(uint64_t master, const char *stream)
{
	/* FNV-1a of the name, mixed with the master seed by splitmix64; folded to 32 bits because
	 * gsl's mt19937 uses only the low 32 bits of its seed (0 is avoided: gsl maps it to its
	 * default seed). */
	uint64_t z = master ^ fnv1a(BS_HASH_BASIS, stream, strlen(stream));
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	uint64_t s = (z ^ (z >> 32)) & 0xffffffffull;
	return s ? s : 1;
}

static gsl_rng *stream_new(struct build *b, const char *name)
{
	struct workload *w = b->w;
	uint64_t s = workload_stream_seed(b->seed, name);
	if (w->nstreams >= sizeof w->streams / sizeof w->streams[0])
		BUG("too many workload streams");
	snprintf(w->streams[w->nstreams].name, sizeof w->streams[0].name, "%s", name);
	w->streams[w->nstreams].seed = s;
	w->nstreams++;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	if (!r)
		BUG("gsl_rng_alloc failed");
	gsl_rng_set(r, (unsigned long)s);
	return r;
}

static int cfg_err(struct build *b, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int cfg_err(struct build *b, const char *key, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return bs_errf(b->err, BS_EXIT_INPUT, b->cfg->file, 0, key, "%s", msg);
}

static char *trim(char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strlen(p);
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		p[--n] = 0;
	return p;
}

/* Splits "a, b,c" into at most MAX trimmed pieces (modified in place); MAX + 1 = too many. */
static size_t split(char *s, char sep, char **parts, size_t max)
{
	size_t n = 0;
	for (char *p = s;; ) {
		if (n == max)
			return max + 1;
		char *q = strchr(p, sep);
		if (q)
			*q = 0;
		parts[n++] = trim(p);
		if (!q)
			break;
		p = q + 1;
	}
	return n;
}

static int parse_mix(struct build *b, const char *text)
{
	char *s = xstrdup(text), *ent[MAX_MIX + 1];
	size_t n = split(s, ',', ent, MAX_MIX);
	int rc = 0;
	if (n > MAX_MIX) {
		rc = cfg_err(b, "workload.mix", "more than %d entries", MAX_MIX);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char *f[4];
		size_t m = split(ent[i], ':', f, 3);
		struct source *src = &b->src[i];
		char why[160];
		src->weight = 1;
		src->task = -1;
		if (m > 3 || !f[0][0]) {
			rc = cfg_err(b, "workload.mix", "entry %zu: expected NAME[:WEIGHT[:online|"
				     "offline]], got '%s'", i + 1, ent[i]);
			goto out;
		}
		snprintf(src->spec, sizeof src->spec, "%s", f[0]);
		if (m >= 2 && (parse_f64(f[1], 0, 1e12, &src->weight, why, sizeof why) ||
			       !(src->weight > 0))) {
			rc = cfg_err(b, "workload.mix", "entry %zu ('%s'): expected a positive "
				     "weight, got '%s'", i + 1, f[0], f[1]);
			goto out;
		}
		if (m == 3) {
			if (!strcmp(f[2], "online"))
				src->task = TASK_ONLINE;
			else if (!strcmp(f[2], "offline"))
				src->task = TASK_OFFLINE;
			else {
				rc = cfg_err(b, "workload.mix", "entry %zu ('%s'): expected 'online' "
					     "or 'offline', got '%s'", i + 1, f[0], f[2]);
				goto out;
			}
		}
	}
	b->nsrc = n;
out:
	free(s);
	return rc;
}

/* Parses workload.priority_weights into W[0..*n). */
static int parse_weights(struct build *b, double *wts, size_t *n)
{
	const char *text = config_str(b->cfg, "workload.priority_weights");
	char *s = xstrdup(text ? text : "1"), *p[256];
	size_t m = split(s, ',', p, 255);
	int rc = 0;
	double sum = 0;
	if (m > 255)
		rc = cfg_err(b, "workload.priority_weights", "more than 255 levels");
	for (size_t i = 0; !rc && i < m; i++) {
		char why[160];
		if (parse_f64(p[i], 0, 1e12, &wts[i], why, sizeof why))
			rc = cfg_err(b, "workload.priority_weights", "level %zu: expected a "
				     "non-negative weight, got '%s'", i, p[i]);
		else
			sum += wts[i];
	}
	if (!rc && !(sum > 0))
		rc = cfg_err(b, "workload.priority_weights", "weights must not all be 0");
	*n = m;
	free(s);
	return rc;
}

static void dist_init(struct build *b, struct dist *d, enum lengths_mode mode, const char *side)
{
	char key[64];
	d->mode = mode;
	snprintf(key, sizeof key, "workload.%s_mean", side);
	d->mean = config_double(b->cfg, key);
	snprintf(key, sizeof key, "workload.%s_cv", side);
	d->cv = config_double(b->cfg, key);
	snprintf(key, sizeof key, "workload.%s_min", side);
	d->min = config_int(b->cfg, key);
	snprintf(key, sizeof key, "workload.%s_max", side);
	d->max = config_int(b->cfg, key);
	d->sigma = sqrt(log1p(d->cv * d->cv));
	d->mu = log(d->mean) - d->sigma * d->sigma / 2;
}

/* One generated length (lognormal/uniform/constant), rounded to an integer token count. */
static int64_t dist_draw(const struct dist *d, gsl_rng *r)
{
	double x;
	switch (d->mode) {
	case LEN_LOGNORMAL:
		x = gsl_ran_lognormal(r, d->mu, d->sigma);
		break;
	case LEN_UNIFORM:
	case LEN_RANDOM: /* bounds from random_dataset_range */
		return d->min + (int64_t)gsl_rng_uniform_int(r, (unsigned long)(d->max - d->min + 1));
	default:
		x = d->mean;
		break;
	}
	x = nearbyint(x);
	return x > INT32_MAX ? INT32_MAX : (int64_t)x;
}

static int load_sources(struct build *b, const char *trace, bool sort)
{
	if (!b->mix && trace) {
		snprintf(b->src[0].spec, sizeof b->src[0].spec, "%s", trace);
		b->src[0].weight = 1;
		b->src[0].task = -1;
		b->nsrc = 1;
	}
	for (size_t i = 0; i < b->nsrc; i++) {
		if (!trace_load(b->src[i].spec, sort, false, &b->src[i].t, b->err))
			continue;
		/* A mix entry that names no trace (no such file or bundled name, not readable...) is
		 * an error of workload.mix, placed where the mix was given; an error inside the
		 * trace keeps the trace's file and line. */
		struct bs_err *e = b->err;
		if (b->mix && e && e->line <= 0 && !strcmp(e->file, b->src[i].spec)) {
			char msg[sizeof e->msg];
			snprintf(msg, sizeof msg, "%s", e->msg);
			bs_err_clear(e);
			cfg_err(b, "workload.mix", "entry %zu ('%s'): %s", i + 1, b->src[i].spec, msg);
		}
		return -1;
	}
	if (b->mix && trace && trace_load(trace, sort, true, &b->arr_trace, b->err))
		return -1;
	const struct trace *tt = b->mix ? &b->arr_trace : b->nsrc ? &b->src[0].t : NULL;
	b->ts_trace = tt && tt->arrival_s ? tt : NULL;
	const char *ot = config_str(b->cfg, "workload.output_trace");
	if (ot && *ot) {
		if (trace_load(ot, sort, true, &b->out_trace, b->err))
			return -1;
		b->has_out_trace = true;
	}
	return 0;
}

static void sources_release(struct build *b)
{
	for (size_t i = 0; i < MAX_MIX; i++)
		trace_release(&b->src[i].t);
	trace_release(&b->out_trace);
	trace_release(&b->arr_trace);
}

/* The length rules against max_model_len (see workload.h).  FILE/REC name the origin. */
static int apply_rules(struct build *b, struct req_spec *q, int64_t prompt, int64_t output,
		       int32_t max_new, const struct trace *t, size_t row)
{
	struct workload *w = b->w;
	const char *file = t ? t->name : NULL;
	long rec = t ? (long)t->recno[row] : 0;
	if (prompt < 1) {
		prompt = 1;
		w->prompts_raised++;
	}
	if (output < 1) {
		output = 1;
		w->outputs_raised++;
	}
	if (b->eval_cap && max_new > 0 && output > max_new) {
		output = max_new;
		w->outputs_eval_capped++;
	}
	if (prompt >= b->mml) {
		if (!b->truncate) {
			if (t)
				return bs_errf(b->err, BS_EXIT_INPUT, file, rec, t->prompt_col,
					       "prompt of %lld tokens does not fit server."
					       "max_model_len=%d with at least one output token "
					       "(workload.truncate=true cuts it)", (long long)prompt,
					       (int)b->mml);
			return bs_errf(b->err, BS_EXIT_INPUT, b->cfg->file, 0, "workload.lengths",
				       "a generated prompt of %lld tokens does not fit "
				       "server.max_model_len=%d with at least one output token "
				       "(workload.truncate=true cuts it)", (long long)prompt,
				       (int)b->mml);
		}
		prompt = b->mml - output;
		if (prompt < 1)
			prompt = 1;
		w->prompts_truncated++;
	}
	if (prompt + output > b->mml) {
		output = b->mml - prompt;
		w->outputs_capped++;
	}
	q->prompt_tokens = (int32_t)prompt;
	q->output_tokens = (int32_t)output;
	return 0;
}

static int resolve_modes(struct build *b, enum lengths_mode *lm, enum arrival_mode *am)
{
	const char *l = config_str(b->cfg, "workload.lengths");
	const char *a = config_str(b->cfg, "workload.arrival");
	if (!strcmp(l, "auto"))
		*lm = b->mix ? LEN_EMPIRICAL : b->nsrc ? LEN_TRACE : LEN_LOGNORMAL;
	else
		for (int i = 0; i < 6; i++)
			if (!strcmp(l, lengths_names[i]))
				*lm = (enum lengths_mode)i;
	if ((*lm == LEN_TRACE || *lm == LEN_EMPIRICAL) && b->nsrc == 0)
		return cfg_err(b, "workload.lengths", "'%s' needs a trace (--trace NAME|FILE or "
			       "workload.mix)", lengths_names[*lm]);
	if (b->mix && *lm != LEN_TRACE && *lm != LEN_EMPIRICAL)
		return cfg_err(b, "workload.lengths", "'%s' cannot be used with workload.mix "
			       "(use trace or empirical)", lengths_names[*lm]);
	bool ts = b->ts_trace != NULL;
	if (!strcmp(a, "auto"))
		/* A closed-loop client without a rate: vllm bench serve's infinite rate. */
		*am = ts ? ARR_TRACE
			 : config_is_set(b->cfg, "workload.concurrency") &&
					   config_find(b->cfg, "workload.rate")->origin ==
						   CFG_ORIGIN_DEFAULT
				   ? ARR_OFFLINE
				   : ARR_POISSON;
	else if (!strcmp(a, "trace"))
		*am = ARR_TRACE;
	else if (!strcmp(a, "poisson"))
		*am = ARR_POISSON;
	else if (!strcmp(a, "gamma"))
		*am = ARR_GAMMA;
	else
		*am = ARR_OFFLINE;
	if (*am == ARR_TRACE && !ts)
		return cfg_err(b, "workload.arrival", "'trace' needs a trace with an "
			       "arrival_time_s column");
	if (*am != ARR_TRACE) {
		if (config_is_set(b->cfg, "workload.time_scale"))
			return cfg_err(b, "workload.time_scale", "applies only to trace timestamps "
				       "(workload.arrival=trace)");
		if (config_is_set(b->cfg, "workload.target_rate"))
			return cfg_err(b, "workload.target_rate", "applies only to trace "
				       "timestamps (workload.arrival=trace)");
	} else if (config_is_set(b->cfg, "workload.time_scale") &&
		   config_is_set(b->cfg, "workload.target_rate")) {
		return cfg_err(b, "workload.target_rate", "give workload.time_scale or "
			       "workload.target_rate, not both");
	}
	return 0;
}

/* Arrival times are int64 nanoseconds: about 292 years at most. */
static int too_late(struct build *b, const char *key, double s)
{
	return cfg_err(b, key, "an arrival at %.6g s is beyond the simulator's time range "
		       "(%.2g s); use fewer requests or a higher rate", s, BS_MAX_SECONDS);
}

static int gen_arrivals(struct build *b, enum arrival_mode am, gsl_rng *r)
{
	struct workload *w = b->w;
	size_t n = w->n;
	double rate = config_double(b->cfg, "workload.rate");
	if (am == ARR_OFFLINE) {
		for (size_t i = 0; i < n; i++)
			w->req[i].arrival_ns = 0;
		snprintf(w->arrival, sizeof w->arrival, "offline (all at 0 s)");
		return 0;
	}
	if (am == ARR_TRACE) {
		const struct trace *t = b->ts_trace;
		double first = t->arrival_s[0], last = t->arrival_s[t->n - 1];
		double span = last - first;
		/* A cycled trace repeats with period span + one mean gap. */
		double period = t->n > 1 ? span * (double)t->n / (double)(t->n - 1) : 0;
		double scale = 1;
		if (config_is_set(b->cfg, "workload.time_scale"))
			scale = config_double(b->cfg, "workload.time_scale");
		if (config_is_set(b->cfg, "workload.target_rate")) {
			if (!(span > 0))
				return cfg_err(b, "workload.target_rate", "trace '%s' spans 0 s: no "
					       "rate to scale", t->name);
			double observed = (double)(t->n - 1) / span;
			scale = observed / config_double(b->cfg, "workload.target_rate");
		}
		/* The trace's own timestamps are within range (trace.c): only a key the user set
		 * can push an arrival out of it. */
		const char *culprit = config_is_set(b->cfg, "workload.target_rate")
					      ? "workload.target_rate"
				      : config_is_set(b->cfg, "workload.time_scale")
					      ? "workload.time_scale" : "workload.num_requests";
		for (size_t i = 0; i < n; i++) {
			size_t row = i % t->n, cyc = i / t->n;
			double s = (t->arrival_s[row] + (double)cyc * period) * scale;
			if (s_to_ns(s, &w->req[i].arrival_ns))
				return too_late(b, culprit, s);
		}
		snprintf(w->arrival, sizeof w->arrival, "trace timestamps x %.9g", scale);
		return 0;
	}
	double k = 0, theta = 0;
	if (am == ARR_GAMMA) {
		double cv = config_double(b->cfg, "workload.cv");
		k = 1 / (cv * cv);
		theta = 1 / (rate * k);
		snprintf(w->arrival, sizeof w->arrival, "gamma rate=%.9g req/s cv=%.9g", rate, cv);
	} else {
		snprintf(w->arrival, sizeof w->arrival, "poisson rate=%.9g req/s", rate);
	}
	double t = 0, mean = 1 / rate;
	for (size_t i = 0; i < n; i++) {
		t += am == ARR_GAMMA ? gsl_ran_gamma(r, k, theta) : gsl_ran_exponential(r, mean);
		if (s_to_ns(t, &w->req[i].arrival_ns))
			return too_late(b, config_is_set(b->cfg, "workload.num_requests")
						   ? "workload.num_requests" : "workload.rate", t);
	}
	return 0;
}

static int build(struct build *b, const char *trace)
{
	const struct config *cfg = b->cfg;
	struct workload *w = b->w;
	const char *mix = config_str(cfg, "workload.mix");
	b->mix = mix && *mix;
	if (b->mix && parse_mix(b, mix))
		return -1;
	if (load_sources(b, trace, config_bool(cfg, "workload.sort_arrivals")))
		return -1;
	enum lengths_mode lm = LEN_TRACE;
	enum arrival_mode am = ARR_POISSON;
	if (resolve_modes(b, &lm, &am))
		return -1;
	w->arrival_mode = am;
	snprintf(w->lengths, sizeof w->lengths, "%s", lengths_names[lm]);
	if (b->mix && am == ARR_TRACE)
		snprintf(w->source, sizeof w->source, "mix %.110s; arrivals of %.110s", mix,
			 b->ts_trace->name);
	else if (b->mix)
		snprintf(w->source, sizeof w->source, "mix %s", mix);
	else if (b->nsrc)
		snprintf(w->source, sizeof w->source, "%s", b->src[0].t.name);
	else
		snprintf(w->source, sizeof w->source, "generator");

	size_t n = 0;
	if (config_is_set(cfg, "workload.num_requests"))
		n = (size_t)config_int(cfg, "workload.num_requests");
	else if (am == ARR_TRACE)
		n = b->ts_trace->n;
	else if (b->nsrc)
		for (size_t i = 0; i < b->nsrc; i++)
			n += b->src[i].t.n;
	else
		n = 1000;

	struct dist pd, od;
	dist_init(b, &pd, lm, "prompt");
	dist_init(b, &od, lm, "output");
	if (lm == LEN_UNIFORM && pd.min > pd.max)
		return cfg_err(b, "workload.prompt_min", "%lld is larger than workload.prompt_max="
			       "%lld", (long long)pd.min, (long long)pd.max);
	if (lm == LEN_UNIFORM && od.min > od.max)
		return cfg_err(b, "workload.output_min", "%lld is larger than workload.output_max="
			       "%lld", (long long)od.min, (long long)od.max);
	int64_t rand_prefix = 0; /* lengths=random: the shared prefix */
	if (lm == LEN_RANDOM) {
		if (random_dataset_range(cfg, "prompt", &pd.min, &pd.max, b->err) ||
		    random_dataset_range(cfg, "output", &od.min, &od.max, b->err))
			return -1;
		rand_prefix = config_int(cfg, "workload.random_prefix_len");
	}
	double pw[256];
	size_t npw = 1;
	const char *prio_rule = config_str(cfg, "workload.priority");
	const char *task_rule = config_str(cfg, "workload.task");
	if (!strcmp(prio_rule, "random") && parse_weights(b, pw, &npw))
		return -1;

	/* Streams, in their fixed order. */
	gsl_rng *r_arr = NULL, *r_mix = NULL, *r_rows = NULL, *r_pl = NULL, *r_ol = NULL,
		*r_task = NULL, *r_prio = NULL;
	gsl_ran_discrete_t *mix_tbl = NULL, *prio_tbl = NULL;
	if (am == ARR_POISSON || am == ARR_GAMMA)
		r_arr = stream_new(b, "arrival");
	if (b->mix) {
		r_mix = stream_new(b, "mix");
		double wt[MAX_MIX];
		for (size_t i = 0; i < b->nsrc; i++)
			wt[i] = b->src[i].weight;
		mix_tbl = gsl_ran_discrete_preproc(b->nsrc, wt);
	}
	if (lm == LEN_EMPIRICAL)
		r_rows = stream_new(b, "rows");
	if (lm == LEN_LOGNORMAL || lm == LEN_UNIFORM || lm == LEN_RANDOM)
		r_pl = stream_new(b, "prompt_len");
	if (b->has_out_trace || lm == LEN_LOGNORMAL || lm == LEN_UNIFORM || lm == LEN_RANDOM)
		r_ol = stream_new(b, "output_len");
	if (!strcmp(task_rule, "random"))
		r_task = stream_new(b, "task");
	if (!strcmp(prio_rule, "random")) {
		r_prio = stream_new(b, "priority");
		prio_tbl = gsl_ran_discrete_preproc(npw, pw);
	}
	double off_frac = config_double(cfg, "workload.offline_fraction");
	int task_fixed = !strcmp(task_rule, "online") ? TASK_ONLINE :
			 !strcmp(task_rule, "offline") ? TASK_OFFLINE : -1;
	bool prio_task = !strcmp(prio_rule, "task");

	w->n = n;
	w->req = xmalloc(n * sizeof *w->req);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct req_spec *q = &w->req[i];
		memset(q, 0, sizeof *q);
		q->prefix_group = -1;
		size_t c = b->mix ? gsl_ran_discrete(r_mix, mix_tbl) : 0;
		struct source *src = &b->src[c];
		const struct trace *t = b->nsrc ? &src->t : NULL;
		size_t row = 0;
		int64_t prompt, output;
		int32_t max_new = 0;
		if (lm == LEN_TRACE || lm == LEN_EMPIRICAL) {
			row = lm == LEN_TRACE ? src->next++ % t->n :
			      (size_t)gsl_rng_uniform_int(r_rows, (unsigned long)t->n);
			prompt = t->prompt[row];
			output = t->output[row];
			max_new = t->max_new ? t->max_new[row] : 0;
			if (t->prefix_group) {
				q->prefix_group = t->prefix_group[row];
				q->prefix_tokens = t->prefix_tokens ? t->prefix_tokens[row] : 0;
			}
		} else {
			t = NULL;
			prompt = rand_prefix + dist_draw(&pd, r_pl);
			output = dist_draw(&od, r_ol);
			if (rand_prefix) {
				q->prefix_group = 0;
				q->prefix_tokens = (int32_t)rand_prefix;
			}
		}
		if (b->has_out_trace)
			output = b->out_trace.output[gsl_rng_uniform_int(
				r_ol, (unsigned long)b->out_trace.n)];
		rc = apply_rules(b, q, prompt, output, max_new, t, row);
		if (q->prefix_tokens > q->prompt_tokens)
			q->prefix_tokens = q->prompt_tokens; /* after truncation */
		/* Task, then priority (priority=task reads the task). */
		int task = TASK_ONLINE;
		if (task_fixed >= 0)
			task = task_fixed;
		else if (r_task)
			task = gsl_rng_uniform(r_task) < off_frac ? TASK_OFFLINE : TASK_ONLINE;
		else if (src->task >= 0 && b->mix)
			task = src->task;
		else if (t && t->task && t->task[row] != TRACE_UNSET_U8)
			task = t->task[row];
		q->task = (uint8_t)task;
		if (r_prio)
			q->priority = (uint8_t)gsl_ran_discrete(r_prio, prio_tbl);
		else if (prio_task)
			q->priority = task == TASK_OFFLINE ? 1 : 0;
		else if (t && t->priority && t->priority[row] != TRACE_UNSET_U8)
			q->priority = t->priority[row];
	}
	if (!rc)
		rc = gen_arrivals(b, am, r_arr);
	if (!rc && config_is_set(cfg, "workload.concurrency")) { /* sim/kernel_client.c */
		char open_loop[sizeof w->arrival];
		snprintf(open_loop, sizeof open_loop, "%s", w->arrival);
		snprintf(w->arrival, sizeof w->arrival, "closed loop of %lld in flight, sent not "
			 "before: %.40s", (long long)config_int(cfg, "workload.concurrency"),
			 open_loop);
	}
	if (lm == LEN_RANDOM)
		snprintf(w->source, sizeof w->source, "random dataset (vllm bench serve)");
	gsl_ran_discrete_free(mix_tbl);
	gsl_ran_discrete_free(prio_tbl);
	gsl_rng *all[] = {r_arr, r_mix, r_rows, r_pl, r_ol, r_task, r_prio};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (all[i])
			gsl_rng_free(all[i]);
	return rc;
}

int workload_build(const struct config *cfg, const char *trace, uint64_t seed,
		   struct workload *out, struct bs_err *err)
{
	memset(out, 0, sizeof *out);
	struct build *b = xcalloc(1, sizeof *b);
	b->cfg = cfg;
	b->err = err;
	b->w = out;
	b->seed = seed;
	b->mml = (int32_t)config_int(cfg, "server.max_model_len");
	b->truncate = config_bool(cfg, "workload.truncate");
	b->eval_cap = config_bool(cfg, "workload.eval_cap");
	int rc = build(b, trace);
	sources_release(b);
	free(b);
	if (rc)
		workload_release(out);
	return rc;
}

void workload_release(struct workload *w)
{
	free(w->req);
	memset(w, 0, sizeof *w);
}

static void print_stats5(FILE *out, const int32_t *v, size_t n)
{
	if (!v) {
		fprintf(out, "  %8s %7s %7s %7s %7s", "-", "-", "-", "-", "-");
		return;
	}
	double *d = xmalloc(n * sizeof *d);
	for (size_t i = 0; i < n; i++)
		d[i] = v[i];
	struct col_stats s;
	col_stats_compute(d, n, &s);
	free(d);
	fprintf(out, "  %8.1f %7.0f %7.0f %7.0f %7.0f", s.mean, s.p50, s.p90, s.p99, s.max);
}

void workload_list_print(FILE *out)
{
	fprintf(out, "Bundled traces (--trace NAME); lengths in tokens, as in the file (before "
		"the max_model_len rules);\npercentiles interpolated linearly.\n\n");
	fprintf(out, "%-19s %6s %-5s  %8s %7s %7s %7s %7s  %8s %7s %7s %7s %7s\n", "name", "rows",
		"times", "prompt", "p50", "p90", "p99", "max", "output", "p50", "p90", "p99",
		"max");
	fprintf(out, "%-19s %6s %-5s  %8s %7s %7s %7s %7s  %8s %7s %7s %7s %7s\n", "", "", "",
		"mean", "", "", "", "", "mean", "", "", "", "");
	for (const struct bundled_trace *bt = bundled_traces; bt->name; bt++) {
		struct trace t;
		struct bs_err e = {0};
		if (trace_load(bt->name, false, true, &t, &e))
			BUG("bundled trace '%s' does not load: %s", bt->name, e.msg);
		fprintf(out, "%-19s %6zu %-5s", bt->name, t.n, t.arrival_s ? "yes" : "no");
		print_stats5(out, t.prompt, t.n);
		print_stats5(out, t.output, t.n);
		fputc('\n', out);
		trace_release(&t);
	}
	fputc('\n', out);
	for (const struct bundled_trace *bt = bundled_traces; bt->name; bt++)
		fprintf(out, "%-19s %s\n", bt->name, bt->about);
}
