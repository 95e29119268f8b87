/*
 * evq: see evq.h.
 */
#include "sim/evq.h"

#include <stdlib.h>

#include "sim/util.h"

void evq_init(struct evq *q)
{
	q->h = NULL;
	q->n = q->cap = 0;
	q->next_seq = 0;
	q->last_t = INT64_MIN;
}

void evq_release(struct evq *q)
{
	free(q->h);
	evq_init(q);
}

static inline int before(const struct event *a, const struct event *b)
{
	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns;
	if (a->cls != b->cls)
		return a->cls < b->cls;
	return a->seq < b->seq;
}

uint64_t evq_push(struct evq *q, int64_t t_ns, int32_t cls, int32_t kind, int64_t arg)
{
	if (t_ns < q->last_t)
		BUG("event at %lld pushed after time %lld", (long long)t_ns, (long long)q->last_t);
	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 64;
		q->h = xrealloc(q->h, q->cap * sizeof *q->h);
	}
	struct event e = {t_ns, q->next_seq++, cls, kind, arg};
	size_t i = q->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&e, &q->h[p]))
			break;
		q->h[i] = q->h[p];
		i = p;
	}
	q->h[i] = e;
	return e.seq;
}

int evq_pop(struct evq *q, struct event *out)
{
	if (!q->n)
		return -1;
	*out = q->h[0];
	q->last_t = out->t_ns;
	struct event last = q->h[--q->n];
	size_t i = 0, n = q->n;
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		const struct event *best = &last;
		if (l < n && before(&q->h[l], best)) {
			m = l;
			best = &q->h[l];
		}
		if (l + 1 < n && before(&q->h[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		q->h[i] = q->h[m];
		i = m;
	}
	if (n)
		q->h[i] = last;
	return 0;
}
