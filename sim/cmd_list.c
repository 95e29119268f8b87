/*
 * cmd_list: `bucketsim list [policies|presets|models|workloads|keys]` (no argument: all).
 */
#include <string.h>

#include "models/cost.h"
#include "policies/policy.h"
#include "policies/presets.h"
#include "sim/commands.h"
#include "workloads/workload.h"

/* Every key (module tables and policies' own keys) with its type, default and meaning. */
static void list_keys(FILE *out)
{
	struct config c;
	config_init(&c);
	for (size_t i = 0; i < c.n; i++) {
		const struct cfg_def *d = c.e[i].def;
		fprintf(out, "%-36s %-8s %-14s %s%s%s%s\n", d->key,
			d->type == CFG_INT ? "int" : d->type == CFG_DOUBLE ? "number" :
			d->type == CFG_BOOL ? "bool" : d->type == CFG_CHOICE ? "choice" : "string",
			d->def ? d->def : "auto", d->doc, d->unit && d->unit[0] ? " [" : "",
			d->unit ? d->unit : "", d->unit && d->unit[0] ? "]" : "");
	}
	config_release(&c);
}

/* Every policy family with its members (policies/registry.c), then the other choice keys. */
static void list_policies(FILE *out)
{
	for (size_t f = 0; policy_families[f]; f++) {
		const struct policy_family *fam = policy_families[f];
		fprintf(out, "%s (%s): %s\n", fam->name, fam->key, fam->doc);
		for (size_t m = 0; fam->members[m]; m++) {
			const struct policy_info *pi = fam->members[m];
			fprintf(out, "  %-20s %s", pi->name, pi->doc);
			for (const struct cfg_def *d = pi->keys; d && d->key; d++)
				fprintf(out, "%s%s", d == pi->keys ? " [reads " : ", ", d->key);
			fprintf(out, "%s\n", pi->keys && pi->keys->key ? "]" : "");
		}
	}
	struct config c;
	config_init(&c);
	char buf[1024];
	for (size_t i = 0; i < c.n; i++) {
		const struct cfg_def *d = c.e[i].def;
		if (d->type == CFG_CHOICE && !policy_family_by_key(d->key))
			fprintf(out, "%-24s %s\n", d->key, config_choices(d, "|", buf, sizeof buf));
	}
	config_release(&c);
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
	if (st.optind == argc) { /* everything, each part under a heading naming its list */
		static const char *const parts[] = {"policies", "models", "workloads", "keys"};
		for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
			printf("%s== bucketsim list %s ==\n", i ? "\n" : "", parts[i]);
			char *one[] = {argv[0], (char *)parts[i], NULL};
			int rc = run(self, 2, one);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (st.optind != argc - 1)
		return cli_usage(self, "list takes at most one of: policies, presets, models, workloads, keys");
	const char *what = argv[st.optind];
	if (!strcmp(what, "policies")) {
		list_policies(stdout);
		preset_list_print(stdout);
	}
	else if (!strcmp(what, "presets"))
		preset_list_print(stdout);
	else if (!strcmp(what, "models"))
		cost_list_print(stdout);
	else if (!strcmp(what, "workloads"))
		workload_list_print(stdout);
	else if (!strcmp(what, "keys"))
		list_keys(stdout);
	else
		return cli_usage(self, "unknown list '%s' (policies, presets, models, workloads, keys)", what);
	return 0;
}

static const struct cli_opt opts[] = {CLI_HELP_OPT, {0}};

const struct cli_cmd cmd_list = {
	"list", "bucketsim list [policies|presets|models|workloads|keys]",
	"list policies, presets, hardware/model profiles, bundled workloads or config keys",
	"Lists what can be selected by name: every policy choice and preset (policies), the\n"
	"presets alone with the keys they set (presets), the hardware and\n"
	"model profiles (models), the bundled traces with their row counts and length statistics\n"
	"(workloads), or every configuration key with its type, default and meaning (keys).\n"
	"Without an argument, all of them (the presets with the policies), each under a heading\n"
	"\"== bucketsim list NAME ==\".",
	"  bucketsim list\n  bucketsim list policies\n  bucketsim list presets\n  bucketsim list workloads\n  bucketsim list keys\n",
	opts, run,
};
