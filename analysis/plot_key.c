/*
 * plot_key: where each panel's legend (key box) goes, and the axis ranges that placement needs
 * (part of plot_fig, whose header declares it).  The box is measured in characters of the
 * terminal font (PLOT_KEY_W, PLOT_KEY_H, plot_fig.h) and converted into fractions of the graph;
 * without --key it goes to the first inside corner where it covers no drawn point, else below
 * the graph.  Owns nothing: it reads the figure's data blocks and writes the text that
 * plot_fig_finish puts at each panel's placeholder.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plot_fig.h"

const char *const plot_key_positions[] = {
	"top left", "top center", "top right", "bottom left", "bottom center", "bottom right",
	"outside", "above", "below", "off", NULL,
};

const char *plot_key_command(const char *pos)
{
	static const char *const cmd[] = {
		"set key top left", "set key top center", "set key top right", "set key bottom left",
		"set key bottom center", "set key bottom right", "set key outside right top",
		"set key above", "set key below", "unset key",
	};
	for (size_t i = 0; plot_key_positions[i]; i++)
		if (!strcmp(plot_key_positions[i], pos))
			return cmd[i];
	return NULL;
}

bool plot_key_covers(const char *pos, double gw, double gh, double w, double h, double fx,
		     double fy)
{
	double kw = w / gw, kh = h / gh;
	bool top = !strncmp(pos, "top", 3);
	bool iny = top ? fy >= 1 - kh : fy <= kh;
	const char *side = pos + (top ? 4 : 7);
	bool inx = !strcmp(side, "left")    ? fx <= kw
		   : !strcmp(side, "right") ? fx >= 1 - kw
					    : fabs(fx - 0.5) <= kw / 2;
	return inx && iny;
}

/* The numbers of a block's data lines: each line's x and its Y y values (NaN where a field is
 * missing or not a number), appended to V (pairs of x and y). */
static size_t block_points(const struct fig *g, const struct fig_block *b, int ycols, double **v)
{
	size_t n = 0;
	*v = NULL;
	for (size_t off = b->start; off < b->end;) {
		const char *l = g->datbuf + off, *nl = memchr(l, '\n', b->end - off);
		size_t len = nl ? (size_t)(nl - l) : b->end - off;
		off += len + 1;
		if (!len || *l == '#')
			continue;
		char *line = strndup(l, len), *save = NULL;
		double x = NAN;
		char *w = strtok_r(line, " ", &save);
		if (w)
			x = strtod(w, NULL);
		for (int k = 0; k < ycols; k++) {
			w = strtok_r(NULL, " ", &save);
			*v = xrealloc(*v, (n + 1) * 2 * sizeof **v);
			(*v)[2 * n] = x;
			(*v)[2 * n + 1] = w ? strtod(w, NULL) : NAN;
			n++;
		}
		free(line);
	}
	return n;
}

/* A value's place on an axis from LO to HI, as a fraction. */
static double frac(double v, double lo, double hi, bool lg)
{
	return lg ? (log(v) - log(lo)) / (log(hi) - log(lo)) : (v - lo) / (hi - lo);
}

/* The range of an axis whose ends are not fixed: the data's, 4 % of the whole range wider on
 * each free side (in log space on a log axis); a single value gets a range around it. */
static void data_range(double *r, const bool *fix, double mn, double mx, bool lg)
{
	if (!(mn <= mx))
		mn = mx = lg ? 1 : 0;
	double a = lg ? log10(mn) : mn, b = lg ? log10(mx) : mx;
	if (fix[0] && (!lg || r[0] > 0))
		a = fmin(a, lg ? log10(r[0]) : r[0]);
	if (fix[1] && (!lg || r[1] > 0))
		b = fmax(b, lg ? log10(r[1]) : r[1]);
	double pad = b > a ? 0.04 * (b - a) : lg ? 0.3 : a ? fabs(a) * 0.1 : 1;
	if (!fix[0])
		r[0] = lg ? pow(10, a - pad) : a - pad;
	if (!fix[1])
		r[1] = lg ? pow(10, b + pad) : b + pad;
	if (!(r[1] > r[0]))
		r[1] = r[0] + (lg ? r[0] : 1);
}

static const char *const inside_positions[] = {"top right", "top left", "bottom right",
					       "bottom left", "top center", "bottom center"};

/* Points of panel P (fractions of its graph) the legend box at POS would cover. */
static size_t covered(const struct fig *g, const struct fig_panel *p, long pi, const char *pos,
		      double gw, double gh)
{
	double w = PLOT_KEY_W(p->maxlen), h = PLOT_KEY_H(p->nent);
	size_t n = 0;
	for (size_t b = 0; b < g->blocks; b++) {
		if (g->blk[b].panel != pi)
			continue;
		double *v;
		size_t m = block_points(g, &g->blk[b], p->ycols, &v);
		for (size_t k = 0; k < m; k++) {
			double x = v[2 * k], y = v[2 * k + 1];
			if (isnan(x) || isnan(y))
				continue;
			double fy = frac(y, p->yr[0], p->yr[1], p->logy);
			if (p->barw > 0) {
				/* A bar covers its width from the bottom of the axis to y: sampled
				 * at its edges and every tenth of it. */
				for (int e = 0; e <= 10; e++)
					for (int q = 0; q <= 10; q++) {
						double fx = frac(x + p->barw * (e / 10.0 - 0.5), p->xr[0],
								 p->xr[1], false);
						if (fx >= 0 && fx <= 1 && fy >= 0 &&
						    plot_key_covers(pos, gw, gh, w, h, fx,
								    fmin(fy, 1) * q / 10.0)) {
							n++;
							e = q = 11;
						}
					}
				continue;
			}
			double fx = frac(x, p->xr[0], p->xr[1], p->logx);
			if (fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1 &&
			    plot_key_covers(pos, gw, gh, w, h, fx, fy))
				n++;
		}
		free(v);
	}
	return n;
}

/* For each panel, its ranges and its legend's place, the text written at its placeholder
 * (INS[i], owned); sets g->extra_w and g->extra_h, the room added for legends outside. */
char **plot_fig_place_keys(struct fig *g, const char *title)
{
	char **ins = xcalloc(g->npan + 1, sizeof *ins);
	double pw = g->wide ? 7 : 3.5, ph = g->wide ? 1.8 : 2.5;
	double gw = pw / PLOT_CHAR_W_IN - PLOT_MARGIN_L - PLOT_MARGIN_R;
	double gh0 = ph / PLOT_CHAR_H_IN - PLOT_MARGIN_T - PLOT_MARGIN_B - (title ? 1.5 : 0);
	for (size_t i = 0; i < g->npan; i++) {
		struct fig_panel *p = &g->pan[i];
		double gh = gh0 - p->bmargin;
		/* The ranges. */
		double mn[2] = {INFINITY, INFINITY}, mx[2] = {-INFINITY, -INFINITY};
		for (size_t b = 0; b < g->blocks; b++) {
			if (g->blk[b].panel != (long)i)
				continue;
			double *v;
			size_t m = block_points(g, &g->blk[b], p->ycols, &v);
			for (size_t k = 0; k < m; k++)
				for (int a = 0; a < 2; a++) {
					double x = v[2 * k + a];
					if (isnan(x) || ((a ? p->logy : p->logx) && x <= 0))
						continue;
					double lo = x - (a ? 0 : p->barw / 2), hi = x + (a ? 0 : p->barw / 2);
					if (a && p->yzero) {
						lo = fmin(lo, 0);
						hi = fmax(hi, 0);
					}
					mn[a] = fmin(mn[a], lo);
					mx[a] = fmax(mx[a], hi);
				}
			free(v);
		}
		data_range(p->xr, p->xfix, mn[0], mx[0], p->logx);
		data_range(p->yr, p->yfix, mn[1], mx[1], p->logy);
		char *r = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&r, &len);
		fprintf(f, "  set xrange [%.9g:%.9g]\n  set yrange [%.9g:%.9g]\n", p->xr[0], p->xr[1],
			p->yr[0], p->yr[1]);
		/* The legend. */
		const char *pos = g->ax.key ? g->ax.key : p->fixed_key;
		if (!pos && !p->nent)
			pos = "off";
		if (!pos) {
			for (size_t k = 0; k < sizeof inside_positions / sizeof *inside_positions; k++)
				if (PLOT_KEY_W(p->maxlen) <= gw && PLOT_KEY_H(p->nent) <= gh &&
				    !covered(g, p, (long)i, inside_positions[k], gw, gh)) {
					pos = inside_positions[k];
					break;
				}
		}
		if (!pos)
			pos = "below";
		double kw = PLOT_KEY_W(p->maxlen);
		if (!strcmp(pos, "outside")) {
			g->extra_w = fmax(g->extra_w, (kw + 1) * PLOT_CHAR_W_IN);
			fputs("  set key outside right top\n", f);
		} else if (!strcmp(pos, "above") || !strcmp(pos, "below")) {
			/* As many columns as fit across the panel, the rows below (above) it. */
			size_t cols = (size_t)fmax(1, floor((pw / PLOT_CHAR_W_IN - 2) / kw));
			cols = cols > p->nent ? (p->nent ? p->nent : 1) : cols;
			size_t rows = (p->nent + cols - 1) / cols;
			if (p->fixed_key && !g->ax.key)
				rows = 1; /* the kind's own, its entries on one line */
			g->extra_h = fmax(g->extra_h, PLOT_KEY_H(rows) * PLOT_CHAR_H_IN);
			fprintf(f, "  set key %s horizontal maxcols %zu nobox noopaque\n", pos, cols);
			if (!strcmp(pos, "below"))
				fputs("  set xlabel offset 0,0.6\n", f);
		} else if (!strcmp(pos, "off")) {
			fputs("  unset key\n", f);
		} else {
			size_t n = covered(g, p, (long)i, pos, gw, gh);
			if (n && g->ax.key)
				fprintf(stderr, "bucketsim: warning: %s: the legend at '%s' covers %zu "
					"point%s%s%s%s\n", g->out, pos, n, n == 1 ? "" : "s",
					p->name ? " of the " : "", p->name ? p->name : "",
					p->name ? " panel" : "");
			/* "inside": a panel after one whose legend was below is back in the graph. */
			fprintf(f, "  set key inside %s\n", pos);
		}
		fclose(f);
		ins[i] = r;
	}
	return ins;
}
