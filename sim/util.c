/*
 * util: see util.h.
 */
#include "sim/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int bs_errf(struct bs_err *err, int code, const char *file, long line, const char *field,
	    const char *fmt, ...)
{
	if (!err || err->code)
		return -1;
	err->code = code ? code : BS_EXIT_RUNTIME;
	snprintf(err->file, sizeof err->file, "%s", file ? file : "");
	err->line = line;
	snprintf(err->field, sizeof err->field, "%s", field ? field : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

void bs_err_clear(struct bs_err *err)
{
	memset(err, 0, sizeof *err);
}

void bs_err_print(const struct bs_err *err)
{
	fputs("bucketsim: error: ", stderr);
	if (err->file[0]) {
		if (err->line > 0)
			fprintf(stderr, "%s:%ld: ", err->file, err->line);
		else
			fprintf(stderr, "%s: ", err->file);
	}
	if (err->field[0])
		fprintf(stderr, "field '%s': ", err->field);
	fprintf(stderr, "%s\n", err->msg);
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
	fprintf(stderr, "bucketsim: fatal: out of memory allocating %zu bytes\n", n);
	abort();
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
		oom(nmemb * size);
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

int parse_i64(const char *s, int64_t min, int64_t max, int64_t *out, char *why, size_t whylen)
{
	char *end;
	if (!s || !*s || isspace((unsigned char)*s)) {
		snprintf(why, whylen, "expected an integer, got '%s'", s ? s : "");
		return -1;
	}
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end) {
		/* Accept integral floats such as "4.0" or "1e3" written by JSON tools. */
		double d = strtod(s, &end);
		if (*end || !isfinite(d) || d != floor(d) || d < -9.2e18 || d > 9.2e18) {
			snprintf(why, whylen, "expected an integer, got '%s'", s);
			return -1;
		}
		v = (long long)d;
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
	if (!s || !*s || isspace((unsigned char)*s)) {
		snprintf(why, whylen, "expected a number, got '%s'", s ? s : "");
		return -1;
	}
	errno = 0;
	double v = strtod(s, &end);
	if (*end || !isfinite(v)) {
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
	snprintf(why, whylen, "expected true or false, got '%s'", s ? s : "");
	return -1;
}

char *read_file(const char *path, size_t *len, struct bs_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "cannot open: %s", strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "read error: %s", strerror(errno));
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

void outset_init(struct outset *s)
{
	s->files = NULL;
	s->n = 0;
}

FILE *outset_open(struct outset *s, const char *path, struct bs_err *err)
{
	if (!strcmp(path, "-"))
		return stdout;
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		bs_errf(err, BS_EXIT_RUNTIME, path, 0, NULL, "cannot create: %s", strerror(errno));
		free(tmp);
		return NULL;
	}
	s->files = xrealloc(s->files, (s->n + 1) * sizeof *s->files);
	s->files[s->n].f = f;
	s->files[s->n].path = xstrdup(path);
	s->files[s->n].tmp = tmp;
	s->n++;
	return f;
}

static void outset_free(struct outset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].path);
		free(s->files[i].tmp);
	}
	free(s->files);
	outset_init(s);
}

void outset_abort(struct outset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->files[i].f)
			fclose(s->files[i].f);
		unlink(s->files[i].tmp);
	}
	outset_free(s);
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
	for (size_t i = 0; i < s->n; i++) {
		if (rename(s->files[i].tmp, s->files[i].path) != 0) {
			bs_errf(err, BS_EXIT_RUNTIME, s->files[i].path, 0, NULL, "cannot rename: %s",
				strerror(errno));
			outset_abort(s);
			return -1;
		}
	}
	outset_free(s);
	return 0;
}

int mkdir_p(const char *dir, struct bs_err *err)
{
	char *p = xstrdup(dir);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL, "cannot create directory: %s",
				strerror(errno));
			free(p);
			return -1;
		}
		*q = '/';
	}
	int rc = 0;
	if (mkdir(p, 0777) != 0 && errno != EEXIST)
		rc = bs_errf(err, BS_EXIT_RUNTIME, p, 0, NULL, "cannot create directory: %s",
			     strerror(errno));
	free(p);
	return rc;
}
