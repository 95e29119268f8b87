/*
 * fuzz_config: the configuration as `bucketsim validate` loads it without a workload: a JSON
 * config file, then --set and --env values, then everything checked after loading (cost model
 * and derived keys, bucketing with its VLLM_* variables, kernel parameters, bucket lists,
 * BucketServe).  Input: the JSON text, then optionally a line "----" followed by lines
 * "set KEY=VALUE" or "env NAME=VALUE".
 */
#include <stdlib.h>
#include <string.h>

#include "sim/run_int.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (memchr(data, 0, size))
		return 0; /* config_load_json refuses NUL bytes before parsing */
	char *text = xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	char *args = strstr(text, "\n----\n");
	if (args) {
		*args = 0;
		args += 6;
	}
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	cli_config_init(&x.cc);
	struct bs_err err = {0};
	int rc = config_load_json_text(&x.cc.cfg, "fuzz.json", text, &err);
	for (char *line = args; !rc && line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(line, "set ", 4))
			rc = config_set_arg(&x.cc.cfg, line + 4, &err);
		else if (!strncmp(line, "env ", 4))
			rc = config_set_env_arg(&x.cc.cfg, line + 4, CFG_ORIGIN_CMDLINE, &err);
		line = nl ? nl + 1 : NULL;
	}
	if (!rc && !run_setup(&x, NULL, false, &err)) {
		config_hash(&x.cc.cfg);
		cJSON_Delete(config_to_json(&x.cc.cfg));
	}
	config_locate(&x.cc.cfg, &err);
	run_teardown(&x);
	free(text);
	return 0;
}
