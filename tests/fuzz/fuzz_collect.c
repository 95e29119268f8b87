/*
 * fuzz_collect: what `bucketsim sweep --collect DIR` reads (sim/sweep_csv.c): DIR/sweep.json
 * and every point's summary.json, checked as input, then merged into the CSV.
 *
 * The input is NUL-separated texts: the first is sweep.json, the next ones the summary.json of
 * points 1, 2, ... (an empty text or a missing one: the point has none, and its NNNN.err is
 * read instead).  Each input is collected twice, with every metric and with a --metrics list.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/sweep_csv.h"
#include "tests/fuzz/fuzz.h"

struct texts {
	const char *t[64];
	size_t len[64];
	size_t n, next;
};

static int read_text(void *ctx, const char *path, char **text, size_t *len, struct bs_err *err)
{
	struct texts *x = ctx;
	(void)err;
	*text = NULL;
	*len = 0;
	size_t pl = strlen(path);
	if (pl > 4 && !strcmp(path + pl - 4, ".err")) {
		*text = xstrdup("bucketsim: error: x.json:3: field 'a,=b': \"bad\"\nsecond line\n");
		*len = strlen(*text);
		return 0;
	}
	size_t k = x->next++; /* summaries are read in point order */
	if (k + 1 < x->n && x->len[k + 1]) {
		*text = xmalloc(x->len[k + 1] + 1);
		memcpy(*text, x->t[k + 1], x->len[k + 1]);
		(*text)[x->len[k + 1]] = 0;
		*len = x->len[k + 1];
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct texts x = {.n = 0};
	const char *p = (const char *)data, *end = p + size;
	while (x.n < 64) {
		const char *z = memchr(p, 0, (size_t)(end - p));
		x.t[x.n] = p;
		x.len[x.n++] = (size_t)((z ? z : end) - p);
		if (!z)
			break;
		p = z + 1;
	}
	cJSON *spec = cJSON_ParseWithLength(x.t[0], x.len[0]);
	static const char *const mlists[] = {NULL, "completed,mean_ttft_ms"};
	for (size_t m = 0; spec && m < 2; m++) {
		struct sweep_reader rd = {read_text, &x};
		struct bs_err err = {0};
		size_t nfailed = 0;
		char *first = NULL;
		x.next = 0;
		char *csv = sweep_collect("D", "D/sweep.json", spec, mlists[m], &rd, &nfailed,
					  &first, &err);
		free(csv);
		free(first);
	}
	cJSON_Delete(spec);
	return 0;
}
