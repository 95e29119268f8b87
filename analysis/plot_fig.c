/*
 * plot_fig: see plot_fig.h.
 */
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
	if (t->rows == 0)
		t->cols = t->cur_col;
	else if (t->cur_col != t->cols)
		t->bad = true;
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
	size_t len;
	char *txt = read_file(path, &len, err);
	if (!txt)
		return -1;
	struct csv_parser p;
	csv_init(&p, CSV_APPEND_NULL);
	if (csv_parse(&p, txt, len, tb_field, tb_row, t) != len || csv_fini(&p, tb_field, tb_row, t))
		t->bad = true;
	csv_free(&p);
	free(txt);
	if (t->bad || t->rows < 1) {
		plot_table_free(t);
		return bs_errf(err, BS_EXIT_INPUT, path, 0, NULL,
			       "not a CSV table with one header row and equal-length rows");
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

bool plot_number(const char *s, double *v)
{
	char *end;
	if (!*s)
		return false;
	*v = strtod(s, &end);
	return !*end && isfinite(*v);
}

/* ---- labels ---- */

/* An axis label with its unit: from a table of summary metrics, else the configuration key's
 * unit, else the name's suffix. */
char *plot_label(const char *name)
{
	static const char *const known[][2] = {
		{"workload.rate", "request rate (req/s)"},
		{"slo_attainment", "SLO attainment (fraction)"},
		{"goodput", "goodput (req/s)"},
		{"request_throughput", "throughput (req/s)"},
		{"output_throughput", "output throughput (tokens/s)"},
		{"total_token_throughput", "total throughput (tokens/s)"},
		{"padding_waste_ratio", "padding waste (fraction of computed tokens)"},
		{"compiles_warmup", "buckets compiled at warm-up (graphs)"},
		{"compiles_runtime", "graphs compiled at run time"},
		{"warmup_s", "warm-up time (s)"},
		{"utilization", "utilization (fraction)"},
		{"preemptions", "preemptions"},
		{"cards", "cards"},
	};
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (!strcmp(known[i][0], name))
			return xstrdup(known[i][1]);
	struct config c;
	config_init(&c);
	const struct cfg_entry *e = config_find(&c, name);
	char *r = e && e->def->unit && *e->def->unit ? xasprintf("%s (%s)", name, e->def->unit)
						     : NULL;
	config_release(&c);
	if (r)
		return r;
	size_t n = strlen(name);
	if (n > 3 && !strcmp(name + n - 3, "_ms"))
		return xasprintf("%s (ms)", name);
	if (n > 2 && !strcmp(name + n - 2, "_s"))
		return xasprintf("%s (s)", name);
	return xstrdup(name);
}

/* A gnuplot string literal (double quotes; backslash, quote escaped; "_" kept literal with the
 * noenhanced text mode set in the preamble). */
void plot_gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
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

/* Starts a data block (a series); returns its gnuplot index. */
size_t plot_fig_block(struct fig *g, const char *name)
{
	if (g->blocks)
		fputs("\n\n", g->dat);
	fprintf(g->dat, "# %s\n", name);
	return g->blocks++;
}

const char *const okabe_ito[OKABE_ITO_N] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
					"#56B4E9", "#D55E00", "#F0E442", "#000000"};

/* The preamble: terminals loop, palette, fonts.  The body follows, inside the loop. */
static char *preamble(const struct fig *g, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	double w = 3.5 * (g->wide ? 2 : g->cols), h = (g->wide ? 1.8 : 2.5) * g->rows;
	fprintf(f, "# bucketsim plot: renders %s.pdf, .svg, .png from %s.dat\n", g->out, g->out);
	fputs("out = ", f);
	plot_gp_str(f, g->out);
	fputs("\ndat = out.'.dat'\n", f);
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
		   "  set key top right box opaque samplen 2 spacing 1.1\n"
		   "  set grid lc rgb \"#dddddd\"\n"
		   "  set border lw 1\n"
		   "  set palette defined (0 \"#440154\", 1 \"#3b528b\", 2 \"#21918c\", "
		   "3 \"#5ec962\", 4 \"#fde725\")\n",
		w, h, w * 72, h * 72, (int)(w * 120 + 100), (int)(h * 120 + 60));
	for (size_t i = 0; i < sizeof okabe_ito / sizeof *okabe_ito; i++)
		fprintf(f, "  set linetype %zu lc rgb \"%s\" lw 1.5 pt %zu ps 0.8\n", i + 1,
			okabe_ito[i], (size_t[]){7, 5, 9, 11, 13, 15, 4, 6}[i]);
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

static int write_file(const char *path, const char *text, size_t len, struct bs_err *err)
{
	struct outset os;
	outset_init(&os);
	FILE *f = outset_open(&os, path, err);
	if (!f)
		return -1;
	fwrite(text, 1, len, f);
	return outset_commit(&os, err);
}

/* Writes OUT.dat and OUT.gp, then runs gnuplot unless SCRIPT_ONLY. */
int plot_fig_finish(struct fig *g, const char *title, bool script_only, struct bs_err *err)
{
	fclose(g->dat);
	fclose(g->gp);
	char *pre = preamble(g, title);
	char *script = xasprintf("%s%s%s}\n", pre, g->gpbuf, g->multi ? "  unset multiplot\n" : "");
	free(pre);
	char *pd = xasprintf("%s.dat", g->out), *pg = xasprintf("%s.gp", g->out);
	char *dir = xstrdup(g->out);
	char *slash = strrchr(dir, '/');
	int rc = 0;
	if (slash && slash != dir) {
		*slash = 0;
		rc = mkdir_p(dir, err);
	}
	if (!rc)
		rc = write_file(pd, g->datbuf, g->datlen, err);
	if (!rc)
		rc = write_file(pg, script, strlen(script), err);
	if (!rc && !script_only) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			execlp("gnuplot", "gnuplot", pg, (char *)NULL);
			fprintf(stderr, "bucketsim: error: cannot run gnuplot: %s (make deps installs "
					"gnuplot-nox; --script-only writes the script alone)\n",
				strerror(errno));
			_exit(127);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			rc = bs_errf(err, BS_EXIT_RUNTIME, pg, 0, NULL, "gnuplot failed");
		}
	}
	free(pd);
	free(pg);
	free(dir);
	free(script);
	free(g->datbuf);
	free(g->gpbuf);
	return rc;
}
