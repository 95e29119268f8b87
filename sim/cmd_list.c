/*
 * cmd_list: `bucketsim list [policies|presets|models|workloads|keys|env]` (no argument: all).
 */
#include <string.h>

#include "models/cost.h"
#include "policies/bucketing.h"
#include "policies/policy.h"
#include "policies/presets.h"
#include "sim/commands.h"
#include "workloads/workload.h"

/* Every key (module tables and policies' own keys) with its type, default and meaning; a
 * choice with the values it takes (a policy family's: its members, policies/registry.c). */
static void list_keys(FILE *out)
{
	struct config c;
	config_init(&c);
	char values[1024];
	for (size_t i = 0; i < c.n; i++) {
		const struct cfg_def *d = c.e[i].def;
		bool choice = d->type == CFG_CHOICE, unit = d->unit && d->unit[0];
		fprintf(out, "%-36s %-8s %-14s %s", d->key,
			d->type == CFG_INT ? "int" : d->type == CFG_DOUBLE ? "number" :
			d->type == CFG_BOOL ? "bool" : choice ? "choice" : "string",
			d->def ? d->def : "auto", d->doc);
		if (choice)   /* a key whose default is auto can be set back to auto */
			fprintf(out, " (one of: %s%s)", d->def ? "" : "auto|",
				config_choices(d, "|", values, sizeof values));
		if (unit)
			fprintf(out, " [%s]", d->unit);
		fputc('\n', out);
	}
	config_release(&c);
}

/* Every environment variable bucketsim reads (policies/bucket_env.c), with its meaning. */
static void list_env(FILE *out)
{
	for (const struct env_var_def *d = env_var_defs; d->name; d++)
		fprintf(out, "%-36s %s%s%s%s\n", d->name, d->doc, d->unit ? " [" : "",
			d->unit ? d->unit : "", d->unit ? "]" : "");
}

static void list_policies_presets(FILE *out);

/* The lists, in the order `list` without an argument prints them. */
static const struct {
	const char *name;
	void (*print)(FILE *out);
} lists[] = {
	{"policies", list_policies_presets}, {"presets", preset_list_print},
	{"models", cost_list_print},        {"workloads", workload_list_print},
	{"keys", list_keys},                {"env", list_env},
};
#define LIST_NAMES "policies, presets, models, workloads, keys, env"

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
	fputs("other choice keys (not policies): key, values\n", out);
	for (size_t i = 0; i < c.n; i++) {
		const struct cfg_def *d = c.e[i].def;
		if (d->type == CFG_CHOICE && !policy_family_by_key(d->key))
			fprintf(out, "  %-24s %s\n", d->key, config_choices(d, "|", buf, sizeof buf));
	}
	config_release(&c);
}

static void list_policies_presets(FILE *out)
{
	list_policies(out);
	preset_list_print(out);
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
	if (st.optind == argc) { /* everything, each part under a heading naming its list (the
				  * presets with the policies) */
		for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
			if (strcmp(lists[i].name, "presets")) {
				printf("%s== bucketsim list %s ==\n", i ? "\n" : "", lists[i].name);
				lists[i].print(stdout);
			}
		return 0;
	}
	/* Options after the list's name (the option parser stops at the name). */
	for (int i = st.optind + 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_help(self, stdout);
			return 0;
		}
		if (argv[i][0] == '-')
			return cli_usage(self, "unknown option '%s'", argv[i]);
	}
	if (st.optind != argc - 1)
		return cli_usage(self, "list takes at most one of: " LIST_NAMES);
	const char *what = argv[st.optind];
	for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
		if (!strcmp(what, lists[i].name)) {
			lists[i].print(stdout);
			return 0;
		}
	return cli_usage(self, "unknown list '%s' (" LIST_NAMES ")", what);
}

static const struct cli_opt opts[] = {CLI_HELP_OPT, {0}};

const struct cli_cmd cmd_list = {
	"list", "bucketsim list [policies|presets|models|workloads|keys|env]",
	"list policies, presets, hardware/model profiles, bundled workloads, config keys or "
	"--env variables",
	"Lists what can be selected by name: every policy choice and preset (policies), the\n"
	"presets alone with the keys they set (presets), the hardware and\n"
	"model profiles (models), the bundled traces with their row counts and length statistics\n"
	"(workloads), every configuration key with its type, default and meaning (keys), or\n"
	"every environment variable bucketsim reads from --env with its meaning (env; [file]:\n"
	"its value names a file).\n"
	"Without an argument, all of them (the presets with the policies), each under a heading\n"
	"\"== bucketsim list NAME ==\".",
	"  bucketsim list\n  bucketsim list policies\n  bucketsim list presets\n  bucketsim list workloads\n  bucketsim list keys\n  bucketsim list env\n",
	opts, run,
};
