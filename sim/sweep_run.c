/*
 * sweep_run: the local runner of `bucketsim sweep` (-j N): each unfinished point's `bucketsim
 * run` command line (sweep_point_prepare) executed in a worker process writing into
 * DIR/points/NNNN, at most N at a time, with progress on standard error.  A SIGINT or SIGTERM
 * sent to the sweep stops its running points (each removes its temporaries).  Owns its worker
 * processes until they end; borrows the points.
 */
#define _GNU_SOURCE /* O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/sweep_csv.h"
#include "sim/sweep_run.h"

static volatile sig_atomic_t stop_requested;
/* The running points' process ids (0: none), for the handler to pass the stop on. */
static pid_t *volatile running_pid;
static volatile size_t running_n;

/* A sweep stopped by a signal sent to it alone (not to its terminal's process group) stops its
 * running points too, at once: each removes its temporaries on SIGTERM.  (kill is
 * async-signal-safe; a point started while the signal came is stopped by the loop.) */
static void on_signal(int sig)
{
	stop_requested = sig; /* the signal's number (nonzero) */
	for (size_t k = 0; running_pid && k < running_n; k++)
		if (running_pid[k] > 0)
			kill(running_pid[k], SIGTERM);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A running point's standard error: an unnamed file in DIR/points (O_TMPFILE) that becomes
 * NNNN.err only when the run wrote something into it (point_err_keep), so that a sweep stopped
 * by any signal, SIGKILL included, leaves no empty NNNN.err; where the file system has no
 * unnamed files, NNNN.err itself (removed again when empty). */
struct point_err {
	int fd;
	bool named;
};

static struct point_err point_err_open(const char *dir, const struct point *p)
{
	char *errp = xasprintf("%s/points/%s.err", dir, p->name);
	unlink(errp); /* an earlier attempt's */
	struct point_err e = {-1, false};
#ifdef O_TMPFILE
	char *pd = xasprintf("%s/points", dir);
	e.fd = open(pd, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	free(pd);
#endif
	if (e.fd < 0) {
		e.fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		e.named = true;
	}
	free(errp);
	return e;
}

/* After the point's run: its NNNN.err when the run wrote to it, else none. */
static void point_err_keep(const char *dir, const struct point *p, struct point_err *e)
{
	if (e->fd < 0)
		return;
	struct stat sb;
	bool empty = !fstat(e->fd, &sb) && sb.st_size == 0;
	char *errp = xasprintf("%s/points/%s.err", dir, p->name);
	if (e->named && empty) {
		unlink(errp);
	} else if (!e->named && !empty) {
		char *fdp = xasprintf("/proc/self/fd/%d", e->fd);
		if (linkat(AT_FDCWD, fdp, AT_FDCWD, errp, AT_SYMLINK_FOLLOW))
			fprintf(stderr, "bucketsim: error: %s: cannot create: %s\n", errp,
				strerror(errno));
		free(fdp);
	}
	free(errp);
	close(e->fd);
	e->fd = -1;
}

/* Starts one point: `SELF run ... -o DIR/points/NNNN`, its standard error to E.  The run's
 * output set appears whole in NNNN or not at all (sim/outset.h), as for an emitted command. */
static pid_t start_point(const char *self, const char *dir, const struct point *p,
			 const struct point_err *e)
{
	char *out = xasprintf("%s/points/%s", dir, p->name);
	char *tmp = xasprintf("%s/points/.%s.tmp", dir, p->name);
	outset_remove_tree(tmp); /* left by an earlier version's sweep */
	free(tmp);
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* Until the exec, a stop reaching this worker ends it (the sweep's handler would
		 * only note it here, and the run would go on). */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
#ifdef __linux__
		/* A worker ends with its sweep (SIGTERM: it removes its temporaries), even when the
		 * sweep is killed with SIGKILL; a sweep already gone by now is noticed below. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
		if (getppid() != parent)
			_exit(BS_EXIT_RUNTIME);
		int nul = open("/dev/null", O_RDWR);
		if (e->fd < 0 || nul < 0)
			_exit(BS_EXIT_RUNTIME);
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(e->fd, 2);
		char **av = xmalloc((p->argc + 4) * sizeof *av);
		av[0] = "bucketsim";
		for (size_t i = 0; i < p->argc; i++)
			av[i + 1] = p->argv[i];
		av[p->argc + 1] = "-o";
		av[p->argc + 2] = out;
		av[p->argc + 3] = NULL;
		execv(self, av);
		dprintf(2, "bucketsim: error: cannot start %s: %s\n", self, strerror(errno));
		_exit(BS_EXIT_RUNTIME);
	}
	free(out);
	return pid;
}

int sweep_run_points(const char *self, const char *dir, const struct point *pts, size_t np,
		     long jobs)
{
	size_t todo = 0, done = 0, next = 0, nrun = 0;
	int first_rc = 0;
	for (size_t i = 0; i < np; i++)
		todo += !sweep_point_done(dir, pts[i].name);
	bool tty = isatty(2);
	pid_t *pid = xcalloc(np ? np : 1, sizeof *pid);
	struct point_err *perr = xcalloc(np ? np : 1, sizeof *perr);
	double *t0 = xcalloc(np ? np : 1, sizeof *t0);
	double start = now_s();
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (todo < np)
		fprintf(stderr, "sweep: %zu of %zu points already finished in %s\n", np - todo, np,
			dir);
	bool forwarded = false;
	running_n = np;
	running_pid = pid;
	for (;;) {
		while (!stop_requested && nrun < (size_t)jobs && next < np) {
			if (sweep_point_done(dir, pts[next].name)) {
				next++;
				continue;
			}
			t0[next] = now_s();
			perr[next] = point_err_open(dir, &pts[next]);
			pid[next] = start_point(self, dir, &pts[next], &perr[next]);
			if (pid[next] < 0) {
				point_err_keep(dir, &pts[next], &perr[next]);
				fprintf(stderr, "bucketsim: error: cannot fork: %s\n", strerror(errno));
				first_rc = first_rc ? first_rc : BS_EXIT_RUNTIME;
				stop_requested = SIGTERM;
				forwarded = true; /* no signal came: the running points finish */
				break;
			}
			nrun++;
			next++;
		}
		if (!nrun)
			break;
		/* The points started before the stop was seen (the handler may have run while one
		 * was being started, before its id was known). */
		if (stop_requested && !forwarded) {
			for (size_t k = 0; k < np; k++)
				if (pid[k] > 0)
					kill(pid[k], SIGTERM);
			forwarded = true;
		}
		int status;
		pid_t w = waitpid(-1, &status, 0);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		size_t i = 0;
		while (i < np && pid[i] != w)
			i++;
		if (i == np)
			continue;
		nrun--;
		pid[i] = 0;
		int rc = WIFEXITED(status) ? WEXITSTATUS(status) : BS_EXIT_RUNTIME;
		point_err_keep(dir, &pts[i], &perr[i]);
		if (rc && !first_rc)
			first_rc = rc;
		done++;
		double el = now_s() - start;
		if (tty) {
			double rate = done / el;
			fprintf(stderr, "\rsweep: %zu/%zu points, %.2f points/s, ETA %.0f s   ", done,
				todo, rate, rate > 0 ? (double)(todo - done) / rate : 0.0);
			if (done == todo)
				fputc('\n', stderr);
		} else {
			fprintf(stderr, "sweep: %zu/%zu %s %s in %.2f s\n", done, todo, pts[i].label,
				rc ? stop_requested ? "stopped" : "failed" : "done",
				now_s() - t0[i]);
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	running_pid = NULL;
	running_n = 0;
	free(pid);
	free(perr);
	free(t0);
	if (stop_requested) {
		if (tty)
			fputc('\n', stderr);
		fprintf(stderr, "bucketsim: error: sweep interrupted; rerun the same command to "
				"finish it\n");
		return 128 + (int)stop_requested;
	}
	return first_rc ? first_rc : -1; /* -1: every point ran */
}
