/*
 * bucket_log: the bucket lists a real vllm-gaudi server logged at start-up, read back (strategy
 * `log`, bucketing.log = the server's log; `bucketsim buckets --from-log`).
 *
 * Lines read, wherever they sit in a line (any prefix: "INFO 07-07 19:27:37 [common.py:85] ",
 * "(EngineCore_DP0 pid=805) INFO ...", a worker's "(VllmWorker rank=0 pid=...)"):
 *
 *   Prompt bucket config (N1, N2, ...) n:[...], n:[...][, n:[...]]   and "Decode bucket config"
 *       exponential.py get_prompt_cfgs / get_decode_cfgs, linear.py and padding_aware.py (head,
 *       vllm-gaudi 091bbadd: "... bs:[..], query:[..], blocks:[..]"); the July 2025 extension
 *       (HabanaAI/vllm-hpu-extension ad558281, exponential.py:36: "... bs:[..], seq:[..]").
 *       A config is a Python list or tuple of integers; there are as many as names.
 *   Generated N prompt buckets [bs, query, num_blocks]: [(bs, q, ctx), ...]        (and decode)
 *       HPUBucketingManager.log_generate_info (common.py, every version; extension common.py:85)
 *   Generated N spec decode buckets [bs, query, num_blocks]: [...]
 *       generate_spec_decode_buckets (common.py, head): added to the decode list, as upstream
 *       returns sorted(seed | spec)
 *   Generated N unified buckets [query, shared_blocks, unique_blocks]: [(q, s, u, causal), ...]
 *       HPUBucketingManager.generate_unified_buckets (common.py, vllm-gaudi 6e656699 to 59922d98)
 *   [Warmup][Prompt][i/n] batch_size:B query_len:Q num_blocks:C free_mem:...       (and Decode)
 *       HPUModelRunner.log_warmup (hpu_model_runner.py, head and 6e656699..59922d98); the July
 *       2025 runner (650ce373) wrote num_ctx_blocks: instead of num_blocks:
 *   [Warmup][Unified CFG][i/n] query_len:Q shared_blocks:S unique_blocks:U (causal|non causal) free_mem:...
 *       log_warmup with unified attention (6e656699..59922d98)
 *
 * Every other line is not the bucketing's and is skipped.  A line that starts one of these
 * messages but does not continue as upstream prints it is an error FILE:LINE (exit 3), and so is
 * a count that disagrees with the list, a warm-up shape missing from its phase's Generated list,
 * or a second Generated list (or config line) of a phase that differs from the first: one
 * server start-up per log (the identical lines every tensor-parallel worker prints are one).
 * A phase whose Generated line is absent takes the distinct shapes of its [Warmup] lines.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policies/bucket_int.h"

/* One Generated list: the lines that gave it. */
struct lstate {
	struct bucket_log *lg;
	const char *name;
	long line;
	struct bs_err *err;
	long warm_n[3];          /* the n of "[i/n]" of each phase's warm-up lines (0: none yet) */
	long *wline[3];          /* line of each warm-up shape (parallel to lg->warm[ph]) */
	size_t wcap[3];
};

static int lfail(struct lstate *st, const char *line, const char *at, const char *what)
{
	char near[24];
	size_t n = strcspn(at, "\r\n");
	if (n > 16)
		n = 16;
	memcpy(near, at, n);
	near[n] = 0;
	return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL, "%s at column %d, got %s%s%s",
		       what, (int)(at - line) + 1, *near ? "'" : "end of line", near, *near ? "'" : "");
}

static bool lit(const char **p, const char *s)
{
	size_t n = strlen(s);
	if (strncmp(*p, s, n))
		return false;
	*p += n;
	return true;
}

/* A non-negative decimal integer of at most INT32_MAX (as upstream prints an int). */
static bool num(const char **p, int64_t *out)
{
	const char *s = *p;
	if (!isdigit((unsigned char)*s))
		return false;
	int64_t v = 0;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (*s++ - '0');
		if (v > INT32_MAX)
			return false;
	}
	*out = v;
	*p = s;
	return true;
}

/* A signed integer of a config list (configs may hold negative values only through user
 * settings, which the server then refuses; accepted here as printed). */
static bool snum(const char **p, int64_t *out)
{
	bool neg = **p == '-';
	const char *s = *p + neg;
	if (!num(&s, out))
		return false;
	if (neg)
		*out = -*out;
	*p = s;
	return true;
}

static const char *phase_word[3] = {"prompt", "decode", "unified"};

/* "Prompt bucket config (a, b, c) x:[1, 2, 3], y:(4, 5, 6)" from AT (the message start). */
static int parse_cfg(struct lstate *st, const char *line, const char *at, int ph)
{
	const char *p = at + strlen(ph ? "Decode bucket config (" : "Prompt bucket config (");
	int names = 0;
	for (;;) {
		const char *s = p;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (p == s)
			return lfail(st, line, p, "expected a parameter name");
		names++;
		if (lit(&p, ")"))
			break;
		if (!lit(&p, ", "))
			return lfail(st, line, p, "expected ', ' or ')'");
	}
	if (!lit(&p, " "))
		return lfail(st, line, p, "expected ' ' after the parameter names");
	int cfgs = 0;
	for (;;) {
		const char *s = p;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (p == s)
			return lfail(st, line, p, "expected a dimension name");
		if (!lit(&p, ":"))
			return lfail(st, line, p, "expected ':'");
		char close = *p == '[' ? ']' : *p == '(' ? ')' : 0;
		if (!close)
			return lfail(st, line, p, "expected '[' or '('");
		p++;
		int vals = 0;
		for (;;) {
			int64_t v;
			if (!snum(&p, &v))
				return lfail(st, line, p, "expected an integer");
			vals++;
			if (*p == close) {
				p++;
				break;
			}
			if (!lit(&p, ", "))
				return lfail(st, line, p, "expected ', ' or the end of the config");
		}
		if (vals != names)
			return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL,
				       "%s bucket config: %d values for the %d parameters named", ph ?
				       "decode" : "prompt", vals, names);
		cfgs++;
		if (!*p)
			break;
		if (!lit(&p, ", "))
			return lfail(st, line, p, "expected ', ' or the end of the line");
	}
	struct bucket_log *lg = st->lg;
	size_t len = strlen(at);
	if (len >= sizeof lg->cfg[ph])
		return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL,
			       "%s bucket config line longer than %zu characters", phase_word[ph],
			       sizeof lg->cfg[ph] - 1);
	if (lg->cfg_line[ph] && strcmp(lg->cfg[ph], at))
		return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL,
			       "a second %s bucket config, different from line %ld's (the log of one "
			       "server start-up is expected)", phase_word[ph], lg->cfg_line[ph]);
	if (!lg->cfg_line[ph]) {
		memcpy(lg->cfg[ph], at, len + 1);
		lg->cfg_line[ph] = st->line;
	}
	(void)cfgs;
	return 0;
}

/* A list "[(a, b, c), ...]" of NDIM-tuples to the end of the line. */
static int parse_tuples(struct lstate *st, const char *line, const char *p, int ndim,
			struct blist *out)
{
	if (!lit(&p, "["))
		return lfail(st, line, p, "expected '['");
	if (!lit(&p, "]")) {
		for (;;) {
			if (!lit(&p, "("))
				return lfail(st, line, p, "expected '('");
			int64_t v[4] = {0, 0, 0, 0};
			for (int d = 0; d < ndim; d++) {
				if (d && !lit(&p, ", "))
					return lfail(st, line, p, "expected ', '");
				if (!num(&p, &v[d]))
					return lfail(st, line, p, "expected an integer 0 to 2147483647");
			}
			if (!lit(&p, ")"))
				return lfail(st, line, p, "expected ')'");
			blist_push(out, v[0], v[1], v[2], v[3]);
			if (lit(&p, "]"))
				break;
			if (!lit(&p, ", "))
				return lfail(st, line, p, "expected ', ' or ']'");
		}
	}
	if (*p)
		return lfail(st, line, p, "expected the end of the line");
	return 0;
}

/* The shape rules of a logged bucket: what bucket_file.c refuses, refused here too. */
static int check_bucket(struct lstate *st, int ph, const struct bshape *b)
{
	const int32_t *v = b->v;
	const char *why = NULL;
	if (ph == PHASE_UNIFIED)
		why = !v[0] ? "query 0 (the minimum is 1)" : v[3] > 1 ? "causal must be 0 or 1" : NULL;
	else if (!v[0])
		why = "batch size 0 (the minimum is 1)";
	else if (ph == PHASE_DECODE && v[1] != 1)
		why = "a decode bucket's query is 1";
	else if (ph == PHASE_PROMPT && !v[1])
		why = "query 0 (a prompt bucket's minimum is 1)";
	if (!why)
		return 0;
	if (ph == PHASE_UNIFIED)
		return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL,
			       "unified bucket (%d, %d, %d, %d): %s", (int)v[0], (int)v[1], (int)v[2],
			       (int)v[3], why);
	return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL, "%s bucket (%d, %d, %d): %s",
		       phase_word[ph], (int)v[0], (int)v[1], (int)v[2], why);
}

static bool same_list(const struct blist *a, const struct blist *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (bshape_cmp(&a->a[i], &b->a[i]))
			return false;
	return true;
}

/* "Generated N ..." from AT; returns 0 also when the line is not a bucket list. */
static int parse_generated(struct lstate *st, const char *line, const char *at)
{
	static const struct {
		const char *kind, *header;
		int ph, ndim;
		bool spec;
	} kinds[] = {
		{" prompt buckets ", "[bs, query, num_blocks]: ", PHASE_PROMPT, 3, false},
		{" decode buckets ", "[bs, query, num_blocks]: ", PHASE_DECODE, 3, false},
		{" spec decode buckets ", "[bs, query, num_blocks]: ", PHASE_DECODE, 3, true},
		{" unified buckets ", "[query, shared_blocks, unique_blocks]: ", PHASE_UNIFIED, 4,
		 false},
	};
	const char *p = at + strlen("Generated ");
	int64_t count;
	if (!num(&p, &count))
		return 0;
	size_t k = 0;
	while (k < sizeof kinds / sizeof kinds[0] && strncmp(p, kinds[k].kind, strlen(kinds[k].kind)))
		k++;
	/* Not a list: e.g. upstream's "Generated 0 prompt buckets. Please use ..." error. */
	if (k == sizeof kinds / sizeof kinds[0])
		return 0;
	p += strlen(kinds[k].kind);
	if (!lit(&p, kinds[k].header))
		return lfail(st, line, p, kinds[k].ndim == 4
				 ? "expected '[query, shared_blocks, unique_blocks]: '"
				 : "expected '[bs, query, num_blocks]: '");
	int ph = kinds[k].ph;
	struct blist l = {0};
	if (parse_tuples(st, line, p, kinds[k].ndim, &l))
		goto fail;
	if ((int64_t)l.n != count) {
		bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL,
			"'Generated %lld%.*s' lists %zu buckets", (long long)count,
			(int)strlen(kinds[k].kind) - 1, kinds[k].kind, l.n);
		goto fail;
	}
	for (size_t i = 0; i < l.n; i++)
		if (check_bucket(st, ph, &l.a[i]))
			goto fail;
	blist_sort_unique(&l);
	struct bucket_log *lg = st->lg;
	struct blist *dst = kinds[k].spec ? &lg->spec : &lg->gen[ph];
	long *where = kinds[k].spec ? &lg->spec_line : &lg->gen_line[ph];
	if (*where) {
		bool same = same_list(dst, &l);
		blist_free(&l);
		if (!same)
			return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL,
				       "a second %s%s bucket list, different from line %ld's (the log "
				       "of one server start-up is expected)", kinds[k].spec ?
				       "spec " : "", phase_word[ph], *where);
		return 0;
	}
	*dst = l;
	*where = st->line;
	return 0;
fail:
	blist_free(&l);
	return -1;
}

/* "[Warmup][Phase][i/n] ..." from AT. */
static int parse_warmup(struct lstate *st, const char *line, const char *at)
{
	const char *p = at + strlen("[Warmup][");
	int ph;
	if (lit(&p, "Prompt]["))
		ph = PHASE_PROMPT;
	else if (lit(&p, "Decode]["))
		ph = PHASE_DECODE;
	else if (lit(&p, "Unified CFG]["))
		ph = PHASE_UNIFIED;
	else
		return 0;   /* another warm-up (multimodal, pooler): not a bucket */
	int64_t i, n, v[4] = {0, 0, 0, 0};
	if (!num(&p, &i))
		return lfail(st, line, p, "expected the warm-up index");
	if (!lit(&p, "/"))
		return lfail(st, line, p, "expected '/'");
	if (!num(&p, &n))
		return lfail(st, line, p, "expected the warm-up count");
	if (!lit(&p, "] "))
		return lfail(st, line, p, "expected '] '");
	if (i < 1 || i > n)
		return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL,
			       "warm-up index %lld outside 1..%lld", (long long)i, (long long)n);
	if (st->warm_n[ph] && st->warm_n[ph] != n)
		return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->line, NULL,
			       "%s warm-up count %lld, earlier lines counted %ld", phase_word[ph],
			       (long long)n, st->warm_n[ph]);
	st->warm_n[ph] = (long)n;
	static const char *const pd[3] = {"batch_size:", "query_len:", NULL};
	static const char *const un[3] = {"query_len:", "shared_blocks:", "unique_blocks:"};
	for (int d = 0; d < 3; d++) {
		const char *want = ph == PHASE_UNIFIED ? un[d] : pd[d];
		if (!want) { /* head: num_blocks:, the July 2025 runner: num_ctx_blocks: */
			if (!lit(&p, "num_blocks:") && !lit(&p, "num_ctx_blocks:"))
				return lfail(st, line, p, "expected 'num_blocks:'");
		} else if (!lit(&p, want)) {
			char what[48];
			snprintf(what, sizeof what, "expected '%s'", want);
			return lfail(st, line, p, what);
		}
		if (!num(&p, &v[d]))
			return lfail(st, line, p, "expected an integer 0 to 2147483647");
		if (!lit(&p, " "))
			return lfail(st, line, p, "expected ' '");
	}
	if (ph == PHASE_UNIFIED) {
		if (lit(&p, "(causal) "))
			v[3] = 1;
		else if (!lit(&p, "(non causal) "))
			return lfail(st, line, p, "expected '(causal) ' or '(non causal) '");
	}
	if (!lit(&p, "free_mem:"))
		return lfail(st, line, p, "expected 'free_mem:'");
	struct bshape b = {{(int32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3]}};
	if (check_bucket(st, ph, &b))
		return -1;
	struct blist *w = &st->lg->warm[ph];
	for (size_t k = 0; k < w->n; k++)
		if (!bshape_cmp(&w->a[k], &b))
			return 0;
	if (w->n == st->wcap[ph]) {
		st->wcap[ph] = st->wcap[ph] ? 2 * st->wcap[ph] : 64;
		st->wline[ph] = xrealloc(st->wline[ph], st->wcap[ph] * sizeof *st->wline[ph]);
	}
	st->wline[ph][w->n] = st->line;
	blist_push(w, b.v[0], b.v[1], b.v[2], b.v[3]);
	return 0;
}

static int parse_line(struct lstate *st, char *line)
{
	size_t len = strlen(line);
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ' ||
		       line[len - 1] == '\t'))
		line[--len] = 0;
	const char *at;
	if ((at = strstr(line, "Prompt bucket config (")))
		return parse_cfg(st, line, at, PHASE_PROMPT);
	if ((at = strstr(line, "Decode bucket config (")))
		return parse_cfg(st, line, at, PHASE_DECODE);
	for (at = strstr(line, "Generated "); at; at = strstr(at + 1, "Generated ")) {
		long before = st->lg->gen_line[0] + st->lg->gen_line[1] + st->lg->gen_line[2] +
			      st->lg->spec_line;
		if (parse_generated(st, line, at))
			return -1;
		if (before != st->lg->gen_line[0] + st->lg->gen_line[1] + st->lg->gen_line[2] +
				      st->lg->spec_line)
			return 0;
	}
	if ((at = strstr(line, "[Warmup][")))
		return parse_warmup(st, line, at);
	return 0;
}

/* After the last line: the lists of each phase, and the warm-up lines checked against them. */
static int finish(struct lstate *st)
{
	struct bucket_log *lg = st->lg;
	for (int ph = 0; ph < 3; ph++) {
		struct blist *l = &lg->list[ph];
		if (lg->gen_line[ph]) {
			for (size_t i = 0; i < lg->gen[ph].n; i++)
				blist_push(l, lg->gen[ph].a[i].v[0], lg->gen[ph].a[i].v[1],
					   lg->gen[ph].a[i].v[2], lg->gen[ph].a[i].v[3]);
		} else {
			for (size_t i = 0; i < lg->warm[ph].n; i++)
				blist_push(l, lg->warm[ph].a[i].v[0], lg->warm[ph].a[i].v[1],
					   lg->warm[ph].a[i].v[2], lg->warm[ph].a[i].v[3]);
		}
		if (ph == PHASE_DECODE && lg->spec_line)
			for (size_t i = 0; i < lg->spec.n; i++)
				blist_push(l, lg->spec.a[i].v[0], lg->spec.a[i].v[1],
					   lg->spec.a[i].v[2], 0);
		blist_sort_unique(l);
		if (!lg->gen_line[ph] && !(ph == PHASE_DECODE && lg->spec_line))
			continue;
		for (size_t i = 0; i < lg->warm[ph].n; i++) {
			size_t k = blist_bisect_left(l, &lg->warm[ph].a[i]);
			if (k < l->n && !bshape_cmp(&l->a[k], &lg->warm[ph].a[i]))
				continue;
			const int32_t *v = lg->warm[ph].a[i].v;
			return bs_errf(st->err, BS_EXIT_INPUT, st->name, st->wline[ph][i], NULL,
				       "warm-up %s bucket (%d, %d, %d) is not in the Generated %s "
				       "list of line %ld", phase_word[ph], (int)v[0], (int)v[1],
				       (int)v[2], phase_word[ph], lg->gen_line[ph]);
		}
	}
	bool pd = lg->list[PHASE_PROMPT].n || lg->list[PHASE_DECODE].n;
	if (pd && lg->list[PHASE_UNIFIED].n)
		return bs_errf(st->err, BS_EXIT_INPUT, st->name, lg->gen_line[PHASE_UNIFIED], NULL,
			       "unified buckets and prompt or decode buckets in one log (the log of "
			       "one server start-up is expected)");
	if (!pd && !lg->list[PHASE_UNIFIED].n)
		return bs_errf(st->err, BS_EXIT_INPUT, st->name, 0, NULL,
			       "no bucket list found: expected the server's start-up lines "
			       "'Generated N prompt buckets [bs, query, num_blocks]: [...]' (and "
			       "decode) or its '[Warmup][Prompt][i/n] ...' lines");
	return 0;
}

static void st_free(struct lstate *st)
{
	for (int ph = 0; ph < 3; ph++)
		free(st->wline[ph]);
}

int bucket_log_parse_text(const char *text, const char *name, struct bucket_log *lg,
			  struct bs_err *err)
{
	memset(lg, 0, sizeof *lg);
	struct lstate st = {lg, name, 0, err, {0}, {NULL}, {0}};
	const char *p = text;
	int rc = 0;
	while (*p && !rc) {
		st.line++;
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *buf = xmalloc(len + 1);
		memcpy(buf, p, len);
		buf[len] = 0;
		rc = parse_line(&st, buf);
		free(buf);
		if (!eol)
			break;
		p = eol + 1;
	}
	if (!rc)
		rc = finish(&st);
	st_free(&st);
	return rc ? -1 : 0;
}

int bucket_log_parse(const char *path, struct bucket_log *lg, struct bs_err *err)
{
	memset(lg, 0, sizeof *lg);
	FILE *f = fopen(path, "r");
	if (!f)
		return bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "cannot open the log: %s",
			       strerror(errno));
	/* Streamed line by line: a server's log may be far larger than the files read whole. */
	struct lstate st = {lg, path, 0, err, {0}, {NULL}, {0}};
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	while (!rc && (n = getline(&buf, &cap, f)) >= 0) {
		st.line++;
		if (strlen(buf) != (size_t)n)
			rc = bs_errf(err, BS_EXIT_INPUT, path, st.line, NULL, "the log contains a NUL "
				     "byte");
		else
			rc = parse_line(&st, buf);
	}
	if (!rc && ferror(f))
		rc = bs_errf(err, BS_EXIT_RUNTIME, path, 0, NULL, "read error: %s", strerror(errno));
	free(buf);
	fclose(f);
	if (!rc)
		rc = finish(&st);
	st_free(&st);
	return rc ? -1 : 0;
}

void bucket_log_free(struct bucket_log *lg)
{
	for (int ph = 0; ph < 3; ph++) {
		blist_free(&lg->gen[ph]);
		blist_free(&lg->warm[ph]);
		blist_free(&lg->list[ph]);
	}
	blist_free(&lg->spec);
}

/* ---- strategy `log` ---- */

static int gen(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	const char *path = p->cfg ? config_str(p->cfg, "bucketing.log") : NULL;
	if (!path || !*path)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "bucketing.log",
			       "strategy log needs the server's log (bucketing.log)");
	struct bucket_log lg;
	if (bucket_log_parse(path, &lg, err)) {
		bucket_log_free(&lg);
		return -1;
	}
	int rc = 0;
	if (lg.list[PHASE_UNIFIED].n)
		rc = bs_errf(err, BS_EXIT_INPUT, path, lg.gen_line[PHASE_UNIFIED], NULL,
			     "the log lists unified buckets; strategy log reads prompt and decode "
			     "buckets");
	else if (!lg.list[PHASE_PROMPT].n || !lg.list[PHASE_DECODE].n)
		rc = bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "the log lists no %s bucket "
			     "(neither a 'Generated N %s buckets' line nor '[Warmup][%s]' lines)",
			     lg.list[PHASE_PROMPT].n ? "decode" : "prompt",
			     lg.list[PHASE_PROMPT].n ? "decode" : "prompt",
			     lg.list[PHASE_PROMPT].n ? "Decode" : "Prompt");
	if (!rc) {
		/* The lists as the server warmed them: no filter, whatever the version. */
		g->prompt = lg.list[PHASE_PROMPT];
		g->decode = lg.list[PHASE_DECODE];
		memset(&lg.list, 0, sizeof lg.list);
		snprintf(g->prompt_cfg, sizeof g->prompt_cfg, "%s", lg.cfg[PHASE_PROMPT]);
		snprintf(g->decode_cfg, sizeof g->decode_cfg, "%s", lg.cfg[PHASE_DECODE]);
	}
	bucket_log_free(&lg);
	return rc;
}

const struct bucket_strategy bucket_log = {
	.info = {"log", "the buckets a real server logged at start-up (bucketing.log: its "
			"'Generated N ... buckets' or '[Warmup]' lines)", NULL},
	.gen_docs = gen,
	.gen_current = gen,
	.phases = BUCKET_PHASES_PROMPT_DECODE,
};
