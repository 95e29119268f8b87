/*
 * calib: fits the cost model of one chip to the measurement rows (read by calib_csv.c).
 *
 * Pass-time fit: GSL nonlinear least squares (gsl_multifit_nlinear, trust region, finite
 * difference Jacobian) on the relative error predicted/measured - 1 of
 *   - the static-batch throughput rows (throughput_generated_tokens) of the chip and software
 *     version asked for, predicted by eval_static_batch();
 *   - the per-pass prefill latency rows (prefill_forward_latency; the only per-pass and TP data);
 *     rows of another software version are fitted with one extra version scale (predicted
 *     time x s, a nuisance parameter reported but not written to the profile), so they
 *     constrain how a pass grows with length and TP but not its level;
 *   - the CI short-prompt rows (run_generation.py's default prompt, any version, reuse_cache
 *     on): the only decode-dominated rows at small context, which pin the per-pass overhead;
 * plus one weak prior residual per parameter, 0.1 (theta - theta0) / 1.5 in the
 * transformed space (logit for efficiencies, log for the rest), which keeps parameters the rows
 * cannot see at their physical prior instead of letting them drift.  Standard errors come from
 * the covariance (J^T J)^-1 scaled by chi2 / (n - p), mapped to physical units by the delta
 * method.  Rows the source flags as doubtful are kept out and reported.
 *
 * Compile fit: weighted linear least squares (relative error) of t = c0 + c1 * tokens on the
 * warm-up rows whose bucket sets the sources describe (see warm[] below).
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/calib_int.h"

/* Prior residual = CALIB_PRIOR_WEIGHT * (theta - theta0) / CALIB_PRIOR_SIGMA: a parameter one
 * sigma (1.5 logit or log units) from its prior weighs as much as one row 10 % off. */
#define CALIB_PRIOR_SIGMA 1.5
#define CALIB_PRIOR_WEIGHT 0.1

/* ---- transforms ---- */

double perf_to_theta(int i, double phys)
{
	if (perf_param_is_eff[i])
		return log(phys / (1 - phys));
	return log(phys * perf_param_json_scale[i]);
}

double perf_from_theta(int i, double theta)
{
	if (perf_param_is_eff[i])
		return 1 / (1 + exp(-theta));
	return exp(theta) / perf_param_json_scale[i];
}

/* d phys / d theta */
static double perf_dtheta(int i, double theta)
{
	if (perf_param_is_eff[i]) {
		double s = 1 / (1 + exp(-theta));
		return s * (1 - s);
	}
	return exp(theta) / perf_param_json_scale[i];
}

void calib_default_start(struct perf_params *p)
{
	/* Physical priors: GEMM efficiency of large shapes ~0.9 (README section 5), thin-GEMM knee
	 * at a few hundred tokens, weight streaming ~0.8 of peak bandwidth, paged KV gathers well
	 * below that, attention at a third of peak, a few ms per pass, tens of us per all-reduce. */
	p->v[PP_ETA_COMPUTE] = 0.85;
	p->v[PP_N_HALF] = 256;
	p->v[PP_ETA_WEIGHTS] = 0.8;
	p->v[PP_ETA_KV] = 0.5;
	p->v[PP_ETA_ATTN] = 0.35;
	p->v[PP_T_PASS] = 1e-3;
	p->v[PP_T_ALLREDUCE] = 30e-6;
	p->v[PP_AR_OVERLAP] = 0.5;
}

/* ---- the pass-time fit ---- */

struct fit_ctx {
	const struct calib_row *rows;
	const struct calib_eval *ev;
	size_t nev;
	const size_t *fit_idx;      /* indexes into ev of the fitted rows */
	size_t nfit;
	struct hw_spec hw;
	struct model_arch *models;  /* per fitted row */
	double theta0[PP_COUNT];
	double prior_weight;
	int nx;                     /* PP_COUNT, plus 1 when a version scale is fitted */
};

static double predict_row(const struct calib_row *r, const struct hw_spec *hw,
			  const struct model_arch *m, const struct perf_params *p)
{
	struct eval_ctx e;
	/* The fp8 rows are Intel Neural Compressor maxabs_quant runs, which quantise the KV cache
	 * and the attention matmuls as well as the linear layers.  The decode rows are GPU
	 * operator measurements with 16-token blocks (the block size of the profile they come
	 * from, models/data/PROVENANCE.md): the context is read in whole blocks of 16. */
	int block = r->kind == CALIB_DECODE ? CALIB_DECODE_BLOCK : 128;
	eval_setup(&e, hw, m, p, r->tp, r->fp8, r->fp8, block);
	if (r->kind == CALIB_DECODE)
		return eval_decode(&e, r->bs, r->bs * ceil(r->in / block), NULL) * 1e3;
	if (r->kind == CALIB_LINEAR)
		return eval_linear(&e, r->bs * r->in, NULL) * 1e3;
	if (r->kind == CALIB_PREFILL)
		return eval_prefill(&e, r->bs, r->in, 0, NULL) * 1e3;  /* ms */
	if (r->kind == CALIB_LATENCY)
		return eval_prefill(&e, 1, r->in, 0, NULL) * 1e3;
	struct static_batch sb;
	eval_static_batch(&e, r->bs, r->in, r->out, &sb);
	return sb.throughput;
}

static void theta_to_params(const gsl_vector *x, struct perf_params *p)
{
	for (int i = 0; i < PP_COUNT; i++)
		p->v[i] = perf_from_theta(i, gsl_vector_get(x, i));
}

static int resid(const gsl_vector *x, void *data, gsl_vector *f)
{
	struct fit_ctx *c = data;
	struct perf_params p;
	theta_to_params(x, &p);
	for (size_t k = 0; k < c->nfit; k++) {
		const struct calib_eval *ev = &c->ev[c->fit_idx[k]];
		double pred = predict_row(&c->rows[ev->row], &c->hw, &c->models[k], &p);
		if (ev->scaled)
			pred *= exp(gsl_vector_get(x, PP_COUNT));
		gsl_vector_set(f, k, pred / ev->measured - 1);
	}
	for (int i = 0; i < c->nx; i++) {
		double th0 = i < PP_COUNT ? c->theta0[i] : 0;
		gsl_vector_set(f, c->nfit + i, c->prior_weight * (gsl_vector_get(x, i) - th0) / CALIB_PRIOR_SIGMA);
	}
	return GSL_SUCCESS;
}

static const char *family_of(const struct calib_row *r, bool other_sw)
{
	if (r->kind == CALIB_PREFILL)
		return other_sw ? "prefill latency other sw, tp>1" : "prefill latency, tp>1";
	if (r->kind == CALIB_LATENCY)
		return r->tp > 1 ? "low-latency table, tp>1" : "low-latency table, tp=1";
	if (r->kind == CALIB_DECODE)
		return r->tp > 1 ? "decode latency, tp>1" : "decode latency, tp=1";
	if (r->kind == CALIB_LINEAR)
		return r->tp > 1 ? "pass without attention, tp>1" : "pass without attention, tp=1";
	if (r->short_prompt)
		return r->tp > 1 ? "short-prompt decode (CI), tp>1" : "short-prompt decode (CI), tp=1";
	if (other_sw)
		return r->tp > 1 ? "throughput other sw, tp>1" : "throughput other sw, tp=1";
	return r->tp > 1 ? "throughput, tp>1" : "throughput, tp=1";
}

static void add_family(struct calib_result *res, const struct calib_eval *ev)
{
	int i;
	for (i = 0; i < res->nfam; i++)
		if (!strcmp(res->fam[i].name, ev->family) && res->fam[i].use == ev->use)
			break;
	if (i == res->nfam) {
		if (res->nfam == (int)(sizeof res->fam / sizeof res->fam[0]))
			return;
		memset(&res->fam[i], 0, sizeof res->fam[i]);
		snprintf(res->fam[i].name, sizeof res->fam[i].name, "%s", ev->family);
		res->fam[i].use = ev->use;
		res->nfam++;
	}
	struct family_stat *f = &res->fam[i];
	double a = fabs(ev->err);
	f->mape = (f->mape * f->n + a) / (f->n + 1);
	f->n++;
	if (a > f->maxerr)
		f->maxerr = a;
}

int calib_version_stats(const struct calib_row *rows, const struct calib_result *res,
			struct family_stat *out, int max)
{
	int nv = 0;
	for (size_t k = 0; k < res->nev; k++) {
		const struct calib_eval *ev = &res->ev[k];
		const struct calib_row *r = &rows[ev->row];
		if (r->kind != CALIB_THROUGHPUT)
			continue;
		const char *v = r->software[0] ? r->software : "unknown";
		int i;
		for (i = 0; i < nv; i++)
			if (!strcmp(out[i].name, v))
				break;
		if (i == nv) {
			if (nv == max)
				continue;
			memset(&out[i], 0, sizeof out[i]);
			snprintf(out[i].name, sizeof out[i].name, "%s", v);
			out[i].use = USE_CHECK;
			nv++;
		}
		struct family_stat *f = &out[i];
		double a = fabs(ev->err);
		f->mape = (f->mape * f->n + a) / (f->n + 1);
		f->n++;
		if (a > f->maxerr)
			f->maxerr = a;
		if (ev->use == USE_FIT)
			f->use = USE_FIT;
	}
	return nv;
}

/* ---- the compile fit ---- */

/* A warm-up case: a CSV row (by metric and, for repeated metrics, value) and the bucket set its
 * source describes.  Prompt buckets are bs x query (tokens = bs * query), decode buckets have
 * bs tokens. */
struct warm_case {
	const char *name;
	const char *metric;
	double value;             /* 0: the metric is unique in the file */
	bool fitted;
	int kind;                 /* 0 total of compiles (+captures), 1 mean per prompt bucket,
				   * 2 mean per decode bucket */
	int prompt_set, decode_set;   /* bucket sets below */
	int captures;
	bool fp8;
};

/* Bucket sets.  0 none; 1 the warmup.md / performance_tuning.md log (max-num-seqs 4, block 128,
 * prompt bs {1,2,4} x query 128..1024 step 128, decode bs {1,2,4} x 16 context steps); 2 the
 * single decode bucket (4, 128); 3 managing_warm-up.md (APPROXIMATE: exponential buckets, prompt
 * bs 1..256 x query {128,256,512,1024} within 8192 batched tokens, decode bs 1..128 x 4 block
 * steps). */
static void bucket_set(int set, bool prompt, double *n, double *tokens)
{
	*n = 0;
	*tokens = 0;
	if (set == 1 && prompt) {
		for (int bs = 1; bs <= 4; bs *= 2)
			for (int q = 128; q <= 1024; q += 128) {
				(*n)++;
				*tokens += (double)bs * q;
			}
	} else if (set == 1) {
		for (int bs = 1; bs <= 4; bs *= 2) {
			*n += 16;
			*tokens += 16.0 * bs;
		}
	} else if (set == 2 && !prompt) {
		*n = 1;
		*tokens = 4;
	} else if (set == 3 && prompt) {
		for (int q = 128; q <= 1024; q *= 2)
			for (int bs = 1; bs <= 256 && bs * q <= 8192; bs *= 2) {
				(*n)++;
				*tokens += (double)bs * q;
			}
	} else if (set == 3) {
		for (int bs = 1; bs <= 128; bs *= 2) {
			*n += 4;
			*tokens += 4.0 * bs;
		}
	}
}

static const struct warm_case warm[] = {
	{"compile phase, 72 buckets (warmup.md)", "derived_warmup_compile_phase", 0, true, 0, 1, 1, 0, false},
	{"warm-up total 32 s (performance_tuning.md)", "warmup_total", 32, true, 0, 1, 2, 25, false},
	{"prompt bucket mean (warmup.md)", "derived_prompt_bucket_warmup_per_bucket", 0, true, 1, 1, 0, 0, false},
	{"decode bucket mean (warmup.md)", "derived_decode_bucket_warmup_per_bucket", 0, true, 2, 0, 1, 0, false},
	{"warm-up total 49 s (warmup.md)", "warmup_total", 49, false, 0, 1, 1, 63, false},
	{"warm-up 66 s bf16 (managing_warm-up.md, approx. buckets)", "warmup_time_no_recipe_cache", 66, false, 0, 3, 3, 54, false},
	{"warm-up 504 s fp8 (managing_warm-up.md, approx. buckets)", "warmup_time_no_recipe_cache", 504, false, 0, 3, 3, 54, true},
};

static const struct calib_row *find_metric(const struct calib_row *rows, size_t n,
					   const char *metric, double value)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].metric, metric) && (value == 0 || rows[i].value == value))
			return &rows[i];
	return NULL;
}

/* Design row of a case: measured = a * c0 + b * c1 + k (for fp8 cases c0, c1 scaled). */
static void warm_design(const struct warm_case *w, double capture, double *a, double *b, double *k)
{
	double np, tp_, nd, td;
	bucket_set(w->prompt_set, true, &np, &tp_);
	bucket_set(w->decode_set, false, &nd, &td);
	if (w->kind == 1) {
		*a = 1;
		*b = tp_ / np;
		*k = 0;
	} else if (w->kind == 2) {
		*a = 1;
		*b = td / nd;
		*k = 0;
	} else {
		*a = np + nd;
		*b = tp_ + td;
		*k = w->captures * capture;
	}
}

static int fit_compile(const struct calib_row *rows, size_t n, struct calib_result *res,
		       struct bs_err *err)
{
	struct compile_params keep = res->c, fitted = res->c;
	struct compile_params *c = &fitted;
	const struct calib_row *r;
	/* Fixed from single rows (each is a direct measurement of the quantity). */
	r = find_metric(rows, n, "derived_graph_capture_phase", 0);
	c->capture = r && r->value > 0 ? r->value / 63 : 0.33;  /* 21 s for 63 graphs */
	const struct calib_row *bf = find_metric(rows, n, "warmup_time_no_recipe_cache", 66);
	const struct calib_row *f8 = find_metric(rows, n, "warmup_time_no_recipe_cache", 504);
	c->fp8_factor = bf && f8 ? f8->value / bf->value : 1;
	c->runtime = 0.3;  /* "one-time 200-400 ms penalty per unseen shape" (PR #1160): midpoint */
	c->kv_latency = 50e-6;

	/* Rows: the described cases plus issue #201's per-bucket times (tokens = bs x query). */
	size_t m = 0, cap = 32;
	gsl_matrix *X = gsl_matrix_alloc(cap, 2);
	gsl_vector *y = gsl_vector_alloc(cap);
	for (size_t i = 0; i < sizeof warm / sizeof warm[0]; i++) {
		if (!warm[i].fitted || !(r = find_metric(rows, n, warm[i].metric, warm[i].value)))
			continue;
		double a, b, k;
		warm_design(&warm[i], c->capture, &a, &b, &k);
		gsl_matrix_set(X, m, 0, a / r->value);
		gsl_matrix_set(X, m, 1, b / r->value);
		gsl_vector_set(y, m, 1 - k / r->value);
		m++;
	}
	for (size_t i = 0; i < n && m < cap; i++) {
		r = &rows[i];
		if (strcmp(r->metric, "derived_prompt_bucket_warmup_time") || isnan(r->value) ||
		    isnan(r->bs) || isnan(r->in))
			continue;
		gsl_matrix_set(X, m, 0, 1 / r->value);
		gsl_matrix_set(X, m, 1, r->bs * r->in / r->value);
		gsl_vector_set(y, m, 1);
		m++;
	}
	int rc = 0;
	if (m < 3) {
		/* Too few warm-up rows: keep the profile's compile constants. */
		res->c = keep;
		res->compile_fitted = false;
		gsl_matrix_free(X);
		gsl_vector_free(y);
		return 0;
	} else {
		res->compile_fitted = true;
		gsl_matrix_view Xv = gsl_matrix_submatrix(X, 0, 0, m, 2);
		gsl_vector_view yv = gsl_vector_subvector(y, 0, m);
		gsl_vector *cv = gsl_vector_alloc(2);
		gsl_matrix *cov = gsl_matrix_alloc(2, 2);
		gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(m, 2);
		double chi2;
		int st = gsl_multifit_linear(&Xv.matrix, &yv.vector, cv, cov, &chi2, w);
		if (st) {
			rc = bs_errf(err, BS_EXIT_RUNTIME, NULL, 0, NULL, "compile fit failed: %s",
				     gsl_strerror(st));
		} else {
			double s2 = chi2 / (double)(m - 2);
			c->c0 = gsl_vector_get(cv, 0);
			c->c1 = gsl_vector_get(cv, 1);
			res->c0_se = sqrt(gsl_matrix_get(cov, 0, 0) * s2);
			res->c1_se = sqrt(gsl_matrix_get(cov, 1, 1) * s2);
			if (c->c0 < 0 || c->c1 < 0)
				rc = bs_errf(err, BS_EXIT_INPUT, NULL, 0, NULL,
					     "compile fit gave a negative constant (c0 %g s, c1 %g s)",
					     c->c0, c->c1);
		}
		gsl_multifit_linear_free(w);
		gsl_matrix_free(cov);
		gsl_vector_free(cv);
	}
	gsl_matrix_free(X);
	gsl_vector_free(y);
	if (rc)
		return rc;
	res->c = fitted;
	/* Report every described case, fitted or not. */
	res->ncomp = 0;
	for (size_t i = 0; i < sizeof warm / sizeof warm[0]; i++) {
		if (!(r = find_metric(rows, n, warm[i].metric, warm[i].value)))
			continue;
		double a, b, k;
		warm_design(&warm[i], c->capture, &a, &b, &k);
		double mult = warm[i].fp8 ? c->fp8_factor : 1;
		int j = res->ncomp++;
		snprintf(res->comp[j].name, sizeof res->comp[j].name, "%s", warm[i].name);
		res->comp[j].measured = r->value;
		res->comp[j].predicted = (a * c->c0 + b * c->c1) * mult + k;
		res->comp[j].fitted = warm[i].fitted;
	}
	return 0;
}

/* Why a row is not evaluated for hardware HW (LEFT_KEPT: it is). */
enum left_out { LEFT_OTHER_HW, LEFT_UNKNOWN_HW, LEFT_MODEL, LEFT_METRIC, LEFT_SHAPE, LEFT_N,
		LEFT_KEPT = -1 };

static int left_out(const struct calib_row *r, const char *hw)
{
	if (!r->hw[0])
		return LEFT_UNKNOWN_HW;
	if (strcmp(r->hw, hw))
		return LEFT_OTHER_HW;
	if (r->kind == CALIB_OTHER)
		return LEFT_METRIC;
	if (!r->model[0])
		return LEFT_MODEL;
	bool thr = r->kind == CALIB_THROUGHPUT;
	if (r->kind != CALIB_LATENCY && (isnan(r->in) || isnan(r->bs) || r->in < 1 || r->bs < 1 ||
					 (thr && (isnan(r->out) || r->out < 1))))
		return LEFT_SHAPE;
	if (r->kind == CALIB_LATENCY && (isnan(r->in) || isnan(r->value)))
		return LEFT_SHAPE;
	return LEFT_KEPT;
}

/* The words of reason WHY, the lists from their tables (calib_hw_names, calib_metrics). */
static void left_out_what(enum left_out why, char *buf, size_t size)
{
	size_t o = 0;
	switch (why) {
	case LEFT_OTHER_HW:
		snprintf(buf, size, "of other hardware");
		return;
	case LEFT_MODEL:
		snprintf(buf, size, "of a model not in models.json");
		return;
	case LEFT_SHAPE:
		snprintf(buf, size, "without a numeric shape (input_len, output_len, batch_size)");
		return;
	case LEFT_UNKNOWN_HW:
		o = (size_t)snprintf(buf, size, "of hardware not recognised (");
		for (int i = 0; calib_hw_names[i] && o < size; i++)
			o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", calib_hw_names[i]);
		break;
	default:
		o = (size_t)snprintf(buf, size, "of a metric not fitted (");
		for (int i = 0; calib_metrics[i].name && o < size; i++)
			o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "",
					      calib_metrics[i].name);
		break;
	}
	if (o < size)
		snprintf(buf + o, size - o, ")");
}

static int cmp_version(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --software names a version some row of the hardware has (read from its source or notes):
 * an empty or unknown one would leave every row of the hardware "another version" (or, empty,
 * take the rows that name none for the version asked for).  The error lists the versions of
 * the hardware's rows.  Data without a row of the hardware is left to the fit's own error. */
static int software_check(const struct calib_row *rows, size_t n, const struct calib_opts *o,
			  struct bs_err *err)
{
	const char *v[32];
	size_t nv = 0, nhw = 0;
	for (size_t i = 0; i < n; i++) {
		const struct calib_row *r = &rows[i];
		if (strcmp(r->hw, o->hw))
			continue;
		nhw++;
		if (!r->software[0])
			continue;
		if (!strcmp(r->software, o->software))
			return 0;
		size_t j = 0;
		while (j < nv && strcmp(v[j], r->software))
			j++;
		if (j == nv && nv < sizeof v / sizeof *v)
			v[nv++] = r->software;
	}
	if (!nhw)
		return 0;
	qsort(v, nv, sizeof *v, cmp_version);
	char list[32 * 18] = "";
	size_t len = 0;
	for (size_t j = 0; j < nv; j++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", j ? ", " : "", v[j]);
	return bs_errf(err, BS_EXIT_INPUT, o->data, 0, NULL,
		       "--software '%s': no row of hardware '%s' is of that version (%s%s; a row's "
		       "version is read from its source or notes, as 'SynapseAI 1.20')",
		       o->software, o->hw, nv ? "versions of its rows: " : "its rows name none",
		       list);
}

int calib_fit(const struct calib_row *rows, size_t n, const struct calib_opts *o,
	      struct calib_result *res, struct bs_err *err)
{
	memset(res, 0, sizeof *res);
	struct hw_spec hw;
	struct perf_params p0;
	struct compile_params c0;
	if (profile_load_hw(o->hw, &hw, &p0, &c0, err))
		return -1;
	if (o->software && software_check(rows, n, o, err))
		return -1;
	res->c = c0;
	snprintf(res->hw, sizeof res->hw, "%s", o->hw);
	res->ev = xcalloc(n ? n : 1, sizeof *res->ev);
	size_t *fit_idx = xcalloc(n, sizeof *fit_idx);
	struct model_arch *models = xcalloc(n, sizeof *models);
	size_t nfit = 0;
	/* Rows left out, by reason (enum left_out), each with its first line: said when too few
	 * are left. */
	struct {
		size_t n;
		long line;
	} left[LEFT_N] = {{0, 0}};
	for (size_t i = 0; i < n; i++) {
		const struct calib_row *r = &rows[i];
		bool thr = r->kind == CALIB_THROUGHPUT, pre = r->kind == CALIB_PREFILL;
		int why = left_out(r, o->hw);
		if (why != LEFT_KEPT) {
			if (!left[why].n++)
				left[why].line = r->record;
			continue;
		}
		struct calib_eval *ev = &res->ev[res->nev];
		ev->row = i;
		ev->measured = r->value;
		bool lat = r->kind == CALIB_LATENCY;
		bool other_sw = (thr || pre) && o->software && strcmp(r->software, o->software);
		snprintf(ev->family, sizeof ev->family, "%s", family_of(r, other_sw));
		/* Per-pass prefill rows of another version are fitted with a version scale: they
		 * constrain how a pass grows with length and TP, not its absolute level. */
		bool scaled = pre && other_sw && o->use_prefill_rows && !r->doubtful;
		/* The CI short-prompt rows (default prompt, 100 new tokens) are the only
		 * decode-dominated small-context data: fitted whatever their version, except
		 * runs without reuse_cache (another KV-cache path). */
		bool anchor = thr && r->short_prompt && !r->no_reuse_cache;
		if (r->held_out) {
			ev->use = USE_CHECK;
			snprintf(ev->why, sizeof ev->why, "held out");
		} else if (r->doubtful) {
			ev->use = USE_CHECK;
			snprintf(ev->why, sizeof ev->why, "flagged doubtful by the source");
		} else if (lat) {
			ev->use = USE_CHECK;
			snprintf(ev->why, sizeof ev->why, "latency definition not given");
		} else if (thr && r->short_prompt && r->no_reuse_cache) {
			ev->use = USE_CHECK;
			snprintf(ev->why, sizeof ev->why, "reuse_cache=False");
		} else if (other_sw && !scaled && !anchor) {
			ev->use = USE_CHECK;
			snprintf(ev->why, sizeof ev->why, "software %s", r->software[0] ? r->software : "unknown");
		} else if (pre && !o->use_prefill_rows) {
			ev->use = USE_CHECK;
			snprintf(ev->why, sizeof ev->why, "prefill rows not fitted");
		} else {
			ev->use = USE_FIT;
			ev->scaled = scaled;
			res->n_scaled += scaled;
			struct bs_err e2 = {0};
			profile_load_model(r->model, &models[nfit], &e2);
			fit_idx[nfit++] = res->nev;
		}
		res->nev++;
	}
	int rc = 0;
	/* The version-scaled and short-prompt rows only supplement rows of the version asked for. */
	size_t nmain = 0;
	for (size_t k = 0; k < nfit; k++) {
		const struct calib_eval *ev = &res->ev[fit_idx[k]];
		nmain += !ev->scaled && !rows[ev->row].short_prompt;
	}
	if (nmain < 3) {
		/* Why the others were left out: counts by reason with the first line of each, and
		 * the rows kept only to check the fit (their reasons are in the report). */
		char why[400] = "";
		size_t len = 0, nchk = 0;
		for (int k = 0; k < LEFT_N && len < sizeof why; k++)
			if (left[k].n) {
				char what[160];
				left_out_what((enum left_out)k, what, sizeof what);
				len += (size_t)snprintf(why + len, sizeof why - len, "; %zu %s (line %ld)",
							left[k].n, what, left[k].line);
			}
		for (size_t k = 0; k < res->nev; k++)
			nchk += res->ev[k].use == USE_CHECK;
		if (nchk && len < sizeof why)
			snprintf(why + len, sizeof why - len, "; %zu only checked (doubtful, another "
				 "software version, ...: see the report)", nchk);
		rc = bs_errf(err, BS_EXIT_INPUT, o->data, 0, NULL,
			     "only %zu usable row%s for hardware '%s'%s%s (3 needed)%s", nmain,
			     nmain == 1 ? "" : "s", o->hw, o->software ? " and software " : "",
			     o->software ? o->software : "", why);
		goto out;
	}
	int nx = PP_COUNT + (res->n_scaled > 0);
	struct fit_ctx ctx = {rows, res->ev, res->nev, fit_idx, nfit, hw, models, {0},
			      o->no_priors ? 0 : CALIB_PRIOR_WEIGHT, nx};
	for (int i = 0; i < PP_COUNT; i++)
		ctx.theta0[i] = perf_to_theta(i, o->start.v[i]);
	size_t nr = nfit + (size_t)nx;
	gsl_multifit_nlinear_fdf fdf = {0};
	fdf.f = resid;
	fdf.n = nr;
	fdf.p = (size_t)nx;
	fdf.params = &ctx;
	gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *w =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nr, (size_t)nx);
	gsl_vector *x = gsl_vector_alloc((size_t)nx), *best = gsl_vector_alloc((size_t)nx);
	gsl_matrix *cov = gsl_matrix_alloc((size_t)nx, (size_t)nx);
	double best_chi2 = INFINITY;
	/* A few deterministic starts: the prior centre and shifted corners (the max() terms make
	 * the surface piecewise smooth, so one start can stall on a kink). */
	static const double shifts[][PP_COUNT + 1] = {
		{0, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 1, 0.5, -1, -1, 0.7, 0.5, 1, 0},
		{-0.5, -1, -0.5, 1, 1, -0.7, -0.5, -1, 0},
	};
	for (size_t s = 0; s < sizeof shifts / sizeof shifts[0]; s++) {
		for (int i = 0; i < nx; i++)
			gsl_vector_set(x, i, (i < PP_COUNT ? ctx.theta0[i] : 0) + shifts[s][i]);
		int st = gsl_multifit_nlinear_init(x, &fdf, w);
		int info = 0;
		if (!st)
			st = gsl_multifit_nlinear_driver(300, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
		if (st && st != GSL_EMAXITER)
			continue;
		gsl_vector *f = gsl_multifit_nlinear_residual(w);
		double chi2;
		gsl_blas_ddot(f, f, &chi2);
		if (chi2 < best_chi2) {
			best_chi2 = chi2;
			gsl_vector_memcpy(best, gsl_multifit_nlinear_position(w));
			res->iterations = (int)gsl_multifit_nlinear_niter(w);
			res->status = st;
		}
	}
	if (!isfinite(best_chi2)) {
		rc = bs_errf(err, BS_EXIT_RUNTIME, NULL, 0, NULL, "the nonlinear fit did not run");
	} else {
		/* Re-evaluate at the best point for the Jacobian and the covariance. */
		gsl_multifit_nlinear_init(best, &fdf, w);
		gsl_matrix *J = gsl_multifit_nlinear_jac(w);
		gsl_multifit_nlinear_covar(J, 0.0, cov);
		res->chi2 = best_chi2;
		double s2 = best_chi2 / (double)(nr > (size_t)nx ? nr - (size_t)nx : 1);
		theta_to_params(best, &res->p);
		for (int i = 0; i < PP_COUNT; i++) {
			double th = gsl_vector_get(best, i);
			res->se[i] = fabs(perf_dtheta(i, th)) * sqrt(gsl_matrix_get(cov, i, i) * s2);
		}
		res->prefill_scale = 1;
		res->prefill_scale_se = 0;
		if (nx > PP_COUNT) {
			res->prefill_scale = exp(gsl_vector_get(best, PP_COUNT));
			res->prefill_scale_se = res->prefill_scale *
						sqrt(gsl_matrix_get(cov, PP_COUNT, PP_COUNT) * s2);
		}
		res->n_fit = (int)nfit;
	}
	gsl_vector_free(x);
	gsl_vector_free(best);
	gsl_matrix_free(cov);
	gsl_multifit_nlinear_free(w);
	if (rc)
		goto out;
	/* Evaluate every selected row with the fitted parameters. */
	double s1 = 0, s2_ = 0;
	for (size_t k = 0; k < res->nev; k++) {
		struct calib_eval *ev = &res->ev[k];
		const struct calib_row *r = &rows[ev->row];
		struct model_arch m;
		struct bs_err e2 = {0};
		profile_load_model(r->model, &m, &e2);
		ev->predicted = predict_row(r, &hw, &m, &res->p) * (ev->scaled ? res->prefill_scale : 1);
		ev->err = ev->predicted / ev->measured - 1;
		add_family(res, ev);
		if (ev->use == USE_FIT && r->kind == CALIB_THROUGHPUT &&
		    !r->short_prompt) {
			if (r->tp > 1) {
				s2_ += fabs(ev->err);
				res->n_tp++;
			} else {
				s1 += fabs(ev->err);
				res->n_single++;
			}
		}
	}
	res->single_mape = res->n_single ? s1 / res->n_single : 0;
	res->tp_mape = res->n_tp ? s2_ / res->n_tp : 0;
	rc = fit_compile(rows, n, res, err);
out:
	free(fit_idx);
	free(models);
	return rc;
}

void calib_result_release(struct calib_result *res)
{
	free(res->ev);
	res->ev = NULL;
	res->nev = 0;
}

void calib_print_report(FILE *out, const struct calib_row *rows, size_t n,
			const struct calib_result *res)
{
	fprintf(out, "%-7s %-5s %-16s %-4s %3s %6s %6s %6s %12s %12s %8s  %s\n", "record", "use",
		"model", "prec", "tp", "in", "out", "batch", "measured", "predicted", "error",
		"family");
	for (size_t k = 0; k < res->nev; k++) {
		const struct calib_eval *ev = &res->ev[k];
		const struct calib_row *r = &rows[ev->row];
		fprintf(out, "%-7ld %-5s %-16s %-4s %3d %6.0f %6.0f %6.0f %12.2f %12.2f %+7.1f%%  %s%s%s%s\n",
			r->record, ev->use == USE_FIT ? "fit" : "check", r->model, r->fp8 ? "fp8" : "bf16",
			r->tp, r->in, isnan(r->out) ? 0 : r->out, r->bs, ev->measured, ev->predicted,
			100 * ev->err, ev->family, ev->why[0] ? " (" : "", ev->why, ev->why[0] ? ")" : "");
	}
	/* Rows of this chip with a pass-time metric that could not be evaluated, and why. */
	bool head = false;
	for (size_t i = 0; res->ev && i < n; i++) {
		const struct calib_row *r = &rows[i];
		if (strcmp(r->hw, res->hw) || r->kind == CALIB_OTHER)
			continue;
		bool seen = false;
		for (size_t k = 0; k < res->nev && !seen; k++)
			seen = res->ev[k].row == i;
		if (seen)
			continue;
		if (!head)
			fprintf(out, "\nnot evaluated:\n");
		head = true;
		fprintf(out, "%-7ld %s: %s%s\n", r->record, r->model_raw,
			!r->model[0] ? "no profile for this model" : "shape not given as numbers",
			r->doubtful ? "; flagged doubtful by the source" : "");
	}
	fprintf(out, "\n%-34s %-5s %4s %8s %8s\n", "family", "use", "n", "MAPE", "max");
	for (int i = 0; i < res->nfam; i++)
		fprintf(out, "%-34s %-5s %4d %7.1f%% %7.1f%%\n", res->fam[i].name,
			res->fam[i].use == USE_FIT ? "fit" : "check", res->fam[i].n,
			100 * res->fam[i].mape, 100 * res->fam[i].maxerr);
	fprintf(out, "fitted throughput MAPE: single-card %.1f%% (%d rows), tensor-parallel %.1f%% "
		"(%d rows)\n", 100 * res->single_mape, res->n_single, 100 * res->tp_mape, res->n_tp);
	struct family_stat vs[16];
	int nv = calib_version_stats(rows, res, vs, 16);
	fprintf(out, "\n%-34s %-5s %4s %8s %8s\n", "throughput rows by software version", "use", "n",
		"MAPE", "max");
	for (int i = 0; i < nv; i++)
		fprintf(out, "%-34s %-5s %4d %7.1f%% %7.1f%%\n", vs[i].name,
			vs[i].use == USE_FIT ? "fit" : "check", vs[i].n, 100 * vs[i].mape,
			100 * vs[i].maxerr);
	fprintf(out, "\n%-18s %12s %12s\n", "parameter", "value", "std error");
	for (int i = 0; i < PP_COUNT; i++)
		fprintf(out, "%-18s %12.4g %12.3g\n", perf_param_names[i],
			res->p.v[i] * perf_param_json_scale[i], res->se[i] * perf_param_json_scale[i]);
	if (res->compile_fitted) {
		fprintf(out, "%-18s %12.4g %12.3g\n", "compile_c0_s", res->c.c0, res->c0_se);
		fprintf(out, "%-18s %12.4g %12.3g\n", "compile_c1_ms_per_token", res->c.c1 * 1e3,
			res->c1_se * 1e3);
	} else { /* the hardware profile's, kept: no warm-up rows to fit them on */
		fprintf(out, "%-18s %12.4g %12s\n", "compile_c0_s", res->c.c0, "not fitted");
		fprintf(out, "%-18s %12.4g %12s\n", "compile_c1_ms_per_token", res->c.c1 * 1e3,
			"not fitted");
	}
	fprintf(out, "(fixed) capture_s %.3f, runtime_penalty_s %.3f, fp8_compile_factor %.3f\n",
		res->c.capture, res->c.runtime, res->c.fp8_factor);
	if (res->n_scaled)
		fprintf(out, "version scale of the %d other-version prefill rows (nuisance, not in the "
			"profile): %.3f +- %.3f\n", res->n_scaled, res->prefill_scale,
			res->prefill_scale_se);
	fprintf(out, "pass-time fit: %d rows + %d priors, chi2 %.4g, %d iterations, status %d\n",
		res->n_fit, PP_COUNT + (res->n_scaled > 0), res->chi2, res->iterations, res->status);
	if (!res->ncomp) {
		fprintf(out, "\nno warm-up rows: the compile constants are the profile's\n");
		return;
	}
	fprintf(out, "\n%-58s %10s %10s %7s\n", "warm-up case", "measured_s", "model_s", "ratio");
	for (int i = 0; i < res->ncomp; i++)
		fprintf(out, "%-58s %10.1f %10.1f %7.2f%s\n", res->comp[i].name, res->comp[i].measured,
			res->comp[i].predicted, res->comp[i].predicted / res->comp[i].measured,
			res->comp[i].fitted ? "" : "  (check)");
}
