/*
 * cmd_predict: `bucketsim predict`, the cost model evaluated for a static batch (the way the
 * published throughput rows were measured) or for one forward pass at a given shape.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "policies/bucketing.h"
#include "sim/commands.h"

enum {
	OPT_BATCH = CLI_OPT_FIRST_FREE, OPT_INPUT, OPT_OUTPUT, OPT_PASS, OPT_BLOCKS, OPT_CTX,
	OPT_FORMAT,
};

static const struct cli_opt opts[] = {
	CLI_CONFIG_OPTS,
	{"batch", OPT_BATCH, 1, "N", "batch size (sequences), required", "Shape"},
	{"input", OPT_INPUT, 1, "N", "static batch: input (prompt) tokens per sequence; --pass "
	 "prefill: the query length", "Shape"},
	{"output", OPT_OUTPUT, 1, "N", "static batch: generated tokens per sequence", "Shape"},
	{"pass", OPT_PASS, 1, "prefill|decode", "evaluate one forward pass instead of a static "
	 "batch", "Shape"},
	{"blocks", OPT_BLOCKS, 1, "N", "--pass decode: KV blocks read by the batch (flattened "
	 "block list)", "Shape"},
	{"ctx-blocks", OPT_CTX, 1, "N", "--pass prefill: context blocks per sequence (default 0)",
	 "Shape"},
	{"format", OPT_FORMAT, 1, "text|json", "output format (default text)", "Output"},
	CLI_HELP_OPT,
	{0},
};

static int get_count(const struct cli_cmd *self, const char *opt, const char *arg,
		     int64_t *out)
{
	char why[128];
	if (parse_i64(arg, 0, 1 << 30, out, why, sizeof why))
		return cli_usage(self, "option '--%s': %s", opt, why);
	return 0;
}

static void print_meta(cJSON *root, const struct cost_model *cm, const struct config *cfg)
{
	cJSON *meta = cJSON_AddObjectToObject(root, "meta");
	cJSON_AddStringToObject(meta, "version", BUCKETSIM_VERSION);
	cJSON_AddStringToObject(meta, "hardware", cost_model_hardware(cm));
	cJSON_AddStringToObject(meta, "model", cost_model_name(cm));
	cJSON_AddStringToObject(meta, "precision", config_str(cfg, "model.precision"));
	const char *kvd = config_str(cfg, "model.kv_dtype");
	cJSON_AddStringToObject(meta, "kv_dtype", kvd ? kvd : config_str(cfg, "model.precision"));
	cJSON_AddNumberToObject(meta, "tp", (double)config_int(cfg, "hardware.tp"));
	cJSON_AddNumberToObject(meta, "block_size", (double)config_int(cfg, "server.block_size"));
}

static int emit_json(cJSON *root)
{
	char *s = cJSON_Print(root);
	fputs(s, stdout);
	fputc('\n', stdout);
	free(s);
	cJSON_Delete(root);
	return 0;
}

static int run(const struct cli_cmd *self, int argc, char **argv)
{
	struct cli_config cc;
	struct bs_err err = {0};
	struct cli_state st = {0};
	int64_t bs = -1, in = -1, out = -1, blocks = -1, ctx = -1;
	const char *pass = NULL;
	bool json = false;
	int c, rc = 0;
	cli_config_init(&cc);
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		int r = cli_config_step(&cc, c, st.optarg, &rc);
		if (r < 0)
			goto done;
		if (r == 1)
			continue;
		switch (c) {
		case OPT_BATCH: rc = get_count(self, "batch", st.optarg, &bs); break;
		case OPT_INPUT: rc = get_count(self, "input", st.optarg, &in); break;
		case OPT_OUTPUT: rc = get_count(self, "output", st.optarg, &out); break;
		case OPT_BLOCKS: rc = get_count(self, "blocks", st.optarg, &blocks); break;
		case OPT_CTX: rc = get_count(self, "ctx-blocks", st.optarg, &ctx); break;
		case OPT_PASS:
			pass = st.optarg;
			if (strcmp(pass, "prefill") && strcmp(pass, "decode"))
				rc = cli_usage(self, "option '--pass': expected prefill or decode, got '%s'",
					       pass);
			break;
		case OPT_FORMAT:
			if (!strcmp(st.optarg, "json"))
				json = true;
			else if (strcmp(st.optarg, "text"))
				rc = cli_usage(self, "option '--format': expected text or json, got '%s'",
					       st.optarg);
			break;
		default:
			rc = BS_EXIT_USAGE;
		}
		if (rc)
			goto done;
	}
	if (st.optind != argc) {
		rc = cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
		goto done;
	}
	/* The unread-key check of --strict is a simulation's (run, validate, sweep, capacity,
	 * buckets, trace synth): predict reads the cost model's keys alone, so it cannot apply. */
	if (config_bool(&cc.cfg, "sim.strict")) {
		bs_errf(&err, BS_EXIT_USAGE, NULL, 0, "sim.strict", "--strict checks the keys a "
			"simulation reads, and predict evaluates the cost model alone: check the "
			"configuration with 'bucketsim validate --strict'");
		config_locate(&cc.cfg, &err);
		rc = cli_fail(&err);
		goto done;
	}
	/* An --env name bucketsim does not know warns, as for run. */
	if (env_var_check_names(&cc.cfg, &err)) {
		rc = cli_fail(&err);
		goto done;
	}
	if (cc.print_config) {
		config_print(&cc.cfg, stdout);
		goto done;
	}
	if (bs < 1) {
		rc = cli_usage(self, "--batch N (N >= 1) is required");
		goto done;
	}
	/* An option of another mode is refused, not ignored. */
	bool is_pre = pass && !strcmp(pass, "prefill"), is_dec = pass && !strcmp(pass, "decode");
	const char *misplaced = NULL;
	if (is_dec && in >= 0)
		misplaced = "--input is for a static batch or --pass prefill";
	else if (pass && out >= 0)
		misplaced = "--output is for a static batch (without --pass)";
	else if (!is_dec && blocks >= 0)
		misplaced = "--blocks is for --pass decode";
	else if (!is_pre && ctx >= 0)
		misplaced = "--ctx-blocks is for --pass prefill";
	if (misplaced) {
		rc = cli_usage(self, "%s, not %s", misplaced,
			       is_pre ? "--pass prefill" : is_dec ? "--pass decode" : "a static batch");
		goto done;
	}
	if (ctx < 0)
		ctx = 0;
	if (!pass && (in < 1 || out < 1)) {
		rc = cli_usage(self, "a static batch needs --input N and --output N (N >= 1)");
		goto done;
	}
	if (is_pre && in < 1) {
		rc = cli_usage(self, "--pass prefill needs --input N (the query length, N >= 1)");
		goto done;
	}
	if (is_dec && blocks < 0) {
		rc = cli_usage(self, "--pass decode needs --blocks N");
		goto done;
	}
	struct cost_model *cm;
	if (cost_model_new(&cc.cfg, &cm, &err)) {
		rc = cli_fail(&err);
		goto done;
	}
	/* A sequence longer than the model's context cannot run: server.max_model_len when set,
	 * else the model's own context (vLLM's default max_model_len). */
	int64_t limit = config_is_set(&cc.cfg, "server.max_model_len")
				? config_int(&cc.cfg, "server.max_model_len")
				: cost_model_max_context(cm);
	int64_t bsz = config_int(&cc.cfg, "server.block_size");
	int64_t len = is_pre ? in + ctx * bsz : is_dec ? 0 : in + out;
	if (len > limit) {
		rc = cli_usage(self, "%s = %lld tokens per sequence exceed the maximum context of "
			       "%lld tokens (%s)",
			       is_pre ? "--input + --ctx-blocks x server.block_size" : "--input + --output",
			       (long long)len, (long long)limit,
			       config_is_set(&cc.cfg, "server.max_model_len")
				       ? "server.max_model_len"
				       : "the model's context, vLLM's default max_model_len");
		cost_model_free(cm);
		goto done;
	}
	if (pass) {
		bool pre = is_pre;
		int64_t ns = pre ? cost_prefill_ns(cm, (int32_t)bs, (int32_t)in, (int32_t)ctx)
				 : cost_decode_ns(cm, (int32_t)bs, (int32_t)blocks);
		double tokens = pre ? (double)bs * in : (double)bs;
		if (json) {
			cJSON *root = cJSON_CreateObject();
			print_meta(root, cm, &cc.cfg);
			cJSON_AddStringToObject(root, "pass", pass);
			cJSON_AddNumberToObject(root, "batch", (double)bs);
			if (pre) {
				cJSON_AddNumberToObject(root, "query", (double)in);
				cJSON_AddNumberToObject(root, "ctx_blocks", (double)ctx);
			} else {
				cJSON_AddNumberToObject(root, "num_blocks", (double)blocks);
			}
			cJSON_AddNumberToObject(root, "pass_ms", ns / 1e6);
			cJSON_AddNumberToObject(root, "tokens_per_s", tokens / (ns / 1e9));
			emit_json(root);
		} else {
			printf("%s %s %s tp=%d: %s pass, batch %lld, ",
			       cost_model_hardware(cm), cost_model_name(cm),
			       config_str(&cc.cfg, "model.precision"), (int)config_int(&cc.cfg, "hardware.tp"),
			       pass, (long long)bs);
			if (pre)
				printf("query %lld, context blocks %lld\n", (long long)in, (long long)ctx);
			else
				printf("%lld KV blocks\n", (long long)blocks);
			printf("pass time          %12.3f ms\n", ns / 1e6);
			printf("tokens per second  %12.1f\n", tokens / (ns / 1e9));
		}
	} else {
		double pre, dec, tot, thr;
		cost_static_batch(cm, bs, in, out, &pre, &dec, &tot, &thr);
		if (json) {
			cJSON *root = cJSON_CreateObject();
			print_meta(root, cm, &cc.cfg);
			cJSON_AddNumberToObject(root, "batch", (double)bs);
			cJSON_AddNumberToObject(root, "input", (double)in);
			cJSON_AddNumberToObject(root, "output", (double)out);
			cJSON_AddNumberToObject(root, "prefill_s", pre);
			cJSON_AddNumberToObject(root, "decode_step_ms_mean", dec * 1e3);
			cJSON_AddNumberToObject(root, "total_s", tot);
			cJSON_AddNumberToObject(root, "throughput_tokens_per_s", thr);
			emit_json(root);
		} else {
			printf("%s %s %s tp=%d: static batch %lld x (%lld in, %lld out)\n",
			       cost_model_hardware(cm), cost_model_name(cm),
			       config_str(&cc.cfg, "model.precision"), (int)config_int(&cc.cfg, "hardware.tp"),
			       (long long)bs, (long long)in, (long long)out);
			printf("prefill            %12.3f s\n", pre);
			printf("decode step (mean) %12.3f ms\n", dec * 1e3);
			printf("total              %12.3f s\n", tot);
			printf("throughput         %12.1f generated tokens/s\n", thr);
		}
	}
	cost_model_free(cm);
done:
	cli_config_release(&cc);
	return rc;
}

const struct cli_cmd cmd_predict = {
	"predict",
	"bucketsim predict [--set KEY=VALUE]... --batch N (--input N --output N | --pass "
	"prefill|decode ...) [--format text|json]",
	"evaluate the cost model for a static batch or one forward pass",
	"Evaluates the calibrated cost model of the configured hardware (hardware, hardware.tp),\n"
	"model (model, model.precision, model.kv_dtype) and block size.  By default it predicts a\n"
	"static batch as the published throughput rows were measured: one prefill of batch x input\n"
	"tokens, then output - 1 decode steps at the growing context (KV span padded in 128-token\n"
	"steps); it prints the prefill time, the mean decode step, the total time and the generated\n"
	"tokens per second (batch x output / total).  With --pass it prints the time of one forward\n"
	"pass at the given padded shape.  An option of another mode (--output with --pass,\n"
	"--blocks without --pass decode, --ctx-blocks without --pass prefill, --input with --pass\n"
	"decode) is an error, as is a sequence longer than the maximum context (server.max_model_len\n"
	"when set, else the model's context).  Exit codes: 0 ok, 2 usage, 3 invalid input (e.g. an\n"
	"unknown hardware or model name).  An --env name bucketsim does not read warns, as for\n"
	"run; --strict (sim.strict) is refused: it checks the keys a simulation reads (use\n"
	"'bucketsim validate --strict').",
	"  bucketsim predict --set hardware=gaudi2 --set model=llama-3.1-8b --set model.precision=fp8 "
	"--batch 512 --input 128 --output 2048\n"
	"  bucketsim predict --set hardware=gaudi3 --set model=llama-3.1-70b --set hardware.tp=2 "
	"--batch 64 --input 2048 --output 128 --format json\n"
	"  bucketsim predict --pass decode --batch 64 --blocks 512\n",
	opts, run,
};
