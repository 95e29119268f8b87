/*
 * plot_fig: see plot_fig.h.
 */
#include <csv.h>
#include <ctype.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/plot_fig.h"
#include "sim/commands.h"
#include "sim/config.h"

/* ---- tables (libcsv) ---- */


static void tb_field(void *s, size_t len, void *ctx)
{
	struct table *t = ctx;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->cell = xrealloc(t->cell, t->cap * sizeof *t->cell);
	}
	char *c = xmalloc(len + 1);
	memcpy(c, s, len);
	c[len] = 0;
	t->cell[t->n++] = c;
	t->cur_col++;
}

static void tb_row(int ch, void *ctx)
{
	(void)ch;
	struct table *t = ctx;
	if (t->rows == 0) {
		t->cols = t->cur_col;
	} else if (t->cur_col != t->cols && !t->bad) {
		t->bad = true;
		t->bad_line = t->line;
		t->bad_cols = t->cur_col;
	}
	t->rows++;
	t->cur_col = 0;
}

void plot_table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->cell[i]);
	free(t->cell);
	memset(t, 0, sizeof *t);
}

int plot_table_read(const char *path, struct table *t, struct bs_err *err)
{
	memset(t, 0, sizeof *t);
	/* A run's table may be larger than a file read whole (requests.csv of millions of
	 * requests): no limit but one line's. */
	static const struct read_lim lim = {0, NULL, BS_RECORD_MAX, 0};
	size_t len;
	char *txt = read_file_lim(path, &len, &lim, err);
	if (!txt)
		return -1;
	const char *nul = memchr(txt, 0, len);
	if (nul) {
		long line = 1;
		for (const char *q = txt; q < nul; q++)
			line += *q == '\n';
		free(txt);
		return bs_errf(err, BS_EXIT_INPUT, path, line, NULL, "NUL byte in the table");
	}
	/* Fed a line at a time, so that a row's end (tb_row) knows its line: the line a row
	 * ends on (a quoted field may hold newlines). */
	struct csv_parser p;
	csv_init(&p, CSV_APPEND_NULL);
	bool parse_error = false;
	t->line = 1;
	for (size_t off = 0; off < len && !parse_error; t->line++) {
		const char *nl = memchr(txt + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (txt + off)) + 1 : len - off;
		if (csv_parse(&p, txt + off, n, tb_field, tb_row, t) != n)
			parse_error = true;
		off += n;
	}
	if (!parse_error) {
		t->line--;   /* a last row without a newline ends on the last line */
		if (csv_fini(&p, tb_field, tb_row, t))
			parse_error = true;
	}
	csv_free(&p);
	free(txt);
	long line = t->line;
	if (parse_error || t->bad || t->rows < 1) {
		int rc;
		if (t->bad)
			rc = bs_errf(err, BS_EXIT_INPUT, path, t->bad_line, NULL,
				     "a row of %zu field%s, the header has %zu (a table needs rows of "
				     "equal length)", t->bad_cols, t->bad_cols == 1 ? "" : "s", t->cols);
		else if (parse_error)
			rc = bs_errf(err, BS_EXIT_INPUT, path, line, NULL,
				     "not a CSV table (malformed quoting)");
		else
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, NULL,
				     "not a CSV table: no header row");
		plot_table_free(t);
		return rc;
	}
	return 0;
}

const char *plot_cell(const struct table *t, size_t r, size_t c)
{
	return t->cell[r * t->cols + c];
}

long plot_col_of(const struct table *t, const char *name)
{
	for (size_t c = 0; c < t->cols; c++)
		if (!strcmp(plot_cell(t, 0, c), name))
			return (long)c;
	return -1;
}

int plot_need_col(const struct table *t, const char *path, const char *name, long *c,
		    struct bs_err *err)
{
	*c = plot_col_of(t, name);
	if (*c < 0)
		return bs_errf(err, BS_EXIT_INPUT, path, 0, name, "no such column");
	return 0;
}

int plot_run_table(const char *dir, const char *file, const char *const *names, size_t n,
		   long *cols, struct table *t, struct bs_err *err)
{
	char *p = xasprintf("%s/%s", dir, file);
	int rc = plot_table_read(p, t, err);
	for (size_t i = 0; i < n && !rc; i++)
		rc = plot_need_col(t, p, names[i], &cols[i], err);
	free(p);
	if (rc)
		plot_table_free(t);
	return rc;
}

void plot_print_columns(FILE *f, const struct table *t)
{
	for (size_t i = 0; i < t->cols; i++)
		fprintf(f, "%s%s", i ? ", " : "", plot_cell(t, 0, i));
}

int plot_need_col_list(const struct table *t, const char *path, const char *name, long *c,
		       struct bs_err *err)
{
	*c = plot_col_of(t, name);
	if (*c >= 0)
		return 0;
	/* A sweep's header outgrows bs_err's message: the line is printed here, and ERR keeps the
	 * exit code with an empty message (plot_err_print prints nothing more). */
	fprintf(stderr, "bucketsim: error: %s: field '%s': no such column (columns: ", path, name);
	plot_print_columns(stderr, t);
	fputs(")\n", stderr);
	return bs_errf(err, BS_EXIT_INPUT, path, 0, name, "%s", "");
}

int plot_err_print(const struct bs_err *err)
{
	if (err->msg[0])
		bs_err_print(err);
	return err->code ? err->code : BS_EXIT_RUNTIME;
}

bool plot_number(const char *s, double *v)
{
	/* As every number bucketsim reads (parse_f64: decimal only, no blanks, no hex, no
	 * inf/nan); the tables plot reads are bucketsim's own outputs. */
	char why[128];
	return *s && !parse_f64(s, -DBL_MAX, DBL_MAX, v, why, sizeof why);
}

int plot_cell_number(const struct table *t, size_t r, size_t c, const char *path, double *v,
		     struct bs_err *err)
{
	const char *s = plot_cell(t, r, c);
	if (!*s)
		return 0;
	if (plot_number(s, v))
		return 1;
	return bs_errf(err, BS_EXIT_INPUT, path, (long)r + 1, plot_cell(t, 0, c),
		       "'%s' is not a finite number", s);
}

/* ---- labels ---- */

/* A word of a column name as a label shows it. */
static const char *label_word(const char *w)
{
	static const char *const abbr[][2] = {
		{"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2e", "E2E"},
		{"e2el", "E2E latency"}, {"kv", "KV"}, {"slo", "SLO"},
	};
	for (size_t i = 0; i < sizeof abbr / sizeof *abbr; i++)
		if (!strcmp(abbr[i][0], w))
			return abbr[i][1];
	return w;
}

/* The unit of a name without a unit suffix, from its quantity word (W[0..N)), or NULL. */
static const char *quantity_unit(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(w[i], "throughput"))
			return !strcmp(w[0], "request") ? "req/s" : "tokens/s";
		if (!strcmp(w[i], "goodput"))
			return "req/s";
		if (!strcmp(w[i], "attainment") || !strcmp(w[i], "utilization") ||
		    !strcmp(w[i], "ratio"))
			return "fraction";
	}
	return NULL;
}

/* An axis label with its unit: see plot_fig.h. */
char *plot_label(const char *name)
{
	static const char *const phrase[][2] = {
		{"workload.rate", "request rate (req/s)"},
		{"padding_waste_ratio", "padding waste (fraction of padded tokens)"},
		{"compiles_warmup", "buckets compiled at warm-up (graphs)"},
		{"compiles_runtime", "graphs compiled at run time"},
		{"warmup_s", "warm-up time (s)"},
	};
	for (size_t i = 0; i < sizeof phrase / sizeof *phrase; i++)
		if (!strcmp(phrase[i][0], name))
			return xstrdup(phrase[i][1]);
	size_t len = strlen(name);
	if (strchr(name, '.')) {
		/* A configuration key: its unit from the key table, else its suffix's. */
		struct config c;
		config_init(&c);
		const struct cfg_entry *e = config_find(&c, name);
		char *r = e && e->def->unit && *e->def->unit
				  ? xasprintf("%s (%s)", name, e->def->unit)
				  : NULL;
		config_release(&c);
		if (r)
			return r;
		if (len > 3 && !strcmp(name + len - 3, "_ms"))
			return xasprintf("%s (ms)", name);
		if (len > 2 && !strcmp(name + len - 2, "_s"))
			return xasprintf("%s (s)", name);
		return xstrdup(name);
	}
	/* Words of a snake_case column. */
	char *buf = xstrdup(name);
	char **w = xmalloc((len + 1) * sizeof *w);
	size_t n = 0;
	for (char *tok = strtok(buf, "_"); tok; tok = strtok(NULL, "_"))
		w[n++] = tok;
	const char *unit = NULL;
	if (n > 2 && !strcmp(w[n - 2], "req") && !strcmp(w[n - 1], "s")) {
		unit = "req/s";
		n -= 2;
	} else if (n > 1 && (!strcmp(w[n - 1], "ms") || !strcmp(w[n - 1], "s"))) {
		unit = w[n - 1];
		n--;
	} else if (n > 1 && (!strcmp(w[n - 1], "ratio") || !strcmp(w[n - 1], "fraction"))) {
		unit = "fraction";
		n--;
	} else {
		unit = quantity_unit(w, n);
	}
	char *r = NULL;
	size_t rlen = 0;
	FILE *f = open_memstream(&r, &rlen);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? " " : "", label_word(w[i]));
	if (!n)
		fputs(name, f);
	if (unit)
		fprintf(f, " (%s)", unit);
	fclose(f);
	free(w);
	free(buf);
	return r;
}

/* ---- confidence intervals ---- */

double plot_ci_halfwidth(double level, const double *v, size_t n, double mean)
{
	if (n < 2)
		return NAN;
	double sd = gsl_stats_sd_m(v, 1, n, mean);
	return gsl_cdf_tdist_Pinv((1 + level) / 2, (double)(n - 1)) * sd / sqrt((double)n);
}

/* A gnuplot string literal that gnuplot reads back as S, byte for byte (see plot_fig.h). */
void plot_gp_str(FILE *f, const char *s)
{
	/* Double quotes, with gnuplot's escapes: \\ and \" for themselves, \n and \t, and an
	 * octal escape for every other control character and for the backquote (gnuplot runs
	 * `command` in a shell wherever a raw backquote appears in a double-quoted string;
	 * "\140" is a backquote that it does not).  An octal escape takes every octal digit
	 * after its leading 0 ("\0331" is one byte), so one followed by a digit 0-7 ends the
	 * literal, which continues after the concatenation operator: "\033"."1".  Single quotes
	 * cannot hold every text: gnuplot 5.4 misreads a doubled quote next to another ('''95'
	 * and 'O''''Brien' are errors), and a newline cannot be written in them. */
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\\' || c == '"') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c < 0x20 || c == 0x7f || c == '`') {
			fprintf(f, "\\%03o", c);
			if (s[1] >= '0' && s[1] <= '7')
				fputs("\".\"", f);
		} else {
			fputc(c, f);
		}
	}
	fputc('"', f);
}

/* ---- the script ---- */


void plot_fig_init(struct fig *g, const char *out)
{
	memset(g, 0, sizeof *g);
	g->out = out;
	g->dat = open_memstream(&g->datbuf, &g->datlen);
	g->gp = open_memstream(&g->gpbuf, &g->gplen);
}

/* Ends the last block's bytes where the data written so far ends. */
static void block_end(struct fig *g)
{
	fflush(g->dat);
	if (g->blocks)
		g->blk[g->blocks - 1].end = g->datlen;
}

/* Starts a data block (a series); returns its gnuplot index. */
size_t plot_fig_block(struct fig *g, const char *name)
{
	block_end(g);
	if (g->blocks)
		fputs("\n\n", g->dat);
	/* One comment line whatever the name holds (a newline in it would start data lines). */
	fputs("# ", g->dat);
	for (const char *p = name; *p; p++)
		fputc((unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p, g->dat);
	fputc('\n', g->dat);
	fflush(g->dat);
	g->blk = xrealloc(g->blk, (g->blocks + 1) * sizeof *g->blk);
	g->blk[g->blocks] = (struct fig_block){g->datlen, g->datlen, (long)g->npan - 1,
					      xstrdup(name)};
	return g->blocks++;
}

const char *const okabe_ito[OKABE_ITO_N] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
					"#56B4E9", "#D55E00", "#F0E442", "#000000"};

/* OUT's base name: the script names its files by it, and runs in OUT's directory. */
static const char *out_base(const char *out)
{
	const char *slash = strrchr(out, '/');
	return slash ? slash + 1 : out;
}

/* The preamble: terminals loop, palette, fonts.  The body follows, inside the loop. */
static char *preamble(const struct fig *g, const char *title)
{
	const char *base = out_base(g->out);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	double w = 3.5 * (g->wide ? 2 : g->cols), h = (g->wide ? 1.8 : 2.5) * g->rows;
	/* The comment names the files on one line whatever their name holds (a newline would
	 * start a command). */
	char *shown = xstrdup(base);
	for (char *p = shown; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fprintf(f, "# bucketsim plot: renders %s.pdf, .svg, .png from %s.dat; run it in its own "
		   "directory\n", shown, shown);
	free(shown);
	/* Every file name gnuplot sees starts with "./": gnuplot reads a name beginning with '<'
	 * as a command to run and writes to one beginning with '|' through a shell. */
	char *rel = xasprintf("./%s", base);
	fputs("out = ", f);
	plot_gp_str(f, rel);
	free(rel);
	fputs("\ndat = out.'.dat'\n", f);
	w += g->extra_w * (g->wide ? 1 : g->cols);
	h += g->extra_h * g->rows;
	fprintf(f, "do for [fmt in \"pdf svg png\"] {\n"
		   "  if (fmt eq \"pdf\") { set terminal pdfcairo size %.2fin,%.2fin font "
		   "\"Helvetica,10\" linewidth 1.5 }\n"
		   "  if (fmt eq \"svg\") { set terminal svg size %.0f,%.0f font \"Helvetica,10\" "
		   "linewidth 1.5 }\n"
		   "  if (fmt eq \"png\") { set terminal pngcairo size %d,%d font \"Helvetica,12\" "
		   "linewidth 1.5 }\n"
		   "  set output out.'.'.fmt\n"
		   "  reset\n"
		   "  set termoption noenhanced\n"
		   "  set datafile separator whitespace\n"
		   "  set key top right box opaque samplen 2 spacing 1.1 width 2\n"
		   "  set grid lc rgb \"#dddddd\"\n"
		   "  set border lw 1\n"
		   "  set palette defined (0 \"#440154\", 1 \"#3b528b\", 2 \"#21918c\", "
		   "3 \"#5ec962\", 4 \"#fde725\")\n",
		w, h, w * 96, h * 96, (int)(w * 120 + 100), (int)(h * 120 + 60));
	for (size_t i = 0; i < sizeof okabe_ito / sizeof *okabe_ito; i++)
		fprintf(f, "  set linetype %zu lc rgb \"%s\" lw 1.5 pt %d ps 0.8\n", i + 1,
			okabe_ito[i], plot_point_types[i]);
	if (g->multi) {
		fprintf(f, "  set multiplot layout %d,%d", g->rows, g->cols);
		if (title) {
			fputs(" title ", f);
			plot_gp_str(f, title);
		}
		fputc('\n', f);
	} else if (title) {
		fputs("  set title ", f);
		plot_gp_str(f, title);
		fputc('\n', f);
	}
	fclose(f);
	return buf;
}

void plot_fig_labels(struct fig *g, const char *xl, const char *yl)
{
	xl = g->ax.xlabel ? g->ax.xlabel : xl;
	yl = g->ax.ylabel ? g->ax.ylabel : yl;
	if (xl) {
		fputs("  set xlabel ", g->gp);
		plot_gp_str(g->gp, xl);
		fputc('\n', g->gp);
	}
	if (yl) {
		fputs("  set ylabel ", g->gp);
		plot_gp_str(g->gp, yl);
		fputc('\n', g->gp);
	}
}

void plot_fig_axes(struct fig *g)
{
	if (g->ax.logx)
		fputs("  set logscale x\n", g->gp);
	if (g->ax.logy)
		fputs("  set logscale y\n", g->gp);
	fflush(g->gp);
	block_end(g);
	g->pan = xrealloc(g->pan, (g->npan + 1) * sizeof *g->pan);
	g->pan[g->npan++] = (struct fig_panel){.mark = g->gplen, .name = NULL, .ycols = 1,
					       .logx = g->ax.logx, .logy = g->ax.logy};
}

void plot_fig_free_parts(struct fig *g)
{
	for (size_t i = 0; i < g->npan; i++)
		free(g->pan[i].name);
	free(g->pan);
	for (size_t b = 0; b < g->blocks; b++)
		free(g->blk[b].name);
	free(g->blk);
	g->pan = NULL;
	g->blk = NULL;
	g->npan = g->blocks = 0;
}

void plot_fig_panel_name(struct fig *g, const char *name)
{
	free(g->pan[g->npan - 1].name);
	g->pan[g->npan - 1].name = xstrdup(name);
}

void plot_fig_range(struct fig *g, char axis, int i, double v)
{
	struct fig_panel *p = &g->pan[g->npan - 1];
	if (axis == 'x') {
		p->xfix[i] = true;
		p->xr[i] = v;
	} else {
		p->yfix[i] = true;
		p->yr[i] = v;
	}
}

const char *plot_fig_series_label(const struct fig *g, size_t i, const char *dflt)
{
	return i < g->nlabels ? g->labels[i] : dflt;
}

int plot_fig_labels_check(const struct fig *g, size_t n, const char *what, struct bs_err *err)
{
	if (!g->nlabels || g->nlabels == n)
		return 0;
	return bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--label", "%zu label%s given, the plot has "
		       "%zu %s (one --label per series, in the order of the legend)", g->nlabels,
		       g->nlabels == 1 ? "" : "s", n, what);
}

char *plot_key_words(const char *key)
{
	const char *dot = strrchr(key, '.');
	const char *k = dot ? dot + 1 : key;
	if (!strncmp(k, "VLLM_", 5) && k[5])
		k += 5;
	char *r = xstrdup(k);
	for (char *p = r; *p; p++)
		*p = *p == '_' ? ' ' : (char)tolower((unsigned char)*p);
	return r;
}

size_t plot_text_len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void plot_fig_title(struct fig *g, const char *t)
{
	fputs(" title ", g->gp);
	plot_gp_str(g->gp, t);
	struct fig_panel *p = &g->pan[g->npan - 1];
	p->nent++;
	/* A title of several lines is as wide as its longest line and one entry per line. */
	size_t l = 0;
	char *c = xstrdup(t);
	for (char *save = NULL, *w = strtok_r(c, "\n", &save); w; w = strtok_r(NULL, "\n", &save)) {
		l = plot_text_len(w) > l ? plot_text_len(w) : l;
		p->nent += w != c;
	}
	free(c);
	p->maxlen = l > p->maxlen ? l : p->maxlen;
}

/* Open shapes (circle, square, triangle up, diamond, triangle down, pentagon) and strokes
 * (plus, cross, star): drawn over one another, each still shows. */
const int plot_point_types[PLOT_POINT_TYPES_N] = {6, 4, 8, 12, 10, 14, 1, 2, 3};

double plot_style_lw(size_t i, size_t n)
{
	return n > 1 ? 1 + 1.2 * (double)(n - 1 - i) / (double)(n - 1) : 1;
}

void plot_fig_style(struct fig *g, size_t i, size_t n, bool points)
{
	double f = n > 1 ? (double)(n - 1 - i) / (double)(n - 1) : 0;
	fprintf(g->gp, " lc rgb \"%s\" dt %zu lw %.3g", okabe_ito[i % OKABE_ITO_N], i % 5 + 1,
		plot_style_lw(i, n));
	if (points)
		fprintf(g->gp, " pt %d ps %.3g", plot_point_types[i % PLOT_POINT_TYPES_N],
			0.7 + 0.7 * f);
}

int plot_log_check(const struct fig *g, char axis, double v, const char *path,
		   const char *column, const char *what, struct bs_err *err)
{
	if (!(axis == 'x' ? g->ax.logx : g->ax.logy) || v > 0)
		return 0;
	return bs_errf(err, BS_EXIT_INPUT, path, 0, column,
		       "--log%c needs values > 0 on the %c axis, got %.6g (%s)", axis, axis, v, what);
}

/* ---- coinciding series ---- */

/* The first two fields of each data line of block B, as text: what is drawn as the curve. */
static char *block_curve(const struct fig *g, const struct fig_block *b)
{
	char *r = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&r, &len);
	for (size_t off = b->start; off < b->end;) {
		const char *l = g->datbuf + off, *nl = memchr(l, '\n', b->end - off);
		size_t n = nl ? (size_t)(nl - l) : b->end - off;
		off += n + 1;
		if (!n || *l == '#')
			continue;
		const char *sp = memchr(l, ' ', n);
		const char *sp2 = sp ? memchr(sp + 1, ' ', n - (size_t)(sp + 1 - l)) : NULL;
		fwrite(l, 1, sp2 ? (size_t)(sp2 - l) : n, f);
		fputc('\n', f);
	}
	fclose(f);
	return r;
}

/* Series of one panel whose curves (x and y of every line) are the same: a warning naming
 * them, for each pair. */
static void warn_coinciding(const struct fig *g)
{
	char **c = xcalloc(g->blocks + 1, sizeof *c);
	for (size_t b = 0; b < g->blocks; b++)
		c[b] = g->blk[b].panel >= 0 ? block_curve(g, &g->blk[b]) : NULL;
	for (size_t a = 0; a < g->blocks; a++)
		for (size_t b = a + 1; b < g->blocks; b++) {
			if (!c[a] || !c[b] || g->blk[a].panel != g->blk[b].panel || !*c[a] ||
			    strcmp(c[a], c[b]))
				continue;
			const char *pn = g->pan[g->blk[a].panel].name;
			fprintf(stderr, "bucketsim: warning: %s: series '%s' and '%s' coincide%s%s%s "
				"(the same points: drawn one over the other, told apart by their "
				"dashes, widths and point shapes)\n", g->out, g->blk[a].name,
				g->blk[b].name, pn ? " in the " : "", pn ? pn : "", pn ? " panel" : "");
		}
	for (size_t b = 0; b < g->blocks; b++)
		free(c[b]);
	free(c);
}

/* Writes OUT.dat and OUT.gp, then runs gnuplot on them unless SCRIPT_ONLY: every file of the
 * figure is written in a temporary directory beside OUT (gnuplot runs there) and they appear
 * together, or none does (an outset of OUT's directory). */
int plot_fig_finish(struct fig *g, const char *title, bool script_only, struct bs_err *err)
{
	block_end(g);
	fclose(g->dat);
	fclose(g->gp);
	warn_coinciding(g);
	char **ins = plot_fig_place_keys(g, title);
	char *pre = preamble(g, title);
	char *body = NULL;
	size_t blen = 0, at = 0;
	FILE *bf = open_memstream(&body, &blen);
	for (size_t i = 0; i < g->npan; i++) {
		fwrite(g->gpbuf + at, 1, g->pan[i].mark - at, bf);
		fputs(ins[i], bf);
		at = g->pan[i].mark;
		free(ins[i]);
	}
	fwrite(g->gpbuf + at, 1, g->gplen - at, bf);
	fclose(bf);
	free(ins);
	plot_fig_free_parts(g);
	char *script = xasprintf("%s%s%s}\n", pre, body, g->multi ? "  unset multiplot\n" : "");
	free(body);
	free(pre);
	char *dir = xstrdup(g->out);
	char *slash = strrchr(dir, '/');
	const char *base = out_base(g->out);
	if (slash && slash != dir)
		*slash = 0;
	else if (slash)
		dir[1] = 0; /* OUT in / */
	else
		strcpy(dir, ".");
	char *nd = xasprintf("%s.dat", base), *ng = xasprintf("%s.gp", base);
	struct outset os;
	int rc = outset_init_files_in(&os, dir, err);
	if (!rc) {
		FILE *fd = outset_open_in(&os, nd, err), *fg = fd ? outset_open_in(&os, ng, err) : NULL;
		if (fg) {
			fwrite(g->datbuf, 1, g->datlen, fd);
			fputs(script, fg);
		} else {
			rc = -1;
		}
	}
	if (!rc && !script_only) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			/* In the temporary directory, where the script finds OUT.dat by its base
			 * name; "./" so that gnuplot reads the name as a file's. */
			char *script_name = xasprintf("./%s", ng);
			if (chdir(outset_tmpdir(&os))) {
				fprintf(stderr, "bucketsim: error: %s: cannot enter: %s\n",
					outset_tmpdir(&os), strerror(errno));
				_exit(127);
			}
			execlp("gnuplot", "gnuplot", script_name, (char *)NULL);
			fprintf(stderr, "bucketsim: error: cannot run gnuplot: %s (make deps installs "
					"gnuplot-nox; --script-only writes the script alone)\n",
				strerror(errno));
			_exit(127);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			char *pg = xasprintf("%s.gp", g->out);
			rc = bs_errf(err, BS_EXIT_RUNTIME, pg, 0, NULL, "gnuplot failed");
			free(pg);
		}
		static const char *const fmts[] = {"pdf", "svg", "png"};
		for (size_t i = 0; !rc && i < sizeof fmts / sizeof *fmts; i++) {
			char *n = xasprintf("%s.%s", base, fmts[i]);
			rc = outset_add_in(&os, n, err);
			free(n);
		}
	}
	if (!rc)
		rc = outset_commit(&os, err);
	else
		outset_abort(&os);
	free(nd);
	free(ng);
	free(dir);
	free(script);
	free(g->datbuf);
	free(g->gpbuf);
	return rc;
}
