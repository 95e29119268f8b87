/*
 * util: errors, allocation, strict number parsing and atomic output files.
 *
 * Owns nothing global.  Every user-facing error travels as a `struct bs_err` filled by the
 * callee and printed once by the command line, as
 *     bucketsim: error: FILE:LINE: field 'NAME': MESSAGE
 * (each part present only when known).  `code` is the process exit code the error maps to:
 * BS_EXIT_RUNTIME (1, I/O and resources), BS_EXIT_USAGE (2, command line), BS_EXIT_INPUT (3, a
 * config, trace or bucket file).  Bugs are not errors: they go through BUG()/assert and abort.
 *
 * Allocation: xmalloc/xcalloc/xrealloc/xstrdup print a message and abort on exhaustion, so
 * callers never test for NULL.
 */
#ifndef BS_UTIL_H
#define BS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { BS_EXIT_OK = 0, BS_EXIT_RUNTIME = 1, BS_EXIT_USAGE = 2, BS_EXIT_INPUT = 3 };

struct bs_err {
	int code;          /* exit code; 0 = no error recorded */
	char file[256];    /* "" when not about a file */
	long line;         /* 0 when unknown; for CSV it is the record number */
	char field[96];    /* "" when not about one field */
	char msg[512];
};

/* Records an error (the first one wins: later calls do not overwrite it).  Returns -1 so a
 * callee can write `return bs_errf(err, ...)`.  `err` may be NULL. */
int bs_errf(struct bs_err *err, int code, const char *file, long line, const char *field,
	    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Prints "bucketsim: error: ..." to stderr. */
void bs_err_print(const struct bs_err *err);
void bs_err_clear(struct bs_err *err);

#define BUG(...) bs_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void bs_bug(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict parsing: the whole string (no leading/trailing junk, no empty string) must be a number
 * in [min, max].  On failure return -1 and fill `why` (a short phrase such as
 * "expected an integer, got 'x'").  Never clamps. */
int parse_i64(const char *s, int64_t min, int64_t max, int64_t *out, char *why, size_t whylen);
int parse_f64(const char *s, double min, double max, double *out, char *why, size_t whylen);
/* true/false/1/0/yes/no/on/off, case-insensitive. */
int parse_bool(const char *s, bool *out, char *why, size_t whylen);

/* Reads a whole file into a NUL-terminated buffer (owned by the caller). */
char *read_file(const char *path, size_t *len, struct bs_err *err);

/*
 * Atomic output: a set of files written under temporary names in their final directory and
 * renamed into place only by outset_commit().  outset_abort() (or a failed commit) unlinks
 * every temporary, so an error leaves no partial output.
 */
struct outfile {
	FILE *f;
	char *path;        /* final name */
	char *tmp;         /* temporary name */
};
struct outset {
	struct outfile *files;
	size_t n;
};
void outset_init(struct outset *s);
/* Opens PATH's temporary for writing; "-" means stdout (not renamed). */
FILE *outset_open(struct outset *s, const char *path, struct bs_err *err);
int outset_commit(struct outset *s, struct bs_err *err);
void outset_abort(struct outset *s);
/* Creates DIR (and parents) when missing. */
int mkdir_p(const char *dir, struct bs_err *err);

#endif
