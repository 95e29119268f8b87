/*
 * cmd_sweep: `bucketsim sweep`, a set of points (configurations and seeds) each run as one
 * `bucketsim run` into its own directory, and one CSV row per point in point order.
 *
 * Every point is a `bucketsim run` command line (sweep_point_prepare): the local runner (-j N,
 * sim/sweep_run.c) executes exactly that command in worker processes, --emit parallel prints it,
 * --emit slurm writes it into a job-array script (sim/sweep_emit.c).  Whoever ran the points, the CSV is made by one function
 * (collect() in sim/sweep_csv.c) from the directories they wrote, so `-j` and `--collect` give the same bytes.
 *
 * Sweep directory DIR (-o DIR, or a temporary directory removed at the end):
 *   DIR/sweep.json         the points (what a rerun compares to resume, and --collect reads)
 *   DIR/base.json          the sweep file's base configuration (when a sweep file is used)
 *   DIR/points/NNNN/       one run's output set (its marker and summary.json: finished)
 *   DIR/points/NNNN.err    that run's standard error
 *   DIR/commands.txt       one command per point (--emit)
 *   DIR/sweep.sbatch       the Slurm job-array script (--emit slurm)
 *   DIR/sweep.csv          the merged CSV
 */
#define _GNU_SOURCE /* realpath */
#include <cjson/cJSON.h>
#include <csv.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/commands.h"
#include "sim/run_int.h"
#include "sim/sweep_csv.h"
#include "sim/sweep_emit.h"
#include "sim/sweep_points.h"
#include "sim/sweep_run.h"

enum {
	OPT_TRACE = SWEEP_OPT_TRACE,
	OPT_OUT = 'o',
	OPT_JOBS = 'j',
	OPT_FILE = 'f',
	OPT_SEEDS = CLI_OPT_FIRST_FREE,
	OPT_METRICS,
	OPT_AXIS,
	OPT_GRID,
	OPT_EMIT,
	OPT_COLLECT,
	OPT_NO_BATCHES,
	OPT_SBATCH,
	OPT_TASK_SECONDS,
};

static const struct cli_opt opts[] = {
	{"trace", OPT_TRACE, 1, "FILE|NAME", "trace path or bundled name (as for run)", "Input"},
	CLI_CONFIG_OPTS,
	{"file", OPT_FILE, 1, "SWEEP.json",
	 "a sweep file: base configuration plus \"axes\" (a grid) or \"points\" (a list)", "Sweep"},
	{"axis", OPT_AXIS, 1 | CLI_REPEAT, "KEY=V1,V2,...",
	 "a key and its values (or KEY=[JSON list]); repeatable; the grid is the product, the "
	 "first axis varying slowest; KEY may be any config key, trace, preset, seed or "
	 "env.VLLM_NAME; a key an axis varies cannot also be given by --set, --env or --trace",
	 "Sweep"},
	{"grid", OPT_GRID, 1, "KEY=...", "replaced by --axis (refused with a message)", "Sweep"},
	{"seeds", OPT_SEEDS, 1, "N",
	 "replications: seeds S, S+1, ..., S+N-1 with S from --seed, varying fastest", "Sweep"},
	{"jobs", OPT_JOBS, 1, "N", "worker processes (default: the online cores)", "Run"},
	{"emit", OPT_EMIT, 1, "parallel|slurm",
	 "do not run: print one `bucketsim run` command per unfinished point (parallel), or "
	 "write DIR/sweep.sbatch, a job array (slurm); needs -o", "Run"},
	{"sbatch", OPT_SBATCH, 1 | CLI_REPEAT, "OPT",
	 "with --emit slurm: an sbatch option for the job array's script (#SBATCH OPT), e.g. "
	 "--sbatch --time=01:00:00 --sbatch --account=A; repeatable; not --array or --output "
	 "(the script's own)", "Run"},
	{"task-seconds", OPT_TASK_SECONDS, 1, "S",
	 "with --emit slurm: the estimated run time of an array task, which sets how many points "
	 "it runs (default 600; see sim/README.md)", "Run"},
	{"collect", OPT_COLLECT, 1, "DIR",
	 "do not run: merge the points found in DIR into DIR/sweep.csv; no other option than "
	 "--metrics", "Run"},
	{"no-batches", OPT_NO_BATCHES, 0, NULL,
	 "as for run: --set output.batches=false (the points write no batches.csv unless the "
	 "configuration asks)", "Output"},
	{"metrics", OPT_METRICS, 1, "LIST",
	 "comma-separated summary metrics for the CSV, none empty (default: every scalar "
	 "metric)", "Output"},
	{"output", OPT_OUT, 1, "DIR",
	 "the sweep directory (resumable; CSV in DIR/sweep.csv); default: a temporary one and "
	 "the CSV on stdout", "Output"},
	CLI_HELP_OPT,
	{0},
};

const char *bs_argv0;

/* The program's file, absolute, as it was started: argv[0] when it holds a '/', else the first
 * executable of that name in PATH (as the shell found it); /proc/self/exe when neither names an
 * executable file.  Not /proc/self/exe first: under valgrind or a loader (ld.so PROGRAM) that
 * is the tool or the loader, not bucketsim.  NULL when nothing resolves. */
static char *self_path(void)
{
	const char *a = bs_argv0;
	char buf[PATH_MAX];
	struct stat sb;
	if (a && *a && strchr(a, '/')) {
		if (!stat(a, &sb) && S_ISREG(sb.st_mode) && !access(a, X_OK) && realpath(a, buf))
			return xstrdup(buf);
	} else if (a && *a) {
		const char *path = getenv("PATH");
		for (const char *d = path ? path : ""; d && *d;) {
			size_t n = strcspn(d, ":");
			char *c = xasprintf("%.*s/%s", (int)n, n ? d : ".", a);
			bool ok = !stat(c, &sb) && S_ISREG(sb.st_mode) && !access(c, X_OK) &&
				  realpath(c, buf);
			free(c);
			if (ok)
				return xstrdup(buf);
			d = d[n] ? d + n + 1 : NULL;
		}
	}
	return realpath("/proc/self/exe", buf) ? xstrdup(buf) : NULL;
}

/* The most points a sweep may have: checking a point's configuration takes about 0.5 ms and
 * its description about 4 KB of memory and 400 bytes of sweep.json (measured at 10,000
 * points), so 100,000 points are about a minute and 0.5 GB before the first run. */
#define SWEEP_POINTS_MAX 100000

/* ---- the command ---- */

/* The long name of option KEY, for messages. */
static const char *opt_name(int key)
{
	for (const struct cli_opt *o = opts; o->name; o++)
		if (o->key == key)
			return o->name;
	return "?";
}

/* Whether a listed point or an axis sets KEY: "an axis", "the sweep file's points" or NULL. */
static const char *varied_by(const struct spec *s, const char *key)
{
	for (size_t i = 0; i < s->nax; i++)
		if (!strcmp(s->ax[i].key, key))
			return "an axis";
	const cJSON *lp;
	cJSON_ArrayForEach(lp, s->listed) if (cJSON_GetObjectItemCaseSensitive(lp, key))
		return "the sweep file's points";
	return NULL;
}

static int sweep(const struct cli_cmd *self, int argc, char **argv)
{
	struct spec s;
	memset(&s, 0, sizeof s);
	s.seeds = 1;
	s.seed0 = 1;
	bool seeds_given = false, seed_given = false;
	const char *out = NULL, *file = NULL, *how = NULL, *coll = NULL;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	struct cli_config probe;
	cli_config_init(&probe);
	struct bs_err err = {0};
	struct cli_state st = {0};
	int c, rc = 0;
	struct point *pts = NULL;
	size_t np = 0;
	char *dir = NULL, *tmpdir = NULL, *basefile = NULL, *spec = NULL, *exe = NULL;
	bool created = false, wrote_base = false;
	const char *other = NULL; /* the first option other than --collect and --metrics */
	s.so = xmalloc((size_t)(argc + 4) * sizeof *s.so);
	const char **sbatch = xmalloc((size_t)(argc + 1) * sizeof *sbatch);
	size_t nsbatch = 0;
	double task_s = SWEEP_TASK_S_DEFAULT;
	bool task_s_given = false;
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		/* Shared options are checked now and replayed for every point. */
		int r = cli_config_step(&probe, c, st.optarg, &rc);
		if (r < 0)
			goto done;
		if (c != OPT_COLLECT && c != OPT_METRICS && !other)
			other = opt_name(c);
		if (r) {
			if (c == CLI_OPT_PRINT_CONFIG) {
				rc = cli_usage(self, "--print-config is for run; sweep -o DIR writes "
						     "its points into DIR/sweep.json");
				goto done;
			}
			if (c == CLI_OPT_SEED) {
				s.seed0 = probe.seed;
				seed_given = true;
				continue;
			}
			/* --strict takes no argument: saved with none, replayed as itself. */
			s.so[s.nso++] = (struct saved_opt){c, !st.optarg ? NULL
							      : c == CLI_OPT_CONFIG
								 ? sweep_abs_path(st.optarg)
								 : xstrdup(st.optarg)};
			continue;
		}
		char why[256];
		int64_t v;
		switch (c) {
		case OPT_NO_BATCHES: /* run's option, replayed as what it sets */
			if (cli_config_opt(&probe, CLI_OPT_SET, "output.batches=false", &err) < 0) {
				rc = cli_fail(&err);
				goto done;
			}
			s.so[s.nso++] = (struct saved_opt){CLI_OPT_SET, xstrdup("output.batches=false")};
			break;
		case OPT_TRACE:
			s.trace = st.optarg;
			break;
		case OPT_OUT:
			out = st.optarg;
			break;
		case OPT_FILE:
			file = st.optarg;
			break;
		case OPT_METRICS:
			/* an empty list or name would make a CSV without the metrics asked for */
			if (!*st.optarg || *st.optarg == ',' || strstr(st.optarg, ",,") ||
			    st.optarg[strlen(st.optarg) - 1] == ',') {
				rc = cli_usage(self, "--metrics takes comma-separated metric names, "
						     "none of them empty; got '%s'", st.optarg);
				goto done;
			}
			free(s.metrics);
			s.metrics = xstrdup(st.optarg);
			break;
		case OPT_SEEDS:
			if (parse_i64(st.optarg, 1, 1000000, &v, why, sizeof why)) {
				rc = cli_usage(self, "--seeds: %s", why);
				goto done;
			}
			s.seeds = v;
			seeds_given = true;
			break;
		case OPT_JOBS:
			if (parse_i64(st.optarg, 1, 4096, &v, why, sizeof why)) {
				rc = cli_usage(self, "--jobs: %s", why);
				goto done;
			}
			jobs = (long)v;
			break;
		case OPT_AXIS:
			if (sweep_axis_arg(&s, st.optarg, &err)) {
				rc = cli_fail(&err);
				goto done;
			}
			break;
		case OPT_GRID:
			rc = cli_usage(self, "--grid is replaced by --axis KEY=V1,V2 (a value holding "
					     "commas is written as a JSON list: --axis "
					     "'workload.mix=[\"alpaca:0.8,longbench:0.2\"]')");
			goto done;
		case OPT_EMIT:
			if (strcmp(st.optarg, "parallel") && strcmp(st.optarg, "slurm")) {
				rc = cli_usage(self, "--emit takes parallel or slurm, got '%s'",
					       st.optarg);
				goto done;
			}
			how = st.optarg;
			break;
		case OPT_COLLECT:
			coll = st.optarg;
			break;
		case OPT_SBATCH:
			/* written as one "#SBATCH OPT" line of the script: an option, on one line */
			if (st.optarg[0] != '-') {
				rc = cli_usage(self, "--sbatch takes an sbatch option beginning with '-' "
						     "(--sbatch --time=01:00:00), got '%s'", st.optarg);
				goto done;
			}
			if (sweep_sbatch_owned(st.optarg)) {
				rc = cli_usage(self, "--sbatch %s: the script sets the job array and its "
						     "log (DIR/points/slurm-%%A_%%a.out) itself",
					       st.optarg);
				goto done;
			}
			if (sweep_emit_word_check("--sbatch", st.optarg, &err)) {
				rc = cli_fail(&err);
				goto done;
			}
			sbatch[nsbatch++] = st.optarg;
			break;
		case OPT_TASK_SECONDS:
			if (parse_f64(st.optarg, 1e-6, 1e9, &task_s, why, sizeof why)) {
				rc = cli_usage(self, "--task-seconds: %s", why);
				goto done;
			}
			task_s_given = true;
			break;
		default:
			rc = cli_usage(self, "unexpected option");
			goto done;
		}
	}
	if (st.optind < argc) {
		rc = cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
		goto done;
	}
	if (coll) {
		if (other) {
			rc = cli_usage(self, "--collect DIR takes no other option than --metrics, got "
					     "--%s", other);
			goto done;
		}
		rc = sweep_finish_csv(coll, s.metrics, false, 0, false);
		goto done;
	}
	if (how && !out) {
		rc = cli_usage(self, "--emit needs -o DIR (where the commands write)");
		goto done;
	}
	if ((nsbatch || task_s_given) && (!how || strcmp(how, "slurm"))) {
		rc = cli_usage(self, "--%s is for --emit slurm", nsbatch ? "sbatch" : "task-seconds");
		goto done;
	}
	s.count_requests = how && !strcmp(how, "slurm");
	/* The program the points run: resolved now, before anything could change directory. */
	if (!(exe = self_path())) {
		bs_errf(&err, BS_EXIT_RUNTIME, NULL, 0, NULL, "cannot find the program's own file "
			"(neither argv[0] nor /proc/self/exe names it) to run the points with");
		rc = cli_fail(&err);
		goto done;
	}
	if (how && sweep_emit_word_check("-o DIR", out, &err)) {
		rc = cli_fail(&err);
		goto done;
	}
	if (file && sweep_load_file(&s, file, &err)) {
		rc = cli_fail(&err);
		goto done;
	}
	/* The number of points, checked against the cap before any is made. */
	double npoints = (double)s.seeds * (s.listed ? cJSON_GetArraySize(s.listed) : 1);
	for (size_t i = 0; i < s.nax; i++)
		npoints *= (double)s.ax[i].n;
	if (npoints > SWEEP_POINTS_MAX) {
		bs_errf(&err, file ? BS_EXIT_INPUT : BS_EXIT_USAGE, file, 0, NULL, "%.0f points "
			"(%s%s, times the seeds): more than the %d a sweep may have; split it into "
			"several sweeps", npoints, s.listed ? "the listed points times " : "",
			"the product of the axes' lengths", SWEEP_POINTS_MAX);
		rc = cli_fail(&err);
		goto done;
	}
	const cJSON *lp;
	/* Listed points run at every combination of the axes: a key set in both places would
	 * be set twice, the later word winning unseen. */
	cJSON_ArrayForEach(lp, s.listed) for (size_t i = 0; i < s.nax; i++)
		if (cJSON_GetObjectItemCaseSensitive(lp, s.ax[i].key)) {
			bs_errf(&err, BS_EXIT_USAGE, file, 0, s.ax[i].key, "set by the sweep "
				"file's points and by an axis: give it in one place");
			rc = cli_fail(&err);
			goto done;
		}
	/* A shared --set, --env or --trace of what an axis or a listed point also sets would be
	 * overridden at that point, unseen: refused.  (A key of a -c file or of the sweep file's
	 * base is a base that the axes and points vary: they override it.) */
	for (size_t i = 0; i < s.nso; i++) {
		if (s.so[i].key != CLI_OPT_SET && s.so[i].key != CLI_OPT_ENV)
			continue;
		const char *a = s.so[i].arg, *eq = strchr(a, '=');
		bool env = s.so[i].key == CLI_OPT_ENV;
		char *key = xasprintf("%s%.*s", env ? "env." : "", (int)(eq ? eq - a : 0), a);
		const char *where = eq ? varied_by(&s, key) : NULL;
		if (where)
			bs_errf(&err, BS_EXIT_USAGE, NULL, 0, key, "given by %s %s and by %s, which "
				"would override it: give it in one place", env ? "--env" : "--set", a,
				where);
		free(key);
		if (where) {
			rc = cli_fail(&err);
			goto done;
		}
	}
	/* The sweep file's "trace", "seed" and "seeds" act as the options: one given both ways
	 * would have one of them win unseen. */
	const struct {
		bool file, option;
		const char *name;
	} both[] = {{s.file_trace, s.trace != NULL, "trace"},
		    {s.file_seed, seed_given, "seed"},
		    {s.file_seeds, seeds_given, "seeds"}};
	for (size_t i = 0; i < sizeof both / sizeof *both; i++)
		if (both[i].file && both[i].option) {
			bs_errf(&err, BS_EXIT_USAGE, file, 0, both[i].name, "given by the sweep file "
				"and by --%s: give it in one place", both[i].name);
			rc = cli_fail(&err);
			goto done;
		}
	const char *trace_where = s.trace ? varied_by(&s, "trace") : NULL;
	if (trace_where) {
		bs_errf(&err, BS_EXIT_USAGE, NULL, 0, "trace", "given by --trace and by %s, which "
			"would override it: give it in one place", trace_where);
		rc = cli_fail(&err);
		goto done;
	}
	/* Presets do not stack: a second one would keep the keys of the first it does not set. */
	bool shared_preset = false, point_preset = false;
	for (size_t i = 0; i < s.nso; i++)
		shared_preset |= s.so[i].key == CLI_OPT_PRESET;
	for (size_t i = 0; i < s.nax; i++)
		point_preset |= !strcmp(s.ax[i].key, "preset");
	cJSON_ArrayForEach(lp, s.listed) point_preset |=
		cJSON_GetObjectItemCaseSensitive(lp, "preset") != NULL;
	if (shared_preset && point_preset) {
		rc = cli_usage(self, "preset varies by point: a shared --preset (or the sweep file's "
				     "\"preset\") does not apply");
		goto done;
	}
	/* Listed points that set their seed run once each, at that seed, as a seed axis does. */
	cJSON_ArrayForEach(lp, s.listed) {
		const cJSON *sv = cJSON_GetObjectItemCaseSensitive(lp, "seed");
		if (!sv)
			continue;
		if (seeds_given || s.seeds > 1 || seed_given) {
			rc = cli_usage(self, "the sweep file's points set seed: --seed and --seeds (or "
					     "the file's \"seeds\") do not apply");
			goto done;
		}
		/* as a seed axis's values: an integer >= 0, a number or its text */
		char *t = cJSON_IsString(sv) ? NULL : cJSON_PrintUnformatted(sv);
		char why[256];
		int64_t v;
		int bad = parse_i64(t ? t : sv->valuestring, 0, INT64_MAX, &v, why, sizeof why);
		cJSON_free(t);
		if (bad) {
			bs_errf(&err, BS_EXIT_INPUT, file, 0, "seed", "a point's seed: %s", why);
			rc = cli_fail(&err);
			goto done;
		}
	}
	for (size_t i = 0; i < s.nax; i++) {
		if (!strcmp(s.ax[i].key, "seed") && (seeds_given || s.seeds > 1 || seed_given)) {
			rc = cli_usage(self, "seed is an axis: --seed and --seeds do not apply");
			goto done;
		}
		if (!strcmp(s.ax[i].key, "seed"))
			for (size_t k = 0; k < s.ax[i].n; k++) {
				char why[256];
				int64_t v;
				if (parse_i64(s.ax[i].vals[k], 0, INT64_MAX, &v, why, sizeof why)) {
					bs_errf(&err, BS_EXIT_USAGE, file, 0, "seed", "%s", why);
					rc = cli_fail(&err);
					goto done;
				}
			}
	}
	/* The sweep directory: made (or reused) now; what this command creates before a
	 * configuration error is removed again. */
	if (out) {
		dir = sweep_abs_path(out);
		if (!sweep_file_exists(dir))
			created = true;
		if (mkdir_p(dir, &err)) {
			rc = cli_fail(&err);
			goto done;
		}
		free(dir);
		dir = sweep_abs_path(out);
	} else {
		const char *t = getenv("TMPDIR");
		tmpdir = xasprintf("%s/bucketsim-sweep.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tmpdir)) {
			bs_errf(&err, BS_EXIT_RUNTIME, tmpdir, 0, NULL, "cannot create: %s",
				strerror(errno));
			rc = cli_fail(&err);
			goto done;
		}
		dir = xstrdup(tmpdir);
		created = true;
	}
	if (s.base) {
		basefile = xasprintf("%s/base.json", dir);
		char *t = cJSON_Print(s.base);
		char *tl = xasprintf("%s\n", t);
		cJSON_free(t);
		/* A resumed sweep finds its own base; another sweep's is never overwritten. */
		int w = 0;
		if (sweep_file_exists(basefile)) {
			size_t len;
			char *old = read_file(basefile, &len, &err);
			if (old && strcmp(old, tl))
				bs_errf(&err, BS_EXIT_USAGE, basefile, 0, NULL, "the directory holds a "
					"different sweep; choose another -o DIR");
			free(old);
			w = err.code ? -1 : 0;
		} else {
			w = sweep_write_atomic(basefile, tl, &err);
			wrote_base = !w;
		}
		free(tl);
		if (w) {
			rc = cli_fail(&err);
			goto cleanup;
		}
	}
	pts = sweep_make_points(&s, &np);
	/* An axis over a key or --env variable that no point reads (each point's check reports
	 * it set but never read) would run points that differ only in their config_hash: refused,
	 * naming the axis.  (One that some points read is their warning's, as for run.) */
	bool *unread_ax = xmalloc((s.nax ? s.nax : 1) * sizeof *unread_ax);
	for (size_t k = 0; k < s.nax; k++)
		unread_ax[k] = np > 0;
	for (size_t i = 0; i < np; i++) {
		bs_unread_reset();
		if (sweep_point_prepare(&s, basefile, &pts[i], i, np, &err)) {
			sweep_locate_error(&s, basefile, &pts[i], &err);
			free(unread_ax);
			rc = cli_fail(&err);
			goto cleanup;
		}
		for (size_t k = 0; k < s.nax; k++)
			unread_ax[k] &= bs_unread_noted(s.ax[k].key);
	}
	bs_unread_reset();
	for (size_t k = 0; k < s.nax; k++)
		if (unread_ax[k]) {
			bs_errf(&err, s.ax[k].file ? BS_EXIT_INPUT : BS_EXIT_USAGE, s.ax[k].file,
				s.ax[k].line, s.ax[k].key, "an axis over %s that no point reads "
				"(the warning above says why): its %zu values would give identical "
				"points", !strncmp(s.ax[k].key, "env.", 4) ? "a variable" : "a key",
				s.ax[k].n);
			free(unread_ax);
			rc = cli_fail(&err);
			goto cleanup;
		}
	free(unread_ax);
	/* What --emit writes holds no control character (the paths of the directory's files all
	 * begin with DIR). */
	if (how && (sweep_emit_word_check("the program's path", exe, &err) ||
		    sweep_emit_word_check("-o DIR", dir, &err))) {
		rc = cli_fail(&err);
		goto cleanup;
	}
	for (size_t i = 0; how && i < np; i++)
		for (size_t k = 0; k < pts[i].argc; k++)
			if (sweep_emit_word_check(pts[i].label, pts[i].argv[k], &err)) {
				rc = cli_fail(&err);
				goto cleanup;
			}
	spec = sweep_spec_text(&s, pts, np);
	char *specpath = xasprintf("%s/sweep.json", dir);
	if (sweep_file_exists(specpath)) {
		size_t len;
		char *old = read_file(specpath, &len, &err);
		if (old && strcmp(old, spec)) {
			/* Say what differs when it is an input file that changed. */
			char *changed = sweep_changed_input(old, spec);
			bs_errf(&err, BS_EXIT_USAGE, specpath, 0, NULL,
				"the directory holds a different sweep%s%s%s; choose another -o DIR",
				changed ? ": input file " : "", changed ? changed : "",
				changed ? " changed since it was written" : "");
			free(changed);
		}
		free(old);
	} else {
		sweep_write_atomic(specpath, spec, &err);
	}
	free(specpath);
	char *pd = xasprintf("%s/points", dir);
	if (!err.code)
		mkdir_p(pd, &err);
	free(pd);
	if (err.code) {
		rc = cli_fail(&err);
		goto cleanup;
	}
	created = false; /* the sweep is valid: its directory stays */
	if (how) {
		rc = sweep_emit(how, exe, dir, pts, np, sbatch, nsbatch, task_s, &err) ? cli_fail(&err)
									      : 0;
		goto done;
	}
	int run_rc = sweep_run_points(exe, dir, pts, np, jobs);
	if (run_rc > 128) {
		rc = run_rc;
		goto done;
	}
	rc = sweep_finish_csv(dir, s.metrics, !out, run_rc > 0 ? run_rc : 0, true);
	if (tmpdir) {
		for (size_t i = 0; i < np; i++) {
			char *q = xasprintf("%s/points/%s", dir, pts[i].name);
			outset_remove_tree(q);
			free(q);
			q = xasprintf("%s/points/%s.err", dir, pts[i].name);
			unlink(q);
			free(q);
			q = xasprintf("%s/points/.%s.tmp", dir, pts[i].name);
			outset_remove_tree(q);
			free(q);
		}
		created = true;
	}
cleanup:
	if (rc && !created && wrote_base)
		unlink(basefile);
	if (created && dir) {
		char *q = xasprintf("%s/points", dir);
		rmdir(q);
		free(q);
		q = xasprintf("%s/sweep.json", dir);
		if (tmpdir || rc)
			unlink(q);
		free(q);
		if (basefile)
			unlink(basefile);
		rmdir(dir);
	}
done:
	for (size_t i = 0; i < np; i++)
		sweep_point_release(&pts[i]);
	free(pts);
	free(spec);
	free(basefile);
	free(dir);
	free(tmpdir);
	free(exe);
	free(sbatch);
	sweep_spec_release(&s);
	cli_config_release(&probe);
	return rc;
}

const struct cli_cmd cmd_sweep = {
	"sweep",
	"bucketsim sweep [-f SWEEP.json] [--axis KEY=V1,V2,... ...] [config options] [--seeds N] "
	"[-j N] [-o DIR] [--emit parallel|slurm] | --collect DIR [--metrics LIST]",
	"run a set of configurations and seeds in parallel, resumably, one CSV row per point",
	"Runs every point (the product of the axes, the first varying slowest, or the sweep\n"
	"file's listed points; seeds fastest) as one `bucketsim run` into DIR/points/NNNN/, with\n"
	"-j worker processes, and merges the summaries into DIR/sweep.csv (or stdout without -o):\n"
	"one row per point in point order; the varying keys, trace, preset, seed, config_hash,\n"
	"error, then every summary metric.  Every point's configuration is checked before the\n"
	"first run.  Rerunning the same command skips finished points.  A failing point leaves\n"
	"its error in its row; the others go on, and the exit status is non-zero.  --emit prints\n"
	"the same runs for GNU parallel or Slurm (no emitted word may hold a control character);\n"
	"--collect checks what they wrote as input and merges it into the same CSV, byte for\n"
	"byte.  A sweep has at most 100000 points; each point records its input files' hashes,\n"
	"and one that changed while the sweep ran is an error.  Text cells that begin with\n"
	"= + - @ tab or CR get a leading '.  See sim/README.md.",
	"  bucketsim sweep --trace alpaca --axis bucketing.strategy=exponential,linear,none\n"
	"  bucketsim sweep --axis preset=vllm,distserve,bucketserve --axis workload.rate=5,10,20 \\\n"
	"      --seeds 3 -j 4 -o out/rate\n"
	"  bucketsim sweep -f sweep.json -o out/s --emit parallel | parallel -j 8 --joblog jl\n"
	"  bucketsim sweep --collect out/s\n",
	opts, sweep,
};
