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
#include "sim/run_int.h"
#include "sim/sweep_csv.h"

bool sweep_file_exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
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

/* ---- the CSV ---- */

static void csv_field(FILE *f, const char *s, bool first)
{
	if (!first)
		fputc(',', f);
	if (strpbrk(s, ",\"\n\r"))
		csv_fwrite(f, s, strlen(s));
	else
		fputs(s, f);
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
static char *point_error(const char *dir, const char *name)
{
	char *p = xasprintf("%s/points/%s.err", dir, name);
	FILE *f = fopen(p, "r");
	free(p);
	char line[1024] = "";
	if (f) {
		if (!fgets(line, sizeof line, f))
			line[0] = 0;
		fclose(f);
	}
	line[strcspn(line, "\n")] = 0;
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

/* Merges the points of sweep directory DIR (described by SPEC) into CSV text, with the metrics
 * of MLIST (comma-separated; NULL = every numeric one); counts the failed points and describes
 * the first in FIRST_FAIL.  Returns NULL on an error. */
static char *collect(const char *dir, const cJSON *spec, const char *mlist, size_t *nfailed,
		     char **first_fail, struct bs_err *err)
{
	const cJSON *cols = cJSON_GetObjectItemCaseSensitive(spec, "columns");
	const cJSON *pa = cJSON_GetObjectItemCaseSensitive(spec, "points");
	size_t np = (size_t)cJSON_GetArraySize(pa);
	cJSON **sum = xcalloc(np ? np : 1, sizeof *sum);
	char **names = NULL;
	size_t nn = 0;
	if (mlist) {
		char *l = xstrdup(mlist);
		for (char *save = NULL, *t = strtok_r(l, ",", &save); t; t = strtok_r(NULL, ",", &save))
			add_name(&names, &nn, t);
		free(l);
	}
	size_t i = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, pa) {
		const char *name = cJSON_GetObjectItemCaseSensitive(p, "dir")->valuestring;
		char *path = xasprintf("%s/points/%s/summary.json", dir, name);
		size_t len;
		struct bs_err e2 = {0};
		char *txt = sweep_file_exists(path) ? read_file(path, &len, &e2) : NULL;
		if (txt) {
			sum[i] = cJSON_ParseWithLength(txt, len);
			free(txt);
			if (!sum[i]) {
				bs_errf(err, BS_EXIT_RUNTIME, path, 0, NULL, "not valid JSON");
				free(path);
				goto fail;
			}
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(sum[i], "metrics");
			const cJSON *v;
			if (!mlist)
				cJSON_ArrayForEach(v, m) if (cJSON_IsNumber(v) || cJSON_IsNull(v))
					add_name(&names, &nn, v->string);
		}
		free(path);
		i++;
	}
	/* A metric some points do not report (one of a topology or a KV layout: the points differ
	 * in them) is an empty cell there; a listed name that no successful point reports is an
	 * error. */
	for (size_t k = 0; mlist && k < nn; k++) {
		bool any = false, ok = false;
		for (size_t j = 0; j < np; j++) {
			any |= sum[j] != NULL;
			ok |= cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(sum[j], "metrics"), names[k]) != NULL;
		}
		if (any && !ok) {
			bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--metrics",
				"unknown metric '%s': no point reports it (see analysis/README.md)",
				names[k]);
			goto fail;
		}
	}
	char *buf = NULL;
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
		const cJSON *set = cJSON_GetObjectItemCaseSensitive(p, "set");
		first = true;
		cJSON_ArrayForEach(c, cols) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(set, c->valuestring);
			csv_field(f, cJSON_IsString(v) ? v->valuestring : "", first);
			first = false;
		}
		for (size_t k = 0; k < 3; k++) {
			csv_field(f, cJSON_GetObjectItemCaseSensitive(p, fixed[k])->valuestring, first);
			first = false;
		}
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(sum[i], "meta");
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(meta, "config_hash");
		csv_field(f, cJSON_IsString(h) ? h->valuestring : "", false);
		const char *name = cJSON_GetObjectItemCaseSensitive(p, "dir")->valuestring;
		if (!sum[i]) {
			char *e = point_error(dir, name);
			csv_field(f, e, false);
			if (!(*nfailed)++) {
				const cJSON *set2;
				char lab[512];
				int off = snprintf(lab, sizeof lab, "point %s (", name);
				cJSON_ArrayForEach(set2, set) if (off < (int)sizeof lab)
					off += snprintf(lab + off, sizeof lab - (size_t)off, "%s=%s ",
							set2->string, set2->valuestring);
				for (size_t k = 0; k < 3 && off < (int)sizeof lab; k++) {
					const char *vv = cJSON_GetObjectItemCaseSensitive(
						p, fixed[k])->valuestring;
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
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(sum[i], "metrics");
		for (size_t k = 0; k < nn; k++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, names[k]);
			char nb[64] = "";
			if (cJSON_IsNumber(v))
				number_text(v->valuedouble, nb, sizeof nb);
			csv_field(f, nb, false);
		}
		fputc('\n', f);
		i++;
	}
	fclose(f);
	for (i = 0; i < np; i++)
		cJSON_Delete(sum[i]);
	free(sum);
	for (size_t k = 0; k < nn; k++)
		free(names[k]);
	free(names);
	return buf;
fail:
	for (i = 0; i < np; i++)
		cJSON_Delete(sum[i]);
	free(sum);
	for (size_t k = 0; k < nn; k++)
		free(names[k]);
	free(names);
	return NULL;
}

/* Reads DIR/sweep.json. */
static cJSON *read_spec(const char *dir, struct bs_err *err)
{
	char *path = xasprintf("%s/sweep.json", dir);
	cJSON *spec = read_json(path, err);
	if (spec && !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(spec, "points")))
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "not a sweep description");
	free(path);
	if (err->code) {
		cJSON_Delete(spec);
		return NULL;
	}
	return spec;
}

/* Writes the merged CSV (to DIR/sweep.csv, or stdout when TO_STDOUT) and reports failures in
 * one line.  Returns the exit status. */
int sweep_finish_csv(const char *dir, const char *mlist, bool to_stdout, int fail_code)
{
	struct bs_err err = {0};
	cJSON *spec = read_spec(dir, &err);
	if (!spec)
		return cli_fail(&err);
	size_t nfailed = 0;
	char *first = NULL;
	char *csv = collect(dir, spec, mlist, &nfailed, &first, &err);
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

