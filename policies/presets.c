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
	{"distserve", "DistServe-like: prefill/decode disaggregation, one bucket, FCFS, the "
		      "paper's padded prefill batches in arrival order (on Gaudi each within a "
		      "warmed prompt bucket of up to 16 prompts; Gaudi's one-prompt passes: "
		      "scheduler.batching=continuous server.max_num_prefill_seqs=1)",
	 {"cluster.mode=disaggregated", "scheduler.grouping=none",
	  "scheduler.batching=prefill_batch", "server.max_num_prefill_seqs=16",
	  "scheduler.order=fcfs", NULL}},
	{"uellm", "UELLM batching rule: sort by SLO then (known) output length, static batches "
		  "of at most 10 with bounded padding, colocated",
	 {"cluster.mode=colocated", "scheduler.grouping=none", "scheduler.batching=static",
	  "scheduler.order=slo_output", "scheduler.static_batch_size=10", NULL}},
	{"bucketserve", "BucketServe for online work: disaggregated, adaptive buckets, the "
			"paper's padded prefill batches from one bucket (on Gaudi each within a "
			"warmed prompt bucket of up to 16 prompts), earliest-arrival bucket first "
			"(Gaudi's one-prompt passes: scheduler.batching=memory_safe "
			"server.max_num_prefill_seqs=1)",
	 {"cluster.mode=disaggregated", "scheduler.grouping=adaptive",
	  "scheduler.batching=prefill_batch", "server.max_num_prefill_seqs=16",
	  "scheduler.order=earliest_bucket", "scheduler.task_aware=true", NULL}},
	{"bucketserve-offline", "BucketServe for offline work: as bucketserve, every request "
				"offline, SJF inside buckets",
	 {"cluster.mode=disaggregated", "scheduler.grouping=adaptive",
	  "scheduler.batching=prefill_batch", "server.max_num_prefill_seqs=16",
	  "scheduler.order=sjf", "scheduler.task_aware=true", "workload.task=offline", NULL}},
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
		struct config c;
		config_init(&c);
		struct bs_err err = {0};
		preset_apply(&c, presets[i].name, &err);
		long long cards = (long long)cluster_cards(&c);
		config_release(&c);
		fprintf(out, "preset %-20s %s; %lld card%s (hardware.tp 1; cluster.cards=N to fix "
			"the total):", presets[i].name, presets[i].doc, cards, cards > 1 ? "s" : "");
		for (size_t k = 0; presets[i].kv[k]; k++)
			fprintf(out, " %s", presets[i].kv[k]);
		fputc('\n', out);
	}
}

int64_t cluster_cards(const struct config *c)
{
	int64_t tp = config_int(c, "hardware.tp");
	if (!strcmp(config_str(c, "cluster.mode"), "disaggregated"))
		return (config_int(c, "cluster.prefill_instances") +
			config_int(c, "cluster.decode_instances")) * tp;
	return config_int(c, "cluster.instances") * config_int(c, "cluster.pp") * tp;
}

static bool user_set(const struct config *c, const char *key)
{
	const struct cfg_entry *e = config_find(c, key);
	return e->origin == CFG_ORIGIN_FILE || e->origin == CFG_ORIGIN_CMDLINE;
}

static int set_count(struct config *c, const char *key, int64_t v, struct bs_err *err)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)v);
	return config_set(c, key, buf, CFG_ORIGIN_DERIVED, NULL, 0, err);
}

int cluster_cards_resolve(struct config *c, struct bs_err *err)
{
	if (!config_is_set(c, "cluster.cards"))
		return 0;
	int64_t n = config_int(c, "cluster.cards"), tp = config_int(c, "hardware.tp");
	const char *f = c->file;
	if (!strcmp(config_str(c, "cluster.mode"), "disaggregated")) {
		if (n % tp)
			return bs_errf(err, BS_EXIT_INPUT, f, 0, "cluster.cards",
				       "%lld cards are not a whole number of instances of "
				       "hardware.tp %lld cards", (long long)n, (long long)tp);
		int64_t total = n / tp;
		if (total < 2)
			return bs_errf(err, BS_EXIT_INPUT, f, 0, "cluster.cards",
				       "%lld card%s make%s %lld instance%s of hardware.tp %lld: "
				       "disaggregation needs a prefill and a decode instance",
				       (long long)n, n > 1 ? "s" : "", n > 1 ? "" : "s", (long long)total, total > 1 ? "s" : "",
				       (long long)tp);
		bool sp = user_set(c, "cluster.prefill_instances");
		bool sd = user_set(c, "cluster.decode_instances");
		int64_t p = config_int(c, "cluster.prefill_instances");
		int64_t d = config_int(c, "cluster.decode_instances");
		if (sp && sd && p + d != total)
			return bs_errf(err, BS_EXIT_INPUT, f, 0, "cluster.cards",
				       "%lld cards are %lld instances of hardware.tp %lld, but "
				       "cluster.prefill_instances + cluster.decode_instances = %lld",
				       (long long)n, (long long)total, (long long)tp,
				       (long long)(p + d));
		if (sp && !sd)
			d = total - p;
		else if (sd && !sp)
			p = total - d;
		else if (!sp && !sd) {
			p = total / 2;
			d = total - p;
		}
		if (p < 1 || d < 1)
			return bs_errf(err, BS_EXIT_INPUT, f, 0, "cluster.cards",
				       "%lld cards are %lld instances of hardware.tp %lld: no room for "
				       "%lld %s instances", (long long)n, (long long)total,
				       (long long)tp, (long long)(sp ? p : d),
				       sp ? "prefill" : "decode");
		if (set_count(c, "cluster.prefill_instances", p, err) ||
		    set_count(c, "cluster.decode_instances", d, err))
			return -1;
		return 0;
	}
	int64_t per = config_int(c, "cluster.pp") * tp;
	if (n % per)
		return bs_errf(err, BS_EXIT_INPUT, f, 0, "cluster.cards",
			       "%lld cards are not a whole number of instances of cluster.pp x "
			       "hardware.tp = %lld cards", (long long)n, (long long)per);
	if (user_set(c, "cluster.instances") && config_int(c, "cluster.instances") != n / per)
		return bs_errf(err, BS_EXIT_INPUT, f, 0, "cluster.cards",
			       "%lld cards are %lld instances of %lld cards, but cluster.instances "
			       "is %lld: give one of the two", (long long)n, (long long)(n / per),
			       (long long)per, (long long)config_int(c, "cluster.instances"));
	return set_count(c, "cluster.instances", n / per, err);
}
