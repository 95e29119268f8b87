/*
 * plot_kinds: the figures of `bucketsim plot` (sim/cmd_plot.c parses the options and picks one),
 * each writing FIG's OUT.dat and OUT.gp (plot_fig.h); 0, or -1 with ERR.
 */
#ifndef BS_PLOT_KINDS_H
#define BS_PLOT_KINDS_H

#include <stdbool.h>

#include "analysis/plot_fig.h"

/* The options of the sweep plots. */
struct sopts {
	const char *x, *y, *series;
	const char *capacity;   /* attainment of a sweep: capacity -o DIR to mark */
	double target;
	bool target_given;
	double ci;              /* --ci LEVEL; 0 = none */
	const char *baseline;   /* --baseline SERIES: differences to it (with --ci) */
};

/* plot_sweep.c: a sweep CSV at PATH (attainment, throughput, line, waste), a capacity
 * directory's curve (attainment), the compiles of a sweep CSV. */
int plot_sweep_kind(const char *kind, const char *path, const struct sopts *o, struct fig *g,
		    struct bs_err *err);
int plot_capacity(const char *dir, struct sopts *o, struct fig *g, struct bs_err *err);
int plot_compiles(const char *path, const struct sopts *o, struct fig *g, struct bs_err *err);

/* plot_run.c: run directories. */
/* cdf: PANELS a comma list of ttft, tpot, e2e (NULL: all three). */
int plot_cdf(char **dirs, int n, const char *panels, struct fig *g, struct bs_err *err);
int plot_heatmap(const char *dir, struct fig *g, struct bs_err *err);
int plot_timeline(const char *dir, struct fig *g, struct bs_err *err);
int plot_bubbles(const char *dir, double window, struct fig *g, struct bs_err *err);

#endif
