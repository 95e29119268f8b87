/*
 * plot_sweep: the figures of a sweep CSV (attainment, throughput, line, waste, compiles) and of a
 * capacity directory: rows grouped into series by the series column, the mean over the seeds of
 * each x (with --ci, its Student-t interval).  See plot_kinds.h and analysis/README.md
 * ("Figures").
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plot_kinds.h"

/* One x of a series: the y values of its rows (the seeds) and their sum. */
struct point {
	double x, sum;
	double *v;
	char **seed;                    /* the seed of each value (--baseline pairs them) */
	size_t cnt;
	size_t row;                     /* its first row in the table (the pooling check) */
};

struct series {
	char *name;
	struct point *p;
	size_t n;
};

static int point_cmp(const void *a, const void *b)
{
	double x = ((const struct point *)a)->x, y = ((const struct point *)b)->x;
	return (x > y) - (x < y);
}

/* The mean the plot draws: sum / count, as it always has. */
static double point_mean(const struct point *p)
{
	return p->sum / (double)p->cnt;
}

/* The category names of a categorical x axis. */
static void cats_free(char **cats, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(cats[k]);
	free(cats);
}

static void series_free(struct series *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].name);
		for (size_t k = 0; k < s[i].n; k++) {
			for (size_t j = 0; j < s[i].p[k].cnt; j++)
				free(s[i].p[k].seed[j]);
			free(s[i].p[k].seed);
			free(s[i].p[k].v);
		}
		free(s[i].p);
	}
	free(s);
}

#define MAX_SERIES_COLS 8

/* A row's series name: the values of the series columns, joined by ", "; a preset's or a
 * trace's value names itself, any other column's reads KEY=VALUE.  An empty cell (a point
 * that did not set the key: its default applied) reads "KEY default" ("no preset"). */
static char *series_name(const struct table *t, size_t r, const long *cs, size_t ncs)
{
	char *name = xstrdup("");
	for (size_t j = 0; j < ncs; j++) {
		const char *col = plot_cell(t, 0, (size_t)cs[j]), *v = plot_cell(t, r, (size_t)cs[j]);
		bool self = !strcmp(col, "preset") || !strcmp(col, "trace");
		char *words = self ? NULL : plot_key_words(col);
		char *part = *v ? (self ? xstrdup(v) : xasprintf("%s %s", words, v))
				: self ? xasprintf("no %s", col) : xasprintf("%s default", words);
		free(words);
		char *n2 = xasprintf("%s%s%s", name, j ? ", " : "", part);
		free(part);
		free(name);
		name = n2;
	}
	return name;
}

/* Groups a sweep CSV's successful rows into series (by the series columns SC, a comma list,
 * in order of first appearance) of (x, mean y over the rows with that x: the seeds), x
 * ascending.  Rows pooled into one point must differ in nothing but their seed: a
 * configuration column (any column before `seed`) other than x and the series that differs
 * between them is an error naming both rows.  CATEGORICAL keeps x as text order (the x
 * value's first appearance) with x = 0, 1, ...; an empty category reads "default". */
static int sweep_series(const char *path, const char *xc, const char *yc, const char *sc,
			bool categorical, struct series **out, size_t *nout, char ***cats,
			size_t *ncat, struct bs_err *err)
{
	struct table t;
	if (plot_table_read(path, &t, err))
		return -1;
	long cx, cy, ce = plot_col_of(&t, "error"), cseed = plot_col_of(&t, "seed");
	long cs[MAX_SERIES_COLS];
	size_t ncs = 0;
	int rc = plot_need_col_list(&t, path, xc, &cx, err) ||
		 plot_need_col_list(&t, path, yc, &cy, err);
	if (!rc && sc) {
		char *l = xstrdup(sc);
		for (char *save = NULL, *w = strtok_r(l, ",", &save); w && !rc;
		     w = strtok_r(NULL, ",", &save)) {
			if (ncs == MAX_SERIES_COLS)
				rc = bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--series",
					     "at most %d columns", MAX_SERIES_COLS);
			else
				rc = plot_need_col_list(&t, path, w, &cs[ncs++], err);
		}
		free(l);
	}
	if (rc) {
		plot_table_free(&t);
		return -1;
	}
	struct series *s = NULL;
	size_t ns = 0;
	*cats = NULL;
	*ncat = 0;
	for (size_t r = 1; r < t.rows; r++) {
		if (ce >= 0 && *plot_cell(&t, r, (size_t)ce))
			continue;
		double x, y;
		const char *xs = plot_cell(&t, r, (size_t)cx);
		/* An empty y is a null metric: the row is left out; any other text must be a
		 * finite number. */
		int got = plot_cell_number(&t, r, (size_t)cy, path, &y, err);
		if (got < 0) {
			plot_table_free(&t);
			series_free(s, ns);
			cats_free(*cats, *ncat);
			*cats = NULL;
			*ncat = 0;
			return -1;
		}
		if (!got)
			continue;
		if (categorical) {
			const char *cat = *xs ? xs : "default";
			size_t k = 0;
			while (k < *ncat && strcmp((*cats)[k], cat))
				k++;
			if (k == *ncat) {
				*cats = xrealloc(*cats, (*ncat + 1) * sizeof **cats);
				(*cats)[(*ncat)++] = xstrdup(cat);
			}
			x = (double)k;
		} else if (!*xs && cx > cseed) {
			continue; /* a null metric on the x axis: the row is left out */
		} else if (!plot_number(xs, &x)) {
			/* The message first: XS lives in the table.  An empty configuration cell is a
			 * point that did not set the key: its default, which the CSV does not say. */
			bs_errf(err, BS_EXIT_INPUT, path, (long)r + 1, xc, *xs ? "x value '%s' is not a "
				"number" : "x value empty%s: the point did not set this key, so its "
				"default applied, which the CSV does not record (give every point a "
				"value)", xs);
			plot_table_free(&t);
			series_free(s, ns);
			return -1;
		}
		char *name = series_name(&t, r, cs, ncs);
		size_t i = 0;
		while (i < ns && strcmp(s[i].name, name))
			i++;
		if (i == ns) {
			s = xrealloc(s, (ns + 1) * sizeof *s);
			memset(&s[ns], 0, sizeof *s);
			s[ns++].name = name;
		} else {
			free(name);
		}
		size_t k = 0;
		while (k < s[i].n && s[i].p[k].x != x)
			k++;
		if (k == s[i].n) {
			s[i].p = xrealloc(s[i].p, (k + 1) * sizeof *s[i].p);
			s[i].p[k] = (struct point){x, 0, NULL, NULL, 0, r};
			s[i].n++;
		}
		struct point *pt = &s[i].p[k];
		for (long c = 0; c < cseed; c++) {
			bool own = c == cx;
			for (size_t j = 0; j < ncs; j++)
				own |= c == cs[j];
			const char *a = plot_cell(&t, pt->row, (size_t)c), *b = plot_cell(&t, r, (size_t)c);
			if (own || !strcmp(a, b))
				continue;
			bs_errf(err, BS_EXIT_INPUT, path, (long)r + 1, plot_cell(&t, 0, (size_t)c),
				"'%s' here, '%s' on line %zu: the two rows have the same x and series, "
				"and would be averaged as seeds of one point; name the column in --series "
				"(e.g. --series %s%s%s)", b, a, pt->row + 1, sc ? sc : "",
				sc ? "," : "", plot_cell(&t, 0, (size_t)c));
			plot_table_free(&t);
			series_free(s, ns);
			cats_free(*cats, *ncat);
			*cats = NULL;
			*ncat = 0;
			return -1;
		}
		pt->v = xrealloc(pt->v, (pt->cnt + 1) * sizeof *pt->v);
		pt->seed = xrealloc(pt->seed, (pt->cnt + 1) * sizeof *pt->seed);
		pt->seed[pt->cnt] = xstrdup(cseed >= 0 ? plot_cell(&t, r, (size_t)cseed) : "");
		pt->v[pt->cnt++] = y;
		pt->sum += y;
	}
	plot_table_free(&t);
	/* x ascending (each x once in a series). */
	for (size_t i = 0; i < ns; i++)
		qsort(s[i].p, s[i].n, sizeof *s[i].p, point_cmp);
	if (!ns) {
		cats_free(*cats, *ncat);
		*cats = NULL;
		*ncat = 0;
		return bs_errf(err, BS_EXIT_INPUT, path, 0, yc,
			       "no successful row with a number in this column to plot");
	}
	*out = s;
	*nout = ns;
	return 0;
}

/* The default series column: preset when the sweep varies it, else strategy when it varies
 * (the CSV of `buckets --advise --budgets`, whose rows of different strategies would otherwise
 * be joined into one line). */
static const char *default_series(const char *path)
{
	static const char *const cols[] = {"preset", "strategy"};
	struct table t;
	struct bs_err e = {0};
	if (plot_table_read(path, &t, &e))
		return NULL;
	const char *sc = NULL;
	for (size_t i = 0; !sc && i < sizeof cols / sizeof *cols; i++) {
		long c = plot_col_of(&t, cols[i]);
		bool varies = false;
		for (size_t r = 2; c >= 0 && r < t.rows; r++)
			varies |= strcmp(plot_cell(&t, r, (size_t)c), plot_cell(&t, 1, (size_t)c)) != 0;
		sc = varies ? cols[i] : NULL;
	}
	plot_table_free(&t);
	return sc;
}

/* The values of P and of the baseline's point B (same x) of the seeds both have, differences
 * P - B into D; their number. */
static size_t paired(const struct point *p, const struct point *b, double *d)
{
	size_t n = 0;
	for (size_t i = 0; i < p->cnt; i++)
		for (size_t j = 0; j < b->cnt; j++)
			if (!strcmp(p->seed[i], b->seed[j])) {
				d[n++] = p->v[i] - b->v[j];
				break;
			}
	return n;
}

/* Lines and points, one series per block; extra: lines drawn before the plot command; Y0, Y1:
 * the y range's ends the kind fixes (NaN: the data's).  With CI (a level), each point's
 * Student-t interval over its seeds: the block's columns are x, mean, lower and upper bound
 * (NaN with one seed: no bar), seeds; drawn as error bars.  With BASELINE (a series' name, and
 * CI), each other series' difference to it: at each x the mean of the paired differences over
 * the seeds both have, with its paired-t interval (the block's columns as above, n the pairs). */
static int plot_lines(struct fig *g, const char *path, struct series *s, size_t ns,
		      const char *xc, const char *yc, double ci, const char *baseline, double y0,
		      double y1, const char *extra, char **suffix, struct bs_err *err)
{
	if (plot_fig_labels_check(g, ns, "series", err))
		return -1;
	size_t bi = ns;
	if (baseline) {
		for (size_t i = 0; i < ns; i++)
			if (!strcmp(s[i].name, baseline))
				bi = i;
		if (bi == ns) {
			char *list = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&list, &len);
			for (size_t i = 0; i < ns; i++)
				fprintf(f, "%s'%s'", i ? ", " : "", s[i].name);
			fclose(f);
			bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--baseline", "no series named '%s' (the "
				"series: %s)", baseline, list);
			free(list);
			return -1;
		}
		if (ns < 2)
			return bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--baseline", "one series only: "
				       "nothing to compare with '%s'", baseline);
	}
	for (size_t i = 0; i < ns; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			char *what = xasprintf("series '%s', x = %.6g", s[i].name, s[i].p[k].x);
			int rc = plot_log_check(g, 'x', s[i].p[k].x, path, xc, what, err) ||
				 (!baseline && plot_log_check(g, 'y', point_mean(&s[i].p[k]), path,
							      yc, what, err));
			free(what);
			if (rc)
				return -1;
		}
	char *xl = plot_label(xc), *yl = plot_label(yc);
	if (baseline) {
		char *d = xasprintf("%s, difference to %s", yl,
				    plot_fig_series_label(g, bi, s[bi].name));
		free(yl);
		yl = d;
	}
	plot_fig_labels(g, xl, yl);
	/* x values spread over ten thousand and more (e.g. buckets warmed) have tick labels of
	 * five and six digits that run into each other at a column's width: written with an SI
	 * prefix instead (20k). */
	double xmin = INFINITY, xmax = -INFINITY;
	for (size_t i = 0; i < ns; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			xmin = fmin(xmin, s[i].p[k].x);
			xmax = fmax(xmax, s[i].p[k].x);
		}
	if (!g->ax.logx && xmax - xmin >= 1e4)
		fputs("  set format x \"%.0s%c\"\n", g->gp);
	if (extra)
		fputs(extra, g->gp);
	if (baseline)
		fputs("  set arrow from graph 0, first 0 to graph 1, first 0 nohead dt 2 lc rgb "
		      "\"#555555\"\n", g->gp);
	plot_fig_axes(g);
	if (!isnan(y0))
		plot_fig_range(g, 'y', 0, y0);
	if (!isnan(y1))
		plot_fig_range(g, 'y', 1, y1);
	g->pan[g->npan - 1].ycols = ci > 0 ? 3 : 1;
	g->pan[g->npan - 1].yzero = baseline != NULL;
	fputs("  plot ", g->gp);
	size_t drawn = 0, nd = baseline ? ns - 1 : ns;
	for (size_t i = 0; i < ns; i++) {
		if (i == bi)
			continue;
		size_t b = plot_fig_block(g, s[i].name);
		double *d = NULL;
		for (size_t k = 0; k < s[i].n; k++) {
			const struct point *pt = &s[i].p[k];
			double m, h;
			size_t n;
			if (baseline) {
				const struct point *q = NULL;
				for (size_t j = 0; j < s[bi].n; j++)
					if (s[bi].p[j].x == pt->x)
						q = &s[bi].p[j];
				if (!q)
					continue;
				d = xrealloc(d, pt->cnt * sizeof *d);
				n = paired(pt, q, d);
				if (!n)
					continue;
				m = 0;
				for (size_t j = 0; j < n; j++)
					m += d[j];
				m /= (double)n;
				h = plot_ci_halfwidth(ci, d, n, m);
			} else {
				m = point_mean(pt);
				n = pt->cnt;
				h = ci > 0 ? plot_ci_halfwidth(ci, pt->v, pt->cnt, m) : NAN;
			}
			fprintf(g->dat, "%.17g %.17g", pt->x, m);
			if (ci > 0) {
				if (isnan(h))
					fprintf(g->dat, " NaN NaN %zu", n);
				else
					fprintf(g->dat, " %.17g %.17g %zu", m - h, m + h, n);
			}
			fputc('\n', g->dat);
		}
		free(d);
		fprintf(g->gp, "%sdat index %zu using 1:2 with linespoints", drawn ? ", \\\n       " : "",
			b);
		plot_fig_style(g, drawn, nd, true);
		const char *name = plot_fig_series_label(g, i, *s[i].name ? s[i].name : yc);
		char *t = xasprintf("%s%s", name, suffix && suffix[i] ? suffix[i] : "");
		plot_fig_title(g, t);
		free(t);
		if (ci > 0) {
			fprintf(g->gp, ", \\\n       dat index %zu using 1:2:3:4 with yerrorbars lc rgb "
				       "\"%s\" lw %.3g dt 1 pt 0 notitle", b,
				okabe_ito[drawn % OKABE_ITO_N], plot_style_lw(drawn, nd));
		}
		drawn++;
	}
	fputc('\n', g->gp);
	free(xl);
	free(yl);
	return 0;
}

static bool finite_number(const cJSON *v)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble);
}

/* DIR/capacity.json, or NULL with ERR. */
/* Whether capacity.json J has what the plots read (each system's name, capacity and first
 * seed's curve of rate and attainment, the target); else ERR names the first field missing. */
static bool capacity_json_ok(const cJSON *j, const char *path, struct bs_err *err)
{
	const cJSON *sys = cJSON_GetObjectItemCaseSensitive(j, "systems");
	if (!cJSON_IsArray(sys))
		return bs_errf(err, BS_EXIT_INPUT, path, 0, "systems", "not a capacity.json"), false;
	if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "target")))
		return bs_errf(err, BS_EXIT_INPUT, path, 0, "target", "expected a number"), false;
	if (!cJSON_GetArraySize(sys))
		return bs_errf(err, BS_EXIT_INPUT, path, 0, "systems", "no system: nothing to plot"),
		       false;
	int i = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, sys) {
		const cJSON *seed0 =
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "seeds"), 0);
		const cJSON *curve = cJSON_GetObjectItemCaseSensitive(seed0, "curve");
		const char *bad = !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s, "system"))
					  ? "system"
				  : !finite_number(cJSON_GetObjectItemCaseSensitive(s, "capacity_req_s"))
					  ? "capacity_req_s"
				  : !cJSON_IsArray(curve) || !cJSON_GetArraySize(curve)
					  ? "seeds[0].curve"
					  : NULL;
		const cJSON *pt;
		cJSON_ArrayForEach(pt, curve) {
			if (bad)
				break;
			if (!finite_number(cJSON_GetObjectItemCaseSensitive(pt, "rate")))
				bad = "seeds[0].curve[].rate";
			else if (!finite_number(cJSON_GetObjectItemCaseSensitive(pt, "slo_attainment")))
				bad = "seeds[0].curve[].slo_attainment";
		}
		if (bad) {
			char field[96];
			snprintf(field, sizeof field, "systems[%d].%s", i, bad);
			return bs_errf(err, BS_EXIT_INPUT, path, 0, field, "missing or not of its type "
				       "(a finite number; a non-empty list)"), false;
		}
		i++;
	}
	return true;
}

static cJSON *read_capacity(const char *dir, struct bs_err *err)
{
	char *p = xasprintf("%s/capacity.json", dir);
	cJSON *j = read_json(p, err);
	if (j)
		capacity_json_ok(j, p, err);
	free(p);
	if (err->code) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

int plot_sweep_kind(const char *kind, const char *path, const struct sopts *o,
			   struct fig *g, struct bs_err *err)
{
	const char *x = o->x, *y = o->y;
	if (!strcmp(kind, "attainment")) {
		x = x ? x : "workload.rate";
		y = y ? y : "slo_attainment";
	} else if (!strcmp(kind, "throughput")) {
		x = x ? x : "server.max_num_seqs";
		y = y ? y : "output_throughput";
	} else if (!strcmp(kind, "line")) {
		/* --x and --y given: checked by plot_main. */
	} else { /* waste */
		x = x ? x : "compiles_warmup";
		y = y ? y : "padding_waste_ratio";
	}
	const char *sc = o->series ? o->series : default_series(path);
	struct series *s;
	size_t ns;
	char **cats;
	size_t ncat;
	if (sweep_series(path, x, y, sc, false, &s, &ns, &cats, &ncat, err))
		return -1;
	g->rows = g->cols = 1;
	char *extra = NULL;
	double y0 = NAN, y1 = NAN;
	/* A log axis cannot start at 0: the range's lower end is the data's then; differences to a
	 * baseline have their own range. */
	if (!strcmp(kind, "attainment")) {
		extra = o->baseline ? xstrdup("") : xasprintf(
			"  set arrow from graph 0, first %.6g to graph 1, first %.6g nohead dt 2 lc "
			"rgb \"#555555\"\n  set label \"target %.6g\" at graph 0.02, first %.6g left "
			"offset 0,0.6\n", o->target, o->target, o->target, o->target);
		if (!o->baseline) {
			y0 = g->ax.logy ? NAN : 0;
			y1 = 1.05;
		}
	} else {
		extra = xstrdup("");
		if (!strcmp(kind, "waste") && !g->ax.logy && !o->baseline)
			y0 = 0;
	}
	/* --capacity DIR: each system's capacity as a vertical line in its series' colour. */
	char **suffix = NULL;
	if (o->capacity) {
		cJSON *j = read_capacity(o->capacity, err);
		if (!j) {
			free(extra);
			series_free(s, ns);
			return -1;
		}
		suffix = xcalloc(ns, sizeof *suffix);
		size_t nfound = 0;
		for (size_t i = 0; i < ns; i++) {
			const cJSON *q;
			cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(j, "systems")) {
				if (strcmp(cJSON_GetObjectItemCaseSensitive(q, "system")->valuestring,
					   s[i].name))
					continue;
				double c = cJSON_GetObjectItemCaseSensitive(q, "capacity_req_s")->valuedouble;
				char *e2 = xasprintf("%s  set arrow from first %.9g, graph 0 to first "
						     "%.9g, graph 1 nohead lc rgb \"%s\" dt 3\n", extra,
						     c, c, okabe_ito[i % OKABE_ITO_N]);
				free(extra);
				extra = e2;
				suffix[i] = xasprintf(" (capacity %.3g req/s)", c);
				nfound++;
			}
		}
		cJSON_Delete(j);
		if (!nfound) {
			bs_errf(err, BS_EXIT_INPUT, o->capacity, 0, "--capacity",
				"no system of capacity.json is a series of the plot");
			for (size_t i = 0; i < ns; i++)
				free(suffix[i]);
			free(suffix);
			free(extra);
			series_free(s, ns);
			return -1;
		}
	}
	int rc = plot_lines(g, path, s, ns, x, y, o->ci, o->baseline, y0, y1, extra, suffix, err);
	for (size_t i = 0; suffix && i < ns; i++)
		free(suffix[i]);
	free(suffix);
	free(extra);
	series_free(s, ns);
	return rc;
}

/* attainment from `capacity -o DIR`: the curve of each system (first seed) and its capacity. */
int plot_capacity(const char *dir, struct sopts *o, struct fig *g, struct bs_err *err)
{
	cJSON *j = read_capacity(dir, err);
	if (!j)
		return -1;
	const cJSON *sys = cJSON_GetObjectItemCaseSensitive(j, "systems");
	if (!o->target_given)
		o->target = cJSON_GetObjectItemCaseSensitive(j, "target")->valuedouble;
	g->rows = g->cols = 1;
	/* With a log scale, the probes must be > 0. */
	char *path = xasprintf("%s/capacity.json", dir);
	const cJSON *s;
	cJSON_ArrayForEach(s, sys) {
		const char *name = cJSON_GetObjectItemCaseSensitive(s, "system")->valuestring;
		const cJSON *seed0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "seeds"), 0);
		const cJSON *pt;
		cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(seed0, "curve")) {
			double r = cJSON_GetObjectItemCaseSensitive(pt, "rate")->valuedouble;
			char *what = xasprintf("system '%s', rate %.6g", name, r);
			int rc = plot_log_check(g, 'x', r, path, "rate", what, err) ||
				 plot_log_check(g, 'y', cJSON_GetObjectItemCaseSensitive(pt,
					"slo_attainment")->valuedouble, path, "slo_attainment", what, err);
			free(what);
			if (rc) {
				free(path);
				cJSON_Delete(j);
				return -1;
			}
		}
	}
	free(path);
	size_t nsys = (size_t)cJSON_GetArraySize(sys);
	if (plot_fig_labels_check(g, nsys, "systems", err)) {
		cJSON_Delete(j);
		return -1;
	}
	plot_fig_labels(g, "request rate (req/s)", "SLO attainment (fraction)");
	fprintf(g->gp, "  set arrow from graph 0, first %.6g to graph 1, first %.6g nohead dt 2 lc "
		       "rgb \"#555555\"\n", o->target, o->target);
	/* Capacities as vertical lines in their series' colour, and the x range to show: up to
	 * twice the largest capacity (the curve's doubling probes go far beyond). */
	double xmax = 0;
	size_t i = 0;
	cJSON_ArrayForEach(s, sys) {
		double c = cJSON_GetObjectItemCaseSensitive(s, "capacity_req_s")->valuedouble;
		fprintf(g->gp, "  set arrow from first %.9g, graph 0 to first %.9g, graph 1 nohead "
			       "lc rgb \"%s\" dt 3\n", c, c, okabe_ito[i % OKABE_ITO_N]);
		xmax = c > xmax ? c : xmax;
		i++;
	}
	plot_fig_axes(g);
	if (!g->ax.logx)
		plot_fig_range(g, 'x', 0, 0);
	plot_fig_range(g, 'x', 1, 1.6 * xmax);
	if (!g->ax.logy)
		plot_fig_range(g, 'y', 0, 0);
	plot_fig_range(g, 'y', 1, 1.05);
	fputs("  plot ", g->gp);
	i = 0;
	cJSON_ArrayForEach(s, sys) {
		const char *name = cJSON_GetObjectItemCaseSensitive(s, "system")->valuestring;
		double c = cJSON_GetObjectItemCaseSensitive(s, "capacity_req_s")->valuedouble;
		const cJSON *seed0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "seeds"), 0);
		const cJSON *pt;
		size_t b = plot_fig_block(g, name);
		cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(seed0, "curve"))
			fprintf(g->dat, "%.17g %.17g\n",
				cJSON_GetObjectItemCaseSensitive(pt, "rate")->valuedouble,
				cJSON_GetObjectItemCaseSensitive(pt, "slo_attainment")->valuedouble);
		char *t = xasprintf("%s (capacity %.3g req/s)", plot_fig_series_label(g, i, name), c);
		fprintf(g->gp, "%sdat index %zu using 1:2 with linespoints", i ? ", \\\n       " : "",
			b);
		plot_fig_style(g, i, nsys, true);
		plot_fig_title(g, t);
		free(t);
		i++;
	}
	fputc('\n', g->gp);
	cJSON_Delete(j);
	return 0;
}

/* Bars of a categorical sweep column: per strategy, the graphs compiled (at warm-up, and at run
 * time stacked on them) and the compile time (warm-up, run time stacked), one bar per series. */
int plot_compiles(const char *path, const struct sopts *o, struct fig *g,
			 struct bs_err *err)
{
	const char *x = o->x ? o->x : "bucketing.strategy";
	static const char *const ys[][2] = {{"compiles_warmup", "compiles_runtime"},
					    {"warmup_s", "runtime_compile_s"}};
	static const char *const ylab[] = {"graphs compiled", "compile time (s)"};
	g->multi = true;
	g->rows = 1;
	g->cols = 2;
	const char *sc = o->series ? o->series : default_series(path);
	for (size_t p = 0; p < 2; p++) {
		struct series *s[2];
		size_t ns[2];
		char **cats[2];
		size_t ncat[2];
		for (size_t q = 0; q < 2; q++)
			if (sweep_series(path, x, ys[p][q], sc, true, &s[q], &ns[q], &cats[q],
					 &ncat[q], err)) {
				if (q) {
					series_free(s[0], ns[0]);
					cats_free(cats[0], ncat[0]);
				}
				return -1;
			}
		int rc = plot_fig_labels_check(g, ns[0], "series", err);
		if (!rc && (ns[0] != ns[1] || ncat[0] != ncat[1]))
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, ys[p][1], "rows with a value in %s "
				     "but none in this column (or the reverse): the bars cannot be "
				     "stacked", ys[p][0]);
		if (rc) {
			for (size_t q = 0; q < 2; q++) {
				series_free(s[q], ns[q]);
				cats_free(cats[q], ncat[q]);
			}
			return -1;
		}
		size_t n = ns[0], nc = ncat[0];
		char *xl = plot_label(x);
		plot_fig_labels(g, xl, ylab[p]);
		free(xl);
		fprintf(g->gp, "  set xtics (");
		size_t maxc = 0;
		for (size_t k = 0; k < nc; k++) {
			fprintf(g->gp, "%s", k ? ", " : "");
			plot_gp_str(g->gp, cats[0][k]);
			fprintf(g->gp, " %zu", k);
			maxc = plot_text_len(cats[0][k]) > maxc ? plot_text_len(cats[0][k]) : maxc;
		}
		/* Category labels that would run into each other across the panel (each gets
		 * 1/NC of the graph's width, about 22 characters) are rotated. */
		bool rot = (double)(nc * (maxc + 1)) > 20;
		double w = 0.8 / (double)n;
		fprintf(g->gp, ")%s\n  set style fill solid 0.85 border -1\n  set boxwidth %.4g\n",
			rot ? " rotate by 35 right" : "", w);
		plot_fig_axes(g);
		plot_fig_range(g, 'y', 0, g->ax.logy ? 0.5 : 0);
		plot_fig_range(g, 'x', 0, -0.6);
		plot_fig_range(g, 'x', 1, (double)nc - 0.4);
		g->pan[g->npan - 1].barw = w;
		g->pan[g->npan - 1].bmargin = rot ? 0.6 * (double)maxc * PLOT_CHAR_W_IN / PLOT_CHAR_H_IN + 0.5 : 0;
		plot_fig_panel_name(g, ylab[p]);
		fputs("  plot ", g->gp);
		for (size_t i = 0; i < n; i++) {
			const char *name = plot_fig_series_label(g, i, s[0][i].name);
			/* The run-time part: a bar to warm-up + run time, drawn first, hatched; the
			 * warm-up bar over its lower part. */
			for (int part = 1; part >= 0; part--) {
				char *bn = xasprintf("%s%s%s", s[0][i].name, *s[0][i].name ? ", " : "",
						     part ? "run time" : "warm-up");
				size_t b = plot_fig_block(g, bn);
				free(bn);
				for (size_t k = 0; k < s[0][i].n; k++) {
					double v = point_mean(&s[0][i].p[k]);
					for (size_t j = 0; part && j < s[1][i].n; j++)
						if (s[1][i].p[j].x == s[0][i].p[k].x)
							v += point_mean(&s[1][i].p[j]);
					fprintf(g->dat, "%.17g %.17g\n", s[0][i].p[k].x +
						w * ((double)i - (double)(n - 1) / 2), v);
				}
				fprintf(g->gp, "%sdat index %zu using 1:2 with boxes lc rgb \"%s\" %s",
					i || part == 0 ? ", \\\n       " : "", b,
					okabe_ito[i % OKABE_ITO_N],
					part ? "fs pattern 4 border -1" : "fs solid 0.85 border -1");
				char *t = xasprintf("%s%s%s", n > 1 ? name : "", n > 1 ? ", " : "",
						    part ? "run time" : "warm-up");
				plot_fig_title(g, t);
				free(t);
			}
		}
		fputc('\n', g->gp);
		for (size_t q = 0; q < 2; q++) {
			series_free(s[q], ns[q]);
			cats_free(cats[q], ncat[q]);
		}
	}
	return 0;
}
