/*
 * plot_fig: the machinery of `bucketsim plot`: CSV tables read with libcsv, axis labels with
 * units, confidence intervals over seeds, and a figure's data blocks and gnuplot script, written
 * and rendered.
 *
 * The script refers to its data (OUT.dat) and outputs (OUT.pdf, ...) by their base names
 * ("./OUT.dat": never a '<' or '|' command), and gnuplot runs in the script's directory: the .gp
 * and .dat files move together, and `cd DIR && gnuplot OUT.gp` re-renders them wherever they
 * are.  The files of a figure are one output set (sim/outset.h): rendered in a temporary
 * directory beside OUT and put into place together.
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
	long line;            /* while reading: the line being parsed */
	long bad_line;        /* the line of the first row whose length differs, or 0 */
	size_t bad_cols;      /* its number of fields */
};

/* What the user set about the axes and the legend (NULL / false: the kind's own). */
struct fig_axes {
	const char *xlabel, *ylabel;
	const char *key;       /* one of plot_key_positions */
	bool logx, logy;
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
	struct fig_axes ax;    /* set by the caller after plot_fig_init */
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

/* DIR/FILE read as a table with the N columns NAMES, their indices into COLS; on an error
 * (naming the file, and the column missing) nothing is left to free. */
int plot_run_table(const char *dir, const char *file, const char *const *names, size_t n,
		   long *cols, struct table *t, struct bs_err *err);

/* Prints ERR (unless printed already: an empty message) and returns its exit code. */
int plot_err_print(const struct bs_err *err);

/* A whole-field finite number. */
bool plot_number(const char *s, double *v);

/* Cell (R, C) of the table read from PATH as a number: 1 and *V when it is a finite number, 0
 * when it is empty (a null value, skipped by the plots), else -1 with ERR naming PATH, the
 * cell's line (R + 1) and its column. */
int plot_cell_number(const struct table *t, size_t r, size_t c, const char *path, double *v,
		     struct bs_err *err);

/* The header's names, comma-separated. */
void plot_print_columns(FILE *f, const struct table *t);

/* The column named NAME, or an error naming PATH and listing the table's columns: printed at
 * once (the list outgrows bs_err's message), so ERR gets the exit code and an empty message,
 * which plot_err_print does not print again. */
int plot_need_col_list(const struct table *t, const char *path, const char *name, long *c,
		       struct bs_err *err);

/* An axis label with its unit (returned owned).  A configuration key (a name with a dot) is
 * kept with its unit from the key table; a snake_case column is read as words: a unit suffix
 * (`_ms`, `_s`, `_req_s`; `_ratio`, `_fraction` give "fraction") becomes the unit in
 * parentheses, the abbreviations TTFT, TPOT, ITL, E2E (`e2el`: "E2E latency"), KV, SLO are
 * upper-cased, underscores become spaces, and a name without a unit suffix takes the unit of
 * its quantity word (throughput: req/s for `request_...`, else tokens/s; goodput: req/s;
 * attainment, utilization, ratio: fraction).  A few names the words do not explain (the
 * request rate, padding waste, compiles and warm-up time) have a phrase of their own.
 * So p99_ttft_ms gives "p99 TTFT (ms)" and request_throughput "request throughput (req/s)". */
char *plot_label(const char *name);

/* The legend positions --key accepts, NULL-terminated, and the gnuplot command of one (NULL
 * when POS is not one of them). */
extern const char *const plot_key_positions[];
const char *plot_key_command(const char *pos);

/* The half-width of the Student-t confidence interval at LEVEL (in (0, 1)) of the mean MEAN of
 * V[0..N): t_{(1+LEVEL)/2, N-1} * sd / sqrt(N), sd the sample standard deviation (GSL's
 * gsl_cdf_tdist_Pinv and gsl_stats_sd_m).  NaN when N < 2 (no interval from one value). */
double plot_ci_halfwidth(double level, const double *v, size_t n, double mean);

/* A gnuplot string expression that gnuplot reads back as S exactly, whatever bytes it holds
 * (quotes, backslashes, backquotes, newlines, control characters: escaped; UTF-8 as it is).  The
 * preamble's noenhanced text mode draws it as written ("_", "^", "{", "@", "&" literal). */
void plot_gp_str(FILE *f, const char *s);

/* The Okabe-Ito colour-blind-safe line colours, in series order. */
#define OKABE_ITO_N 8
extern const char *const okabe_ito[OKABE_ITO_N];

void plot_fig_init(struct fig *g, const char *out);

/* Starts a data block (a series); returns its gnuplot index. */
size_t plot_fig_block(struct fig *g, const char *name);

/* `set xlabel`, `set ylabel`: XL and YL unless the user's labels (g->ax) replace them; a NULL
 * label is not written. */
void plot_fig_labels(struct fig *g, const char *xl, const char *yl);

/* The user's log scales and legend position (g->ax), written just before a `plot` command. */
void plot_fig_axes(struct fig *g);

/* With a log scale on AXIS ('x' or 'y'), V must be > 0: else an error naming PATH, COLUMN and
 * the series WHAT. */
int plot_log_check(const struct fig *g, char axis, double v, const char *path,
		   const char *column, const char *what, struct bs_err *err);

/* Writes OUT.dat and OUT.gp, then renders them with gnuplot unless SCRIPT_ONLY: all of the
 * figure's files appear together or none does. */
int plot_fig_finish(struct fig *g, const char *title, bool script_only, struct bs_err *err);

#endif
