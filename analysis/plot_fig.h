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
 *
 * Implemented in analysis/plot_fig.c, except the legend's positions, geometry and placement
 * (analysis/plot_key.c).
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

/* A data block of OUT.dat: its bytes (after its header line), the panel it is drawn in, its
 * series name. */
struct fig_block {
	size_t start, end;
	long panel;            /* -1: drawn without a legend (heatmap, bubbles) */
	char *name;
};

/* A panel (one `plot` command) and what placing its legend needs: the legend's entries and
 * longest title (characters), the axis ranges the kind fixed, the columns of its blocks that are
 * y values, bars.  See plot_fig_finish for the placement. */
struct fig_panel {
	size_t mark;           /* offset in the script of its placeholder line */
	char *name;            /* for messages ("TTFT") */
	const char *fixed_key; /* the kind's own outside legend (timeline: "above"), or NULL */
	size_t nent, maxlen;
	bool xfix[2], yfix[2];
	double xr[2], yr[2];
	int ycols;             /* y values in columns 2 .. 1 + ycols of a block's lines */
	double barw;           /* bars of this width (x units) from the bottom to y; 0: points */
	double bmargin;        /* lines of the bottom margin beyond the usual (rotated tics) */
	bool yzero;            /* the y range includes 0 (a zero line) */
	bool logx, logy;       /* log axes (the user's, or the kind's own: cdf's x) */
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
	const char **labels;   /* --label TEXT, in order: the series' legend texts */
	size_t nlabels;
	struct fig_block *blk;
	struct fig_panel *pan;
	size_t npan;
	double extra_w, extra_h; /* inches added to a panel for legends outside (set at finish) */
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

/* Starts a panel named NAME (one `plot` command, written next) and writes the user's log scales
 * and a placeholder for the panel's ranges and legend (g->ax; plot_fig_finish fills it in). */
void plot_fig_axes(struct fig *g);
void plot_fig_panel_name(struct fig *g, const char *name);

/* Frees the blocks' and panels' records (plot_fig_finish does; a caller that gives up on the
 * figure calls it). */
void plot_fig_free_parts(struct fig *g);

/* The current panel's axis range, fixed by the kind: end I (0 lower, 1 upper) of AXIS ('x',
 * 'y') at V.  An end not fixed is the data's (padded 4 %, in log space on a log axis). */
void plot_fig_range(struct fig *g, char axis, int i, double v);

/* Writes ` title "T"` and counts T as an entry of the current panel's legend. */
void plot_fig_title(struct fig *g, const char *t);

/* The style of series I of N, written after a plot clause's `with ...`: colour (Okabe-Ito, I mod
 * 8), dash pattern (I mod 5 + 1), open point shape (I mod 9 of plot_point_types), and a width
 * and point size that shrink from the first series to the last, so that a series drawn exactly
 * over another leaves the other's wider line and larger point visible around it.  POINTS: with
 * the point type and size. */
#define PLOT_POINT_TYPES_N 9
extern const int plot_point_types[PLOT_POINT_TYPES_N];
void plot_fig_style(struct fig *g, size_t i, size_t n, bool points);
double plot_style_lw(size_t i, size_t n);

/* Legend placement (plot_fig_finish; analysis/plot_key.c).  The legend's box in character cells of the terminal
 * font: PLOT_KEY_W(L) columns wide for a longest title of L characters, PLOT_KEY_H(N) lines
 * high for N entries, counted from the graph's corner (gnuplot's sample, gaps, box and the
 * distance from the border, rounded up).  Converted into fractions of the graph with the
 * largest characters per inch of the three terminals (gnuplot 5.4's GPVAL_TERM_HCHAR and
 * VCHAR: widest PNG's 9 px at 120 px per inch, tallest SVG's 15 px at 96 px per inch; PDF's
 * are smaller) and margins at their widest (PLOT_MARGIN_*: left tic labels and label, right,
 * top, bottom tic labels and label). */
#define PLOT_CHAR_W_IN (9.0 / 120)
#define PLOT_CHAR_H_IN (15.0 / 96)
#define PLOT_KEY_W(L) ((double)(L) + 9)
#define PLOT_KEY_H(N) (1.1 * (double)(N) + 1.5)
#define PLOT_MARGIN_L 11.0
#define PLOT_MARGIN_R 3.0
#define PLOT_MARGIN_T 1.5
#define PLOT_MARGIN_B 3.5

/* Whether the legend box of a panel of GW x GH characters (the graph), at the inside position
 * POS ("top left", ...), W x H characters, holds the point (FX, FY) (fractions of the graph). */
bool plot_key_covers(const char *pos, double gw, double gh, double w, double h, double fx,
		     double fy);

/* For each panel of G, its axis ranges and its legend's place, the text plot_fig_finish writes
 * at the panel's placeholder (returned owned: NPAN strings, each owned); sets g->extra_w and
 * g->extra_h, the room added for legends outside.  TITLE: the figure's, or NULL. */
char **plot_fig_place_keys(struct fig *g, const char *title);

/* The legend text of series I (of N, in order of OUT.dat's blocks): the I-th --label, else
 * DFLT.  plot_fig_labels_check: with --label, N must be their number (else a usage error
 * naming both; WHAT: "series", "run directories"). */
const char *plot_fig_series_label(const struct fig *g, size_t i, const char *dflt);
int plot_fig_labels_check(const struct fig *g, size_t n, const char *what, struct bs_err *err);

/* A configuration key as legend words: its last part (after the last '.'), without a leading
 * VLLM_, lower case, '_' read as a space: env.VLLM_DECODE_BLOCK_BUCKET_STEP reads "decode
 * block bucket step", server.max_num_seqs "max num seqs" (returned owned). */
char *plot_key_words(const char *key);

/* A legend text's length in characters (UTF-8 sequences count once). */
size_t plot_text_len(const char *s);

/* With a log scale on AXIS ('x' or 'y'), V must be > 0: else an error naming PATH, COLUMN and
 * the series WHAT. */
int plot_log_check(const struct fig *g, char axis, double v, const char *path,
		   const char *column, const char *what, struct bs_err *err);

/* Writes OUT.dat and OUT.gp, then renders them with gnuplot unless SCRIPT_ONLY: all of the
 * figure's files appear together or none does. */
int plot_fig_finish(struct fig *g, const char *title, bool script_only, struct bs_err *err);

#endif
