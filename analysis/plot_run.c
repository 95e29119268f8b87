/*
 * plot_run: the figures of run directories (cdf, heatmap, timeline, bubbles), read from their
 * requests.csv, buckets.csv, monitor.csv and batches.csv.  See plot_kinds.h and
 * analysis/README.md ("Figures").
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/plot_kinds.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts the N values of V and keeps each once; returns how many are left. */
static size_t sorted_distinct(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || v[i] != v[m - 1])
			v[m++] = v[i];
	return m;
}

/* A run directory's legend text: a sweep's point (DIR is SWEEP/points/NNNN and SWEEP/sweep.json
 * lists it) reads as the settings that make the point (its `set` keys as plot_key_words
 * VALUE, its preset, and its seed when the sweep has several), else DIR's last part. */
static char *run_name(const char *dir)
{
	char *d = xstrdup(dir);
	size_t l = strlen(d);
	while (l > 1 && d[l - 1] == '/')
		d[--l] = 0;
	char *slash = strrchr(d, '/');
	const char *base = slash ? slash + 1 : d;
	char *name = NULL;
	if (slash) {
		*slash = 0;
		char *p2 = strrchr(d, '/');
		const char *parent = p2 ? p2 + 1 : d;
		if (!strcmp(parent, "points")) {
			char *sj = p2 ? xasprintf("%.*s/sweep.json", (int)(p2 - d), d)
				      : xstrdup("sweep.json");
			struct bs_err e = {0};
			cJSON *j = access(sj, R_OK) == 0 ? read_json(sj, &e) : NULL;
			const cJSON *pt, *pts = cJSON_GetObjectItemCaseSensitive(j, "points");
			/* Several seeds: a point is one of them. */
			bool seeds = false;
			const char *seed0 = NULL;
			cJSON_ArrayForEach(pt, pts) {
				const cJSON *sd = cJSON_GetObjectItemCaseSensitive(pt, "seed");
				if (!cJSON_IsString(sd))
					continue;
				if (seed0 && strcmp(seed0, sd->valuestring))
					seeds = true;
				seed0 = seed0 ? seed0 : sd->valuestring;
			}
			cJSON_ArrayForEach(pt, pts) {
				const cJSON *dn = cJSON_GetObjectItemCaseSensitive(pt, "dir");
				if (!cJSON_IsString(dn) || strcmp(dn->valuestring, base))
					continue;
				char *r = NULL;
				size_t rl = 0;
				FILE *f = open_memstream(&r, &rl);
				const char *sep = "";
				const cJSON *pr = cJSON_GetObjectItemCaseSensitive(pt, "preset");
				if (cJSON_IsString(pr) && *pr->valuestring) {
					fputs(pr->valuestring, f);
					sep = ", ";
				}
				const cJSON *kv;
				cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(pt, "set")) {
					if (!kv->string || strcmp(kv->string, "preset") == 0)
						continue;
					char *w = plot_key_words(kv->string);
					char *v = cJSON_IsString(kv) ? xstrdup(kv->valuestring)
								      : cJSON_PrintUnformatted(kv);
					fprintf(f, "%s%s %s", sep, w, v);
					sep = ", ";
					free(w);
					free(v);
				}
				const cJSON *sd = cJSON_GetObjectItemCaseSensitive(pt, "seed");
				if (seeds && cJSON_IsString(sd)) {
					fprintf(f, "%sseed %s", sep, sd->valuestring);
					sep = ", ";
				}
				fclose(f);
				if (*r)
					name = r;
				else
					free(r);
				break;
			}
			cJSON_Delete(j);
			free(sj);
		}
	}
	if (!name)
		name = xstrdup(base);
	free(d);
	return name;
}

/* Empirical CDFs of TTFT, TPOT and E2E (PANELS, or all three), one series per run directory. */
int plot_cdf(char **dirs, int n, const char *panels, struct fig *g, struct bs_err *err)
{
	static const char *const cols[][3] = {{"ttft", "ttft_ms", "TTFT (ms)"},
					      {"tpot", "tpot_ms", "TPOT (ms)"},
					      {"e2e", "e2e_ms", "E2E latency (ms)"}};
	size_t pk[3], np = 0;
	for (const char *p = panels ? panels : "ttft,tpot,e2e"; *p;) {
		size_t l = strcspn(p, ",");
		for (size_t k = 0; k < 3; k++)
			if (strlen(cols[k][0]) == l && !strncmp(cols[k][0], p, l))
				pk[np++] = k;
		p += l + (p[l] == ',');
	}
	if (plot_fig_labels_check(g, (size_t)n, "run directories", err))
		return -1;
	g->multi = np > 1;
	g->rows = 1;
	g->cols = (int)np;
	struct table *t = xcalloc((size_t)n, sizeof *t);
	char **names = xcalloc((size_t)n, sizeof *names);
	int rc = 0;
	for (int d = 0; d < n && !rc; d++) {
		char *p = xasprintf("%s/requests.csv", dirs[d]);
		rc = plot_table_read(p, &t[d], err);
		free(p);
		names[d] = run_name(dirs[d]);
	}
	for (size_t kk = 0; kk < np && !rc; kk++) {
		size_t k = pk[kk];
		plot_fig_labels(g, cols[k][2], "fraction of requests");
		fputs("  set logscale x\n", g->gp);
		plot_fig_axes(g);
		g->pan[g->npan - 1].logx = true;
		plot_fig_panel_name(g, cols[k][0][0] == 'e' ? "E2E" : k ? "TPOT" : "TTFT");
		plot_fig_range(g, 'y', 0, 0);
		plot_fig_range(g, 'y', 1, 1.02);
		fputs("  plot ", g->gp);
		for (int d = 0; d < n && !rc; d++) {
			long c;
			char *p = xasprintf("%s/requests.csv", dirs[d]);
			rc = plot_need_col(&t[d], p, cols[k][1], &c, err);
			/* An empty cell is a request without this value (unfinished; no TPOT with one
			 * output token); anything else must be a number > 0 (the x axis is log). */
			double *v = xmalloc(t[d].rows * sizeof *v);
			size_t m = 0;
			for (size_t r = 1; r < t[d].rows && !rc; r++) {
				int got = plot_cell_number(&t[d], r, (size_t)c, p, &v[m], err);
				if (got > 0 && v[m] <= 0)
					got = bs_errf(err, BS_EXIT_INPUT, p, (long)r + 1, cols[k][1],
						      "%.6g is not > 0 (the CDF's x axis is logarithmic)",
						      v[m]);
				rc = got < 0 ? -1 : 0;
				m += got > 0;
			}
			if (!rc && !m)
				rc = bs_errf(err, BS_EXIT_INPUT, p, 0, cols[k][1],
					     "no request has a value in this column (%s): nothing to "
					     "plot", k == 1 ? "no finished request with more than one "
					     "output token" : "no finished request");
			free(p);
			if (rc) {
				free(v);
				break;
			}
			qsort(v, m, sizeof *v, cmp_double);
			size_t b = plot_fig_block(g, names[d]);
			for (size_t i = 0; i < m; i++)
				fprintf(g->dat, "%.9g %.9g\n", v[i], (double)(i + 1) / (double)m);
			free(v);
			/* The step curve, its points at about 8 places along it (each series' own
			 * phase, so that coinciding curves show every shape), and the legend entry
			 * drawn as both. */
			size_t every = m > 8 ? m / 8 : 1, first = every * (size_t)d / (size_t)n;
			const char *sep = d ? ", \\\n       " : "";
			fprintf(g->gp, "%sdat index %zu using 1:2 with steps", sep, b);
			plot_fig_style(g, (size_t)d, (size_t)n, false);
			fprintf(g->gp, " notitle, \\\n       dat index %zu every %zu::%zu using 1:2 "
				       "with points", b, every, first);
			plot_fig_style(g, (size_t)d, (size_t)n, true);
			fputs(" notitle, \\\n       NaN with linespoints", g->gp);
			plot_fig_style(g, (size_t)d, (size_t)n, true);
			plot_fig_title(g, plot_fig_series_label(g, (size_t)d, names[d]));
		}
		fputs("\n  unset logscale x\n", g->gp);
	}
	for (int d = 0; d < n; d++) {
		plot_table_free(&t[d]);
		free(names[d]);
	}
	free(names);
	free(t);
	return rc;
}

/* Bucket usage: passes per bucket, prompt (query x batch size) and decode (blocks x batch
 * size), colour = log10(uses); warmed but unused buckets empty. */
int plot_heatmap(const char *dir, struct fig *g, struct bs_err *err)
{
	static const char *const names[] = {"phase", "bs", "query", "blocks", "uses"};
	struct table t;
	long c[5];
	if (plot_run_table(dir, "buckets.csv", names, 5, c, &t, err))
		return -1;
	long cph = c[0], cbs = c[1], cq = c[2], cb = c[3], cu = c[4];
	/* Every number the panels read, checked first: a row with an empty cell is left out,
	 * one that is not a finite number is an error; a panel without a bucket is an error
	 * (gnuplot would draw an empty panel). */
	char *path = xasprintf("%s/buckets.csv", dir);
	static const char *const ph[] = {"prompt", "decode"};
	size_t nph[2] = {0, 0};
	double used = 0;
	for (size_t r = 1; r < t.rows; r++)
		for (size_t k = 0; k < 2; k++) {
			if (strcmp(plot_cell(&t, r, (size_t)cph), ph[k]))
				continue;
			double v[3];
			int got = 1;
			const long need[] = {k ? cb : cq, cbs, cu};
			for (size_t i = 0; i < 3; i++) {
				int gi = plot_cell_number(&t, r, (size_t)need[i], path, &v[i], err);
				if (gi < 0) {
					free(path);
					plot_table_free(&t);
					return -1;
				}
				got &= gi;
			}
			nph[k] += (size_t)got;
			used += got ? v[2] : 0;
		}
	if (!nph[0] || !nph[1] || !(used > 0)) {
		if (!nph[0] && !nph[1])
			bs_errf(err, BS_EXIT_INPUT, path, 0, "phase", "no prompt or decode bucket: "
				"nothing to plot (heatmap draws those two phases; unified buckets are "
				"not drawn)");
		else if (!nph[0] || !nph[1])
			bs_errf(err, BS_EXIT_INPUT, path, 0, "phase", "no %s bucket: its panel "
				"would be empty", nph[0] ? "decode" : "prompt");
		else
			bs_errf(err, BS_EXIT_INPUT, path, 0, "uses", "no pass ran at any bucket: "
				"nothing to plot");
		free(path);
		plot_table_free(&t);
		return -1;
	}
	free(path);
	g->multi = true;
	g->rows = 1;
	g->cols = 2;
	for (size_t k = 0; k < 2; k++) {
		long cx = k ? cb : cq;
		/* Distinct x and batch-size values, ascending: the grid's axes. */
		double *xs = xmalloc(t.rows * sizeof *xs), *ys = xmalloc(t.rows * sizeof *ys);
		size_t nx = 0, ny = 0;
		for (size_t r = 1; r < t.rows; r++)
			if (!strcmp(plot_cell(&t, r, (size_t)cph), ph[k]) &&
			    plot_number(plot_cell(&t, r, (size_t)cx), &xs[nx]) &&
			    plot_number(plot_cell(&t, r, (size_t)cbs), &ys[ny]))
				nx++, ny++;
		nx = sorted_distinct(xs, nx);
		ny = sorted_distinct(ys, ny);
		double *u = xcalloc(nx * ny + 1, sizeof *u);
		for (size_t r = 1; r < t.rows; r++) {
			double x, y, n;
			if (strcmp(plot_cell(&t, r, (size_t)cph), ph[k]) ||
			    !plot_number(plot_cell(&t, r, (size_t)cx), &x) ||
			    !plot_number(plot_cell(&t, r, (size_t)cbs), &y) || !plot_number(plot_cell(&t, r, (size_t)cu), &n))
				continue;
			const double *i = bsearch(&x, xs, nx, sizeof *xs, cmp_double);
			const double *j = bsearch(&y, ys, ny, sizeof *ys, cmp_double);
			u[(size_t)(j - ys) * nx + (size_t)(i - xs)] += n;
		}
		size_t b = plot_fig_block(g, ph[k]);
		for (size_t j = 0; j < ny; j++) {
			for (size_t i = 0; i < nx; i++) {
				if (u[j * nx + i] > 0)
					fprintf(g->dat, "%zu %zu %.6g\n", i, j, log10(u[j * nx + i]));
				else
					fprintf(g->dat, "%zu %zu NaN\n", i, j);
			}
			fputc('\n', g->dat);
		}
		free(u);
		/* Tick labels: the bucket values, thinned to at most 12; every other bucket gets a
		 * minor tick without a label, so that no column seems to carry its neighbour's. */
		fprintf(g->gp, "  set title \"%s buckets\"\n  set xlabel \"%s\"\n"
			       "  set ylabel \"batch size (sequences)\"\n  set cblabel \"log10 passes\"\n"
			       "  set xrange [-0.5:%zu.5]\n  set yrange [-0.5:%zu.5]\n  set xtics (",
			ph[k], k ? "KV blocks of the bucket" : "query tokens of the bucket",
			nx ? nx - 1 : 0, ny ? ny - 1 : 0);
		size_t sx = nx > 12 ? (nx + 11) / 12 : 1, sy = ny > 12 ? (ny + 11) / 12 : 1;
		for (size_t i = 0; i < nx; i++)
			if (i % sx)
				fprintf(g->gp, ", \"\" %zu 1", i);
			else
				fprintf(g->gp, "%s\"%.0f\" %zu", i ? ", " : "", xs[i], i);
		fputs(") rotate by 90 right\n  set ytics (", g->gp);
		for (size_t j = 0; j < ny; j++)
			if (j % sy)
				fprintf(g->gp, ", \"\" %zu 1", j);
			else
				fprintf(g->gp, "%s\"%.0f\" %zu", j ? ", " : "", ys[j], j);
		fprintf(g->gp, ")\n  unset key\n  unset grid\n  set style fill solid 1.0 noborder\n"
			       "  plot dat index %zu using 1:2:(0.5):(0.5):3 with boxxyerror fc palette\n"
			       "  set grid\n  unset title\n", b);
		free(xs);
		free(ys);
	}
	plot_table_free(&t);
	return 0;
}

/* The monitor's timeline: queues and batch, KV use, step latency. */
int plot_timeline(const char *dir, struct fig *g, struct bs_err *err)
{
	static const char *const cols[] = {"time_s", "waiting", "running", "transferring",
					   "kv_utilization", "batch_latency_ms"};
	struct table t;
	long c[6];
	if (plot_run_table(dir, "monitor.csv", cols, 6, c, &t, err))
		return -1;
	/* Numbers only (an empty cell is written as NaN, a gap); two samples at least: one, at
	 * time 0, spans no time to draw. */
	char *path = xasprintf("%s/monitor.csv", dir);
	int rc = 0;
	for (size_t r = 1; r < t.rows && !rc; r++)
		for (size_t i = 0; i < 6 && !rc; i++) {
			double v;
			rc = plot_cell_number(&t, r, (size_t)c[i], path, &v, err) < 0 ? -1 : 0;
		}
	if (!rc && t.rows < 3)
		rc = bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "%s: nothing to plot over time "
			     "(monitor.interval_s sets the sampling interval)", t.rows < 2
			     ? "no sample" : "one sample only");
	free(path);
	if (rc) {
		plot_table_free(&t);
		return -1;
	}
	g->multi = true;
	g->wide = true;
	g->rows = 3;
	g->cols = 1;
	/* The user's x label and legend (the first panel's: the others have none). */
	plot_fig_labels(g, "simulated time (s)", NULL);
	fputs("  set ylabel \"requests\"\n  set key noopaque nobox\n", g->gp);
	plot_fig_axes(g);
	g->pan[g->npan - 1].fixed_key = "above";
	g->pan[g->npan - 1].ycols = 3;
	size_t b = plot_fig_block(g, "monitor: time_s waiting running transferring kv_utilization "
			     "batch_latency_ms");
	for (size_t r = 1; r < t.rows; r++) {
		for (size_t i = 0; i < 6; i++) {
			const char *v = plot_cell(&t, r, (size_t)c[i]);
			fprintf(g->dat, "%s%s", i ? " " : "", *v ? v : "NaN");
		}
		fputc('\n', g->dat);
	}
	plot_table_free(&t);
	fprintf(g->gp, "  plot dat index %zu using 1:2 with steps", b);
	plot_fig_style(g, 0, 3, false);
	plot_fig_title(g, "waiting");
	fprintf(g->gp, ", '' index %zu using 1:3 with steps", b);
	plot_fig_style(g, 1, 3, false);
	plot_fig_title(g, "running (batch)");
	fprintf(g->gp, ", '' index %zu using 1:4 with steps", b);
	plot_fig_style(g, 2, 3, false);
	plot_fig_title(g, "KV transfer");
	fprintf(g->gp, "\n  set ylabel \"KV cache in use (fraction)\"\n  set yrange [0:*]\n"
		"  unset key\n  plot dat index %zu using 1:5 with steps lt 4 notitle\n  set yrange [*:*]\n"
		"  set ylabel \"step latency (ms)\"\n"
		"  plot dat index %zu using 1:6 with steps lt 5 notitle\n", b, b);
	return 0;
}

/* Pipeline bubbles: each lane's passes as bars over time; idle gaps are the bubbles. */
int plot_bubbles(const char *dir, double window, struct fig *g, struct bs_err *err)
{
	char *p = xasprintf("%s/summary.json", dir);
	cJSON *j = read_json(p, err);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j, "metrics"), "pipeline_stages");
	int stages = cJSON_IsRaw(st) ? atoi(st->valuestring) : cJSON_IsNumber(st) ? st->valueint : 0;
	cJSON_Delete(j);
	if (!err->code && stages < 2)
		bs_errf(err, BS_EXIT_INPUT, p, 0, "pipeline_stages",
			"this run has no pipeline (cluster.pp = 1), so no bubbles to show: run "
			"with --set cluster.pp=2 or more");
	free(p);
	if (err->code)
		return -1;
	static const char *const names[] = {"start_s", "end_s", "instance"};
	struct table t;
	long c[3];
	if (plot_run_table(dir, "batches.csv", names, 3, c, &t, err))
		return -1;
	long cs = c[0], ce = c[1], ci = c[2];
	double t0 = NAN, t1;
	int lanes = 0;
	size_t lane0 = 0;
	/* A row with an empty cell is left out; a cell that is not a finite number, or an
	 * instance that is not a lane number, is an error. */
	char *path = xasprintf("%s/batches.csv", dir);
	for (size_t r = 1; r < t.rows; r++) {
		double s, e, in;
		int gs = plot_cell_number(&t, r, (size_t)cs, path, &s, err);
		int ge = gs < 0 ? -1 : plot_cell_number(&t, r, (size_t)ce, path, &e, err);
		int gi = ge < 0 ? -1 : plot_cell_number(&t, r, (size_t)ci, path, &in, err);
		if (gi > 0 && (in < 0 || in > 65535 || in != floor(in)))
			gi = bs_errf(err, BS_EXIT_INPUT, path, (long)r + 1, "instance",
				     "'%s' is not a lane number", plot_cell(&t, r, (size_t)ci));
		if (gs < 0 || ge < 0 || gi < 0) {
			free(path);
			plot_table_free(&t);
			return -1;
		}
		if (!gs || !ge || !gi)
			continue;
		if (isnan(t0))
			t0 = s;
		if ((int)in + 1 > lanes)
			lanes = (int)in + 1;
		if (in == 0 && ++lane0 == 40 && window <= 0)
			window = e - t0;
	}
	if (!lanes) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "no pass: nothing to plot");
		free(path);
		plot_table_free(&t);
		return -1;
	}
	free(path);
	if (window <= 0)
		window = 1;
	t1 = t0 + window;
	g->rows = g->cols = 1;
	double *busy = xcalloc((size_t)lanes + 1, sizeof *busy);
	size_t b = plot_fig_block(g, "passes");
	for (size_t r = 1; r < t.rows; r++) {
		double s, e, in;
		if (!plot_number(plot_cell(&t, r, (size_t)cs), &s) || !plot_number(plot_cell(&t, r, (size_t)ce), &e) ||
		    !plot_number(plot_cell(&t, r, (size_t)ci), &in) || s >= t1)
			continue;
		e = e < t1 ? e : t1;
		busy[(int)in] += e - s;
		fprintf(g->dat, "%.9g %.9g %d\n", (s - t0) * 1e3, (e - t0) * 1e3, (int)in);
	}
	plot_table_free(&t);
	plot_fig_labels(g, "time from the first pass (ms)", "lane (instance x pipeline stage)");
	fprintf(g->gp, "  set yrange [-0.6:%d.6]\n"
		       "  set xrange [0:%.6g]\n  unset key\n  set style fill solid 0.9 noborder\n"
		       "  set ytics (", lanes - 1, window * 1e3);
	/* Each lane's idle share of the window, the bubbles, in its tic label. */
	for (int l = 0; l < lanes; l++)
		fprintf(g->gp, "%s\"%d: %.0f%%%% idle\" %d", l ? ", " : "", l,
			100 * (1 - busy[l] / window), l);
	fputs(")\n", g->gp);
	fprintf(g->gp, "  plot dat index %zu using (($1+$2)/2):3:(($2-$1)/2):(0.35) with "
		       "boxxyerror lc rgb \"%s\"\n", b, okabe_ito[0]);
	free(busy);
	return 0;
}

