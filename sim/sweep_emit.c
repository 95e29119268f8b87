/*
 * sweep_emit: what `bucketsim sweep --emit` writes instead of running the points.  --emit
 * parallel prints one `bucketsim run` command per unfinished point (and keeps them in
 * DIR/commands.txt); --emit slurm writes DIR/sweep.sbatch, a job array whose tasks each run as
 * many consecutive lines of commands.txt as the time estimate fits in --task-seconds.  Every
 * word written is shell-quoted here, and a word holding a control character is refused before
 * anything is written (sweep_emit_word_check).  The commands are the points' command lines
 * (sweep_point_prepare, sim/sweep_points.c), the same the local runner (-j) executes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/sweep_csv.h"
#include "sim/sweep_emit.h"

/* Shell word: bare when it has only safe characters, else single-quoted. */
static void shell_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			    "_./:=,@+-%") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* The first control character (a byte below 0x20, or 0x7f) of S, or NULL. */
static const char *control_char(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return s;
	return NULL;
}

/* Refuses a word that --emit would write with a control character in it: a newline splits the
 * command over two lines of commands.txt, and GNU parallel or the Slurm script would run the
 * second as a command of its own; no quoting survives that.  WHAT names the word. */
int sweep_emit_word_check(const char *what, const char *w, struct bs_err *err)
{
	const char *c = control_char(w);
	if (!c)
		return 0;
	char shown[160];
	size_t n = 0;
	const char *q = w;
	for (; *q && n + 6 < sizeof shown; q++) {
		unsigned char b = (unsigned char)*q;
		if (b < 0x20 || b == 0x7f)
			n += (size_t)snprintf(shown + n, sizeof shown - n, "\\x%02x", b);
		else
			shown[n++] = (char)b;
	}
	shown[n] = 0;
	return bs_errf(err, BS_EXIT_USAGE, NULL, 0, "--emit", "%s '%s%s' holds a control "
		       "character (\\x%02x): an emitted command line would be split there",
		       what, shown, *q ? "..." : "", (unsigned char)*c);
}

static void write_command(FILE *f, const char *exe, const char *dir, const struct point *p)
{
	shell_word(f, exe);
	for (size_t i = 0; i < p->argc; i++) {
		fputc(' ', f);
		shell_word(f, p->argv[i]);
	}
	char *o = xasprintf("%s/points/%s", dir, p->name);
	char *e = xasprintf("%s/points/%s.err", dir, p->name);
	fputs(" -o ", f);
	shell_word(f, o);
	fputs(" 2>", f);
	shell_word(f, e);
	/* the standard error file is kept only when the run wrote to it, as -j keeps it */
	fputs("; s=$?; [ -s ", f);
	shell_word(f, e);
	fputs(" ] || rm -f ", f);
	shell_word(f, e);
	fputs("; (exit $s)\n", f);
	free(o);
	free(e);
}

/* The most array tasks an emitted Slurm script asks for. */
#define SWEEP_ARRAY_MAX 1000

/* The time estimate that sizes the array's tasks: a point's run takes about EST_START_S plus
 * EST_REQUEST_S per request (tests/README.md, "Benchmarks", on the 2-core development machine,
 * 2026-11-23: a whole 10,000-request run 22.9 ms, the 1,000,000-row run 1.13 million requests
 * per wall second; rounded up to 20 ms and 1 us: a rough, conservative figure for Alpaca-like
 * requests on one core).  Each task runs as many consecutive points as fit in --task-seconds
 * by the largest estimate of the points (at least one, and at most SWEEP_ARRAY_MAX tasks). */
#define EST_START_S 0.02
#define EST_REQUEST_S 1e-6
/* A point whose requests could not be counted is estimated at workload.num_requests' count
 * without a trace. */
#define EST_UNKNOWN_REQUESTS 1000

static double point_estimate_s(const struct point *p)
{
	return EST_START_S + EST_REQUEST_S * (double)(p->nreq > 0 ? p->nreq : EST_UNKNOWN_REQUESTS);
}

/* Whether sbatch option OPT is one the emitted script sets itself (its array and log). */
bool sweep_sbatch_owned(const char *opt)
{
	static const char *const own[] = {"--array", "-a", "--output", "-o", NULL};
	for (size_t i = 0; own[i]; i++) {
		size_t n = strlen(own[i]);
		if (!strncmp(opt, own[i], n) &&
		    (!opt[n] || opt[n] == '=' || opt[n] == ' ' || (own[i][1] != '-' && opt[n])))
			return true;
	}
	return false;
}

int sweep_emit(const char *how, const char *exe, const char *dir, const struct point *pts,
	       size_t np, const char *const *sbatch, size_t nsbatch, double task_s,
	       struct bs_err *err)
{
	/* The unfinished points' commands, one per line (a rerun emits what is left). */
	char *all = NULL;
	size_t alen = 0, nrun = 0;
	double est = 0;
	FILE *f = open_memstream(&all, &alen);
	for (size_t i = 0; i < np; i++)
		if (!sweep_point_done(dir, pts[i].name)) {
			write_command(f, exe, dir, &pts[i]);
			nrun++;
			if (point_estimate_s(&pts[i]) > est)
				est = point_estimate_s(&pts[i]);
		}
	fclose(f);
	char *p = xasprintf("%s/commands.txt", dir);
	int rc = sweep_write_atomic(p, all, err);
	free(p);
	if (!rc && !strcmp(how, "parallel")) {
		fputs(all, stdout);
	} else if (!rc && !nrun) {
		fprintf(stderr, "bucketsim: every point is finished; bucketsim sweep --collect %s "
				"writes the CSV\n", dir);
	} else if (!rc) {
		/* At most SWEEP_ARRAY_MAX array tasks (Slurm's default MaxArraySize is 1001), each
		 * running PER consecutive lines, going on after a failed one: as many as the time
		 * estimate fits in TASK_S. */
		size_t per = (nrun + SWEEP_ARRAY_MAX - 1) / SWEEP_ARRAY_MAX;
		double fit = floor(task_s / est);
		if (fit > (double)per)
			per = fit < (double)nrun ? (size_t)fit : nrun;
		size_t tasks = (nrun + per - 1) / per;
		bool named = false;
		for (size_t i = 0; i < nsbatch; i++)
			named |= !strncmp(sbatch[i], "--job-name", 10) || !strncmp(sbatch[i], "-J", 2);
		char *s = NULL;
		size_t slen = 0;
		f = open_memstream(&s, &slen);
		fprintf(f, "#!/bin/sh\n"
			   "# bucketsim sweep: %zu unfinished points, %zu per array task; merge with\n"
			   "#   bucketsim sweep --collect ", nrun, per);
		shell_word(f, dir);
		fprintf(f, "\n# estimated at most %.3g s a point (%g s + %g s a request), %.3g s a "
			   "task\n", est, EST_START_S, EST_REQUEST_S, est * (double)per);
		if (!named)
			fputs("#SBATCH --job-name=bucketsim-sweep\n", f);
		fprintf(f, "#SBATCH --array=1-%zu\n"
			   "#SBATCH --output=%s/points/slurm-%%A_%%a.out\n", tasks, dir);
		for (size_t i = 0; i < nsbatch; i++)
			fprintf(f, "#SBATCH %s\n", sbatch[i]);
		fprintf(f, "per=%zu\n"
			   "first=$(( (SLURM_ARRAY_TASK_ID - 1) * per + 1 ))\n"
			   "status=0\n"
			   "i=$first\n"
			   "while [ \"$i\" -lt $(( first + per )) ]; do\n"
			   "\tline=$(sed -n \"${i}p\" ", per);
		char *c = xasprintf("%s/commands.txt", dir);
		shell_word(f, c);
		free(c);
		fputs(")\n"
		      "\t[ -n \"$line\" ] || break\n"
		      "\teval \"$line\" || status=$?\n"
		      "\ti=$(( i + 1 ))\n"
		      "done\n"
		      "exit $status\n", f);
		fclose(f);
		p = xasprintf("%s/sweep.sbatch", dir);
		rc = sweep_write_atomic(p, s, err);
		if (!rc) {
			chmod(p, 0755);
			printf("%s\n", p);
		}
		free(p);
		free(s);
	}
	free(all);
	return rc;
}
