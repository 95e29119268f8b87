/*
 * cmd_plot: `bucketsim plot KIND INPUT... -o OUT`, figures for papers rendered by gnuplot: the
 * options, which kinds honour which (plot_main's table), and the dispatch to the kinds
 * (plot_sweep.c: sweep CSVs and capacity directories; plot_run.c: run directories).
 *
 * Every figure is two files written first, OUT.dat (the plotted numbers, one gnuplot data block
 * per series, blocks separated by two blank lines) and OUT.gp (the script, which reads OUT.dat
 * by its base name), then gnuplot, run beside them, renders OUT.pdf and OUT.svg (vector)
 * and OUT.png (web).  --script-only stops before gnuplot.  Kinds and their inputs are in
 * analysis/README.md ("Figures").
 *
 * Publication defaults: Okabe-Ito colour-blind-safe line colours, each series with its own dash
 * pattern, open point shape and width (plot_fig_style), viridis for heatmaps, axes labelled with
 * units, legends placed where they cover no point (plot_fig_finish), 10 pt fonts at a 3.5 in
 * column width (PDF/SVG) and 12 pt at 520 x 360 px a panel (PNG).  The axis options (--logx,
 * --logy, --key, --xlabel, --ylabel) and --ci apply to the kinds of plot_main's table; any other
 * kind refuses them rather than ignore them (every option: the axis options, --x, --y,
 * --series, --target, --window, --capacity, --ci, --baseline, --label and --panels).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/plot_kinds.h"
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
	OPT_BASELINE,
	OPT_LABEL,
	OPT_PANELS,
};

static const struct cli_opt opts[] = {
	{"output", OPT_OUT, 1, "OUT", "write OUT.dat, OUT.gp, OUT.pdf, OUT.svg, OUT.png (required; "
	 "a file name after its last '/')", "Output"},
	{"x", OPT_X, 1, "COLUMN", "sweep column on the x axis (default: per kind; line: required); refused by run "
	 "plots and a capacity directory",
	 "Sweep plots"},
	{"y", OPT_Y, 1, "COLUMN", "sweep column on the y axis (default: per kind; line: required); refused by "
	 "compiles, run plots and a capacity directory",
	 "Sweep plots"},
	{"series", OPT_SERIES, 1, "COL[,COL...]",
	 "sweep columns naming the series, one series per combination of their values "
	 "(default: preset when it varies, else strategy when it varies, else none); rows of one x "
	 "and series that differ in "
	 "another configuration column are an error; refused by run plots and a capacity "
	 "directory",
	 "Sweep plots"},
	{"target", OPT_TARGET, 1, "A", "attainment: the target line (default: capacity.json's, "
	 "else 0.9); refused by the other kinds", "Sweep plots"},
	{"capacity", OPT_CAPACITY, 1, "DIR", "attainment of a sweep: mark the capacities of "
	 "`capacity -o DIR` whose systems are series", "Sweep plots"},
	{"ci", OPT_CI, 1, "LEVEL", "attainment (of a sweep CSV), throughput, waste, line: Student-t confidence "
	 "interval of the mean over the seeds at LEVEL (0 < LEVEL < 1, e.g. 0.95) as error bars, bounds in OUT.dat; "
	 "none for a point of one seed", "Sweep plots"},
	{"baseline", OPT_BASELINE, 1, "SERIES", "attainment (of a sweep CSV), throughput, line, waste: "
	 "draw each other series' difference to SERIES (a series name as in the legend before "
	 "--label), at each x the mean over the seeds both have; with --ci, its paired "
	 "Student-t interval (seeds share their random numbers, so pairing removes their common "
	 "noise)", "Sweep plots"},
	{"label", OPT_LABEL, 1 | CLI_REPEAT, "TEXT", "legend text of the next series (repeat, in the order of "
	 "the legend: the inputs of cdf, the series of the sweep plots); as many as there are "
	 "series; refused by heatmap, timeline, bubbles", "Output"},
	{"panels", OPT_PANELS, 1, "P[,P...]", "cdf: the panels to draw, in order, from ttft, tpot, "
	 "e2e (default ttft,tpot,e2e); refused by the other kinds", "Run plots"},
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
				takes = (p->has_arg & 1) != 0;
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
	struct sopts so = {NULL, NULL, NULL, NULL, 0.9, false, 0, NULL};
	const char *panels = NULL;
	/* Reachable from a static until the next plot: the usage errors return without freeing. */
	static const char **labels;
	size_t nlabels = 0;
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
		case OPT_SERIES: {
			/* Column names, each once: an empty one (",", a trailing comma) or one given
			 * twice is refused rather than dropped. */
			so.series = st.optarg;
			const char *a = st.optarg;
			for (const char *p = a;;) {
				size_t n = strcspn(p, ",");
				if (!n)
					return cli_usage(self, "--series '%s': an empty column name", a);
				for (const char *q = a; q < p; q += strcspn(q, ",") + 1)
					if (strcspn(q, ",") == n && !strncmp(q, p, n))
						return cli_usage(self, "--series '%s': column '%.*s' given "
								 "twice", a, (int)n, p);
				if (!p[n])
					break;
				p += n + 1;
			}
			break;
		}
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
		case OPT_BASELINE:
			so.baseline = st.optarg;
			break;
		case OPT_LABEL:
			if (!nlabels) {
				free((void *)labels);
				labels = NULL;
			}
			labels = xrealloc(labels, (nlabels + 1) * sizeof *labels);
			labels[nlabels++] = st.optarg;
			break;
		case OPT_PANELS: {
			/* ttft, tpot, e2e, each once. */
			const char *a = st.optarg;
			for (const char *p = a;;) {
				size_t n = strcspn(p, ",");
				if (!((n == 4 && (!strncmp(p, "ttft", 4) || !strncmp(p, "tpot", 4))) ||
				      (n == 3 && !strncmp(p, "e2e", 3)))) {
					return cli_usage(self, "--panels '%s': unknown panel '%.*s' "
							 "(choices: ttft, tpot, e2e)", a, (int)n, p);
				}
				for (const char *q = a; q < p; q += strcspn(q, ",") + 1)
					if (strcspn(q, ",") == n && !strncmp(q, p, n)) {
						return cli_usage(self, "--panels '%s': panel '%.*s' "
								 "given twice", a, (int)n, p);
					}
				if (!p[n])
					break;
				p += n + 1;
			}
			panels = a;
			break;
		}
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
		bool baseline, label, panels;
	} kinds[] = {
		{.name = "attainment", .sweep = true, .logx = true, .logy = true, .key = true,
		 .ci = true, .xlabel = true, .ylabel = true, .x = true, .y = true,
		 .series = true, .target = true, .baseline = true, .label = true},
		{.name = "throughput", .sweep = true, .logx = true, .logy = true, .key = true,
		 .ci = true, .xlabel = true, .ylabel = true, .x = true, .y = true,
		 .series = true, .baseline = true, .label = true},
		{.name = "line", .sweep = true, .logx = true, .logy = true, .key = true,
		 .ci = true, .xlabel = true, .ylabel = true, .x = true, .y = true,
		 .series = true, .baseline = true, .label = true},
		{.name = "waste", .sweep = true, .logx = true, .logy = true, .key = true,
		 .ci = true, .xlabel = true, .ylabel = true, .x = true, .y = true,
		 .series = true, .baseline = true, .label = true},
		{.name = "compiles", .sweep = true, .logy = true, .key = true, .xlabel = true,
		 .x = true, .series = true, .label = true},
		{.name = "cdf", .logx = true, .key = true, .ylabel = true, .label = true,
		 .panels = true},
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
	/* OUT names files: an empty last part ('', 'fig/') would write hidden '.dat', '.gp'. */
	const char *obase = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
	if (!*obase || !strcmp(obase, ".") || !strcmp(obase, ".."))
		return cli_usage(self, "-o OUT is a path prefix: OUT.pdf, OUT.svg, OUT.png are "
				       "written; it needs a file name after its last '/', got '%s'",
				 out);
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
		{so.baseline != NULL, kinds[ki].baseline, "--baseline"},
		{nlabels > 0, kinds[ki].label, "--label"},
		{panels != NULL, kinds[ki].panels, "--panels"},
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
	for (int i = 0; i < nin; i++) {
		if (run_kind && !is_dir(in[i]))
			return cli_usage(self, "%s: not a run directory", in[i]);
		/* A run directory is complete exactly when it has its marker (analysis/README.md,
		 * "The output directory as a whole"). */
		char *mark = run_kind ? xasprintf("%s/%s", in[i], OUTSET_MARKER) : NULL;
		bool complete = !mark || access(mark, F_OK) == 0;
		free(mark);
		if (!complete) {
			struct bs_err e = {0};
			bs_errf(&e, BS_EXIT_INPUT, in[i], 0, NULL, "the run directory is incomplete "
				"(no %s: its run was interrupted or is still writing, or it is not a "
				"`run -o` directory); run it again", OUTSET_MARKER);
			return cli_fail(&e);
		}
	}
	if (so.capacity && (strcmp(kind, "attainment") || is_dir(in[0])))
		return cli_usage(self, "--capacity marks capacities on the attainment plot of a sweep "
				       "CSV");
	if ((so.x || so.y || so.series) && !strcmp(kind, "attainment") && is_dir(in[0]))
		return cli_usage(self, "--x, --y and --series choose the columns of a sweep CSV; a "
				       "capacity directory's curve has its own");
	if (so.baseline && is_dir(in[0]))
		return cli_usage(self, "--baseline compares the series of a sweep CSV; "
					     "a capacity directory's curve is one seed's");
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
	g.labels = labels;
	g.nlabels = nlabels;
	struct bs_err err = {0};
	int rc;
	if (!strcmp(kind, "attainment") && is_dir(in[0]))
		rc = plot_capacity(in[0], &so, &g, &err);
	else if (!strcmp(kind, "compiles"))
		rc = plot_compiles(in[0], &so, &g, &err);
	else if (sweep_kind)
		rc = plot_sweep_kind(kind, in[0], &so, &g, &err);
	else if (!strcmp(kind, "cdf"))
		rc = plot_cdf(in, nin, panels, &g, &err);
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
		plot_fig_free_parts(&g);
		return plot_err_print(&err);
	}
	return plot_fig_finish(&g, title, script_only, &err) ? plot_err_print(&err) : 0;
}

const struct cli_cmd cmd_plot = {
	"plot",
	"bucketsim plot KIND INPUT... -o OUT [--x COL] [--y COL] [--series COL[,COL...]] [--ci LEVEL] "
	"[--logx] [--logy] [--key POS]",
	"draw a figure (PDF, SVG, PNG) from sweep, capacity or run outputs with gnuplot",
	"Kinds: attainment (SLO attainment vs rate per system, from a sweep CSV or a capacity\n"
	"directory, with the target line and capacities), throughput (vs batch size or\n"
	"concurrency), line (any sweep column --y against any other --x, one line per system),\n"
	"waste (padding waste vs buckets; also from the CSV of buckets --advise --budgets),\n"
	"compiles (warm-up and run-time compiles and their time per strategy, stacked) from a\n"
	"sweep CSV; cdf (TTFT, TPOT, E2E CDFs of one or more run directories), heatmap (bucket\n"
	"usage, buckets.csv), timeline (monitor.csv), bubbles (pipeline lanes, batches.csv of a\n"
	"cluster.pp > 1 run) from run directories.  Sweep plots draw the mean over the seeds of\n"
	"each point (--ci adds its confidence interval;\n"
	"--baseline draws paired differences to one series).  Each series has its own dash,\n"
	"point shape and width, and series that coincide are named on stderr; legends go where\n"
	"they cover no point, else below the graph.  Writes OUT.dat and OUT.gp, then\n"
	"OUT.pdf, OUT.svg and OUT.png; OUT.gp names its files relative to its own directory, where\n"
	"gnuplot runs, so `cd DIR && gnuplot OUT.gp` re-renders it there or in a copy of DIR.\n"
	"An option a kind cannot honour is an error (see each option).  Nothing is written when\n"
	"there is nothing to plot, when a cell is neither empty nor a finite number, or when a\n"
	"run directory is incomplete (no .bucketsim.done).  See analysis/README.md.",
	"  bucketsim plot line out/rate/sweep.csv --x workload.rate --y p99_ttft_ms -o fig/p99ttft\n"
	"  bucketsim plot line out/rate/sweep.csv --x workload.rate --y mean_tpot_ms --ci 0.95 \\\n"
	"      --logy --key 'top left' -o fig/tpot\n"
	"  bucketsim plot attainment out/rate/sweep.csv --series preset -o fig/attainment\n"
	"  bucketsim plot attainment out/cap -o fig/capacity\n"
	"  bucketsim plot cdf out/vllm out/distserve --panels ttft,tpot --label vLLM --label DistServe \\\n"
	"      -o fig/cdf\n"
	"  bucketsim plot line out/rate/sweep.csv --x workload.rate --y slo_attainment --ci 0.95 \\\n"
	"      --baseline vllm -o fig/delta\n"
	"  bucketsim plot heatmap out/run -o fig/buckets\n",
	opts, plot,
};
