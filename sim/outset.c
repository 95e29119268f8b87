/*
 * outset: see outset.h.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sim/outset.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/util.h"

/* ---- signal-safe registry of temporaries ----
 * Fixed slots so the handler needs neither malloc nor locks: a slot's path is set, then the slot
 * is marked used (the handler only reads used slots).  The path is borrowed from the output set,
 * which frees it only after dropping the slot.  Directories are rmdir'ed after the files. */
enum { CLEAN_SLOTS = 32 };
/* 0 free, 1 file, 2 temporary directory, 3 directories mkdir_p created (clean_path and its
 * parents down to the first created, whose path is clean_top bytes long) */
static volatile sig_atomic_t clean_used[CLEAN_SLOTS];
static const char *volatile clean_path[CLEAN_SLOTS];
static size_t clean_top[CLEAN_SLOTS];
static volatile sig_atomic_t handlers_installed;

/* Removes the directory PATH, then each parent whose path is at least TOP bytes long, deepest
 * first, stopping at the first that is not empty; PATH is cut in place (async-signal-safe). */
static void rmdir_chain(char *path, size_t top)
{
	size_t n = strlen(path);
	for (;;) {
		while (n > 1 && path[n - 1] == '/')
			path[--n] = 0;
		if (n < top || rmdir(path) != 0)
			return;
		while (n > 0 && path[n - 1] != '/')
			n--;
		if (!n)
			return;
		path[n] = 0;
	}
}

void outset_cleanup_all(void)
{
	for (int pass = 1; pass <= 3; pass++)
		for (int i = 0; i < CLEAN_SLOTS; i++)
			if (clean_used[i] == pass) {
				if (pass == 1)
					unlink(clean_path[i]);
				else if (pass == 2)
					rmdir(clean_path[i]);
				else
					rmdir_chain((char *)clean_path[i], clean_top[i]);
			}
}

static void on_signal(int sig)
{
	outset_cleanup_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int slot_add_top(const char *path, int kind, size_t top)
{
	if (!handlers_installed) {
		/* A signal the process was started with ignored (nohup, a background job of a
		 * script) stays ignored. */
		static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
		struct sigaction sa, old;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
				sigaction(sigs[i], &sa, NULL);
		handlers_installed = 1;
	}
	for (int i = 0; i < CLEAN_SLOTS; i++)
		if (!clean_used[i]) {
			clean_path[i] = path;
			clean_top[i] = top;
			clean_used[i] = kind;
			return i;
		}
	BUG("more than %d temporary outputs at once", CLEAN_SLOTS);
}

static int slot_add(const char *path, int kind)
{
	return slot_add_top(path, kind, 0);
}

static void slot_drop(int i)
{
	if (i >= 0)
		clean_used[i] = 0;
}

void outset_init(struct outset *s)
{
	memset(s, 0, sizeof *s);
	s->dir_slot = -1;
	s->made_slot = -1;
}

static FILE *open_tmp(struct outset *s, const char *path, char *tmp, struct bs_err *err)
{
	int slot = slot_add(tmp, 1);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		bs_errf(err, BS_EXIT_RUNTIME, path, 0, NULL, "cannot create: %s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		slot_drop(slot);
		free(tmp);
		return NULL;
	}
	s->files = xrealloc(s->files, (s->n + 1) * sizeof *s->files);
	s->files[s->n].f = f;
	s->files[s->n].path = xstrdup(path);
	s->files[s->n].tmp = tmp;
	s->files[s->n].slot = slot;
	s->n++;
	return f;
}

static void sweep_stale(const char *dir, const char *const *known);

FILE *outset_open(struct outset *s, const char *path, struct bs_err *err)
{
	if (!strcmp(path, "-"))
		return stdout;
	if (!*path) {
		bs_errf(err, BS_EXIT_USAGE, NULL, 0, NULL, "empty output file name");
		return NULL;
	}
	/* A path that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is
	 * written in place: renaming a temporary onto it would replace the device or pipe with a
	 * regular file (as root, /dev/null itself).  Such a stream is not atomic; nothing to
	 * rename or remove. */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			bs_errf(err, BS_EXIT_USAGE, path, 0, NULL, "is a directory, not a file");
			return NULL;
		}
		FILE *f = fopen(path, "w");
		if (!f) {
			bs_errf(err, BS_EXIT_RUNTIME, path, 0, NULL, "cannot open: %s",
				strerror(errno));
			return NULL;
		}
		s->files = xrealloc(s->files, (s->n + 1) * sizeof *s->files);
		s->files[s->n] = (struct outfile){0};
		s->files[s->n].f = f;
		s->files[s->n].path = xstrdup(path);
		s->files[s->n].tmp = NULL;
		s->files[s->n].slot = -1;
		s->n++;
		return f;
	}
	/* A symbolic link to a regular file: the file it names is replaced (the temporary beside
	 * it), the link kept, as writing through it would. */
	struct stat lst;
	char *real = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) ? realpath(path, NULL) : NULL;
	const char *target = real ? real : path;
	/* The temporaries of this file that killed processes left (as outset_init_dir's). */
	char *dir = xstrdup(target);
	char *slash = strrchr(dir, '/');
	const char *name = slash ? slash + 1 : target;
	if (slash == dir)
		dir[1] = 0;
	else if (slash)
		*slash = 0;
	sweep_stale(slash ? dir : ".", (const char *const[]){name, NULL});
	free(dir);
	FILE *f = open_tmp(s, target, xasprintf("%s.tmp.%ld", target, (long)getpid()), err);
	free(real);
	return f;
}

FILE *outset_open_in(struct outset *s, const char *name, struct bs_err *err)
{
	if (!s->tmpdir)
		BUG("outset_open_in outside directory mode");
	char *path = xasprintf("%s/%s", s->dir, name);
	FILE *f = open_tmp(s, path, xasprintf("%s/%s", s->tmpdir, name), err);
	free(path);
	return f;
}

void outset_remove_tree(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		if (errno == ENOTDIR)
			unlink(path);
		else
			rmdir(path);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *f = xasprintf("%s/%s", path, e->d_name);
		unlink(f);
		free(f);
	}
	closedir(d);
	rmdir(path);
}

/* PID from "PREFIX<digits>" (whole suffix digits), or 0. */
static long pid_suffix(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) || !name[n])
		return 0;
	long pid = 0;
	for (const char *p = name + n; *p; p++) {
		if (!isdigit((unsigned char)*p) || pid > 100000000)
			return 0;
		pid = pid * 10 + (*p - '0');
	}
	return pid;
}

static bool pid_dead(long pid)
{
	return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes what processes no longer running left in DIR: their temporary directories
 * (.bucketsim.tmp.PID), the earlier sets a commit they did not finish had moved aside
 * (.bucketsim.old.PID), and the temporaries NAME.tmp.PID of each NAME of KNOWN.  The one rule for
 * every output, directory and single file alike: a temporary belongs to the process whose
 * number it ends with, and goes once that process no longer runs. */
static void sweep_stale(const char *dir, const char *const *known)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		long pid = pid_suffix(e->d_name, ".bucketsim.tmp.");
		if (!pid)
			pid = pid_suffix(e->d_name, ".bucketsim.old.");
		if (pid_dead(pid)) {
			char *p = xasprintf("%s/%s", dir, e->d_name);
			outset_remove_tree(p);
			free(p);
			continue;
		}
		for (size_t k = 0; known && known[k]; k++) {
			char *pre = xasprintf("%s.tmp.", known[k]);
			pid = pid_suffix(e->d_name, pre);
			free(pre);
			if (pid_dead(pid)) {
				char *p = xasprintf("%s/%s", dir, e->d_name);
				unlink(p);
				free(p);
				break;
			}
		}
	}
	closedir(d);
}

static int mkdir_parents(const char *dir, size_t *top, struct bs_err *err);

int outset_mkdir(struct outset *s, const char *dir, struct bs_err *err)
{
	size_t top = 0;
	if (mkdir_parents(dir, &top, err))
		return -1;
	if (top && s->made_slot < 0) {
		s->made = xstrdup(dir);
		s->made_top = top;
		s->made_slot = slot_add_top(s->made, 3, top);
	}
	return 0;
}

static int init_dir(struct outset *s, const char *dir, const char *const *known, bool plain,
		    struct bs_err *err)
{
	outset_init(s);
	s->plain = plain;
	if (outset_mkdir(s, dir, err))
		return -1;
	sweep_stale(dir, known);
	char *tmpdir = xasprintf("%s/.bucketsim.tmp.%ld", dir, (long)getpid());
	int slot = slot_add(tmpdir, 2);
	if (mkdir(tmpdir, 0777) != 0) {
		bs_errf(err, BS_EXIT_RUNTIME, tmpdir, 0, NULL, "cannot create directory: %s",
			strerror(errno));
		slot_drop(slot);
		free(tmpdir);
		outset_abort(s);
		return -1;
	}
	s->dir = xstrdup(dir);
	s->tmpdir = tmpdir;
	s->dir_slot = slot;
	s->known = known;
	return 0;
}

int outset_init_dir(struct outset *s, const char *dir, const char *const *known,
		    struct bs_err *err)
{
	return init_dir(s, dir, known, false, err);
}

int outset_init_files_in(struct outset *s, const char *dir, struct bs_err *err)
{
	return init_dir(s, dir, NULL, true, err);
}

const char *outset_tmpdir(const struct outset *s)
{
	return s->tmpdir;
}

int outset_add_in(struct outset *s, const char *name, struct bs_err *err)
{
	if (!s->tmpdir)
		BUG("outset_add_in outside directory mode");
	char *tmp = xasprintf("%s/%s", s->tmpdir, name);
	char *path = xasprintf("%s/%s", s->dir, name);
	struct stat st;
	int rc = 0;
	if (lstat(tmp, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = bs_errf(err, BS_EXIT_RUNTIME, path, 0, NULL, "was not written");
		free(tmp);
	} else {
		s->files = xrealloc(s->files, (s->n + 1) * sizeof *s->files);
		s->files[s->n] = (struct outfile){NULL, xstrdup(path), tmp, slot_add(tmp, 1)};
		s->n++;
	}
	free(path);
	return rc;
}

static void outset_free(struct outset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		slot_drop(s->files[i].slot);
		free(s->files[i].path);
		free(s->files[i].tmp);
	}
	slot_drop(s->dir_slot);
	slot_drop(s->made_slot);
	free(s->files);
	free(s->dir);
	free(s->tmpdir);
	free(s->made);
	outset_init(s);
}

void outset_abort(struct outset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->files[i].f)
			fclose(s->files[i].f);
		if (s->files[i].tmp)
			unlink(s->files[i].tmp);
	}
	if (s->tmpdir)
		outset_remove_tree(s->tmpdir);
	if (s->made_slot >= 0) {
		slot_drop(s->made_slot);
		s->made_slot = -1;
		rmdir_chain(s->made, s->made_top);
	}
	outset_free(s);
}

/* DIR/NAME. */
static char *in_dir(const char *dir, const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

/* Takes DIR's commit lock (DIR/.bucketsim.lock, flock, waited for): two processes committing
 * into one directory take turns, each commit whole.  Returns its descriptor (closing it
 * releases the lock), or -1 with ERR. */
static int lock_dir(const char *dir, struct bs_err *err)
{
	char *p = in_dir(dir, OUTSET_LOCK);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
	int r = fd < 0 ? -1 : 0;
	while (!r && (r = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
		r = 0;
	if (r) {
		bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL, "cannot lock the output directory: %s",
			strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	free(p);
	return fd;
}

/* Directory mode, after every file was closed, DIR locked and the signals blocked.  The earlier
 * set (its marker, every file of KNOWN, and every earlier file of a name this set writes) moves
 * aside into DIR/.bucketsim.old.PID, the set moves in, the marker is written, and what was moved
 * aside is removed.  Any failure before the marker is in place moves this set's files back out
 * and the earlier ones back in: DIR is as it was.  A plain set (outset_init_files_in) has no
 * marker and no KNOWN: only the files of its names are replaced. */
static int commit_dir(struct outset *s, struct bs_err *err)
{
	/* The names moved aside, in order: the marker, KNOWN, the set's other names. */
	size_t nk = 0;
	while (s->known && s->known[nk])
		nk++;
	const char **names = xmalloc((nk + s->n + 1) * sizeof *names);
	size_t nn = 0;
	if (!s->plain)
		names[nn++] = OUTSET_MARKER;
	for (size_t k = 0; k < nk; k++)
		names[nn++] = s->known[k];
	for (size_t i = 0; i < s->n; i++) {
		const char *slash = strrchr(s->files[i].path, '/');
		const char *b = slash ? slash + 1 : s->files[i].path;
		bool dup = false;
		for (size_t k = 0; k < nk; k++)
			dup |= !strcmp(s->known[k], b);
		if (!dup)
			names[nn++] = b;
	}
	char *old = xasprintf("%s/.bucketsim.old.%ld", s->dir, (long)getpid());
	bool *moved = xcalloc(nn ? nn : 1, sizeof *moved);
	size_t placed = 0;
	bool stuck = false;
	int rc = 0;
	/* One of this name is a dead process's whose id this process has now (a process commits
	 * a directory once): it holds nothing anyone waits for. */
	if (mkdir(old, 0777) != 0 && errno == EEXIST)
		outset_remove_tree(old);
	if (mkdir(old, 0777) != 0 && errno != EEXIST)
		rc = bs_errf(err, BS_EXIT_RUNTIME, old, 0, NULL, "cannot create directory: %s",
			     strerror(errno));
	for (size_t k = 0; !rc && k < nn; k++) {
		char *p = in_dir(s->dir, names[k]), *q = in_dir(old, names[k]);
		struct stat st;
		if (lstat(p, &st) != 0) {
			if (errno != ENOENT)
				rc = bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL, "cannot read: %s",
					     strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			rc = bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL,
				     "cannot replace the earlier run's output: it is a directory");
		} else if (rename(p, q) != 0) {
			rc = bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL,
				     "cannot remove the earlier run's output: %s", strerror(errno));
		} else {
			moved[k] = true;
		}
		free(p);
		free(q);
	}
	for (; !rc && placed < s->n; placed++)
		if (rename(s->files[placed].tmp, s->files[placed].path) != 0)
			rc = bs_errf(err, BS_EXIT_RUNTIME, s->files[placed].path, 0, NULL,
				     "cannot rename: %s", strerror(errno));
	if (!rc && !s->plain) {
		char *marker = in_dir(s->dir, OUTSET_MARKER);
		char *tmp = in_dir(s->tmpdir, OUTSET_MARKER);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (f) {
			for (size_t i = 0; i < s->n; i++) {
				const char *slash = strrchr(s->files[i].path, '/');
				fprintf(f, "%s\n", slash ? slash + 1 : s->files[i].path);
			}
		}
		bool bad = !f;
		if (f) {
			bad = ferror(f) != 0;
			bad |= fclose(f) != 0;
		}
		if (bad || rename(tmp, marker) != 0)
			rc = bs_errf(err, BS_EXIT_RUNTIME, marker, 0, NULL, "cannot write: %s",
				     strerror(errno));
		if (!f && fd >= 0)
			close(fd);
		if (rc)
			unlink(tmp);
		free(tmp);
		free(marker);
	}
	if (rc) {
		/* Back as it was: this set's files out (into the temporary directory, which the
		 * abort removes), the earlier ones in. */
		while (placed-- > 0)
			rename(s->files[placed].path, s->files[placed].tmp);
		for (size_t k = nn; k-- > 0;)
			if (moved[k]) {
				char *p = in_dir(s->dir, names[k]), *q = in_dir(old, names[k]);
				if (rename(q, p) != 0)
					stuck = true;
				free(p);
				free(q);
			}
	}
	/* The earlier set is gone (committed) or back (failed): the directory aside is removed
	 * either way (a rename back that failed leaves it, with what it holds). */
	if (!stuck)
		outset_remove_tree(old);
	free(old);
	free(moved);
	free(names);
	return rc;
}

int outset_commit(struct outset *s, struct bs_err *err)
{
	for (size_t i = 0; i < s->n; i++) {
		FILE *f = s->files[i].f;
		if (!f)
			continue;   /* outset_add_in's: written by another process */
		s->files[i].f = NULL;
		int bad = ferror(f);
		if (fclose(f) != 0 || bad) {
			bs_errf(err, BS_EXIT_RUNTIME, s->files[i].path, 0, NULL, "write error: %s",
				strerror(errno));
			outset_abort(s);
			return -1;
		}
	}
	/* The commit is not interrupted: SIGINT, SIGTERM and SIGHUP wait until it is done (or
	 * undone) and then act as always (the process ends with the signal; the output is the
	 * complete new set).  A directory is locked for it first, while signals still act. */
	int lock = -1;
	if (s->tmpdir && !s->plain && (lock = lock_dir(s->dir, err)) < 0) {
		outset_abort(s);
		return -1;
	}
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	int rc = 0;
	if (s->tmpdir) {
		rc = commit_dir(s, err);
		if (!rc)
			outset_remove_tree(s->tmpdir);
	} else {
		for (size_t i = 0; !rc && i < s->n; i++)
			if (s->files[i].tmp && rename(s->files[i].tmp, s->files[i].path) != 0)
				rc = bs_errf(err, BS_EXIT_RUNTIME, s->files[i].path, 0, NULL,
					     "cannot rename: %s", strerror(errno));
	}
	if (rc)
		outset_abort(s);
	else
		outset_free(s);
	if (lock >= 0)
		close(lock);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc ? -1 : 0;
}

/* mkdir_p; *TOP (when TOP is given) becomes the length of the first directory it created (0:
 * none), each deeper one up to DIR being created too.  On an error none it created is left. */
static int mkdir_parents(const char *dir, size_t *top, struct bs_err *err)
{
	if (!*dir)
		return bs_errf(err, BS_EXIT_USAGE, NULL, 0, NULL, "empty output directory name");
	char *p = xstrdup(dir);
	size_t n = strlen(p), first = 0, last = 0;   /* lengths of the first and last created */
	int rc = 0;
	for (size_t i = 1; i <= n && !rc; i++) {
		if (i < n && p[i] != '/')
			continue;
		char c = p[i];
		p[i] = 0;
		if (mkdir(p, 0777) == 0) {
			first = first ? first : i;
			last = i;
		} else if (errno != EEXIST) {
			rc = bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL, "cannot create directory: %s",
				     strerror(errno));
		}
		p[i] = c;
	}
	struct stat st;
	if (!rc && (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)))
		rc = bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL, "not a directory");
	if (rc && first) {
		p[last] = 0;
		rmdir_chain(p, first);
		first = 0;
	}
	free(p);
	if (top)
		*top = first;
	return rc;
}

int mkdir_p(const char *dir, struct bs_err *err)
{
	return mkdir_parents(dir, NULL, err);
}
