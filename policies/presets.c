/*
 * presets: see presets.h.
 */
#include "policies/presets.h"

#include <stdlib.h>
#include <string.h>

struct preset {
	const char *name;
	const char *doc;
	const char *kv[10];
};

static const struct preset presets[] = {
	{"vllm", "vLLM-like: one colocated instance, continuous batching, FCFS",
	 {"cluster.mode=colocated", "scheduler.grouping=none", "scheduler.batching=continuous",
	  "scheduler.order=fcfs", NULL}},
	{"distserve", "DistServe-like: prefill/decode disaggregation, one bucket, FCFS",
	 {"cluster.mode=disaggregated", "scheduler.grouping=none", "scheduler.batching=continuous",
	  "scheduler.order=fcfs", NULL}},
	{"uellm", "UELLM batching rule: sort by SLO then (known) output length, static batches "
		  "of at most 10 with bounded padding, colocated",
	 {"cluster.mode=colocated", "scheduler.grouping=none", "scheduler.batching=static",
	  "scheduler.order=slo_output", "scheduler.static_batch_size=10", NULL}},
	{"bucketserve", "BucketServe for online work: disaggregated, adaptive buckets, memory-safe "
			"batches, earliest-arrival bucket first",
	 {"cluster.mode=disaggregated", "scheduler.grouping=adaptive",
	  "scheduler.batching=memory_safe", "scheduler.order=earliest_bucket",
	  "scheduler.task_aware=true", NULL}},
	{"bucketserve-offline", "BucketServe for offline work: as bucketserve, every request "
				"offline, SJF inside buckets",
	 {"cluster.mode=disaggregated", "scheduler.grouping=adaptive",
	  "scheduler.batching=memory_safe", "scheduler.order=sjf", "scheduler.task_aware=true",
	  "workload.task=offline", NULL}},
};

int preset_apply(struct config *c, const char *name, struct bs_err *err)
{
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
		if (strcmp(presets[i].name, name))
			continue;
		for (size_t k = 0; presets[i].kv[k]; k++) {
			char key[64];
			const char *eq = strchr(presets[i].kv[k], '=');
			snprintf(key, sizeof key, "%.*s", (int)(eq - presets[i].kv[k]), presets[i].kv[k]);
			char *origin = xasprintf("preset %s", name);
			int rc = config_set(c, key, eq + 1, CFG_ORIGIN_PRESET, origin, 0, err);
			free(origin);
			if (rc)
				BUG("preset %s: %s", name, err->msg);
		}
		return 0;
	}
	char list[256] = "";
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
			 presets[i].name);
	return bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--preset", "unknown preset '%s' (%s)", name,
		       list);
}

void preset_list_print(FILE *out)
{
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
		fprintf(out, "preset %-20s %s:", presets[i].name, presets[i].doc);
		for (size_t k = 0; presets[i].kv[k]; k++)
			fprintf(out, " %s", presets[i].kv[k]);
		fputc('\n', out);
	}
}
