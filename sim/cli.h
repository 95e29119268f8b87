/*
 * cli: subcommand and option tables.
 *
 * Each subcommand is a `const struct cli_cmd` in its own file, listed in sim/main.c.  Its option
 * table drives both getopt_long and --help, so the help cannot drift from what is parsed.
 * Explicit help goes to stdout with exit 0; misuse prints one line plus
 * "see 'bucketsim CMD --help'" to stderr and exits 2.
 *
 * Options shared by every command that takes a configuration (CLI_CONFIG_OPTS): -c/--config,
 * --set key=value, --env NAME=VALUE, --seed N, --preset NAME, --strict, --print-config.  cli_config_opt() applies them in
 * the order given; a config file is loaded when seen, and --set/--env always win over it because
 * they carry the command-line origin.
 */
#ifndef BS_CLI_H
#define BS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/config.h"

struct cli_opt {
	const char *name;     /* long name without "--"; NULL ends the table */
	int key;              /* short letter when printable, else a value >= 256 */
	int has_arg;          /* 0 or 1, plus CLI_REPEAT when the option may be given more than
			       * once (cli_next refuses any other option given twice) */
	const char *arg;      /* argument name for help, e.g. "FILE" */
	const char *help;     /* one line; defaults and units go here */
	const char *group;    /* help heading, e.g. "Output"; NULL = "Options" */
};

struct cli_cmd {
	const char *name;     /* "run", "trace synth", ... */
	const char *synopsis; /* "bucketsim run -c CONFIG.json --trace FILE [options]" */
	const char *summary;  /* one line for the command list */
	const char *description;
	const char *examples; /* lines, each a copy-pasteable command */
	const struct cli_opt *opts;
	int (*fn)(const struct cli_cmd *self, int argc, char **argv);
};

/* Added to cli_opt.has_arg: the option may be given more than once (--set, --env, -c, ...).
 * Every other option takes one value: given twice, cli_next() refuses it. */
#define CLI_REPEAT 2

/* Keys of the shared config options. */
enum {
	CLI_OPT_CONFIG = 'c',
	CLI_OPT_SET = 256,
	CLI_OPT_ENV,
	CLI_OPT_SEED,
	CLI_OPT_PRINT_CONFIG,
	CLI_OPT_PRESET,
	CLI_OPT_STRICT,
	CLI_OPT_HELP = 'h',
	CLI_OPT_FIRST_FREE = 300,  /* commands number their own long-only options from here */
};

#define CLI_CONFIG_OPTS                                                                     \
	{"config", CLI_OPT_CONFIG, 1 | CLI_REPEAT, "FILE",                                       \
	 "JSON config file (keys: bucketsim list keys); repeatable, a later file wins",         \
	 "Configuration"},                                                                  \
	{"set", CLI_OPT_SET, 1 | CLI_REPEAT, "KEY=VALUE",                                       \
	 "set one config key; repeatable; wins over -c", "Configuration"},                      \
	{"env", CLI_OPT_ENV, 1 | CLI_REPEAT, "NAME=VALUE",                                      \
	 "a vLLM-Gaudi environment variable (e.g. VLLM_BUCKETING_STRATEGY=lin); repeatable",    \
	 "Configuration"},                                                                  \
	{"seed", CLI_OPT_SEED, 1, "N", "master random seed (default 1); recorded in outputs",  \
	 "Configuration"},                                                                  \
	{"preset", CLI_OPT_PRESET, 1, "NAME",                                                   \
	 "apply a named policy preset (bucketsim list policies); one (presets do not stack); "  \
	 "--set wins over it",                                                                  \
	 "Configuration"},                                                                  \
	{"strict", CLI_OPT_STRICT, 0, NULL,                                                     \
	 "make the warnings about explicitly set keys (and --env variables) the chosen "        \
	 "policies, topology and workload never read errors (sets sim.strict)",                 \
	 "Configuration"},                                                                  \
	{"print-config", CLI_OPT_PRINT_CONFIG, 0, NULL,                                         \
	 "print every key's effective value and origin, then exit", "Configuration"}

#define CLI_HELP_OPT {"help", CLI_OPT_HELP, 0, NULL, "show this help and exit", NULL}

#define CLI_MAX_OPTS 64

struct cli_state {
	int optind;
	const char *optarg;
	/* Per option of the table (by index): the value it was first given (or "" for a flag),
	 * NULL while not seen. */
	const char *seen[CLI_MAX_OPTS];
};

/* Returns the next option's key, -1 at the end of options (positional arguments start at
 * st->optind), or -2 after printing a usage error (the caller returns BS_EXIT_USAGE): an
 * unknown option, a missing argument, or an option without CLI_REPEAT given a second time.
 * --help is handled here: it prints the help and returns -3 (the caller returns 0). */
int cli_next(const struct cli_cmd *cmd, int argc, char **argv, struct cli_state *st);
void cli_help(const struct cli_cmd *cmd, FILE *out);
/* Prints "bucketsim: error: MSG" and "see 'bucketsim CMD --help'"; returns BS_EXIT_USAGE. */
int cli_usage(const struct cli_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Common configuration handling for commands. */
struct cli_config {
	struct config cfg;
	uint64_t seed;
	bool print_config;
	char *preset;   /* the --preset applied, or NULL: a second one is refused */
};
void cli_config_init(struct cli_config *cc);
void cli_config_release(struct cli_config *cc);
/* Applies one shared option; returns 1 if KEY was a shared option, 0 if not, -1 on error
 * (ERR filled). */
int cli_config_opt(struct cli_config *cc, int key, const char *arg, struct bs_err *err);
/* The shared head of a command's option loop, for C as cli_next returned it (with its ARG):
 * -1 when the command stops with exit status *RC (0 after --help, BS_EXIT_USAGE after a usage
 * error, a shared option's error printed and its code), 1 when C was a shared option (applied
 * to CC), 0 when it is the command's own. */
int cli_config_step(struct cli_config *cc, int c, const char *arg, int *rc);

/* Prints ERR and returns its exit code. */
int cli_fail(const struct bs_err *err);

#endif
