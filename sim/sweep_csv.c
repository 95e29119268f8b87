/*
 * sweep_csv: see sweep_csv.h.
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
#include "sim/csv_cell.h"
#include "sim/run_int.h"
#include "sim/sweep_csv.h"

bool sweep_file_exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

bool sweep_point_done(const char *dir, const char *name)
{
	char *s = xasprintf("%s/points/%s/summary.json", dir, name);
	char *m = xasprintf("%s/points/%s/" OUTSET_MARKER, dir, name);
	bool r = sweep_file_exists(s) && sweep_file_exists(m);
	free(s);
	free(m);
	return r;
}

/* Writes TEXT to PATH atomically. */
int sweep_write_atomic(const char *path, const char *text, struct bs_err *err)
{
	struct outset os;
	outset_init(&os);
	FILE *f = outset_open(&os, path, err);
	if (!f)
		return -1;
	fputs(text, f);
	return outset_commit(&os, err);
}

/* ---- checking what --collect reads ----
 * sweep.json and the points' summary.json may come from another host (--emit, then
 * --collect): each is checked as input before anything of it is used. */

size_t sweep_name_width(size_t np)
{
	size_t w = 4;
	for (size_t n = np; n >= 10000; n /= 10)
		w++;
	return w;
}

void sweep_point_name(size_t index, size_t np, char name[24])
{
	snprintf(name, 24, "%0*zu", (int)sweep_name_width(np), index + 1);
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* Whether every member of object O is a string (the first other one's name in *BAD). */
static bool all_strings(const cJSON *o, const char **bad)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, o) if (!cJSON_IsString(v)) {
		*bad = v->string ? v->string : "";
		return false;
	}
	return true;
}

int sweep_spec_check(const char *path, const cJSON *spec, struct bs_err *err)
{
	const int E = BS_EXIT_INPUT;
	char f[96];
	if (!cJSON_IsObject(spec))
		return bs_errf(err, E, path, 0, NULL, "not a sweep description (a JSON object)");
	const cJSON *v = get(spec, "bucketsim_sweep");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "1"))
		return bs_errf(err, E, path, 0, "bucketsim_sweep", "not a sweep description of this "
			       "version (\"bucketsim_sweep\": \"1\")");
	const cJSON *cols = get(spec, "columns");
	if (!cJSON_IsArray(cols))
		return bs_errf(err, E, path, 0, "columns", "must be a list of key names");
	size_t i = 0;
	cJSON_ArrayForEach(v, cols) {
		if (!cJSON_IsString(v) || !*v->valuestring) {
			snprintf(f, sizeof f, "columns[%zu]", i);
			return bs_errf(err, E, path, 0, f, "must be a key name (a non-empty string)");
		}
		i++;
	}
	const cJSON *in = get(spec, "inputs");
	const char *bad;
	if (!cJSON_IsObject(in))
		return bs_errf(err, E, path, 0, "inputs", "must be an object of file: hash");
	if (!all_strings(in, &bad)) {
		snprintf(f, sizeof f, "inputs.%s", bad);
		return bs_errf(err, E, path, 0, f, "must be a hash (a string)");
	}
	const cJSON *pa = get(spec, "points");
	if (!cJSON_IsArray(pa))
		return bs_errf(err, E, path, 0, "points", "must be a list of points");
	size_t np = (size_t)cJSON_GetArraySize(pa);
	const cJSON *p;
	i = 0;
	cJSON_ArrayForEach(p, pa) {
		char name[24];
		sweep_point_name(i, np, name);
		snprintf(f, sizeof f, "points[%zu]", i);
		if (!cJSON_IsObject(p))
			return bs_errf(err, E, path, 0, f, "must be an object");
		/* The point's directory is DIR/points/NAME: only the name of its place in the
		 * order, never a path. */
		v = get(p, "dir");
		snprintf(f, sizeof f, "points[%zu].dir", i);
		if (!cJSON_IsString(v) || strcmp(v->valuestring, name))
			return bs_errf(err, E, path, 0, f, "must be \"%s\" (the points are named "
				       "in order, %s for the first)", name,
				       np >= 10000 ? "00001 or longer" : "0001");
		static const char *const str[] = {"trace", "preset", "seed"};
		for (size_t k = 0; k < 3; k++)
			if (!cJSON_IsString(get(p, str[k]))) {
				snprintf(f, sizeof f, "points[%zu].%s", i, str[k]);
				return bs_errf(err, E, path, 0, f, "must be a string");
			}
		v = get(p, "set");
		snprintf(f, sizeof f, "points[%zu].set", i);
		if (!cJSON_IsObject(v))
			return bs_errf(err, E, path, 0, f, "must be an object of key: value");
		if (!all_strings(v, &bad)) {
			snprintf(f, sizeof f, "points[%zu].set.%s", i, bad);
			return bs_errf(err, E, path, 0, f, "must be a string");
		}
		v = get(p, "run");
		size_t k = 0;
		const cJSON *w;
		snprintf(f, sizeof f, "points[%zu].run", i);
		if (!cJSON_IsArray(v))
			return bs_errf(err, E, path, 0, f, "must be a list of words");
		cJSON_ArrayForEach(w, v) {
			if (!cJSON_IsString(w)) {
				snprintf(f, sizeof f, "points[%zu].run[%zu]", i, k);
				return bs_errf(err, E, path, 0, f, "must be a string");
			}
			k++;
		}
		i++;
	}
	return 0;
}

/* A point's summary.json as --collect uses it: "meta" with the string "config_hash" and
 * optionally "inputs" (file: hash), and "metrics", an object whose members the CSV takes are
 * numbers or null (lists are not columns). */
static int summary_check(const char *path, const cJSON *sum, const char *const *names,
			 size_t nn, struct bs_err *err)
{
	const int E = BS_EXIT_INPUT;
	char f[96];
	if (!cJSON_IsObject(sum))
		return bs_errf(err, E, path, 0, NULL, "not a run's summary (a JSON object)");
	const cJSON *meta = get(sum, "meta");
	if (!cJSON_IsObject(meta))
		return bs_errf(err, E, path, 0, "meta", "must be an object");
	if (!cJSON_IsString(get(meta, "config_hash")))
		return bs_errf(err, E, path, 0, "meta.config_hash", "must be a string");
	const cJSON *in = get(meta, "inputs");
	const char *bad;
	if (in && !cJSON_IsObject(in))
		return bs_errf(err, E, path, 0, "meta.inputs", "must be an object of file: hash");
	if (in && !all_strings(in, &bad)) {
		snprintf(f, sizeof f, "meta.inputs.%s", bad);
		return bs_errf(err, E, path, 0, f, "must be a hash (a string)");
	}
	const cJSON *m = get(sum, "metrics");
	if (!cJSON_IsObject(m))
		return bs_errf(err, E, path, 0, "metrics", "must be an object");
	for (size_t k = 0; k < nn; k++) {
		const cJSON *v = get(m, names[k]);
		if (v && !cJSON_IsNumber(v) && !cJSON_IsNull(v)) {
			snprintf(f, sizeof f, "metrics.%s", names[k]);
			return bs_errf(err, E, path, 0, f, "must be a number or null");
		}
	}
	return 0;
}

/* Point NAME's record of its input files (meta.inputs of SUM) against the sweep's (INPUTS of
 * sweep.json): a file the point read with another hash than the sweep started with changed
 * while the sweep ran, and its rows would mix two inputs. */
static int inputs_check(const char *path, const char *name, const cJSON *sum,
			const cJSON *inputs, struct bs_err *err)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, get(get(sum, "meta"), "inputs")) {
		const cJSON *w = get(inputs, v->string);
		if (cJSON_IsString(w) && strcmp(w->valuestring, v->valuestring))
			return bs_errf(err, BS_EXIT_INPUT, v->string, 0, NULL,
				       "changed while the sweep ran: hash %s when it began, %s as "
				       "point %s read it (%s); run the sweep again into a new "
				       "directory", w->valuestring, v->valuestring, name, path);
	}
	return 0;
}

/* The input files of sweep.json (SPEC, at SPEC_PATH) hashed again: one that changed since the
 * sweep began is an error; one that is gone too when MISSING_IS_ERROR (the sweep ran here;
 * --collect may run on another host than the points). */
static int inputs_again(const char *spec_path, const cJSON *spec, bool missing_is_error,
			struct bs_err *err)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, get(spec, "inputs")) {
		char buf[17];
		if (!sweep_file_exists(v->string)) {
			if (missing_is_error)
				return bs_errf(err, BS_EXIT_INPUT, v->string, 0, NULL, "removed while "
					       "the sweep ran (an input of %s)", spec_path);
			continue;
		}
		if (run_file_hash(v->string, buf))
			return bs_errf(err, BS_EXIT_RUNTIME, v->string, 0, NULL, "cannot read: %s",
				       strerror(errno));
		if (strcmp(buf, v->valuestring))
			return bs_errf(err, BS_EXIT_INPUT, v->string, 0, NULL,
				       "changed while the sweep ran: hash %s when it began, %s now "
				       "(an input of %s); run the sweep again into a new directory",
				       v->valuestring, buf, spec_path);
	}
	return 0;
}

/* ---- the CSV ---- */

static void csv_field(FILE *f, const char *s, bool first)
{
	if (!first)
		fputc(',', f);
	csv_cell(f, s);
}

/* A summary number as the shortest text that reads back to the same double. */
static void number_text(double v, char *buf, size_t n)
{
	if (v == floor(v) && fabs(v) < 9e15) {
		snprintf(buf, n, "%.0f", v);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* The first line of a point's stderr, without the "bucketsim: error: " prefix. */
static char *point_error(const char *dir, const char *name, const struct sweep_reader *rd)
{
	char *p = xasprintf("%s/points/%s.err", dir, name);
	char *t = NULL;
	size_t len = 0;
	struct bs_err e2 = {0};
	if (rd->read(rd->ctx, p, &t, &len, &e2))
		t = NULL;
	free(p);
	char line[1024] = "";
	if (t)
		snprintf(line, sizeof line, "%.*s", (int)strcspn(t, "\n"), t);
	free(t);
	const char *pre = "bucketsim: error: ";
	const char *m = strncmp(line, pre, strlen(pre)) ? line : line + strlen(pre);
	return xstrdup(*m ? m : "not run (no summary.json)");
}

static void add_name(char ***names, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*names)[i], s))
			return;
	*names = xrealloc(*names, (*n + 1) * sizeof **names);
	(*names)[(*n)++] = xstrdup(s);
}

/* The files of a sweep directory, as the program reads them: absent is no text, not an error;
 * a summary.json counts only in a complete output set (beside its marker: a run stopped while
 * it put its files into place leaves none). */
static int read_disk(void *ctx, const char *path, char **text, size_t *len, struct bs_err *err)
{
	(void)ctx;
	*text = NULL;
	*len = 0;
	size_t n = strlen(path), k = strlen("summary.json");
	if (n >= k && !strcmp(path + n - k, "summary.json")) {
		char *m = xasprintf("%.*s" OUTSET_MARKER, (int)(n - k), path);
		bool done = sweep_file_exists(m);
		free(m);
		if (!done)
			return 0;
	}
	if (!sweep_file_exists(path))
		return 0;
	*text = read_file(path, len, err);
	return *text ? 0 : -1;
}

char *sweep_collect(const char *dir, const char *spec_path, const cJSON *spec,
		    const char *mlist, const struct sweep_reader *rd, size_t *nfailed,
		    char **first_fail, struct bs_err *err)
{
	if (sweep_spec_check(spec_path, spec, err))
		return NULL;
	const cJSON *cols = get(spec, "columns");
	const cJSON *pa = get(spec, "points");
	const cJSON *inputs = get(spec, "inputs");
	size_t np = (size_t)cJSON_GetArraySize(pa);
	cJSON **sum = xcalloc(np ? np : 1, sizeof *sum);
	char **names = NULL;
	size_t nn = 0;
	char *buf = NULL;
	if (mlist) {
		char *l = xstrdup(mlist);
		for (char *save = NULL, *t = strtok_r(l, ",", &save); t; t = strtok_r(NULL, ",", &save))
			add_name(&names, &nn, t);
		free(l);
	}
	size_t i = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, pa) {
		const char *name = get(p, "dir")->valuestring;
		char *path = xasprintf("%s/points/%s/summary.json", dir, name);
		size_t len;
		char *txt = NULL;
		int r = rd->read(rd->ctx, path, &txt, &len, err);
		if (!r && txt) {
			if (json_nul_escape(txt, len) < len)
				r = bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, JSON_NUL_ESCAPE_MSG);
			else if (!(sum[i] = cJSON_ParseWithLength(txt, len)))
				r = bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "not valid JSON");
			else if (!(r = summary_check(path, sum[i], (const char *const *)names,
						     mlist ? nn : 0, err)))
				r = inputs_check(path, name, sum[i], inputs, err);
		}
		free(txt);
		free(path);
		if (r)
			goto out;
		const cJSON *v;
		if (!mlist)
			cJSON_ArrayForEach(v, get(sum[i], "metrics")) if (cJSON_IsNumber(v) ||
									  cJSON_IsNull(v))
				add_name(&names, &nn, v->string);
		i++;
	}
	/* A metric some points do not report (one of a topology or a KV layout: the points differ
	 * in them) is an empty cell there; a listed name that no successful point reports is an
	 * error. */
	for (size_t k = 0; mlist && k < nn; k++) {
		bool any = false, ok = false;
		for (size_t j = 0; j < np; j++) {
			any |= sum[j] != NULL;
			ok |= get(get(sum[j], "metrics"), names[k]) != NULL;
		}
		if (any && !ok) {
			bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--metrics",
				"unknown metric '%s': no point reports it (see analysis/README.md)",
				names[k]);
			goto out;
		}
	}
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);
	bool first = true;
	const cJSON *c;
	cJSON_ArrayForEach(c, cols) {
		csv_field(f, c->valuestring, first);
		first = false;
	}
	static const char *const fixed[] = {"trace", "preset", "seed", "config_hash", "error"};
	for (size_t k = 0; k < 5; k++) {
		csv_field(f, fixed[k], first);
		first = false;
	}
	for (size_t k = 0; k < nn; k++)
		csv_field(f, names[k], false);
	fputc('\n', f);
	i = 0;
	cJSON_ArrayForEach(p, pa) {
		const cJSON *set = get(p, "set");
		first = true;
		cJSON_ArrayForEach(c, cols) {
			const cJSON *v = get(set, c->valuestring);
			csv_field(f, cJSON_IsString(v) ? v->valuestring : "", first);
			first = false;
		}
		for (size_t k = 0; k < 3; k++) {
			csv_field(f, get(p, fixed[k])->valuestring, first);
			first = false;
		}
		const cJSON *h = get(get(sum[i], "meta"), "config_hash");
		csv_field(f, cJSON_IsString(h) ? h->valuestring : "", false);
		const char *name = get(p, "dir")->valuestring;
		if (!sum[i]) {
			char *e = point_error(dir, name, rd);
			csv_field(f, e, false);
			if (!(*nfailed)++) {
				const cJSON *set2;
				char lab[512];
				int off = snprintf(lab, sizeof lab, "point %s (", name);
				cJSON_ArrayForEach(set2, set) if (off < (int)sizeof lab)
					off += snprintf(lab + off, sizeof lab - (size_t)off, "%s=%s ",
							set2->string, set2->valuestring);
				for (size_t k = 0; k < 3 && off < (int)sizeof lab; k++) {
					const char *vv = get(p, fixed[k])->valuestring;
					if (*vv)
						off += snprintf(lab + off, sizeof lab - (size_t)off,
								"%s%s=%s", k ? " " : "", fixed[k], vv);
				}
				*first_fail = xasprintf("%s): %s", lab, e);
			}
			free(e);
		} else {
			csv_field(f, "", false);
		}
		const cJSON *m = get(sum[i], "metrics");
		for (size_t k = 0; k < nn; k++) {
			const cJSON *v = get(m, names[k]);
			char nb[64] = "";
			if (cJSON_IsNumber(v))
				number_text(v->valuedouble, nb, sizeof nb);
			csv_field(f, nb, false);
		}
		fputc('\n', f);
		i++;
	}
	fclose(f);
out:
	for (i = 0; i < np; i++)
		cJSON_Delete(sum[i]);
	free(sum);
	for (size_t k = 0; k < nn; k++)
		free(names[k]);
	free(names);
	return buf;
}

/* Reads DIR/sweep.json. */
static cJSON *read_spec(const char *dir, struct bs_err *err)
{
	char *path = xasprintf("%s/sweep.json", dir);
	cJSON *spec = read_json(path, err);
	free(path);
	return spec;
}

/* Writes the merged CSV (to DIR/sweep.csv, or stdout when TO_STDOUT) and reports failures in
 * one line.  Returns the exit status. */
int sweep_finish_csv(const char *dir, const char *mlist, bool to_stdout, int fail_code,
		     bool ran_here)
{
	struct bs_err err = {0};
	cJSON *spec = read_spec(dir, &err);
	if (!spec)
		return cli_fail(&err);
	size_t nfailed = 0;
	char *first = NULL;
	char *sp = xasprintf("%s/sweep.json", dir);
	const struct sweep_reader rd = {read_disk, NULL};
	char *csv = sweep_collect(dir, sp, spec, mlist, &rd, &nfailed, &first, &err);
	if (csv && inputs_again(sp, spec, ran_here, &err)) {
		free(csv);
		csv = NULL;
	}
	free(sp);
	cJSON_Delete(spec);
	if (!csv)
		return cli_fail(&err);
	int rc = 0;
	if (to_stdout) {
		fputs(csv, stdout);
	} else {
		char *p = xasprintf("%s/sweep.csv", dir);
		rc = sweep_write_atomic(p, csv, &err) ? cli_fail(&err) : 0;
		free(p);
	}
	free(csv);
	if (!rc && nfailed) {
		fprintf(stderr, "bucketsim: error: %zu of the sweep's points failed; first: %s\n",
			nfailed, first);
		rc = fail_code ? fail_code : BS_EXIT_RUNTIME;
	}
	free(first);
	return rc;
}

