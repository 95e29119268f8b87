/*
 * sweep_points: see sweep_points.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/commands.h"
#include "sim/run_int.h"
#include "sim/sweep_csv.h"
#include "sim/sweep_points.h"
#include "sim/sweep_scan.h"

static bool is_special(const char *key)
{
	return !strcmp(key, "trace") || !strcmp(key, "preset") || !strcmp(key, "seed");
}


/* An absolute path for a file argument (unchanged when it names no file, e.g. a bundled
 * trace name), so emitted commands work from any directory. */
char *sweep_abs_path(const char *p)
{
	char *a = abs_path(p);
	return a ? a : xstrdup(p);
}

/* ---- the points ---- */




void sweep_spec_release(struct spec *s)
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
	free(s->file_text);
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
		    long line, struct bs_err *err)
{
	for (size_t i = 0; i < s->nax; i++)
		if (!strcmp(s->ax[i].key, key)) {
			for (size_t k = 0; k < n; k++)
				free(vals[k]);
			free(vals);
			return bs_errf(err, src ? BS_EXIT_INPUT : BS_EXIT_USAGE, src, line, key,
				       "axis given twice");
		}
	s->ax = xrealloc(s->ax, (s->nax + 1) * sizeof *s->ax);
	s->ax[s->nax++] = (struct axis){xstrdup(key), vals, n, src, line};
	return 0;
}

/* Values of a JSON list of scalars.  On an error nothing is left in *vals (NULL, *n 0). */
static int json_list_values(const cJSON *l, const char *key, const char *src, long line,
			    char ***vals, size_t *n, struct bs_err *err)
{
	*vals = NULL;
	*n = 0;
	int code = src ? BS_EXIT_INPUT : BS_EXIT_USAGE; /* a sweep file's, or --axis */
	if (!cJSON_IsArray(l) || cJSON_GetArraySize(l) == 0)
		return bs_errf(err, code, src, line, key, "axis values must be a non-empty "
			       "JSON list");
	const cJSON *v;
	cJSON_ArrayForEach(v, l) {
		char *t = json_value_text(v);
		if (!t) {
			for (size_t k = 0; k < *n; k++)
				free((*vals)[k]);
			free(*vals);
			*vals = NULL;
			*n = 0;
			return bs_errf(err, code, src, line, key,
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
int sweep_axis_arg(struct spec *s, const char *arg, struct bs_err *err)
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
	if (*v == '[' && v[json_nul_escape(v, strlen(v))]) {
		rc = bs_errf(err, BS_EXIT_USAGE, NULL, 0, key, JSON_NUL_ESCAPE_MSG);
	} else if (*v == '[') {
		cJSON *l = cJSON_ParseWithOpts(v, NULL, true); /* nothing after the list */
		if (!l)
			rc = bs_errf(err, BS_EXIT_USAGE, NULL, 0, key, "not a JSON list: %s", v);
		else
			rc = json_list_values(l, key, NULL, 0, &vals, &n, err);
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
		rc = axis_add(s, key, vals, n, NULL, 0, err);
	else {
		for (size_t k = 0; k < n; k++)
			free(vals[k]);
		free(vals);
	}
	free(key);
	return rc;
}

long sweep_file_line(const struct spec *s, const char *path)
{
	if (!s->file_text)
		return 0;
	struct sweep_scan d = {.t = s->file_text, .len = s->file_len, .line = 1, .want = path};
	sweep_scan_value(&d);
	sweep_scan_release(&d);
	return d.want_line;
}

void sweep_locate_error(const struct spec *s, const char *basefile, const struct point *p,
			struct bs_err *err)
{
	if (!s->file || !err->code)
		return;
	char *path = NULL;
	bool base = basefile && !strcmp(err->file, basefile);
	if (base) {
		path = xstrdup(err->field);
	} else if (!err->file[0] && err->field[0]) {
		/* the key of an axis, or of the point's entry in "points" (an env.NAME axis's
		 * variable is named NAME by the error) */
		for (size_t i = 0; i < p->n && !path; i++) {
			const char *k = p->key[i];
			if (strcmp(k, err->field) && !(!strncmp(k, "env.", 4) &&
						      !strcmp(k + 4, err->field)))
				continue;
			char *a = xasprintf("axes.%s", k);
			if (sweep_file_line(s, a)) {
				path = a;
			} else {
				free(a);
				if (p->listed >= 0)
					path = xasprintf("points[%ld].%s", p->listed, k);
			}
		}
	}
	long line = path ? sweep_file_line(s, path) : 0;
	free(path);
	if (!line && !base)
		return;
	snprintf(err->file, sizeof err->file, "%s", s->file);
	err->line = line;
	err->code = BS_EXIT_INPUT;
}

/* A sweep file: {"axes": {...}} or {"points": [...]}, optional "trace", "preset", "seed",
 * "seeds", and every other member is the base configuration (as in -c).  A member given twice,
 * anywhere in the file, is an error naming it. */
int sweep_load_file(struct spec *s, const char *path, struct bs_err *err)
{
	size_t len;
	char *txt;
	cJSON *root = read_json_text(path, &txt, &len, err);
	if (!root)
		return -1;
	struct sweep_scan d = {.t = txt, .len = len, .line = 1};
	int rc = 0;
	s->file = path;
	if (sweep_scan_value(&d))
		rc = bs_errf(err, BS_EXIT_INPUT, path, d.dup_line, d.path,
			     "member given twice (first on line %ld)", d.first_line);
	sweep_scan_release(&d);
	sweep_scan_ws(&d);
	if (!rc && d.i < len) /* cJSON stops after the first value; as -c, the rest is refused */
		rc = bs_errf(err, BS_EXIT_INPUT, path, d.line, NULL, "invalid JSON near '%.*s'",
			     (int)(strcspn(txt + d.i, "\r\n") < 20 ? strcspn(txt + d.i, "\r\n") : 20),
			     txt + d.i);
	if (rc) {
		free(txt);
		cJSON_Delete(root);
		return rc;
	}
	s->file_text = txt;
	s->file_len = len;
#define LINE(member) sweep_file_line(s, member)
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "not a JSON object");
	}
	cJSON *axes = cJSON_DetachItemFromObjectCaseSensitive(root, "axes");
	cJSON *pts = cJSON_DetachItemFromObjectCaseSensitive(root, "points");
	cJSON *tr = cJSON_DetachItemFromObjectCaseSensitive(root, "trace");
	cJSON *pre = cJSON_DetachItemFromObjectCaseSensitive(root, "preset");
	cJSON *seed = cJSON_DetachItemFromObjectCaseSensitive(root, "seed");
	cJSON *seeds = cJSON_DetachItemFromObjectCaseSensitive(root, "seeds");
	s->file_trace = tr != NULL;
	s->file_seed = seed != NULL;
	s->file_seeds = seeds != NULL;
	if (axes && pts)
		rc = bs_errf(err, BS_EXIT_INPUT, path, LINE("points"), "points", "give \"axes\" or "
			     "\"points\", not both");
	else if (!axes && !pts)
		rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "axes", "a sweep file needs \"axes\" "
			     "(a grid) or \"points\" (a list)");
	if (!rc && axes) {
		if (!cJSON_IsObject(axes))
			rc = bs_errf(err, BS_EXIT_INPUT, path, LINE("axes"), "axes",
				     "must be an object of lists");
		const cJSON *a;
		cJSON_ArrayForEach(a, axes) {
			char **vals;
			size_t n;
			char *m = xasprintf("axes.%s", a->string);
			long line = LINE(m);
			free(m);
			if (rc || (rc = json_list_values(a, a->string, path, line, &vals, &n, err)))
				break;
			rc = axis_add(s, a->string, vals, n, path, line, err);
		}
	}
	if (!rc && pts) {
		if (!cJSON_IsArray(pts) || !cJSON_GetArraySize(pts))
			rc = bs_errf(err, BS_EXIT_INPUT, path, LINE("points"), "points",
				     "must be a non-empty list of objects");
		const cJSON *p;
		size_t j = 0;
		cJSON_ArrayForEach(p, pts) {
			if (rc)
				break;
			char *m = xasprintf("points[%zu]", j);
			if (!cJSON_IsObject(p))
				rc = bs_errf(err, BS_EXIT_INPUT, path, LINE(m), "points",
					     "every point is an object of key: value");
			free(m);
			const cJSON *kv;
			cJSON_ArrayForEach(kv, p) {
				char *t = json_value_text(kv);
				if (!t) {
					m = xasprintf("points[%zu].%s", j, kv->string);
					rc = bs_errf(err, BS_EXIT_INPUT, path, LINE(m), kv->string,
						     "a point's value must be a string, number or "
						     "boolean");
					free(m);
					break;
				}
				free(t);
			}
			j++;
		}
		s->listed = pts;
		pts = NULL;
	}
	char *t;
	if (!rc && tr) {
		if (!(t = json_value_text(tr)))
			rc = bs_errf(err, BS_EXIT_INPUT, path, LINE("trace"), "trace", "must be a string");
		else {
			s->so = xrealloc(s->so, (s->nso + 1) * sizeof *s->so);
			s->so[s->nso++] = (struct saved_opt){SWEEP_OPT_TRACE, t};
		}
	}
	if (!rc && pre) {
		if (!(t = json_value_text(pre)))
			rc = bs_errf(err, BS_EXIT_INPUT, path, LINE("preset"), "preset", "must be a string");
		else {
			s->so = xrealloc(s->so, (s->nso + 1) * sizeof *s->so);
			s->so[s->nso++] = (struct saved_opt){CLI_OPT_PRESET, t};
		}
	}
	if (!rc && seed) {
		if (!cJSON_IsNumber(seed) || seed->valuedouble < 0 || seed->valuedouble > 9e15 ||
		    seed->valuedouble != floor(seed->valuedouble))
			rc = bs_errf(err, BS_EXIT_INPUT, path, LINE("seed"), "seed", "must be an integer >= 0");
		else
			s->seed0 = (uint64_t)seed->valuedouble;
	}
	if (!rc && seeds) {
		if (!cJSON_IsNumber(seeds) || seeds->valuedouble < 1 || seeds->valuedouble > 1e6 ||
		    seeds->valuedouble != floor(seeds->valuedouble))
			rc = bs_errf(err, BS_EXIT_INPUT, path, LINE("seeds"), "seeds",
				     "must be an integer in [1, 1000000]");
		else
			s->seeds = (int64_t)seeds->valuedouble;
	}
#undef LINE
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


void sweep_point_release(struct point *p)
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
	for (size_t i = 0; i < p->ninputs; i++)
		free(p->inputs[i]);
	free(p->inputs);
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
/* config_files() of a point: its files are inputs of the sweep, and a key (or an --env
 * variable) naming one by a relative path is set again with the absolute value, so that the
 * run's words (and emitted commands) work from any directory. */
static void point_files(void *ctx, bool env, const char *key, const char *abs_value,
			char *const *files, size_t nfiles)
{
	struct point *p = ctx;
	for (size_t i = 0; i < nfiles; i++) {
		p->inputs = xrealloc(p->inputs, (p->ninputs + 1) * sizeof *p->inputs);
		p->inputs[p->ninputs++] = xstrdup(files[i]);
	}
	char *kv = xasprintf("%s=%s", key, abs_value);
	bool same = false; /* already set so by an earlier word */
	for (size_t i = 0; i < p->argc && !same; i++)
		same = !strcmp(p->argv[i], kv);
	if (!same) {
		argv_push(p, env ? "--env" : "--set");
		argv_push(p, kv);
	}
	free(kv);
}

struct point *sweep_make_points(const struct spec *s, size_t *np)
{
	struct point *pts = NULL;
	*np = 0;
	/* The grid of the axes (one empty combination without any), first axis slowest. */
	size_t ngrid = 0;
	struct point *grid = NULL;
	size_t *idx = xcalloc(s->nax ? s->nax : 1, sizeof *idx);
	for (bool more = true; more;) {
		grid = xrealloc(grid, (ngrid + 1) * sizeof *grid);
		memset(&grid[ngrid], 0, sizeof *grid);
		grid[ngrid].listed = -1;
		for (size_t i = 0; i < s->nax; i++)
			point_set(&grid[ngrid], s->ax[i].key, s->ax[i].vals[idx[i]]);
		ngrid++;
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
	/* Listed points each run at every combination of the axes (the point outer); without
	 * listed points the grid is the points. */
	size_t nbase = ngrid;
	struct point *base = grid;
	if (s->listed) {
		base = NULL;
		nbase = 0;
		const cJSON *q;
		long li = 0;
		cJSON_ArrayForEach(q, s->listed) {
			for (size_t g = 0; g < ngrid; g++) {
				base = xrealloc(base, (nbase + 1) * sizeof *base);
				memset(&base[nbase], 0, sizeof *base);
				base[nbase].listed = li;
				const cJSON *kv;
				cJSON_ArrayForEach(kv, q) {
					char *t = json_value_text(kv);
					point_set(&base[nbase], kv->string, t);
					free(t);
				}
				for (size_t i = 0; i < grid[g].n; i++)
					point_set(&base[nbase], grid[g].key[i], grid[g].val[i]);
				nbase++;
			}
			li++;
		}
		for (size_t g = 0; g < ngrid; g++)
			sweep_point_release(&grid[g]);
		free(grid);
	}
	for (size_t b = 0; b < nbase; b++) {
		const char *sv = point_get(&base[b], "seed");
		for (int64_t r = 0; r < (sv ? 1 : s->seeds); r++) {
			pts = xrealloc(pts, (*np + 1) * sizeof *pts);
			struct point *p = &pts[(*np)++];
			memset(p, 0, sizeof *p);
			p->listed = base[b].listed;
			for (size_t i = 0; i < base[b].n; i++)
				point_set(p, base[b].key[i], base[b].val[i]);
			p->seed = sv ? strtoull(sv, NULL, 10) : s->seed0 + (uint64_t)r;
		}
		sweep_point_release(&base[b]);
	}
	free(base);
	return pts;
}

/* The shared options a point's run is given, in the order given to the sweep: each is one
 * word, followed by its argument when it takes one. */
struct replayed_opt {
	int key;
	const char *opt;
	bool has_arg;
};
static const struct replayed_opt replayed[] = {
	{CLI_OPT_CONFIG, "--config", true}, {CLI_OPT_SET, "--set", true},
	{CLI_OPT_ENV, "--env", true},       {CLI_OPT_PRESET, "--preset", true},
	{CLI_OPT_STRICT, "--strict", false},
};

static const struct replayed_opt *replayed_find(const char *word)
{
	for (size_t k = 0; k < sizeof replayed / sizeof *replayed; k++)
		if (!strcmp(replayed[k].opt, word))
			return &replayed[k];
	return &replayed[0]; /* not reached: the words are the ones pushed below */
}

/* Builds a point's `bucketsim run` words (without -o) and checks its configuration as run
 * would, without simulating: every key, value and rule, before anything runs. */
int sweep_point_prepare(const struct spec *s, const char *basefile, struct point *p,
			 size_t index, size_t np, struct bs_err *err)
{
	sweep_point_name(index, np, p->name);
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
	for (size_t i = 0; i < s->nso; i++) {
		if (s->so[i].key == SWEEP_OPT_TRACE) {
			if (!trace)
				trace = s->so[i].arg;
			continue;
		}
		if (s->so[i].key == CLI_OPT_PRESET)
			preset = s->so[i].arg;
		for (size_t k = 0; k < sizeof replayed / sizeof *replayed; k++)
			if (replayed[k].key == s->so[i].key) {
				argv_push(p, replayed[k].opt);
				if (replayed[k].has_arg)
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
	for (size_t i = 2; i < p->argc && !rc;) {
		const struct replayed_opt *o = replayed_find(p->argv[i]);
		const char *arg = o->has_arg && i + 1 < p->argc ? p->argv[i + 1] : NULL;
		rc = cli_config_opt(&x.cc, o->key, arg, err) < 0 ? -1 : 0;
		i += o->has_arg ? 2 : 1;
	}
	const char *eff = rc ? NULL : run_default_trace(&x.cc.cfg, trace);
	if (!rc)
		rc = run_setup(&x, eff, false, err);
	/* A key set but never read: a warning on the sweep's standard error (each once, however
	 * many points set it; the points' runs repeat it in their NNNN.err), or under sim.strict
	 * (--strict, or the key set anywhere) an error of the point's configuration, found now,
	 * before any run.  The workload is not built here: its arrival and length rules are the
	 * runs' to report. */
	if (!rc)
		rc = run_check_unread(&x, err);
	if (!rc)
		config_files(&x.cc.cfg, point_files, p);
	/* Its requests, for --emit slurm's time estimate: the key, or the workload built once
	 * (an error is left to the run, which reports it; the count is then unknown, 0). */
	if (!rc && s->count_requests) {
		if (config_is_set(&x.cc.cfg, "workload.num_requests")) {
			p->nreq = config_int(&x.cc.cfg, "workload.num_requests");
		} else {
			struct workload w;
			memset(&w, 0, sizeof w);
			struct bs_err e2 = {0};
			if (!workload_build(&x.cc.cfg, eff, p->seed, &w, &e2))
				p->nreq = (int64_t)w.n;
			workload_release(&w);
		}
	}
	char *tabs = eff ? sweep_abs_path(eff) : xstrdup("");
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
/* Records the hash of the file WORD names, if it names one (run_file_hash, as each point's run
 * records it in its summary.json): a rerun after an input file changed is then a different
 * sweep, not a resumption with stale points. */
static void add_input(cJSON *inputs, const char *word)
{
	struct stat sb;
	char buf[17];
	if (stat(word, &sb) || !S_ISREG(sb.st_mode) ||
	    cJSON_GetObjectItemCaseSensitive(inputs, word) || run_file_hash(word, buf))
		return;
	cJSON_AddStringToObject(inputs, word, buf);
}

char *sweep_spec_text(const struct spec *s, const struct point *pts, size_t np)
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
	for (size_t i = 0; i < np; i++) {
		for (size_t k = 0; k < pts[i].argc; k++) {
			const char *w = pts[i].argv[k], *eq = strchr(w, '=');
			add_input(inputs, w);
			if (eq)
				add_input(inputs, eq + 1);
		}
		for (size_t k = 0; k < pts[i].ninputs; k++) /* a mix's traces, a -c file's */
			add_input(inputs, pts[i].inputs[k]);
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

char *sweep_changed_input(const char *old, const char *new_text)
{
	cJSON *a = cJSON_Parse(old), *b = cJSON_Parse(new_text);
	const cJSON *ia = cJSON_GetObjectItemCaseSensitive(a, "inputs");
	const cJSON *ib = cJSON_GetObjectItemCaseSensitive(b, "inputs");
	char *changed = NULL;
	const cJSON *e;
	cJSON_ArrayForEach(e, ia) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(ib, e->string);
		if (cJSON_IsString(e) && cJSON_IsString(f) && strcmp(e->valuestring, f->valuestring)) {
			changed = xstrdup(e->string);
			break;
		}
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	return changed;
}
