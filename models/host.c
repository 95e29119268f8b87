/*
 * host: the engine-side costs outside the forward pass, loaded from the embedded
 * models/data/host.json (see cost_int.h, struct host_params, and models/README.md, "Host time").
 *
 * The host time of an engine step is  h_step + h_req * requests.  Its two terms are fitted when
 * the profile is loaded, by GSL weighted linear least squares (relative error: weight 1/y^2) on
 * the file's rows marked "fit": measurements that isolate host time (a profiled gap between
 * device passes, or measured parts of the step), never end-to-end serving throughputs.  The fit
 * is a few microseconds of work, done once per process, and deterministic, so the file is the
 * one place for the evidence and the parameters follow from it.
 */
#include <cjson/cJSON.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost_int.h"
#include "sim/embed.h"

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v))
		BUG("models/data/host.json: '%s' missing or not a number", key);
	return v->valuedouble;
}

int host_fit(const struct host_row *rows, size_t n, struct host_params *hp)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		m += rows[i].fit;
	if (m < 2)
		return -1;
	gsl_matrix *x = gsl_matrix_alloc(m, 2), *cov = gsl_matrix_alloc(2, 2);
	gsl_vector *y = gsl_vector_alloc(m), *w = gsl_vector_alloc(m), *c = gsl_vector_alloc(2);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].fit)
			continue;
		gsl_matrix_set(x, k, 0, 1.0);
		gsl_matrix_set(x, k, 1, rows[i].requests);
		gsl_vector_set(y, k, rows[i].host_s);
		gsl_vector_set(w, k, 1.0 / (rows[i].host_s * rows[i].host_s));
		k++;
	}
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(m, 2);
	double chi2;
	int st = gsl_multifit_wlinear(x, w, y, c, cov, &chi2, ws);
	hp->step_s = gsl_vector_get(c, 0);
	hp->req_s = gsl_vector_get(c, 1);
	hp->n_fit = (int)m;
	/* Standard errors need more rows than parameters: cov * chi2 / (m - 2). */
	hp->step_se = hp->req_se = NAN;
	if (m > 2) {
		hp->step_se = sqrt(gsl_matrix_get(cov, 0, 0) * chi2 / (double)(m - 2));
		hp->req_se = sqrt(gsl_matrix_get(cov, 1, 1) * chi2 / (double)(m - 2));
	}
	gsl_multifit_linear_free(ws);
	gsl_matrix_free(x);
	gsl_matrix_free(cov);
	gsl_vector_free(y);
	gsl_vector_free(w);
	gsl_vector_free(c);
	return st || hp->step_s < 0 || hp->req_s < 0 ? -1 : 0;
}

/* The parsed models/data/host.json (shared, sim/embed.h). */
static const cJSON *host_json(void)
{
	const cJSON *j = embedded_json("models/data/host.json");
	if (!j)
		BUG("models/data/host.json is not embedded");
	return j;
}

size_t host_rows_load(struct host_row **out)
{
	const cJSON *j = host_json();
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "host_rows"), *it;
	size_t n = (size_t)cJSON_GetArraySize(rows), k = 0;
	struct host_row *r = xcalloc(n ? n : 1, sizeof *r);
	cJSON_ArrayForEach(it, rows) {
		const cJSON *use = cJSON_GetObjectItemCaseSensitive(it, "use");
		if (!cJSON_IsString(use))
			BUG("models/data/host.json: a row has no 'use'");
		r[k].requests = num(it, "requests");
		r[k].host_s = num(it, "host_ms") * 1e-3;
		r[k].fit = !strcmp(use->valuestring, "fit");
		k++;
	}
	*out = r;
	return n;
}

int host_params_load(const char *chip, const char *profile, struct host_params *hp,
		     struct bs_err *err)
{
	/* The fit depends on the embedded file only: done once per process. */
	static struct host_params fitted;
	static bool have_fit;
	if (!have_fit) {
		struct host_row *rows;
		size_t n = host_rows_load(&rows);
		if (host_fit(rows, n, &fitted))
			BUG("models/data/host.json: the host-time fit failed");
		free(rows);
		have_fit = true;
	}
	*hp = fitted;
	const cJSON *j = host_json();
	hp->eager_layer_s = num(j, "eager_layer_us") * 1e-6;
	hp->hpu_launch_s = num(j, "hpu_graph_launch_us") * 1e-6;
	const cJSON *cg = cJSON_GetObjectItemCaseSensitive(j, "cuda_graphs");
	hp->cuda_piecewise_layer_s = num(cg, "piecewise_layer_us") * 1e-6;
	hp->cuda_eager_layer_s = num(cg, "eager_layer_us") * 1e-6;
	hp->cuda_capture_s = num(cg, "capture_s");
	hp->cuda_capture_bytes = num(cg, "capture_mib") * 1048576.0;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "pa_gather_kv_factor");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, chip);
	if (!cJSON_IsNumber(v) || v->valuedouble < 1)
		return bs_errf(err, BS_EXIT_INPUT, profile, 0, "name",
			       "chip '%s' has no paged-attention gather factor in "
			       "models/data/host.json (known: gaudi2, gaudi3, h100, a100)", chip);
	hp->gather_kv = v->valuedouble;
	return 0;
}
