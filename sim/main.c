/*
 * main: the command line.  Dispatches to a subcommand; all work is in libbucketsim.
 */
#include <errno.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_version.h>
#include <cjson/cJSON.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "sim/commands.h"

static const struct cli_cmd *const commands[] = {
	&cmd_run, &cmd_sweep, &cmd_capacity, &cmd_plot, &cmd_validate, &cmd_buckets, &cmd_trace, &cmd_predict, &cmd_calibrate,
	&cmd_list, NULL,
};

static void usage(FILE *out)
{
	fputs("Usage: bucketsim COMMAND [options]\n\n"
	      "A discrete-event simulator of how LLM-serving systems bucket, pad, batch and schedule\n"
	      "requests, with a calibrated Intel Gaudi cost model.\n\n"
	      "Commands:\n", out);
	for (size_t i = 0; commands[i]; i++)
		fprintf(out, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
	fputs("  help CMD     show a command's help\n\n"
	      "Examples:\n"
	      "  bucketsim run --trace alpaca -o out/alpaca\n"
	      "  bucketsim buckets --set server.max_model_len=1024 --set server.max_num_seqs=4\n"
	      "  bucketsim list workloads\n\n"
	      "Options:\n"
	      "  -h, --help     show this help\n"
	      "  -V, --version  show the version and build configuration\n\n"
	      "Exit status: 0 success, 1 runtime failure (I/O), 2 usage error, "
	      "3 invalid input (config, trace or bucket file).\n", out);
}

static void version(void)
{
	printf("bucketsim %s\n", BUCKETSIM_VERSION);
	printf("build: C%ld, gsl %s, cjson %d.%d.%d, libcsv 3, %s\n", (long)__STDC_VERSION__,
	       GSL_VERSION, CJSON_VERSION_MAJOR, CJSON_VERSION_MINOR, CJSON_VERSION_PATCH,
#ifdef __OPTIMIZE__
	       "optimised"
#else
	       "not optimised"
#endif
	);
}

static const struct cli_cmd *find(const char *name)
{
	for (size_t i = 0; commands[i]; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static int finish(int rc)
{
	/* Output discipline: a failed write to stdout is an error, a closed pipe is not. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE) {
			fprintf(stderr, "bucketsim: error: writing to standard output: %s\n",
				strerror(errno));
			return rc ? rc : BS_EXIT_RUNTIME;
		}
	}
	return rc;
}

static int unknown_command(const char *name)
{
	fputs("bucketsim: error: unknown command '", stderr);
	fputs_escaped(name, stderr);
	fputs("'\nsee 'bucketsim --help'\n", stderr);
	return BS_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "C");
	bs_argv0 = argv[0];
	signal(SIGPIPE, SIG_IGN);
	gsl_set_error_handler_off();
	if (argc < 2) {
		usage(stderr);
		return BS_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
		usage(stdout);
		return finish(0);
	}
	if (!strcmp(name, "-V") || !strcmp(name, "--version")) {
		version();
		return finish(0);
	}
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			usage(stdout);
			return finish(0);
		}
		const struct cli_cmd *c = find(argv[2]);
		if (!c) {
			return unknown_command(argv[2]);
		}
		cli_help(c, stdout);
		return finish(0);
	}
	const struct cli_cmd *c = find(name);
	if (!c) {
		return unknown_command(name);
	}
	return finish(c->fn(c, argc - 1, argv + 1));
}
