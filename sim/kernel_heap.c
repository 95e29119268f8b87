/*
 * kernel_heap: indexed 4-ary min-heaps of request ids keyed by (key, id).  Each entry keeps
 * its key next to its id, so that sifting reads one array; the position of each id is kept in
 * an array by request id (shared by the heaps a request can be in only one of).  The order is
 * total, so the heap's shape never shows in the results.
 */
#include "sim/kernel_int.h"

#include <stdlib.h>

/* ---- indexed heaps ----------------------------------------------------------------------- */

void ih_init(struct iheap *h, int32_t *pos, size_t cap)
{
	h->cap = cap ? cap : 16;
	h->e = xmalloc(h->cap * sizeof *h->e);
	h->n = 0;
	h->pos = pos;
}

void ih_release(struct iheap *h)
{
	free(h->e);
	h->e = NULL;
}

/* The least of the entries at A and B. */
static inline size_t ih_min2(const struct iheap *h, size_t a, size_t b)
{
	return ih_less(h->e[b], h->e[a]) ? b : a;
}

void ih_place_down(struct iheap *h, size_t i, struct ih_ent x)
{
	for (;;) {
		size_t c = IH_ARITY * i + 1, m;
		if (c + IH_ARITY <= h->n) { /* every child: a tournament (indices by arithmetic:
					    * no branch to mispredict) */
			size_t a = c + ih_less(h->e[c + 1], h->e[c]);
			size_t b = c + 2 + ih_less(h->e[c + 3], h->e[c + 2]);
			m = ih_min2(h, a, b);
		} else {
			if (c >= h->n)
				break;
			m = c;
			for (size_t j = c + 1; j < h->n; j++)
				m = ih_min2(h, m, j);
		}
		if (!ih_less(h->e[m], x))
			break;
		ih_set(h, i, h->e[m]);
		i = m;
	}
	ih_set(h, i, x);
}

void ih_grow(struct iheap *h)
{
	h->e = xrealloc(h->e, (h->cap *= 2) * sizeof *h->e);
}
