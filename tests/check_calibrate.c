/*
 * check_calibrate: the measurements reader and the fit (models/calib.c): malformed CSV errors
 * name file, record and field; a fit on synthetic rows generated from known parameters
 * recovers them; the shipped profiles reproduce their committed fit report (Gaudi from
 * models/data/gaudi_measurements.csv, A100 and H100 from models/data/gpu_measurements.csv).
 * Run from the repository root (make check does).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/calib_int.h"

static const char header[] =
	"source,hardware,cards,model,precision,framework,input_len,output_len,batch_size,metric,"
	"value,unit,notes\n";

static char *write_tmp(const char *text)
{
	char *path = xstrdup("/tmp/check_calibrate.XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static void expect_error(const char *body, long record, const char *field, const char *msg)
{
	char *text = xasprintf("%s%s", header, body);
	char *path = write_tmp(text);
	struct calib_row *rows = NULL;
	size_t n = 0;
	struct bs_err err = {0};
	ck_assert_int_eq(calib_read_csv(path, &rows, &n, &err), -1);
	ck_assert_int_eq(err.code, BS_EXIT_INPUT);
	ck_assert_str_eq(err.file, path);
	ck_assert_int_eq(err.line, record);
	if (field)
		ck_assert_str_eq(err.field, field);
	ck_assert_msg(strstr(err.msg, msg), "message '%s' lacks '%s'", err.msg, msg);
	unlink(path);
	free(path);
	free(text);
}

/* The rows of HEADER + BODY, read as a file's text; the read must succeed. */
static struct calib_row *read_ok(const char *body, size_t *n)
{
	char *text = xasprintf("%s%s", header, body);
	struct calib_row *rows = NULL;
	struct bs_err err = {0};
	ck_assert_int_eq(calib_read_csv_text("t.csv", text, strlen(text), &rows, n, &err), 0);
	free(text);
	return rows;
}

START_TEST(malformed_csv)
{
	const char *good = "s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,128,64,throughput_generated_tokens,100,tokens/s,n\n";
	char *two = xasprintf("%s%s", good,
			      "s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,128,64,throughput_generated_tokens,abc,tokens/s,n\n");
	expect_error(two, 3, "value", "expected a non-negative number");
	free(two);
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,-128,128,64,throughput_generated_tokens,100,tokens/s,n\n",
		     2, "input_len", "expected a non-negative integer");
	expect_error("s,Gaudi2,x,Llama-3.1-8B,fp8,f,128,128,64,prefill_forward_latency,100,ms,n\n", 2,
		     "cards", "got 'x'");
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,128\n", 2, NULL, "expected 13 fields, got 8");
	/* zeros in a shape: a batch of no sequence, a prompt of no token, a throughput of no
	 * generated token (a prefill row's output_len may be 0) */
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,128,0,throughput_generated_tokens,100,tokens/s,n\n",
		     2, "batch_size", "expected a positive integer for metric "
		     "'throughput_generated_tokens', got '0' (a batch of no sequence)");
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,0,0,1,prefill_forward_latency,10,ms,n\n",
		     2, "input_len", "got '0' (a prompt of no token)");
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,0.0,8,throughput_generated_tokens,100,tokens/s,n\n",
		     2, "output_len", "got '0.0' (a throughput of no generated token)");
	/* a batch beyond any measured, lengths beyond the model's context */
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,128,1000000000,throughput_generated_tokens,100,tokens/s,n\n",
		     2, "batch_size", "expected a batch of at most 65536 sequences, got '1000000000'");
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,10000000,128,8,throughput_generated_tokens,100,tokens/s,n\n",
		     2, "input_len", "input_len 10000000 is beyond llama-3.1-8b's context of 131072 "
		     "tokens (max_context in models.json)");
	expect_error("s,Gaudi2,1,Llama-2-7B,fp8,f,4000,128,8,throughput_generated_tokens,100,tokens/s,n\n",
		     2, "output_len", "input_len + output_len = 4128 is beyond llama-2-7b's context of 4096");
	expect_error("s,Gaudi2,1,Llama-2-7B,fp8,f,4097,0,1,prefill_forward_latency,10,ms,n\n",
		     2, "input_len", "input_len 4097 is beyond llama-2-7b's context of 4096");
	/* a fitted metric in another unit, or of a precision the fit does not know */
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,128,64,throughput_generated_tokens,8.9,ktok/s,n\n",
		     2, "unit", "metric 'throughput_generated_tokens' is measured in tokens/s, got 'ktok/s'");
	expect_error("s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,1,1,prefill_forward_latency,0.1,s,n\n", 2,
		     "unit", "is measured in ms, got 's'");
	expect_error("s,Gaudi2,1,Llama-3.1-8B,int4,f,128,128,64,throughput_generated_tokens,9,tokens/s,n\n",
		     2, "precision", "expected bf16 or fp8 for metric 'throughput_generated_tokens', got 'int4'");
	expect_error("s,Gaudi2,1,\"Llama,fp8,f,128,128,64,m,1,u,n\n", 2, NULL, "");
	/* a bad header */
	char *path = write_tmp("source,hardware,cards\n");
	struct calib_row *rows = NULL;
	size_t n = 0;
	struct bs_err err = {0};
	ck_assert_int_eq(calib_read_csv(path, &rows, &n, &err), -1);
	ck_assert_int_eq(err.line, 1);
	unlink(path);
	free(path);
	path = write_tmp("source,hardware,cards,model,precision,framework,input_len,output_len,"
			 "batch_size,metric,value,units,notes\n");
	bs_err_clear(&err);
	ck_assert_int_eq(calib_read_csv(path, &rows, &n, &err), -1);
	ck_assert_str_eq(err.field, "unit");
	unlink(path);
	free(path);
	/* a missing file is an I/O error */
	bs_err_clear(&err);
	ck_assert_int_eq(calib_read_csv("/nonexistent/x.csv", &rows, &n, &err), -1);
	ck_assert_int_ne(err.code, 0);
	/* at the limits: read; a model not in models.json has no context to check */
	rows = read_ok("s,Gaudi2,1,Llama-2-7B,fp8,f,3968,128,65536,throughput_generated_tokens,1,tokens/s,n\n"
		       "s,Gaudi2,1,Llama-2-7B,fp8,f,4096,0,1,prefill_forward_latency,10,ms,n\n"
		       "s,Gaudi2,1,Llama-2-7B,fp8,f,4096,9,1,prefill_forward_latency,10,ms,n\n"
		       "s,Gaudi2,1,Other-9B,fp8,f,10000000,128,8,throughput_generated_tokens,1,tokens/s,n\n",
		       &n);
	ck_assert_int_eq(n, 4);
	free(rows);
	/* a good file parses; text shapes are kept but never fitted */
	char *body = xasprintf("%s%s", good,
			       "s (SynapseAI 1.18.0),Gaudi3 (HLS-3),1,Meta-Llama-3.1-8B-Instruct,bf16,f,"
			       "short prompt,100,1,throughput_generated_tokens,129,tokens/s,treat with caution\n");
	rows = read_ok(body, &n);
	free(body);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(rows[0].hw, "gaudi2");
	ck_assert_str_eq(rows[0].model, "llama-3.1-8b");
	ck_assert_int_eq(rows[0].record, 2);
	ck_assert_str_eq(rows[1].hw, "gaudi3");
	ck_assert_str_eq(rows[1].model, "llama-3.1-8b");
	ck_assert_str_eq(rows[1].software, "1.18");
	ck_assert(rows[1].doubtful);
	ck_assert(isnan(rows[1].in));
	ck_assert(!rows[1].short_prompt);
	free(rows);
	/* run_generation.py's default prompt is taken as a short input; reuse_cache=False noted */
	rows = read_ok("s,Gaudi2,1,Meta-Llama-3-8B,bf16,f,short default prompt,100,1,"
		       "throughput_generated_tokens,129,tokens/s,reuse_cache=False\n", &n);
	ck_assert_str_eq(rows[0].model, "llama-3-8b");
	ck_assert(rows[0].short_prompt && rows[0].no_reuse_cache);
	ck_assert_double_eq(rows[0].in, CALIB_SHORT_PROMPT_TOKENS);
	free(rows);
	/* names as users write them: "Gaudi 2", a Hugging Face id, BF16 / FP8 in capitals */
	rows = read_ok("s,Gaudi 2,1,meta-llama/Llama-3.1-8B-Instruct,BF16,f,128,128,8,"
		       "throughput_generated_tokens,900,tokens/s,n\n"
		       "s,gaudi-3,1,meta-llama/Meta-Llama-3.1-70B,FP8,f,128,1,1,"
		       "prefill_forward_latency,20,ms,n\n", &n);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(rows[0].hw, "gaudi2");
	ck_assert_str_eq(rows[0].model, "llama-3.1-8b");
	ck_assert(!rows[0].fp8);
	ck_assert_str_eq(rows[1].hw, "gaudi3");
	ck_assert_str_eq(rows[1].model, "llama-3.1-70b");
	ck_assert(rows[1].fp8);
	free(rows);
}
END_TEST

/* Rows of hardware HW generated from parameters P, with the same equations calibrate fits. */
static size_t synth(struct calib_row *rows, const char *hw_name, const struct perf_params *p)
{
	struct hw_spec hw;
	struct perf_params p0;
	struct compile_params c;
	struct bs_err err = {0};
	ck_assert_int_eq(profile_load_hw(hw_name, &hw, &p0, &c, &err), 0);
	static const struct { const char *m; int tp; double in, out, bs; } shapes[] = {
		{"llama-3.1-8b", 1, 128, 128, 2048}, {"llama-3.1-8b", 1, 128, 2048, 256},
		{"llama-3.1-8b", 1, 2048, 128, 128}, {"llama-3.1-8b", 1, 2048, 2048, 64},
		{"llama-3.1-8b", 1, 128, 512, 1}, {"llama-3.1-8b", 1, 1024, 256, 4},
		{"mistral-7b", 1, 128, 2048, 32}, {"llama-2-7b", 1, 2048, 128, 16},
		{"llama-3.1-70b", 2, 128, 128, 1024}, {"llama-3.1-70b", 2, 128, 2048, 256},
		{"llama-3.1-70b", 4, 2048, 128, 128}, {"llama-3.1-70b", 8, 2048, 2048, 512},
		{"llama-3.1-70b", 8, 128, 2048, 8}, {"llama-3.1-70b", 8, 128, 128, 2},
		{"llama-2-70b", 2, 2048, 2048, 128}, {"llama-3.1-405b", 8, 128, 128, 1024},
	};
	size_t n = 0;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct calib_row *r = &rows[n++];
		memset(r, 0, sizeof *r);
		r->record = (long)n + 1;
		snprintf(r->hw, sizeof r->hw, "%s", hw_name);
		snprintf(r->model, sizeof r->model, "%s", shapes[i].m);
		snprintf(r->metric, sizeof r->metric, "throughput_generated_tokens");
		r->kind = CALIB_THROUGHPUT;
		snprintf(r->software, sizeof r->software, "9.99");
		r->tp = shapes[i].tp;
		r->fp8 = true;
		r->in = shapes[i].in;
		r->out = shapes[i].out;
		r->bs = shapes[i].bs;
		struct model_arch m;
		ck_assert_int_eq(profile_load_model(r->model, &m, &err), 0);
		struct eval_ctx e;
		eval_setup(&e, &hw, &m, p, r->tp, true, true, 128);
		struct static_batch sb;
		eval_static_batch(&e, r->bs, r->in, r->out, &sb);
		r->value = sb.throughput;
	}
	/* bf16 prefill passes of several lengths and TP degrees */
	for (int tp = 2; tp <= 8; tp *= 2)
		for (double q = 256; q <= 32768; q *= 4) {
			struct calib_row *r = &rows[n++];
			memset(r, 0, sizeof *r);
			r->record = (long)n + 1;
			snprintf(r->hw, sizeof r->hw, "%s", hw_name);
			snprintf(r->model, sizeof r->model, "llama-3.1-70b");
			snprintf(r->metric, sizeof r->metric, "prefill_forward_latency");
			r->kind = CALIB_PREFILL;
			snprintf(r->software, sizeof r->software, "9.99");
			r->tp = tp;
			r->in = q;
			r->out = 0;
			r->bs = 1;
			struct model_arch m;
			ck_assert_int_eq(profile_load_model(r->model, &m, &err), 0);
			struct eval_ctx e;
			eval_setup(&e, &hw, &m, p, tp, false, false, 128);
			r->value = eval_prefill(&e, 1, q, 0, NULL) * 1e3;
		}
	return n;
}

START_TEST(synthetic_recovery)
{
	struct perf_params truth = {{0.8, 150, 0.7, 0.75, 0.45, 2.0e-3, 25e-6, 0.4}};
	struct calib_row rows[64];
	size_t n = synth(rows, "gaudi2", &truth);
	struct calib_opts o = {.hw = "gaudi2", .software = "9.99", .use_prefill_rows = true};
	calib_default_start(&o.start);
	struct calib_result res;
	struct bs_err err = {0};
	ck_assert_int_eq(calib_fit(rows, n, &o, &res, &err), 0);
	ck_assert_int_eq(res.n_fit, (int)n);
	/* The priors pull towards their centre: on noise-free rows every parameter comes back
	 * within three standard errors and 20 %, and every row is reproduced closely. */
	for (int i = 0; i < PP_COUNT; i++) {
		double d = fabs(res.p.v[i] - truth.v[i]);
		ck_assert_msg(d <= fmax(3 * res.se[i], 0.02 * truth.v[i]) && d <= 0.2 * truth.v[i],
			      "%s: %g vs %g (se %g)", perf_param_names[i], res.p.v[i], truth.v[i],
			      res.se[i]);
	}
	ck_assert(res.single_mape < 0.01 && res.tp_mape < 0.01);
	for (int i = 0; i < PP_COUNT; i++)
		ck_assert(res.se[i] >= 0 && isfinite(res.se[i]));
	calib_result_release(&res);
	/* Without the priors the fit recovers the generating parameters. */
	o.no_priors = true;
	ck_assert_int_eq(calib_fit(rows, n, &o, &res, &err), 0);
	for (int i = 0; i < PP_COUNT; i++)
		ck_assert_msg(fabs(res.p.v[i] / truth.v[i] - 1) < 0.01, "%s: %g vs %g",
			      perf_param_names[i], res.p.v[i], truth.v[i]);
	ck_assert_int_eq(res.n_scaled, 0);
	ck_assert_double_eq(res.prefill_scale, 1);
	calib_result_release(&res);
}
END_TEST

/* Prefill rows of another software version, 30 % slower, are fitted with a version scale:
 * the scale comes back and the generating parameters are still recovered. */
START_TEST(version_scale_recovery)
{
	struct perf_params truth = {{0.8, 150, 0.7, 0.75, 0.45, 2.0e-3, 25e-6, 0.4}};
	struct calib_row rows[64];
	size_t n = synth(rows, "gaudi2", &truth);
	int scaled = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].metric, "prefill_forward_latency")) {
			snprintf(rows[i].software, sizeof rows[i].software, "8.88");
			rows[i].value *= 1.3;
			scaled++;
		}
	struct calib_opts o = {.hw = "gaudi2", .software = "9.99", .use_prefill_rows = true,
			       .no_priors = true};
	calib_default_start(&o.start);
	struct calib_result res;
	struct bs_err err = {0};
	ck_assert_int_eq(calib_fit(rows, n, &o, &res, &err), 0);
	ck_assert_int_eq(res.n_scaled, scaled);
	ck_assert_double_eq_tol(res.prefill_scale, 1.3, 1e-3);
	for (int i = 0; i < PP_COUNT; i++)
		ck_assert_msg(fabs(res.p.v[i] / truth.v[i] - 1) < 0.01, "%s: %g vs %g",
			      perf_param_names[i], res.p.v[i], truth.v[i]);
	calib_result_release(&res);
	/* Without --prefill rows they are checks, reported at the unscaled model. */
	o.use_prefill_rows = false;
	ck_assert_int_eq(calib_fit(rows, n, &o, &res, &err), 0);
	ck_assert_int_eq(res.n_scaled, 0);
	calib_result_release(&res);
}
END_TEST

/* The shipped profile's committed fit summary, reproduced by a fresh fit. */
static void reproduce(const char *hw)
{
	struct calib_row *rows = NULL;
	size_t n = 0;
	struct bs_err err = {0};
	ck_assert_msg(calib_read_csv("models/data/gaudi_measurements.csv", &rows, &n, &err) == 0,
		      "%s", err.msg);
	cJSON *j = profile_hw_json(hw);
	ck_assert_ptr_nonnull(j);
	const cJSON *fit = cJSON_GetObjectItemCaseSensitive(j, "fit");
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(fit, "data");
	const cJSON *sw = cJSON_GetObjectItemCaseSensitive(data, "software");
	ck_assert(cJSON_IsString(sw));
	struct calib_opts o = {.hw = hw, .software = sw->valuestring, .use_prefill_rows = true};
	calib_default_start(&o.start);
	struct calib_result res;
	ck_assert_int_eq(calib_fit(rows, n, &o, &res, &err), 0);
	double want_single = cJSON_GetObjectItemCaseSensitive(fit, "single_card_mape_pct")->valuedouble;
	double want_tp = cJSON_GetObjectItemCaseSensitive(fit, "tp_mape_pct")->valuedouble;
	ck_assert_double_eq_tol(100 * res.single_mape, want_single, 0.05);
	ck_assert_double_eq_tol(100 * res.tp_mape, want_tp, 0.05);
	ck_assert_int_eq(res.n_fit, cJSON_GetObjectItemCaseSensitive(fit, "rows_fitted")->valueint);
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(j, "params");
	for (int i = 0; i < PP_COUNT; i++) {
		double want = cJSON_GetObjectItemCaseSensitive(params, perf_param_names[i])->valuedouble;
		double got = res.p.v[i] * perf_param_json_scale[i];
		ck_assert_msg(fabs(got - want) <= 1e-3 * fabs(want), "%s: %g vs %g", perf_param_names[i],
			      got, want);
	}
	const cJSON *vs = cJSON_GetObjectItemCaseSensitive(fit, "prefill_version_scale");
	if (vs)
		ck_assert_double_eq_tol(res.prefill_scale, vs->valuedouble, 1e-3 * vs->valuedouble);
	else
		ck_assert_int_eq(res.n_scaled, 0);
	double c1 = cJSON_GetObjectItemCaseSensitive(params, "compile_c1_ms_per_token")->valuedouble;
	ck_assert_double_eq_tol(res.c.c1 * 1e3, c1, 1e-3 * c1);
	/* The targets: fitted-version throughput MAPE <= 15 % for single card and TP, compile
	 * model within 1.5x of every warm-up total. */
	ck_assert(res.single_mape <= 0.15 && res.tp_mape <= 0.15);
	for (int i = 0; i < res.ncomp; i++)
		if (strstr(res.comp[i].name, "total") || strstr(res.comp[i].name, "bf16")) {
			double r = res.comp[i].predicted / res.comp[i].measured;
			ck_assert_msg(r >= 1 / 1.5 && r <= 1.5, "%s: ratio %g", res.comp[i].name, r);
		}
	cJSON_Delete(j);
	calib_result_release(&res);
	free(rows);
}

START_TEST(committed_gaudi2)
{
	reproduce("gaudi2");
}
END_TEST

START_TEST(committed_gaudi3)
{
	reproduce("gaudi3");
}
END_TEST

/* The GPU operator rows: decode_forward_latency and linear_forward_latency are read as their
 * kinds, "held out" in the notes marks a row the fit never uses. */
START_TEST(gpu_row_kinds)
{
	size_t n;
	struct calib_row *rows = read_ok(
		"v,A100-SXM4-80GB,2,llama-2-70b,bf16,x,1024,0,8,decode_forward_latency,50,ms,a\n"
		"v,A100-SXM4-80GB,1,llama-2-7b,bf16,x,1,0,1,linear_forward_latency,9,ms,b; held out\n"
		"v,H100-SXM5-80GB,2,codellama-34b,bf16,x,512,0,1,prefill_forward_latency,60,ms,c\n", &n);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(rows[0].kind, CALIB_DECODE);
	ck_assert_str_eq(rows[0].hw, "a100");
	ck_assert_int_eq(rows[0].tp, 2);
	ck_assert(!rows[0].held_out);
	ck_assert_int_eq(rows[1].kind, CALIB_LINEAR);
	ck_assert(rows[1].held_out);
	ck_assert_str_eq(rows[2].hw, "h100");
	ck_assert_str_eq(rows[2].model, "codellama-34b");
	free(rows);
	/* A decode row needs a batch and a context, as the other pass rows do. */
	expect_error("v,A100,2,llama-2-70b,bf16,x,1024,0,0,decode_forward_latency,50,ms,\n", 2,
		     "batch_size", "a batch of no sequence");
}
END_TEST

/* A linear_forward_latency row is one pass without attention and LM head, worked by hand:
 * Llama-2-7B (32 layers, hidden 4096, MHA, gated FFN 11008) at one token on one A100 streams
 * 32 x (4 x 4096^2 + 3 x 4096 x 11008) bf16 weights; the compute term is far below that, so
 * the pass takes weights / (bandwidth x eta_weights) + t_pass. */
START_TEST(linear_pass_hand)
{
	struct hw_spec hw;
	struct perf_params p;
	struct compile_params c;
	struct model_arch m;
	struct bs_err err = {0};
	ck_assert_int_eq(profile_load_hw("a100", &hw, &p, &c, &err), 0);
	ck_assert_int_eq(profile_load_model("llama-2-7b", &m, &err), 0);
	struct eval_ctx e;
	eval_setup(&e, &hw, &m, &p, 1, false, false, 16);
	double bytes = 32.0 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008) * 2;
	double want = bytes / (2.039e12 * p.v[PP_ETA_WEIGHTS]) + p.v[PP_T_PASS];
	ck_assert_double_eq_tol(eval_linear(&e, 1, NULL), want, 1e-12);
	/* The compute term really is the smaller one here. */
	double flops = 2.0 * bytes / 2;
	double eff = p.v[PP_ETA_COMPUTE] / (1 + p.v[PP_N_HALF]);
	ck_assert(flops / (312e12 * eff) < bytes / (2.039e12 * p.v[PP_ETA_WEIGHTS]));
	/* Attention and the LM head are what a decode pass adds to it. */
	ck_assert(eval_decode(&e, 1, 64, NULL) > eval_linear(&e, 1, NULL));
}
END_TEST

/* The shipped GPU profiles reproduce from models/data/gpu_measurements.csv; the held-out rows
 * are checks, never fitted, and the fit's error on them stays within what models/README.md
 * reports ("GPU profiles"). */
static void reproduce_gpu(const char *hw, double max_held_mape)
{
	struct calib_row *rows = NULL;
	size_t n = 0;
	struct bs_err err = {0};
	ck_assert_msg(calib_read_csv("models/data/gpu_measurements.csv", &rows, &n, &err) == 0,
		      "%s", err.msg);
	struct calib_opts o = {.hw = hw, .use_prefill_rows = true};
	calib_default_start(&o.start);
	struct calib_result res;
	ck_assert_int_eq(calib_fit(rows, n, &o, &res, &err), 0);
	cJSON *j = profile_hw_json(hw);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "calibrated")));
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(j, "params");
	for (int i = 0; i < PP_COUNT; i++) {
		double want = cJSON_GetObjectItemCaseSensitive(params, perf_param_names[i])->valuedouble;
		double got = res.p.v[i] * perf_param_json_scale[i];
		ck_assert_msg(fabs(got - want) <= 1e-3 * fabs(want), "%s: %g vs %g", perf_param_names[i],
			      got, want);
	}
	size_t held = 0, mine = 0, checked = 0;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].hw, hw)) {
			mine++;
			held += rows[i].held_out;
		}
	for (size_t k = 0; k < res.nev; k++)
		if (rows[res.ev[k].row].held_out) {
			ck_assert_int_eq(res.ev[k].use, USE_CHECK);
			checked++;
			sum += fabs(res.ev[k].err);
		}
	ck_assert_uint_gt(held, 0);
	ck_assert_uint_eq(checked, held);
	ck_assert_int_eq(res.n_fit, (int)(mine - held));
	ck_assert_msg(sum / held <= max_held_mape, "held-out MAPE %g", sum / held);
	cJSON_Delete(j);
	calib_result_release(&res);
	free(rows);
}

START_TEST(committed_a100)
{
	reproduce_gpu("a100", 0.10);
}
END_TEST

START_TEST(committed_h100)
{
	reproduce_gpu("h100", 0.10);
}
END_TEST

/* a100-40gb is the a100 fit on the 40 GB card's memory: the same parameters, its own spec. */
START_TEST(a100_40gb_transfer)
{
	struct hw_spec h80, h40;
	struct perf_params p80, p40;
	struct compile_params c;
	struct bs_err err = {0};
	ck_assert_int_eq(profile_load_hw("a100", &h80, &p80, &c, &err), 0);
	ck_assert_int_eq(profile_load_hw("a100-40gb", &h40, &p40, &c, &err), 0);
	for (int i = 0; i < PP_COUNT; i++)
		ck_assert_double_eq(p40.v[i], p80.v[i]);
	ck_assert_str_eq(h40.chip, "a100");
	ck_assert(h40.calibrated);
	ck_assert_double_eq_tol(h40.hbm_bw, 1.555e12, 1);
	ck_assert_double_eq_tol(h40.hbm_bytes, 39.59 * 1073741824.0, 1);
	ck_assert_double_eq(h40.peak_bf16, h80.peak_bf16);
}
END_TEST

START_TEST(too_few_rows)
{
	struct calib_row rows[64];
	struct perf_params truth = {{0.8, 150, 0.7, 0.75, 0.45, 2.0e-3, 25e-6, 0.4}};
	synth(rows, "gaudi3", &truth);
	struct calib_opts o = {.hw = "gaudi3", .software = "9.99", .use_prefill_rows = true};
	calib_default_start(&o.start);
	struct calib_result res;
	struct bs_err err = {0};
	ck_assert_int_eq(calib_fit(rows, 2, &o, &res, &err), -1);
	ck_assert_int_eq(err.code, BS_EXIT_INPUT);
	ck_assert_msg(strstr(err.msg, "only 2 usable rows"), "%s", err.msg);
	calib_result_release(&res);
	bs_err_clear(&err);
	o.hw = "tpu9";
	ck_assert_int_eq(calib_fit(rows, 2, &o, &res, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "gaudi2"));
}
END_TEST

/* --software must name a version of the hardware's rows: empty or unknown is an error listing
 * them (an empty one took the rows naming no version as the version asked for). */
START_TEST(software_in_data)
{
	struct calib_row *rows = NULL;
	size_t n = 0;
	struct bs_err err = {0};
	ck_assert_int_eq(calib_read_csv("models/data/gaudi_measurements.csv", &rows, &n, &err), 0);
	const char *bad[] = {"", "0.1", "1.2", "1.21 "};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct calib_opts o = {.data = "m.csv", .hw = "gaudi2", .software = bad[i],
				       .use_prefill_rows = true};
		calib_default_start(&o.start);
		struct calib_result res;
		ck_assert_int_eq(calib_fit(rows, n, &o, &res, &err), -1);
		ck_assert_int_eq(err.code, BS_EXIT_INPUT);
		ck_assert_str_eq(err.file, "m.csv");
		char *want = xasprintf("--software '%s': no row of hardware 'gaudi2' is of that "
				       "version (versions of its rows: 1.17, 1.18, 1.19, 1.20;", bad[i]);
		ck_assert_msg(!strncmp(err.msg, want, strlen(want)), "%s", err.msg);
		free(want);
		calib_result_release(&res);
		bs_err_clear(&err);
	}
	free(rows);
}
END_TEST

START_TEST(version_stats)
{
	/* Worked by hand: 1.18 rows at +10 % and -30 % -> n 2, MAPE 20 %, max 30 %; the 1.20 row
	 * (fitted) at +5 %; a row without version at -40 %; a latency row stays out. */
	struct calib_row rows[5];
	memset(rows, 0, sizeof rows);
	const char *sw[] = {"1.18", "1.20", "1.18", "", "1.18"};
	for (int i = 0; i < 5; i++) {
		snprintf(rows[i].software, sizeof rows[i].software, "%s", sw[i]);
		snprintf(rows[i].metric, sizeof rows[i].metric, "%s",
			 i == 4 ? "prefill_forward_latency" : "throughput_generated_tokens");
		rows[i].kind = i == 4 ? CALIB_PREFILL : CALIB_THROUGHPUT; /* as the reader sets it */
	}
	struct calib_eval ev[5] = {
		{.row = 0, .use = USE_CHECK, .err = 0.10}, {.row = 1, .use = USE_FIT, .err = 0.05},
		{.row = 2, .use = USE_CHECK, .err = -0.30}, {.row = 3, .use = USE_CHECK, .err = -0.40},
		{.row = 4, .use = USE_FIT, .err = 0.90}};
	struct calib_result res = {.ev = ev, .nev = 5};
	struct family_stat vs[4];
	ck_assert_int_eq(calib_version_stats(rows, &res, vs, 4), 3);
	ck_assert_str_eq(vs[0].name, "1.18");
	ck_assert_int_eq(vs[0].n, 2);
	ck_assert_double_eq_tol(vs[0].mape, 0.20, 1e-15);
	ck_assert_double_eq_tol(vs[0].maxerr, 0.30, 1e-15);
	ck_assert_int_eq(vs[0].use, USE_CHECK);
	ck_assert_str_eq(vs[1].name, "1.20");
	ck_assert_int_eq(vs[1].use, USE_FIT);
	ck_assert_double_eq_tol(vs[1].mape, 0.05, 1e-15);
	ck_assert_str_eq(vs[2].name, "unknown");
	ck_assert_double_eq_tol(vs[2].maxerr, 0.40, 1e-15);
	/* room for one group only: the first */
	ck_assert_int_eq(calib_version_stats(rows, &res, vs, 1), 1);
	ck_assert_int_eq(vs[0].n, 2);
}
END_TEST

/* A UTF-8 byte-order mark (a spreadsheet's export) before the header, whose first name may then
 * be quoted; a mark elsewhere is not skipped. */
START_TEST(bom_before_header)
{
	static const char row[] = "s,Gaudi2,1,Llama-3.1-8B,fp8,f,128,128,64,"
				  "throughput_generated_tokens,100,tokens/s,n\n";
	const char *heads[] = {"\xef\xbb\xbf", "\xef\xbb\xbf\"source\""};
	for (size_t i = 0; i < 2; i++) {
		char *text = xasprintf("%s%s%s", heads[i], header + (i ? 6 : 0), row);
		struct calib_row *rows = NULL;
		size_t n = 0;
		struct bs_err err = {0};
		ck_assert_msg(calib_read_csv_text("t.csv", text, strlen(text), &rows, &n, &err) == 0,
			      "%s", err.msg);
		ck_assert_uint_eq(n, 1);
		ck_assert_int_eq(rows[0].record, 2);
		free(rows);
		free(text);
	}
	char *text = xasprintf("%s\xef\xbb\xbf%s", header, row);
	struct calib_row *rows = NULL;
	size_t n = 0;
	struct bs_err err = {0};
	ck_assert_int_eq(calib_read_csv_text("t.csv", text, strlen(text), &rows, &n, &err), 0);
	ck_assert_str_eq(rows[0].source, "\xef\xbb\xbfs");
	free(rows);
	free(text);
}
END_TEST

int main(void)
{
	gsl_set_error_handler_off();
	Suite *s = suite_create("calibrate");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, malformed_csv);
	tcase_add_test(tc, bom_before_header);
	tcase_add_test(tc, synthetic_recovery);
	tcase_add_test(tc, version_scale_recovery);
	tcase_add_test(tc, committed_gaudi2);
	tcase_add_test(tc, committed_gaudi3);
	tcase_add_test(tc, gpu_row_kinds);
	tcase_add_test(tc, linear_pass_hand);
	tcase_add_test(tc, committed_a100);
	tcase_add_test(tc, committed_h100);
	tcase_add_test(tc, a100_40gb_transfer);
	tcase_add_test(tc, version_stats);
	tcase_add_test(tc, too_few_rows);
	tcase_add_test(tc, software_in_data);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
