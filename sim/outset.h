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
 *    DIR/.bucketsim.tmp.PID/.  The commit removes DIR/.bucketsim.done, removes every file of
 *    KNOWN (the names any run of the command may write) that this set did not write, renames the
 *    set into DIR (each earlier file of the same name removed first: ext4 flushes a file renamed
 *    over another one), then writes DIR/.bucketsim.done (the list of the files, one per line)
 *    and removes the temporary directory.  A directory holds one complete run exactly when it has
 *    .bucketsim.done.  outset_init_dir also removes the temporary directories (and the PATH.tmp.PID
 *    files of KNOWN) that processes no longer running left in DIR (killed with SIGKILL, say).
 */
#ifndef BS_OUTSET_H
#define BS_OUTSET_H

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
/* Directory mode: opens DIR/NAME's temporary for writing. */
FILE *outset_open_in(struct outset *s, const char *name, struct bs_err *err);
int outset_commit(struct outset *s, struct bs_err *err);
void outset_abort(struct outset *s);
/* Creates DIR (and parents) when missing.  An empty DIR is an error. */
int mkdir_p(const char *dir, struct bs_err *err);
/* The completion marker of a directory-mode output set. */
#define OUTSET_MARKER ".bucketsim.done"
/* Removes the temporaries of every open output set (async-signal-safe: the signal handler's,
 * and out of memory's before it exits). */
void outset_cleanup_all(void);

#endif
