/*
 * outset: output files that appear whole or not at all, and the directories they go into.
 *
 * Atomic output: a set of files written under temporary names and put into place only by
 * outset_commit().  outset_abort() (or a failed commit) removes every temporary, so an error
 * leaves no partial output; so do SIGINT, SIGTERM and running out of memory (the temporaries are
 * registered with a signal handler, installed on first use, that removes them and re-raises),
 * and the output directories the set created (outset_mkdir, outset_init_dir).
 * Temporaries are created with O_EXCL.
 *
 * Two modes:
 *  - files (outset_init + outset_open(PATH)): PATH.tmp.PID beside each final name, renamed one by
 *    one at commit.  For single-file outputs.
 *  - directory (outset_init_dir + outset_open_in(NAME)): every file is written into
 *    DIR/.bucketsim.tmp.PID/.  The commit locks DIR (flock on DIR/.bucketsim.lock: concurrent
 *    commits into one DIR take turns), moves the earlier set aside into DIR/.bucketsim.old.PID/
 *    (DIR/.bucketsim.done, every file of KNOWN, the names any run of the command may write, and
 *    every earlier file of a name this set writes), renames the set into DIR, writes
 *    DIR/.bucketsim.done (the list of the files, one per line), then removes what it moved
 *    aside and the temporary directory.  A failure on the way (a name that cannot be moved, a
 *    directory in the way) puts the earlier set back: DIR is as before the commit.  A directory
 *    holds one complete run exactly when it has .bucketsim.done.
 *
 * SIGINT, SIGTERM and SIGHUP are blocked during a commit (either mode): it completes (or is
 * undone) and the signal then acts.  Temporaries of processes no longer running (killed with
 * SIGKILL, say) are removed when an output is next written there: outset_init_dir removes the
 * temporary directories, moved-aside sets and PATH.tmp.PID files of KNOWN in DIR; outset_open
 * removes PATH.tmp.PID of the file it opens (and the temporary directories beside it).
 */
#ifndef BS_OUTSET_H
#define BS_OUTSET_H

#include <stdbool.h>
#include <stdio.h>

struct bs_err;

struct outfile {
	FILE *f;
	char *path;        /* final name */
	char *tmp;         /* temporary name; NULL: written in place (not a regular file) */
	int slot;          /* signal-cleanup slot, -1 for none */
};
struct outset {
	struct outfile *files;
	size_t n;
	char *dir;         /* directory mode: the output directory, else NULL */
	char *tmpdir;      /* directory mode: DIR/.bucketsim.tmp.PID */
	int dir_slot;      /* signal-cleanup slot of tmpdir */
	const char *const *known;  /* borrowed, NULL-terminated */
	char *made;        /* the directory outset_mkdir created, with parents, or NULL */
	size_t made_top;   /* the length of the first of them (the shallowest) */
	int made_slot;     /* their signal-cleanup slot */
	bool plain;        /* directory mode without marker or KNOWN (outset_init_files_in) */
};
void outset_init(struct outset *s);
/* Opens PATH's temporary for writing; "-" means stdout (not renamed); a PATH that exists and
 * is not a regular file (a device such as /dev/null, a FIFO) is written in place. */
FILE *outset_open(struct outset *s, const char *path, struct bs_err *err);
/* Creates DIR (and parents) when missing, as mkdir_p; the directories it created belong to the
 * set: outset_abort, a failed commit and SIGINT/SIGTERM/SIGHUP remove them (deepest first, each
 * only while empty), a commit keeps them.  A directory that existed is never removed. */
int outset_mkdir(struct outset *s, const char *dir, struct bs_err *err);
/* Directory mode: creates DIR (and parents) when missing (outset_mkdir), sweeps stale
 * temporaries and creates the temporary directory.  KNOWN is borrowed until commit or abort. */
int outset_init_dir(struct outset *s, const char *dir, const char *const *known,
		    struct bs_err *err);
/* Directory mode without a marker: a set of files of DIR (which may hold anything else)
 * written in DIR/.bucketsim.tmp.PID/ and moved into DIR at commit, each replacing the file of
 * its name; no other file of DIR is touched and no lock taken (the figures of `plot -o`). */
int outset_init_files_in(struct outset *s, const char *dir, struct bs_err *err);
/* Directory mode: the temporary directory (where another process may write the set's files). */
const char *outset_tmpdir(const struct outset *s);
/* Directory mode: adds DIR/NAME, whose temporary another process wrote (an error when it did
 * not, or it is not a regular file). */
int outset_add_in(struct outset *s, const char *name, struct bs_err *err);
/* Directory mode: opens DIR/NAME's temporary for writing. */
FILE *outset_open_in(struct outset *s, const char *name, struct bs_err *err);
int outset_commit(struct outset *s, struct bs_err *err);
void outset_abort(struct outset *s);
/* Creates DIR (and parents) when missing.  An empty DIR is an error. */
int mkdir_p(const char *dir, struct bs_err *err);
/* Removes PATH, a directory holding only files (its files, then itself: a temporary
 * directory, a moved-aside set, a sweep's point) or a file; missing is fine.  Not
 * async-signal-safe (outset_cleanup_all is). */
void outset_remove_tree(const char *path);
/* The completion marker of a directory-mode output set. */
#define OUTSET_MARKER ".bucketsim.done"
/* The file whose lock (flock) a directory-mode commit holds: created once, kept. */
#define OUTSET_LOCK ".bucketsim.lock"
/* Removes the temporaries of every open output set (async-signal-safe: the signal handler's,
 * and out of memory's before it exits). */
void outset_cleanup_all(void);

#endif
