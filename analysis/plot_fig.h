/*
 * plot_fig: the machinery of `bucketsim plot`: CSV tables read with libcsv, axis labels with
 * units, and a figure's data blocks and gnuplot script, written and rendered.
 */
#ifndef BUCKETSIM_PLOT_FIG_H
#define BUCKETSIM_PLOT_FIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/util.h"

struct table {
	char **cell;          /* row-major; row 0 is the header */
	size_t rows, cols, n, cap;
	size_t cur_col;
	bool bad;
};

struct fig {
	FILE *dat, *gp;        /* in-memory until written */
	char *datbuf, *gpbuf;
	size_t datlen, gplen;
	const char *out;       /* OUT prefix */
	size_t blocks;         /* data blocks written so far */
	bool multi;            /* a multiplot of panels */
	bool wide;             /* panels two columns wide */
	int rows, cols;
};

/* A CSV file read whole (libcsv); row 0 is the header. */
void plot_table_free(struct table *t);
int plot_table_read(const char *path, struct table *t, struct bs_err *err);

/* Cell (r, c) (tables are rectangular: a short row is an error when read). */
const char *plot_cell(const struct table *t, size_t r, size_t c);

/* The column named NAME, or -1. */
long plot_col_of(const struct table *t, const char *name);

/* The column named NAME, or an error naming PATH. */
int plot_need_col(const struct table *t, const char *path, const char *name, long *c,
		    struct bs_err *err);

/* A whole-field finite number. */
bool plot_number(const char *s, double *v);

/* An axis label with its unit: from a table of summary metrics, else the configuration key's
 * unit, else the name's suffix. */
char *plot_label(const char *name);

/* A gnuplot string literal (double quotes; backslash, quote escaped; "_" kept literal with the
 * noenhanced text mode set in the preamble). */
void plot_gp_str(FILE *f, const char *s);

/* The Okabe-Ito colour-blind-safe line colours, in series order. */
#define OKABE_ITO_N 8
extern const char *const okabe_ito[OKABE_ITO_N];

void plot_fig_init(struct fig *g, const char *out);

/* Starts a data block (a series); returns its gnuplot index. */
size_t plot_fig_block(struct fig *g, const char *name);

/* Writes OUT.dat and OUT.gp, then runs gnuplot unless SCRIPT_ONLY. */
int plot_fig_finish(struct fig *g, const char *title, bool script_only, struct bs_err *err);

#endif
