/*
 * kernel_heap: indexed 4-ary min-heaps of request ids keyed by (key, id).  Each entry keeps
 * its key next to its id, so that sifting reads one array; the position of each id is kept in
 * an array by request id (shared by the heaps a request can be in only one of).  The order is
 * total, so the heap's shape never shows in the results.
 */
#include "sim/kernel_int.h"

#include <stdlib.h>

/* ---- indexed heaps ----------------------------------------------------------------------- */

#define IH_ARITY 4                      /* ih_down's tournament assumes 4 */

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

static inline bool ih_less(struct ih_ent a, struct ih_ent b)
{
	return a.key < b.key || (a.key == b.key && a.id < b.id);
}

static inline void ih_set(struct iheap *h, size_t i, struct ih_ent x)
{
	h->e[i] = x;
	h->pos[x.id] = (int32_t)i;
}

static void ih_up(struct iheap *h, size_t i)
{
	struct ih_ent x = h->e[i];
	while (i > 0) {
		size_t p = (i - 1) / IH_ARITY;
		if (!ih_less(x, h->e[p]))
			break;
		ih_set(h, i, h->e[p]);
		i = p;
	}
	ih_set(h, i, x);
}

/* The least of the entries at A and B. */
static inline size_t ih_min2(const struct iheap *h, size_t a, size_t b)
{
	return ih_less(h->e[b], h->e[a]) ? b : a;
}

static void ih_down(struct iheap *h, size_t i)
{
	struct ih_ent x = h->e[i];
	for (;;) {
		size_t c = IH_ARITY * i + 1, m;
		if (c + IH_ARITY <= h->n) { /* every child: a tournament */
			m = ih_min2(h, ih_min2(h, c, c + 1), ih_min2(h, c + 2, c + 3));
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

void ih_push(struct iheap *h, int32_t id, int64_t key)
{
	if (h->n == h->cap)
		h->e = xrealloc(h->e, (h->cap *= 2) * sizeof *h->e);
	h->e[h->n] = (struct ih_ent){key, id};
	h->n++;
	ih_up(h, h->n - 1);
}

void ih_remove(struct iheap *h, int32_t id)
{
	size_t i = (size_t)h->pos[id];
	h->pos[id] = -1;
	h->n--;
	if (i == h->n)
		return;
	struct ih_ent last = h->e[h->n];
	bool up = i > 0 && ih_less(last, h->e[i]);
	h->e[i] = last;
	if (up)
		ih_up(h, i);
	else
		ih_down(h, i);
}

void ih_update(struct iheap *h, int32_t id, int64_t key)
{
	size_t i = (size_t)h->pos[id];
	bool up = key < h->e[i].key;
	h->e[i].key = key;
	if (up)
		ih_up(h, i);
	else
		ih_down(h, i);
}
