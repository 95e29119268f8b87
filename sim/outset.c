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

/* Removes DIR/PATH recursively one level (a temporary directory holds only files). */
static void remove_tmpdir(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *f = xasprintf("%s/%s", path, e->d_name);
			unlink(f);
			free(f);
		}
		closedir(d);
	}
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

/* Removes what processes no longer running left in DIR. */
static void sweep_stale(const char *dir, const char *const *known)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		long pid = pid_suffix(e->d_name, ".bucketsim.tmp.");
		if (pid_dead(pid)) {
			char *p = xasprintf("%s/%s", dir, e->d_name);
			remove_tmpdir(p);
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

int outset_init_dir(struct outset *s, const char *dir, const char *const *known,
		    struct bs_err *err)
{
	outset_init(s);
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
		remove_tmpdir(s->tmpdir);
	if (s->made_slot >= 0) {
		slot_drop(s->made_slot);
		s->made_slot = -1;
		rmdir_chain(s->made, s->made_top);
	}
	outset_free(s);
}

static bool in_set(const struct outset *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *slash = strrchr(s->files[i].path, '/');
		if (!strcmp(slash ? slash + 1 : s->files[i].path, name))
			return true;
	}
	return false;
}

/* Directory mode, after every file was closed: marker off, the earlier run's outputs off, set
 * in, marker on.  A failure part-way leaves DIR without its marker (an incomplete directory). */
static int commit_dir(struct outset *s, struct bs_err *err)
{
	char *marker = xasprintf("%s/%s", s->dir, OUTSET_MARKER);
	int rc = 0;
	if (unlink(marker) != 0 && errno != ENOENT)
		rc = bs_errf(err, BS_EXIT_RUNTIME, marker, 0, NULL, "cannot remove: %s",
			     strerror(errno));
	for (size_t k = 0; !rc && s->known && s->known[k]; k++) {
		if (in_set(s, s->known[k]))
			continue;
		char *p = xasprintf("%s/%s", s->dir, s->known[k]);
		if (unlink(p) != 0 && errno != ENOENT)
			rc = bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL,
				     "cannot remove the earlier run's output: %s", strerror(errno));
		free(p);
	}
	/* Each earlier file is removed before the new one takes its name: the directory has no
	 * marker by now, so nothing relies on the old file staying until the rename, and a rename
	 * over an existing file makes ext4 (auto_da_alloc) flush the new file's data first. */
	for (size_t i = 0; !rc && i < s->n; i++) {
		if (unlink(s->files[i].path) != 0 && errno != ENOENT)
			rc = bs_errf(err, BS_EXIT_RUNTIME, s->files[i].path, 0, NULL,
				     "cannot remove the earlier run's output: %s", strerror(errno));
		else if (rename(s->files[i].tmp, s->files[i].path) != 0)
			rc = bs_errf(err, BS_EXIT_RUNTIME, s->files[i].path, 0, NULL,
				     "cannot rename: %s", strerror(errno));
	}
	if (!rc) {
		char *tmp = xasprintf("%s/%s", s->tmpdir, OUTSET_MARKER);
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
		free(tmp);
	}
	free(marker);
	return rc;
}

int outset_commit(struct outset *s, struct bs_err *err)
{
	for (size_t i = 0; i < s->n; i++) {
		FILE *f = s->files[i].f;
		s->files[i].f = NULL;
		int bad = ferror(f);
		if (fclose(f) != 0 || bad) {
			bs_errf(err, BS_EXIT_RUNTIME, s->files[i].path, 0, NULL, "write error: %s",
				strerror(errno));
			outset_abort(s);
			return -1;
		}
	}
	if (s->tmpdir) {
		if (commit_dir(s, err)) {
			outset_abort(s);
			return -1;
		}
		remove_tmpdir(s->tmpdir);
		outset_free(s);
		return 0;
	}
	for (size_t i = 0; i < s->n; i++) {
		if (s->files[i].tmp && rename(s->files[i].tmp, s->files[i].path) != 0) {
			bs_errf(err, BS_EXIT_RUNTIME, s->files[i].path, 0, NULL, "cannot rename: %s",
				strerror(errno));
			outset_abort(s);
			return -1;
		}
	}
	outset_free(s);
	return 0;
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
