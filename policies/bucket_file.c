/*
 * bucket_file: the bucket-file grammar of VLLM_BUCKETING_FROM_FILE (reference 5).
 *
 * One bucket specification per line; blank lines and lines starting with '#' are skipped and a
 * trailing "# comment" is allowed (as Python's tokenizer allows it).  A line is a 3-tuple, with
 * or without the parentheses, whose elements are
 *     INT                      e.g. 128 (sign and '_' digit separators accepted)
 *     [INT, INT, ...]          a list (may be empty; a trailing comma is allowed)
 *     range(a, b[, c])         Python's range: stop excluded, step may be negative, at most
 *                              10000 elements (upstream leaves a longer range unexpanded and
 *                              then fails to parse it)
 * and expands to the cartesian product of the three, at most BUCKET_FILE_MAX (100,000) buckets
 * per line and per file (a server could never warm up more; checked before expanding).  A tuple
 * whose second member is 1 is a decode bucket, anything else a prompt bucket.  Bucket values must be 0..2^31-1,
 * a batch size at least 1 and a prompt bucket's query at least 1 (bs 0 or query 0 is no shape
 * a server runs: refused, naming the first such bucket; context 0 is a prompt without context,
 * and a decode block value of 0 is accepted as upstream's own linear ranges can produce it).
 * Any other text is an error "FILE:LINE: ..." with exit code 3.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "policies/bucket_int.h"

#define BUCKET_FILE_MAX 100000

struct lx {
	const char *s;    /* line start */
	const char *p;    /* cursor */
	const char *name;
	long line;
	struct bs_err *err;
};

static int lx_fail(struct lx *x, const char *what)
{
	char near[24];
	size_t n = strcspn(x->p, "\r\n");
	if (n > 16)
		n = 16;
	memcpy(near, x->p, n);
	near[n] = 0;
	if (!*near)
		return bs_errf(x->err, BS_EXIT_INPUT, x->name, x->line, NULL,
			       "%s at column %d, got end of line", what, (int)(x->p - x->s) + 1);
	return bs_errf(x->err, BS_EXIT_INPUT, x->name, x->line, NULL, "%s at column %d, got '%s'",
		       what, (int)(x->p - x->s) + 1, near);
}

static void ws(struct lx *x)
{
	while (*x->p == ' ' || *x->p == '\t')
		x->p++;
}

static bool eat(struct lx *x, char c)
{
	ws(x);
	if (*x->p != c)
		return false;
	x->p++;
	return true;
}

/* Python integer literal with optional sign. */
static int lx_int(struct lx *x, int64_t *out)
{
	ws(x);
	const char *start = x->p;
	int sign = 1;
	if (*x->p == '+' || *x->p == '-') {
		sign = *x->p == '-' ? -1 : 1;
		x->p++;
		ws(x);
	}
	if (!isdigit((unsigned char)*x->p)) {
		x->p = start;
		return lx_fail(x, "expected an integer");
	}
	const char *d0 = x->p;
	int64_t v = 0;
	bool nonzero = false;
	while (isdigit((unsigned char)*x->p) ||
	       (*x->p == '_' && isdigit((unsigned char)x->p[1]) && x->p > d0)) {
		if (*x->p != '_') {
			if (*x->p != '0')
				nonzero = true;
			if (v > (INT64_C(1) << 40)) {
				x->p = start;
				return lx_fail(x, "integer too large");
			}
			v = v * 10 + (*x->p - '0');
		}
		x->p++;
	}
	if (*d0 == '0' && nonzero) {
		x->p = start;
		return lx_fail(x, "leading zeros are not allowed in an integer");
	}
	if (isalpha((unsigned char)*x->p) || *x->p == '.') {
		x->p = start;
		return lx_fail(x, "expected an integer");
	}
	*out = sign * v;
	return 0;
}

static int lx_range(struct lx *x, struct ivec *out)
{
	const char *start = x->p;
	int64_t a[3] = {0, 0, 1};
	int n = 0;
	x->p += 5;   /* "range" */
	if (!eat(x, '('))
		return lx_fail(x, "expected '(' after range");
	for (;;) {
		if (n == 3)
			return lx_fail(x, "range takes at most 3 arguments");
		if (lx_int(x, &a[n++]))
			return -1;
		if (eat(x, ')'))
			break;
		if (!eat(x, ','))
			return lx_fail(x, "expected ',' or ')' in range(...)");
	}
	if (n < 2) {
		x->p = start;
		return lx_fail(x, "range needs a start and a stop (range(a, b[, c]))");
	}
	int64_t lo = a[0], hi = a[1], st = n == 3 ? a[2] : 1;
	if (st == 0) {
		x->p = start;
		return lx_fail(x, "range step must not be zero");
	}
	int64_t cnt = st > 0 ? (hi > lo ? (hi - lo + st - 1) / st : 0)
			     : (lo > hi ? (lo - hi + (-st) - 1) / (-st) : 0);
	if (cnt > 10000) {
		x->p = start;
		return lx_fail(x, "range has more than 10000 elements");
	}
	for (int64_t i = 0; i < cnt; i++)
		ivec_push(out, lo + i * st);
	return 0;
}

/* One tuple element: int, list of ints, or range(...). Values appended to OUT (kept in order,
 * duplicates kept: the product emits them and the phase list deduplicates). */
static int lx_elem(struct lx *x, struct ivec *out)
{
	ws(x);
	if (!strncmp(x->p, "range", 5))
		return lx_range(x, out);
	if (*x->p == '[') {
		x->p++;
		if (eat(x, ']'))
			return 0;
		for (;;) {
			ws(x);
			if (*x->p == '[' || !strncmp(x->p, "range", 5))
				return lx_fail(x, "expected an integer (lists of lists are not buckets)");
			int64_t v;
			if (lx_int(x, &v))
				return -1;
			ivec_push(out, v);
			if (eat(x, ']'))
				return 0;
			if (!eat(x, ','))
				return lx_fail(x, "expected ',' or ']' in list");
			if (eat(x, ']'))
				return 0;
		}
	}
	int64_t v;
	if (lx_int(x, &v))
		return -1;
	ivec_push(out, v);
	return 0;
}

static int parse_line(struct lx *x, struct blist *prompt, struct blist *decode)
{
	struct ivec el[4] = {{0}};
	int n = 0, rc = -1;
	bool paren = eat(x, '(');
	for (;;) {
		ws(x);
		if (paren && *x->p == ')' && n > 0)
			break;
		if (n == 4) {
			n++;
			break;
		}
		if (lx_elem(x, &el[n]))
			goto out;
		n++;
		if (!eat(x, ','))
			break;
		ws(x);
		if (!paren && (!*x->p || *x->p == '#'))
			break;
	}
	if (paren && !eat(x, ')')) {
		lx_fail(x, "expected ',' or ')'");
		goto out;
	}
	ws(x);
	if (*x->p && *x->p != '#' && *x->p != '\r') {
		lx_fail(x, "unexpected text after the bucket");
		goto out;
	}
	if (n != 3) {
		bs_errf(x->err, BS_EXIT_INPUT, x->name, x->line, NULL,
			"expected a 3-tuple (batch_size, query, num_blocks), got %s%d elements",
			n > 4 ? "more than " : "", n > 4 ? 4 : n);
		goto out;
	}
	for (int i = 0; i < 3; i++)
		for (size_t k = 0; k < el[i].n; k++)
			if (el[i].v[k] < 0 || el[i].v[k] > INT32_MAX) {
				bs_errf(x->err, BS_EXIT_INPUT, x->name, x->line, NULL,
					"bucket value %lld out of range (0 to %d)",
					(long long)el[i].v[k], INT32_MAX);
				goto out;
			}
	/* Each count is at most the line's length (or 10000 for a range): no overflow. */
	uint64_t prod = (uint64_t)el[0].n * el[1].n * el[2].n;
	if (prod > BUCKET_FILE_MAX || prompt->n + decode->n + prod > BUCKET_FILE_MAX) {
		bs_errf(x->err, BS_EXIT_INPUT, x->name, x->line, NULL,
			"this line expands to %zu x %zu x %zu = %llu buckets, %s more than %d (no "
			"server warms up that many)", el[0].n, el[1].n, el[2].n,
			(unsigned long long)prod, prod > BUCKET_FILE_MAX ? "alone" : "with the lines "
			"before it", BUCKET_FILE_MAX);
		goto out;
	}
	/* A batch of no sequence, or a prompt of no token, is no shape the server runs: the
	 * first such bucket of the line is named.  Context and decode blocks may be 0 (a prompt
	 * without context; upstream's own linear ranges can give a decode block value of 0). */
	for (size_t a = 0; a < el[0].n; a++)
		for (size_t b = 0; b < el[1].n; b++)
			for (size_t c = 0; c < el[2].n; c++) {
				int64_t bs = el[0].v[a], q = el[1].v[b], nb = el[2].v[c];
				const char *why = !bs	? "batch size 0 (the minimum is 1)"
						  : !q	? "query 0 (a prompt bucket's minimum is "
							  "1)"
							: NULL;
				if (why) {
					bs_errf(x->err, BS_EXIT_INPUT, x->name, x->line, NULL,
						"%s bucket (%lld, %lld, %lld): %s",
						q == 1 ? "decode" : "prompt", (long long)bs,
						(long long)q, (long long)nb, why);
					goto out;
				}
			}
	for (size_t a = 0; a < el[0].n; a++)
		for (size_t b = 0; b < el[1].n; b++)
			for (size_t c = 0; c < el[2].n; c++)
				blist_push(el[1].v[b] == 1 ? decode : prompt, el[0].v[a], el[1].v[b],
					   el[2].v[c], 0);
	rc = 0;
out:
	for (int i = 0; i < 4; i++)
		ivec_free(&el[i]);
	return rc;
}

int bucket_file_parse_text(const char *text, const char *name, struct blist *prompt,
			   struct blist *decode, struct bs_err *err)
{
	long line = 0;
	const char *p = text;
	while (*p) {
		line++;
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *buf = xmalloc(len + 1);
		memcpy(buf, p, len);
		buf[len] = 0;
		char *s = buf, *e = buf + len;
		while (*s && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = 0;
		int rc = 0;
		if (*s && *s != '#') {
			struct lx x = {s, s, name, line, err};
			rc = parse_line(&x, prompt, decode);
		}
		free(buf);
		if (rc)
			return -1;
		if (!eol)
			break;
		p = eol + 1;
	}
	return 0;
}

int bucket_file_parse(const char *path, struct blist *prompt, struct blist *decode,
		      struct bs_err *err)
{
	size_t len;
	char *text = read_file(path, &len, err);
	if (!text)
		return -1;
	if (strlen(text) != len) {
		long line = text_line_of(text, len);
		free(text);
		return bs_errf(err, BS_EXIT_INPUT, path, line, NULL, "NUL byte in the file");
	}
	int rc = bucket_file_parse_text(text, path, prompt, decode, err);
	free(text);
	return rc;
}
