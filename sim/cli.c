/*
 * cli: see cli.h.
 */
#include "sim/cli.h"

#include "policies/presets.h"

#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static size_t count_opts(const struct cli_opt *o)
{
	size_t n = 0;
	while (o && o[n].name)
		n++;
	return n;
}

int cli_next(const struct cli_cmd *cmd, int argc, char **argv, struct cli_state *st)
{
	size_t n = count_opts(cmd->opts);
	if (n > CLI_MAX_OPTS)
		BUG("command '%s' has %zu options, more than CLI_MAX_OPTS", cmd->name, n);
	struct option *lo = xcalloc(n + 1, sizeof *lo);
	char shorts[256];
	size_t k = 0;
	shorts[k++] = '+'; /* stop at the first positional argument */
	shorts[k++] = ':';
	for (size_t i = 0; i < n; i++) {
		lo[i].name = cmd->opts[i].name;
		lo[i].has_arg = cmd->opts[i].has_arg & 1 ? required_argument : no_argument;
		lo[i].val = cmd->opts[i].key;
		if (cmd->opts[i].key < 256 && isalnum(cmd->opts[i].key) && k + 3 < sizeof shorts) {
			shorts[k++] = (char)cmd->opts[i].key;
			if (cmd->opts[i].has_arg & 1)
				shorts[k++] = ':';
		}
	}
	shorts[k] = 0;
	if (st->optind == 0) {
		optind = 0; /* full reset of getopt's state */
		st->optind = 1;
	}
	optind = st->optind;
	opterr = 0;
	int c = getopt_long(argc, argv, shorts, lo, NULL);
	st->optind = optind;
	st->optarg = optarg;
	free(lo);
	if (c == -1)
		return -1;
	if (c == '?') {
		if (optopt)
			return (void)cli_usage(cmd, "unknown option '-%c'", optopt), -2;
		return (void)cli_usage(cmd, "unknown option '%s'", argv[optind - 1]), -2;
	}
	if (c == ':')
		return (void)cli_usage(cmd, "option '%s' needs an argument", argv[optind - 1]), -2;
	if (c == CLI_OPT_HELP) {
		cli_help(cmd, stdout);
		return -3;
	}
	/* An option that takes one value, given again: the last one silently winning would hide
	 * the first. */
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *o = &cmd->opts[i];
		if (o->key != c)
			continue;
		const char *now = o->has_arg & 1 ? st->optarg : "";
		if (!st->seen[i]) {
			st->seen[i] = now ? now : "";
			break;
		}
		if (o->has_arg & CLI_REPEAT)
			break;
		if (c == CLI_OPT_PRESET)
			return (void)cli_usage(cmd, "option '--preset' given twice ('%s', then '%s'): "
					       "presets do not stack; give one and change keys with "
					       "--set", st->seen[i], now), -2;
		if (o->has_arg & 1)
			return (void)cli_usage(cmd, "option '--%s' given twice ('%s', then '%s'): it "
					       "takes one value", o->name, st->seen[i], now), -2;
		return (void)cli_usage(cmd, "option '--%s' given twice", o->name), -2;
	}
	return c;
}

void cli_help(const struct cli_cmd *cmd, FILE *out)
{
	fprintf(out, "Usage: %s\n\n", cmd->synopsis);
	if (cmd->description)
		fprintf(out, "%s\n\n", cmd->description);
	if (cmd->examples)
		fprintf(out, "Examples:\n%s\n", cmd->examples);
	size_t n = count_opts(cmd->opts);
	const char *groups[32];
	size_t ng = 0;
	for (size_t i = 0; i < n; i++) {
		const char *g = cmd->opts[i].group ? cmd->opts[i].group : "Options";
		size_t j;
		for (j = 0; j < ng; j++)
			if (!strcmp(groups[j], g))
				break;
		if (j == ng && ng < 32)
			groups[ng++] = g;
	}
	for (size_t gi = 0; gi < ng; gi++) {
		fprintf(out, "%s:\n", groups[gi]);
		for (size_t i = 0; i < n; i++) {
			const struct cli_opt *o = &cmd->opts[i];
			const char *g = o->group ? o->group : "Options";
			if (strcmp(g, groups[gi]))
				continue;
			char left[96];
			int m = 0;
			if (o->key < 256 && isalnum(o->key))
				m = snprintf(left, sizeof left, "  -%c, --%s", o->key, o->name);
			else
				m = snprintf(left, sizeof left, "      --%s", o->name);
			if ((o->has_arg & 1) && m > 0 && (size_t)m < sizeof left)
				snprintf(left + m, sizeof left - (size_t)m, " %s", o->arg ? o->arg : "ARG");
			if (strlen(left) > 30)
				fprintf(out, "%s\n%32s%s\n", left, "", o->help);
			else
				fprintf(out, "%-32s%s\n", left, o->help);
		}
		fputc('\n', out);
	}
	fputs("Exit status: 0 success, 1 runtime failure (I/O), 2 usage error, "
	      "3 invalid input (config, trace or bucket file).\n", out);
}

int cli_usage(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fputs("bucketsim: error: ", stderr);
	fputs_escaped(msg, stderr);
	fprintf(stderr, "\nsee 'bucketsim %s --help'\n", cmd->name);
	return BS_EXIT_USAGE;
}

void cli_config_init(struct cli_config *cc)
{
	config_init(&cc->cfg);
	cc->seed = 1;
	cc->print_config = false;
	cc->preset = NULL;
}

void cli_config_release(struct cli_config *cc)
{
	config_release(&cc->cfg);
	free(cc->preset);
	cc->preset = NULL;
}

int cli_config_opt(struct cli_config *cc, int key, const char *arg, struct bs_err *err)
{
	char why[256];
	int64_t v;
	switch (key) {
	case CLI_OPT_CONFIG:
		return config_load_json(&cc->cfg, arg, err) ? -1 : 1;
	case CLI_OPT_SET:
		return config_set_arg(&cc->cfg, arg, err) ? -1 : 1;
	case CLI_OPT_ENV:
		return config_set_env_arg(&cc->cfg, arg, CFG_ORIGIN_CMDLINE, err) ? -1 : 1;
	case CLI_OPT_SEED:
		if (parse_i64(arg, 0, INT64_MAX, &v, why, sizeof why))
			return bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--seed", "%s", why);
		cc->seed = (uint64_t)v;
		return 1;
	case CLI_OPT_PRESET:
		/* Presets do not stack: the second would keep the keys of the first it does not
		 * set (also when the options are replayed: a sweep point, a capacity system). */
		if (cc->preset)
			return bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--preset", "'%s' after '%s': "
				       "presets do not stack; give one and change keys with --set",
				       arg, cc->preset);
		if (preset_apply(&cc->cfg, arg, err))
			return -1;
		cc->preset = xstrdup(arg);
		return 1;
	case CLI_OPT_STRICT:
		return config_set(&cc->cfg, "sim.strict", "true", CFG_ORIGIN_CMDLINE, NULL, 0, err)
			       ? -1 : 1;
	case CLI_OPT_PRINT_CONFIG:
		cc->print_config = true;
		return 1;
	default:
		return 0;
	}
}

int cli_config_step(struct cli_config *cc, int c, const char *arg, int *rc)
{
	if (c == -2 || c == -3) {
		*rc = c == -2 ? BS_EXIT_USAGE : 0;
		return -1;
	}
	struct bs_err err = {0};
	int r = cli_config_opt(cc, c, arg, &err);
	if (r < 0) {
		*rc = cli_fail(&err);
		return -1;
	}
	return r;
}

int cli_fail(const struct bs_err *err)
{
	bs_err_print(err);
	return err->code ? err->code : BS_EXIT_RUNTIME;
}
