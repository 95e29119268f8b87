/*
 * cmd_list: `bucketsim list policies|models|workloads|keys`.
 */
#include <string.h>

#include "models/cost.h"
#include "policies/presets.h"
#include "sim/commands.h"
#include "workloads/workload.h"

static void list_keys(FILE *out, bool choices_only)
{
	for (size_t t = 0; config_tables[t]; t++)
		for (const struct cfg_def *d = config_tables[t]; d->key; d++) {
			if (choices_only && d->type != CFG_CHOICE)
				continue;
			if (choices_only)
				fprintf(out, "%-24s %s\n", d->key, d->choices);
			else
				fprintf(out, "%-36s %-8s %-14s %s%s%s%s\n", d->key,
					d->type == CFG_INT ? "int" : d->type == CFG_DOUBLE ? "number" :
					d->type == CFG_BOOL ? "bool" : d->type == CFG_CHOICE ? "choice" : "string",
					d->def ? d->def : "auto", d->doc, d->unit && d->unit[0] ? " [" : "",
					d->unit ? d->unit : "", d->unit && d->unit[0] ? "]" : "");
		}
}

static int run(const struct cli_cmd *self, int argc, char **argv)
{
	struct cli_state st = {0};
	int c;
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		if (c == -3)
			return 0;
		return BS_EXIT_USAGE;
	}
	if (st.optind != argc - 1)
		return cli_usage(self, "list takes one of: policies, models, workloads, keys");
	const char *what = argv[st.optind];
	if (!strcmp(what, "policies")) {
		list_keys(stdout, true);
		preset_list_print(stdout);
	}
	else if (!strcmp(what, "models"))
		cost_list_print(stdout);
	else if (!strcmp(what, "workloads"))
		workload_list_print(stdout);
	else if (!strcmp(what, "keys"))
		list_keys(stdout, false);
	else
		return cli_usage(self, "unknown list '%s' (policies, models, workloads, keys)", what);
	return 0;
}

static const struct cli_opt opts[] = {CLI_HELP_OPT, {0}};

const struct cli_cmd cmd_list = {
	"list", "bucketsim list policies|models|workloads|keys",
	"list policies, hardware/model profiles, bundled workloads or config keys",
	"Lists what can be selected by name: every policy choice (policies), the hardware and\n"
	"model profiles (models), the bundled traces with their row counts and length statistics\n"
	"(workloads), or every configuration key with its type, default and meaning (keys).",
	"  bucketsim list policies\n  bucketsim list workloads\n  bucketsim list keys\n",
	opts, run,
};
