/*
 * cmd_calibrate: `bucketsim calibrate`, fits a hardware profile's free parameters to the
 * measurements CSV (models/calib.c), prints the fit report and writes the profile (the embedded
 * profile's specification plus the fitted parameters, the fit summary and the data's
 * provenance) atomically to -o.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "models/calib_int.h"
#include "sim/commands.h"

enum { OPT_DATA = CLI_OPT_FIRST_FREE, OPT_HARDWARE, OPT_SOFTWARE, OPT_NO_PREFILL, OPT_QUIET };

static const struct cli_opt opts[] = {
	{"data", OPT_DATA, 1, "FILE.csv", "measurements (columns as models/data/gaudi_measurements.csv)",
	 NULL},
	{"hardware", OPT_HARDWARE, 1, "NAME", "hardware profile to fit (gaudi2, gaudi3, a100, h100)", NULL},
	{"software", OPT_SOFTWARE, 1, "VERSION", "fit only throughput rows of this software version "
	 "(e.g. 1.20, one the hardware's rows have); other versions are reported as checks", NULL},
	{"no-prefill-rows", OPT_NO_PREFILL, 0, NULL, "do not fit the per-pass prefill latency rows",
	 NULL},
	{"output", 'o', 1, "FILE.json", "profile to write (atomically), required", NULL},
	{"quiet", 'q', 0, NULL, "do not print the fit report", NULL},
	CLI_HELP_OPT,
	{0},
};

static double round_sig(double v, int digits)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.*g", digits, v);
	return strtod(buf, NULL);
}

static cJSON *build_profile(const char *hw, const struct calib_row *rows, size_t nrows,
			    const struct calib_result *res, const char *data, const char *software,
			    bool prefill, const char *fnv, int argc, char **argv)
{
	cJSON *j = profile_hw_json(hw);
	cJSON_ReplaceItemInObjectCaseSensitive(j, "calibrated", cJSON_CreateTrue());
	cJSON *p = cJSON_CreateObject();
	for (int i = 0; i < PP_COUNT; i++)
		cJSON_AddNumberToObject(p, perf_param_names[i],
					round_sig(res->p.v[i] * perf_param_json_scale[i], 6));
	cJSON_AddNumberToObject(p, "compile_c0_s", round_sig(res->c.c0, 6));
	cJSON_AddNumberToObject(p, "compile_c1_ms_per_token", round_sig(res->c.c1 * 1e3, 6));
	cJSON_AddNumberToObject(p, "capture_s", round_sig(res->c.capture, 6));
	cJSON_AddNumberToObject(p, "runtime_penalty_s", round_sig(res->c.runtime, 6));
	cJSON_AddNumberToObject(p, "fp8_compile_factor", round_sig(res->c.fp8_factor, 6));
	cJSON_AddNumberToObject(p, "kv_link_latency_us", round_sig(res->c.kv_latency * 1e6, 6));
	cJSON_ReplaceItemInObjectCaseSensitive(j, "params", p);

	cJSON *fit = cJSON_CreateObject();
	char cmd[1024] = "bucketsim";
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(cmd);
		snprintf(cmd + l, sizeof cmd - l, " %s", argv[i]);
	}
	cJSON_AddStringToObject(fit, "command", cmd);
	cJSON *d = cJSON_AddObjectToObject(fit, "data");
	const char *base = strrchr(data, '/');
	cJSON_AddStringToObject(d, "file", base ? base + 1 : data);
	cJSON_AddStringToObject(d, "fnv1a64", fnv);
	cJSON_AddNumberToObject(d, "records", (double)nrows);
	cJSON_AddStringToObject(d, "software", software ? software : "all");
	bool pre_fitted = false;
	for (size_t k = 0; k < res->nev; k++)
		pre_fitted |= res->ev[k].use == USE_FIT &&
			      rows[res->ev[k].row].kind == CALIB_PREFILL;
	(void)prefill;
	cJSON_AddBoolToObject(d, "prefill_rows_fitted", pre_fitted);
	cJSON_AddBoolToObject(d, "compile_refitted", res->compile_fitted);
	cJSON *srcs = cJSON_AddArrayToObject(d, "sources_fitted");
	for (size_t k = 0; k < res->nev; k++) {
		if (res->ev[k].use != USE_FIT)
			continue;
		const char *s = rows[res->ev[k].row].source;
		bool dup = false;
		cJSON *it;
		cJSON_ArrayForEach(it, srcs) dup |= !strcmp(it->valuestring, s);
		if (!dup)
			cJSON_AddItemToArray(srcs, cJSON_CreateString(s));
	}
	cJSON_AddNumberToObject(fit, "rows_fitted", res->n_fit);
	if (res->n_scaled) {
		cJSON_AddNumberToObject(fit, "prefill_version_scale", round_sig(res->prefill_scale, 4));
		cJSON_AddNumberToObject(fit, "prefill_version_scale_se",
					round_sig(res->prefill_scale_se, 3));
	}
	cJSON_AddNumberToObject(fit, "single_card_mape_pct", round_sig(100 * res->single_mape, 4));
	cJSON_AddNumberToObject(fit, "single_card_rows", res->n_single);
	cJSON_AddNumberToObject(fit, "tp_mape_pct", round_sig(100 * res->tp_mape, 4));
	cJSON_AddNumberToObject(fit, "tp_rows", res->n_tp);
	cJSON *fams = cJSON_AddArrayToObject(fit, "families");
	for (int i = 0; i < res->nfam; i++) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "family", res->fam[i].name);
		cJSON_AddStringToObject(f, "use", res->fam[i].use == USE_FIT ? "fit" : "check");
		cJSON_AddNumberToObject(f, "rows", res->fam[i].n);
		cJSON_AddNumberToObject(f, "mape_pct", round_sig(100 * res->fam[i].mape, 4));
		cJSON_AddNumberToObject(f, "max_error_pct", round_sig(100 * res->fam[i].maxerr, 4));
		cJSON_AddItemToArray(fams, f);
	}
	cJSON *se = cJSON_AddObjectToObject(fit, "std_errors");
	for (int i = 0; i < PP_COUNT; i++)
		cJSON_AddNumberToObject(se, perf_param_names[i],
					round_sig(res->se[i] * perf_param_json_scale[i], 3));
	if (res->compile_fitted) {
		cJSON_AddNumberToObject(se, "compile_c0_s", round_sig(res->c0_se, 3));
		cJSON_AddNumberToObject(se, "compile_c1_ms_per_token", round_sig(res->c1_se * 1e3, 3));
	} else { /* the profile's constants, kept: no error to report */
		cJSON_AddNullToObject(se, "compile_c0_s");
		cJSON_AddNullToObject(se, "compile_c1_ms_per_token");
	}
	cJSON *wc = cJSON_AddArrayToObject(fit, "warmup_cases");
	for (int i = 0; i < res->ncomp; i++) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "case", res->comp[i].name);
		cJSON_AddBoolToObject(c, "fitted", res->comp[i].fitted);
		cJSON_AddNumberToObject(c, "measured_s", res->comp[i].measured);
		cJSON_AddNumberToObject(c, "model_s", round_sig(res->comp[i].predicted, 4));
		cJSON_AddItemToArray(wc, c);
	}
	if (!cJSON_ReplaceItemInObjectCaseSensitive(j, "fit", fit))
		cJSON_AddItemToObject(j, "fit", fit);
	return j;
}

static int run(const struct cli_cmd *self, int argc, char **argv)
{
	struct cli_state st = {0};
	const char *data = NULL, *hw = NULL, *software = NULL, *out = NULL;
	bool prefill = true, quiet = false;
	int c;
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		switch (c) {
		case -3: return 0;
		case -2: return BS_EXIT_USAGE;
		case OPT_DATA: data = st.optarg; break;
		case OPT_HARDWARE: hw = st.optarg; break;
		case OPT_SOFTWARE: software = st.optarg; break;
		case OPT_NO_PREFILL: prefill = false; break;
		case 'o': out = st.optarg; break;
		case 'q': quiet = true; break;
		default: return BS_EXIT_USAGE;
		}
	}
	if (st.optind != argc)
		return cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
	if (!data || !hw || !out)
		return cli_usage(self, "--data, --hardware and -o are required");
	if (!*out)
		return cli_usage(self, "empty -o FILE");
	/* --hardware as the CSV's column is read ("Gaudi 2" is gaudi2). */
	char hwname[16];
	calib_norm_hw(hw, hwname, sizeof hwname);
	if (hwname[0])
		hw = hwname;
	struct bs_err err = {0};
	struct calib_row *rows = NULL;
	size_t n = 0;
	struct calib_result res = {0};
	struct outset os;
	outset_init(&os);
	/* Read once: the rows and the provenance hash (FNV-1a 64) are of the same bytes, a pipe
	 * included. */
	char fnv[32];
	size_t len;
	char *buf = calib_read_file(data, &len, &err);
	if (!buf)
		goto fail;
	snprintf(fnv, sizeof fnv, "%016llx", (unsigned long long)fnv1a(FNV1A_BASIS, buf, len));
	int rrc = calib_read_csv_text(data, buf, len, &rows, &n, &err);
	free(buf);
	if (rrc)
		goto fail;
	struct calib_opts o = {.data = data, .hw = hw, .software = software,
			       .use_prefill_rows = prefill};
	calib_default_start(&o.start);
	if (calib_fit(rows, n, &o, &res, &err))
		goto fail;
	if (!quiet) {
		printf("calibration of %s on %s (%zu records; software %s)\n\n", hw, data, n,
		       software ? software : "all");
		calib_print_report(stdout, rows, n, &res);
	}
	cJSON *j = build_profile(hw, rows, n, &res, data, software, prefill, fnv, argc, argv);
	char *text = cJSON_Print(j);
	cJSON_Delete(j);
	FILE *f = outset_open(&os, out, &err);
	if (!f) {
		free(text);
		goto fail;
	}
	fputs(text, f);
	fputc('\n', f);
	free(text);
	if (outset_commit(&os, &err))
		goto fail;
	calib_result_release(&res);
	free(rows);
	return 0;
fail:
	outset_abort(&os);
	calib_result_release(&res);
	free(rows);
	return cli_fail(&err);
}

const struct cli_cmd cmd_calibrate = {
	"calibrate",
	"bucketsim calibrate --data FILE.csv --hardware NAME [--software VERSION] -o PROFILE.json",
	"fit a hardware profile to measurements",
	"Fits the free parameters of a hardware profile (compute, weight-streaming, KV and attention\n"
	"efficiencies, the per-pass overhead, the all-reduce latency and overlap, and the compile\n"
	"constants) with GSL's nonlinear least squares on the relative error of the published\n"
	"static-batch throughput rows of that chip, its per-pass prefill latencies (another\n"
	"version's with a fitted version scale), its CI short-prompt rows, and GPU operator rows\n"
	"(decode passes, passes without attention).  Rows the source flags as doubtful, rows marked\n"
	"'held out', and rows of other software versions when --software is given, are kept out of\n"
	"the fit and reported as checks.  Prints the fit report (per row, per family, parameters\n"
	"with standard errors, warm-up cases) and writes the profile atomically: nothing is written\n"
	"on error.  Exit codes: 0 ok, 1 I/O, 2 usage, 3 invalid data.",
	"  bucketsim calibrate --data models/data/gaudi_measurements.csv --hardware gaudi2 "
	"--software 1.20 -o models/data/gaudi2.json\n"
	"  bucketsim calibrate --data models/data/gaudi_measurements.csv --hardware gaudi3 "
	"--software 1.20 -o /tmp/gaudi3.json -q\n"
	"  bucketsim calibrate --data models/data/gpu_measurements.csv --hardware a100 "
	"-o models/data/a100.json\n",
	opts, run,
};
