/*
 * trace_csv: the CSV reader of trace.c (libcsv, strict mode; records counted in the
 * end-of-record callback): the field and record callbacks with their number fast path, a file
 * read in blocks as it is parsed, and a large input read in two parts on two threads (load_csv).
 */
#include "workloads/trace_load_int.h"

#include <csv.h>
#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workloads/workload.h"

/* tl_set_field's fast path for a CSV field S[0..LEN) (not NUL-terminated): a plain decimal in
 * its column's range (parse_i64_span, parse_f64_span) or a task's exact name is stored; false
 * for anything else (an empty cell, other text, a value out of range, a NUL byte...), which
 * tl_set_field then takes. */
static bool set_field_span(struct loader *L, enum col c, const char *s, size_t len)
{
	int64_t v;
	double d;
	if (util_reference_parse)
		return false;
	if (c == COL_TASK) {
		if (len == 6 && !memcmp(s, "online", 6))
			v = TASK_ONLINE;
		else if (len == 7 && !memcmp(s, "offline", 7))
			v = TASK_OFFLINE;
		else
			return false;
	} else if (c == COL_ARRIVAL) {
		if (!parse_f64_span(s, len, 0, DBL_MAX, &d))
			return false;
		d *= L->arrival_unit;
		if (d > BS_MAX_SECONDS)
			return false;
		L->arrival = d;
		v = 0;
	} else if (!tl_col_range[c].integer ||
		   !parse_i64_span(s, len, tl_col_range[c].min, tl_col_range[c].max, &v)) {
		return false;
	}
	L->given[c] = true;
	L->v[c] = v;
	return true;
}

/* ---- CSV ---- */

/* The name of the CSV column of field F, for errors. */
static const char *field_name(const struct loader *L, size_t f, char *buf, size_t len)
{
	if (f < L->nhdr)
		return L->hdr[f];
	snprintf(buf, len, "column %zu", f + 1);
	return buf;
}

static void field_general(struct loader *L, const char *s, size_t len);

static void csv_cb_field(void *s, size_t len, void *data)
{
	struct loader *L = data;
	if (L->failed)
		return;
	if (L->nrec > 0 && L->field < L->nhdr) {
		/* The common case first: a number in a column that takes one. */
		if (L->field == 0)
			tl_begin_row(L);
		enum col c = L->roles[L->field];
		/* No field holds a NUL: csv_parse_lines stops before one. */
		if (c == COL_IGNORE || c == COL_ID || set_field_span(L, c, s, len)) {
			L->field++;
			return;
		}
	}
	field_general(L, s, len);
}

/* A NUL byte in the field being read (csv_parse_lines stopped before it): named by the record's
 * line and the field's column. */
static void nul_error(struct loader *L)
{
	char nb[32];
	const char *name = L->nrec == 0 ? NULL : field_name(L, L->field, nb, sizeof nb);
	L->record = L->ln.rec_line;
	L->failed = true;
	bs_errf(L->err, BS_EXIT_INPUT, L->t->name, L->record, name, "NUL byte in the %s",
		L->nrec == 0 ? "header" : "value");
}

/* The header's names, and every value the fast path above does not take. */
static __attribute__((noinline)) void field_general(struct loader *L, const char *s, size_t len)
{
	L->record = L->ln.rec_line;
	if (L->nrec == 0) {
		char *name = xmalloc(len + 1);
		memcpy(name, s, len);
		name[len] = 0;
		if (L->nhdr == L->hdrcap) {
			L->hdrcap = L->hdrcap * 2 + 8;
			L->roles = xrealloc(L->roles, L->hdrcap * sizeof *L->roles);
			L->hdr = xrealloc(L->hdr, L->hdrcap * sizeof *L->hdr);
		}
		enum col c = tl_col_lookup(name);
		if (c == COL_HASH_IDS)
			c = COL_IGNORE; /* a list: JSON Lines only */
		L->hdr[L->nhdr] = name;
		L->roles[L->nhdr++] = c;
		if (c != COL_IGNORE && L->has[c]) {
			L->field++;
			tl_err(L, COL_IGNORE, "column '%s' repeats column '%s'", name, L->colname[c]);
			return;
		}
		if (c != COL_IGNORE)
			tl_add_col(L, c, name);
		return;
	}
	if (L->field == 0)
		tl_begin_row(L);
	enum col c = L->field < L->nhdr ? L->roles[L->field] : COL_IGNORE;
	L->field++;
	if (c == COL_IGNORE || c == COL_ID)
		return; /* text kept for reference only: any length */
	char buf[64], *heap = NULL, *v = buf;
	if (len >= sizeof buf)
		v = heap = xmalloc(len + 1);
	memcpy(v, s, len);
	v[len] = 0;
	tl_set_field(L, c, v);
	free(heap);
}

static void csv_cb_record(int c, void *data)
{
	struct loader *L = data;
	(void)c;
	if (L->failed)
		return;
	L->record = L->ln.rec_line;
	if (L->nrec == 0) {
		L->field = 0;
		if (tl_check_columns(L) == 0)
			L->nrec++;
		return;
	}
	if (L->field != L->nhdr) {
		tl_err(L, COL_IGNORE, "expected %zu fields as in the header, got %zu", L->nhdr,
		     L->field);
		return;
	}
	L->field = 0;
	if (tl_end_row(L) == 0)
		L->nrec++;
}

/* 64 KiB: a block stays in the cache while it is parsed, and one block per reader (allocated
 * once, below malloc's mmap threshold) is all the memory a file's bytes take. */
#define CSV_BLOCK ((size_t)1 << 16)

/* Bytes [FROM, FROM + N) of a file source into BLK (N <= CSV_BLOCK): the count read, 0 at the
 * end of the file, -1 on a read error (recorded on L). */
ssize_t csv_src_read(struct loader *L, const struct csv_src *src, char *blk, size_t from,
			size_t n)
{
	for (;;) {
		ssize_t r = pread(src->fd, blk, n, (off_t)from);
		if (r >= 0)
			return r;
		if (errno != EINTR) {
			L->failed = true;
			return bs_errf(L->err, BS_EXIT_INPUT, L->t->name, 0, NULL, "read error: %s",
				       strerror(errno));
		}
	}
}

/* Feeds DATA[0..N) to P; a malformed-CSV error, a NUL byte or an over-long record recorded on L
 * (the input is not read further). */
static void feed(struct loader *L, struct csv_parser *p, const char *data, size_t n)
{
	if (csv_parse_lines(p, data, n, &L->ln) != n && !L->failed) {
		if (L->ln.stop == CSV_LINES_NUL) {
			nul_error(L);
		} else if (L->ln.stop == CSV_LINES_LONG) {
			L->record = L->ln.rec_line;
			tl_err(L, COL_IGNORE, "record longer than the limit of %zu MiB",
			       BS_RECORD_MAX >> 20);
		} else {
			L->record = L->ln.line;
			tl_err(L, COL_IGNORE, "malformed CSV (%s)",
			       csv_error(p) == CSV_EPARSE ? "bad quoting" : "parser out of memory");
		}
	}
}

/* Bytes [FROM, FROM + up to CSV_BLOCK) of SRC (before TO): in place, or read into BLK.  The
 * count, 0 at the end (TO, or a file that shrank), -1 on an error. */
static ssize_t src_block(struct loader *L, const struct csv_src *src, char *blk, size_t from,
			 size_t to, const char **data)
{
	size_t n = to - from < CSV_BLOCK ? to - from : CSV_BLOCK;
	if (src->buf || !n) {
		*data = src->buf + from;
		return (ssize_t)n;
	}
	*data = blk;
	return csv_src_read(L, src, blk, from, n);
}

/* Feeds bytes [FROM, TO) of SRC to P in blocks of CSV_BLOCK (read into BLK, of CSV_BLOCK bytes,
 * for a file), stopping after the block in which the first error was recorded (or, when STOP is
 * given, once it is set); 0 or -1 (L->failed). */
static int csv_feed(struct loader *L, struct csv_parser *p, const struct csv_src *src, char *blk,
		    size_t from, size_t to, const atomic_bool *stop)
{
	while (from < to && !L->failed) {
		if (stop && atomic_load_explicit(stop, memory_order_relaxed))
			break;
		const char *data;
		ssize_t n = src_block(L, src, blk, from, to, &data);
		if (n <= 0)
			break;
		feed(L, p, data, (size_t)n);
		from += (size_t)n;
	}
	return L->failed || from < to ? -1 : 0;
}

/* Feeds SRC from *OFF to the end of the line on which the header record ends (or to the end of a
 * block when that line goes on past it), line by line; *OFF is moved past the bytes fed. */
static void csv_feed_header(struct loader *L, struct csv_parser *p, const struct csv_src *src,
			    char *blk, size_t *off)
{
	while (*off < src->len && L->nrec == 0 && !L->failed) {
		const char *data;
		ssize_t r = src_block(L, src, blk, *off, src->len, &data);
		if (r <= 0)
			break;
		size_t n = (size_t)r, i = 0;
		while (i < n && L->nrec == 0 && !L->failed) {
			const char *nl = memchr(data + i, '\n', n - i);
			size_t e = nl ? (size_t)(nl - data) + 1 : n;
			feed(L, p, data + i, e - i);
			i = e;
		}
		*off += i;
	}
}

/* The first line start of SRC at or after byte AT (>= 1): just past the first '\n' at or after
 * byte AT - 1; SRC->len when there is none, or when a NUL byte comes first (the first part's
 * parser then stops at a NUL no later than that one, without the rest being read). */
static size_t src_line_start(struct loader *L, const struct csv_src *src, char *blk, size_t at)
{
	for (size_t from = at - 1; from < src->len;) {
		const char *data;
		ssize_t r = src_block(L, src, blk, from, src->len, &data);
		if (r <= 0)
			break;
		const char *nl = memchr(data, '\n', (size_t)r);
		if (memchr(data, 0, nl ? (size_t)(nl - data) : (size_t)r))
			break;
		if (nl)
			return from + (size_t)(nl - data) + 1;
		from += (size_t)r;
	}
	return src->len;
}

/* The end of the input: libcsv's last record. */
static int csv_end(struct loader *L, struct csv_parser *p)
{
	if (!L->failed && csv_fini_lines(p, &L->ln) != 0 && !L->failed) {
		L->record = L->ln.rec_line;
		tl_err(L, COL_IGNORE, "malformed CSV (unterminated quoted field at end of file)");
	}
	return L->failed ? -1 : 0;
}

static void csv_parser_init(struct loader *L, struct csv_parser *p)
{
	/* A field's buffer grows by doubling (sim/util.h): libcsv's own 128-byte steps made a field
	 * of megabytes a hundred thousand copies (under the sanitizers, minutes for the 16 MiB
	 * record limit), and a fixed large step a large allocation for every parser. */
	csv_parser_setup(p, CSV_STRICT | CSV_STRICT_FINI);
	csv_lines_init(&L->ln, csv_cb_field, csv_cb_record, L);
	L->ln.max_rec = BS_RECORD_MAX;
}

bool trace_reference_read;
size_t trace_split_min = (size_t)1 << 18;

/*
 * The speculative second part of a CSV read in two (load_csv): the records from a line start S
 * to the end, read on a thread of their own by a new parser and a copy of the loader as the
 * header left it, into rows of its own with lines counted from S.  Its rows are kept only when
 * the first part's parser ends at S between records (csv_lines_at_record_start) and neither part
 * found an error; otherwise the first part's parser reads on from S as if there had been no
 * second part (so any error is the one the reference reading reports, and where).
 */
struct csv_part {
	struct loader L;
	struct trace t;
	struct bs_err err;
	struct csv_parser p;
	const struct csv_src *src;
	char *blk;              /* its block (a file) */
	size_t from;
	atomic_bool stop;       /* set by the first part when the second's rows cannot be kept */
	int rc;
};

static void *csv_part_main(void *arg)
{
	struct csv_part *q = arg;
	q->rc = csv_feed(&q->L, &q->p, q->src, q->blk, q->from, q->src->len, &q->stop) ||
			csv_end(&q->L, &q->p) ? -1 : 0;
	return NULL;
}

static void csv_part_start(struct csv_part *q, const struct loader *L, const struct csv_src *src,
			   size_t from)
{
	memset(&q->t, 0, sizeof q->t);
	snprintf(q->t.name, sizeof q->t.name, "%s", L->t->name);
	memset(&q->err, 0, sizeof q->err);
	q->L = *L; /* the header's columns; roles and hdr are shared, read only */
	q->L.t = &q->t;
	q->L.err = &q->err;
	q->L.cap = 0;
	q->L.need_sort = false;
	q->L.nrec = 1;
	q->L.field = 0;
	csv_parser_init(&q->L, &q->p);
	q->src = src;
	q->blk = src->buf ? NULL : xmalloc(CSV_BLOCK);
	q->from = from;
	atomic_init(&q->stop, false);
	q->rc = -1;
}

/* Appends the second part's N values of column A (of E bytes each) to the first part's N0. */
static void append_col(void *pa, const void *b, size_t n0, size_t n, size_t e)
{
	void **a = pa;
	if (!b)
		return;
	*a = xrealloc(*a, (n0 + n) * e);
	memcpy((char *)*a + n0 * e, b, n * e);
}

/* Keeps the second part's rows when the reading in two gives what one parser gives (the first
 * part is at a record start, both read without error, and the rows across the split keep the
 * rules one reading checks row by row); false leaves L as it was. */
static bool csv_part_merge(struct loader *L, struct csv_parser *p, struct csv_part *q)
{
	struct trace *t = L->t, *u = &q->t;
	if (L->failed || !csv_lines_at_record_start(p, &L->ln) || q->rc || q->L.failed)
		return false;
	long base = L->ln.line;
	if (u->n > 0) {
		if (t->n + u->n > TRACE_MAX_ROWS || base + (long)u->recno[u->n - 1] > (long)UINT32_MAX)
			return false;
		if (L->has[COL_ARRIVAL] && t->n > 0 && u->arrival_s[0] < L->last_arrival) {
			if (!L->sort)
				return false; /* the reference reading words the error */
			L->need_sort = true;
		}
	}
	for (size_t i = 0; i < u->n; i++)
		u->recno[i] += (uint32_t)base;
	size_t n0 = t->n, n = u->n;
	append_col(&t->prompt, u->prompt, n0, n, sizeof *u->prompt);
	append_col(&t->output, u->output, n0, n, sizeof *u->output);
	append_col(&t->arrival_s, u->arrival_s, n0, n, sizeof *u->arrival_s);
	append_col(&t->priority, u->priority, n0, n, sizeof *u->priority);
	append_col(&t->task, u->task, n0, n, sizeof *u->task);
	append_col(&t->prefix_group, u->prefix_group, n0, n, sizeof *u->prefix_group);
	append_col(&t->prefix_tokens, u->prefix_tokens, n0, n, sizeof *u->prefix_tokens);
	append_col(&t->max_new, u->max_new, n0, n, sizeof *u->max_new);
	append_col(&t->recno, u->recno, n0, n, sizeof *u->recno);
	t->n += n;
	if (n)
		L->cap = t->n;
	L->need_sort |= q->L.need_sort;
	if (n)
		L->last_arrival = q->L.last_arrival;
	L->nrec += q->L.nrec - 1;
	L->ln = q->L.ln; /* the lines of the second part, from 0 */
	L->ln.line += base;
	L->ln.rec_line += base;
	L->ln.ctx = L;
	return true;
}

/*
 * Reads SRC as CSV.  With SPLIT < SRC->len (and not trace_reference_read), the header is read
 * first, then the records from the first line start at or after byte SPLIT are read by a second
 * thread while this one reads those before it (struct csv_part); SPLIT >= SRC->len reads on one
 * thread, the reference.
 */
int load_csv(struct loader *L, const struct csv_src *src, size_t split, int *parts)
{
	struct csv_parser p;
	csv_parser_init(L, &p);
	L->record = 1;
	size_t off = 0, len = src->len;
	char *blk = src->buf ? NULL : xmalloc(CSV_BLOCK);
	if (parts)
		*parts = 1;
	/* A UTF-8 byte-order mark is skipped before libcsv sees the first field (which may then be
	 * quoted: inside a field, a quote after the mark would be bad quoting). */
	char head[3];
	const char *h = src->buf ? src->buf : head;
	ssize_t hr = src->buf ? (ssize_t)(len < 3 ? len : 3)
			      : csv_src_read(L, src, head, 0, len < 3 ? len : 3);
	if (hr > 0)
		off = utf8_bom_len(h, (size_t)hr);
	if (split < len && !trace_reference_read) {
		/* The header first: the second part needs its columns. */
		csv_feed_header(L, &p, src, blk, &off);
		size_t at = split > off ? split : off;
		size_t s = L->failed || at == 0 ? len : src_line_start(L, src, blk, at);
		struct csv_part *q = NULL;
		pthread_t th;
		if (!L->failed && s < len) {
			q = xmalloc(sizeof *q);
			csv_part_start(q, L, src, s);
			if (pthread_create(&th, NULL, csv_part_main, q) != 0) {
				csv_free(&q->p);
				free(q->blk);
				free(q);
				q = NULL;
			}
		}
		if (q) {
			csv_feed(L, &p, src, blk, off, s, NULL);
			if (L->failed || !csv_lines_at_record_start(&p, &L->ln))
				atomic_store(&q->stop, true);
			if (pthread_join(th, NULL) != 0)
				BUG("pthread_join failed");
			bool kept = csv_part_merge(L, &p, q);
			csv_free(&q->p);
			trace_release(&q->t);
			free(q->blk);
			free(q);
			off = kept ? len : s;
			if (parts && kept)
				*parts = 2;
		}
	}
	csv_feed(L, &p, src, blk, off, len, NULL);
	csv_end(L, &p);
	csv_free(&p);
	free(blk);
	if (L->failed)
		return -1;
	if (L->nrec == 0 && L->nhdr == 0) {
		L->record = 0;
		return tl_err(L, COL_IGNORE, "empty file (expected a header row)"), -1;
	}
	return 0;
}
