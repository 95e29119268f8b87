/*
 * cmd_plot: `bucketsim plot KIND INPUT... -o OUT`, figures for papers rendered by gnuplot.
 *
 * Every figure is two files written first, OUT.dat (the plotted numbers, one gnuplot data block
 * per series, blocks separated by two blank lines) and OUT.gp (the script, which reads OUT.dat
 * by its base name), then gnuplot, run in OUT's directory, renders OUT.pdf and OUT.svg (vector)
 * and OUT.png (web).  --script-only stops before gnuplot.  Kinds and their inputs are in
 * analysis/README.md ("Figures").
 *
 * Publication defaults: Okabe-Ito colour-blind-safe line colours with distinct point shapes and
 * dash patterns, viridis for heatmaps, axes labelled with units, legends, 10 pt fonts at a
 * 3.5 in column width (PDF/SVG) and 12 pt at 800 x 520 px (PNG).  The axis options (--logx,
 * --logy, --key, --xlabel, --ylabel) and --ci apply to the kinds of plot_main's table; any other
 * kind refuses them rather than ignore them (every option: the axis options, --x, --y,
 * --series, --target, --window, --capacity and --ci).
 */
#include <cjson/cJSON.h>
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/plot_fig.h"
#include "sim/commands.h"
#include "sim/config.h"

enum {
	OPT_OUT = 'o',
	OPT_X = CLI_OPT_FIRST_FREE,
	OPT_Y,
	OPT_SERIES,
	OPT_TARGET,
	OPT_SCRIPT_ONLY,
	OPT_TITLE,
	OPT_WINDOW,
	OPT_CAPACITY,
	OPT_LOGX,
	OPT_LOGY,
	OPT_KEY,
	OPT_XLABEL,
	OPT_YLABEL,
	OPT_CI,
};

static const struct cli_opt opts[] = {
	{"output", OPT_OUT, 1, "OUT", "write OUT.dat, OUT.gp, OUT.pdf, OUT.svg, OUT.png (required)",
	 "Output"},
	{"x", OPT_X, 1, "COLUMN", "sweep column on the x axis (default: per kind; line: required); refused by run "
	 "plots and a capacity directory",
	 "Sweep plots"},
	{"y", OPT_Y, 1, "COLUMN", "sweep column on the y axis (default: per kind; line: required); refused by "
	 "compiles, run plots and a capacity directory",
	 "Sweep plots"},
	{"series", OPT_SERIES, 1, "COLUMN",
	 "sweep column naming the series (default: preset when it varies, else none); "
	 "refused by run plots and a capacity directory",
	 "Sweep plots"},
	{"target", OPT_TARGET, 1, "A", "attainment: the target line (default: capacity.json's, "
	 "else 0.9); refused by the other kinds", "Sweep plots"},
	{"capacity", OPT_CAPACITY, 1, "DIR", "attainment of a sweep: mark the capacities of "
	 "`capacity -o DIR` whose systems are series", "Sweep plots"},
	{"ci", OPT_CI, 1, "LEVEL", "attainment (of a sweep CSV), throughput, waste, line: Student-t confidence "
	 "interval of the mean over the seeds at LEVEL (0 < LEVEL < 1, e.g. 0.95) as error bars, bounds in OUT.dat; "
	 "none for a point of one seed", "Sweep plots"},
	{"window", OPT_WINDOW, 1, "S", "bubbles: seconds of the run shown from the first pass "
	 "(default: the first 40 passes of lane 0); refused by the other kinds", "Run plots"},
	{"title", OPT_TITLE, 1, "TEXT", "figure title (default: none)", "Output"},
	{"xlabel", OPT_XLABEL, 1, "TEXT", "x axis label (default: the column's name and unit); "
	 "refused by cdf and heatmap (panels of different x)", "Axes"},
	{"ylabel", OPT_YLABEL, 1, "TEXT", "y axis label (default: the column's name and unit); "
	 "refused by compiles, heatmap and timeline (panels of different y)", "Axes"},
	{"logx", OPT_LOGX, 0, NULL, "log scale on x (every x > 0, else an error naming the "
	 "column); cdf's x is log already; refused by compiles, heatmap, timeline, bubbles",
	 "Axes"},
	{"logy", OPT_LOGY, 0, NULL, "log scale on y (every plotted y > 0, else an error naming "
	 "the column); refused by compiles, cdf, heatmap, timeline, bubbles", "Axes"},
	{"key", OPT_KEY, 1, "POS", "legend position: top left, top center, top right, bottom "
	 "left, bottom center, bottom right, outside, above, below, off (default: per kind); "
	 "refused by heatmap and bubbles (no legend)", "Axes"},
	{"script-only", OPT_SCRIPT_ONLY, 0, NULL, "write OUT.dat and OUT.gp, do not run gnuplot",
	 "Output"},
	CLI_HELP_OPT,
	{0},
};

/* ---- sweep plots ---- */

struct sopts {
	const char *x, *y, *series;
	const char *capacity;   /* attainment of a sweep: capacity -o DIR to mark */
	double target;
	bool target_given;
	double ci;              /* --ci LEVEL; 0 = none */
};

/* One x of a series: the y values of its rows (the seeds) and their sum. */
struct point {
	double x, sum;
	double *v;
	size_t cnt;
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

static void series_free(struct series *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].name);
		for (size_t k = 0; k < s[i].n; k++)
			free(s[i].p[k].v);
		free(s[i].p);
	}
	free(s);
}

/* Groups a sweep CSV's successful rows into series (by the series column, in order of first
 * appearance) of (x, mean y over the rows with that x: the seeds), x ascending.  CATEGORICAL
 * keeps x as text order (the x value's first appearance) with x = 0, 1, ... */
static int sweep_series(const char *path, const char *xc, const char *yc, const char *sc,
			bool categorical, struct series **out, size_t *nout, char ***cats,
			size_t *ncat, struct bs_err *err)
{
	struct table t;
	if (plot_table_read(path, &t, err))
		return -1;
	long cx, cy, cs = -1, ce = plot_col_of(&t, "error");
	if (plot_need_col_list(&t, path, xc, &cx, err) || plot_need_col_list(&t, path, yc, &cy, err) ||
	    (sc && plot_need_col_list(&t, path, sc, &cs, err))) {
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
		if (!plot_number(plot_cell(&t, r, (size_t)cy), &y))
			continue;
		if (categorical) {
			size_t k = 0;
			while (k < *ncat && strcmp((*cats)[k], xs))
				k++;
			if (k == *ncat) {
				*cats = xrealloc(*cats, (*ncat + 1) * sizeof **cats);
				(*cats)[(*ncat)++] = xstrdup(xs);
			}
			x = (double)k;
		} else if (!plot_number(xs, &x)) {
			/* The message first: XS lives in the table. */
			bs_errf(err, BS_EXIT_INPUT, path, (long)r + 1, xc,
				"x value '%s' is not a number", xs);
			plot_table_free(&t);
			series_free(s, ns);
			return -1;
		}
		const char *name = cs >= 0 ? plot_cell(&t, r, (size_t)cs) : "";
		size_t i = 0;
		while (i < ns && strcmp(s[i].name, name))
			i++;
		if (i == ns) {
			s = xrealloc(s, (ns + 1) * sizeof *s);
			memset(&s[ns], 0, sizeof *s);
			s[ns++].name = xstrdup(name);
		}
		size_t k = 0;
		while (k < s[i].n && s[i].p[k].x != x)
			k++;
		if (k == s[i].n) {
			s[i].p = xrealloc(s[i].p, (k + 1) * sizeof *s[i].p);
			s[i].p[k] = (struct point){x, 0, NULL, 0};
			s[i].n++;
		}
		struct point *pt = &s[i].p[k];
		pt->v = xrealloc(pt->v, (pt->cnt + 1) * sizeof *pt->v);
		pt->v[pt->cnt++] = y;
		pt->sum += y;
	}
	plot_table_free(&t);
	/* x ascending (each x once in a series). */
	for (size_t i = 0; i < ns; i++)
		qsort(s[i].p, s[i].n, sizeof *s[i].p, point_cmp);
	if (!ns) {
		for (size_t k = 0; k < *ncat; k++)
			free((*cats)[k]);
		free(*cats);
		*cats = NULL;
		*ncat = 0;
		return bs_errf(err, BS_EXIT_INPUT, path, 0, yc,
			       "no successful row with a number in this column to plot");
	}
	*out = s;
	*nout = ns;
	return 0;
}

/* The default series column: preset when the sweep varies it. */
static const char *default_series(const char *path)
{
	struct table t;
	struct bs_err e = {0};
	if (plot_table_read(path, &t, &e))
		return NULL;
	long c = plot_col_of(&t, "preset");
	bool varies = false;
	for (size_t r = 2; c >= 0 && r < t.rows; r++)
		varies |= strcmp(plot_cell(&t, r, (size_t)c), plot_cell(&t, 1, (size_t)c)) != 0;
	plot_table_free(&t);
	return varies ? "preset" : NULL;
}

/* Lines and points, one series per block; extra: lines drawn before the plot command.  With
 * CI (a level), each point's Student-t interval over its seeds: the block's columns are x, mean,
 * lower and upper bound (NaN with one seed: no bar), seeds; drawn as error bars. */
static int plot_lines(struct fig *g, const char *path, struct series *s, size_t ns,
		      const char *xc, const char *yc, double ci, const char *extra,
		      const char *prefix, char **suffix, struct bs_err *err)
{
	for (size_t i = 0; i < ns; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			char *what = xasprintf("series '%s', x = %.6g", s[i].name, s[i].p[k].x);
			int rc = plot_log_check(g, 'x', s[i].p[k].x, path, xc, what, err) ||
				 plot_log_check(g, 'y', point_mean(&s[i].p[k]), path, yc, what, err);
			free(what);
			if (rc)
				return -1;
		}
	char *xl = plot_label(xc), *yl = plot_label(yc);
	plot_fig_labels(g, xl, yl);
	if (extra)
		fputs(extra, g->gp);
	plot_fig_axes(g, true);
	fputs("  plot ", g->gp);
	for (size_t i = 0; i < ns; i++) {
		size_t b = plot_fig_block(g, s[i].name);
		for (size_t k = 0; k < s[i].n; k++) {
			const struct point *pt = &s[i].p[k];
			double m = point_mean(pt);
			fprintf(g->dat, "%.17g %.17g", pt->x, m);
			if (ci > 0) {
				double h = plot_ci_halfwidth(ci, pt->v, pt->cnt, m);
				if (isnan(h))
					fprintf(g->dat, " NaN NaN %zu", pt->cnt);
				else
					fprintf(g->dat, " %.17g %.17g %zu", m - h, m + h, pt->cnt);
			}
			fputc('\n', g->dat);
		}
		fprintf(g->gp, "%sdat index %zu using 1:2 with linespoints lt %zu title ",
			i ? ", \\\n       " : "", b, i % 8 + 1);
		char *t = *s[i].name ? xasprintf("%s%s%s", prefix ? prefix : "", s[i].name,
						 suffix && suffix[i] ? suffix[i] : "")
				     : xstrdup(yc);
		plot_gp_str(g->gp, t);
		free(t);
		if (ci > 0)
			fprintf(g->gp, ", \\\n       dat index %zu using 1:2:3:4 with yerrorbars "
				       "lt %zu notitle", b, i % 8 + 1);
	}
	fputc('\n', g->gp);
	free(xl);
	free(yl);
	return 0;
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
	int i = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, sys) {
		const cJSON *seed0 =
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "seeds"), 0);
		const cJSON *curve = cJSON_GetObjectItemCaseSensitive(seed0, "curve");
		const char *bad = !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s, "system"))
					  ? "system"
				  : !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(s, "capacity_req_s"))
					  ? "capacity_req_s"
				  : !cJSON_IsArray(curve) ? "seeds[0].curve"
							  : NULL;
		const cJSON *pt;
		cJSON_ArrayForEach(pt, curve) {
			if (bad)
				break;
			if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(pt, "rate")))
				bad = "seeds[0].curve[].rate";
			else if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(pt, "slo_attainment")))
				bad = "seeds[0].curve[].slo_attainment";
		}
		if (bad) {
			char field[96];
			snprintf(field, sizeof field, "systems[%d].%s", i, bad);
			return bs_errf(err, BS_EXIT_INPUT, path, 0, field, "missing or not of its type"),
			       false;
		}
		i++;
	}
	return true;
}

static cJSON *read_capacity(const char *dir, struct bs_err *err)
{
	char *p = xasprintf("%s/capacity.json", dir);
	size_t len;
	char *txt = read_file(p, &len, err);
	cJSON *j = txt ? cJSON_ParseWithLength(txt, len) : NULL;
	free(txt);
	if (txt)
		capacity_json_ok(j, p, err);
	free(p);
	if (err->code) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static int plot_sweep_kind(const char *kind, const char *path, const struct sopts *o,
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
	/* A log axis cannot start at 0: the range's lower end is left to gnuplot then. */
	if (!strcmp(kind, "attainment"))
		extra = xasprintf("  set yrange [%s:1.05]\n  set key bottom left box opaque\n"
				  "  set arrow from graph 0, first %.6g to graph 1, first %.6g nohead "
				  "dt 2 lc rgb \"#555555\"\n  set label \"target %.6g\" at graph 0.02, "
				  "first %.6g left offset 0,0.6\n", g->ax.logy ? "*" : "0",
				  o->target, o->target, o->target, o->target);
	else if (!strcmp(kind, "waste"))
		extra = xstrdup(g->ax.logy ? "" : "  set yrange [0:*]\n");
	/* A series named by a value alone ("32") is labelled with its column ("KEY=32"); presets
	 * and traces name themselves. */
	char *prefix = sc && strcmp(sc, "preset") && strcmp(sc, "trace") ? xasprintf("%s=", sc)
									  : NULL;
	/* --capacity DIR: each system's capacity as a vertical line in its series' colour. */
	char **suffix = NULL;
	if (o->capacity) {
		cJSON *j = read_capacity(o->capacity, err);
		if (!j) {
			free(extra);
			free(prefix);
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
						     "%.9g, graph 1 nohead lt %zu dt 3\n", extra, c, c,
						     i % 8 + 1);
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
			free(prefix);
			series_free(s, ns);
			return -1;
		}
	}
	int rc = plot_lines(g, path, s, ns, x, y, o->ci, extra, prefix, suffix, err);
	for (size_t i = 0; suffix && i < ns; i++)
		free(suffix[i]);
	free(suffix);
	free(prefix);
	free(extra);
	series_free(s, ns);
	return rc;
}

/* attainment from `capacity -o DIR`: the curve of each system (first seed) and its capacity. */
static int plot_capacity(const char *dir, struct sopts *o, struct fig *g, struct bs_err *err)
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
	plot_fig_labels(g, "request rate (req/s)", "SLO attainment (fraction)");
	fprintf(g->gp, "  set yrange [%s:1.05]\n  set key bottom left box opaque\n"
		       "  set arrow from graph 0, first %.6g to graph 1, first %.6g nohead dt 2 lc "
		       "rgb \"#555555\"\n", g->ax.logy ? "*" : "0", o->target, o->target);
	/* Capacities as vertical lines in their series' colour, and the x range to show: up to
	 * twice the largest capacity (the curve's doubling probes go far beyond). */
	double xmax = 0;
	size_t i = 0;
	cJSON_ArrayForEach(s, sys) {
		double c = cJSON_GetObjectItemCaseSensitive(s, "capacity_req_s")->valuedouble;
		fprintf(g->gp, "  set arrow from first %.9g, graph 0 to first %.9g, graph 1 nohead "
			       "lt %zu dt 3\n", c, c, i % 8 + 1);
		xmax = c > xmax ? c : xmax;
		i++;
	}
	fprintf(g->gp, "  set xrange [%s:%.6g]\n", g->ax.logx ? "*" : "0", 1.6 * xmax);
	plot_fig_axes(g, true);
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
		char *t = xasprintf("%s (capacity %.3g req/s)", name, c);
		fprintf(g->gp, "%sdat index %zu using 1:2 with linespoints lt %zu title ",
			i ? ", \\\n       " : "", b, i % 8 + 1);
		plot_gp_str(g->gp, t);
		free(t);
		i++;
	}
	fputc('\n', g->gp);
	cJSON_Delete(j);
	return 0;
}

/* Bars of a categorical sweep column: compiles at warm-up and warm-up time per strategy. */
static int plot_compiles(const char *path, const struct sopts *o, struct fig *g,
			 struct bs_err *err)
{
	const char *x = o->x ? o->x : "bucketing.strategy";
	static const char *const ys[] = {"compiles_warmup", "warmup_s"};
	g->multi = true;
	g->rows = 1;
	g->cols = 2;
	for (size_t p = 0; p < 2; p++) {
		struct series *s;
		size_t ns;
		char **cats;
		size_t ncat;
		if (sweep_series(path, x, ys[p], o->series, true, &s, &ns, &cats, &ncat, err))
			return -1;
		char *yl = plot_label(ys[p]), *xl = plot_label(x);
		plot_fig_labels(g, xl, yl);
		fprintf(g->gp, "  set yrange [0:*]\n  set xrange [-0.6:%zu.6]\n  set xtics (", ncat - 1);
		for (size_t k = 0; k < ncat; k++) {
			fprintf(g->gp, "%s", k ? ", " : "");
			plot_gp_str(g->gp, cats[k]);
			fprintf(g->gp, " %zu", k);
		}
		double w = 0.8 / (double)ns;
		fprintf(g->gp, ")\n  set style fill solid 0.85 border -1\n  set boxwidth %.4g\n"
			       "  set key top left\n", w);
		plot_fig_axes(g, true);
		fputs("  plot ", g->gp);
		for (size_t i = 0; i < ns; i++) {
			size_t b = plot_fig_block(g, *s[i].name ? s[i].name : ys[p]);
			for (size_t k = 0; k < s[i].n; k++)
				fprintf(g->dat, "%.17g %.17g\n",
					s[i].p[k].x + w * ((double)i - (double)(ns - 1) / 2),
					point_mean(&s[i].p[k]));
			fprintf(g->gp, "%sdat index %zu using 1:2 with boxes lt %zu %s",
				i ? ", \\\n       " : "", b, i % 8 + 1, ns > 1 ? "title " : "notitle");
			if (ns > 1)
				plot_gp_str(g->gp, s[i].name);
		}
		fputc('\n', g->gp);
		for (size_t k = 0; k < ncat; k++)
			free(cats[k]);
		free(cats);
		free(xl);
		free(yl);
		series_free(s, ns);
	}
	return 0;
}

/* ---- run plots ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Empirical CDFs of TTFT, TPOT and E2E, one series per run directory. */
static int plot_cdf(char **dirs, int n, struct fig *g, struct bs_err *err)
{
	static const char *const cols[][2] = {{"ttft_ms", "TTFT (ms)"}, {"tpot_ms", "TPOT (ms)"},
					      {"e2e_ms", "E2E latency (ms)"}};
	g->multi = true;
	g->rows = 1;
	g->cols = 3;
	struct table *t = xcalloc((size_t)n, sizeof *t);
	int rc = 0;
	for (int d = 0; d < n && !rc; d++) {
		char *p = xasprintf("%s/requests.csv", dirs[d]);
		rc = plot_table_read(p, &t[d], err);
		free(p);
	}
	for (size_t k = 0; k < 3 && !rc; k++) {
		plot_fig_labels(g, cols[k][1], "fraction of requests");
		fputs("  set yrange [0:1]\n  set logscale x\n  set key bottom right\n", g->gp);
		plot_fig_axes(g, true);
		fputs("  plot ", g->gp);
		for (int d = 0; d < n && !rc; d++) {
			long c;
			char *p = xasprintf("%s/requests.csv", dirs[d]);
			rc = plot_need_col(&t[d], p, cols[k][0], &c, err);
			free(p);
			if (rc)
				break;
			double *v = xmalloc(t[d].rows * sizeof *v);
			size_t m = 0;
			for (size_t r = 1; r < t[d].rows; r++)
				if (plot_number(plot_cell(&t[d], r, (size_t)c), &v[m]) && v[m] > 0)
					m++;
			qsort(v, m, sizeof *v, cmp_double);
			const char *base = strrchr(dirs[d], '/') ? strrchr(dirs[d], '/') + 1 : dirs[d];
			size_t b = plot_fig_block(g, base);
			for (size_t i = 0; i < m; i++)
				fprintf(g->dat, "%.9g %.9g\n", v[i], (double)(i + 1) / (double)m);
			free(v);
			fprintf(g->gp, "%sdat index %zu using 1:2 with steps lt %d title ",
				d ? ", \\\n       " : "", b, d % 8 + 1);
			plot_gp_str(g->gp, base);
		}
		fputs("\n  unset logscale x\n", g->gp);
	}
	for (int d = 0; d < n; d++)
		plot_table_free(&t[d]);
	free(t);
	return rc;
}

/* Bucket usage: passes per bucket, prompt (query x batch size) and decode (blocks x batch
 * size), colour = log10(uses); warmed but unused buckets empty. */
static int plot_heatmap(const char *dir, struct fig *g, struct bs_err *err)
{
	char *p = xasprintf("%s/buckets.csv", dir);
	struct table t;
	int rc = plot_table_read(p, &t, err);
	long cph, cbs, cq, cb, cu;
	if (!rc)
		rc = plot_need_col(&t, p, "phase", &cph, err) || plot_need_col(&t, p, "bs", &cbs, err) ||
		     plot_need_col(&t, p, "query", &cq, err) || plot_need_col(&t, p, "blocks", &cb, err) ||
		     plot_need_col(&t, p, "uses", &cu, err);
	free(p);
	if (rc) {
		if (t.cell)
			plot_table_free(&t);
		return -1;
	}
	g->multi = true;
	g->rows = 1;
	g->cols = 2;
	static const char *const ph[] = {"prompt", "decode"};
	for (size_t k = 0; k < 2; k++) {
		long cx = k ? cb : cq;
		/* Distinct x and batch-size values, ascending: the grid's axes. */
		double xs[4096], ys[4096];
		size_t nx = 0, ny = 0;
		for (size_t r = 1; r < t.rows; r++) {
			double x, y;
			if (strcmp(plot_cell(&t, r, (size_t)cph), ph[k]) ||
			    !plot_number(plot_cell(&t, r, (size_t)cx), &x) || !plot_number(plot_cell(&t, r, (size_t)cbs), &y))
				continue;
			size_t i = 0;
			while (i < nx && xs[i] != x)
				i++;
			if (i == nx && nx < 4096)
				xs[nx++] = x;
			i = 0;
			while (i < ny && ys[i] != y)
				i++;
			if (i == ny && ny < 4096)
				ys[ny++] = y;
		}
		qsort(xs, nx, sizeof *xs, cmp_double);
		qsort(ys, ny, sizeof *ys, cmp_double);
		double *u = xcalloc(nx * ny + 1, sizeof *u);
		for (size_t r = 1; r < t.rows; r++) {
			double x, y, n;
			if (strcmp(plot_cell(&t, r, (size_t)cph), ph[k]) ||
			    !plot_number(plot_cell(&t, r, (size_t)cx), &x) ||
			    !plot_number(plot_cell(&t, r, (size_t)cbs), &y) || !plot_number(plot_cell(&t, r, (size_t)cu), &n))
				continue;
			size_t i = 0, j = 0;
			while (i < nx && xs[i] != x)
				i++;
			while (j < ny && ys[j] != y)
				j++;
			if (i < nx && j < ny)
				u[j * nx + i] += n;
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
		/* Tick labels: the bucket values, thinned to at most 12. */
		fprintf(g->gp, "  set title \"%s buckets\"\n  set xlabel \"%s\"\n"
			       "  set ylabel \"batch size (sequences)\"\n  set cblabel \"log10 passes\"\n"
			       "  set xrange [-0.5:%zu.5]\n  set yrange [-0.5:%zu.5]\n  set xtics (",
			ph[k], k ? "KV blocks of the bucket" : "query tokens of the bucket",
			nx ? nx - 1 : 0, ny ? ny - 1 : 0);
		size_t sx = nx > 12 ? (nx + 11) / 12 : 1, sy = ny > 12 ? (ny + 11) / 12 : 1;
		for (size_t i = 0; i < nx; i += sx)
			fprintf(g->gp, "%s\"%.0f\" %zu", i ? ", " : "", xs[i], i);
		fputs(") rotate by 45 right\n  set ytics (", g->gp);
		for (size_t j = 0; j < ny; j += sy)
			fprintf(g->gp, "%s\"%.0f\" %zu", j ? ", " : "", ys[j], j);
		fprintf(g->gp, ")\n  unset key\n  unset grid\n  set style fill solid 1.0 noborder\n"
			       "  plot dat index %zu using 1:2:(0.5):(0.5):3 with boxxyerror fc palette\n"
			       "  set grid\n  unset title\n", b);
	}
	plot_table_free(&t);
	return 0;
}

/* The monitor's timeline: queues and batch, KV use, step latency. */
static int plot_timeline(const char *dir, struct fig *g, struct bs_err *err)
{
	char *p = xasprintf("%s/monitor.csv", dir);
	struct table t;
	int rc = plot_table_read(p, &t, err);
	static const char *const cols[] = {"time_s", "waiting", "running", "transferring",
					   "kv_utilization", "batch_latency_ms"};
	long c[6];
	for (size_t i = 0; i < 6 && !rc; i++)
		rc = plot_need_col(&t, p, cols[i], &c[i], err);
	free(p);
	if (rc) {
		if (t.cell)
			plot_table_free(&t);
		return -1;
	}
	g->multi = true;
	g->wide = true;
	g->rows = 3;
	g->cols = 1;
	size_t b = plot_fig_block(g, "monitor: time_s waiting running transferring kv_utilization "
			     "batch_latency_ms");
	for (size_t r = 1; r < t.rows; r++) {
		for (size_t i = 0; i < 6; i++)
			fprintf(g->dat, "%s%s", i ? " " : "", plot_cell(&t, r, (size_t)c[i]));
		fputc('\n', g->dat);
	}
	plot_table_free(&t);
	/* The user's x label and legend (the first panel's: the others have none). */
	plot_fig_labels(g, "simulated time (s)", NULL);
	fputs("  set ylabel \"requests\"\n  set key above horizontal noopaque nobox\n", g->gp);
	plot_fig_axes(g, true);
	fprintf(g->gp,
		"  plot dat index %zu using 1:2 with steps lt 1 title \"waiting\", "
		"'' index %zu using 1:3 with steps lt 2 title \"running (batch)\", "
		"'' index %zu using 1:4 with steps lt 3 title \"KV transfer\"\n"
		"  set ylabel \"KV cache in use (fraction)\"\n  set yrange [0:*]\n"
		"  unset key\n  plot dat index %zu using 1:5 with steps lt 4 notitle\n  set yrange [*:*]\n"
		"  set ylabel \"step latency (ms)\"\n"
		"  plot dat index %zu using 1:6 with steps lt 5 notitle\n", b, b, b, b, b);
	return 0;
}

/* Pipeline bubbles: each lane's passes as bars over time; idle gaps are the bubbles. */
static int plot_bubbles(const char *dir, double window, struct fig *g, struct bs_err *err)
{
	char *p = xasprintf("%s/summary.json", dir);
	size_t len;
	char *txt = read_file(p, &len, err);
	cJSON *j = txt ? cJSON_ParseWithLength(txt, len) : NULL;
	free(txt);
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
	p = xasprintf("%s/batches.csv", dir);
	struct table t;
	int rc = plot_table_read(p, &t, err);
	long cs, ce, ci;
	if (!rc)
		rc = plot_need_col(&t, p, "start_s", &cs, err) || plot_need_col(&t, p, "end_s", &ce, err) ||
		     plot_need_col(&t, p, "instance", &ci, err);
	free(p);
	if (rc) {
		if (t.cell)
			plot_table_free(&t);
		return -1;
	}
	double t0 = NAN, t1;
	int lanes = 0;
	size_t lane0 = 0;
	for (size_t r = 1; r < t.rows; r++) {
		double s, e, in;
		if (!plot_number(plot_cell(&t, r, (size_t)cs), &s) || !plot_number(plot_cell(&t, r, (size_t)ce), &e) ||
		    !plot_number(plot_cell(&t, r, (size_t)ci), &in))
			continue;
		if (isnan(t0))
			t0 = s;
		if ((int)in + 1 > lanes)
			lanes = (int)in + 1;
		if (in == 0 && ++lane0 == 40 && window <= 0)
			window = e - t0;
	}
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

/* ---- the command ---- */

static bool is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Options may follow the kind and inputs (`plot cdf a b -o fig`): the option parser stops at
 * the first positional argument, so options (with their values) are moved first. */
static char **options_first(const struct cli_opt *o, int argc, char **argv)
{
	char **r = xmalloc(((size_t)argc + 1) * sizeof *r), **pos = xmalloc((size_t)argc * sizeof *pos);
	int n = 0, np = 0;
	r[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			while (i < argc)
				pos[np++] = argv[i++];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			pos[np++] = argv[i];
			continue;
		}
		r[n++] = argv[i];
		bool takes = false;
		for (const struct cli_opt *p = o; p->name; p++)
			if (a[1] == '-' ? !strcmp(a + 2, p->name) : (a[1] == p->key && !a[2]))
				takes = p->has_arg;
		if (takes && i + 1 < argc)
			r[n++] = argv[++i];
	}
	for (int i = 0; i < np; i++)
		r[n++] = pos[i];
	r[n] = NULL;
	free(pos);
	return r;
}

static int plot_main(const struct cli_cmd *self, int argc, char **argv);

static int plot(const struct cli_cmd *self, int argc, char **argv)
{
	char **av = options_first(self->opts, argc, argv);
	int rc = plot_main(self, argc, av);
	free(av);
	return rc;
}

static int plot_main(const struct cli_cmd *self, int argc, char **argv)
{
	struct cli_state st = {0};
	struct sopts so = {NULL, NULL, NULL, NULL, 0.9, false, 0};
	struct fig_axes ax = {0};
	const char *out = NULL, *title = NULL;
	bool script_only = false;
	double window = 0;
	int c;
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		if (c == -2 || c == -3)
			return c == -2 ? BS_EXIT_USAGE : 0;
		char why[256];
		switch (c) {
		case OPT_OUT:
			out = st.optarg;
			break;
		case OPT_X:
			so.x = st.optarg;
			break;
		case OPT_Y:
			so.y = st.optarg;
			break;
		case OPT_SERIES:
			so.series = st.optarg;
			break;
		case OPT_CAPACITY:
			so.capacity = st.optarg;
			break;
		case OPT_TITLE:
			title = st.optarg;
			break;
		case OPT_SCRIPT_ONLY:
			script_only = true;
			break;
		case OPT_TARGET:
			if (parse_f64(st.optarg, 0, 1, &so.target, why, sizeof why))
				return cli_usage(self, "--target: %s", why);
			so.target_given = true;
			break;
		case OPT_WINDOW:
			if (parse_f64(st.optarg, 1e-9, 1e9, &window, why, sizeof why))
				return cli_usage(self, "--window: %s", why);
			break;
		case OPT_CI:
			if (parse_f64(st.optarg, 0, 1, &so.ci, why, sizeof why) || so.ci <= 0 ||
			    so.ci >= 1)
				return cli_usage(self, "--ci: expected a level between 0 and 1 "
						       "(exclusive, e.g. 0.95), got '%s'", st.optarg);
			break;
		case OPT_LOGX:
			ax.logx = true;
			break;
		case OPT_LOGY:
			ax.logy = true;
			break;
		case OPT_KEY:
			if (!plot_key_command(st.optarg)) {
				char *list = NULL;
				size_t len = 0;
				FILE *f = open_memstream(&list, &len);
				for (size_t i = 0; plot_key_positions[i]; i++)
					fprintf(f, "%s'%s'", i ? ", " : "", plot_key_positions[i]);
				fclose(f);
				int r = cli_usage(self, "--key: unknown position '%s' (choices: %s)",
						  st.optarg, list);
				free(list);
				return r;
			}
			ax.key = st.optarg;
			break;
		case OPT_XLABEL:
			ax.xlabel = st.optarg;
			break;
		case OPT_YLABEL:
			ax.ylabel = st.optarg;
			break;
		default:
			return cli_usage(self, "unexpected option");
		}
	}
	/* Each kind, whether it plots a sweep CSV, and the options it honours (every other one is
	 * refused). */
	static const struct {
		const char *name;
		bool sweep, logx, logy, key, ci, xlabel, ylabel, x, y, series, target, window;
	} kinds[] = {
		{.name = "attainment", .sweep = true, .logx = true, .logy = true, .key = true,
		 .ci = true, .xlabel = true, .ylabel = true, .x = true, .y = true,
		 .series = true, .target = true},
		{.name = "throughput", .sweep = true, .logx = true, .logy = true, .key = true,
		 .ci = true, .xlabel = true, .ylabel = true, .x = true, .y = true,
		 .series = true},
		{.name = "line", .sweep = true, .logx = true, .logy = true, .key = true,
		 .ci = true, .xlabel = true, .ylabel = true, .x = true, .y = true,
		 .series = true},
		{.name = "waste", .sweep = true, .logx = true, .logy = true, .key = true,
		 .ci = true, .xlabel = true, .ylabel = true, .x = true, .y = true,
		 .series = true},
		{.name = "compiles", .sweep = true, .key = true, .xlabel = true, .x = true,
		 .series = true},
		{.name = "cdf", .logx = true, .key = true, .ylabel = true},
		{.name = "heatmap"},
		{.name = "timeline", .key = true, .xlabel = true},
		{.name = "bubbles", .xlabel = true, .ylabel = true, .window = true},
	};
	/* The kinds' names, for the messages. */
	char names[160];
	size_t no = 0;
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds && no < sizeof names; i++)
		no += (size_t)snprintf(names + no, sizeof names - no, "%s%s", i ? ", " : "",
				       kinds[i].name);
	if (st.optind >= argc)
		return cli_usage(self, "which kind? %s", names);
	const char *kind = argv[st.optind++];
	char **in = argv + st.optind;
	int nin = argc - st.optind;
	if (!out)
		return cli_usage(self, "-o OUT is required (OUT.pdf, OUT.svg, OUT.png are written)");
	size_t ki = 0;
	while (ki < sizeof kinds / sizeof *kinds && strcmp(kinds[ki].name, kind))
		ki++;
	if (ki == sizeof kinds / sizeof *kinds)
		return cli_usage(self, "unknown kind '%s' (%s)", kind, names);
	bool sweep_kind = kinds[ki].sweep, run_kind = !sweep_kind;
	const struct {
		bool set, ok;
		const char *name;
	} asked[] = {
		{ax.logx, kinds[ki].logx, "--logx"},
		{ax.logy, kinds[ki].logy, "--logy"},
		{ax.key != NULL, kinds[ki].key, "--key"},
		{so.ci > 0, kinds[ki].ci, "--ci"},
		{ax.xlabel != NULL, kinds[ki].xlabel, "--xlabel"},
		{ax.ylabel != NULL, kinds[ki].ylabel, "--ylabel"},
		{so.x != NULL, kinds[ki].x, "--x"},
		{so.y != NULL, kinds[ki].y, "--y"},
		{so.series != NULL, kinds[ki].series, "--series"},
		{so.target_given, kinds[ki].target, "--target"},
		{window > 0, kinds[ki].window, "--window"},
	};
	for (size_t i = 0; i < sizeof asked / sizeof *asked; i++)
		if (asked[i].set && !asked[i].ok)
			return cli_usage(self, "%s does not apply to a %s plot (see the option's "
					       "help)", asked[i].name, kind);
	if (nin < 1 || (nin > 1 && strcmp(kind, "cdf")))
		return cli_usage(self, "%s takes %s", kind,
				 !strcmp(kind, "cdf") ? "one or more run directories"
				 : run_kind	      ? "one run directory (run -o DIR)"
				 : !strcmp(kind, "attainment")
					 ? "a sweep CSV or a capacity directory (capacity -o DIR)"
					 : "a sweep CSV");
	for (int i = 0; i < nin; i++)
		if (run_kind && !is_dir(in[i]))
			return cli_usage(self, "%s: not a run directory", in[i]);
	if (so.capacity && (strcmp(kind, "attainment") || is_dir(in[0])))
		return cli_usage(self, "--capacity marks capacities on the attainment plot of a sweep "
				       "CSV");
	if ((so.x || so.y || so.series) && !strcmp(kind, "attainment") && is_dir(in[0]))
		return cli_usage(self, "--x, --y and --series choose the columns of a sweep CSV; a "
				       "capacity directory's curve has its own");
	if (so.ci > 0 && is_dir(in[0]))
		return cli_usage(self, "--ci draws intervals over the seeds of a sweep CSV; a capacity "
				       "directory's curve is one seed's");
	if (!strcmp(kind, "line") && (!so.x || !so.y)) {
		/* No default for line: name the columns to choose from. */
		struct table t;
		struct bs_err e = {0};
		if (plot_table_read(in[0], &t, &e))
			return cli_fail(&e);
		fprintf(stderr, "bucketsim: error: line needs --x COLUMN and --y COLUMN (missing %s); "
				"the columns of %s: ", so.x ? "--y" : so.y ? "--x" : "both", in[0]);
		plot_print_columns(stderr, &t);
		fprintf(stderr, "\nsee 'bucketsim %s --help'\n", self->name);
		plot_table_free(&t);
		return BS_EXIT_USAGE;
	}
	struct fig g;
	plot_fig_init(&g, out);
	g.ax = ax;
	struct bs_err err = {0};
	int rc;
	if (!strcmp(kind, "attainment") && is_dir(in[0]))
		rc = plot_capacity(in[0], &so, &g, &err);
	else if (!strcmp(kind, "compiles"))
		rc = plot_compiles(in[0], &so, &g, &err);
	else if (sweep_kind)
		rc = plot_sweep_kind(kind, in[0], &so, &g, &err);
	else if (!strcmp(kind, "cdf"))
		rc = plot_cdf(in, nin, &g, &err);
	else if (!strcmp(kind, "heatmap"))
		rc = plot_heatmap(in[0], &g, &err);
	else if (!strcmp(kind, "timeline"))
		rc = plot_timeline(in[0], &g, &err);
	else
		rc = plot_bubbles(in[0], window, &g, &err);
	if (rc) {
		fclose(g.dat);
		fclose(g.gp);
		free(g.datbuf);
		free(g.gpbuf);
		return plot_err_print(&err);
	}
	return plot_fig_finish(&g, title, script_only, &err) ? plot_err_print(&err) : 0;
}

const struct cli_cmd cmd_plot = {
	"plot",
	"bucketsim plot KIND INPUT... -o OUT [--x COL] [--y COL] [--series COL] [--ci LEVEL] "
	"[--logx] [--logy] [--key POS]",
	"draw a figure (PDF, SVG, PNG) from sweep, capacity or run outputs with gnuplot",
	"Kinds: attainment (SLO attainment vs rate per system, from a sweep CSV or a capacity\n"
	"directory, with the target line and capacities), throughput (vs batch size or\n"
	"concurrency), line (any sweep column --y against any other --x, one line per system),\n"
	"waste (padding waste vs buckets), compiles (warm-up compiles and time per strategy) from\n"
	"a sweep CSV; cdf (TTFT, TPOT, E2E CDFs of one or more run directories), heatmap (bucket\n"
	"usage, buckets.csv), timeline (monitor.csv), bubbles (pipeline lanes, batches.csv of a\n"
	"cluster.pp > 1 run) from run directories.  Sweep plots draw the mean over the seeds of\n"
	"each point (--ci adds its confidence interval).  Writes OUT.dat and OUT.gp, then\n"
	"OUT.pdf, OUT.svg and OUT.png; OUT.gp names its files relative to its own directory, where\n"
	"gnuplot runs, so `cd DIR && gnuplot OUT.gp` re-renders it there or in a copy of DIR.\n"
	"An option a kind cannot honour is an error (see each option).  See analysis/README.md.",
	"  bucketsim plot line out/rate/sweep.csv --x workload.rate --y p99_ttft_ms -o fig/p99ttft\n"
	"  bucketsim plot line out/rate/sweep.csv --x workload.rate --y mean_tpot_ms --ci 0.95 \\\n"
	"      --logy --key 'top left' -o fig/tpot\n"
	"  bucketsim plot attainment out/rate/sweep.csv --series preset -o fig/attainment\n"
	"  bucketsim plot attainment out/cap -o fig/capacity\n"
	"  bucketsim plot cdf out/vllm out/distserve -o fig/cdf\n"
	"  bucketsim plot heatmap out/run -o fig/buckets\n",
	opts, plot,
};
