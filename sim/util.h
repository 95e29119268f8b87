/*
 * util: errors, allocation, strict number parsing, file reading (the atomic output sets are
 * sim/outset.h).  Implemented in sim/util.c, except libcsv's field buffer (sim/util_csv_field.c),
 * the nearest-name hint (sim/util_near.c) and the record of unread settings (sim/util_unread.c).
 *
 * Owns nothing global.  Every user-facing error travels as a `struct bs_err` filled by the
 * callee and printed once by the command line, as
 *     bucketsim: error: FILE:LINE: field 'NAME': MESSAGE
 * (each part present only when known).  `code` is the process exit code the error maps to:
 * BS_EXIT_RUNTIME (1, I/O and resources), BS_EXIT_USAGE (2, command line), BS_EXIT_INPUT (3, a
 * config, trace or bucket file).  Bugs are not errors: they go through BUG()/assert and abort.
 *
 * Allocation: xmalloc/xcalloc/xrealloc/xstrdup never return NULL: on exhaustion they remove
 * the temporaries of every open output set, print "bucketsim: error: out of memory ..." and exit
 * with BS_EXIT_RUNTIME (no core dump: running out of memory is a resource error, not a bug).
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
	long line;         /* 0 when unknown; the physical line (1-based) in files */
	char field[96];    /* "" when not about one field */
	char msg[512];
};

/* Records an error (the first one wins: later calls do not overwrite it).  Returns -1 so a
 * callee can write `return bs_errf(err, ...)`.  `err` may be NULL. */
int bs_errf(struct bs_err *err, int code, const char *file, long line, const char *field,
	    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Writes S to F with its control characters escaped, so that no text from an input (a value,
 * a file name, a field) can move the cursor, clear the terminal or split a message over lines:
 * newline, tab and carriage return as \n, \t, \r; the other C0 controls, DEL, the C1 controls
 * (U+0080..U+009F) and each byte of malformed UTF-8 as \xNN.  Well-formed UTF-8 is kept.
 * Every error and warning line goes through it (bs_err_print, bs_warn, cli_usage). */
void fputs_escaped(const char *s, FILE *f);
/* Prints "bucketsim: error: FILE:LINE: field 'FIELD': MESSAGE" to stderr, each part escaped
 * (fputs_escaped). */
void bs_err_print(const struct bs_err *err);
/* Prints "bucketsim: warning: MESSAGE" on stderr (escaped), each distinct message once per
 * process. */
void bs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bs_err_clear(struct bs_err *err);

#define BUG(...) bs_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void bs_bug(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* The first N bytes of S (fewer if S is shorter), NUL-terminated. */
char *xstrndup(const char *s, size_t n);
/* The absolute path (symbolic links resolved) of P when P names an existing file or directory
 * (abs_path), an existing regular file (abs_file_path), else NULL.  Owned by the caller. */
char *abs_path(const char *p);
char *abs_file_path(const char *p);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* FNV-1a (64-bit) of the N bytes at P, continuing from H: FNV1A_BASIS starts a hash as FNV
 * defines it (config_hash, a sweep's input files, a calibration's data file: values a user can
 * check with any FNV-1a tool).  BS_HASH_BASIS, a digit short of it, starts the hash of a random
 * stream's name (workload_stream_seed): kept, since every generated workload derives from it. */
#define FNV1A_BASIS 14695981039346656037ull
#define BS_HASH_BASIS 1469598103934665603ull
static inline uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* Strict parsing: the whole string (no leading/trailing blanks or junk, no empty string) must be
 * a decimal number in [min, max]: an optional sign, digits, an optional fraction and an optional
 * exponent.  Hexadecimal ("0x10", "0x1p4"), "inf" and "nan" are refused.  parse_i64 also takes an
 * integral value written as a float ("4.0", "1e3"), as JSON tools print them.  On failure return
 * -1 and fill `why` (a short phrase such as "expected an integer, got 'x'").  Never clamps. */
int parse_i64(const char *s, int64_t min, int64_t max, int64_t *out, char *why, size_t whylen);
int parse_f64(const char *s, double min, double max, double *out, char *why, size_t whylen);
/* The fast path alone, for a value held as a span (not NUL-terminated), as the trace reader
 * gets them: true and *OUT set when S[0..LEN) is a plain decimal (an optional '-', up to 15
 * digits, for parse_f64_span an optional fraction of up to 15 digits) in [MIN, MAX], which is
 * then exactly what parse_i64/parse_f64 give; false otherwise (the caller then calls those,
 * which decide and word the error).  parse_i64_span is inline (below): the trace reader calls
 * it for most fields of every row. */
bool parse_f64_span(const char *s, size_t len, double min, double max, double *out);
/* true: the parsers take their general path (strtoll/strtod) for every input and the span
 * parsers return false, the slow reference of the fast path for plain decimals (the tests
 * compare them). */
extern bool util_reference_parse;

static inline bool parse_i64_span(const char *s, size_t len, int64_t min, int64_t max,
				  int64_t *out)
{
	/* fast_decimal's integers (an optional '-', 1 to 15 digits), in a loop of their own. */
	if (util_reference_parse || !len)
		return false;
	size_t neg = s[0] == '-';
	if (len == neg || len - neg > 15)
		return false;
	int64_t v = 0;
	for (size_t i = neg; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9)
			return false;
		v = v * 10 + (int64_t)d;
	}
	v = neg ? -v : v;
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* Largest number of seconds whose nanosecond count fits an int64 with margin (about 292 years):
 * every key or trace value converted to int64 nanoseconds is range-checked against it first. */
#define BS_MAX_SECONDS 9.2e9
/* Checked conversion of a double to int64, rounded to nearest (halves away from zero, as
 * llround): -1 when V is not finite or its rounded value does not fit an int64; *OUT untouched
 * then. */
int f64_to_i64(double v, int64_t *out);
/* Checked conversion of seconds to int64 nanoseconds (rounded to nearest); -1 as f64_to_i64. */
int s_to_ns(double s, int64_t *ns);
/* true/false/1/0/yes/no/on/off, case-insensitive. */
int parse_bool(const char *s, bool *out, char *why, size_t whylen);

/*
 * Physical lines for libcsv, which counts neither lines nor records: csv_parse_lines() feeds
 * libcsv one line at a time and keeps `rec_line`, the line (1-based) on which the record being
 * read began (blank lines, which libcsv skips, and quoted newlines inside a record counted), and
 * `line`, the line being fed.  The callbacks are libcsv's, called through unchanged.  Returns the
 * bytes consumed, as csv_parse does.  A line ends at '\n' (so CRLF files count alike).
 *
 * It also stops, with `stop` set, where libcsv would take in a byte no CSV may hold: at a NUL
 * byte (CSV_LINES_NUL: the bytes before it fed, rec_line and line those of the NUL, whatever the
 * field around it; a NUL is never handed to a field), and before the line that would make the
 * record being read longer than `max_rec` bytes (CSV_LINES_LONG; 0 = no limit; blank lines
 * between records are not counted).  Both are for the caller to report, naming rec_line.
 */
struct csv_parser;
enum { CSV_LINES_OK = 0, CSV_LINES_NUL, CSV_LINES_LONG };
struct csv_lines {
	long line, rec_line;
	bool bol, in_rec;
	int stop;               /* CSV_LINES_* */
	size_t max_rec, rec_bytes;
	void (*cb_field)(void *, size_t, void *);
	void (*cb_record)(int, void *);
	void *ctx;
};
void csv_lines_init(struct csv_lines *ln, void (*cb_field)(void *, size_t, void *),
		    void (*cb_record)(int, void *), void *ctx);
size_t csv_parse_lines(struct csv_parser *p, const char *data, size_t n, struct csv_lines *ln);
/*
 * csv_init(P, OPTIONS) for a reader of the project (BUG when libcsv fails), with the field
 * buffer obtained from csv_field_realloc/csv_field_free: libcsv asks for its buffer
 * `blk_size` bytes (128) larger each time a field outgrows it, so a field of megabytes is a
 * hundred thousand requests; they are answered from a capacity that doubles, so the buffer is
 * moved only some twenty times (a 16 MiB field: 17) and a parser that sees only short fields
 * holds 128 bytes.  What is read, and the limits, are libcsv's and csv_lines's.
 */
void csv_parser_setup(struct csv_parser *p, unsigned char options);
/* The allocator csv_parser_setup gives libcsv (realloc/free semantics; NULL when memory runs
 * out, which libcsv reports as CSV_ENOMEM).  csv_field_capacity: the bytes reserved behind a
 * buffer it returned (0 for NULL). */
void *csv_field_realloc(void *ptr, size_t size);
void csv_field_free(void *ptr);
size_t csv_field_capacity(const void *ptr);
/* csv_fini through the same callbacks. */
int csv_fini_lines(struct csv_parser *p, struct csv_lines *ln);
/* true when P and LN, after the bytes fed so far, are in the state of a new parser with a new
 * csv_lines: at the start of a line, between records, outside any field (quoted or not).  The
 * rest of the input then gives the same callbacks whether it is fed to P or to a new parser,
 * which is what lets a reader parse the second half of a buffer speculatively on its own. */
bool csv_lines_at_record_start(const struct csv_parser *p, const struct csv_lines *ln);
/* 3 when S[0..N) begins with a UTF-8 byte-order mark, else 0: the bytes a CSV reader skips
 * before libcsv sees the first field (which may then be quoted). */
size_t utf8_bom_len(const char *s, size_t n);

/*
 * Reading a file whole.  No input is trusted to end: /dev/zero, a pipe or a FIFO have no size,
 * so every limit is enforced on the bytes as they are read, never from stat().
 *
 *  - The reading stops after the first NUL byte, which is kept as the last of *LEN bytes (and
 *    followed by the terminating NUL): no text format here holds one, so the caller's parser
 *    reports it where it is without the rest being read.
 *  - max_size: more bytes than this is an error naming the file, the limit and KIND
 *    ("FILE: larger than 64 MiB, the limit of KIND"); 0 = none.
 *  - max_line: a line ('\n' excluded) longer than this is an error naming the file and the line
 *    ("FILE:LINE: line longer than the limit of 16 MiB"); 0 = none.
 *  - array_max_size: when not 0 and the first byte other than blanks is '[' (a JSON array, parsed
 *    whole, which may be one line), max_size becomes this and max_line does not apply.
 */
struct read_lim {
	size_t max_size;
	const char *kind;
	size_t max_line;
	size_t array_max_size;
};
/* 64 MiB: the limit of a file read whole (read_file): configurations, hardware profiles, bucket
 * files, the calibration measurements, a sweep's spec and point files, JSON read by plot. */
#define BS_READ_MAX ((size_t)64 << 20)
/* 16 MiB: the limit of one record of a trace (a CSV record, a JSON Lines line) or of a table
 * plot reads, and of one line of a calibration CSV. */
#define BS_RECORD_MAX ((size_t)16 << 20)
char *read_file_lim(const char *path, size_t *len, const struct read_lim *lim,
		    struct bs_err *err);
/* read_file_lim of the file already open on FD (named PATH in errors), read from where it is;
 * FD is closed.  A reader that has opened a file (to look at what it is) reads it from that
 * descriptor: opening it again by name could meet another file, or wait for ever on a FIFO
 * whose writer has gone. */
char *read_fd_lim(int fd, const char *path, size_t *len, const struct read_lim *lim,
		  struct bs_err *err);
/* Reads a whole file into a NUL-terminated buffer (owned by the caller), at most BS_READ_MAX
 * bytes, stopping after a NUL byte (read_file_lim). */
char *read_file(const char *path, size_t *len, struct bs_err *err);
/* The JSON document in the file PATH (cJSON, owned by the caller), or NULL with ERR set: the
 * file cannot be read, holds a NUL byte (named by its line), or it is not valid JSON. */
struct cJSON;
struct cJSON *read_json(const char *path, struct bs_err *err);
/* read_json, keeping the file's text in *TEXT (length *LEN; freed by the caller; NULL on an
 * error), for a reader that locates members in it. */
struct cJSON *read_json_text(const char *path, char **text, size_t *len, struct bs_err *err);
/* V as the shortest %g text that reads back to the same double ("1700000000.5", not the
 * "1.7e+09" of %.9g, which makes two different values of a message look equal).  Returns BUF. */
const char *shortest_g(double v, char *buf, size_t n);
/* The offset of the first number of the JSON text T[0..N) (outside strings) that is not in
 * JSON's grammar although cJSON takes it ("010", "1.", "-.5", "1.e3": cJSON hands the
 * characters to strtod), its length in *RUN; N when there is none.  Every JSON reader refuses it
 * with JSON_BAD_NUMBER_MSG (a leading zero reads as octal elsewhere). */
size_t json_bad_number(const char *t, size_t n, size_t *run);
#define JSON_BAD_NUMBER_MSG "'%.*s' is not a JSON number (no leading zeros; digits on both " \
	"sides of a '.')"
/* The line (1-based) of byte OFF of TEXT (counted as far as a NUL byte). */
long text_line_of(const char *text, size_t off);
/* Best-effort line of a JSON object member "NAME" in TEXT: the first such member name (a string
 * followed by ':') at or after byte *FROM, which moves past it, so that members looked up in the
 * order of the document find each its own occurrence (a name given twice finds its second
 * occurrence next); else the first anywhere; 0 when none is found (a name written with
 * escapes). */
long json_member_line(const char *text, const char *name, size_t *from);
/* The offset of the first "\u0000" escape inside a string of the JSON text T[0..N), or N when
 * there is none: cJSON decodes it into a NUL inside the C string, which silently cuts the value
 * or the member's name there ("alpaca:1\u0000,longbench:1" read as "alpaca:1"); every JSON
 * reader refuses it with JSON_NUL_ESCAPE_MSG. */
size_t json_nul_escape(const char *t, size_t n);
#define JSON_NUL_ESCAPE_MSG "\\u0000 (a NUL character) in a string: it would cut the text there"


/* Levenshtein distance of A and B when it is at most MAX (below SIZE_MAX), else MAX + 1 (also
 * when either is over 64 bytes). */
size_t str_edit_distance(const char *a, const char *b, size_t max);

/* The nearest known name to a mistyped one, for "did you mean" hints (unknown --env variables,
 * unknown config keys): str_near_init(), str_near_try() for every known name, then best is the
 * first nearest at most STR_NEAR_MAX edits away, or NULL. */
#define STR_NEAR_MAX 3
struct str_near {
	const char *name, *best;
	size_t dist;
};
void str_near_init(struct str_near *n, const char *name);
void str_near_try(struct str_near *n, const char *candidate);
/* "; did you mean BEST?" into BUF, or "" when no name was near. */
void str_near_hint(const struct str_near *n, char *buf, size_t size);

/* Settings reported set but never read (a key, or an --env variable's NAME), noted as they
 * are reported whether the report is a warning or an error, so that a sweep can tell an axis
 * that nothing reads.  bs_unread_reset() forgets them. */
void bs_unread_note(const char *name);
bool bs_unread_noted(const char *name);
void bs_unread_reset(void);

/* The output sets (sim/outset.h) go with the errors they report. */
#include "sim/outset.h"

#endif
