/*
 * bucket_advise_budgets: `bucketsim buckets --advise --budgets K1,K2,...`, one CSV row per
 * budget K (buckets per phase) for the advice at K and, per generated strategy, for the setting
 * of the strategy's own count knobs (steps, or limits) of least expected padding cost that warms
 * at most K buckets in each phase; every row re-simulated through advise_simulate
 * (policies/bucket_advise_run.c), so the table and the advice report measure alike.  The columns
 * are documented in policies/README.md.
 */
#include <stdlib.h>
#include <string.h>

#include "policies/bucket_advise.h"
#include "policies/bucket_advise_int.h"
#include "sim/csv_cell.h"

/* A configuration of the strategy's own count knobs: a copy of X's environment without any
 * bucket knob, plus, per phase with N[ph] > 0, every knob of the version that sets the phase's
 * resolution (policies' env lists: *_STEP for linear and padding-aware, *_LIMIT for the docs
 * exponential): a step of ceil(M / N), M the dimension's largest value in the strategy's default
 * lists, or a limit of N. */
static int knob_config(struct run_ctx *x, const struct bucket_strategy *st, const size_t *nk,
		       const int *fam, const int64_t (*minv)[3], const int64_t (*maxv)[3], struct config *tmp, char *knobs, size_t len,
		       struct bs_err *err)
{
	config_init(tmp);
	knobs[0] = 0;
	size_t o = 0;
	for (size_t i = 0; i < x->bp.cfg->nenv; i++) {
		const struct cfg_env *e = &x->bp.cfg->env[i];
		if (advise_is_bucket_knob(e->name))
			continue;
		char *a = xasprintf("%s=%s", e->name, e->value);
		int r = config_set_env_arg(tmp, a, CFG_ORIGIN_CMDLINE, err);
		free(a);
		if (r)
			return -1;
	}
	const char *const *env = x->bp.version == BUCKET_VERSION_CURRENT ? st->env_current
									  : st->env_docs;
	bool has_query = false;
	for (size_t i = 0; env && env[i]; i++)
		has_query |= strstr(env[i], "_QUERY_") != NULL;
	for (size_t i = 0; env && env[i]; i++) {
		const char *n = env[i];
		bool step = strlen(n) > 5 && !strcmp(n + strlen(n) - 5, "_STEP");
		bool limit = strlen(n) > 6 && !strcmp(n + strlen(n) - 6, "_LIMIT");
		if ((!step && !limit) || (has_query && strstr(n, "_SEQ_")))
			continue;
		int ph = !strncmp(n, "VLLM_DECODE_", 12) ? PHASE_DECODE : PHASE_PROMPT;
		if (!nk[ph])
			continue;
		int d = strstr(n, "_BS_") ? 0 : strstr(n, "_QUERY_") || strstr(n, "_SEQ_") ? 1 : 2;
		int64_t v = limit ? (int64_t)nk[ph]
				  : (maxv[ph][d] + (int64_t)nk[ph] - 1) / (int64_t)nk[ph];
		if (v < 1)
			v = 1;
		/* a step S: the range S, 2S, ... up to the first multiple at or above M (no
		 * doubling ramp below S; a dimension whose lists start at 0 keeps its 0) */
		int64_t vals[3] = {v, v, (maxv[ph][d] + v - 1) / v * v};
		const char *const par[3] = {"STEP", "MIN", "MAX"};
		size_t stem = strlen(n) - (limit ? 5 : 4);
		for (int q = 0; q < (limit || !fam[ph] ? 1 : 3); q++) {
			if (q == 1 && minv[ph][d] == 0)
				continue;
			char *a = limit ? xasprintf("%s=%lld", n, (long long)v)
					: xasprintf("%.*s%s=%lld", (int)stem, n, par[q],
						    (long long)vals[q]);
			if (o < len)
				o += (size_t)snprintf(knobs + o, len - o, "%s%s", o ? " " : "", a);
			int r = config_set_env_arg(tmp, a, CFG_ORIGIN_CMDLINE, err);
			free(a);
			if (r)
				return -1;
		}
	}
	return 0;
}

/* The warm-up lists of strategy ST under configuration CFG (NULL: X's), into L (counts only
 * when L is NULL); -1 when the strategy refuses the configuration. */
static int strategy_counts(struct run_ctx *x, const struct bucket_strategy *st,
			   const struct config *cfg, size_t *cnt, struct blist *l)
{
	struct bucket_params bp = x->bp;
	bp.strategy = st;
	if (cfg)
		bp.cfg = cfg;
	bp.warnings[0] = 0;
	struct bucketer *b = NULL;
	struct bs_err e = {0};
	if (bucketer_new(&bp, &b, &e))
		return -1;
	for (int ph = 0; ph < 2; ph++) {
		const struct bshape *a;
		cnt[ph] = bucketer_warmup_list(b, (enum phase)ph, &a);
		for (size_t i = 0; l && i < cnt[ph]; i++)
			blist_push(&l[ph], a[i].v[0], a[i].v[1], a[i].v[2], 0);
	}
	bucketer_free(b);
	return 0;
}

static void csv_num(FILE *f, double v, bool last)
{
	fprintf(f, "%.6g%c", v, last ? '\n' : ',');
}

static void budget_row(FILE *f, const char *st, size_t k, const char *version, const char *knobs,
		       const struct advise_row *r)
{
	csv_cell(f, st);
	fprintf(f, ",%zu,", k);
	csv_cell(f, version);
	fputc(',', f);
	csv_cell(f, knobs);
	fprintf(f, ",%zu,%zu,%lld,", r->buckets[0], r->buckets[1],
		(long long)r->m.compiles_warmup);
	csv_num(f, r->m.warmup_s, false);
	fprintf(f, "%lld,", (long long)r->m.compiles_runtime);
	csv_num(f, r->m.runtime_s, false);
	csv_num(f, r->m.waste, false);
	csv_num(f, (double)r->cost[0] / 1e9, false);
	csv_num(f, (double)r->cost[1] / 1e9, false);
	csv_num(f, r->m.ttft_p50, false);
	csv_num(f, r->m.tpot_p50, false);
	csv_num(f, r->m.tput, true);
}

/* One setting of a strategy's count knobs for one phase: family FAM (0: the steps, 1: the
 * steps with the minimum and maximum, knob_config), resolution N, and the
 * phase's buckets and expected padding cost on the fitted shapes under it. */
struct knob_cand {
	int fam;
	size_t n, cnt;
	int64_t cost;
};

/* --budgets: per budget K (buckets per phase), the advice at K; per generated strategy and K,
 * for each phase the setting of its own count knobs of least expected padding cost among those
 * that warm at most K buckets; each re-simulated.  One CSV row each. */
int advise_budget_curve(struct run_ctx *x, const struct advise_opts *o, struct advise_collect *cf,
			const struct adv_cost *c, const char *tmp, FILE *out, struct bs_err *err)
{
	static const char *const base[] = {"exponential", "linear", "padding_aware"};
	const char *ver = x->bp.version == BUCKET_VERSION_CURRENT ? "current" : "docs";
	size_t kmax = 0;
	for (size_t bi = 0; bi < o->nbudgets; bi++)
		if (o->budgets[bi] > kmax)
			kmax = o->budgets[bi];
	fputs("strategy,budget,bucketing.version,knobs,buckets_prompt,buckets_decode,"
	      "compiles_warmup,warmup_s,compiles_runtime,runtime_compile_s,padding_waste_ratio,"
	      "cost_prompt_s,cost_decode_s,median_ttft_ms,median_tpot_ms,output_throughput\n", out);
	struct advise_row r;
	for (size_t bi = 0; bi < o->nbudgets; bi++) {
		size_t k = o->budgets[bi];
		memset(&r, 0, sizeof r);
		struct adv_set adv[2] = {{{{0}}}, {{{0}}}};
		struct blist l[2] = {{0}, {0}};
		size_t ks[2] = {k, k};
		advise_product(cf->a, cf->n, ks, NULL, c, adv, NULL);
		int e = advise_evaluate(x, adv, NULL, tmp, cf->a, cf->n, cf->a, cf->n, x->w.req, x->w.n, c,
				 &r, l, err);
		adv_set_free(&adv[0]), adv_set_free(&adv[1]);
		blist_free(&l[0]), blist_free(&l[1]);
		if (e)
			return -1;
		budget_row(out, "advised", k, ver, "", &r);
	}
	for (size_t si = 0; si < sizeof base / sizeof base[0]; si++) {
		const struct bucket_strategy *st = bucket_strategy_find(base[si]);
		if (!bucket_strategy_gen(st, x->bp.version))
			continue;
		/* the default lists: each dimension's least and largest values */
		struct blist dl[2] = {{0}, {0}};
		size_t dc[2];
		int64_t maxv[2][3] = {{1, 1, 1}, {1, 1, 1}};
		int64_t minv[2][3] = {{INT64_MAX, INT64_MAX, INT64_MAX},
				      {INT64_MAX, INT64_MAX, INT64_MAX}};
		if (strategy_counts(x, st, NULL, dc, dl))
			continue;
		for (int ph = 0; ph < 2; ph++) {
			for (size_t i = 0; i < dl[ph].n; i++)
				for (int d = 0; d < 3; d++) {
					if (dl[ph].a[i].v[d] > maxv[ph][d])
						maxv[ph][d] = dl[ph].a[i].v[d];
					if (dl[ph].a[i].v[d] < minv[ph][d])
						minv[ph][d] = dl[ph].a[i].v[d];
				}
			blist_free(&dl[ph]);
		}
		/* every setting per phase up to the largest budget: resolutions N of 1, 2, 4, ...
		 * for steps, 1..64 for limits (the counts grow with N) */
		bool lim = st == bucket_strategy_find("exponential"), any_knob = false;
		struct knob_cand *cand[2] = {NULL, NULL};
		size_t ncand[2] = {0, 0};
		for (int fam = 0; fam < (lim ? 1 : 2); fam++) {
			bool over[2] = {false, false};
			for (size_t n = 1; n <= (lim ? 64 : 65536) && !(over[0] && over[1]);
			     n = lim ? n + 1 : 2 * n)
				for (int ph = 0; ph < 2; ph++) {
					if (over[ph])
						continue;
					size_t nk[2] = {0, 0}, cnt[2];
					int fm[2] = {fam, fam};
					nk[ph] = n;
					struct config tc;
					char kb[1024];
					struct blist cl[2] = {{0}, {0}};
					if (knob_config(x, st, nk, fm, (const int64_t (*)[3])minv,
							(const int64_t (*)[3])maxv, &tc, kb, sizeof kb,
							err)) {
						config_release(&tc);
						free(cand[0]), free(cand[1]);
						return -1;
					}
					any_knob |= kb[0] != 0;
					if (!kb[0] || strategy_counts(x, st, &tc, cnt, cl) || cnt[ph] > kmax) {
						over[ph] = true;
					} else {
						cand[ph] = xrealloc(cand[ph], (ncand[ph] + 1) * sizeof *cand[ph]);
						cand[ph][ncand[ph]++] = (struct knob_cand){fam, n, cnt[ph],
							adv_cost_list(ph, cf->a[ph], cf->n[ph], &cl[ph], c)};
					}
					blist_free(&cl[0]), blist_free(&cl[1]);
					config_release(&tc);
				}
		}
		for (size_t bi = 0; bi < o->nbudgets; bi++) {
			size_t k = o->budgets[bi];
			const struct knob_cand *best[2] = {NULL, NULL};
			for (int ph = 0; ph < 2; ph++)
				for (size_t i = 0; i < ncand[ph]; i++)
					if (cand[ph][i].cnt <= k &&
					    (!best[ph] || cand[ph][i].cost < best[ph]->cost))
						best[ph] = &cand[ph][i];
			char kb[1024];
			struct config tc;
			if (!any_knob) {
				/* no count knob in this version: its own lists, once */
				if (bi)
					continue;
				config_init(&tc);
				snprintf(kb, sizeof kb, "none (no count knob in version %s)", ver);
			} else {
				if (!best[0] || !best[1])
					continue;   /* cannot warm as few as K buckets in a phase */
				size_t nk[2] = {best[0]->n, best[1]->n};
				int fm[2] = {best[0]->fam, best[1]->fam};
				if (knob_config(x, st, nk, fm, (const int64_t (*)[3])minv,
						(const int64_t (*)[3])maxv, &tc, kb, sizeof kb, err)) {
					config_release(&tc);
					free(cand[0]), free(cand[1]);
					return -1;
				}
			}
			memset(&r, 0, sizeof r);
			struct blist bl[2] = {{0}, {0}};
			int e = advise_simulate(x, x->w.req, x->w.n, base[si], NULL,
						any_knob ? &tc : NULL, NULL, &r.m, bl, err);
			config_release(&tc);
			if (e) {
				blist_free(&bl[0]), blist_free(&bl[1]);
				free(cand[0]), free(cand[1]);
				return -1;
			}
			for (int ph = 0; ph < 2; ph++) {
				r.buckets[ph] = bl[ph].n;
				r.cost[ph] = adv_cost_list(ph, cf->a[ph], cf->n[ph], &bl[ph], c);
				blist_free(&bl[ph]);
			}
			budget_row(out, base[si], any_knob ? k : 0, ver, kb, &r);
		}
		free(cand[0]), free(cand[1]);
	}
	return 0;
}
