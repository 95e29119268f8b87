/*
 * cmd_sweep: `bucketsim sweep`, a set of points (configurations and seeds) each run as one
 * `bucketsim run` into its own directory, and one CSV row per point in point order.
 *
 * Every point is a `bucketsim run` command line (point_prepare): the local runner (-j N)
 * executes exactly that command in worker processes, --emit parallel prints it, --emit slurm
 * writes it into a job-array script.  Whoever ran the points, the CSV is made by one function
 * (collect() in sim/sweep_csv.c) from the directories they wrote, so `-j` and `--collect` give the same bytes.
 *
 * Sweep directory DIR (-o DIR, or a temporary directory removed at the end):
 *   DIR/sweep.json         the points (what a rerun compares to resume, and --collect reads)
 *   DIR/base.json          the sweep file's base configuration (when a sweep file is used)
 *   DIR/points/NNNN/       one run's outputs (summary.json marks the point finished)
 *   DIR/points/NNNN.err    that run's standard error
 *   DIR/commands.txt       one command per point (--emit)
 *   DIR/sweep.sbatch       the Slurm job-array script (--emit slurm)
 *   DIR/sweep.csv          the merged CSV
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <cjson/cJSON.h>
#include <csv.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/commands.h"
#include "sim/run_int.h"
#include "sim/sweep_csv.h"

enum {
	OPT_TRACE = 't',
	OPT_OUT = 'o',
	OPT_JOBS = 'j',
	OPT_FILE = 'f',
	OPT_SEEDS = CLI_OPT_FIRST_FREE,
	OPT_METRICS,
	OPT_AXIS,
	OPT_GRID,
	OPT_EMIT,
	OPT_COLLECT,
};

static const struct cli_opt opts[] = {
	{"trace", OPT_TRACE, 1, "FILE|NAME", "trace path or bundled name (as for run)", "Input"},
	CLI_CONFIG_OPTS,
	{"file", OPT_FILE, 1, "SWEEP.json",
	 "a sweep file: base configuration plus \"axes\" (a grid) or \"points\" (a list)", "Sweep"},
	{"axis", OPT_AXIS, 1, "KEY=V1,V2,...",
	 "a key and its values (or KEY=[JSON list]); repeatable; the grid is the product, the "
	 "first axis varying slowest; KEY may be any config key, trace, preset, seed or "
	 "env.VLLM_NAME", "Sweep"},
	{"grid", OPT_GRID, 1, "KEY=...", "replaced by --axis (refused with a message)", "Sweep"},
	{"seeds", OPT_SEEDS, 1, "N",
	 "replications: seeds S, S+1, ..., S+N-1 with S from --seed, varying fastest", "Sweep"},
	{"jobs", OPT_JOBS, 1, "N", "worker processes (default: the online cores)", "Run"},
	{"emit", OPT_EMIT, 1, "parallel|slurm",
	 "do not run: print one `bucketsim run` command per unfinished point (parallel), or "
	 "write DIR/sweep.sbatch, a job array (slurm); needs -o", "Run"},
	{"collect", OPT_COLLECT, 1, "DIR",
	 "do not run: merge the points found in DIR into DIR/sweep.csv (with --metrics)", "Run"},
	{"metrics", OPT_METRICS, 1, "LIST",
	 "comma-separated summary metrics for the CSV (default: every scalar metric)", "Output"},
	{"output", OPT_OUT, 1, "DIR",
	 "the sweep directory (resumable; CSV in DIR/sweep.csv); default: a temporary one and "
	 "the CSV on stdout", "Output"},
	CLI_HELP_OPT,
	{0},
};

/* ---- small helpers ---- */

static bool is_special(const char *key)
{
	return !strcmp(key, "trace") || !strcmp(key, "preset") || !strcmp(key, "seed");
}

/* Shell word: bare when it has only safe characters, else single-quoted. */
static void shell_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			    "_./:=,@+-%") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* An absolute path for a file argument (unchanged when it names no file, e.g. a bundled
 * trace name), so emitted commands work from any directory. */
static char *abs_if_file(const char *p)
{
	char buf[PATH_MAX];
	struct stat sb;
	if (stat(p, &sb) == 0 && realpath(p, buf))
		return xstrdup(buf);
	return xstrdup(p);
}

/* Removes a point directory (files only) or a file; missing is fine. */
static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		unlink(path);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p = xasprintf("%s/%s", path, e->d_name);
		unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(path);
}

/* ---- the points ---- */

struct saved_opt {
	int key;
	char *arg;
};

struct axis {
	char *key;
	char **vals;
	size_t n;
};

struct spec {
	struct saved_opt *so;   /* shared config options, in order */
	size_t nso;
	struct axis *ax;
	size_t nax;
	cJSON *listed;          /* the sweep file's "points", or NULL */
	cJSON *base;            /* the sweep file's base configuration, or NULL */
	const char *trace;      /* --trace */
	uint64_t seed0;
	int64_t seeds;
	char *metrics;          /* --metrics, or NULL */
};

static void spec_release(struct spec *s)
{
	for (size_t i = 0; i < s->nso; i++)
		free(s->so[i].arg);
	free(s->so);
	for (size_t i = 0; i < s->nax; i++) {
		for (size_t k = 0; k < s->ax[i].n; k++)
			free(s->ax[i].vals[k]);
		free(s->ax[i].vals);
		free(s->ax[i].key);
	}
	free(s->ax);
	cJSON_Delete(s->listed);
	cJSON_Delete(s->base);
	free(s->metrics);
}

/* Text of a JSON scalar as a config value: strings as they are, numbers and booleans as
 * printed by cJSON.  NULL for anything else. */
static char *json_value_text(const cJSON *v)
{
	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	if (cJSON_IsNumber(v) || cJSON_IsBool(v)) {
		char *t = cJSON_PrintUnformatted(v);
		char *r = xstrdup(t);
		cJSON_free(t);
		return r;
	}
	return NULL;
}

static int axis_add(struct spec *s, const char *key, char **vals, size_t n, const char *src,
		    struct bs_err *err)
{
	for (size_t i = 0; i < s->nax; i++)
		if (!strcmp(s->ax[i].key, key)) {
			for (size_t k = 0; k < n; k++)
				free(vals[k]);
			free(vals);
			return bs_errf(err, BS_EXIT_USAGE, src, 0, key, "axis given twice");
		}
	s->ax = xrealloc(s->ax, (s->nax + 1) * sizeof *s->ax);
	s->ax[s->nax++] = (struct axis){xstrdup(key), vals, n};
	return 0;
}

/* Values of a JSON list of scalars. */
static int json_list_values(const cJSON *l, const char *key, const char *src, char ***vals,
			    size_t *n, struct bs_err *err)
{
	*vals = NULL;
	*n = 0;
	if (!cJSON_IsArray(l) || cJSON_GetArraySize(l) == 0)
		return bs_errf(err, BS_EXIT_USAGE, src, 0, key, "axis values must be a non-empty "
			       "JSON list");
	const cJSON *v;
	cJSON_ArrayForEach(v, l) {
		char *t = json_value_text(v);
		if (!t) {
			for (size_t k = 0; k < *n; k++)
				free((*vals)[k]);
			free(*vals);
			return bs_errf(err, BS_EXIT_USAGE, src, 0, key,
				       "axis values must be strings, numbers or booleans");
		}
		*vals = xrealloc(*vals, (*n + 1) * sizeof **vals);
		(*vals)[(*n)++] = t;
	}
	return 0;
}

/* --axis KEY=V1,V2 or KEY=[JSON list].  A text key's values may themselves hold commas
 * (workload.mix, scheduler.boundaries), so a comma-separated list is refused for text keys:
 * they take the JSON list form. */
static int axis_arg(struct spec *s, const char *arg, struct bs_err *err)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || !eq[1])
		return bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--axis",
			       "takes KEY=V1,V2,... or KEY=[JSON list], got '%s'", arg);
	char *key = xstrdup(arg);
	key[eq - arg] = 0;
	const char *v = eq + 1;
	char **vals = NULL;
	size_t n = 0;
	int rc = 0;
	if (*v == '[') {
		cJSON *l = cJSON_Parse(v);
		if (!l)
			rc = bs_errf(err, BS_EXIT_USAGE, NULL, 0, key, "not a JSON list: %s", v);
		else
			rc = json_list_values(l, key, NULL, &vals, &n, err);
		cJSON_Delete(l);
	} else {
		struct config probe;
		config_init(&probe);
		const struct cfg_entry *e = config_find(&probe, key);
		if (e && e->def->type == CFG_STRING && strchr(v, ','))
			rc = bs_errf(err, BS_EXIT_USAGE, NULL, 0, key,
				     "a text key's values may contain commas: give them as a JSON "
				     "list, e.g. --axis '%s=[\"%s\"]' for one value", key, v);
		config_release(&probe);
		for (const char *p = v; !rc;) {
			const char *c = strchr(p, ',');
			size_t len = c ? (size_t)(c - p) : strlen(p);
			vals = xrealloc(vals, (n + 1) * sizeof *vals);
			vals[n] = xmalloc(len + 1);
			memcpy(vals[n], p, len);
			vals[n++][len] = 0;
			if (!c)
				break;
			p = c + 1;
		}
	}
	if (!rc)
		rc = axis_add(s, key, vals, n, NULL, err);
	else {
		for (size_t k = 0; k < n; k++)
			free(vals[k]);
		free(vals);
	}
	free(key);
	return rc;
}

/* A sweep file: {"axes": {...}} or {"points": [...]}, optional "trace", "preset", "seed",
 * "seeds", and every other member is the base configuration (as in -c). */
static int load_sweep_file(struct spec *s, const char *path, struct bs_err *err)
{
	size_t len;
	char *txt = read_file(path, &len, err);
	if (!txt)
		return -1;
	cJSON *root = cJSON_ParseWithLength(txt, len);
	free(txt);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "not a JSON object");
	}
	int rc = 0;
	cJSON *axes = cJSON_DetachItemFromObjectCaseSensitive(root, "axes");
	cJSON *pts = cJSON_DetachItemFromObjectCaseSensitive(root, "points");
	cJSON *tr = cJSON_DetachItemFromObjectCaseSensitive(root, "trace");
	cJSON *pre = cJSON_DetachItemFromObjectCaseSensitive(root, "preset");
	cJSON *seed = cJSON_DetachItemFromObjectCaseSensitive(root, "seed");
	cJSON *seeds = cJSON_DetachItemFromObjectCaseSensitive(root, "seeds");
	if (axes && pts)
		rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "points", "give \"axes\" or \"points\", "
			     "not both");
	else if (!axes && !pts)
		rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "axes", "a sweep file needs \"axes\" "
			     "(a grid) or \"points\" (a list)");
	if (!rc && axes) {
		if (!cJSON_IsObject(axes))
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "axes", "must be an object of lists");
		const cJSON *a;
		cJSON_ArrayForEach(a, axes) {
			char **vals;
			size_t n;
			if (rc || (rc = json_list_values(a, a->string, path, &vals, &n, err)))
				break;
			rc = axis_add(s, a->string, vals, n, path, err);
		}
	}
	if (!rc && pts) {
		if (!cJSON_IsArray(pts) || !cJSON_GetArraySize(pts))
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "points",
				     "must be a non-empty list of objects");
		const cJSON *p;
		cJSON_ArrayForEach(p, pts) {
			if (rc)
				break;
			if (!cJSON_IsObject(p)) {
				rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "points",
					     "every point is an object of key: value");
				break;
			}
			const cJSON *kv;
			cJSON_ArrayForEach(kv, p) {
				char *t = json_value_text(kv);
				if (!t) {
					rc = bs_errf(err, BS_EXIT_INPUT, path, 0, kv->string,
						     "a point's value must be a string, number or "
						     "boolean");
					break;
				}
				free(t);
			}
		}
		s->listed = pts;
		pts = NULL;
	}
	char *t;
	if (!rc && tr) {
		if (!(t = json_value_text(tr)))
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "trace", "must be a string");
		else {
			s->so = xrealloc(s->so, (s->nso + 1) * sizeof *s->so);
			s->so[s->nso++] = (struct saved_opt){OPT_TRACE, t};
		}
	}
	if (!rc && pre) {
		if (!(t = json_value_text(pre)))
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "preset", "must be a string");
		else {
			s->so = xrealloc(s->so, (s->nso + 1) * sizeof *s->so);
			s->so[s->nso++] = (struct saved_opt){CLI_OPT_PRESET, t};
		}
	}
	if (!rc && seed) {
		if (!cJSON_IsNumber(seed) || seed->valuedouble < 0 || seed->valuedouble > 9e15 ||
		    seed->valuedouble != floor(seed->valuedouble))
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "seed", "must be an integer >= 0");
		else
			s->seed0 = (uint64_t)seed->valuedouble;
	}
	if (!rc && seeds) {
		if (!cJSON_IsNumber(seeds) || seeds->valuedouble < 1 || seeds->valuedouble > 1e6 ||
		    seeds->valuedouble != floor(seeds->valuedouble))
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "seeds",
				     "must be an integer in [1, 1000000]");
		else
			s->seeds = (int64_t)seeds->valuedouble;
	}
	cJSON_Delete(axes);
	cJSON_Delete(pts);
	cJSON_Delete(tr);
	cJSON_Delete(pre);
	cJSON_Delete(seed);
	cJSON_Delete(seeds);
	if (rc) {
		cJSON_Delete(root);
		return rc;
	}
	s->base = root;
	return 0;
}

/* One point: its assignments (axis keys in order, values as text) and seed. */
struct point {
	char **key, **val;
	size_t n;
	uint64_t seed;
	char *trace, *preset;  /* effective, "" when none */
	char name[24];         /* "0001" */
	char *label;           /* "workload.rate=20 seed=2" for messages */
	char **argv;           /* the `bucketsim run` words after the program name */
	size_t argc;
};

static void point_release(struct point *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->key[i]);
		free(p->val[i]);
	}
	free(p->key);
	free(p->val);
	free(p->trace);
	free(p->preset);
	free(p->label);
	for (size_t i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
}

static void point_set(struct point *p, const char *k, const char *v)
{
	p->key = xrealloc(p->key, (p->n + 1) * sizeof *p->key);
	p->val = xrealloc(p->val, (p->n + 1) * sizeof *p->val);
	p->key[p->n] = xstrdup(k);
	p->val[p->n++] = xstrdup(v);
}

static const char *point_get(const struct point *p, const char *k)
{
	const char *r = NULL;
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->key[i], k))
			r = p->val[i];
	return r;
}

static void argv_push(struct point *p, const char *w)
{
	p->argv = xrealloc(p->argv, (p->argc + 1) * sizeof *p->argv);
	p->argv[p->argc++] = xstrdup(w);
}

/* The ordered points: the listed ones, or the grid (first axis slowest); seeds fastest. */
static struct point *make_points(const struct spec *s, size_t *np)
{
	struct point *pts = NULL;
	*np = 0;
	size_t nbase = 0;
	struct point *base = NULL;
	if (s->listed) {
		const cJSON *q;
		cJSON_ArrayForEach(q, s->listed) {
			base = xrealloc(base, (nbase + 1) * sizeof *base);
			memset(&base[nbase], 0, sizeof *base);
			const cJSON *kv;
			cJSON_ArrayForEach(kv, q) {
				char *t = json_value_text(kv);
				point_set(&base[nbase], kv->string, t);
				free(t);
			}
			nbase++;
		}
	} else {
		size_t *idx = xcalloc(s->nax ? s->nax : 1, sizeof *idx);
		for (bool more = true; more;) {
			base = xrealloc(base, (nbase + 1) * sizeof *base);
			memset(&base[nbase], 0, sizeof *base);
			for (size_t i = 0; i < s->nax; i++)
				point_set(&base[nbase], s->ax[i].key, s->ax[i].vals[idx[i]]);
			nbase++;
			more = false;
			for (size_t i = s->nax; i-- > 0;) {
				if (++idx[i] < s->ax[i].n) {
					more = true;
					break;
				}
				idx[i] = 0;
			}
		}
		free(idx);
	}
	for (size_t b = 0; b < nbase; b++) {
		const char *sv = point_get(&base[b], "seed");
		for (int64_t r = 0; r < (sv ? 1 : s->seeds); r++) {
			pts = xrealloc(pts, (*np + 1) * sizeof *pts);
			struct point *p = &pts[(*np)++];
			memset(p, 0, sizeof *p);
			for (size_t i = 0; i < base[b].n; i++)
				point_set(p, base[b].key[i], base[b].val[i]);
			p->seed = sv ? strtoull(sv, NULL, 10) : s->seed0 + (uint64_t)r;
		}
		point_release(&base[b]);
	}
	free(base);
	return pts;
}

/* Builds a point's `bucketsim run` words (without -o) and checks its configuration as run
 * would, without simulating: every key, value and rule, before anything runs. */
static int point_prepare(const struct spec *s, const char *basefile, struct point *p,
			 size_t index, size_t width, struct bs_err *err)
{
	snprintf(p->name, sizeof p->name, "%0*zu", (int)width, index + 1);
	argv_push(p, "run");
	argv_push(p, "--quiet");
	/* Sweeps keep summary.json and buckets.csv only, unless the configuration asks. */
	argv_push(p, "--set");
	argv_push(p, "output.requests=false");
	argv_push(p, "--set");
	argv_push(p, "output.batches=false");
	if (basefile) {
		argv_push(p, "--config");
		argv_push(p, basefile);
	}
	const char *trace = s->trace, *preset = NULL;
	static const struct {
		int key;
		const char *opt;
	} names[] = {{CLI_OPT_CONFIG, "--config"}, {CLI_OPT_SET, "--set"}, {CLI_OPT_ENV, "--env"},
		     {CLI_OPT_PRESET, "--preset"}};
	for (size_t i = 0; i < s->nso; i++) {
		if (s->so[i].key == OPT_TRACE) {
			if (!trace)
				trace = s->so[i].arg;
			continue;
		}
		if (s->so[i].key == CLI_OPT_PRESET)
			preset = s->so[i].arg;
		for (size_t k = 0; k < sizeof names / sizeof *names; k++)
			if (names[k].key == s->so[i].key) {
				argv_push(p, names[k].opt);
				argv_push(p, s->so[i].arg);
			}
	}
	for (size_t i = 0; i < p->n; i++) {
		if (!strcmp(p->key[i], "trace")) {
			trace = p->val[i];
		} else if (!strcmp(p->key[i], "preset")) {
			preset = p->val[i];
			argv_push(p, "--preset");
			argv_push(p, p->val[i]);
		} else if (!strncmp(p->key[i], "env.", 4)) {
			char *kv = xasprintf("%s=%s", p->key[i] + 4, p->val[i]);
			argv_push(p, "--env");
			argv_push(p, kv);
			free(kv);
		} else if (strcmp(p->key[i], "seed")) {
			char *kv = xasprintf("%s=%s", p->key[i], p->val[i]);
			argv_push(p, "--set");
			argv_push(p, kv);
			free(kv);
		}
	}
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->seed);
	/* Replay the words through the shared option parser, then run's set-up. */
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	cli_config_init(&x.cc);
	int rc = 0;
	for (size_t i = 2; i + 1 < p->argc && !rc; i += 2) {
		int key = !strcmp(p->argv[i], "--config") ? CLI_OPT_CONFIG
			  : !strcmp(p->argv[i], "--set")  ? CLI_OPT_SET
			  : !strcmp(p->argv[i], "--env")  ? CLI_OPT_ENV
							  : CLI_OPT_PRESET;
		rc = cli_config_opt(&x.cc, key, p->argv[i + 1], err) < 0 ? -1 : 0;
	}
	const char *eff = rc ? NULL : run_default_trace(&x.cc.cfg, trace);
	if (!rc)
		rc = run_setup(&x, eff, false, err);
	char *tabs = eff ? abs_if_file(eff) : xstrdup("");
	if (*tabs) {
		argv_push(p, "--trace");
		argv_push(p, tabs);
	}
	argv_push(p, "--seed");
	argv_push(p, buf);
	p->trace = tabs;
	p->preset = xstrdup(preset ? preset : "");
	run_teardown(&x);
	/* The label names the point in messages. */
	size_t cap = 64;
	for (size_t i = 0; i < p->n; i++)
		cap += strlen(p->key[i]) + strlen(p->val[i]) + 2;
	p->label = xmalloc(cap);
	int off = snprintf(p->label, cap, "point %s (", p->name);
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->key[i], "seed"))
			off += snprintf(p->label + off, cap - (size_t)off, "%s=%s ", p->key[i],
					p->val[i]);
	snprintf(p->label + off, cap - (size_t)off, "seed=%s)", buf);
	if (rc) {
		char *m = xasprintf("%s: %s", p->label, err->msg);
		snprintf(err->msg, sizeof err->msg, "%s", m);
		free(m);
	}
	return rc;
}

/* The sweep.json text: everything a rerun must match and --collect needs. */
/* Records the FNV-1a hash of the file WORD names, if it names one: a rerun after an input file
 * changed is then a different sweep, not a resumption with stale points. */
static void add_input(cJSON *inputs, const char *word)
{
	struct stat sb;
	if (stat(word, &sb) || !S_ISREG(sb.st_mode) ||
	    cJSON_GetObjectItemCaseSensitive(inputs, word))
		return;
	FILE *f = fopen(word, "rb");
	if (!f)
		return;
	uint64_t h = 14695981039346656037ULL;
	for (int c; (c = getc(f)) != EOF;)
		h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ULL;
	fclose(f);
	char buf[24];
	snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
	cJSON_AddStringToObject(inputs, word, buf);
}

static char *spec_text(const struct spec *s, const struct point *pts, size_t np)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "bucketsim_sweep", "1");
	cJSON *cols = cJSON_AddArrayToObject(root, "columns");
	for (size_t i = 0; i < s->nax; i++)
		if (!is_special(s->ax[i].key))
			cJSON_AddItemToArray(cols, cJSON_CreateString(s->ax[i].key));
	/* Listed points: every key any point sets is a varying column. */
	for (size_t i = 0; s->listed && i < np; i++)
		for (size_t k = 0; k < pts[i].n; k++) {
			if (is_special(pts[i].key[k]))
				continue;
			bool have = false;
			const cJSON *c;
			cJSON_ArrayForEach(c, cols) have |= !strcmp(c->valuestring, pts[i].key[k]);
			if (!have)
				cJSON_AddItemToArray(cols, cJSON_CreateString(pts[i].key[k]));
		}
	cJSON *inputs = cJSON_AddObjectToObject(root, "inputs");
	for (size_t i = 0; i < np; i++)
		for (size_t k = 0; k < pts[i].argc; k++) {
			const char *w = pts[i].argv[k], *eq = strchr(w, '=');
			add_input(inputs, w);
			if (eq)
				add_input(inputs, eq + 1);
		}
	cJSON *pa = cJSON_AddArrayToObject(root, "points");
	for (size_t i = 0; i < np; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "dir", pts[i].name);
		cJSON *set = cJSON_AddObjectToObject(o, "set");
		for (size_t k = 0; k < pts[i].n; k++)
			if (!is_special(pts[i].key[k]))
				cJSON_AddStringToObject(set, pts[i].key[k], pts[i].val[k]);
		cJSON_AddStringToObject(o, "trace", pts[i].trace);
		cJSON_AddStringToObject(o, "preset", pts[i].preset);
		char buf[32];
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)pts[i].seed);
		cJSON_AddStringToObject(o, "seed", buf);
		cJSON *av = cJSON_AddArrayToObject(o, "run");
		for (size_t k = 0; k < pts[i].argc; k++)
			cJSON_AddItemToArray(av, cJSON_CreateString(pts[i].argv[k]));
		cJSON_AddItemToArray(pa, o);
	}
	char *t = cJSON_Print(root);
	cJSON_Delete(root);
	char *r = xasprintf("%s\n", t);
	cJSON_free(t);
	return r;
}

/* ---- running ---- */

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Starts one point: `bucketsim run ... -o DIR/points/.NNNN.tmp`, stderr to NNNN.err. */
static pid_t start_point(const char *dir, const struct point *p)
{
	char *tmp = xasprintf("%s/points/.%s.tmp", dir, p->name);
	char *errp = xasprintf("%s/points/%s.err", dir, p->name);
	remove_tree(tmp);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		int nul = open("/dev/null", O_RDWR);
		if (fd < 0 || nul < 0)
			_exit(BS_EXIT_RUNTIME);
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(fd, 2);
		char **av = xmalloc((p->argc + 4) * sizeof *av);
		av[0] = "bucketsim";
		for (size_t i = 0; i < p->argc; i++)
			av[i + 1] = p->argv[i];
		av[p->argc + 1] = "-o";
		av[p->argc + 2] = tmp;
		av[p->argc + 3] = NULL;
		execv("/proc/self/exe", av);
		dprintf(2, "bucketsim: error: cannot start bucketsim: %s\n", strerror(errno));
		_exit(BS_EXIT_RUNTIME);
	}
	free(tmp);
	free(errp);
	return pid;
}

/* A finished point's temporary directory takes the point's name (atomic). */
static int finish_point(const char *dir, const struct point *p)
{
	char *tmp = xasprintf("%s/points/.%s.tmp", dir, p->name);
	char *fin = xasprintf("%s/points/%s", dir, p->name);
	remove_tree(fin);
	int rc = rename(tmp, fin);
	if (rc)
		fprintf(stderr, "bucketsim: error: %s: cannot rename to %s: %s\n", tmp, fin,
			strerror(errno));
	free(tmp);
	free(fin);
	return rc;
}

static bool point_done(const char *dir, const struct point *p)
{
	char *s = xasprintf("%s/points/%s/summary.json", dir, p->name);
	bool r = sweep_file_exists(s);
	free(s);
	return r;
}

/* Runs the unfinished points with JOBS workers.  Returns the first failing exit status, or 0. */
static int run_points(const char *dir, const struct point *pts, size_t np, long jobs)
{
	size_t todo = 0, done = 0, next = 0, nrun = 0;
	int first_rc = 0;
	for (size_t i = 0; i < np; i++)
		todo += !point_done(dir, &pts[i]);
	bool tty = isatty(2);
	pid_t *pid = xcalloc(np ? np : 1, sizeof *pid);
	double *t0 = xcalloc(np ? np : 1, sizeof *t0);
	double start = now_s();
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (todo < np)
		fprintf(stderr, "sweep: %zu of %zu points already finished in %s\n", np - todo, np,
			dir);
	for (;;) {
		while (!stop_requested && nrun < (size_t)jobs && next < np) {
			if (point_done(dir, &pts[next])) {
				next++;
				continue;
			}
			t0[next] = now_s();
			pid[next] = start_point(dir, &pts[next]);
			if (pid[next] < 0) {
				fprintf(stderr, "bucketsim: error: cannot fork: %s\n", strerror(errno));
				first_rc = first_rc ? first_rc : BS_EXIT_RUNTIME;
				stop_requested = 1;
				break;
			}
			nrun++;
			next++;
		}
		if (!nrun)
			break;
		int status;
		pid_t w = waitpid(-1, &status, 0);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		size_t i = 0;
		while (i < np && pid[i] != w)
			i++;
		if (i == np)
			continue;
		nrun--;
		pid[i] = 0;
		int rc = WIFEXITED(status) ? WEXITSTATUS(status) : BS_EXIT_RUNTIME;
		if (!rc && finish_point(dir, &pts[i]))
			rc = BS_EXIT_RUNTIME;
		if (rc && !first_rc)
			first_rc = rc;
		done++;
		double el = now_s() - start;
		if (tty) {
			double rate = done / el;
			fprintf(stderr, "\rsweep: %zu/%zu points, %.2f points/s, ETA %.0f s   ", done,
				todo, rate, rate > 0 ? (double)(todo - done) / rate : 0.0);
			if (done == todo)
				fputc('\n', stderr);
		} else {
			fprintf(stderr, "sweep: %zu/%zu %s %s in %.2f s\n", done, todo, pts[i].label,
				rc ? "failed" : "done", now_s() - t0[i]);
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	free(pid);
	free(t0);
	if (stop_requested) {
		if (tty)
			fputc('\n', stderr);
		fprintf(stderr, "bucketsim: error: sweep interrupted; rerun the same command to "
				"finish it\n");
		return 128 + SIGINT;
	}
	return first_rc ? first_rc : -1; /* -1: every point ran */
}

/* ---- emitting ---- */

static void write_command(FILE *f, const char *exe, const char *dir, const struct point *p)
{
	shell_word(f, exe);
	for (size_t i = 0; i < p->argc; i++) {
		fputc(' ', f);
		shell_word(f, p->argv[i]);
	}
	char *o = xasprintf("%s/points/%s", dir, p->name);
	char *e = xasprintf("%s/points/%s.err", dir, p->name);
	fputs(" -o ", f);
	shell_word(f, o);
	fputs(" 2>", f);
	shell_word(f, e);
	fputc('\n', f);
	free(o);
	free(e);
}

static int emit(const char *how, const char *dir, const struct point *pts, size_t np,
		struct bs_err *err)
{
	char exe[PATH_MAX];
	if (!realpath("/proc/self/exe", exe))
		return bs_errf(err, BS_EXIT_RUNTIME, "/proc/self/exe", 0, NULL, "%s",
			       strerror(errno));
	char *all = NULL;
	size_t alen = 0;
	FILE *f = open_memstream(&all, &alen);
	for (size_t i = 0; i < np; i++)
		write_command(f, exe, dir, &pts[i]);
	fclose(f);
	char *p = xasprintf("%s/commands.txt", dir);
	int rc = sweep_write_atomic(p, all, err);
	free(p);
	if (!rc && !strcmp(how, "parallel")) {
		for (size_t i = 0; i < np; i++)
			if (!point_done(dir, &pts[i]))
				write_command(stdout, exe, dir, &pts[i]);
	} else if (!rc) {
		char *s = NULL;
		size_t slen = 0;
		f = open_memstream(&s, &slen);
		fprintf(f, "#!/bin/sh\n"
			   "# bucketsim sweep: one array task per point; merge with\n"
			   "#   bucketsim sweep --collect ");
		shell_word(f, dir);
		fprintf(f, "\n#SBATCH --job-name=bucketsim-sweep\n#SBATCH --array=1-%zu\n"
			   "#SBATCH --output=%s/points/slurm-%%a.out\n"
			   "set -e\n"
			   "line=$(sed -n \"${SLURM_ARRAY_TASK_ID}p\" ", np, dir);
		char *c = xasprintf("%s/commands.txt", dir);
		shell_word(f, c);
		free(c);
		fputs(")\n"
		      "[ -n \"$line\" ] || exit 1\n"
		      "eval \"$line\"\n", f);
		fclose(f);
		p = xasprintf("%s/sweep.sbatch", dir);
		rc = sweep_write_atomic(p, s, err);
		if (!rc) {
			chmod(p, 0755);
			printf("%s\n", p);
		}
		free(p);
		free(s);
	}
	free(all);
	return rc;
}

/* ---- the command ---- */

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
	char *dir = NULL, *tmpdir = NULL, *basefile = NULL, *spec = NULL;
	bool created = false, wrote_base = false;
	s.so = xmalloc((size_t)(argc + 4) * sizeof *s.so);
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		if (c == -2 || c == -3) {
			rc = c == -2 ? BS_EXIT_USAGE : 0;
			goto done;
		}
		/* Shared options are checked now and replayed for every point. */
		int r = cli_config_opt(&probe, c, st.optarg, &err);
		if (r < 0) {
			rc = cli_fail(&err);
			goto done;
		}
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
			s.so[s.nso++] = (struct saved_opt){c, c == CLI_OPT_CONFIG
								 ? abs_if_file(st.optarg)
								 : xstrdup(st.optarg)};
			continue;
		}
		char why[256];
		int64_t v;
		switch (c) {
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
			if (axis_arg(&s, st.optarg, &err)) {
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
		if (file || s.nax || out || how) {
			rc = cli_usage(self, "--collect DIR takes no other sweep options");
			goto done;
		}
		rc = sweep_finish_csv(coll, s.metrics, false, 0);
		goto done;
	}
	if (how && !out) {
		rc = cli_usage(self, "--emit needs -o DIR (where the commands write)");
		goto done;
	}
	if (file && load_sweep_file(&s, file, &err)) {
		rc = cli_fail(&err);
		goto done;
	}
	/* Presets do not stack: a second one would keep the keys of the first it does not set. */
	bool shared_preset = false, point_preset = false;
	for (size_t i = 0; i < s.nso; i++)
		shared_preset |= s.so[i].key == CLI_OPT_PRESET;
	for (size_t i = 0; i < s.nax; i++)
		point_preset |= !strcmp(s.ax[i].key, "preset");
	const cJSON *lp;
	cJSON_ArrayForEach(lp, s.listed) point_preset |=
		cJSON_GetObjectItemCaseSensitive(lp, "preset") != NULL;
	if (shared_preset && point_preset) {
		rc = cli_usage(self, "preset varies by point: a shared --preset (or the sweep file's "
				     "\"preset\") does not apply");
		goto done;
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
		dir = abs_if_file(out);
		if (!sweep_file_exists(dir))
			created = true;
		if (mkdir_p(dir, &err)) {
			rc = cli_fail(&err);
			goto done;
		}
		free(dir);
		dir = abs_if_file(out);
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
	pts = make_points(&s, &np);
	size_t width = 4;
	for (size_t n = np; n >= 10000; n /= 10)
		width++;
	for (size_t i = 0; i < np; i++)
		if (point_prepare(&s, basefile, &pts[i], i, width, &err)) {
			rc = cli_fail(&err);
			goto cleanup;
		}
	spec = spec_text(&s, pts, np);
	char *specpath = xasprintf("%s/sweep.json", dir);
	if (sweep_file_exists(specpath)) {
		size_t len;
		char *old = read_file(specpath, &len, &err);
		if (old && strcmp(old, spec))
			bs_errf(&err, BS_EXIT_USAGE, specpath, 0, NULL,
				"the directory holds a different sweep; choose another -o DIR");
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
		rc = emit(how, dir, pts, np, &err) ? cli_fail(&err) : 0;
		goto done;
	}
	int run_rc = run_points(dir, pts, np, jobs);
	if (run_rc > 128) {
		rc = run_rc;
		goto done;
	}
	rc = sweep_finish_csv(dir, s.metrics, !out, run_rc > 0 ? run_rc : 0);
	if (tmpdir) {
		for (size_t i = 0; i < np; i++) {
			char *q = xasprintf("%s/points/%s", dir, pts[i].name);
			remove_tree(q);
			free(q);
			q = xasprintf("%s/points/%s.err", dir, pts[i].name);
			unlink(q);
			free(q);
			q = xasprintf("%s/points/.%s.tmp", dir, pts[i].name);
			remove_tree(q);
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
		point_release(&pts[i]);
	free(pts);
	free(spec);
	free(basefile);
	free(dir);
	free(tmpdir);
	spec_release(&s);
	cli_config_release(&probe);
	return rc;
}

const struct cli_cmd cmd_sweep = {
	"sweep",
	"bucketsim sweep [-f SWEEP.json] [--axis KEY=V1,V2,... ...] [config options] [--seeds N] "
	"[-j N] [-o DIR] [--emit parallel|slurm] | --collect DIR",
	"run a set of configurations and seeds in parallel, resumably, one CSV row per point",
	"Runs every point (the product of the axes, the first varying slowest, or the sweep\n"
	"file's listed points; seeds fastest) as one `bucketsim run` into DIR/points/NNNN/, with\n"
	"-j worker processes, and merges the summaries into DIR/sweep.csv (or stdout without -o):\n"
	"one row per point in point order; the varying keys, trace, preset, seed, config_hash,\n"
	"error, then every summary metric.  Every point's configuration is checked before the\n"
	"first run.  Rerunning the same command skips finished points.  A failing point leaves\n"
	"its error in its row; the others go on, and the exit status is non-zero.  --emit prints\n"
	"the same runs for GNU parallel or Slurm; --collect merges what they wrote into the same\n"
	"CSV, byte for byte.  See sim/README.md.",
	"  bucketsim sweep --trace alpaca --axis bucketing.strategy=exponential,linear,none\n"
	"  bucketsim sweep --axis preset=vllm,distserve,bucketserve --axis workload.rate=5,10,20 \\\n"
	"      --seeds 3 -j 4 -o out/rate\n"
	"  bucketsim sweep -f sweep.json -o out/s --emit parallel | parallel -j 8 --joblog jl\n"
	"  bucketsim sweep --collect out/s\n",
	opts, sweep,
};
