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

void evq_grow(struct evq *q)
{
	q->cap = q->cap ? q->cap * 2 : 64;
	q->h = xrealloc(q->h, q->cap * sizeof *q->h);
}

void evq_bug_past(const struct evq *q, int64_t t_ns)
{
	BUG("event at %lld pushed after time %lld", (long long)t_ns, (long long)q->last_t);
}
