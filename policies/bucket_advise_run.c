/*
 * bucket_advise_run: `bucketsim buckets --advise`, the advisor end to end: the workload's real
 * shapes (a run with bucketing ideal), the advised bucket file, and the report against the
 * generated strategies, each set re-simulated.
 *
 * Every simulation goes through advise_simulate(), the one place that turns the resolved server
 * configuration (run_setup: model, hardware, parallelism, scheduler, the engine's execution
 * settings) and a bucket set into a run, so anything the configuration adds reaches the
 * advisor's shape collection and its evaluations alike.  The --budgets table across strategies
 * is policies/bucket_advise_budgets.c, on the same simulation and evaluation
 * (policies/bucket_advise_int.h).
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policies/bucket_advise.h"
#include "policies/bucket_advise_int.h"
#include "sim/csv_cell.h"

/* ---- shape collection ---- */

static void on_pass(void *ctx, const struct sim *s, const struct pass_rec *p)
{
	(void)s;
	struct advise_collect *c = ctx;
	if (p->phase != PHASE_PROMPT && p->phase != PHASE_DECODE)
		return;
	int ph = p->phase;
	if (c->n[ph] == c->cap[ph]) {
		c->cap[ph] = c->cap[ph] ? 2 * c->cap[ph] : 1024;
		c->a[ph] = xrealloc(c->a[ph], c->cap[ph] * sizeof *c->a[ph]);
	}
	struct adv_shape *sh = &c->a[ph][c->n[ph]++];
	sh->v[0] = p->real[0];
	/* A prompt bucket's query of 1 would read as a decode bucket in the file format (second
	 * member 1): a one-token prefill chunk is counted at query 2. */
	sh->v[1] = ph == PHASE_PROMPT && p->real[1] < 2 ? 2 : p->real[1];
	sh->v[2] = p->real[2];
	sh->w = 1;
}

static int cmp_shape(const void *a, const void *b)
{
	const struct adv_shape *x = a, *y = b;
	for (int d = 0; d < 3; d++)
		if (x->v[d] != y->v[d])
			return x->v[d] < y->v[d] ? -1 : 1;
	return 0;
}

/* Distinct shapes with their pass counts, sorted. */
static void distinct(struct adv_shape *a, size_t *n)
{
	if (!*n)
		return;
	qsort(a, *n, sizeof *a, cmp_shape);
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		if (k && !cmp_shape(&a[k - 1], &a[i]))
			a[k - 1].w += a[i].w;
		else
			a[k++] = a[i];
	}
	*n = k;
}

/* ---- one simulation ---- */

static double jnum(const cJSON *m, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, k);
	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

/* Runs requests REQ[0..N) of X's configuration with strategy ST (FILE for strategy file):
 * collects the real shapes into COL when not NULL, the metrics into OUT when not NULL; the
 * bucket lists into LISTS when not NULL. */
int advise_simulate(struct run_ctx *x, const struct req_spec *req, size_t n, const char *st,
		    const char *file, const struct config *cfg, struct advise_collect *col,
		    struct advise_metrics *out, struct blist *lists, struct bs_err *err)
{
	struct bucket_params bp = x->bp;
	bp.strategy = bucket_strategy_find(st);
	if (file)
		snprintf(bp.file, sizeof bp.file, "%s", file);
	if (cfg)
		bp.cfg = cfg;
	bp.warnings[0] = 0;
	struct bucketer *b = NULL;
	if (bucketer_new(&bp, &b, err))
		return -1;
	struct sim_params sp = x->sp;
	sp.ideal = bp.strategy->ideal;
	/* The batch controller set up for the candidate's server as run_setup sets it up when
	 * `run` is given the candidate: prefill_batch forms its passes in the candidate's warmed
	 * prompt grid.  The ideal run that collects shapes keeps the configured server's set-up:
	 * its shapes are that server's passes. */
	struct bucketserve_cfg bsc;
	if (x->have_bsc)
		bsc = x->bsc;
	const struct batch_policy *ctl = x->sp.batching;
	if (!sp.ideal && ctl->setup) {
		sp.prompt_grid = sim_prompt_grid(&sp, &bp);
		struct batch_setup su = {sp.prompt_grid ? b : NULL, x->have_bsc ? &bsc : NULL};
		sp.batching = ctl->setup(&su);
	}
	struct sim_costs costs;
	sim_costs_from_model(&costs, x->cm);
	struct sim_hooks hooks = {col, NULL, col ? on_pass : NULL, NULL, NULL};
	struct sim *s = sim_new(&sp, req, n, b, x->have_bsc ? &bsc : NULL, &costs, &hooks);
	sim_warmup(s);
	sim_run(s);
	sim_finish(s);
	if (out) {
		const struct metrics *mm = sim_metrics(s);
		out->compiles_warmup = mm->compiles_warmup;
		out->compiles_runtime = mm->compiles_runtime;
		struct bucketer *keep = x->b;
		x->b = b;
		cJSON *m = run_metrics_json(x, s);
		x->b = keep;
		out->ttft_p50 = jnum(m, "median_ttft_ms");
		out->ttft_p99 = jnum(m, "p99_ttft_ms");
		out->tpot_p50 = jnum(m, "median_tpot_ms");
		out->tpot_p99 = jnum(m, "p99_tpot_ms");
		out->tput = jnum(m, "output_throughput");
		out->waste = jnum(m, "padding_waste_ratio");
		out->warmup_s = jnum(m, "warmup_s");
		out->runtime_s = jnum(m, "runtime_compile_s");
		cJSON_Delete(m);
	}
	if (lists)
		for (int ph = 0; ph < 2; ph++) {
			const struct bshape *l;
			size_t k = bucketer_warmup_list(b, (enum phase)ph, &l);
			for (size_t i = 0; i < k; i++)
				blist_push(&lists[ph], l[i].v[0], l[i].v[1], l[i].v[2], 0);
		}
	sim_free(s);
	bucketer_free(b);
	return 0;
}

/* ---- costs ---- */

struct cost_ctx {
	struct sim_costs c;
	bool gather;
};

/* The pass time the engine charges (sim/kernel_graph.c, shape_cost: prefill; decode through
 * the gathering kernel without contiguous PA), without the eager-mode extra. */
static int64_t pass_ns(void *ctx, int ph, const int32_t v[3])
{
	struct cost_ctx *k = ctx;
	if (ph == PHASE_PROMPT)
		return k->c.prefill(k->c.ctx, v[0], v[1], v[2]);
	if (k->gather)
		return k->c.decode_gather(k->c.ctx, v[0], v[2]);
	return k->c.decode(k->c.ctx, v[0], v[2]);
}

static int64_t compile_ns(void *ctx, int ph, const int32_t v[3])
{
	struct cost_ctx *k = ctx;
	int32_t v4[4] = {v[0], v[1], v[2], 0};
	return k->c.compile(k->c.ctx, ph, v4, true);
}

/* ---- the file ---- */

static void print_vals(FILE *f, const struct ivec *r)
{
	if (r->n == 1) {
		fprintf(f, "%lld", (long long)r->v[0]);
		return;
	}
	fputc('[', f);
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, i ? ", %lld" : "%lld", (long long)r->v[i]);
	fputc(']', f);
}

/* The bucket file of the product SET, or with PTS (not NULL), of those points, one per line. */
static void write_file(FILE *f, const struct adv_set *set, const struct blist *pts)
{
	if (pts) {
		for (int ph = 0; ph < 2; ph++)
			for (size_t i = 0; i < pts[ph].n; i++)
				fprintf(f, "(%lld, %lld, %lld)\n", (long long)pts[ph].a[i].v[0],
					(long long)pts[ph].a[i].v[1], (long long)pts[ph].a[i].v[2]);
		return;
	}
	for (int ph = 0; ph < 2; ph++) {
		fputc('(', f);
		print_vals(f, &set[ph].val[0]);
		fputs(", ", f);
		if (ph == PHASE_DECODE)
			fputc('1', f);
		else
			print_vals(f, &set[ph].val[1]);
		fputs(", ", f);
		print_vals(f, &set[ph].val[2]);
		fputs(")\n", f);
	}
}

/* ---- the equivalent VLLM_* settings of a product ---- */

/* The linear range (MIN, STEP, MAX) containing every value of L with the fewest values
 * (upstream linear.warmup_range: MIN doubling while below STEP, then the multiples of STEP up
 * to MAX; with HEAD_ZERO a MIN of 0 is the point 0 and the multiples of STEP); ties go to the
 * largest step.  Returns the number of values of the range. */
static int64_t lin_cover(const struct ivec *l, bool head_zero, int64_t *mn, int64_t *st,
			 int64_t *mx)
{
	int64_t lo = l->v[0], hi = l->v[l->n - 1], best = INT64_MAX;
	*mn = lo, *st = hi > 0 ? hi : 1, *mx = hi;
	if (hi == 0)
		return 1;
	bool zero = lo == 0 && head_zero;
	for (int64_t s = hi; s >= 1; s--) {
		int64_t bmin = zero ? s : lo, cnt = zero ? 1 : 0;
		if (bmin < 1)
			continue;
		int64_t ramp = 0;
		for (int64_t x = bmin; x < s && x <= hi; x *= 2)
			ramp++;
		int64_t first = bmin > s ? (bmin + s - 1) / s : 1;
		cnt += ramp + (hi / s >= first ? hi / s - first + 1 : 0);
		if (cnt >= best)
			continue;
		bool ok = true;
		for (size_t i = 0; i < l->n && ok; i++) {
			int64_t v = l->v[i];
			if (v == 0 && zero)
				continue;
			bool in_ramp = false;
			for (int64_t x = bmin; x < s && x <= hi && !in_ramp; x *= 2)
				in_ramp = x == v;
			ok = in_ramp || (v % s == 0 && v >= s && v >= bmin);
		}
		if (ok)
			best = cnt, *st = s;
	}
	return best;
}

bool advise_is_bucket_knob(const char *n)
{
	return (!strncmp(n, "VLLM_PROMPT_", 12) || !strncmp(n, "VLLM_DECODE_", 12)) &&
	       strstr(n, "_BUCKET_");
}

/* Prints the VLLM_* settings of the linear strategy whose ranges contain the advised product
 * SET (both phases) and whether they warm exactly the buckets of the file (WARMED: the file
 * strategy's lists).  Version current: linear.py read_bucket_settings and warmup_range (vllm-gaudi
 * 091bbad); version docs: the legacy extension's linear ranges over (bs, seq), no context
 * variable. */
static int print_env(struct run_ctx *x, const struct adv_set *set, const struct blist *warmed,
		     FILE *out, struct bs_err *err)
{
	bool cur = x->bp.version == BUCKET_VERSION_CURRENT;
	static const char *const dims[2][3] = {{"PROMPT_BS", "PROMPT_QUERY", "PROMPT_CTX"},
					       {"DECODE_BS", NULL, "DECODE_BLOCK"}};
	char line[2048];
	size_t o = (size_t)snprintf(line, sizeof line, "%s", cur ? "VLLM_BUCKETING_STRATEGY=lin" :
				    "VLLM_EXPONENTIAL_BUCKETING=false");
	struct config tmp;
	config_init(&tmp);
	for (size_t i = 0; i < x->bp.cfg->nenv; i++) {
		const struct cfg_env *e = &x->bp.cfg->env[i];
		if (advise_is_bucket_knob(e->name) || !strcmp(e->name, "VLLM_BUCKETING_STRATEGY") ||
		    !strcmp(e->name, "VLLM_EXPONENTIAL_BUCKETING") ||
		    !strcmp(e->name, "VLLM_BUCKETING_FROM_FILE"))
			continue;
		char *a = xasprintf("%s=%s", e->name, e->value);
		int r = config_set_env_arg(&tmp, a, CFG_ORIGIN_CMDLINE, err);
		free(a);
		if (r) {
			config_release(&tmp);
			return -1;
		}
	}
	bool expressible = true;
	for (int ph = 0; ph < 2; ph++)
		for (int d = 0; d < 3; d++) {
			if (!dims[ph][d])
				continue;
			const char *dim = dims[ph][d];
			if (!cur && !strcmp(dim, "PROMPT_CTX")) {
				/* no variable: the legacy linear prompt has context 0 only */
				expressible = expressible && set[ph].val[2].n == 1 && set[ph].val[2].v[0] == 0;
				continue;
			}
			if (!cur && !strcmp(dim, "PROMPT_QUERY"))
				dim = "PROMPT_SEQ";
			int64_t mn, st, mx;
			lin_cover(&set[ph].val[d], cur, &mn, &st, &mx);
			const char *p[3] = {"MIN", "STEP", "MAX"};
			int64_t v[3] = {mn, st, mx};
			for (int q = 0; q < 3; q++) {
				char *a = xasprintf("VLLM_%s_BUCKET_%s=%lld", dim, p[q], (long long)v[q]);
				if (o < sizeof line)
					o += (size_t)snprintf(line + o, sizeof line - o, " %s", a);
				int r = config_set_env_arg(&tmp, a, CFG_ORIGIN_CMDLINE, err);
				free(a);
				if (r) {
					config_release(&tmp);
					return -1;
				}
			}
		}
	/* The lists those settings warm, by the linear strategy itself (after its filters). */
	struct bucket_params bp = x->bp;
	bp.strategy = bucket_strategy_find("linear");
	bp.cfg = &tmp;
	bp.warnings[0] = 0;
	struct bucketer *b = NULL;
	size_t nb[2] = {0, 0};
	bool same = expressible;
	struct bs_err e2 = {0};
	if (bucketer_new(&bp, &b, &e2)) {
		same = false;
		nb[0] = nb[1] = 0;
	} else {
		for (int ph = 0; ph < 2; ph++) {
			const struct bshape *l;
			nb[ph] = bucketer_warmup_list(b, (enum phase)ph, &l);
			same = same && nb[ph] == warmed[ph].n;
			for (size_t i = 0; same && i < nb[ph]; i++)
				same = !memcmp(l[i].v, warmed[ph].a[i].v, 3 * sizeof l[i].v[0]);
		}
		bucketer_free(b);
	}
	config_release(&tmp);
	fprintf(out, "# as VLLM_* settings (%s): %s\n", cur ? "version current, the linear strategy"
		: "version docs, the legacy linear strategy", line);
	if (same)
		fprintf(out, "# these ranges warm exactly the file's buckets\n");
	else
		fprintf(out, "# not exact: the smallest linear ranges holding every advised value warm "
			"%zu prompt and %zu decode buckets against the file's %zu and %zu%s; the file is "
			"exact\n", nb[0], nb[1], warmed[0].n, warmed[1].n,
			expressible ? "" : " (no variable sets the prompt context in version docs)");
	return 0;
}

/* The advised product for budget KS[ph] per phase, from INIT (may be NULL); with PTS (not
 * NULL), also the free set of points the heuristic reaches from it. */
void advise_product(struct adv_shape **sh, const size_t *n, const size_t *ks,
		    const struct blist *init, const struct adv_cost *c, struct adv_set *out,
		    struct blist *pts)
{
	for (int ph = 0; ph < 2; ph++) {
		struct adv_set is = {0}, *ip = NULL;
		if (init) {
			/* the baseline's projections, keeping only values a shape maps to */
			struct adv_set full;
			adv_set_of_list(&init[ph], &full);
			for (int d = 0; d < 3; d++) {
				for (size_t i = 0; i < full.val[d].n; i++) {
					int64_t v = full.val[d].v[i], below = i ? full.val[d].v[i - 1] : INT64_MIN;
					bool used = false;
					for (size_t j = 0; j < n[ph] && !used; j++)
						used = sh[ph][j].v[d] <= v && sh[ph][j].v[d] > below;
					if (used)
						ivec_push(&is.val[d], v);
				}
				if (!is.val[d].n && full.val[d].n)
					ivec_push(&is.val[d], full.val[d].v[full.val[d].n - 1]);
			}
			adv_set_free(&full);
			ip = &is;
		}
		if (n[ph])
			adv_optimise(ph, sh[ph], n[ph], ks[ph], ip, c, &out[ph]);
		else { /* no pass of this phase: one bucket keeps the file loadable */
			memset(&out[ph], 0, sizeof out[ph]);
			ivec_push(&out[ph].val[0], 1);
			ivec_push(&out[ph].val[1], ph == PHASE_DECODE ? 1 : 128);
			ivec_push(&out[ph].val[2], ph == PHASE_DECODE ? 1 : 0);
		}
		adv_set_free(&is);
		if (pts) {
			struct blist l = {0};
			adv_set_list(ph, &out[ph], &l);
			if (n[ph])
				adv_free_set(ph, sh[ph], n[ph], ks[ph], &l, c, &pts[ph]);
			else
				adv_set_list(ph, &out[ph], &pts[ph]);
			blist_free(&l);
		}
	}
}

static void print_row(FILE *f, const struct advise_row *r, bool holdout)
{
	fprintf(f, "# %-22s %7zu %7zu %12.3f %12.3f", r->name, r->buckets[0], r->buckets[1],
		(double)r->cost[0] / 1e9, (double)r->cost[1] / 1e9);
	if (holdout)
		fprintf(f, " %12.3f %12.3f", (double)r->cost_eval[0] / 1e9,
			(double)r->cost_eval[1] / 1e9);
	fprintf(f, " %6.4f %6lld %8.1f %6lld %7.1f %8.2f %8.2f %7.2f %7.2f %8.1f\n", r->m.waste,
		(long long)r->m.compiles_warmup, r->m.warmup_s, (long long)r->m.compiles_runtime,
		r->m.runtime_s, r->m.ttft_p50, r->m.ttft_p99, r->m.tpot_p50, r->m.tpot_p99,
		r->m.tput);
}

/* The lists the file strategy warms for SET (through the file TMP) and their warm-up compile
 * time by the cost model, seconds. */
static int warm_lists(struct run_ctx *x, const struct adv_set *set, const struct blist *pts,
		      const char *tmp, struct cost_ctx *cc, double *warm_s, struct bs_err *err)
{
	FILE *f = fopen(tmp, "w");
	if (!f)
		return bs_errf(err, BS_EXIT_RUNTIME, tmp, 0, NULL, "cannot write the bucket file");
	write_file(f, set, pts);
	if (fclose(f))
		return bs_errf(err, BS_EXIT_RUNTIME, tmp, 0, NULL, "cannot write the bucket file");
	struct bucket_params bp = x->bp;
	bp.strategy = bucket_strategy_find("file");
	snprintf(bp.file, sizeof bp.file, "%s", tmp);
	struct bucketer *b = NULL;
	if (bucketer_new(&bp, &b, err))
		return -1;
	int64_t ns = 0;
	for (int ph = 0; ph < 2; ph++) {
		const struct bshape *l;
		size_t k = bucketer_warmup_list(b, (enum phase)ph, &l);
		for (size_t i = 0; i < k; i++)
			ns += cc->c.compile(cc->c.ctx, ph, l[i].v, false);
	}
	bucketer_free(b);
	*warm_s = (double)ns / 1e9;
	return 0;
}

/* Evaluates the product SET: its file through strategy file, its costs and a re-simulation. */
int advise_evaluate(struct run_ctx *x, const struct adv_set *set, const struct blist *pts,
		    const char *tmp, struct adv_shape **fit, const size_t *nfit,
		    struct adv_shape **ev, const size_t *nev, const struct req_spec *req, size_t n,
		    const struct adv_cost *c, struct advise_row *r, struct blist *lists,
		    struct bs_err *err)
{
	FILE *f = fopen(tmp, "w");
	if (!f)
		return bs_errf(err, BS_EXIT_RUNTIME, tmp, 0, NULL, "cannot write the bucket file");
	write_file(f, set, pts);
	if (fclose(f))
		return bs_errf(err, BS_EXIT_RUNTIME, tmp, 0, NULL, "cannot write the bucket file");
	if (advise_simulate(x, req, n, "file", tmp, NULL, NULL, &r->m, lists, err))
		return -1;
	for (int ph = 0; ph < 2; ph++) {
		r->buckets[ph] = lists[ph].n;
		r->cost[ph] = adv_cost_list(ph, fit[ph], nfit[ph], &lists[ph], c);
		r->cost_eval[ph] = adv_cost_list(ph, ev[ph], nev[ph], &lists[ph], c);
	}
	return 0;
}

int buckets_advise(struct run_ctx *x, const struct advise_opts *o, FILE *out, struct bs_err *err)
{
	size_t n = x->w.n, nfit = n;
	if (o->holdout > 0) {
		nfit = (size_t)((double)n * (1.0 - o->holdout));
		if (nfit < 1 || nfit >= n)
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, NULL, "--holdout %g leaves %zu of "
				       "the %zu requests to fit and %zu to evaluate: both need at least "
				       "one", o->holdout, nfit, n, n - nfit);
	}
	const struct req_spec *req_ev = o->holdout > 0 ? x->w.req + nfit : x->w.req;
	size_t n_ev = o->holdout > 0 ? n - nfit : n;
	struct advise_collect cf = {{NULL, NULL}, {0, 0}, {0, 0}}, ce = cf;
	int rc = -1;
	char tmp[] = "/tmp/bucketsim-advise-XXXXXX";
	int fd = -1;
	struct advise_row rows[8];
	size_t nrows = 0;
	struct adv_set adv[2] = {{{{0}}}, {{{0}}}};
	struct blist lists[2] = {{0}, {0}}, advp[2] = {{0}, {0}};
	memset(rows, 0, sizeof rows);
	if (advise_simulate(x, x->w.req, nfit, "ideal", NULL, NULL, &cf, NULL, NULL, err))
		goto out;
	if (o->holdout > 0 && advise_simulate(x, req_ev, n_ev, "ideal", NULL, NULL, &ce, NULL, NULL, err))
		goto out;
	for (int ph = 0; ph < 2; ph++) {
		distinct(cf.a[ph], &cf.n[ph]);
		distinct(ce.a[ph], &ce.n[ph]);
	}
	struct advise_collect *cv = o->holdout > 0 ? &ce : &cf;
	struct cost_ctx cc;
	sim_costs_from_model(&cc.c, x->cm);
	cc.gather = !x->sp.contiguous_pa && cc.c.decode_gather;
	struct adv_cost c = {&cc, pass_ns, compile_ns};
	if ((fd = mkstemp(tmp)) < 0) {
		bs_errf(err, BS_EXIT_RUNTIME, tmp, 0, NULL, "cannot create a temporary file");
		goto out;
	}
	close(fd);

	if (o->nbudgets) {
		rc = advise_budget_curve(x, o, &cf, &c, tmp, out, err);
		goto out;
	}
	/* The advice.  A warm-up budget: the largest K whose advice warms up within it, found by
	 * bisection over 1..1024 (more buckets per phase warm up longer, nearly always). */
	size_t kmax = o->max_buckets;
	double wsec = 0;
	if (o->max_warmup_s > 0) {
		size_t lo = 0, hi = 1024;
		while (lo < hi) {
			size_t mid = (lo + hi + 1) / 2, km[2] = {mid, mid};
			struct adv_set t[2] = {{{{0}}}, {{{0}}}};
			struct blist tp[2] = {{0}, {0}}, *tpp = o->free_set ? tp : NULL;
			advise_product(cf.a, cf.n, km, NULL, &c, t, tpp);
			double w;
			int e = warm_lists(x, t, tpp, tmp, &cc, &w, err);
			adv_set_free(&t[0]), adv_set_free(&t[1]);
			blist_free(&tp[0]), blist_free(&tp[1]);
			if (e)
				goto out;
			if (w <= o->max_warmup_s)
				lo = mid, wsec = w;
			else
				hi = mid - 1;
		}
		if (!lo) {
			size_t k1[2] = {1, 1};
			struct adv_set t[2] = {{{{0}}}, {{{0}}}};
			struct blist tp[2] = {{0}, {0}}, *tpp = o->free_set ? tp : NULL;
			advise_product(cf.a, cf.n, k1, NULL, &c, t, tpp);
			double w = 0;
			int e = warm_lists(x, t, tpp, tmp, &cc, &w, err);
			adv_set_free(&t[0]), adv_set_free(&t[1]);
			blist_free(&tp[0]), blist_free(&tp[1]);
			if (!e)
				bs_errf(err, BS_EXIT_INPUT, NULL, 0, NULL, "--max-warmup-s %g: one bucket "
					"per phase already takes %.1f s to warm up", o->max_warmup_s, w);
			goto out;
		}
		kmax = lo;
	}
	size_t ks[2] = {kmax, kmax};
	advise_product(cf.a, cf.n, ks, NULL, &c, adv, o->free_set ? advp : NULL);
	struct advise_row *r = &rows[nrows++];
	snprintf(r->name, sizeof r->name, "advised");
	if (advise_evaluate(x, adv, o->free_set ? advp : NULL, tmp, cf.a, cf.n, cv->a, cv->n, req_ev,
		     n_ev, &c, r, lists, err))
		goto out;
	write_file(out, adv, o->free_set ? advp : NULL);
	fprintf(out, "# bucketsim buckets --advise: %zu requests fitted (%zu prompt, %zu decode "
		"distinct shapes), %zu evaluated%s; at most %zu buckets per phase, %s\n", nfit,
		cf.n[0], cf.n[1], n_ev, o->holdout > 0 ? " (the held-out rest)" : " (the same)", kmax,
		o->free_set ? "a free set of points" : "a product of per-dimension lists");
	if (o->max_warmup_s > 0)
		fprintf(out, "# --max-warmup-s %g: %zu buckets per phase, the most whose advice warms "
			"up within it (%.1f s by the cost model's compile time)\n", o->max_warmup_s,
			kmax, wsec);
	/* The lower bound on any set of at most kmax buckets per phase (bucket_advise.h), against
	 * the advice's expected cost on the fitted shapes (after the file strategy's filters). */
	fprintf(out, "# lower bound on the expected padding cost of any %zu buckets per phase "
		"(fitted shapes):", kmax);
	for (int ph = 0; ph < 2; ph++) {
		int64_t lb = adv_lower_bound(ph, cf.a[ph], cf.n[ph], kmax, &c);
		int64_t got = r->cost[ph];
		fprintf(out, "%s %s %.3f s, advice %.3f s, gap %.3f s (%.1f %%)", ph ? ";" : "",
			bucket_phase_name((enum phase)ph), (double)lb / 1e9, (double)got / 1e9,
			(double)(got - lb) / 1e9, got > 0 ? 100.0 * (double)(got - lb) / (double)got : 0.0);
	}
	fputc('\n', out);
	fprintf(out, "# loads as VLLM_BUCKETING_FROM_FILE=FILE (or bucketing.strategy=file "
		"bucketing.file=FILE): prompt %zu buckets, decode %zu\n", lists[0].n, lists[1].n);
	for (int ph = 0; ph < 2; ph++) {
		fprintf(out, "# %s buckets: ", bucket_phase_name((enum phase)ph));
		blist_print_py(&lists[ph], 3, out);
		fputc('\n', out);
	}
	if (o->free_set)
		fprintf(out, "# a free set of points has no VLLM_* range equivalent: the file is the "
			"setting\n");
	else if (print_env(x, adv, lists, out, err))
		goto out;
	for (int ph = 0; ph < 2; ph++)
		blist_free(&lists[ph]);

	/* The baselines, each with the advice at its own bucket counts. */
	static const char *const base[] = {"exponential", "linear", "padding_aware"};
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
		const struct bucket_strategy *st = bucket_strategy_find(base[i]);
		if (!bucket_strategy_gen(st, x->bp.version))
			continue;
		struct blist bl[2] = {{0}, {0}};
		r = &rows[nrows++];
		snprintf(r->name, sizeof r->name, "%s", base[i]);
		if (advise_simulate(x, req_ev, n_ev, base[i], NULL, NULL, NULL, &r->m, bl, err)) {
			blist_free(&bl[0]), blist_free(&bl[1]);
			goto out;
		}
		for (int ph = 0; ph < 2; ph++) {
			r->buckets[ph] = bl[ph].n;
			r->cost[ph] = adv_cost_list(ph, cf.a[ph], cf.n[ph], &bl[ph], &c);
			r->cost_eval[ph] = adv_cost_list(ph, cv->a[ph], cv->n[ph], &bl[ph], &c);
		}
		struct adv_set a2[2] = {{{{0}}}, {{{0}}}};
		struct blist p2[2] = {{0}, {0}}, *p2p = o->free_set ? p2 : NULL;
		size_t k2[2] = {bl[0].n, bl[1].n};
		advise_product(cf.a, cf.n, k2, bl, &c, a2, p2p);
		r = &rows[nrows++];
		snprintf(r->name, sizeof r->name, "advised@%s", base[i]);
		int e = advise_evaluate(x, a2, p2p, tmp, cf.a, cf.n, cv->a, cv->n, req_ev, n_ev, &c, r,
				 lists, err);
		for (int ph = 0; ph < 2; ph++) {
			adv_set_free(&a2[ph]);
			blist_free(&p2[ph]);
			blist_free(&bl[ph]);
			blist_free(&lists[ph]);
		}
		if (e)
			goto out;
	}
	bool ho = o->holdout > 0;
	fprintf(out, "# expected padding cost: seconds spent on padding (cost model time at the "
		"bucket minus at the real shape, over every pass) plus run-time compiles of uncovered "
		"shapes%s\n", ho ? "; fit = first part, held-out = the rest" : "");
	fprintf(out, "# %-22s %7s %7s %12s %12s", "set", "prompt", "decode", ho ? "fit_prompt_s" :
		"cost_prompt_s", ho ? "fit_decode_s" : "cost_decode_s");
	if (ho)
		fprintf(out, " %12s %12s", "held_prompt_s", "held_decode_s");
	fprintf(out, " %6s %6s %8s %6s %7s %8s %8s %7s %7s %8s\n", "waste", "warmup", "warmup_s",
		"rt_cmp", "rt_s", "ttft_p50", "ttft_p99", "tpot_50", "tpot_99", "tok/s");
	for (size_t i = 0; i < nrows; i++)
		print_row(out, &rows[i], ho);
	rc = 0;
out:
	if (fd >= 0)
		unlink(tmp);
	for (int ph = 0; ph < 2; ph++) {
		free(cf.a[ph]);
		free(ce.a[ph]);
		adv_set_free(&adv[ph]);
		blist_free(&advp[ph]);
		blist_free(&lists[ph]);
	}
	return rc;
}
