/*
 * util: see util.h (the output sets are sim/outset.c; libcsv's field buffer sim/util_csv_field.c,
 * the nearest-name hint sim/util_near.c, the record of unread settings sim/util_unread.c).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sim/util.h"

#include <cjson/cJSON.h>
#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* S (a buffer of CAP bytes) was filled by a print that needed NEED bytes: when they did not
 * fit, the cut is moved back to a UTF-8 character boundary and marked with "...", so that a long
 * value neither ends in half a character nor looks whole. */
static void mark_cut(char *s, size_t cap, int need)
{
	if (need < 0 || (size_t)need < cap || cap < 8)
		return;
	size_t n = cap - 4;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) /* a continuation byte */
		n--;
	memcpy(s + n, "...", 4);
}

int bs_errf(struct bs_err *err, int code, const char *file, long line, const char *field,
	    const char *fmt, ...)
{
	if (!err || err->code)
		return -1;
	err->code = code ? code : BS_EXIT_RUNTIME;
	mark_cut(err->file, sizeof err->file,
		 snprintf(err->file, sizeof err->file, "%s", file ? file : ""));
	err->line = line;
	mark_cut(err->field, sizeof err->field,
		 snprintf(err->field, sizeof err->field, "%s", field ? field : ""));
	va_list ap;
	va_start(ap, fmt);
	mark_cut(err->msg, sizeof err->msg, vsnprintf(err->msg, sizeof err->msg, fmt, ap));
	va_end(ap);
	return -1;
}

void fputs_escaped(const char *s, FILE *f)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned char c = *p;
		/* The length of a well-formed UTF-8 sequence at P (its continuation bytes present),
		 * 1 for ASCII, 0 for a byte that starts none. */
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
			 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		for (size_t k = 1; k < n; k++)
			if ((p[k] & 0xc0) != 0x80)
				n = 0;
		/* C0 controls, DEL and the C1 controls (U+0080..U+009F: CSI is one) are escaped,
		 * and so is each byte of a malformed sequence. */
		bool ctl = n == 1 ? c < 0x20 || c == 0x7f : n == 2 && c == 0xc2 && p[1] < 0xa0;
		if (n && !ctl) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		if (c == '\n' || c == '\t' || c == '\r') {
			fputc('\\', f);
			fputc(c == '\n' ? 'n' : c == '\t' ? 't' : 'r', f);
			p++;
			continue;
		}
		for (size_t k = 0; k < (n ? n : 1); k++) {
			fputs("\\x", f);
			fputc(hex[p[k] >> 4], f);
			fputc(hex[p[k] & 15], f);
		}
		p += n ? n : 1;
	}
}

void bs_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* Each once per process: a sweep checks every point's configuration, a capacity search
	 * every system's, and the same setting would warn as many times. */
	static char *said[64];
	static size_t nsaid;
	for (size_t i = 0; i < nsaid; i++)
		if (!strcmp(said[i], msg))
			return;
	fputs("bucketsim: warning: ", stderr);
	fputs_escaped(msg, stderr);
	fputc('\n', stderr);
	if (nsaid < sizeof said / sizeof *said)
		said[nsaid++] = xstrdup(msg);
}

void bs_err_clear(struct bs_err *err)
{
	memset(err, 0, sizeof *err);
}

void bs_err_print(const struct bs_err *err)
{
	fputs("bucketsim: error: ", stderr);
	if (err->file[0]) {
		fputs_escaped(err->file, stderr);
		if (err->line > 0)
			fprintf(stderr, ":%ld", err->line);
		fputs(": ", stderr);
	}
	if (err->field[0]) {
		fputs("field '", stderr);
		fputs_escaped(err->field, stderr);
		fputs("': ", stderr);
	}
	fputs_escaped(err->msg, stderr);
	fputc('\n', stderr);
}

void bs_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "bucketsim: BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static _Noreturn void oom(size_t n)
{
	outset_cleanup_all();
	fprintf(stderr, "bucketsim: error: out of memory (allocating %zu bytes)\n", n);
	exit(BS_EXIT_RUNTIME);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(size && nmemb > SIZE_MAX / size ? SIZE_MAX : nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);
	memcpy(p, s, n);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		BUG("vsnprintf failed");
	char *p = xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

/* Only the characters of a decimal number: refuses hex, "inf", "nan" and blanks before strtod
 * sees them (strtod would accept all of those). */
static bool decimal_chars(const char *s)
{
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && !strchr("+-.eE", *s))
			return false;
	return true;
}

bool util_reference_parse;

/* Fast paths of the two parsers, for the plain forms traces are made of: an optional '-', up
 * to 15 digits and an optional fraction of up to 15 digits (Clinger's fast path: an integer
 * below 2^53 divided by an exact power of ten is the correctly rounded value, the same as
 * strtod's; the sign is exact).  false when S[0..LEN) is not such a form (the general path then
 * decides). */
static const double pow10_exact[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
				     1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

static bool fast_decimal(const char *s, size_t len, double *out, bool *integral, int64_t *ival)
{
	if (util_reference_parse || !len)
		return false;
	bool neg = s[0] == '-';
	const char *p = s + neg, *e = s + len;
	if (e - p > 16)
		return false; /* more than 15 digits and a point */
	int64_t m = 0;
	const char *q = p;
	for (; q < e && (unsigned)(*q - '0') < 10; q++)
		m = m * 10 + (*q - '0');
	int digits = (int)(q - p), frac = -1;
	if (q < e) {
		if (*q != '.' || !digits)
			return false;
		const char *f = ++q;
		for (; q < e && (unsigned)(*q - '0') < 10; q++)
			m = m * 10 + (*q - '0');
		if (q < e)
			return false;
		frac = (int)(q - f);
		digits += frac;
	}
	if (!digits || digits > 15 || frac == 0)
		return false;
	double d = frac > 0 ? (double)m / pow10_exact[frac] : (double)m;
	*integral = frac < 0;
	*ival = neg ? -m : m;
	*out = neg ? -d : d;
	return true;
}

bool parse_f64_span(const char *s, size_t len, double min, double max, double *out)
{
	double d;
	bool integral;
	int64_t v;
	if (!fast_decimal(s, len, &d, &integral, &v) || !(d >= min && d <= max))
		return false;
	*out = d;
	return true;
}

int parse_i64(const char *s, int64_t min, int64_t max, int64_t *out, char *why, size_t whylen)
{
	char *end;
	double fd;
	bool integral;
	int64_t fv;
	if (s && fast_decimal(s, strlen(s), &fd, &integral, &fv) && integral) {
		if (fv < min || fv > max) {
			snprintf(why, whylen, "expected an integer in [%lld, %lld], got '%s'",
				 (long long)min, (long long)max, s);
			return -1;
		}
		*out = fv;
		return 0;
	}
	if (!s || !*s || !decimal_chars(s)) {
		snprintf(why, whylen, "expected an integer, got '%s'", s ? s : "");
		return -1;
	}
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end) {
		/* Accept integral floats such as "4.0" or "1e3" written by JSON tools. */
		double d = strtod(s, &end);
		int64_t iv;
		if (*end || end == s || !isfinite(d) || d != floor(d)) {
			snprintf(why, whylen, "expected an integer, got '%s'", s);
			return -1;
		}
		if (f64_to_i64(d, &iv)) {
			snprintf(why, whylen, "integer '%s' is out of range", s);
			return -1;
		}
		v = iv;
	} else if (errno == ERANGE) {
		snprintf(why, whylen, "integer '%s' is out of range", s);
		return -1;
	}
	if (v < min || v > max) {
		snprintf(why, whylen, "expected an integer in [%lld, %lld], got '%s'", (long long)min,
			 (long long)max, s);
		return -1;
	}
	*out = v;
	return 0;
}

int parse_f64(const char *s, double min, double max, double *out, char *why, size_t whylen)
{
	char *end;
	double fd;
	bool integral;
	int64_t fv;
	if (s && fast_decimal(s, strlen(s), &fd, &integral, &fv)) {
		if (fd < min || fd > max) {
			snprintf(why, whylen, "expected a number in [%g, %g], got '%s'", min, max, s);
			return -1;
		}
		*out = fd;
		return 0;
	}
	if (!s || !*s || !decimal_chars(s)) {
		snprintf(why, whylen, "expected a number, got '%s'", s ? s : "");
		return -1;
	}
	errno = 0;
	double v = strtod(s, &end);
	if (*end || end == s || !isfinite(v)) {
		snprintf(why, whylen, "expected a number, got '%s'", s);
		return -1;
	}
	if (v < min || v > max) {
		snprintf(why, whylen, "expected a number in [%g, %g], got '%s'", min, max, s);
		return -1;
	}
	*out = v;
	return 0;
}

int f64_to_i64(double v, int64_t *out)
{
	/* 2^63 is exact in a double; every double below it converts exactly. */
	if (!isfinite(v))
		return -1;
	double r = round(v);
	if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0))
		return -1;
	*out = (int64_t)r;
	return 0;
}

int s_to_ns(double s, int64_t *ns)
{
	if (!isfinite(s) || s > BS_MAX_SECONDS || s < -BS_MAX_SECONDS)
		return -1;
	return f64_to_i64(s * 1e9, ns);
}

int parse_bool(const char *s, bool *out, char *why, size_t whylen)
{
	static const char *const t[] = {"true", "1", "yes", "on"};
	static const char *const f[] = {"false", "0", "no", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (s && !strcasecmp(s, t[i])) {
			*out = true;
			return 0;
		}
		if (s && !strcasecmp(s, f[i])) {
			*out = false;
			return 0;
		}
	}
	snprintf(why, whylen, "expected true or false, got '%s' (1/0, yes/no and on/off are "
		 "taken too, in any case)", s ? s : "");
	return -1;
}

static void lines_field(void *s, size_t len, void *data)
{
	struct csv_lines *ln = data;
	ln->cb_field(s, len, ln->ctx);
}

static void lines_record(int c, void *data)
{
	struct csv_lines *ln = data;
	ln->cb_record(c, ln->ctx);
	ln->in_rec = false;
}

void csv_lines_init(struct csv_lines *ln, void (*cb_field)(void *, size_t, void *),
		    void (*cb_record)(int, void *), void *ctx)
{
	memset(ln, 0, sizeof *ln);
	ln->bol = true;
	ln->cb_field = cb_field;
	ln->cb_record = cb_record;
	ln->ctx = ctx;
}

size_t csv_parse_lines(struct csv_parser *p, const char *data, size_t n, struct csv_lines *ln)
{
	/* One scan of the whole piece for a NUL: libcsv is fed only the bytes before it. */
	const char *z = memchr(data, 0, n);
	size_t end = z ? (size_t)(z - data) : n;
	size_t off = 0;
	while (off < end) {
		const char *s = data + off;
		const char *nl = memchr(s, '\n', end - off);
		size_t len = nl ? (size_t)(nl - s) + 1 : end - off;
		if (ln->bol) {
			ln->line++;
			ln->bol = false;
		}
		if (!ln->in_rec) {
			/* libcsv skips lines of blanks only: a record begins on the first other. */
			for (size_t i = 0; i < len; i++)
				if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') {
					ln->in_rec = true;
					ln->rec_line = ln->line;
					ln->rec_bytes = 0;
					break;
				}
		}
		if (ln->in_rec && ln->max_rec && (ln->rec_bytes += len) > ln->max_rec) {
			ln->stop = CSV_LINES_LONG;
			return off;
		}
		size_t r = csv_parse(p, s, len, lines_field, lines_record, ln);
		if (r != len)
			return off + r;
		ln->bol = nl != NULL;
		off += len;
	}
	if (!z)
		return n;
	if (ln->bol) {
		ln->line++;
		ln->bol = false;
	}
	if (!ln->in_rec) {
		ln->in_rec = true;
		ln->rec_line = ln->line;
	}
	ln->stop = CSV_LINES_NUL;
	return end;
}

int csv_fini_lines(struct csv_parser *p, struct csv_lines *ln)
{
	return csv_fini(p, lines_field, lines_record, ln);
}

bool csv_lines_at_record_start(const struct csv_parser *p, const struct csv_lines *ln)
{
	struct csv_parser fresh;
	if (csv_init(&fresh, (unsigned char)csv_get_opts((struct csv_parser *)p)) != 0)
		BUG("csv_init failed");
	bool same = p->pstate == fresh.pstate && p->quoted == fresh.quoted &&
		    p->spaces == fresh.spaces && p->entry_pos == fresh.entry_pos &&
		    p->status == fresh.status;
	csv_free(&fresh);
	return same && ln->bol && !ln->in_rec;
}

size_t utf8_bom_len(const char *s, size_t n)
{
	return n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3) ? 3 : 0;
}

/* "1 GiB", "64 MiB" (a whole number of them) or "N bytes", for the limits' errors. */
static const char *size_text(size_t n, char *buf, size_t len)
{
	if (n >= ((size_t)1 << 30) && n % ((size_t)1 << 30) == 0)
		snprintf(buf, len, "%zu GiB", n >> 30);
	else if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
		snprintf(buf, len, "%zu MiB", n >> 20);
	else
		snprintf(buf, len, "%zu bytes", n);
	return buf;
}

char *read_file_lim(const char *path, size_t *len, const struct read_lim *lim,
		    struct bs_err *err)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "cannot open: %s", strerror(errno));
		return NULL;
	}
	return read_fd_lim(fd, path, len, lim, err);
}

char *read_fd_lim(int fd, const char *path, size_t *len, const struct read_lim *lim,
		  struct bs_err *err)
{
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "cannot read: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	size_t max = lim->max_size, max_line = lim->max_line;
	/* A regular file is read into a buffer of its size (and a byte more, to meet its end
	 * without growing it), never more than the limit allows; anything else, or a file that
	 * grows, by doubling.  The size only sizes the buffer: the limits hold on what is read. */
	struct stat st;
	size_t cap = 1 << 16, n = 0;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uintmax_t)st.st_size < SIZE_MAX - 2)
		cap = (size_t)st.st_size + 2;
	size_t most = lim->array_max_size > max ? lim->array_max_size : max;
	if (most && cap > most + 2)
		cap = most + 2;
	char *buf = xmalloc(cap);
	long line = 1;
	size_t line_start = 0;      /* offset of the line being read */
	int array = lim->array_max_size ? -1 : 0; /* -1: no byte but blanks read yet */
	char sb[32];
	for (;;) {
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		size_t want = cap - n - 1;
		if (max && want > max + 1 - n)
			want = max + 1 - n; /* a byte past the limit tells that it is passed */
		size_t r = fread(buf + n, 1, want, f);
		if (r == 0)
			break;
		char *s = buf + n;
		const char *z = memchr(s, 0, r);
		n += z ? (size_t)(z - s) + 1 : r;
		const char *e = buf + n;
		if (array < 0) {
			const char *q = s;
			while (q < e && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n'))
				q++;
			if (q < e) {
				array = *q == '[';
				if (array)
					max = lim->array_max_size;
			}
		}
		if (max_line && array != 1) {
			for (const char *q = s, *nl; (nl = memchr(q, '\n', (size_t)(e - q))); q = nl + 1) {
				if ((size_t)(nl - buf) - line_start > max_line)
					break;
				line++;
				line_start = (size_t)(nl - buf) + 1;
			}
			if (n - line_start > max_line) {
				bs_errf(err, BS_EXIT_INPUT, path, line, NULL,
					"line longer than the limit of %s",
					size_text(max_line, sb, sizeof sb));
				goto fail;
			}
		}
		if (max && n > max) {
			bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "larger than %s, the limit of %s",
				size_text(max, sb, sizeof sb), lim->kind);
			goto fail;
		}
		if (z)
			break;
	}
	if (ferror(f)) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "read error: %s", strerror(errno));
		goto fail;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

char *read_file(const char *path, size_t *len, struct bs_err *err)
{
	static const struct read_lim lim = {
		BS_READ_MAX, "a file read whole (configuration, profile, bucket or JSON file)", 0, 0};
	return read_file_lim(path, len, &lim, err);
}

/* The 1-based line of byte OFF of TEXT. */
static long line_at(const char *text, size_t off)
{
	long line = 1;
	for (const char *p = text; (p = memchr(p, '\n', (size_t)(text + off - p))); p++)
		line++;
	return line;
}

const char *shortest_g(double v, char *buf, size_t n)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

long text_line_of(const char *text, size_t off)
{
	long line = 1;
	for (size_t i = 0; i < off && text[i]; i++)
		if (text[i] == '\n')
			line++;
	return line;
}

/* The first "NAME" followed by a ':' (a member name, not a string value) at or after P. */
static const char *find_member(const char *p, const char *pat)
{
	size_t n = strlen(pat);
	for (; (p = strstr(p, pat)); p++) {
		const char *q = p + n;
		while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
			q++;
		if (*q == ':')
			return p;
	}
	return NULL;
}

long json_member_line(const char *text, const char *name, size_t *from)
{
	char *pat = xasprintf("\"%s\"", name);
	const char *p = find_member(text + *from, pat);
	if (!p)
		p = find_member(text, pat);
	size_t n = strlen(pat);
	free(pat);
	if (!p)
		return 0;
	*from = (size_t)(p - text) + n;
	return text_line_of(text, (size_t)(p - text));
}

size_t json_nul_escape(const char *t, size_t n)
{
	bool in = false;
	for (size_t i = 0; i < n; i++) {
		if (!in) {
			in = t[i] == '"';
		} else if (t[i] == '"') {
			in = false;
		} else if (t[i] == '\\' && i + 1 < n) {
			if (t[i + 1] == 'u' && i + 5 < n && !memcmp(t + i + 2, "0000", 4))
				return i;
			i++; /* the escaped character, a quote included */
		}
	}
	return n;
}

size_t json_bad_number(const char *t, size_t n, size_t *run)
{
	bool in = false;
	for (size_t i = 0; i < n; i++) {
		char c = t[i];
		if (in) {
			if (c == '"')
				in = false;
			else if (c == '\\' && i + 1 < n)
				i++;
			continue;
		}
		if (c == '"') {
			in = true;
			continue;
		}
		if (c != '-' && !(c >= '0' && c <= '9'))
			continue;
		/* The characters cJSON reads as one number (parse_number), checked against JSON's
		 * grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
		size_t j = i;
		while (j < n && (strchr("0123456789+-eE.", t[j]) && t[j]))
			j++;
		size_t k = i;
		if (k < j && t[k] == '-')
			k++;
		bool ok = k < j && t[k] >= '0' && t[k] <= '9';
		if (ok && t[k] == '0')
			k++;
		else
			while (k < j && t[k] >= '0' && t[k] <= '9')
				k++;
		if (ok && k < j && t[k] == '.') {
			size_t d = ++k;
			while (k < j && t[k] >= '0' && t[k] <= '9')
				k++;
			ok = k > d;
		}
		if (ok && k < j && (t[k] == 'e' || t[k] == 'E')) {
			k++;
			if (k < j && (t[k] == '+' || t[k] == '-'))
				k++;
			size_t d = k;
			while (k < j && t[k] >= '0' && t[k] <= '9')
				k++;
			ok = k > d;
		}
		if (!ok || k != j) {
			if (run)
				*run = j - i;
			return i;
		}
		i = j - 1;
	}
	return n;
}

struct cJSON *read_json_text(const char *path, char **text, size_t *len, struct bs_err *err)
{
	*text = read_file(path, len, err);
	if (!*text)
		return NULL;
	/* cJSON takes a NUL for a blank: the file would be read as if it were not there. */
	size_t k = strlen(*text), z = k == *len ? json_nul_escape(*text, *len) : *len, run = 0;
	size_t b = z == *len ? json_bad_number(*text, *len, &run) : *len;
	cJSON *j = k == *len && z == *len && b == *len ? cJSON_ParseWithLength(*text, *len) : NULL;
	if (k != *len)
		bs_errf(err, BS_EXIT_INPUT, path, line_at(*text, k), NULL, "NUL byte in the file");
	else if (z != *len)
		bs_errf(err, BS_EXIT_INPUT, path, line_at(*text, z), NULL, JSON_NUL_ESCAPE_MSG);
	else if (b != *len)
		bs_errf(err, BS_EXIT_INPUT, path, line_at(*text, b), NULL, JSON_BAD_NUMBER_MSG,
			(int)(run > 40 ? 40 : run), *text + b);
	else if (!j)
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "not valid JSON");
	if (!j) {
		free(*text);
		*text = NULL;
	}
	return j;
}

struct cJSON *read_json(const char *path, struct bs_err *err)
{
	char *txt;
	size_t len;
	cJSON *j = read_json_text(path, &txt, &len, err);
	free(txt);
	return j;
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = xmalloc(len + 1);
	memcpy(d, s, len);
	d[len] = 0;
	return d;
}

char *abs_path(const char *p)
{
	char buf[PATH_MAX];
	return *p && realpath(p, buf) ? xstrdup(buf) : NULL;
}

char *abs_file_path(const char *p)
{
	struct stat sb;
	return *p && !stat(p, &sb) && S_ISREG(sb.st_mode) ? abs_path(p) : NULL;
}
